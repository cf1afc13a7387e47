//===- ScanTiles.cpp - Tiled scans with decoupled look-back ---------------===//
//
// Part of idxmap. The scan kernel of ScanMode::BlockTiles (KernelPlan.h):
// a block scans a tile of consecutive elements of a row held in registers
// (a serial scan of each thread's vectors, a shfl.sync.up scan of the
// lanes' totals, the warps' totals through shared memory), and, when a
// row spans several tiles, takes its tile from a counter in the workspace
// and chains it to the tiles before by decoupled look-back (Merrill and
// Garland; CUB's single-pass scan).
//
// The look-back's descriptors start and end zeroed (the workspace
// contract, docs/SIDECAR.md): when a tile is done (its own inclusive
// prefix published, or, for a line's last tile, which publishes nothing,
// its look-back over), it waits for its predecessor's inclusive prefix
// (the predecessor's last write) and clears that descriptor. A reader only
// uses the descriptors up to the nearest inclusive prefix; one that finds
// a cleared (or not yet published) descriptor there starts its look-back
// again from its predecessor, which by then has published (or will
// publish) its prefix. Split descriptors (8-byte values) clear their
// statuses that way and their values in the last block to leave, which
// also resets the two counters.
//
//===----------------------------------------------------------------------===//
#include "ScanKernel.h"

#include "Emitters.h"
#include "ExprCodegen.h"
#include "GpuBuilder.h"
#include "KernelBuilder.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace idxmap {
namespace codegen {

namespace {

/// Whether \p V is the i1 constant \p B (a check that needs no test).
bool isConstant(llvm::Value *V, bool B) {
  auto *C = llvm::dyn_cast<llvm::ConstantInt>(V);
  return C && C->isOne() == B;
}

/// \p V's bits as an integer of its width.
llvm::Value *bitsOf(llvm::IRBuilderBase &B, llvm::Value *V) {
  llvm::Type *T = V->getType();
  return B.CreateBitCast(
      V, B.getIntNTy(unsigned(T->getPrimitiveSizeInBits().getFixedValue())));
}

llvm::Value *fromBits(llvm::IRBuilderBase &B, llvm::Value *I, llvm::Type *T) {
  const unsigned Bits = unsigned(T->getPrimitiveSizeInBits().getFixedValue());
  return B.CreateBitCast(B.CreateTrunc(I, B.getIntNTy(Bits)), T);
}

} // namespace

void ScanKernel::publish(llvm::Value *Desc, unsigned Status, llvm::Value *V) {
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Value *Base =
      B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Workspace, 16);
  if (SP.PackedDescriptors) {
    llvm::Value *Word =
        B.CreateOr(B.CreateShl(B.CreateZExt(bitsOf(B, V), B.getInt64Ty()), 32),
                   B.getInt64(Status));
    asmCall(B, B.getVoidTy(),
            {B.CreateInBoundsGEP(B.getInt64Ty(), Base, Desc), Word},
            "st.relaxed.gpu.global.b64 [$0], $1;", "l,l,~{memory}");
    return;
  }
  // The value, then the status with release semantics: a reader that sees
  // the status sees the value. The aggregate and the inclusive prefix have
  // their own slots (a reader that saw the aggregate's status must not
  // load the prefix written after it).
  llvm::Value *Vals = valueSlots(Status == DescPrefix);
  asmCall(B, B.getVoidTy(),
          {B.CreateInBoundsGEP(B.getInt64Ty(), Vals, Desc),
           B.CreateZExt(bitsOf(B, V), B.getInt64Ty())},
          "st.relaxed.gpu.global.b64 [$0], $1;", "l,l,~{memory}");
  asmCall(B, B.getVoidTy(),
          {B.CreateInBoundsGEP(B.getInt32Ty(), Base, Desc), B.getInt32(Status)},
          "st.release.gpu.global.b32 [$0], $1;", "l,r,~{memory}");
}

llvm::Value *ScanKernel::valueSlots(bool Prefixes) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t Statuses = (4 * SP.descriptors() + 15) / 16 * 16;
  return B.CreateConstInBoundsGEP1_64(
      B.getInt8Ty(), Workspace,
      uint64_t(16 + Statuses + (Prefixes ? 8 * SP.descriptors() : 0)));
}

