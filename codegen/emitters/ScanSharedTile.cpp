//===- ScanSharedTile.cpp - Chained row tiles read through shared memory --===//
//
// Part of idxmap. A chained row scan holds its tile's items in registers
// (ScanTiles.cpp): 64 f32 a thread take 127 registers, two blocks of 256
// per SM, and while a block waits on its look-back its seven other warps
// wait at its barrier; on the H200 the 1-D cumsum of f32[2^28] spends
// 56 % of its warps' time there (bench/RESULTS.md, eighteenth session).
// With ScanPlan::StageBytes the tile's parameter reads are copied into
// shared memory (cp.async, each thread its own items) and read from there
// a run at a time, twice: for the tile's aggregate before the look-back,
// then to scan and store after it. A thread holds one run in registers,
// so the blocks resident per SM are bounded by shared memory instead.
//
//===----------------------------------------------------------------------===//
#include "ScanKernel.h"

#include "ElementwiseCodegen.h"
#include "GpuBuilder.h"
#include "KernelBuilder.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace idxmap {
namespace codegen {

StagedLoader::StagedLoader(llvm::IRBuilder<> &B, llvm::Function &K,
                           const ScanInfo &S,
                           const std::vector<int64_t> &Widths, int64_t Runs,
                           int64_t Vector, int64_t Threads, llvm::Type *IndexTy)
    : B(B), K(K), IndexTy(IndexTy), Vector(Vector), Threads(Threads) {
  for (const HloInstruction *P : S.streamedParameters()) {
    const size_t N = size_t(P->parameterNumber());
    Layout[P] = {N < Widths.size() ? Widths[N] : 1, PerThread};
    PerThread += Runs * Vector * byteWidth(P->shape().Type);
  }
  // Dynamic shared memory: the launch passes stageBytes().
  llvm::Module &M = *K.getParent();
  auto *Ty = llvm::ArrayType::get(B.getInt8Ty(), 0);
  Stage = new llvm::GlobalVariable(
      M, Ty, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage, nullptr,
      K.getName() + "_stage", nullptr, llvm::GlobalValue::NotThreadLocal,
      SharedAddrSpace);
  Stage->setAlignment(llvm::Align(16));
}

void StagedLoader::begin(Mode M, llvm::Value *Thread) {
  Now = M;
  Th = Thread;
  Run = Lane = 0;
  Vectors.clear();
}

llvm::Value *StagedLoader::slot(const HloInstruction &P) {
  const auto [W, Base] = Layout.at(&P);
  const int64_t Bytes = W * byteWidth(P.shape().Type);
  const int64_t Slot = Run * (Vector / W) + Lane / W;
  llvm::Value *Off = B.CreateAdd(
      llvm::ConstantInt::get(IndexTy, Threads * (Base + Slot * Bytes)),
      B.CreateMul(Th, llvm::ConstantInt::get(IndexTy, Bytes)));
  if (StageOffset)
    Off = B.CreateAdd(StageOffset, Off);
  return B.CreateInBoundsGEP(B.getInt8Ty(), Stage, Off);
}

std::function<llvm::Value *(const HloInstruction &,
                            llvm::ArrayRef<llvm::Value *>)>
StagedLoader::loader() {
  return [this](const HloInstruction &P,
                llvm::ArrayRef<llvm::Value *> Index) -> llvm::Value * {
    const PrimitiveType PT = P.shape().Type;
    llvm::Type *ST = storageType(B.getContext(), PT);
    auto It = Layout.find(&P);
    if (It == Layout.end()) {
      // Not streamed (a bias, a scalar): read from the caches as it is.
      if (Now == Mode::Issue)
        return loadConvert(B, B.CreateFreeze(llvm::PoisonValue::get(ST)), PT);
      return loadParameterElement(B, K, P, Index, IndexTy,
                                  OffsetTermOrder::Logical);
    }
    const int64_t W = It->second.first;
    llvm::Value *&Vec = Vectors[{&P, Run * (Vector / W) + Lane / W}];
    if (Vec &&
        llvm::cast<llvm::Instruction>(Vec)->getParent() != B.GetInsertBlock())
      Vec = nullptr;
    if (Now == Mode::Issue) {
      if (!Vec) {
        // The bytes the plain loader would load: the W-aligned vector
        // holding this lane's element, or the element.
        llvm::Value *Src = elementPointer(
            B, ST, K.getArg(P.parameterNumber()), P.shape(), Index, IndexTy,
            OffsetTermOrder::Logical, W > 1 ? Lane % W : 0);
        const int64_t Bytes = W * byteWidth(PT);
        const llvm::Intrinsic::ID Copy =
            Bytes == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16
            : Bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8
                         : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4;
        Vec = B.CreateIntrinsic(Copy, {}, {slot(P), Src});
      }
      // Nothing reads the value: a frozen poison, so that no use of it
      // (a select, a division) is undefined behaviour.
      return loadConvert(B, B.CreateFreeze(llvm::PoisonValue::get(ST)), PT);
    }
    if (!Vec) {
      llvm::Type *VT = W > 1 ? llvm::FixedVectorType::get(ST, unsigned(W)) : ST;
      Vec = B.CreateAlignedLoad(VT, slot(P),
                                llvm::Align(uint64_t(W * byteWidth(PT))));
    }
    llvm::Value *E =
        W > 1 ? B.CreateExtractElement(Vec, uint64_t(Lane % W)) : Vec;
    return loadConvert(B, E, PT);
  };
}

llvm::Value *ScanKernel::stagedRun(TileState &St, int64_t Run,
                                   llvm::Value *Before) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector;
  FusedElementEmitter FS(B, Ctx, C, Staged->loader(), Math, IndexTy);
  std::vector<llvm::Value *> Sc(size_t(V), nullptr);
  for (int64_t Vv = 0; Vv < V; ++Vv) {
    Staged->Run = Run;
    Staged->Lane = Vv;
    FS.clearCache();
    llvm::Value *X = inputAt(FS, itemIndex(St, Run, Vv));
    Sc[size_t(Vv)] = Vv ? combine(Sc[size_t(Vv - 1)], X) : X;
  }
  llvm::Value *Incl = warpScan(St.Lane, Sc.back());
  llvm::Value *Total = scanShuffle(B, Incl, Shuffle::Index, 31);
  if (!Before)
    return Total;
  llvm::Value *Excl =
      B.CreateSelect(B.CreateICmpEQ(St.Lane, idx(0)), identity(),
                     scanShuffle(B, Incl, Shuffle::Up, 1));
  llvm::Value *Pre = combine(Before, Excl);
  std::vector<std::vector<llvm::Value *>> Idx;
  std::vector<llvm::Value *> Ys;
  for (int64_t Vv = 0; Vv < V; ++Vv) {
    Idx.push_back(itemIndex(St, Run, Vv));
    Ys.push_back(combine(Pre, Sc[size_t(Vv)]));
  }
  FE->clearCache();
  Lanes->clear();
  storeRun(Idx, Ys);
  return Total;
}

