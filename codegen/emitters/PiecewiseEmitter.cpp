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

namespace {

/// The body of a piecewise kernel: for one walked space (a thread mapping)
/// and the pieces stored from it, each thread's runs.
class PiecewiseBody {
public:
  PiecewiseBody(llvm::IRBuilder<> &B, llvm::Function &K,
                const FusionAnalysis &A, const KernelPlan &P, Context &Ctx,
                const MathOptions &Math, llvm::Type *IndexTy,
                llvm::BasicBlock *Done)
      : B(B), LC(B.getContext()), K(K), A(A), C(*A.Computation), PP(*P.Pieces),
        IndexTy(IndexTy), Done(Done), LaunchThreads(P.Main.ThreadsPerBlock),
        Lanes(B, K, C, P.Loop->LoadWidth, IndexTy),
        FE(B, Ctx, C, Lanes.loader(), Math, IndexTy) {
    if (PP.EvictLast)
      for (const HloInstruction *Pm : C.parameters())
        Lanes.setHint(*Pm, CacheHint::EvictLast);
  }

  /// Thread \p Th of block \p Bl of \p Map's blocks stores the pieces
  /// \p Ids from its runs: every value first (the loads in flight
  /// together), then the stores.
  void emitSpace(const ThreadMapping &Map, const std::vector<size_t> &Ids,
                 llvm::Value *Th, llvm::Value *Bl);

private:
  struct Values {
    /// The values were computed early (one per lane of the run).
    bool have() const { return !Vals.empty(); }
    llvm::Value *Cond = nullptr;
    std::vector<llvm::Value *> Vals;
  };
  llvm::Value *cst(int64_t N) { return llvm::ConstantInt::get(IndexTy, N); }
  /// RunValid and Idx of the runs of thread \p Th of block \p Bl.
  void runIndices(llvm::Value *Th, llvm::Value *Bl);
  /// Piece Pc's value at lane L of run Uu, through the epilogue at its
  /// place \p OutIdx.
  llvm::Value *storedValue(const PiecewisePlan::Piece &Pc, int64_t Uu,
                           int64_t L, const std::vector<llvm::Value *> &OutIdx);
  /// i1: lane L of run Uu lies in the piece's domain (its map's dim
  /// ranges, where narrower than the walked space's); null when it always
  /// does.
  llvm::Value *inDomain(const PiecewisePlan::Piece &Pc, int64_t Uu, int64_t L);
  /// Opens a block entered where \p Cond holds (none: always); the
  /// returned closer branches to the block after it.
  std::function<void()> open(llvm::Value *Cond, const char *Name);
  std::vector<llvm::Value *> outIndex(const PiecewisePlan::Piece &Pc,
                                      int64_t Uu, int64_t L) {
    return emitIndexExprs(B, MapRanges, Pc.OutputMap,
                          Idx[size_t(Uu)][size_t(L)], {}, IndexTy);
  }
  bool skipped(const PiecewisePlan::Piece &Pc) const {
    return Pc.Source->shape().numElements() == 0 ||
           A.Roots[Pc.Output]->shape().numElements() == 0;
  }
  /// The values of run Uu of the piece that need no per-lane check.
  Values earlyValues(const PiecewisePlan::Piece &Pc, int64_t Uu);
  /// Run Uu's stores of the piece (\p E: its early values, if any).
  void storeRun(const PiecewisePlan::Piece &Pc, int64_t Uu, const Values &E);