std::pair<llvm::Value *, llvm::Value *> ScanKernel::poll(llvm::Value *Desc) {
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Type *VT = identity()->getType();
  llvm::Value *Base =
      B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Workspace, 16);
  if (SP.PackedDescriptors) {
    llvm::Value *Word = asmCall(
        B, B.getInt64Ty(), {B.CreateInBoundsGEP(B.getInt64Ty(), Base, Desc)},
        "ld.relaxed.gpu.global.b64 $0, [$1];", "=l,l,~{memory}");
    return {B.CreateTrunc(Word, B.getInt32Ty()),
            fromBits(B, B.CreateLShr(Word, 32), VT)};
  }
  llvm::Value *St = asmCall(
      B, B.getInt32Ty(), {B.CreateInBoundsGEP(B.getInt32Ty(), Base, Desc)},
      "ld.acquire.gpu.global.b32 $0, [$1];", "=r,l,~{memory}");
  llvm::Value *Vals = B.CreateSelect(B.CreateICmpEQ(St, B.getInt32(DescPrefix)),
                                     valueSlots(true), valueSlots(false));
  llvm::Value *V = asmCall(
      B, B.getInt64Ty(), {B.CreateInBoundsGEP(B.getInt64Ty(), Vals, Desc)},
      "ld.relaxed.gpu.global.b64 $0, [$1];", "=l,l,~{memory}");
  return {St, fromBits(B, V, VT)};
}

void ScanKernel::clearDescriptor(llvm::Value *Desc) {
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Value *Base =
      B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Workspace, 16);
  if (SP.PackedDescriptors)
    asmCall(B, B.getVoidTy(),
            {B.CreateInBoundsGEP(B.getInt64Ty(), Base, Desc), B.getInt64(0)},
            "st.relaxed.gpu.global.b64 [$0], $1;", "l,l,~{memory}");
  else
    asmCall(B, B.getVoidTy(),
            {B.CreateInBoundsGEP(B.getInt32Ty(), Base, Desc), B.getInt32(0)},
            "st.release.gpu.global.b32 [$0], $1;", "l,r,~{memory}");
}

llvm::Value *ScanKernel::lookBack(llvm::Value *Lane, llvm::Value *LineFirst,
                                  llvm::Value *Seg) {
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Constant *Id = identity();
  llvm::Value *First = B.CreateSub(Seg, idx(1));
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "lookback", K);
  auto *Sum = llvm::BasicBlock::Create(LC, "lookback.sum", K);
  auto *Done = llvm::BasicBlock::Create(LC, "lookback.done", K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  // Lane l reads the descriptor of segment Base - l (when there is one;
  // lanes before the line's start read as an inclusive identity).
  llvm::PHINode *Base = B.CreatePHI(IndexTy, 3, "lb.base");
  llvm::PHINode *Excl = B.CreatePHI(Id->getType(), 3, "lb.excl");
  Base->addIncoming(First, Pre);
  Excl->addIncoming(Id, Pre);
  llvm::Value *InLine = B.CreateICmpSGE(Base, Lane);
  llvm::Value *Pos = B.CreateSelect(InLine, B.CreateSub(Base, Lane), idx(0));
  auto [St, Val] = poll(B.CreateAdd(LineFirst, Pos));
  St = B.CreateSelect(InLine, St, B.getInt32(DescPrefix));
  Val = B.CreateSelect(InLine, Val, Id);
  auto Ballot = [&](llvm::Value *Pred) {
    return B.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_ballot_sync, {},
                             {B.getInt32(0xffffffffu), Pred});
  };
  llvm::Value *PMask = Ballot(B.CreateICmpEQ(St, B.getInt32(DescPrefix)));
  llvm::Value *XMask = Ballot(B.CreateICmpEQ(St, B.getInt32(DescInvalid)));
  llvm::Value *Found = B.CreateICmpNE(PMask, B.getInt32(0));
  // The lanes that count: up to the nearest inclusive prefix (all 32 when
  // the window has none).
  llvm::Value *Last =
      B.CreateSelect(Found,
                     B.CreateIntrinsic(llvm::Intrinsic::cttz, {B.getInt32Ty()},
                                       {PMask, B.getTrue()}),
                     B.getInt32(31));
  llvm::Value *Upto =
      B.CreateTrunc(B.CreateSub(B.CreateShl(B.getInt64(2),
                                            B.CreateZExt(Last, B.getInt64Ty())),
                                B.getInt64(1)),
                    B.getInt32Ty());
  llvm::Value *Waiting =
      B.CreateICmpNE(B.CreateAnd(XMask, Upto), B.getInt32(0));
  Base->addIncoming(First, B.GetInsertBlock());
  Excl->addIncoming(Id, B.GetInsertBlock());
  B.CreateCondBr(Waiting, Loop, Sum);

  // The window's lanes 0..Last in order (a higher lane is an earlier tile):
  // a tree of shuffles down, each lane combining only lanes up to Last.
  B.SetInsertPoint(Sum);
  llvm::Value *LastIdx = B.CreateZExtOrTrunc(Last, IndexTy);
  llvm::Value *V = Val;
  for (unsigned Off = 1; Off < 32; Off *= 2) {
    llvm::Value *Other = scanShuffle(B, V, Shuffle::Down, Off);
    llvm::Value *In = B.CreateICmpULE(B.CreateAdd(Lane, idx(Off)), LastIdx);
    V = B.CreateSelect(In, combine(Other, V), V);
  }
  llvm::Value *Next = combine(scanShuffle(B, V, Shuffle::Index, 0), Excl);
  llvm::BasicBlock *SumEnd = B.GetInsertBlock();
  Base->addIncoming(B.CreateSub(Base, idx(32)), SumEnd);
  Excl->addIncoming(Next, SumEnd);
  B.CreateCondBr(Found, Done, Loop);
  B.SetInsertPoint(Done);
  llvm::PHINode *R = B.CreatePHI(Id->getType(), 1, "lb.prefix");
  R->addIncoming(Next, SumEnd);
  return R;
}

