//===- ScanSegments.cpp - Short rows end to end: segmented scans ----------===//
//
// Part of idxmap. The scan kernel of ScanMode::SegmentedTiles
// (KernelPlan.h): a tile holds whole short rows laid end to end, loaded
// and stored as the row tiles are (vectors free to straddle rows), and
// scanned as one segmented scan: an element at a row's start is a head,
// its row's init folded in, and the pairs (head, value) combine as
// (fa, a) . (fb, b) = (fa or fb, fb ? b : a op b), which is associative
// whenever op is. The serial scan of each thread's vector, the shuffle
// scan of the lanes' totals and the fold of the warps' totals are those
// of the row tiles (ScanTiles.cpp) over pairs. Every row starts in its
// tile, so the scan's result needs no prefix from outside the tile.
//
//===----------------------------------------------------------------------===//
#include "ScanKernel.h"

#include "Emitters.h"
#include "ExprCodegen.h"
#include "GpuBuilder.h"
#include "KernelBuilder.h"

#include "llvm/IR/Constants.h"

namespace idxmap {
namespace codegen {

ScanKernel::Pair ScanKernel::combinePair(const Pair &Earlier,
                                         const Pair &Later) {
  llvm::IRBuilder<> &B = *BPtr;
  return {B.CreateOr(Earlier.Head, Later.Head),
          B.CreateSelect(Later.Head, Later.Value,
                         combine(Earlier.Value, Later.Value))};
}

ScanKernel::Pair ScanKernel::shufflePair(const Pair &P, Shuffle Kind,
                                         unsigned Delta) {
  return {scanShuffle(*BPtr, P.Head, Kind, Delta),
          scanShuffle(*BPtr, P.Value, Kind, Delta)};
}

std::vector<ScanKernel::Pair> ScanKernel::headsOf(TileState &St) {
  // Item (run, vec) is at position pos of the tile's rows laid end to
  // end: a head where pos mod Length is 0, its row's init combined in
  // front (an item past the rows reads the tile's first row's init).
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector, Items = V * SP.Runs;
  std::vector<Pair> X;
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    for (int64_t Vv = 0; Vv < V; ++Vv) {
      llvm::Value *Pos = B.CreateAdd(
          B.CreateMul(St.Warp, idx(32 * Items)),
          B.CreateAdd(B.CreateMul(St.Lane, idx(V)), idx(Kr * 32 * V + Vv)));
      llvm::Value *Head =
          B.CreateICmpEQ(B.CreateURem(Pos, idx(SP.Length)), idx(0));
      llvm::Value *Th = St.Th, *Run = idx(Kr), *Vec = idx(Vv);
      if (St.Guard) {
        llvm::Value *Ok = itemValid(St, Kr, Vv);
        Th = B.CreateSelect(Ok, Th, idx(0));
        Run = B.CreateSelect(Ok, Run, idx(0));
        Vec = B.CreateSelect(Ok, Vec, idx(0));
      }
      FE->clearCache();
      Lanes->clear();
      llvm::Value *Init = lineInit(emitIndexExprs(
          B, MapRanges, P.Main.Map, {Th, St.Tile}, {Run, Vec}, IndexTy));
      FE->clearCache();
      Lanes->clear();
      llvm::Value *Item = St.X[size_t(Kr * V + Vv)];
      X.push_back({Head, B.CreateSelect(Head, combine(Init, Item), Item)});
    }
  return X;
}

void ScanKernel::scanSegments(TileState &St) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector, Warps = P.Block[0] / 32;
  llvm::Constant *Id = identity();
  const Pair None = {B.getFalse(), Id};
  std::vector<Pair> X = headsOf(St), Local(X.size());
  // Each run: the thread's vector serially, the lanes' totals by
  // shuffles, the carry of the warp's runs before.
  Pair Carry = None;
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr) {
    std::vector<Pair> Sc(static_cast<size_t>(V));
    for (int64_t Vv = 0; Vv < V; ++Vv)
      Sc[size_t(Vv)] =
          Vv ? combinePair(Sc[size_t(Vv - 1)], X[size_t(Kr * V + Vv)])
             : X[size_t(Kr * V)];
    Pair Incl = Sc.back();
    for (unsigned Off = 1; Off < 32; Off *= 2) {
      Pair Up = shufflePair(Incl, Shuffle::Up, Off);
      Pair Both = combinePair(Up, Incl);
      llvm::Value *In = B.CreateICmpUGE(St.Lane, idx(Off));
      Incl = {B.CreateSelect(In, Both.Head, Incl.Head),
              B.CreateSelect(In, Both.Value, Incl.Value)};
    }
    Pair Up = shufflePair(Incl, Shuffle::Up, 1);
    llvm::Value *Lane0 = B.CreateICmpEQ(St.Lane, idx(0));
    Pair Excl = {B.CreateSelect(Lane0, None.Head, Up.Head),
                 B.CreateSelect(Lane0, None.Value, Up.Value)};
    Pair Before = combinePair(Carry, Excl);
    for (int64_t Vv = 0; Vv < V; ++Vv)
      Local[size_t(Kr * V + Vv)] = combinePair(Before, Sc[size_t(Vv)]);
    Carry = combinePair(Carry, shufflePair(Incl, Shuffle::Index, 31));
  }
  // The warps' totals through shared memory: each thread folds those of
  // the warps before its own in front of its items.
  SharedSlots Totals(M, {Id, B.getInt32(0)}, uint64_t(Warps),
                     Info.Name + ".segments", 16);
  emitIf(B, B.CreateICmpEQ(St.Lane, idx(0)), [&] {
    Totals.store(B, St.Warp,
                 {Carry.Value, B.CreateZExt(Carry.Head, B.getInt32Ty())});
  });
  emitBarrier(B);
  Pair WarpPre = None;
  for (int64_t W = 0; W + 1 < Warps; ++W) {
    Pair Tw = {B.CreateICmpNE(Totals.load(B, 1, idx(W)), B.getInt32(0)),
               Totals.load(B, 0, idx(W))};
    Pair Next = combinePair(WarpPre, Tw);
    llvm::Value *Before = B.CreateICmpULT(idx(W), St.Warp);
    WarpPre = {B.CreateSelect(Before, Next.Head, WarpPre.Head),
               B.CreateSelect(Before, Next.Value, WarpPre.Value)};
  }
  St.Local.assign(X.size(), nullptr);
  for (size_t I = 0; I < X.size(); ++I)
    St.Local[I] = combinePair(WarpPre, Local[I]).Value;
  // A grid-stride loop's next tile stores into the same slots.
  if (P.Grid[0] < SP.tiles())
    emitBarrier(B);
}

void ScanKernel::emitSegmentedTile(llvm::Value *Th, llvm::Value *Tile) {
  TileState St = beginTile(Th, Tile);
  loadTile(St);
  scanSegments(St);
  storeTile(St, std::vector<llvm::Value *>(size_t(SP.Vector), nullptr));
}

} // namespace codegen
} // namespace idxmap
