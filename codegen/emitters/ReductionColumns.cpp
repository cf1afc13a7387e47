//===- ReductionColumns.cpp - Column reductions ---------------------------===//
//
// Part of idxmap. The column scheme of the reduction emitter (see the top of
// ReductionEmitter.cpp and ReductionPlan in KernelPlan.h).
//
//===----------------------------------------------------------------------===//
#include "ReductionKernel.h"

namespace idxmap {
namespace codegen {
namespace reduction {

/// Column reductions [K1, R, K2].
///
/// Threads: L lanes along the kept minor dim (Vec elements each: one
/// 16-byte load reads Vec adjacent columns), 32 / L row slots per warp, W
/// warps; a block reads a tile of L * Vec columns, T / L rows per step and U
/// steps (independent loads) at a time, each thread accumulating Vec
/// partial sums. The row slots of a warp combine with shuffles, the warps
/// through padded shared memory [W][L * Vec + 1], one thread per column
/// combining the W partials in order. With Split > 1 the reduced dim is cut
/// into Split chunks of whole steps (a block each): blocks write their
/// column partials to the workspace and the last block of the tile to
/// finish (a device-scope counter per tile) combines them in chunk order:
/// deterministic. With ticket_fold, the tile's block that started last
/// (ReductionPartials.cpp).
Expected<KernelInfo> ReductionKernel::emitColumns() {
  requestBackEndOptLevel(M, Plan.BackEndOptLevel);
  const int64_t K1 = RP.Dims[0], R = RP.Dims[1], K2 = RP.Dims[2];
  const int64_t Vec = RP.Vector, L = RP.ColLanes, W = RP.Warps,
                T = Plan.Block[0];
  const int64_t Cols = L * Vec, RS = T / L, Tiles = ceilDiv(K2, Cols);
  const int64_t Split = RP.Split, Iters = RP.Iterations, U = RP.Unroll;
  const int64_t RC = Iters * RS; // rows per chunk
  const int64_t Blocks = Plan.Grid[0];
  bool ColMask = Tiles * Cols != K2, RowMask = Split * RC != R;
  if (auto Err = createFunction(T, Blocks, 0, /*Workspace=*/RP.MultiBlock))
    return *Err;

  Expr ThE = Ctx.dim(0), BlE = Ctx.dim(1);
  Expr TileE = BlE % Tiles, Rest = BlE.floorDiv(Tiles);
  Expr SpE = Rest % Split, K1E = Rest.floorDiv(Split);
  Expr ColBase = TileE * Cols;
  Expr RE = SpE * RC + Ctx.symbol(0) * RS + ThE.floorDiv(L);
  const std::vector<Variable> &Syms = RP.Syms;
  setInputMap(Syms, RP.Linear, RP.Constraints);
  std::vector<Variable> Dims = {{"th_x", {0, T - 1}},
                                {"bl_x", {0, Blocks - 1}}};
  IndexingMap LM(Ctx, Dims, {Syms[0]}, {},
                 {ThE % L, ThE.floorDiv(32), ColBase, SpE * RC,
                  K1E * Tiles + TileE, RE, ThE % 32, SpE},
                 {});
  std::vector<llvm::Value *> LV = emitExprs(LM, {cst(0)});
  llvm::Value *LaneV = LV[0], *WarpV = LV[1], *ColBaseV = LV[2],
              *ChunkV = LV[3], *TileIdV = LV[4], *Lane32V = LV[6], *SpV = LV[7];
  // A ticket fold's ticket among the blocks of the tile, taken first: its
  // atomic's latency hides behind the block's loads.
  llvm::AllocaInst *Ticket = nullptr;
  llvm::Value *Counter = nullptr;
  if (RP.MultiBlock && RP.TicketFold)
    std::tie(Ticket, Counter) = takeTicket(TileIdV, K1 * Tiles);
  llvm::Value *ColValid =
      ColMask
          ? B.CreateICmpULT(B.CreateAdd(ColBaseV, B.CreateMul(LaneV, cst(Vec))),
                            cst(K2))
          : B.getTrue();
  // Vec accumulator sets (one per column of the thread).
  std::vector<std::vector<llvm::AllocaInst *>> ColAccs = {Accs};
  for (int64_t J = 1; J < Vec; ++J)
    ColAccs.push_back(newAccumulators());
  FusedElementEmitter FE(B, Ctx, C, vectorLoader(), Math, IndexTy);
  // Steps at iterations Its; with Masked, rows past R read at row `chunk
  // start` (thread lane % L, it = 0) and count as the init value.
  bool LoadsFirst = RP.LoadsFirst;
  auto Steps = [&](const std::vector<llvm::Value *> &Its, bool Masked) {
    Vectors.clear();
    FE.clearCache();
    std::vector<std::array<llvm::Value *, 3>> Points; // th, it, valid
    for (size_t S = 0; S < Its.size(); ++S) {
      llvm::Value *ThS = Th, *ItS = Its[S], *Valid = nullptr;
      if (Masked) {
        Valid = B.CreateICmpULT(emitExprs(LM, {Its[S]})[5], cst(R));
        ThS = B.CreateSelect(Valid, Th, LaneV);
        ItS = B.CreateSelect(Valid, ItS, cst(0));
      }
      Points.push_back({ThS, ItS, Valid});
    }
    if (LoadsFirst) {
      // Loads only (see emitRows).
      size_t Before = Pending.size();
      for (size_t S = 0; S < Points.size(); ++S)
        valuesAt(FE, {Points[S][0], Bl}, {Points[S][1]}, int64_t(S));
      Pending.resize(Before);
      FE.clearCache();
    }
    std::vector<std::vector<std::vector<llvm::Value *>>> All;
    for (size_t S = 0; S < Points.size(); ++S) {
      llvm::Value *ThS = Points[S][0], *ItS = Points[S][1],
                  *Valid = Points[S][2];
      CurGuard = Valid;
      auto V = valuesAt(FE, {ThS, Bl}, {ItS}, int64_t(S));
      CurGuard = nullptr;
      if (Valid)
        for (auto &LaneVals : V)
          for (size_t I = 0; I < LaneVals.size(); ++I)
            LaneVals[I] = B.CreateSelect(Valid, LaneVals[I], Idents[I]);
      All.push_back(std::move(V));
    }
    flushSideStores();
    for (int64_t J = 0; J < Vec; ++J) {
      Accs = ColAccs[size_t(J)];
      std::vector<llvm::Value *> Acc = loadAccs();
      for (const auto &V : All)
        Acc = combine(Acc, V[size_t(J)]);
      storeAccs(Acc);
    }
    FE.clearCache();
    Vectors.clear();
  };
  emitIf(ColValid, [&] {
    // Steps whose rows all exist: U at a time.
    llvm::Value *NFull = cst(Iters);
    if (RowMask) {
      llvm::Value *Q = B.CreateUDiv(B.CreateSub(cst(R), ChunkV), cst(RS));
      NFull = B.CreateSelect(B.CreateICmpULT(Q, cst(Iters)), Q, cst(Iters));
    }
    llvm::Value *Main = RowMask ? B.CreateUDiv(NFull, cst(U)) : cst(Iters / U);
    emitFor(Main, [&](llvm::Value *Cv) {
      std::vector<llvm::Value *> Its;
      for (int64_t Uu = 0; Uu < U; ++Uu)
        Its.push_back(B.CreateAdd(B.CreateMul(Cv, cst(U), "", true, true),
                                  cst(Uu), "", true, true));
      Steps(Its, false);
    });
    if (!RowMask) {
      std::vector<llvm::Value *> Its;
      for (int64_t It = Iters / U * U; It < Iters; ++It)
        Its.push_back(cst(It));
      if (!Its.empty())
        Steps(Its, false);
    } else {
      // The rest of the chunk one step at a time, masked.
      llvm::Value *First = B.CreateMul(Main, cst(U));
      emitFor(B.CreateSub(cst(Iters), First),
              [&](llvm::Value *Iv) { Steps({B.CreateAdd(First, Iv)}, true); });
    }
  });
  // Row slots of a warp: shuffles; warps: padded shared memory.
  std::vector<std::vector<llvm::Value *>> Part;
  for (int64_t J = 0; J < Vec; ++J) {
    Accs = ColAccs[size_t(J)];
    Part.push_back(loadAccs());
  }
  Accs = ColAccs[0];
  Part = warpReduceSets(std::move(Part), WarpSize, unsigned(L));
  int64_t Pitch = Cols + 1;
  SharedSlots Sh(M, Inits, uint64_t(W * Pitch), Info.Name + ".cols");
  for (llvm::Value *I : Inits)
    Info.SharedBytes +=
        unsigned(W * Pitch *
                 std::max<uint64_t>(1, M.getDataLayout().getTypeAllocSize(
                                           storedType(I->getType()))));
  emitIf(B.CreateICmpULT(Lane32V, cst(L)), [&] {
    for (int64_t J = 0; J < Vec; ++J) {
      llvm::Value *Idx =
          B.CreateAdd(B.CreateMul(WarpV, cst(Pitch)),
                      B.CreateAdd(B.CreateMul(LaneV, cst(Vec)), cst(J)));
      Sh.store(B, Idx, Part[size_t(J)]);
    }
  });
  emitBarrier(B);
  // Output index of (k1, column c of the tile).
  IndexingMap OM(Ctx, {Dims[0], Dims[1], {"c", {0, Cols - 1}}}, {}, {},
                 outputExprs(K1E * (R * K2) + ColBase + Ctx.dim(2)), {});
  auto Store = [&](llvm::Value *Col, llvm::ArrayRef<llvm::Value *> Red) {
    emitEpilogue(Red, emitExprs(OM, {Th, Bl, Col}, {}));
  };
  auto ForColumns = [&](const std::function<void(llvm::Value *)> &Body) {
    for (int64_t J = 0; J < ceilDiv(Cols, T); ++J) {
      llvm::Value *Col = B.CreateAdd(Th, cst(J * T));
      llvm::Value *Ok = B.CreateICmpULT(Col, cst(Cols));
      if (ColMask)
        Ok = B.CreateAnd(Ok,
                         B.CreateICmpULT(B.CreateAdd(ColBaseV, Col), cst(K2)));
      emitIf(Ok, [&] { Body(Col); });
    }
  };
  std::vector<ScratchArray> Scratch;
  PartialSlots Published;
  if (Split > 1 && Ticket)
    Published = partialSlots(K1 * Tiles * Split * Cols);
  else if (Split > 1)
    Scratch = scratchArrays(K1 * Tiles * Split * Cols);
  ForColumns([&](llvm::Value *Col) {
    storeAccs(Idents);
    for (int64_t Wi = 0; Wi < W; ++Wi) {
      llvm::Value *Idx = B.CreateAdd(cst(Wi * Pitch), Col);
      storeAccs(combine(loadAccs(), Sh.load(B, Idx)));
    }
    if (Split == 1) {
      Store(Col, loadAccs());
      return;
    }
    // This chunk's partial: [tile][chunk][c].
    llvm::Value *Idx = B.CreateAdd(
        B.CreateMul(B.CreateAdd(B.CreateMul(TileIdV, cst(Split)), SpV),
                    cst(Cols)),
        Col);
    if (Ticket) {
      publishPartial(Published, Idx, loadAccs());
      return;
    }
    storeScratch(Scratch, Idx, loadAccs());
    threadFence();
  });
  if (Split > 1) {
    llvm::Value *IsLast, *CPtr;
    std::tie(IsLast, CPtr) = Ticket ? lastTicket(Ticket, Counter, Split)
                                    : arriveLast(TileIdV, K1 * Tiles, Split);
    emitIf(IsLast, [&] {
      if (!Ticket)
        threadFence();
      // Group g of column c folds chunks g, g + NG, ... in order, NB loads
      // at a time, into slot [g][c] of the shared tile; then each column
      // folds its groups in order.
      const int64_t NG = RP.CombineGroups, NB = RP.CombineBatch;
      const int64_t Batches = RP.combineBatches();
      const bool Ragged = Batches * NB * NG != Split;
      for (int64_t J = 0; J < ceilDiv(Cols * NG, T); ++J) {
        llvm::Value *Id = B.CreateAdd(Th, cst(J * T));
        llvm::Value *Col = B.CreateURem(Id, cst(Cols));
        llvm::Value *G = B.CreateUDiv(Id, cst(Cols));
        llvm::Value *Ok = B.CreateICmpULT(Id, cst(Cols * NG));
        if (ColMask)
          Ok = B.CreateAnd(
              Ok, B.CreateICmpULT(B.CreateAdd(ColBaseV, Col), cst(K2)));
        emitIf(Ok, [&] {
          storeAccs(Idents);
          // Chunk S = G + (BIdx * NB + U2) * NG of the tile, its slot
          // (Tile * Split + S) * Cols + Col: the batch's first slot plus a
          // constant per load (a ragged batch's missing chunks read chunk
          // G's slot).
          llvm::Value *Home = B.CreateAdd(
              B.CreateMul(B.CreateAdd(B.CreateMul(TileIdV, cst(Split)), G),
                          cst(Cols)),
              Col);
          auto Batch = [&](llvm::Value *BIdx) {
            std::vector<std::vector<llvm::Value *>> Vals;
            llvm::Value *First =
                Ragged ? B.CreateAdd(G, B.CreateMul(BIdx, cst(NB * NG)))
                       : nullptr;
            llvm::Value *FirstSlot =
                B.CreateAdd(Home, B.CreateMul(BIdx, cst(NB * NG * Cols)));
            std::vector<llvm::Value *> Idxs, Valids;
            for (int64_t U2 = 0; U2 < NB; ++U2) {
              llvm::Value *Idx = B.CreateAdd(FirstSlot, cst(U2 * NG * Cols));
              llvm::Value *Valid =
                  Ragged ? B.CreateICmpULT(B.CreateAdd(First, cst(U2 * NG)),
                                           cst(Split))
                         : nullptr;
              if (Valid)
                Idx = B.CreateSelect(Valid, Idx, Home);
              Idxs.push_back(Idx);
              Valids.push_back(Valid);
              if (Ticket)
                continue;
              std::vector<llvm::Value *> V = takeScratch(Scratch, Idx);
              if (Valid)
                for (size_t I = 0; I < V.size(); ++I)
                  V[I] = B.CreateSelect(Valid, V[I], Idents[I]);
              Vals.push_back(std::move(V));
            }
            if (Ticket)
              Vals = awaitSlots(Published, Idxs, Valids);
            std::vector<llvm::Value *> Acc = loadAccs();
            for (const auto &V : Vals)
              Acc = combine(Acc, V);
            storeAccs(Acc);
          };
          if (Batches > 1)
            emitFor(cst(Batches), Batch);
          else
            Batch(cst(0));
          Sh.store(B, B.CreateAdd(B.CreateMul(G, cst(Pitch)), Col), loadAccs());
        });
      }
      emitBarrier(B);
      ForColumns([&](llvm::Value *Col) {
        std::vector<llvm::Value *> Acc = Idents;
        for (int64_t G = 0; G < NG; ++G)
          Acc = combine(Acc, Sh.load(B, B.CreateAdd(cst(G * Pitch), Col)));
        Store(Col, Acc);
      });
      emitIf(B.CreateICmpEQ(Th, cst(0)),
             [&] { B.CreateStore(B.getInt32(0), CPtr, /*isVolatile=*/true); });
    });
  }
  B.CreateRetVoid();
  return Info;
}

} // namespace reduction
} // namespace codegen
} // namespace idxmap