llvm::Value *ScanKernel::segmentOf(llvm::Value *Tile) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t TPL = SP.TilesPerLine;
  if (TPL == 1)
    return idx(0);
  return SP.Mode == ScanMode::ColumnTiles ? B.CreateUDiv(Tile, idx(SP.Groups))
                                          : B.CreateURem(Tile, idx(TPL));
}

ScanKernel::TileState ScanKernel::beginTile(llvm::Value *Th,
                                            llvm::Value *Tile) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t TPL = SP.TilesPerLine;
  TileState St;
  St.Th = Th;
  St.Tile = Tile;
  St.Lane = B.CreateURem(Th, idx(32));
  St.Warp = B.CreateUDiv(Th, idx(32));
  St.Items = std::make_shared<ExprEmitter>(
      MapRanges.of(P.Main.Map), IndexTy, std::vector<llvm::Value *>{Th, Tile},
      std::vector<llvm::Value *>{idx(0), idx(0)});
  // The ids' part of the indices goes before the lane, which follows the
  // ids and dominates the whole tile: emitted once, not once per item.
  if (auto *At = llvm::dyn_cast<llvm::Instruction>(St.Lane))
    St.Items->setInvariantVariables({true, true}, {}, At);
  if (SP.Mode == ScanMode::SegmentedTiles) {
    // Every tile's items past its rows, or the last tile's past the last
    // row, are guarded.
    St.Seg = idx(0);
    St.LastSeg = B.getTrue();
    if (SP.TileLength != P.Block[0] * SP.Runs * SP.Vector)
      St.Guard = B.getTrue();
    else if (SP.Groups * SP.LinesPerTile != SP.Lines)
      St.Guard = B.CreateICmpEQ(Tile, idx(SP.Groups - 1));
    return St;
  }
  const bool Columns = SP.Mode == ScanMode::ColumnTiles;
  St.Seg = segmentOf(Tile);
  St.LastSeg = B.CreateICmpEQ(St.Seg, idx(TPL - 1));
  if (SP.raggedLines())
    St.Guard = St.LastSeg;
  // Row tiles guard only a ragged line's last tile, so a guarded item's
  // segment is the last: its position is known but for the warp and lane.
  // A shifted last tile (ScanPlan::LastTileShift) tests offsets in the
  // tile instead: which items are its own.
  if (St.Guard && SP.Mode == ScanMode::BlockTiles) {
    const int64_t Start = SP.LastTileShift ? 0 : (TPL - 1) * SP.TileLength;
    RangeEvaluator &RE = MapRanges.of(SP.TileOffset);
    const Expr Thread = SP.TileOffset.results()[0];
    St.PosBase = emitIndexExpr(B, Thread, {Th}, {idx(0), idx(0)}, RE, IndexTy);
    if (Start)
      St.PosBase = B.CreateAdd(idx(Start), St.PosBase);
    const Interval Span = RE.range(Thread);
    St.PosSpan = {Start + Span.Lo, Start + Span.Hi};
  }
  FE->clearCache();
  Lanes->clear();
  if (!Columns) {
    St.Init = lineInit(emitIndexExprs(B, MapRanges, P.Main.Map, {idx(0), Tile},
                                      {idx(0), idx(0)}, IndexTy));
    return St;
  }
  // A partial group of columns (the last of its outer index) guards too.
  const int64_t Inner = S.Dims[2],
                PerOuter = (Inner + SP.LinesPerTile - 1) / SP.LinesPerTile;
  if (PerOuter * SP.LinesPerTile != Inner) {
    llvm::Value *Cg =
        B.CreateURem(B.CreateURem(Tile, idx(SP.Groups)), idx(PerOuter));
    llvm::Value *Part = B.CreateICmpEQ(Cg, idx(PerOuter - 1));
    St.Guard = St.Guard ? B.CreateOr(St.Guard, Part) : Part;
  }
  const int64_t TX = SP.LinesPerTile / SP.Vector;
  St.Tx = B.CreateURem(Th, idx(TX));
  St.Ty = B.CreateUDiv(Th, idx(TX));
  return St;
}

