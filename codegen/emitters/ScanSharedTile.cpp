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

llvm::Value *ScanKernel::stagedRun(TileState &St, ItemSource &Src, int64_t Run,
                                   llvm::Value *Before) {
  llvm::IRBuilder<> &B = *BPtr;
  const int64_t V = SP.Vector;
  FusedElementEmitter FS(B, Ctx, C, Src.loader(), Math, IndexTy);
  std::vector<llvm::Value *> Sc(size_t(V), nullptr);
  for (int64_t Vv = 0; Vv < V; ++Vv) {
    Src.Run = Run;
    Src.Lane = Vv;
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

void ScanKernel::emitSharedTile(llvm::Value *Th, llvm::Value *Tile) {
  llvm::IRBuilder<> &B = *BPtr;
  TileState St = beginTile(Th, Tile);
  // The copies, all in flight at once; a thread reads only what it
  // copied, so waiting for its own copies is enough (no barrier).
  Staged->begin(StagedLoader::Mode::Issue, Th);
  {
    FusedElementEmitter FS(B, Ctx, C, Staged->loader(), Math, IndexTy);
    for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
      for (int64_t Vv = 0; Vv < SP.Vector; ++Vv) {
        Staged->Run = Kr;
        Staged->Lane = Vv;
        FS.clearCache();
        inputAt(FS, itemIndex(St, Kr, Vv));
      }
  }
  B.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
  B.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
  // First read: the warp's total, run by run in order.
  Staged->begin(StagedLoader::Mode::Read, Th);
  St.Carry = identity();
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    St.Carry = combine(St.Carry, stagedRun(St, *Staged, Kr, nullptr));
  foldWarps(St);
  llvm::Value *Before = combine(tilePrefix(St), St.WarpPre);
  // Second read: each run scanned after everything before it, stored.
  Staged->begin(StagedLoader::Mode::Read, Th);
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    Before = combine(Before, stagedRun(St, *Staged, Kr, Before));
  clearPredecessor(Th, Tile, St.Seg);
}

} // namespace codegen
} // namespace idxmap