  llvm::IRBuilder<> &B;
  llvm::LLVMContext &LC;
  llvm::Function &K;
  const FusionAnalysis &A;
  const HloComputation &C;
  const PiecewisePlan &PP;
  llvm::Type *IndexTy;
  /// The ranges of the pieces' output maps, kept across the lanes.
  RangeCache MapRanges;
  llvm::BasicBlock *Done;
  const int64_t LaunchThreads;
  LaneLoader Lanes;
  FusedElementEmitter FE;
  // The space being emitted.
  const ThreadMapping *TM = nullptr;
  int64_t V = 1, U = 1;
  std::vector<llvm::Value *> RunValid;
  std::vector<std::vector<std::vector<llvm::Value *>>> Idx;
};

void PiecewiseBody::runIndices(llvm::Value *Th, llvm::Value *Bl) {
  // Thread th of block bl computes runs (bl * U + u) * T + th; threads
  // past the last run are done, and a later run past the end takes run
  // 0's index (always there) and stores nothing.
  const int64_t T = TM->ThreadsPerBlock;
  const int64_t Threads = ceilDiv(TM->Target->shape().numElements(), V);
  const bool Ragged = TM->Blocks * T * U != Threads;
  // A small operand's walk has fewer threads than the launch's blocks.
  if (T < LaunchThreads) {
    auto *Body = llvm::BasicBlock::Create(LC, "threads", &K);
    B.CreateCondBr(B.CreateICmpULT(Th, cst(T)), Body, Done);
    B.SetInsertPoint(Body);
  }
  llvm::Value *Run0 = B.CreateAdd(B.CreateMul(Bl, cst(T * U)), Th);
  if (Ragged) {
    auto *Body = llvm::BasicBlock::Create(LC, "body", &K);
    B.CreateCondBr(B.CreateICmpULT(Run0, cst(Threads)), Body, Done);
    B.SetInsertPoint(Body);
  }
  RangeEvaluator RE(TM->Map);
  RunValid.assign(size_t(U), nullptr);
  Idx.assign(size_t(U), {});
  for (int64_t Uu = 0; Uu < U; ++Uu) {
    llvm::Value *USym = cst(Uu);
    if (Uu > 0 && Ragged) {
      RunValid[size_t(Uu)] =
          B.CreateICmpULT(B.CreateAdd(Run0, cst(Uu * T)), cst(Threads));
      USym = B.CreateSelect(RunValid[size_t(Uu)], USym, cst(0));
    }
    for (int64_t L = 0; L < V; ++L) {
      std::vector<llvm::Value *> Syms = {cst(L)};
      if (U > 1)
        Syms.insert(Syms.begin(), USym);
      std::vector<llvm::Value *> I;
      for (Expr E : TM->Map.results())
        I.push_back(emitIndexExpr(B, E, {Th, Bl}, Syms, RE, IndexTy));
      Idx[size_t(Uu)].push_back(std::move(I));
    }
  }
}

llvm::Value *
PiecewiseBody::storedValue(const PiecewisePlan::Piece &Pc, int64_t Uu,
                           int64_t L,
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
}

llvm::Value *PiecewiseBody::inDomain(const PiecewisePlan::Piece &Pc, int64_t Uu,
                                     int64_t L) {
  const Shape &Space = TM->Target->shape();
  llvm::Value *Cond = nullptr;
  auto And = [&](llvm::Value *X) { Cond = Cond ? B.CreateAnd(Cond, X) : X; };
  for (size_t D = 0; D < Space.Dims.size(); ++D) {
    const Interval &Bd = Pc.OutputMap.dims()[D].Bound;
    llvm::Value *I = Idx[size_t(Uu)][size_t(L)][D];
    if (Bd.Lo > 0)
      And(B.CreateICmpUGE(I, cst(Bd.Lo)));
    if (Bd.Hi < Space.Dims[D] - 1)
      And(B.CreateICmpULE(I, cst(Bd.Hi)));
  }
  return Cond;
}

std::function<void()> PiecewiseBody::open(llvm::Value *Cond, const char *Name) {
  if (!Cond)
    return [] {};
  auto *Then = llvm::BasicBlock::Create(LC, Name, &K);
  auto *After = llvm::BasicBlock::Create(LC, std::string(Name) + ".next", &K);
  B.CreateCondBr(Cond, Then, After);
  B.SetInsertPoint(Then);
  return [this, After] {
    B.CreateBr(After);
    B.SetInsertPoint(After);
  };
}

PiecewiseBody::Values PiecewiseBody::earlyValues(const PiecewisePlan::Piece &Pc,
                                                 int64_t Uu) {
  // Unchecked where the source is defined (the domain holds every run, or
  // the source covers the walked space), else computed under the run's
  // check and carried out through phis. A piece whose runs straddle its
  // domain's edge (and is not defined beyond it) waits for the stores.
  Values E;
  const bool Defined = Pc.Covers && !PP.Concat;
  if (skipped(Pc) || !(Pc.WholeRuns || Defined))
    return E;
  const PrimitiveType PT = A.Roots[Pc.Output]->shape().Type;
  E.Cond = Pc.WholeRuns ? inDomain(Pc, Uu, 0) : nullptr;
  const bool Checked = E.Cond && !Defined;
  llvm::BasicBlock *Pred = B.GetInsertBlock();
  std::function<void()> Close = open(Checked ? E.Cond : nullptr, "piece");
  for (int64_t L = 0; L < V; ++L) {
    std::vector<llvm::Value *> OI;
    if (PP.Concat)
      OI = outIndex(Pc, Uu, L);
    E.Vals.push_back(storeConvert(B, storedValue(Pc, Uu, L, OI), PT));
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
  return E;
}

void PiecewiseBody::storeRun(const PiecewisePlan::Piece &Pc, int64_t Uu,
                             const Values &E) {
  const Shape &OutShape = A.Roots[Pc.Output]->shape();
  const PrimitiveType PT = OutShape.Type;
  llvm::Type *ST = storageType(LC, PT);
  const int64_t Bytes = byteWidth(PT);
  llvm::Value *Out = K.getArg(C.parameterCount() + Pc.Output);
  auto Address = [&](const std::vector<llvm::Value *> &OI) {
    return elementPointer(B, ST, Out, OutShape, OI, IndexTy);
  };
  // Lanes [From, To) of Vals stored, one vector when proven.
  auto Store = [&](const std::vector<llvm::Value *> &Vals, int64_t From,
                   int64_t To) {
    if (From == 0 && To == V && V > 1 && Pc.StoreWidth == V) {
      llvm::Value *Vec =
          llvm::PoisonValue::get(llvm::FixedVectorType::get(ST, unsigned(V)));
      for (int64_t L = 0; L < V; ++L)
        Vec = B.CreateInsertElement(Vec, Vals[size_t(L)], uint64_t(L));
      B.CreateAlignedStore(Vec, Address(outIndex(Pc, Uu, 0)),
                           llvm::Align(V * Bytes));
      return;
    }
    for (int64_t L = From; L < To; ++L)
      B.CreateAlignedStore(Vals[size_t(L)], Address(outIndex(Pc, Uu, L)),
                           llvm::Align(Bytes));
  };
  if (E.have() && Pc.WholeRuns) {
    std::function<void()> Close = open(E.Cond, "store");
    Store(E.Vals, 0, V);
    Close();
    return;
  }
  for (int64_t L = 0; L < V; ++L) {
    std::function<void()> Close = open(inDomain(Pc, Uu, L), "lane");
    if (E.have()) {
      Store(E.Vals, L, L + 1);
    } else {
      // Defined in the domain only: computed under the check.
      std::vector<llvm::Value *> Vals(size_t(V), nullptr);
      Vals[size_t(L)] =
          storeConvert(B, storedValue(Pc, Uu, L, outIndex(Pc, Uu, L)), PT);
      Store(Vals, L, L + 1);
    }
    Close();
    if (!E.have()) {
      FE.clearCache();
      Lanes.clear();
    }
  }
}

void PiecewiseBody::emitSpace(const ThreadMapping &Map,
                              const std::vector<size_t> &Ids, llvm::Value *Th,
                              llvm::Value *Bl) {
  TM = &Map;
  V = Map.Vector;
  U = Map.Unroll;
  runIndices(Th, Bl);
  // Every run's values of every piece first, then the stores, run by run.
  std::vector<std::vector<Values>> Early(static_cast<size_t>(U));
  for (int64_t Uu = 0; Uu < U; ++Uu)
    for (size_t I : Ids)
      Early[size_t(Uu)].push_back(earlyValues(PP.Pieces[I], Uu));
  for (int64_t Uu = 0; Uu < U; ++Uu) {
    std::function<void()> CloseRun = open(RunValid[size_t(Uu)], "run");
    for (size_t J = 0; J < Ids.size(); ++J)
      if (!skipped(PP.Pieces[Ids[J]]))
        storeRun(PP.Pieces[Ids[J]], Uu, Early[size_t(Uu)][J]);
    CloseRun();
  }
  FE.clearCache();
  Lanes.clear();
}

} // namespace

Expected<KernelInfo> emitPiecewiseKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &P, Context &Ctx,
                                         const MathOptions &Math) {
  requestBackEndOptLevel(M, P.BackEndOptLevel);
  const HloComputation &C = *A.Computation;
  const PiecewisePlan &PP = *P.Pieces;
  const int64_t T = P.Main.ThreadsPerBlock;

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

  GridLoop GL(B, *K, IndexTy, T, P.Grid[0], PP.blocks(P.Main));
  PiecewiseBody Body(B, *K, A, P, Ctx, Math, IndexTy, GL.Done);
  if (!PP.Blocked) {
    std::vector<size_t> All(PP.Pieces.size());
    for (size_t I = 0; I < All.size(); ++I)
      All[I] = I;
    Body.emitSpace(P.Main, All, GL.Th, GL.Bl);
    GL.finish();
    return Info;
  }
  // Blocked: blocks [FirstBlock, FirstBlock + Main.Blocks) walk piece k's
  // own space.
  for (size_t I = 0; I < PP.Pieces.size(); ++I) {
    const PiecewisePlan::Piece &Pc = PP.Pieces[I];
    if (Pc.Main.Blocks == 0)
      continue;
    const int64_t Next = Pc.FirstBlock + Pc.Main.Blocks;
    llvm::BasicBlock *After = nullptr;
    if (Next < PP.blocks(P.Main)) {
      auto *In = llvm::BasicBlock::Create(M.getContext(), "operand", K);
      After = llvm::BasicBlock::Create(M.getContext(), "operand.next", K);
      B.CreateCondBr(
          B.CreateICmpULT(GL.Bl, llvm::ConstantInt::get(IndexTy, Next)), In,
          After);
      B.SetInsertPoint(In);
    }
    llvm::Value *Bl = B.CreateSub(
        GL.Bl, llvm::ConstantInt::get(IndexTy, Pc.FirstBlock), "", true, true);
    Body.emitSpace(Pc.Main, {I}, GL.Th, Bl);
    if (!After)
      break;
    B.CreateBr(GL.Done);
    B.SetInsertPoint(After);
  }
  GL.finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