llvm::Value *ScanKernel::itemValid(const TileState &St, int64_t Run,
                                   int64_t Elem) {
  llvm::IRBuilder<> &B = *BPtr;
  if (SP.Mode != ScanMode::BlockTiles)
    return emitDomainCheck(B, P.Main.Map, {St.Th, St.Tile},
                           {idx(Run), idx(Elem)}, IndexTy);
  assert(St.PosBase && "row tiles check items only under a guard");
  // The item's position: PosBase plus the item's part of the offset.
  // Items that no thread has, or that every thread has, need no test.
  const std::optional<int64_t> Item =
      SP.TileOffset.results()[1].evaluate({0}, {Run, Elem});
  assert(Item && "the item's offset is a constant");
  if (SP.LastTileShift) {
    // The shifted last tile's own items: offset PosBase + Item at least
    // the shift, tested as PosBase >= shift - Item.
    const int64_t Need = SP.LastTileShift - *Item;
    if (St.PosSpan.Lo >= Need)
      return B.getTrue();
    if (St.PosSpan.Hi < Need)
      return B.getFalse();
    return B.CreateICmpUGE(St.PosBase, idx(Need));
  }
  if (St.PosSpan.Lo + *Item >= SP.Length)
    return B.getFalse();
  if (St.PosSpan.Hi + *Item < SP.Length)
    return B.getTrue();
  // PosBase + Item < Length as PosBase < Length - Item (positive, as the
  // first test failed): one compare an item, no add for instcombine to
  // revisit.
  return B.CreateICmpULT(St.PosBase, idx(SP.Length - *Item));
}

bool ScanKernel::guardsWholeVectors() const {
  const int64_t V = SP.Vector;
  if (V == 1)
    return false;
  if (SP.Mode == ScanMode::BlockTiles)
    return SP.Length % V == 0;
  if (SP.Mode == ScanMode::SegmentedTiles)
    return SP.TileLength % V == 0 && (SP.Lines * SP.Length) % V == 0;
  return false;
}

std::vector<llvm::Value *> ScanKernel::itemIndex(const TileState &St,
                                                 int64_t Run, int64_t Elem,
                                                 bool Shifted) {
  // A shift moves the scanned coordinate back (forward for a reversed
  // scan, whose positions count from the line's end), emitted as one
  // expression so that it joins the item's constant after the thread's
  // hoisted part.
  ExprEmitter &E = *St.Items;
  E.setSymbol(0, idx(Run));
  E.setSymbol(1, idx(Elem));
  std::vector<llvm::Value *> Out;
  for (size_t D = 0; D < P.Main.Map.numResults(); ++D) {
    Expr R = P.Main.Map.results()[D];
    if (Shifted && int64_t(D) == S.Dim)
      R = S.Reverse ? R + SP.LastTileShift : R - SP.LastTileShift;
    Out.push_back(E.emit(*BPtr, R));
  }
  return Out;
}

void ScanKernel::runOutputs(TileState &St, llvm::ArrayRef<llvm::Value *> Before,
                            int64_t Run, bool Shifted,
                            std::vector<std::vector<llvm::Value *>> &Idx,
                            std::vector<llvm::Value *> &Ys) {
  const int64_t V = SP.Vector;
  for (int64_t Vv = 0; Vv < V; ++Vv) {
    Idx.push_back(itemIndex(St, Run, Vv, Shifted));
    llvm::Value *Y = St.Local[size_t(Run * V + Vv)];
    Ys.push_back(Before[size_t(Vv)] ? combine(Before[size_t(Vv)], Y) : Y);
  }
}

bool ScanKernel::shiftKeepsVectors() const {
  // A shift of whole vectors keeps the full tile's aligned vectors, and
  // an item is the tile's own exactly when its vector's first item is.
  return SP.LastTileShift % SP.Vector == 0;
}

