//===- TransposePhases.cpp - Reading and writing a transpose's tiles -----===//
//
// Part of idxmap. The two phases of the transpose kernel (the scheme is
// described at the top of TransposeEmitter.cpp): the reading phase computes
// the prologue at the hero operand's index and stores it into the shared
// tile (with the roots written at that index), the writing phase reads the
// tile transposed and stores every root through the epilogue.
//
//===----------------------------------------------------------------------===//
#include "TransposeKernel.h"

#include "ExprCodegen.h"
#include "KernelBuilder.h"

#include "idxmap/Simplify.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

#include <cassert>

namespace idxmap {
namespace codegen {
namespace transpose {

void TransposeKernel::predicated(
    const IndexingMap &Pred, llvm::Value *ItV, Interval ItRange,
    const std::function<void(llvm::Value *)> &Body) {
  predicatedValue(
      Pred, ItV, ItRange,
      [&](llvm::Value *It) -> llvm::Value * {
        Body(It);
        return nullptr;
      },
      nullptr);
}

llvm::Value *TransposeKernel::predicatedValue(
    const IndexingMap &Pred, llvm::Value *ItV, Interval ItRange,
    const std::function<llvm::Value *(llvm::Value *)> &Body,
    llvm::Value *Else) {
  llvm::Value *J0 = indexConstant(0);
  DomainCheckOptions O;
  O.DimValueRanges = {{0, Threads - 1}, {0, Blocks - 1}};
  O.SymValueRanges = {ItRange, {0, 0}};
  llvm::Value *Cond =
      emitDomainCheck(B, Pred, {ThV, BlV}, {ItV, J0}, IndexTy, O);
  auto *CI = llvm::dyn_cast<llvm::ConstantInt>(Cond);
  if (CI && CI->isOne())
    return Body(ItV);
  if (CI)
    return Else; // never in the domain
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Then = llvm::BasicBlock::Create(LC, "tile.row", K);
  auto *Next = llvm::BasicBlock::Create(LC, "tile.next", K);
  B.CreateCondBr(Cond, Then, Next);
  B.SetInsertPoint(Then);
  FE->clearCache();
  llvm::Value *V = Body(ItV);
  llvm::BasicBlock *ThenEnd = B.GetInsertBlock();
  B.CreateBr(Next);
  B.SetInsertPoint(Next);
  FE->clearCache();
  if (!V)
    return nullptr;
  llvm::PHINode *Phi = B.CreatePHI(V->getType(), 2);
  Phi->addIncoming(V, ThenEnd);
  Phi->addIncoming(Else, Pre);
  return Phi;
}

void TransposeKernel::iterate(const IndexingMap &Pred, int64_t Count,
                              const std::function<void(llvm::Value *)> &Body) {
  // Unrolled: the vector tiles' write phase as a loop of 2 iterations
  // ptxas kept rolled, 1.90 against 1.82 us on exp_transpose_abs.
  for (int64_t ItNo = 0; ItNo < Count; ++ItNo)
    predicated(Pred, indexConstant(ItNo), {ItNo, ItNo}, Body);
}

void TransposeKernel::linearInputSteps() {
  // When an iteration moves the linear input offset by a constant (the tile
  // rows are one dim, or dims the simplifier folds), its offset is
  // iteration 0's plus that constant, and iteration 0's is emitted once
  // here, where it dominates every iteration. Smaller IR than a full index
  // computation per iteration (compile time), the same PTX after ptxas.
  Expr E = InLin.results()[0];
  auto At = [&](int64_t ItNo) {
    return E.replace({}, {Ctx.constant(ItNo), Ctx.constant(0)});
  };
  for (int64_t ItNo = 0; ItNo < Iters * Subs; ++ItNo) {
    Expr D = simplifyExpr(At(ItNo) - At(0), InLin, /*UseConstraints=*/false);
    if (!D.isConstant()) {
      InLinSteps.clear();
      break;
    }
    InLinSteps.push_back(D.value());
  }
  if (!InLinSteps.empty())
    InLinBase = emitResults(InLin, {indexConstant(0), indexConstant(0)})[0];
}

void TransposeKernel::readPhase() {
  if (LinearLoads)
    linearInputSteps();
  // Every iteration's loads first, each under its row's predicate, then
  // the tile stores: a load's value stored to the tile inside its own
  // predicated block makes each iteration wait for its load, and ptxas
  // does not hoist loads out of those blocks (bf16[97,130,1031] {2,0,1}:
  // 16 DRAM round trips in a row per thread). Elements outside the domain
  // are stored as zeros into tile slots no write lane reads.
  const int64_t Count = Iters * Subs;
  std::vector<llvm::Value *> Values(static_cast<size_t>(Count), nullptr);
  llvm::Value *Zero = llvm::Constant::getNullValue(GroupTy);
  for (int64_t ItNo = 0; ItNo < Count; ++ItNo)
    Values[ItNo] = predicatedValue(
        ReadPred, indexConstant(ItNo), {ItNo, ItNo},
        [&](llvm::Value *) { return readIteration(ItNo); }, Zero);
  for (int64_t ItNo = 0; ItNo < Count; ++ItNo)
    storeGroup(ItNo, Values[ItNo]);
  FE->clearCache();
  emitBarrier(B);
}

llvm::Value *TransposeKernel::readIteration(int64_t ItNo) {
  llvm::Value *ItV = indexConstant(ItNo);
  if (LinearLoads) {
    llvm::Value *Lin0 =
        InLinBase ? B.CreateAdd(InLinBase, indexConstant(InLinSteps[ItNo]))
                  : emitResults(InLin, {ItV, indexConstant(0)})[0];
    Groups.clear();
    for (const HloInstruction *P : LinearParams) {
      llvm::Type *ET = storageType(LC, P->shape().Type);
      llvm::Type *PT = RG == 1 ? ET : llvm::FixedVectorType::get(ET, RG);
      llvm::Value *Ptr =
          B.CreateInBoundsGEP(storageType(LC, P->shape().Type),
                              K->getArg(P->parameterNumber()), Lin0);
      Groups[P] = loadWithHint(
          B, PT, Ptr, uint64_t(RG * byteWidth(P->shape().Type)),
          Plan.EvictLast ? CacheHint::EvictLast : CacheHint::Normal);
    }
  }
  llvm::Value *Group = llvm::PoisonValue::get(GroupTy);
  std::vector<llvm::Value *> Idx;
  for (int64_t Jn = 0; Jn < RG; ++Jn) {
    CurJ = Jn;
    FromGroups = LinearLoads;
    FE->clearCache();
    // With vector loads the loader ignores the index (the prologue is
    // elementwise over parameters and scalar constants).
    if (!LinearLoads)
      Idx = emitResults(ReadOp, {ItV, indexConstant(Jn)});
    else if (Jn == 0)
      Idx.assign(HeroOp->shape().rank(), indexConstant(0));
    llvm::Value *Val = FE->valueAt(*HeroOp, Idx);
    llvm::Value *St = storeConvert(B, Val, TilePT);
    Group = RG == 1 ? St : B.CreateInsertElement(Group, St, Jn);
    if (ReadRoots.empty())
      continue;
    llvm::Value *Lin = emitResults(InLin, {ItV, indexConstant(Jn)})[0];
    for (size_t K2 = 0; K2 < ReadRoots.size(); ++K2) {
      std::vector<llvm::Value *> RIdx =
          emitResults(ReadRootMaps[K2], {ItV, indexConstant(Jn)});
      storeRoot(ReadRoots[K2], FE->valueAt(*A.Roots[ReadRoots[K2]], RIdx), RIdx,
                rootPtr(ReadRoots[K2], Lin));
    }
  }
  FromGroups = false;
  FE->clearCache();
  return Group;
}

void TransposeKernel::storeGroup(int64_t ItNo, llvm::Value *Group) {
  // Tile row and first column of this lane's group (transposeTiling), in
  // sub-tile ItNo / Iters.
  llvm::Value *It32 = B.getInt32(int32_t(ItNo % Iters));
  llvm::Value *Sub = B.getInt32(int32_t(ItNo / Iters));
  llvm::Value *TileRow, *Col;
  if (VecTile) {
    const int32_t Lanes = int32_t(Tile / RV);
    TileRow =
        B.CreateAdd(B.CreateAdd(B.CreateUDiv(LaneV, B.getInt32(Lanes)),
                                B.CreateMul(WarpV, B.getInt32(int32_t(RV)))),
                    B.CreateMul(It32, B.getInt32(int32_t(Rows * RV))));
    Col = B.CreateMul(B.CreateURem(LaneV, B.getInt32(Lanes)),
                      B.getInt32(int32_t(RV)));
  } else {
    TileRow = B.CreateAdd(WarpV, B.CreateMul(It32, B.getInt32(Rows)));
    Col = LaneV;
  }
  B.CreateAlignedStore(Group,
                       VecTile ? elemPtr(TileRow, Col, Sub)
                               : groupPtr(TileRow, Col, Sub),
                       GroupAlign);
}

std::vector<llvm::Value *>
TransposeKernel::rootIndex(size_t K2, llvm::Value *ItV, int64_t Jn) {
  // None (zeros) for an epilogue that reads no parameter and no layout
  // (elementwise ops of the transpose and scalar constants).
  if (WriteNeedsIndex[K2])
    return emitResults(WriteRootMaps[K2], {ItV, indexConstant(Jn)});
  return std::vector<llvm::Value *>(A.Roots[WriteRoots[K2]]->shape().rank(),
                                    indexConstant(0));
}

void TransposeKernel::writePhase() {
  FE->setOverride(*Hero,
                  [&](llvm::ArrayRef<llvm::Value *>) { return Current; });
  if (VecTile)
    writeVectorTiles();
  else
    writeScalarTiles();
  FE->setOverride(*Hero, nullptr);
}

void TransposeKernel::writeVectorTiles() {
  // Lane l of warp w, iteration it: tile column l / (32 / WV) + WV w +
  // WV W it, rows WV (l mod (32 / WV)) + j; one WV-element store per root
  // (P % WV == 0: the vector is one output row's, aligned, in or out).
  const int32_t Lanes = int32_t(Tile / WV);
  llvm::Value *Row0 = B.CreateMul(B.CreateURem(LaneV, B.getInt32(Lanes)),
                                  B.getInt32(int32_t(WV)));
  llvm::Value *Col0 = B.CreateAdd(B.CreateUDiv(LaneV, B.getInt32(Lanes)),
                                  B.CreateMul(WarpV, B.getInt32(int32_t(WV))));
  iterate(WritePred, WIters * Subs, [&](llvm::Value *ItV) {
    const int64_t ItNo =
        int64_t(llvm::cast<llvm::ConstantInt>(ItV)->getZExtValue());
    llvm::Value *Sub = B.getInt32(int32_t(ItNo / WIters));
    llvm::Value *Col = B.CreateAdd(
        Col0, B.CreateMul(B.getInt32(int32_t(ItNo % WIters)),
                          B.getInt32(int32_t(Rows * WV))));
    llvm::Value *Lin0 = emitResults(OutLin, {ItV, indexConstant(0)})[0];
    std::vector<std::vector<llvm::Value *>> Vals(WriteRoots.size());
    // Rows Row0 + j (Row0 % WV == 0, j < WV) share a swizzle: element
    // (Row0 + j, Col) is j rows after (Row0, Col).
    llvm::Value *Ptr0 = elemPtr(Row0, Col, Sub);
    for (int64_t Jn = 0; Jn < WV; ++Jn) {
      llvm::Value *Ptr =
          B.CreateConstInBoundsGEP1_64(TileElemTy, Ptr0, uint64_t(Jn * Tm));
      Current =
          loadConvert(B,
                      B.CreateAlignedLoad(TileElemTy, Ptr,
                                          llvm::Align(uint64_t(TileBytes))),
                      TilePT);
      for (size_t K2 = 0; K2 < WriteRoots.size(); ++K2) {
        std::vector<llvm::Value *> RIdx = rootIndex(K2, ItV, Jn);
        llvm::Value *Val = FE->valueAt(*A.Roots[WriteRoots[K2]], RIdx);
        if (WV == 1) // scalar writes (forced), any layout
          storeRoot(WriteRoots[K2], Val, RIdx, rootPtr(WriteRoots[K2], Lin0));
        else
          Vals[K2].push_back(
              storeConvert(B, Val, A.Roots[WriteRoots[K2]]->shape().Type));
      }
      FE->clearCache();
    }
    for (size_t K2 = 0; WV > 1 && K2 < WriteRoots.size(); ++K2) {
      const Shape &S = A.Roots[WriteRoots[K2]]->shape();
      llvm::Type *ST = storageType(LC, S.Type);
      llvm::Value *Vec =
          llvm::PoisonValue::get(llvm::FixedVectorType::get(ST, WV));
      for (int64_t Jn = 0; Jn < WV; ++Jn)
        Vec = B.CreateInsertElement(Vec, Vals[K2][Jn], Jn);
      B.CreateAlignedStore(
          Vec, rootPtr(WriteRoots[K2], Lin0),
          llvm::Align(uint64_t(std::min<int64_t>(WV * byteWidth(S.Type), 16))));
    }
  });
}

void TransposeKernel::writeScalarTiles() {
  // Lane l writes output column l (A); warp w the groups w, w + 4, ... of
  // M, one output row per element of the group. Unrolled, every tile load
  // first (always inside the tile, so unpredicated), then the predicated
  // stores: a rolled loop waits for each iteration's shared load before
  // its store.
  const int64_t Count = Iters * Subs;
  std::vector<llvm::Value *> Loaded(static_cast<size_t>(Count));
  for (int64_t ItNo = 0; ItNo < Count; ++ItNo) {
    llvm::Value *Sub = Subs > 1 ? B.getInt32(int32_t(ItNo / Iters)) : nullptr;
    llvm::Value *GroupNo =
        B.CreateAdd(WarpV, B.getInt32(int32_t((ItNo % Iters) * Rows)));
    Loaded[ItNo] =
        B.CreateAlignedLoad(GroupTy, groupPtr(LaneV, GroupNo, Sub), GroupAlign);
  }
  for (int64_t ItNo = 0; ItNo < Count; ++ItNo)
    predicated(
        WritePred, indexConstant(ItNo), {ItNo, ItNo}, [&](llvm::Value *ItV) {
          // Element j of the group is j output rows further: offset
          // + j * stride.
          llvm::Value *Lin0 = emitResults(OutLin, {ItV, indexConstant(0)})[0];
          for (int64_t Jn = 0; Jn < V; ++Jn) {
            llvm::Value *St = V == 1 ? Loaded[ItNo]
                                     : B.CreateExtractElement(Loaded[ItNo], Jn);
            Current = loadConvert(B, St, TilePT);
            for (size_t K2 = 0; K2 < WriteRoots.size(); ++K2) {
              std::vector<llvm::Value *> RIdx = rootIndex(K2, ItV, Jn);
              storeRoot(WriteRoots[K2],
                        FE->valueAt(*A.Roots[WriteRoots[K2]], RIdx), RIdx,
                        rootPtr(WriteRoots[K2], Lin0, Jn * OutStrideM));
            }
            // Values computed from this element must not be reused.
            FE->clearCache();
          }
        });
}

} // namespace transpose
} // namespace codegen
} // namespace idxmap
