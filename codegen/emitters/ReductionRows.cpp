//===- ReductionRows.cpp - Row, multi-row and full reductions -------------===//
//
// Part of idxmap. The row scheme of the reduction emitter (see the top of
// ReductionEmitter.cpp and ReductionPlan in KernelPlan.h).
//
//===----------------------------------------------------------------------===//
#include "ReductionKernel.h"

namespace idxmap {
namespace codegen {
namespace reduction {

/// Row, multi-row and full reductions.
///
/// Threads: groups of G lanes per row (G <= 32: T / G rows per block and K
/// rows per thread, rows `bl * RPB * K + k * RPB + th / G`), a block per row
/// (G = T), or the whole grid on one row (full). Each step reads U vector
/// iterations of each of the thread's K rows (K * U independent loads, all
/// issued before the first is used). Steps where some lane has no element
/// (the last iterations of a row, rows past the end) read at a substituted
/// point of the domain (thread 0 of the block, row k = 0) and mask the value
/// with the init value, so the loop has no branches.
Expected<KernelInfo> ReductionKernel::emitRows() {
  // The plan's shape (ReductionPlan): rows [D0, D1, D2] of NVec vectors,
  // G lanes per row, RPB rows per block, K rows per thread, U iterations
  // of Iters in flight.
  const int64_t D0 = RP.Dims[0], D1 = RP.Dims[1], D2 = RP.Dims[2];
  const int64_t Vec = RP.Vector, NVec = D2 / Vec;
  enum {
    Group,
    BlockRow,
    Whole
  } Mode = RP.Mode == ReductionMode::RowGroup      ? Group
           : RP.Mode == ReductionMode::BlockPerRow ? BlockRow
                                                   : Whole;
  const int64_t G = RP.LanesPerRow, T = Plan.Block[0], RPB = RP.RowsPerBlock,
                K = RP.RowsPerThread, Blocks = Plan.Grid[0], Rows = D1;
  const int64_t Iters = RP.Iterations, U = RP.Unroll;
  int64_t Main = NVec / (U * G); // steps of U iterations with every lane busy
  requestBackEndOptLevel(M, Plan.BackEndOptLevel);
  if (auto Err = createFunction(T, Blocks, 0, RP.MultiBlock))
    return *Err;
  // A ticket fold's ticket is taken first: its atomic's latency hides
  // behind the block's loads.
  llvm::AllocaInst *Ticket = nullptr;
  llvm::Value *Counter = nullptr;
  if (RP.MultiBlock && RP.TicketFold)
    std::tie(Ticket, Counter) = takeTicket(cst(0), 1);
  bool ColMask = Iters * G != NVec;
  bool RowMask = Mode == Group && Blocks * RPB * K != Rows;
  const std::vector<Variable> &Syms = RP.Syms;
  setInputMap(Syms, RP.Linear, RP.Constraints);
  const Expr Row = RP.Row, Lane = RP.Lane;

  // Per row k: the row, and whether it exists; the lane.
  std::vector<Variable> Dims = {{"th_x", {0, T - 1}},
                                {"bl_x", {0, Blocks - 1}}};
  IndexingMap LR(Ctx, Dims, {Syms[0], Syms[1]}, {}, {Row, Lane}, {});
  llvm::Value *LaneV = emitExprs(LR, {cst(0), cst(0)})[1];
  std::vector<llvm::Value *> RowValid(size_t(K), nullptr);
  if (RowMask)
    for (int64_t Kk = 0; Kk < K; ++Kk)
      RowValid[size_t(Kk)] =
          B.CreateICmpULT(emitExprs(LR, {cst(0), cst(Kk)})[0], cst(Rows));
  // Accumulators per row k.
  std::vector<std::vector<llvm::AllocaInst *>> AccSets = {Accs};
  for (int64_t Kk = 1; Kk < K; ++Kk)
    AccSets.push_back(newAccumulators());

  bool LoadsFirst = RP.LoadsFirst;
  ParameterLoader Loader = vectorLoader();
  FusedElementEmitter FE(B, Ctx, C, Loader, Math, IndexTy);
  // One step: iterations Its (value, and the constant when it is a tail
  // iteration, else -1) of every row k; loads first, then the side stores,
  // then the accumulation.
  auto Steps = [&](llvm::Value *Bv,
                   const std::vector<std::pair<llvm::Value *, int64_t>> &Its) {
    Vectors.clear();
    FE.clearCache();
    // The point of every (row k, iteration) of the step.
    struct Point {
      int64_t Kk;
      llvm::Value *Th, *Bl, *K, *It, *ColValid, *Valid;
    };
    std::vector<Point> Points;
    for (int64_t Kk = 0; Kk < K; ++Kk)
      for (size_t S = 0; S < Its.size(); ++S) {
        llvm::Value *ColValid = nullptr;
        int64_t ItC = Its[S].second;
        if (ColMask && ItC >= 0 && (ItC + 1) * G > NVec)
          ColValid = B.CreateICmpULT(
              B.CreateAdd(cst(ItC * G), LaneV, "", true, true), cst(NVec));
        llvm::Value *Valid = RowValid[size_t(Kk)];
        if (ColValid)
          Valid = Valid ? B.CreateAnd(Valid, ColValid) : ColValid;
        llvm::Value *ThS = Th, *BlS = Bl, *KS = cst(Kk), *ItS = Its[S].first;
        if (Valid) {
          // A point of the domain: thread 0 of this block, row k = 0.
          ThS = B.CreateSelect(Valid, Th, cst(0));
          if (Mode == Whole)
            BlS = B.CreateSelect(Valid, Bl, cst(0));
          KS = B.CreateSelect(Valid, KS, cst(0));
        }
        Points.push_back({Kk, ThS, BlS, KS, ItS, ColValid, Valid});
      }
    // With LoadsFirst, a first pass only issues the vector loads (its
    // values are dead; the second pass finds the loads in Vectors), so that
    // every load of the step precedes the first use in the IR.
    if (LoadsFirst) {
      size_t Before = Pending.size();
      for (size_t P = 0; P < Points.size(); ++P)
        valuesAt(FE, {Points[P].Th, Points[P].Bl},
                 {Bv, Points[P].K, Points[P].It}, int64_t(P));
      Pending.resize(Before);
      FE.clearCache();
    }
    std::vector<std::vector<std::vector<llvm::Value *>>> Vals(
        static_cast<size_t>(K));
    for (size_t P = 0; P < Points.size(); ++P) {
      const Point &Pt = Points[P];
      CurGuard = Pt.Valid;
      auto V = valuesAt(FE, {Pt.Th, Pt.Bl}, {Bv, Pt.K, Pt.It}, int64_t(P));
      CurGuard = nullptr;
      if (Pt.ColValid)
        for (auto &LaneVals : V)
          for (size_t I = 0; I < LaneVals.size(); ++I)
            LaneVals[I] = B.CreateSelect(Pt.ColValid, LaneVals[I], Idents[I]);
      Vals[size_t(Pt.Kk)].insert(Vals[size_t(Pt.Kk)].end(), V.begin(), V.end());
    }
    flushSideStores();
    for (int64_t Kk = 0; Kk < K; ++Kk) {
      Accs = AccSets[size_t(Kk)];
      accumulate(Vals[size_t(Kk)]);
    }
    FE.clearCache();
    Vectors.clear();
  };
  emitFor(cst(D0), [&](llvm::Value *Bv) {
    emitFor(cst(Main), [&](llvm::Value *Cv) {
      std::vector<std::pair<llvm::Value *, int64_t>> Its;
      for (int64_t Uu = 0; Uu < U; ++Uu)
        Its.push_back({B.CreateAdd(B.CreateMul(Cv, cst(U), "", true, true),
                                   cst(Uu), "", true, true),
                       -1});
      Steps(Bv, Its);
    });
    std::vector<std::pair<llvm::Value *, int64_t>> Tail;
    for (int64_t It = Main * U; It < Iters; ++It)
      Tail.push_back({cst(It), It});
    if (!Tail.empty())
      Steps(Bv, Tail);
  });
  if (RP.TailElements > 0) {
    Accs = AccSets[0];
    emitScalarTail(D0 * D1 * D2, RP.TailElements);
  }

  std::vector<std::vector<llvm::Value *>> Red;
  for (int64_t Kk = 0; Kk < K; ++Kk) {
    Accs = AccSets[size_t(Kk)];
    Red.push_back(loadAccs());
  }
  Accs = AccSets[0];
  IndexingMap OM(Ctx, Dims, {Syms[0], Syms[1]}, {}, outputExprs(Row * D2), {});
  if (Mode == Group) {
    Red = warpReduceSets(std::move(Red), unsigned(G));
    llvm::Value *Leader = B.CreateICmpEQ(LaneV, cst(0));
    for (int64_t Kk = 0; Kk < K; ++Kk) {
      llvm::Value *Store = Leader;
      if (RowValid[size_t(Kk)])
        Store = B.CreateAnd(Store, RowValid[size_t(Kk)]);
      emitIf(Store, [&] {
        emitEpilogue(Red[size_t(Kk)], emitExprs(OM, {cst(0), cst(Kk)}));
      });
    }
    B.CreateRetVoid();
    return Info;
  }
  // A ticket fold writes no shared slot of this reduction again.
  std::vector<llvm::Value *> R1 =
      blockReduce(std::move(Red[0]), unsigned(T), /*BarrierAfter=*/!Ticket);
  if (!RP.MultiBlock) {
    emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
      emitEpilogue(R1, emitExprs(OM, {cst(0), cst(0)}));
    });
    B.CreateRetVoid();
    return Info;
  }
  if (Ticket) {
    foldByTicket(R1, Ticket, Counter, Blocks,
                 [&](llvm::ArrayRef<llvm::Value *> Tot) {
                   emitEpilogue(Tot, emitExprs(OM, {cst(0), cst(0)}));
                 });
    B.CreateRetVoid();
    return Info;
  }
  // Full reduction over several blocks: partials to the workspace; the
  // last block to finish combines them in block order.
  std::vector<ScratchArray> Scratch = scratchArrays(Blocks);
  emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
    storeScratch(Scratch, Bl, R1);
    threadFence();
  });
  auto [IsLast, CounterPtr] = arriveLast(cst(0), 1, Blocks);
  llvm::Value *CPtr = CounterPtr;
  emitIf(IsLast, [&] {
    threadFence();
    storeAccs(Idents);
    // Thread th combines partials th, th + T, ... in order (a loop when
    // there are many: chunked inputs have thousands).
    auto CombineAt = [&](llvm::Value *J) {
      llvm::Value *Idx = B.CreateAdd(Th, B.CreateMul(J, cst(T)));
      emitIf(B.CreateICmpULT(Idx, cst(Blocks)), [&] {
        storeAccs(combine(loadAccs(), takeScratch(Scratch, Idx)));
      });
    };
    if (ceilDiv(Blocks, T) > 4)
      emitFor(cst(ceilDiv(Blocks, T)), CombineAt);
    else
      for (int64_t J = 0; J < ceilDiv(Blocks, T); ++J)
        CombineAt(cst(J));
    std::vector<llvm::Value *> Tot = blockReduce(loadAccs(), unsigned(T));
    emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
      B.CreateStore(B.getInt32(0), CPtr, /*isVolatile=*/true);
      emitEpilogue(Tot, emitExprs(OM, {cst(0), cst(0)}));
    });
  });
  B.CreateRetVoid();
  return Info;
}