void ScanKernel::loadItems(TileState &St, bool Guarded) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector;
  llvm::Constant *Id = identity();
  FE->clearCache();
  Lanes->clear();
  LaneLoader Single(B, *K, C, {}, IndexTy);
  FusedElementEmitter FE1(B, Ctx, C, Single.loader(), Math, IndexTy);
  const bool Whole = Guarded && guardsWholeVectors();
  llvm::Value *VecOk = nullptr, *VecTh = nullptr, *VecRun = nullptr;
  std::vector<llvm::Value *> First;
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    for (int64_t Vv = 0; Vv < V; ++Vv) {
      // A run's vectors are its own (the loader keys them by lane).
      if (Vv == 0)
        Lanes->clear();
      llvm::Value *&Out = St.X[size_t(Kr * V + Vv)];
      if (!Guarded) {
        Lanes->Lane = Vv;
        Out = inputAt(*FE, itemIndex(St, Kr, Vv));
        continue;
      }
      if (SP.LastTileShift) {
        // Every read in the line, at the full tile's offsets moved back;
        // the previous tile's items take the identity.
        const bool Keep = shiftKeepsVectors();
        if (!Keep || Vv == 0)
          VecOk = itemValid(St, Kr, Vv);
        if (isConstant(VecOk, false)) {
          Out = Id;
          continue;
        }
        llvm::Value *X;
        if (Keep) {
          Lanes->Lane = Vv;
          X = inputAt(*FE, itemIndex(St, Kr, Vv, true));
        } else {
          FE1.clearCache();
          X = inputAt(FE1, itemIndex(St, Kr, Vv, true));
        }
        Out = isConstant(VecOk, true) ? X : B.CreateSelect(VecOk, X, Id);
        continue;
      }
      if (Whole) {
        // The vector, whole or not at all: a vector missing from the tile
        // reads the tile's first (aligned, always there) and takes the
        // identity.
        if (Vv == 0) {
          VecOk = itemValid(St, Kr, 0);
          VecTh = B.CreateSelect(VecOk, St.Th, idx(0));
          VecRun = B.CreateSelect(VecOk, idx(Kr), idx(0));
        }
        if (isConstant(VecOk, false)) {
          Out = Id;
          continue;
        }
        Lanes->Lane = Vv;
        Out = B.CreateSelect(
            VecOk,
            inputAt(*FE,
                    emitIndexExprs(B, MapRanges, P.Main.Map, {VecTh, St.Tile},
                                   {VecRun, idx(Vv)}, IndexTy)),
            Id);
        continue;
      }
      // An item past the line's end reads the tile's first element: the
      // item's own index (constant offsets from one base, which folds) with
      // each coordinate selected, rather than the map evaluated again at
      // selected inputs (about 20 instructions an item that instcombine
      // cannot fold; most of a 64-item tile's compile time).
      llvm::Value *Ok = itemValid(St, Kr, Vv);
      if (isConstant(Ok, false)) {
        Out = Id;
        continue;
      }
      if (First.empty())
        First = emitIndexExprs(B, MapRanges, P.Main.Map, {idx(0), St.Tile},
                               {idx(0), idx(0)}, IndexTy);
      std::vector<llvm::Value *> I = itemIndex(St, Kr, Vv);
      for (size_t D = 0; D < I.size(); ++D)
        I[D] = B.CreateSelect(Ok, I[D], First[D]);
      FE1.clearCache();
      Out = B.CreateSelect(Ok, inputAt(FE1, I), Id);
    }
  Lanes->Lane = 0;
}

void ScanKernel::loadTile(TileState &St) {
  // All of the thread's items, the vectors the plan proves; in a ragged
  // line's last tile, element by element, the items past the line's end
  // reading its first element and taking the identity.
  llvm::IRBuilder<> &B = *BPtr;
  St.X.assign(size_t(SP.Vector * SP.Runs), nullptr);
  if (!St.Guard) {
    loadItems(St, false);
    return;
  }
  std::vector<llvm::Value *> XF;
  auto [FullEnd, PartEnd] = onGuard(St, "tile", [&](bool Guarded) {
    loadItems(St, Guarded);
    if (!Guarded)
      XF = St.X;
  });
  for (size_t I = 0; I < St.X.size(); ++I) {
    llvm::PHINode *Phi = B.CreatePHI(identity()->getType(), 2);
    Phi->addIncoming(XF[I], FullEnd);
    Phi->addIncoming(St.X[I], PartEnd);
    St.X[I] = Phi;
  }
  FE->clearCache();
  Lanes->clear();
}

void ScanKernel::scanRuns(TileState &St) {
  // Each run: a serial scan of the thread's vector, a shuffle scan of the
  // lanes' totals, the carry of the warp's runs before.
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector;
  llvm::Constant *Id = identity();
  St.Local.assign(size_t(V * SP.Runs), nullptr);
  St.Carry = Id;
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr) {
    std::vector<llvm::Value *> Sc(static_cast<size_t>(V), nullptr);
    for (int64_t Vv = 0; Vv < V; ++Vv)
      Sc[size_t(Vv)] =
          Vv ? combine(Sc[size_t(Vv - 1)], St.X[size_t(Kr * V + Vv)])
             : St.X[size_t(Kr * V)];
    llvm::Value *Incl = warpScan(St.Lane, Sc.back());
    llvm::Value *Excl = B.CreateSelect(B.CreateICmpEQ(St.Lane, idx(0)), Id,
                                       scanShuffle(B, Incl, Shuffle::Up, 1));
    llvm::Value *Before = combine(St.Carry, Excl);
    for (int64_t Vv = 0; Vv < V; ++Vv)
      St.Local[size_t(Kr * V + Vv)] = combine(Before, Sc[size_t(Vv)]);
    St.Carry = combine(St.Carry, scanShuffle(B, Incl, Shuffle::Index, 31));
  }
}

