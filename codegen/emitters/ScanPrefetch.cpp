//===- ScanPrefetch.cpp - Tiled scans that stage their next tile ----------===//
//
// Part of idxmap. A chained row scan's tile waits for its look-back
// (ScanTiles.cpp), and while it waits its block issues no loads: on the
// H200 the look-back costs the 1-D cumsum of f32[2^28] about 226 of its
// 782 us (bench/RESULTS.md, sixteenth session). With ScanPlan::StageBytes
// each block takes tiles in a loop and copies the next tile's parameter
// reads into shared memory with cp.async as soon as its current tile's
// items are in registers, so that the copies are in flight during the
// look-back, the stores and the next ticket.
//
// The tiles stay in launch order: a block takes its next ticket only
// while it holds the current one, and publishes each tile's aggregate
// before it looks back, so every tile before the lowest unfinished one is
// done or held by a block working on it (no deadlock with any number of
// resident blocks).
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
    : B(B), K(K), IndexTy(IndexTy), Runs(Runs), Vector(Vector),
      Threads(Threads) {
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
        llvm::Value *Off = physicalOffset(B, P.shape(), Index, IndexTy,
                                          OffsetTermOrder::Logical);
        if (W > 1)
          Off = B.CreateSub(Off, llvm::ConstantInt::get(IndexTy, Lane % W));
        llvm::Value *Src =
            B.CreateInBoundsGEP(ST, K.getArg(P.parameterNumber()), Off);
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

void ScanKernel::readStaged(TileState &St, StagedLoader::Mode Mode) {
  Staged->begin(Mode, St.Th);
  FusedElementEmitter FS(*BPtr, Ctx, C, Staged->loader(), Math, IndexTy);
  St.X.assign(size_t(SP.Vector * SP.Runs), nullptr);
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    for (int64_t Vv = 0; Vv < SP.Vector; ++Vv) {
      Staged->Run = Kr;
      Staged->Lane = Vv;
      FS.clearCache();
      St.X[size_t(Kr * SP.Vector + Vv)] = inputAt(FS, itemIndex(St, Kr, Vv));
    }
}

llvm::Value *ScanKernel::raggedTile(llvm::Value *Tile) {
  if (!SP.raggedLines())
    return nullptr;
  return BPtr->CreateICmpEQ(segmentOf(Tile), idx(SP.TilesPerLine - 1));
}

void ScanKernel::stageTile(llvm::Value *Th, llvm::Value *Tile) {
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Value *Ok = B.CreateICmpULT(Tile, idx(SP.tiles()));
  // A ragged tile reads its items from global memory, guarded.
  if (llvm::Value *Ragged = raggedTile(Tile))
    Ok = B.CreateAnd(Ok, B.CreateNot(Ragged));
  emitIf(B, Ok, [&] {
    TileState St;
    St.Th = Th;
    St.Tile = Tile;
    readStaged(St, StagedLoader::Mode::Issue);
  });
  B.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
}

void ScanKernel::emitStagedTiles() {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t T = P.Block[0];
  llvm::Value *Th =
      B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(T)), IndexTy);
  Staged = std::make_unique<StagedLoader>(B, *K, S, P.Loop->LoadWidth, SP.Runs,
                                          SP.Vector, T, IndexTy);
  Info.DynamicSharedBytes = unsigned(Staged->stageBytes());
  // Slot 0 the block's first ticket, slot 1 each next one (written before
  // foldWarps' barrier, read after it; rewritten only after tilePrefix's).
  llvm::GlobalVariable *Tickets =
      createSharedArray(M, B.getInt32Ty(), 2, Info.Name + ".tickets", 4);
  auto Ticket = [&](unsigned I) {
    return B.CreateConstInBoundsGEP2_32(Tickets->getValueType(), Tickets, 0, I);
  };
  llvm::Value *Th0 = B.CreateICmpEQ(Th, idx(0));
  emitIf(B, Th0, [&] { B.CreateStore(takeTicket(), Ticket(0)); });
  emitBarrier(B);
  llvm::Value *First =
      B.CreateZExtOrTrunc(B.CreateLoad(B.getInt32Ty(), Ticket(0)), IndexTy);
  stageTile(Th, First);
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "tile.staged", K);
  auto *Body = llvm::BasicBlock::Create(LC, "tile", K);
  auto *Leave = llvm::BasicBlock::Create(LC, "tiles.done", K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *Cur = B.CreatePHI(IndexTy, 2, "tile.cur");
  Cur->addIncoming(First, Pre);
  B.CreateCondBr(B.CreateICmpULT(Cur, idx(SP.tiles())), Body, Leave);

  B.SetInsertPoint(Body);
  emitIf(B, Th0, [&] { B.CreateStore(takeTicket(), Ticket(1)); });
  TileState St = beginTile(Th, Cur);
  B.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
  loadTile(St);
  scanRuns(St);
  foldWarps(St);
  // The items are in registers (the scan used them before foldWarps'
  // barrier): their slots take the next tile's copies.
  llvm::Value *Next =
      B.CreateZExtOrTrunc(B.CreateLoad(B.getInt32Ty(), Ticket(1)), IndexTy);
  stageTile(Th, Next);
  llvm::Value *TilePre = tilePrefix(St);
  storeTile(St, std::vector<llvm::Value *>(size_t(SP.Vector),
                                           combine(TilePre, St.WarpPre)));
  clearPredecessor(Th, Cur, St.Seg);
  Cur->addIncoming(Next, B.GetInsertBlock());
  B.CreateBr(Loop);

  B.SetInsertPoint(Leave);
  leaveTiles(Th);
}

} // namespace codegen
} // namespace idxmap