void ScanKernel::stagedCarry(TileState &St) {
  llvm::IRBuilder<> &B = *BPtr;
  Staged->begin(StagedLoader::Mode::Read, St.Th);
  if (S.variadic()) {
    // A variadic window's computation need not commute: run by run, in
    // the tile's order.
    St.Carry = identity();
    for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
      St.Carry = combine(St.Carry, stagedRun(St, Kr, nullptr));
    return;
  }
  // add, max, min and multiply commute: each thread folds its items, the
  // warp its lanes' folds (five shuffles instead of a scan per run).
  FusedElementEmitter FS(B, Ctx, C, Staged->loader(), Math, IndexTy);
  llvm::Value *Acc = nullptr;
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    for (int64_t Vv = 0; Vv < SP.Vector; ++Vv) {
      Staged->Run = Kr;
      Staged->Lane = Vv;
      FS.clearCache();
      llvm::Value *X = inputAt(FS, itemIndex(St, Kr, Vv));
      Acc = Acc ? combine(Acc, X) : X;
    }
  for (unsigned Off = 16; Off >= 1; Off /= 2)
    Acc = combine(Acc, scanShuffle(B, Acc, Shuffle::Down, Off));
  St.Carry = scanShuffle(B, Acc, Shuffle::Index, 0);
}