void ScanKernel::foldWarps(TileState &St) {
  // The warps' totals through shared memory: each thread folds those of
  // the warps before its own, and all of them (the tile's aggregate).
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t Warps = P.Block[0] / 32;
  SharedSlots Totals(M, {identity()}, uint64_t(Warps), Info.Name + ".warps",
                     16);
  emitIf(B, B.CreateICmpEQ(St.Lane, idx(0)),
         [&] { Totals.store(B, St.Warp, {St.Carry}); });
  emitBarrier(B);
  St.WarpPre = warpsBefore(
      St.Warp, Warps, [&](int64_t W) { return Totals.load(B, 0, idx(W)); },
      &St.Agg);
}

llvm::Value *
ScanKernel::warpsBefore(llvm::Value *Warp, int64_t N,
                        const std::function<llvm::Value *(int64_t)> &Total,
                        llvm::Value **All) {
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Value *Before = identity();
  if (All)
    *All = nullptr;
  for (int64_t W = 0; W < N; ++W) {
    llvm::Value *Tw = Total(W);
    Before = B.CreateSelect(B.CreateICmpULT(idx(W), Warp), combine(Before, Tw),
                            Before);
    if (All)
      *All = *All ? combine(*All, Tw) : Tw;
  }
  return Before;
}

llvm::Value *ScanKernel::tilePrefix(TileState &St) {
  // The line's init, or the look-back's: warp 0 publishes the tile's
  // aggregate, looks back, publishes its inclusive prefix.
  if (!SP.lookBack())
    return St.Init;
  llvm::IRBuilder<> &B = *BPtr;
  SharedSlots Pre(M, {identity()}, 1, Info.Name + ".prefix", 16);
  llvm::Value *Seg0 = B.CreateICmpEQ(St.Seg, idx(0));
  llvm::Value *Lane0 = B.CreateICmpEQ(St.Lane, idx(0));
  emitIf(B, B.CreateICmpEQ(St.Warp, idx(0)), [&] {
    emitIf(B, B.CreateAnd(Seg0, Lane0),
           [&] { publish(St.Tile, DescPrefix, combine(St.Init, St.Agg)); });
    emitIf(B, B.CreateNot(Seg0), [&] {
      emitIf(B, B.CreateAnd(Lane0, B.CreateNot(St.LastSeg)),
             [&] { publish(St.Tile, DescAggregate, St.Agg); });
      llvm::Value *Ex = lookBack(St.Lane, B.CreateSub(St.Tile, St.Seg), St.Seg);
      emitIf(B, Lane0, [&] {
        emitIf(B, B.CreateNot(St.LastSeg),
               [&] { publish(St.Tile, DescPrefix, combine(Ex, St.Agg)); });
        Pre.store(B, idx(0), {Ex});
      });
    });
  });
  emitBarrier(B);
  return B.CreateSelect(Seg0, St.Init, Pre.load(B, 0, idx(0)));
}

void ScanKernel::storeItems(TileState &St, llvm::ArrayRef<llvm::Value *> Before,
                            bool Guarded) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector;
  FE->clearCache();
  Lanes->clear();
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr) {
    if (Guarded && SP.LastTileShift) {
      storeShiftedRun(St, Before, Kr);
      continue;
    }
    // A guarded run whose first item no thread has stores nothing (its
    // later items lie further along).
    llvm::Value *FirstOk = Guarded ? itemValid(St, Kr, 0) : nullptr;
    if (FirstOk && isConstant(FirstOk, false))
      continue;
    std::vector<std::vector<llvm::Value *>> Idx;
    std::vector<llvm::Value *> Ys;
    runOutputs(St, Before, Kr, false, Idx, Ys);
    if (!Guarded) {
      storeRun(Idx, Ys);
      continue;
    }
    if (guardsWholeVectors()) {
      emitIf(B, FirstOk, [&] { storeRun(Idx, Ys); });
      FE->clearCache();
      Lanes->clear();
      continue;
    }
    for (int64_t Vv = 0; Vv < V; ++Vv) {
      llvm::Value *Ok = Vv ? itemValid(St, Kr, Vv) : FirstOk;
      if (!isConstant(Ok, false))
        emitIf(B, Ok, [&] {
          FE->clearCache();
          Lanes->clear();
          storeRoots(Idx[size_t(Vv)], Ys[size_t(Vv)]);
        });
    }
    FE->clearCache();
    Lanes->clear();
  }
}

void ScanKernel::storeShiftedRun(TileState &St,
                                 llvm::ArrayRef<llvm::Value *> Before,
                                 int64_t Run) {
  // The shifted last tile's run: the items that are the tile's own (its
  // later ones), whole vectors where the shift keeps them.
  const int64_t V = SP.Vector;
  const bool Keep = shiftKeepsVectors();
  std::vector<llvm::Value *> Ok;
  for (int64_t Vv = 0; Vv < V; ++Vv)
    Ok.push_back(Keep && Vv ? Ok.front() : itemValid(St, Run, Vv));
  std::vector<std::vector<llvm::Value *>> Idx;
  std::vector<llvm::Value *> Ys;
  runOutputs(St, Before, Run, true, Idx, Ys);
  // The addresses are in the line whether or not the item is the tile's:
  // only the stores are guarded.
  auto Guard = [](llvm::Value *Test) {
    return isConstant(Test, true) ? nullptr : Test;
  };
  if (Keep) {
    if (!isConstant(Ok.front(), false))
      storeRun(Idx, Ys, Guard(Ok.front()));
  } else {
    for (int64_t Vv = 0; Vv < V; ++Vv)
      if (!isConstant(Ok[size_t(Vv)], false))
        storeRun({Idx[size_t(Vv)]}, {Ys[size_t(Vv)]}, Guard(Ok[size_t(Vv)]));
  }
  FE->clearCache();
  Lanes->clear();
}

