//===- ScanColumns.cpp - Tiled scans along a non-minor dim ----------------===//
//
// Part of idxmap. The scan kernel of ScanMode::ColumnTiles (KernelPlan.h):
// a block scans a tile of LinesPerTile neighbouring lines (columns, neighbours
// along the minor dim) over TileLength consecutive positions. Thread
// (tx, ty) holds Runs consecutive positions of a vector of columns, so a
// warp's loads and stores are rows of consecutive elements; it scans each
// column's run serially, the row groups' totals are folded through shared
// memory, and a column's prefix before the tile is its line's init (a
// tile at the line's start) or, when a line spans several tiles, the
// result of a decoupled look-back over that column's descriptors: one per
// (tile, column), walked back tile by tile by the column's thread, with
// the same protocol as the row tiles (ScanTiles.cpp): aggregate, then
// inclusive prefix, a cleared descriptor restarting the walk, each tile
// clearing its predecessor's once that holds its prefix.
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

void ScanKernel::emitColumnTile(llvm::Value *Th, llvm::Value *Tile) {
  TileState St = beginTile(Th, Tile);
  loadTile(St);
  scanColumnRuns(St);
  // The row groups' totals of each column.
  const int64_t T = P.Block[0];
  const int64_t Groups = T / (SP.LinesPerTile / SP.Vector);
  SharedSlots Parts(M, {identity()}, uint64_t(Groups * SP.LinesPerTile),
                    Info.Name + ".columns", 16);
  foldRowGroups(St, Parts);
  columnPrefixes(St, Parts);
  storeTile(St, St.Before);
  if (!SP.lookBack())
    return;
  // Each column's thread clears its predecessor's descriptor.
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Value *NotFirst = B.CreateICmpNE(St.Seg, idx(0));
  for (int64_t J = 0; J * T < SP.LinesPerTile; ++J) {
    llvm::Value *Col = B.CreateAdd(Th, idx(J * T));
    emitIf(B, B.CreateAnd(NotFirst, B.CreateICmpULT(Col, idx(SP.LinesPerTile))),
           [&] {
             clearWhenPrefix(
                 descriptorOf(B.CreateSub(Tile, idx(SP.Groups)), Col));
           });
  }
}

void ScanKernel::scanColumnRuns(TileState &St) {
  // Down each of the thread's columns, its run of positions in order.
  const int64_t V = SP.Vector;
  St.Local.assign(St.X.size(), nullptr);
  St.Tot.assign(size_t(V), nullptr);
  for (int64_t Vv = 0; Vv < V; ++Vv) {
    llvm::Value *Acc = nullptr;
    for (int64_t Kr = 0; Kr < SP.Runs; ++Kr) {
      llvm::Value *X = St.X[size_t(Kr * V + Vv)];
      Acc = Acc ? combine(Acc, X) : X;
      St.Local[size_t(Kr * V + Vv)] = Acc;
    }
    St.Tot[size_t(Vv)] = Acc;
  }
}

void ScanKernel::foldRowGroups(TileState &St, const SharedSlots &Parts) {
  // The row groups' totals per column in shared memory; each thread folds
  // those of the groups above its own (St.Before, completed by
  // columnPrefixes).
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector, W = SP.LinesPerTile;
  llvm::Constant *Id = identity();
  llvm::Value *Col0 = B.CreateMul(St.Tx, idx(V));
  for (int64_t Vv = 0; Vv < V; ++Vv)
    Parts.store(
        B, B.CreateAdd(B.CreateMul(St.Ty, idx(W)), B.CreateAdd(Col0, idx(Vv))),
        {St.Tot[size_t(Vv)]});
  emitBarrier(B);
  St.Before =
      emitFold(B, *K, IndexTy, St.Ty, std::vector<llvm::Value *>(size_t(V), Id),
               [&](llvm::Value *Y, const std::vector<llvm::Value *> &Acc) {
                 std::vector<llvm::Value *> Next;
                 for (int64_t Vv = 0; Vv < V; ++Vv)
                   Next.push_back(combine(
                       Acc[size_t(Vv)],
                       Parts.load(B, 0,
                                  B.CreateAdd(B.CreateMul(Y, idx(W)),
                                              B.CreateAdd(Col0, idx(Vv))))));
                 return Next;
               });
  // A grid-stride loop's next tile stores into the same slots (a tile
  // taken from the counter waits at the ticket's barrier).
  if (!SP.lookBack() && P.Grid[0] < SP.tiles())
    emitBarrier(B);
}

llvm::Value *ScanKernel::descriptorOf(llvm::Value *Tile, llvm::Value *Col) {
  llvm::IRBuilder<> &B = *BPtr;
  return B.CreateAdd(B.CreateMul(Tile, idx(SP.LinesPerTile)), Col);
}