void ScanKernel::issueStagedTile(llvm::Value *Th, llvm::Value *Tile) {
  TileState St = beginTile(Th, Tile);
  Staged->begin(StagedLoader::Mode::Issue, Th);
  FusedElementEmitter FS(*BPtr, Ctx, C, Staged->loader(), Math, IndexTy);
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    for (int64_t Vv = 0; Vv < SP.Vector; ++Vv) {
      Staged->Run = Kr;
      Staged->Lane = Vv;
      FS.clearCache();
      inputAt(FS, itemIndex(St, Kr, Vv));
    }
}

void ScanKernel::scanStagedTile(llvm::Value *Th, llvm::Value *Tile) {
  TileState St = beginTile(Th, Tile);
  stagedCarry(St);
  foldWarps(St);
  llvm::Value *Before = combine(tilePrefix(St), St.WarpPre);
  // Second read: each run scanned after everything before it, stored.
  Staged->begin(StagedLoader::Mode::Read, Th);
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    Before = combine(Before, stagedRun(St, Kr, Before));
  clearPredecessor(Th, Tile, St.Seg);
}

void ScanKernel::emitSharedTile(llvm::Value *Th, llvm::Value *Tile) {
  // The copies, all in flight at once; a thread reads only what it
  // copied, so waiting for its own copies is enough (no barrier).
  issueStagedTile(Th, Tile);
  BPtr->CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
  BPtr->CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
  scanStagedTile(Th, Tile);
}

std::pair<llvm::Value *, llvm::Value *>
ScanKernel::aggregateStaged(llvm::Value *Th, llvm::Value *Tile,
                            llvm::Value *Offset) {
  llvm::IRBuilder<> &B = *BPtr;
  TileState St = beginTile(Th, Tile);
  Staged->StageOffset = Offset;
  stagedCarry(St);
  foldWarps(St);
  llvm::Value *Seg0 = B.CreateICmpEQ(St.Seg, idx(0));
  emitIf(B, B.CreateICmpEQ(Th, idx(0)), [&] {
    emitIf(B, Seg0,
           [&] { publish(St.Tile, DescPrefix, combine(St.Init, St.Agg)); });
    emitIf(B, B.CreateAnd(B.CreateNot(Seg0), B.CreateNot(St.LastSeg)),
           [&] { publish(St.Tile, DescAggregate, St.Agg); });
  });
  return {St.Agg, St.WarpPre};
}

llvm::Value *ScanKernel::ringPrefix(TileState &St, llvm::Value *PrevTile,
                                    llvm::Value *PrevIncl) {
  llvm::IRBuilder<> &B = *BPtr;
  SharedSlots Pre(M, {identity()}, 1, Info.Name + ".prefix", 16);
  llvm::Value *Seg0 = B.CreateICmpEQ(St.Seg, idx(0));
  llvm::Value *Lane0 = B.CreateICmpEQ(St.Lane, idx(0));
  emitIf(B, B.CreateAnd(B.CreateICmpEQ(St.Warp, idx(0)), B.CreateNot(Seg0)),
         [&] {
           llvm::Value *LineFirst = B.CreateSub(St.Tile, St.Seg);
           llvm::Value *Ex =
               lookBackSpan(St.Lane, LineFirst, St.Seg,
                            B.CreateSub(PrevTile, LineFirst), PrevIncl);
           emitIf(B, Lane0, [&] {
             emitIf(B, B.CreateNot(St.LastSeg), [&] {
               publish(St.Tile, DescPrefix, combine(Ex, St.Agg));
             });
             Pre.store(B, idx(0), {Ex});
           });
         });
  emitBarrier(B);
  return B.CreateSelect(Seg0, St.Init, Pre.load(B, 0, idx(0)));
}