void ReductionKernel::emitScalarTail(int64_t First, int64_t Count) {
  // The tail's own map, (th_x, bl_x)[b, k, it, vec] -> First + th_x, with
  // every access one element wide; the plan's map (and the sidecar's thread
  // map) is set again afterwards.
  std::vector<Variable> Syms = {
      {"b", {0, 0}}, {"k", {0, 0}}, {"it", {0, 0}}, {"vec", {0, 0}}};
  setInputMap(Syms, Ctx.constant(First) + Ctx.dim(0),
              {{Ctx.dim(0), {0, Count - 1}}});
  for (auto &[P, W] : Width)
    W = 1;
  for (SideRoot &S : Sides)
    S.Width = 1;
  ParameterLoader Loader = vectorLoader();
  FusedElementEmitter FE(B, Ctx, C, Loader, Math, IndexTy);
  llvm::Value *Reads =
      B.CreateAnd(B.CreateICmpEQ(Bl, cst(0)), B.CreateICmpULT(Th, cst(Count)));
  emitIf(Reads, [&] {
    Vectors.clear();
    auto Vals = valuesAt(FE, {Th, Bl}, {cst(0), cst(0), cst(0)}, 0);
    flushSideStores();
    accumulate(Vals);
    Vectors.clear();
  });
  setInputMap(RP.Syms, RP.Linear, RP.Constraints);
}

} // namespace reduction
} // namespace codegen
} // namespace idxmap