llvm::Value *ScanKernel::columnInit(TileState &St, llvm::Value *Col) {
  llvm::IRBuilder<> &B = *BPtr;
  FE->clearCache();
  Lanes->clear();
  if (S.Init->shape().isScalar()) {
    llvm::Value *V = lineInit({});
    FE->clearCache();
    return V;
  }
  // The element of the column at the tile's first position; a column past
  // the minor extent reads the group's first (its result is never
  // stored).
  llvm::Value *Tx = B.CreateUDiv(Col, idx(SP.Vector));
  llvm::Value *Vec = B.CreateURem(Col, idx(SP.Vector));
  llvm::Value *Ok =
      emitDomainCheck(B, P.Main.Map, {Tx, St.Tile}, {idx(0), Vec}, IndexTy);
  std::vector<llvm::Value *> First = emitIndexExprs(
      B, MapRanges, P.Main.Map, {B.CreateSelect(Ok, Tx, idx(0)), St.Tile},
      {idx(0), B.CreateSelect(Ok, Vec, idx(0))}, IndexTy);
  llvm::Value *V = lineInit(First);
  FE->clearCache();
  Lanes->clear();
  return V;
}

llvm::Value *ScanKernel::lookBackColumn(TileState &St, llvm::Value *Col) {
  // From the predecessor back: aggregates combine in front of what was
  // gathered, an inclusive prefix ends the walk, a descriptor not yet
  // published (or already cleared) starts it again.
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Constant *Id = identity();
  llvm::Value *First = B.CreateSub(St.Tile, idx(SP.Groups));
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "colback", K);
  auto *Have = llvm::BasicBlock::Create(LC, "colback.have", K);
  auto *Done = llvm::BasicBlock::Create(LC, "colback.done", K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *J = B.CreatePHI(IndexTy, 3, "cb.tile");
  llvm::PHINode *Ex = B.CreatePHI(Id->getType(), 3, "cb.excl");
  J->addIncoming(First, Pre);
  Ex->addIncoming(Id, Pre);
  auto [Status, Val] = poll(descriptorOf(J, Col));
  J->addIncoming(First, B.GetInsertBlock());
  Ex->addIncoming(Id, B.GetInsertBlock());
  B.CreateCondBr(B.CreateICmpEQ(Status, B.getInt32(DescInvalid)), Loop, Have);
  B.SetInsertPoint(Have);
  llvm::Value *Next = combine(Val, Ex);
  J->addIncoming(B.CreateSub(J, idx(SP.Groups)), Have);
  Ex->addIncoming(Next, Have);
  B.CreateCondBr(B.CreateICmpEQ(Status, B.getInt32(DescPrefix)), Done, Loop);
  B.SetInsertPoint(Done);
  return Next;
}

void ScanKernel::columnPrefixes(TileState &St, const SharedSlots &Parts) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector, W = SP.LinesPerTile, T = P.Block[0];
  llvm::Value *Col0 = B.CreateMul(St.Tx, idx(V));
  if (!SP.lookBack()) {
    for (int64_t Vv = 0; Vv < V; ++Vv)
      St.Before[size_t(Vv)] = combine(
          columnInit(St, B.CreateAdd(Col0, idx(Vv))), St.Before[size_t(Vv)]);
    return;
  }
  // Thread c (and c + T, ...) owns column c: its aggregate over the row
  // groups, its descriptor, its look-back; the prefixes meet in shared
  // memory.
  const int64_t TY = T / (W / V);
  llvm::Constant *Id = identity();
  SharedSlots Pre(M, {Id}, uint64_t(W), Info.Name + ".colprefix", 16);
  llvm::Value *Seg0 = B.CreateICmpEQ(St.Seg, idx(0));
  for (int64_t Jc = 0; Jc * T < W; ++Jc) {
    llvm::Value *Col = B.CreateAdd(St.Th, idx(Jc * T));
    emitIf(B, B.CreateICmpULT(Col, idx(W)), [&] {
      llvm::Value *Agg =
          emitFold(B, *K, IndexTy, idx(TY), {Id},
                   [&](llvm::Value *Y, const std::vector<llvm::Value *> &Acc) {
                     return std::vector<llvm::Value *>{combine(
                         Acc[0],
                         Parts.load(B, 0,
                                    B.CreateAdd(B.CreateMul(Y, idx(W)), Col)))};
                   })
              .front();
      llvm::Value *Desc = descriptorOf(St.Tile, Col);
      emitIf(B, Seg0, [&] {
        llvm::Value *Init = columnInit(St, Col);
        publish(Desc, DescPrefix, combine(Init, Agg));
        Pre.store(B, Col, {Init});
      });
      emitIf(B, B.CreateNot(Seg0), [&] {
        llvm::Value *More = B.CreateNot(St.LastSeg);
        emitIf(B, More, [&] { publish(Desc, DescAggregate, Agg); });
        llvm::Value *Ex = lookBackColumn(St, Col);
        emitIf(B, More, [&] { publish(Desc, DescPrefix, combine(Ex, Agg)); });
        Pre.store(B, Col, {Ex});
      });
    });
  }
  emitBarrier(B);
  for (int64_t Vv = 0; Vv < V; ++Vv)
    St.Before[size_t(Vv)] = combine(Pre.load(B, 0, B.CreateAdd(Col0, idx(Vv))),
                                    St.Before[size_t(Vv)]);
}

} // namespace codegen
} // namespace idxmap