llvm::Value *ScanKernel::lookBackSpan(llvm::Value *Lane,
                                      llvm::Value *LineFirst, llvm::Value *Seg,
                                      llvm::Value *PrevSeg,
                                      llvm::Value *PrevIncl) {
  // As lookBack, but every lane polls LookBackSpan descriptors at once,
  // window j's lane l segment Base - 32 j - l; the windows are then taken
  // in order as lookBack takes its one. The block's previous tile needs no
  // poll, and nothing before it is read.
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Constant *Id = identity();
  const int64_t Span = SP.LookBackSpan;
  llvm::Value *First = B.CreateSub(Seg, idx(1));
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "lookback", K);
  auto *Done = llvm::BasicBlock::Create(LC, "lookback.done", K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *Base = B.CreatePHI(IndexTy, 2 * Span + 1, "lb.base");
  llvm::PHINode *Excl = B.CreatePHI(Id->getType(), 2 * Span + 1, "lb.excl");
  Base->addIncoming(First, Pre);
  Excl->addIncoming(Id, Pre);
  std::vector<std::pair<llvm::Value *, llvm::Value *>> Polls;
  for (int64_t J = 0; J < Span; ++J) {
    llvm::Value *At = B.CreateSub(B.CreateSub(Base, idx(32 * J)), Lane);
    llvm::Value *AtPrev = B.CreateICmpEQ(At, PrevSeg);
    llvm::Value *Known =
        B.CreateOr(B.CreateICmpSLE(At, PrevSeg), B.CreateICmpSLT(At, idx(0)));
    auto [St, Val] =
        poll(B.CreateAdd(LineFirst, B.CreateSelect(Known, idx(0), At)));
    St = B.CreateSelect(Known, B.getInt32(DescPrefix), St);
    Val = B.CreateSelect(AtPrev, PrevIncl, B.CreateSelect(Known, Id, Val));
    Polls.push_back({St, Val});
  }
  auto Ballot = [&](llvm::Value *Pred) {
    return B.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_ballot_sync, {},
                             {B.getInt32(0xffffffffu), Pred});
  };
  llvm::PHINode *R = nullptr;
  llvm::Value *Acc = Excl;
  for (int64_t J = 0; J < Span; ++J) {
    auto [St, Val] = Polls[size_t(J)];
    llvm::Value *PMask = Ballot(B.CreateICmpEQ(St, B.getInt32(DescPrefix)));
    llvm::Value *XMask = Ballot(B.CreateICmpEQ(St, B.getInt32(DescInvalid)));
    llvm::Value *Found = B.CreateICmpNE(PMask, B.getInt32(0));
    llvm::Value *Last = B.CreateSelect(
        Found,
        B.CreateIntrinsic(llvm::Intrinsic::cttz, {B.getInt32Ty()},
                          {PMask, B.getTrue()}),
        B.getInt32(31));
    llvm::Value *Upto = B.CreateTrunc(
        B.CreateSub(B.CreateShl(B.getInt64(2),
                                B.CreateZExt(Last, B.getInt64Ty())),
                    B.getInt64(1)),
        B.getInt32Ty());
    llvm::Value *Waiting =
        B.CreateICmpNE(B.CreateAnd(XMask, Upto), B.getInt32(0));
    // A descriptor not yet published (or cleared since): start again.
    auto *Sum = llvm::BasicBlock::Create(LC, "lookback.sum", K);
    Base->addIncoming(First, B.GetInsertBlock());
    Excl->addIncoming(Id, B.GetInsertBlock());
    B.CreateCondBr(Waiting, Loop, Sum);
    B.SetInsertPoint(Sum);
    llvm::Value *LastIdx = B.CreateZExtOrTrunc(Last, IndexTy);
    llvm::Value *V = Val;
    for (unsigned Off = 1; Off < 32; Off *= 2) {
      llvm::Value *Other = scanShuffle(B, V, Shuffle::Down, Off);
      llvm::Value *In = B.CreateICmpULE(B.CreateAdd(Lane, idx(Off)), LastIdx);
      V = B.CreateSelect(In, combine(Other, V), V);
    }
    Acc = combine(scanShuffle(B, V, Shuffle::Index, 0), Acc);
    if (!R) {
      llvm::IRBuilderBase::InsertPointGuard G(B);
      B.SetInsertPoint(Done);
      R = B.CreatePHI(Id->getType(), unsigned(Span), "lb.prefix");
    }
    R->addIncoming(Acc, B.GetInsertBlock());
    if (J + 1 < Span) {
      auto *Next = llvm::BasicBlock::Create(LC, "lookback.window", K);
      B.CreateCondBr(Found, Done, Next);
      B.SetInsertPoint(Next);
    } else {
      Base->addIncoming(B.CreateSub(Base, idx(32 * Span)), B.GetInsertBlock());
      Excl->addIncoming(Acc, B.GetInsertBlock());
      B.CreateCondBr(Found, Done, Loop);
    }
  }
  B.SetInsertPoint(Done);
  return R;
}

