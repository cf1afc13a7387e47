//===- PiecewiseEmitter.cpp - Pieces of one index space, stored once ------===//
//
// Part of idxmap. The concatenate and input-slices emitters build the
// kernel their plan describes (PiecewisePlan): threads over one index space
// (the largest operand's, the sliced input's), and for each piece whose
// domain holds a thread's run, the piece's values (its prologue), for a
// concatenate the root's from them at their place (the epilogue, the
// concatenation's value overridden), and their stores: one vector where
// the plan proved it, else lane by lane.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/Codegen.h"
#include "idxmap/RangeEvaluator.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

namespace idxmap {
namespace codegen {

Expected<KernelInfo> emitPiecewiseKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &P, Context &Ctx,
                                         const MathOptions &Math) {
  requestBackEndOptLevel(M, P.BackEndOptLevel);
  const HloComputation &C = *A.Computation;
  const PiecewisePlan &PP = *P.Pieces;
  const ThreadMapping &TM = P.Main;
  const int64_t V = TM.Vector, T = TM.ThreadsPerBlock;
  const Shape &Space = TM.Target->shape();
  const int64_t Threads = ceilDiv(Space.numElements(), V);

  llvm::LLVMContext &LC = M.getContext();
  KernelInfo Info;
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = P.Emitter;
  if (auto Err = setLaunchShape(Info, F, Math.Device, P.Grid[0], T))
    return *Err;
  std::vector<KernelParamSpec> Specs = fusionKernelParams(C, A.Roots, Info);
  llvm::Function *K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(T), /*Exact=*/true, 0});
  llvm::IRBuilder<> B(&K->getEntryBlock());
  llvm::Type *IndexTy = P.Index32 ? B.getInt32Ty() : B.getInt64Ty();
  auto IdxC = [&](int64_t N) { return llvm::ConstantInt::get(IndexTy, N); };

  GridLoop GL(B, *K, IndexTy, T, P.Grid[0], TM.Blocks);
  if (TM.Blocks * T != Threads) {
    llvm::Value *Tid = B.CreateAdd(B.CreateMul(GL.Bl, IdxC(T)), GL.Th);
    auto *Body = llvm::BasicBlock::Create(LC, "body", K);
    B.CreateCondBr(B.CreateICmpULT(Tid, IdxC(Threads)), Body, GL.Done);
    B.SetInsertPoint(Body);
  }
  // Each lane's index in the walked space.
  RangeEvaluator RE(TM.Map);
  std::vector<std::vector<llvm::Value *>> Idx(static_cast<size_t>(V));
  for (int64_t L = 0; L < V; ++L)
    for (Expr E : TM.Map.results())
      Idx[size_t(L)].push_back(
          emitIndexExpr(B, E, {GL.Th, GL.Bl}, {IdxC(L)}, RE, IndexTy));

  LaneLoader Lanes(B, *K, C, P.Loop->LoadWidth, IndexTy);
  FusedElementEmitter FE(B, Ctx, C, Lanes.loader(), Math, IndexTy);

  // Piece Pc's value at lane L, through the epilogue at its place.
  auto StoredValue = [&](const PiecewisePlan::Piece &Pc, int64_t L,
                         const std::vector<llvm::Value *> &OutIdx) {
    Lanes.Lane = L;
    llvm::Value *Val = FE.valueAt(*Pc.Source, Idx[size_t(L)]);
    const HloInstruction &Root = *A.Roots[Pc.Output];
    if (!PP.Concat || &Root == PP.Concat)
      return Val;
    FE.setOverride(*PP.Concat,
                   [Val](llvm::ArrayRef<llvm::Value *>) { return Val; });
    llvm::Value *R = FE.valueAt(Root, OutIdx);
    FE.setOverride(*PP.Concat, nullptr);
    return R;
  };
  // i1: lane L's index lies in the piece's domain (its map's dim ranges,
  // where narrower than the walked space's); null when it always does.
  auto InDomain = [&](const PiecewisePlan::Piece &Pc,
                      int64_t L) -> llvm::Value * {
    llvm::Value *Cond = nullptr;
    auto And = [&](llvm::Value *X) { Cond = Cond ? B.CreateAnd(Cond, X) : X; };
    for (size_t D = 0; D < Space.Dims.size(); ++D) {
      const Interval &Bd = Pc.OutputMap.dims()[D].Bound;
      llvm::Value *I = Idx[size_t(L)][D];
      if (Bd.Lo > 0)
        And(B.CreateICmpUGE(I, IdxC(Bd.Lo)));
      if (Bd.Hi < Space.Dims[D] - 1)
        And(B.CreateICmpULE(I, IdxC(Bd.Hi)));
    }
    return Cond;
  };
  // Runs `Body` under `Cond` (none: always), then forgets what it cached.
  auto Guarded = [&](llvm::Value *Cond, const std::function<void()> &Body) {
    llvm::BasicBlock *After = nullptr;
    if (Cond) {
      auto *Then = llvm::BasicBlock::Create(LC, "piece", K);
      After = llvm::BasicBlock::Create(LC, "piece.next", K);
      B.CreateCondBr(Cond, Then, After);
      B.SetInsertPoint(Then);
    }
    Body();
    if (After) {
      B.CreateBr(After);
      B.SetInsertPoint(After);
    }
    FE.clearCache();
    Lanes.clear();
  };
  // Runs `Body` (stores only) under `Cond`; values computed before it stay
  // cached (they dominate what follows).
  auto guardedStore = [&](llvm::Value *Cond, const std::function<void()> &Body) {
    if (!Cond) {
      Body();
      return;
    }
    auto *Then = llvm::BasicBlock::Create(LC, "store", K);
    auto *After = llvm::BasicBlock::Create(LC, "store.next", K);
    B.CreateCondBr(Cond, Then, After);
    B.SetInsertPoint(Then);
    Body();
    B.CreateBr(After);
    B.SetInsertPoint(After);
  };
  // The values of the pieces that need no check before any store, so that
  // their loads are in flight together (the back end keeps the order at
  // O0): pieces whose domain holds every run, and sources defined on the
  // whole space (their stores are checked, not their loads).
  auto Skipped = [&](const PiecewisePlan::Piece &Pc) {
    return Pc.Source->shape().numElements() == 0 ||
           A.Roots[Pc.Output]->shape().numElements() == 0;
  };
  std::vector<std::vector<llvm::Value *>> Early(PP.Pieces.size());
  for (size_t I = 0; I < PP.Pieces.size(); ++I) {
    const PiecewisePlan::Piece &Pc = PP.Pieces[I];
    bool Unchecked = Pc.WholeRuns && !InDomain(Pc, 0);
    if (Skipped(Pc) || !(Unchecked || (Pc.Covers && !PP.Concat)))
      continue;
    const PrimitiveType PT = A.Roots[Pc.Output]->shape().Type;
    for (int64_t L = 0; L < V; ++L) {
      std::vector<llvm::Value *> OI;
      if (PP.Concat)
        OI = emitIndexExprs(B, Pc.OutputMap, Idx[size_t(L)], {}, IndexTy);
      Early[I].push_back(storeConvert(B, StoredValue(Pc, L, OI), PT));
    }
    // An epilogue's values were computed with this piece's override.
    if (PP.Concat)
      FE.clearCache();
  }
  for (size_t I = 0; I < PP.Pieces.size(); ++I) {
    const PiecewisePlan::Piece &Pc = PP.Pieces[I];
    if (Skipped(Pc))
      continue;
    const Shape &OutShape = A.Roots[Pc.Output]->shape();
    const PrimitiveType PT = OutShape.Type;
    llvm::Type *ST = storageType(LC, PT);
    const int64_t Bytes = byteWidth(PT);
    llvm::Value *Out = K->getArg(C.parameterCount() + Pc.Output);
    auto OutIndex = [&](int64_t L) {
      return emitIndexExprs(B, Pc.OutputMap, Idx[size_t(L)], {}, IndexTy);
    };
    auto Address = [&](const std::vector<llvm::Value *> &OI) {
      return B.CreateInBoundsGEP(ST, Out,
                                 physicalOffset(B, OutShape, OI, IndexTy));
    };
    // Lanes [From, To) of Vals stored, one vector when proven.
    auto Store = [&](const std::vector<llvm::Value *> &Vals, int64_t From,
                     int64_t To) {
      if (From == 0 && To == V && V > 1 && Pc.StoreWidth == V) {
        llvm::Value *Vec =
            llvm::PoisonValue::get(llvm::FixedVectorType::get(ST, unsigned(V)));
        for (int64_t L = 0; L < V; ++L)
          Vec = B.CreateInsertElement(Vec, Vals[size_t(L)], uint64_t(L));
        B.CreateAlignedStore(Vec, Address(OutIndex(0)),
                             llvm::Align(V * Bytes));
        return;
      }
      for (int64_t L = From; L < To; ++L)
        B.CreateAlignedStore(Vals[size_t(L)], Address(OutIndex(L)),
                             llvm::Align(Bytes));
    };
    if (!Early[I].empty()) {
      // Values computed above: only the stores are checked.
      if (Pc.WholeRuns) {
        guardedStore(InDomain(Pc, 0), [&] { Store(Early[I], 0, V); });
      } else {
        for (int64_t L = 0; L < V; ++L)
          guardedStore(InDomain(Pc, L), [&] { Store(Early[I], L, L + 1); });
      }
      continue;
    }
    // The values of lanes inside the domain only (the source is not
    // defined elsewhere), computed and stored under the check.
    auto Compute = [&](int64_t From, int64_t To) {
      std::vector<llvm::Value *> Vals(size_t(V), nullptr);
      for (int64_t L = From; L < To; ++L)
        Vals[size_t(L)] = storeConvert(B, StoredValue(Pc, L, OutIndex(L)), PT);
      Store(Vals, From, To);
    };
    if (Pc.WholeRuns) {
      Guarded(InDomain(Pc, 0), [&] { Compute(0, V); });
    } else {
      for (int64_t L = 0; L < V; ++L)
        Guarded(InDomain(Pc, L), [&] { Compute(L, L + 1); });
    }
  }
  GL.finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
