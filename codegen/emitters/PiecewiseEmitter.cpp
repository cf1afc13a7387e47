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

#include <functional>

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
  const int64_t V = TM.Vector, T = TM.ThreadsPerBlock, U = TM.Unroll;
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

  // Thread th of block bl computes runs (bl * U + u) * T + th.
  GridLoop GL(B, *K, IndexTy, T, P.Grid[0], TM.Blocks);
  const bool Ragged = TM.Blocks * T * U != Threads;
  llvm::Value *Run0 = B.CreateAdd(B.CreateMul(GL.Bl, IdxC(T * U)), GL.Th);
  if (Ragged) {
    auto *Body = llvm::BasicBlock::Create(LC, "body", K);
    B.CreateCondBr(B.CreateICmpULT(Run0, IdxC(Threads)), Body, GL.Done);
    B.SetInsertPoint(Body);
  }
  // Each run's lanes' index in the walked space; a run past the end takes
  // run 0's (always there) and stores nothing.
  RangeEvaluator RE(TM.Map);
  std::vector<llvm::Value *> RunValid(size_t(U), nullptr);
  std::vector<std::vector<std::vector<llvm::Value *>>> Idx(
      static_cast<size_t>(U));
  for (int64_t Uu = 0; Uu < U; ++Uu) {
    llvm::Value *USym = IdxC(Uu);
    if (Uu > 0 && Ragged) {
      RunValid[size_t(Uu)] =
          B.CreateICmpULT(B.CreateAdd(Run0, IdxC(Uu * T)), IdxC(Threads));
      USym = B.CreateSelect(RunValid[size_t(Uu)], USym, IdxC(0));
    }
    for (int64_t L = 0; L < V; ++L) {
      std::vector<llvm::Value *> Syms = {IdxC(L)};
      if (U > 1)
        Syms.insert(Syms.begin(), USym);
      std::vector<llvm::Value *> I;
      for (Expr E : TM.Map.results())
        I.push_back(emitIndexExpr(B, E, {GL.Th, GL.Bl}, Syms, RE, IndexTy));
      Idx[size_t(Uu)].push_back(std::move(I));
    }
  }

  LaneLoader Lanes(B, *K, C, P.Loop->LoadWidth, IndexTy);
  FusedElementEmitter FE(B, Ctx, C, Lanes.loader(), Math, IndexTy);

  // Piece Pc's value at lane L of run Uu, through the epilogue at its
  // place.
  auto StoredValue = [&](const PiecewisePlan::Piece &Pc, int64_t Uu, int64_t L,
                         const std::vector<llvm::Value *> &OutIdx) {
    Lanes.Lane = Uu * V + L;
    llvm::Value *Val = FE.valueAt(*Pc.Source, Idx[size_t(Uu)][size_t(L)]);
    const HloInstruction &Root = *A.Roots[Pc.Output];
    if (!PP.Concat || &Root == PP.Concat)
      return Val;
    FE.setOverride(*PP.Concat,
                   [Val](llvm::ArrayRef<llvm::Value *>) { return Val; });
    llvm::Value *R = FE.valueAt(Root, OutIdx);
    FE.setOverride(*PP.Concat, nullptr);
    return R;
  };
  // i1: lane L of run Uu lies in the piece's domain (its map's dim
  // ranges, where narrower than the walked space's); null when it always
  // does.
  auto InDomain = [&](const PiecewisePlan::Piece &Pc, int64_t Uu,
                      int64_t L) -> llvm::Value * {
    llvm::Value *Cond = nullptr;
    auto And = [&](llvm::Value *X) { Cond = Cond ? B.CreateAnd(Cond, X) : X; };
    for (size_t D = 0; D < Space.Dims.size(); ++D) {
      const Interval &Bd = Pc.OutputMap.dims()[D].Bound;
      llvm::Value *I = Idx[size_t(Uu)][size_t(L)][D];
      if (Bd.Lo > 0)
        And(B.CreateICmpUGE(I, IdxC(Bd.Lo)));
      if (Bd.Hi < Space.Dims[D] - 1)
        And(B.CreateICmpULE(I, IdxC(Bd.Hi)));
    }
    return Cond;
  };
  // Opens a block entered where `Cond` holds (none: always); the returned
  // closer branches to the block after it.
  auto Open = [&](llvm::Value *Cond, const char *Name) {
    if (!Cond)
      return std::function<void()>([] {});
    auto *Then = llvm::BasicBlock::Create(LC, Name, K);
    auto *After = llvm::BasicBlock::Create(LC, std::string(Name) + ".next", K);
    B.CreateCondBr(Cond, Then, After);
    B.SetInsertPoint(Then);
    return std::function<void()>([&B, After] {
      B.CreateBr(After);
      B.SetInsertPoint(After);
    });
  };
  auto Skipped = [&](const PiecewisePlan::Piece &Pc) {
    return Pc.Source->shape().numElements() == 0 ||
           A.Roots[Pc.Output]->shape().numElements() == 0;
  };
  auto OutIndex = [&](const PiecewisePlan::Piece &Pc, int64_t Uu, int64_t L) {
    return emitIndexExprs(B, Pc.OutputMap, Idx[size_t(Uu)][size_t(L)], {},
                          IndexTy);
  };

  // First every run's values of every piece whose runs lie wholly inside
  // or outside its domain, so that all their loads are in flight together
  // before the first store: unchecked where the source is defined there
  // (the domain holds every run, or the source covers the walked space),
  // else computed under the run's check and carried out through phis.
  struct Values {
    bool Have = false;
    llvm::Value *Cond = nullptr;
    std::vector<llvm::Value *> Vals;
  };
  std::vector<std::vector<Values>> Early(size_t(U),
                                         std::vector<Values>(PP.Pieces.size()));
  for (int64_t Uu = 0; Uu < U; ++Uu) {
    for (size_t I = 0; I < PP.Pieces.size(); ++I) {
      const PiecewisePlan::Piece &Pc = PP.Pieces[I];
      Values &E = Early[size_t(Uu)][I];
      const bool Defined = Pc.Covers && !PP.Concat;
      if (Skipped(Pc) || !(Pc.WholeRuns || Defined))
        continue;
      const PrimitiveType PT = A.Roots[Pc.Output]->shape().Type;
      E.Have = true;
      E.Cond = Pc.WholeRuns ? InDomain(Pc, Uu, 0) : nullptr;
      const bool Checked = E.Cond && !Defined;
      llvm::BasicBlock *Pred = B.GetInsertBlock();
      std::function<void()> Close = Open(Checked ? E.Cond : nullptr, "piece");
      for (int64_t L = 0; L < V; ++L) {
        std::vector<llvm::Value *> OI;
        if (PP.Concat)
          OI = OutIndex(Pc, Uu, L);
        E.Vals.push_back(storeConvert(B, StoredValue(Pc, Uu, L, OI), PT));
      }
      if (Checked) {
        llvm::BasicBlock *From = B.GetInsertBlock();
        Close();
        for (llvm::Value *&X : E.Vals) {
          llvm::PHINode *Phi = B.CreatePHI(X->getType(), 2);
          Phi->addIncoming(X, From);
          Phi->addIncoming(llvm::PoisonValue::get(X->getType()), Pred);
          X = Phi;
        }
        // What was computed under the check does not dominate the rest.
        FE.clearCache();
        Lanes.clear();
      } else if (PP.Concat) {
        // An epilogue's values were computed with this piece's override.
        FE.clearCache();
      }
    }
  }

  // Then the stores, run by run and piece by piece: one vector where the
  // plan proved it, else lane by lane; a piece whose runs straddle its
  // domain's edge computes and stores each lane under its own check.
  for (int64_t Uu = 0; Uu < U; ++Uu) {
    std::function<void()> CloseRun = Open(RunValid[size_t(Uu)], "run");
    for (size_t I = 0; I < PP.Pieces.size(); ++I) {
      const PiecewisePlan::Piece &Pc = PP.Pieces[I];
      if (Skipped(Pc))
        continue;
      const Shape &OutShape = A.Roots[Pc.Output]->shape();
      const PrimitiveType PT = OutShape.Type;
      llvm::Type *ST = storageType(LC, PT);
      const int64_t Bytes = byteWidth(PT);
      llvm::Value *Out = K->getArg(C.parameterCount() + Pc.Output);
      auto Address = [&](const std::vector<llvm::Value *> &OI) {
        return B.CreateInBoundsGEP(ST, Out,
                                   physicalOffset(B, OutShape, OI, IndexTy));
      };
      // Lanes [From, To) of Vals stored, one vector when proven.
      auto Store = [&](const std::vector<llvm::Value *> &Vals, int64_t From,
                       int64_t To) {
        if (From == 0 && To == V && V > 1 && Pc.StoreWidth == V) {
          llvm::Value *Vec = llvm::PoisonValue::get(
              llvm::FixedVectorType::get(ST, unsigned(V)));
          for (int64_t L = 0; L < V; ++L)
            Vec = B.CreateInsertElement(Vec, Vals[size_t(L)], uint64_t(L));
          B.CreateAlignedStore(Vec, Address(OutIndex(Pc, Uu, 0)),
                               llvm::Align(V * Bytes));
          return;
        }
        for (int64_t L = From; L < To; ++L)
          B.CreateAlignedStore(Vals[size_t(L)], Address(OutIndex(Pc, Uu, L)),
                               llvm::Align(Bytes));
      };
      const Values &E = Early[size_t(Uu)][I];
      if (E.Have && Pc.WholeRuns) {
        std::function<void()> Close = Open(E.Cond, "store");
        Store(E.Vals, 0, V);
        Close();
        continue;
      }
      for (int64_t L = 0; L < V; ++L) {
        std::function<void()> Close = Open(InDomain(Pc, Uu, L), "lane");
        if (E.Have) {
          Store(E.Vals, L, L + 1);
        } else {
          // Defined in the domain only: computed under the check.
          std::vector<llvm::Value *> Vals(size_t(V), nullptr);
          Vals[size_t(L)] =
              storeConvert(B, StoredValue(Pc, Uu, L, OutIndex(Pc, Uu, L)), PT);
          Store(Vals, L, L + 1);
        }
        Close();
        if (!E.Have) {
          FE.clearCache();
          Lanes.clear();
        }
      }
    }
    CloseRun();
  }
  GL.finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