void ScanKernel::emitStagedLoop() {
  // Iteration i of a block scans the tile of its ticket i in stage
  // i mod S. It first issues the copies of ticket i + S - 1 into stage
  // (i - 1) mod S, whose tile this thread finished reading in iteration
  // i - 1 (a thread copies into and reads only its own slots), then waits
  // for ticket i + 1's copies and publishes that tile's aggregate, so
  // that a tile's aggregate is out a whole tile before its look-back.
  // The look-back stops at the block's previous tile, whose inclusive
  // prefix the block holds. Thread 0 takes ticket i + S during iteration
  // i and leaves it in slot i mod S. Tickets only grow, so a block's first
  // ticket past the tiles ends it, with no copies in flight.
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t T = P.Block[0], NS = SP.Stages, Tiles = SP.tiles();
  llvm::Constant *Id = identity();
  llvm::Value *Th =
      B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(T)), IndexTy);
  llvm::Value *Th0 = B.CreateICmpEQ(Th, idx(0));
  SharedSlots Tickets(M, {B.getInt32(0)}, uint64_t(NS), Info.Name + ".tickets",
                      4);
  auto TicketAt = [&](llvm::Value *Slot) {
    return B.CreateZExtOrTrunc(Tickets.load(B, 0, Slot), IndexTy);
  };
  auto OffsetOf = [&](llvm::Value *Slot) {
    return B.CreateMul(Slot, idx(Staged->stageBytes()));
  };
  auto IssueInto = [&](llvm::Value *Slot, llvm::Value *Tile) {
    emitIf(B, B.CreateICmpULT(Tile, idx(Tiles)), [&] {
      Staged->StageOffset = OffsetOf(Slot);
      issueStagedTile(Th, Tile);
    });
    B.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
  };
  // The copies landed through ticket i + 1: all groups but the newest
  // S - 2.
  auto WaitNext = [&] {
    B.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                      {B.getInt32(int32_t(NS - 2))});
  };
  // Tile Tile's aggregate and warps' prefixes (identities past the tiles).
  auto Aggregate = [&](llvm::Value *Slot, llvm::Value *Tile) {
    llvm::BasicBlock *From = B.GetInsertBlock();
    auto *Go = llvm::BasicBlock::Create(LC, "ring.agg", K);
    auto *Join = llvm::BasicBlock::Create(LC, "ring.agg.done", K);
    B.CreateCondBr(B.CreateICmpULT(Tile, idx(Tiles)), Go, Join);
    B.SetInsertPoint(Go);
    auto [Agg, WarpPre] = aggregateStaged(Th, Tile, OffsetOf(Slot));
    llvm::BasicBlock *GoEnd = B.GetInsertBlock();
    B.CreateBr(Join);
    B.SetInsertPoint(Join);
    llvm::PHINode *A = B.CreatePHI(Id->getType(), 2);
    llvm::PHINode *W = B.CreatePHI(Id->getType(), 2);
    A->addIncoming(Agg, GoEnd);
    A->addIncoming(Id, From);
    W->addIncoming(WarpPre, GoEnd);
    W->addIncoming(Id, From);
    return std::pair<llvm::Value *, llvm::Value *>{A, W};
  };
  // One ticket at a time, each waited for: the blocks' first tickets
  // interleave as their later ones do. A block holding consecutive tickets
  // would chain the blocks: tile k's look-back would wait on the block
  // that holds tile k - 1 until it has scanned every tile before that.
  for (int64_t I = 0; I < NS; ++I) {
    emitIf(B, Th0, [&] { Tickets.store(B, idx(I), {takeTicket()}); });
    emitBarrier(B);
    if (I + 1 < NS)
      IssueInto(idx(I), TicketAt(idx(I)));
  }
  // Ticket 0's copies (all groups but the newest S - 2) and aggregate.
  B.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                    {B.getInt32(int32_t(NS - 2))});
  auto [Agg0, WarpPre0] = Aggregate(idx(0), TicketAt(idx(0)));
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "ring", K);
  auto *Body = llvm::BasicBlock::Create(LC, "ring.tile", K);
  auto *Leave = llvm::BasicBlock::Create(LC, "tiles.done", K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *Slot = B.CreatePHI(IndexTy, 2, "ring.slot");
  llvm::PHINode *Agg = B.CreatePHI(Id->getType(), 2, "ring.agg");
  llvm::PHINode *WarpPre = B.CreatePHI(Id->getType(), 2, "ring.warps");
  llvm::PHINode *PrevTile = B.CreatePHI(IndexTy, 2, "ring.prev");
  llvm::PHINode *PrevIncl = B.CreatePHI(Id->getType(), 2, "ring.prev.incl");
  Slot->addIncoming(idx(0), Pre);
  Agg->addIncoming(Agg0, Pre);
  WarpPre->addIncoming(WarpPre0, Pre);
  PrevTile->addIncoming(idx(-1), Pre);
  PrevIncl->addIncoming(Id, Pre);
  llvm::Value *Tile = TicketAt(Slot);
  B.CreateCondBr(B.CreateICmpULT(Tile, idx(Tiles)), Body, Leave);
  B.SetInsertPoint(Body);
  llvm::Value *Prev = B.CreateSelect(B.CreateICmpEQ(Slot, idx(0)),
                                     idx(NS - 1), B.CreateSub(Slot, idx(1)));
  IssueInto(Prev, TicketAt(Prev));
  // Thread 0's next ticket: taken now, stored once every thread has read
  // this slot's (after the tile's barriers).
  llvm::Value *NextTicket = nullptr;
  {
    llvm::BasicBlock *From = B.GetInsertBlock();
    auto *Take = llvm::BasicBlock::Create(LC, "ring.take", K);
    auto *Taken = llvm::BasicBlock::Create(LC, "ring.taken", K);
    B.CreateCondBr(Th0, Take, Taken);
    B.SetInsertPoint(Take);
    llvm::Value *Tk = takeTicket();
    B.CreateBr(Taken);
    B.SetInsertPoint(Taken);
    llvm::PHINode *Phi = B.CreatePHI(B.getInt32Ty(), 2);
    Phi->addIncoming(Tk, Take);
    Phi->addIncoming(B.getInt32(0), From);
    NextTicket = Phi;
  }
  llvm::Value *Next = B.CreateAdd(Slot, idx(1));
  Next = B.CreateSelect(B.CreateICmpEQ(Next, idx(NS)), idx(0), Next);
  WaitNext();
  auto [NextAgg, NextWarpPre] = Aggregate(Next, TicketAt(Next));
  // This tile: its prefix, then its second read, scanned and stored.
  TileState St = beginTile(Th, Tile);
  St.Agg = Agg;
  St.WarpPre = WarpPre;
  llvm::Value *Prefix = ringPrefix(St, PrevTile, PrevIncl);
  llvm::Value *Before = combine(Prefix, St.WarpPre);
  Staged->StageOffset = OffsetOf(Slot);
  Staged->begin(StagedLoader::Mode::Read, Th);
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    Before = combine(Before, stagedRun(St, Kr, Before));
  llvm::Value *Incl = combine(Prefix, St.Agg);
  clearPredecessor(Th, Tile, St.Seg);
  emitIf(B, Th0, [&] { Tickets.store(B, Slot, {NextTicket}); });
  emitBarrier(B);
  llvm::BasicBlock *End = B.GetInsertBlock();
  Slot->addIncoming(Next, End);
  Agg->addIncoming(NextAgg, End);
  WarpPre->addIncoming(NextWarpPre, End);
  PrevTile->addIncoming(Tile, End);
  PrevIncl->addIncoming(Incl, End);
  B.CreateBr(Loop);
  B.SetInsertPoint(Leave);
  leaveTiles(Th);
}

} // namespace codegen
} // namespace idxmap