void ScanKernel::storeTile(TileState &St,
                           llvm::ArrayRef<llvm::Value *> Before) {
  // A run at a time (vectors where the plan proves them); in a guarded
  // tile, element by element where the line has it.
  if (!St.Guard) {
    storeItems(St, Before, false);
    return;
  }
  onGuard(St, "store", [&](bool Guarded) { storeItems(St, Before, Guarded); });
  FE->clearCache();
  Lanes->clear();
}

std::pair<llvm::BasicBlock *, llvm::BasicBlock *>
ScanKernel::onGuard(const TileState &St, const std::string &Stage,
                    const std::function<void(bool Guarded)> &Body) {
  llvm::IRBuilder<> &B = *BPtr;
  auto *Full = llvm::BasicBlock::Create(LC, Stage + ".full", K);
  auto *Part = llvm::BasicBlock::Create(LC, Stage + ".part", K);
  auto *Join = llvm::BasicBlock::Create(LC, Stage + ".done", K);
  B.CreateCondBr(St.Guard, Part, Full);
  B.SetInsertPoint(Full);
  Body(false);
  llvm::BasicBlock *FullEnd = B.GetInsertBlock();
  B.CreateBr(Join);
  B.SetInsertPoint(Part);
  Body(true);
  llvm::BasicBlock *PartEnd = B.GetInsertBlock();
  B.CreateBr(Join);
  B.SetInsertPoint(Join);
  return {FullEnd, PartEnd};
}

llvm::Value *ScanKernel::takeTicket() {
  return BPtr->CreateAtomicRMW(llvm::AtomicRMWInst::Add, Workspace,
                               BPtr->getInt32(1), llvm::MaybeAlign(4),
                               llvm::AtomicOrdering::Monotonic);
}

void ScanKernel::emitTile(llvm::Value *Th, llvm::Value *Tile) {
  TileState St = beginTile(Th, Tile);
  loadTile(St);
  scanRuns(St);
  foldWarps(St);
  llvm::Value *TilePre = tilePrefix(St);
  storeTile(St, std::vector<llvm::Value *>(size_t(SP.Vector),
                                           combine(TilePre, St.WarpPre)));
  if (SP.lookBack())
    clearPredecessor(Th, Tile, St.Seg);
}

void ScanKernel::clearPredecessor(llvm::Value *Th, llvm::Value *Tile,
                                  llvm::Value *Seg) {
  llvm::IRBuilder<> &B = *BPtr;
  emitIf(B,
         B.CreateAnd(B.CreateICmpEQ(Th, idx(0)), B.CreateICmpNE(Seg, idx(0))),
         [&] { clearWhenPrefix(B.CreateSub(Tile, idx(1))); });
}

void ScanKernel::clearWhenPrefix(llvm::Value *Desc) {
  // The predecessor's descriptor, once it holds its inclusive prefix (its
  // last write; it may still be looking back when this tile is done):
  // later readers stop at this tile's prefix, published before.
  llvm::IRBuilder<> &B = *BPtr;
  auto *Wait = llvm::BasicBlock::Create(LC, "pred.wait", K);
  auto *Clear = llvm::BasicBlock::Create(LC, "pred.clear", K);
  B.CreateBr(Wait);
  B.SetInsertPoint(Wait);
  llvm::Value *St = poll(Desc).first;
  B.CreateCondBr(B.CreateICmpEQ(St, B.getInt32(DescPrefix)), Clear, Wait);
  B.SetInsertPoint(Clear);
  clearDescriptor(Desc);
}

void ScanKernel::emitTiles() {
  if (SP.pipelined()) {
    emitPipelined();
    return;
  }
  if (SP.sharedTile()) {
    Staged =
        std::make_unique<StagedLoader>(*BPtr, *K, S, P.Loop->LoadWidth, SP.Runs,
                                       SP.Vector, P.Block[0], IndexTy);
    Info.DynamicSharedBytes = unsigned(Staged->stageBytes());
  }
  emitTileLoop([&](llvm::Value *Th, llvm::Value *Tile) {
    if (SP.Mode == ScanMode::ColumnTiles)
      emitColumnTile(Th, Tile);
    else if (SP.Mode == ScanMode::SegmentedTiles)
      emitSegmentedTile(Th, Tile);
    else if (SP.sharedTile())
      emitSharedTile(Th, Tile);
    else
      emitTile(Th, Tile);
  });
}

void ScanKernel::emitTileLoop(
    const std::function<void(llvm::Value *, llvm::Value *)> &TileBody) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t T = P.Block[0];
  if (!SP.lookBack()) {
    GridLoop GL(B, *K, IndexTy, T, P.Grid[0], SP.tiles());
    TileBody(GL.Th, GL.Bl);
    GL.finish();
    return;
  }
  // Tiles in launch order: thread 0 takes the next from the counter.
  llvm::Value *Th =
      B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(T)), IndexTy);
  llvm::GlobalVariable *Ticket =
      createSharedArray(M, B.getInt32Ty(), 1, Info.Name + ".ticket", 4);
  llvm::Value *Th0 = B.CreateICmpEQ(Th, idx(0));
  auto *Next = llvm::BasicBlock::Create(LC, "tile.next", K);
  auto *Body = llvm::BasicBlock::Create(LC, "tile", K);
  auto *Leave = llvm::BasicBlock::Create(LC, "tiles.done", K);
  B.CreateBr(Next);
  B.SetInsertPoint(Next);
  emitIf(B, Th0, [&] { B.CreateStore(takeTicket(), Ticket); });
  emitBarrier(B);
  llvm::Value *Tile =
      B.CreateZExtOrTrunc(B.CreateLoad(B.getInt32Ty(), Ticket), IndexTy);
  B.CreateCondBr(B.CreateICmpULT(Tile, idx(SP.tiles())), Body, Leave);
  B.SetInsertPoint(Body);
  TileBody(Th, Tile);
  B.CreateBr(Next);
  B.SetInsertPoint(Leave);
  // Split descriptors: their statuses are cleared tile by tile, their
  // values (which a reader may still load after a status it saw) by the
  // last block, once every tile is done: both value arrays, 2 x
  // descriptors words from the first.
  ExitClear C;
  if (!SP.PackedDescriptors)
    C = {[this] { return valueSlots(false); }, 2 * SP.descriptors(), false};
  leaveTiles(Th, C);
}

void ScanKernel::leaveTiles(llvm::Value *Th, const ExitClear &C) {
  // The last block to leave resets the counters for the next launch.
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t T = P.Block[0];
  llvm::Value *Counter = Workspace;
  llvm::Value *Exits =
      B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Workspace, 4);
  llvm::Value *Th0 = B.CreateICmpEQ(Th, idx(0));
  auto Fence = [&] {
    if (C.Fenced)
      asmCall(B, B.getVoidTy(), {}, "fence.acq_rel.gpu;", "~{memory}");
  };
  // Whether this block is the last to leave, for all its threads.
  llvm::GlobalVariable *Last =
      C.Words ? createSharedArray(M, B.getInt32Ty(), 1, Info.Name + ".last", 4)
              : nullptr;
  emitIf(B, Th0, [&] {
    Fence();
    llvm::Value *Left =
        B.CreateAtomicRMW(llvm::AtomicRMWInst::Add, Exits, B.getInt32(1),
                          llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
    llvm::Value *LastBlock =
        B.CreateICmpEQ(Left, B.getInt32(uint32_t(P.Grid[0] - 1)));
    if (Last)
      B.CreateStore(B.CreateZExt(LastBlock, B.getInt32Ty()), Last);
    emitIf(B, LastBlock, [&] {
      Fence();
      B.CreateStore(B.getInt32(0), Counter);
      B.CreateStore(B.getInt32(0), Exits);
    });
  });
  if (C.Words) {
    emitBarrier(B);
    llvm::Value *LastBlock =
        B.CreateICmpNE(B.CreateLoad(B.getInt32Ty(), Last), B.getInt32(0));
    emitIf(B, LastBlock, [&] {
      llvm::Value *First = C.First();
      llvm::BasicBlock *Pre = B.GetInsertBlock();
      auto *Loop = llvm::BasicBlock::Create(LC, "exit.clear", K);
      auto *Done = llvm::BasicBlock::Create(LC, "exit.cleared", K);
      B.CreateCondBr(B.CreateICmpULT(Th, idx(C.Words)), Loop, Done);
      B.SetInsertPoint(Loop);
      llvm::PHINode *I = B.CreatePHI(IndexTy, 2);
      I->addIncoming(Th, Pre);
      B.CreateStore(B.getInt64(0),
                    B.CreateInBoundsGEP(B.getInt64Ty(), First, I));
      llvm::Value *Next = B.CreateAdd(I, idx(T));
      I->addIncoming(Next, B.GetInsertBlock());
      B.CreateCondBr(B.CreateICmpULT(Next, idx(C.Words)), Loop, Done);
      B.SetInsertPoint(Done);
    });
  }
  B.CreateRetVoid();
}

} // namespace codegen
} // namespace idxmap
