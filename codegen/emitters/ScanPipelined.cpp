//===- ScanPipelined.cpp - Chained row tiles as a warp-specialized pipeline
//===//
//
// Part of idxmap. ScanPlan::Stages: a chained row scan whose tiles are
// whole and contiguous runs as a persistent block per SM split into
// squads that each do one step for a stream of tiles (CCCL's newest scan
// has the same shape):
// - the load warp (lane 0) takes tiles in launch order from the
//   workspace's counter and copies each streamed parameter's part of the
//   tile into a free stage with cp.async.bulk, its bytes counted on the
//   stage's `full` barrier;
// - the reduce warp folds each staged tile, warp part by warp part, and
//   publishes the tile's aggregate (a line's first tile: its inclusive
//   prefix) as soon as the stage lands;
// - the look-back warp knows the inclusive prefix of its block's previous
//   tile, so it folds only the aggregates since (stopping early at any
//   inclusive prefix), and never waits on another block's look-back;
// - the tile's warps scan the stage after that prefix and store, then
//   release the stage (`empty`).
// The squads meet only at the stages' mbarriers, so the copies of the
// next stages stay in flight while a tile waits for its prefix. A
// look-back that finds an unpublished descriptor starts again from its
// predecessor. The descriptors are cleared by the last block to leave,
// all at once: a look-back warp that waited for its predecessor's
// predecessor to hold a prefix before clearing it (as ScanTiles.cpp's
// tiles do at their end) would chain every block's prefixes to another
// block's, tile after tile.
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

namespace {

/// Descriptors a look-back lane reads at once.
constexpr int64_t LookBackPerLane = 8;

/// The items of a staged tile: each streamed parameter's part of the tile
/// as it lies in memory, at \p Base (the stage), item (run, vec) of thread
/// th at the tile offset ScanPlan::TileOffset gives.
class StageTileLoader : public ItemSource {
public:
  StageTileLoader(llvm::IRBuilder<> &B, llvm::Function &K, const ScanInfo &S,
                  const ScanPlan &SP, const std::vector<int64_t> &Widths,
                  llvm::Type *IndexTy)
      : B(B), K(K), SP(SP), IndexTy(IndexTy) {
    int64_t At = 0;
    for (const HloInstruction *P : S.streamedParameters()) {
      const size_t N = size_t(P->parameterNumber());
      Layout[P] = {N < Widths.size() ? Widths[N] : 1, At};
      At += SP.stagePartBytes(P->shape().Type);
    }
  }
  /// Each streamed parameter's byte offset in a stage, in order.
  std::vector<std::pair<const HloInstruction *, int64_t>> parts() const {
    std::vector<std::pair<const HloInstruction *, int64_t>> Out;
    for (const auto &[P, L] : Layout)
      Out.push_back({P, L.second});
    return Out;
  }
  /// Starts the items of thread \p Th of the stage at \p Base (an i8
  /// pointer in address space 3).
  void begin(llvm::Value *Base, llvm::Value *Th) {
    Stage = Base;
    Run = Lane = 0;
    Vectors.clear();
    const int64_t V = SP.Vector;
    ThPart = B.CreateAdd(
        B.CreateMul(B.CreateUDiv(Th, idx(32)), idx(32 * SP.Runs * V)),
        B.CreateMul(B.CreateURem(Th, idx(32)), idx(V)));
  }
  std::function<llvm::Value *(const HloInstruction &,
                              llvm::ArrayRef<llvm::Value *>)>
  loader() override {
    return [this](const HloInstruction &P,
                  llvm::ArrayRef<llvm::Value *> Index) -> llvm::Value * {
      const PrimitiveType PT = P.shape().Type;
      auto It = Layout.find(&P);
      if (It == Layout.end())
        return loadParameterElement(B, K, P, Index, IndexTy,
                                    OffsetTermOrder::Logical);
      const auto [W, Off] = It->second;
      const int64_t Bytes = byteWidth(PT), V = SP.Vector;
      llvm::Value *&Vec = Vectors[{&P, Run * (V / W) + Lane / W}];
      if (Vec &&
          llvm::cast<llvm::Instruction>(Vec)->getParent() != B.GetInsertBlock())
        Vec = nullptr;
      if (!Vec) {
        llvm::Value *Pos =
            B.CreateAdd(ThPart, idx(Run * 32 * V + Lane / W * W));
        llvm::Value *At = B.CreateAdd(idx(Off), B.CreateMul(Pos, idx(Bytes)));
        llvm::Value *Ptr = B.CreateInBoundsGEP(B.getInt8Ty(), Stage, At);
        llvm::Type *ST = storageType(B.getContext(), PT);
        llvm::Type *VT =
            W > 1 ? llvm::FixedVectorType::get(ST, unsigned(W)) : ST;
        Vec = B.CreateAlignedLoad(VT, Ptr, llvm::Align(uint64_t(W * Bytes)));
      }
      llvm::Value *E =
          W > 1 ? B.CreateExtractElement(Vec, uint64_t(Lane % W)) : Vec;
      return loadConvert(B, E, PT);
    };
  }

private:
  llvm::Value *idx(int64_t N) { return llvm::ConstantInt::get(IndexTy, N); }
  llvm::IRBuilder<> &B;
  llvm::Function &K;
  const ScanPlan &SP;
  llvm::Type *IndexTy;
  std::map<const HloInstruction *, std::pair<int64_t, int64_t>> Layout;
  llvm::Value *Stage = nullptr, *ThPart = nullptr;
  std::map<std::pair<const HloInstruction *, int64_t>, llvm::Value *> Vectors;
};

} // namespace

/// The pipeline's shared state: the stages (dynamic shared memory), four
/// barriers per stage, the tile each stage holds, and per stage the warp
/// parts' totals, the aggregate and the prefix before the tile (as i32
/// words, read and written with relaxed atomics: they pass between warps
/// that meet only at mbarriers).
struct ScanKernel::Pipe {
  int64_t S = 0, Warps = 0;
  llvm::Value *Tid = nullptr, *Warp = nullptr, *Lane = nullptr;
  llvm::GlobalVariable *Stages = nullptr, *Bars = nullptr, *Tiles = nullptr,
                       *Vals = nullptr;
  std::unique_ptr<StageTileLoader> Loader;
  enum Bar { Full, Aggregate, Prefix, Empty };
  /// Stage \p Stage's (i32) barrier of kind \p Kind.
  llvm::Value *bar(llvm::IRBuilderBase &B, Bar Kind, llvm::Value *Stage) const {
    return B.CreateInBoundsGEP(
        B.getInt64Ty(), Bars,
        B.CreateAdd(B.getInt32(uint32_t(Kind * S)), Stage));
  }
  /// The slot of the tile stage \p Stage holds (-1: none, the end).
  llvm::Value *tile(llvm::IRBuilderBase &B, llvm::Value *Stage) const {
    return B.CreateInBoundsGEP(B.getInt32Ty(), Tiles, Stage);
  }
  /// Stage \p Stage's value \p I: warp part I's total (I < Warps), the
  /// aggregate (Warps) or the prefix before the tile (Warps + 1).
  llvm::Value *val(llvm::IRBuilderBase &B, llvm::Value *Stage,
                   int64_t I) const {
    return B.CreateInBoundsGEP(
        B.getInt32Ty(), Vals,
        B.CreateAdd(B.CreateMul(Stage, B.getInt32(uint32_t(Warps + 2))),
                    B.getInt32(uint32_t(I))));
  }
  /// The stage's bytes, as an i8 pointer.
  llvm::Value *base(llvm::IRBuilderBase &B, llvm::Value *Stage,
                    int64_t StageBytes) const {
    return B.CreateInBoundsGEP(B.getInt8Ty(), Stages,
                               B.CreateMul(B.CreateZExt(Stage, B.getInt64Ty()),
                                           B.getInt64(uint64_t(StageBytes))));
  }
};

namespace {

/// The i32 bits of a 4-byte value, and back.
llvm::Value *toWord(llvm::IRBuilderBase &B, llvm::Value *V) {
  return B.CreateBitCast(V, B.getInt32Ty());
}
llvm::Value *fromWord(llvm::IRBuilderBase &B, llvm::Value *W, llvm::Type *T) {
  return B.CreateBitCast(W, T);
}

} // namespace

void ScanKernel::emitPipelined() {
  llvm::IRBuilder<> &B = *BPtr;
  Pipe Pp;
  Pp.S = SP.Stages;
  Pp.Warps = P.Main.ThreadsPerBlock / 32;
  Pp.Tid = B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(P.Block[0])),
                               IndexTy);
  Pp.Warp = B.CreateUDiv(Pp.Tid, idx(32));
  Pp.Lane = B.CreateURem(Pp.Tid, idx(32));
  Pp.Loader = std::make_unique<StageTileLoader>(B, *K, S, SP, P.Loop->LoadWidth,
                                                IndexTy);
  auto *I8 = B.getInt8Ty();
  Pp.Stages = new llvm::GlobalVariable(
      M, llvm::ArrayType::get(I8, 0), /*isConstant=*/false,
      llvm::GlobalValue::ExternalLinkage, nullptr, Info.Name + "_stage",
      nullptr, llvm::GlobalValue::NotThreadLocal, SharedAddrSpace);
  Pp.Stages->setAlignment(llvm::Align(128));
  Info.DynamicSharedBytes = unsigned(Pp.S * SP.PipeStageBytes);
  Pp.Bars = createSharedArray(M, B.getInt64Ty(), uint64_t(4 * Pp.S),
                              Info.Name + ".bars", 8);
  Pp.Tiles = createSharedArray(M, B.getInt32Ty(), uint64_t(Pp.S),
                               Info.Name + ".tiles", 4);
  Pp.Vals =
      createSharedArray(M, B.getInt32Ty(), uint64_t(Pp.S * (Pp.Warps + 2)),
                        Info.Name + ".vals", 16);
  // Thread 0 sets up the barriers: a stage is full on the load warp's
  // arrival and its bytes, its aggregate and prefix on one arrival each,
  // and empty once every thread of the tile has read it.
  emitIf(B, B.CreateICmpEQ(Pp.Tid, idx(0)), [&] {
    const unsigned Counts[4] = {1, 1, 1, unsigned(P.Main.ThreadsPerBlock)};
    for (int64_t Sg = 0; Sg < Pp.S; ++Sg)
      for (int Kind = 0; Kind < 4; ++Kind)
        mbarrierInit(B,
                     B.CreateConstInBoundsGEP1_64(B.getInt64Ty(), Pp.Bars,
                                                  uint64_t(Kind * Pp.S + Sg)),
                     Counts[Kind]);
    asmCall(B, B.getVoidTy(), {}, "fence.mbarrier_init.release.cluster;",
            "~{memory}");
  });
  emitBarrier(B);
  auto *Done = llvm::BasicBlock::Create(LC, "pipe.done", K);
  auto Role = [&](const char *Name, llvm::Value *Is,
                  void (ScanKernel::*Body)(const Pipe &)) {
    auto *In = llvm::BasicBlock::Create(LC, Name, K);
    auto *Next = llvm::BasicBlock::Create(LC, std::string(Name) + ".not", K);
    B.CreateCondBr(Is, In, Next);
    B.SetInsertPoint(In);
    (this->*Body)(Pp);
    B.CreateBr(Done);
    B.SetInsertPoint(Next);
  };
  const int64_t W = Pp.Warps;
  Role("pipe.scan", B.CreateICmpULT(Pp.Warp, idx(W)), &ScanKernel::pipeScan);
  Role("pipe.reduce", B.CreateICmpEQ(Pp.Warp, idx(W)), &ScanKernel::pipeReduce);
  Role("pipe.chain", B.CreateICmpEQ(Pp.Warp, idx(W + 1)),
       &ScanKernel::pipeChain);
  pipeLoad(Pp);
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  // Every squad is out of the loop (the load warp holds no more tickets).
  // The last block to leave clears every descriptor, once every block's
  // publishes are fenced before its exit count, so none lands on a
  // cleared descriptor.
  emitBarrier(B);
  assert(SP.PackedDescriptors && "a pipelined scan has 4-byte values");
  leaveTiles(Pp.Tid, {[&] {
                        return B.CreateConstInBoundsGEP1_64(B.getInt8Ty(),
                                                            Workspace, 16);
                      },
                      SP.descriptors(), true});
}

namespace {

/// A squad's loop over the stages: iteration It uses stage It mod S,
/// whose barriers' phases have parity (It / S) mod 2; Carried are values
/// the iterations pass on (endStageLoop gives the next ones).
struct StageLoop {
  llvm::PHINode *It = nullptr;
  std::vector<llvm::PHINode *> Carried;
  llvm::Value *Stage = nullptr, *Parity = nullptr;
  llvm::BasicBlock *Head = nullptr, *Exit = nullptr;
};

StageLoop beginStageLoop(llvm::IRBuilder<> &B, llvm::Function &K, int64_t S,
                         const char *Name,
                         llvm::ArrayRef<llvm::Value *> Carried = {}) {
  StageLoop L;
  llvm::LLVMContext &C = B.getContext();
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  L.Head = llvm::BasicBlock::Create(C, std::string(Name) + ".stage", &K);
  L.Exit = llvm::BasicBlock::Create(C, std::string(Name) + ".exit", &K);
  B.CreateBr(L.Head);
  B.SetInsertPoint(L.Head);
  L.It = B.CreatePHI(B.getInt32Ty(), 2, "it");
  L.It->addIncoming(B.getInt32(0), Pre);
  for (llvm::Value *V : Carried) {
    L.Carried.push_back(B.CreatePHI(V->getType(), 2));
    L.Carried.back()->addIncoming(V, Pre);
  }
  L.Stage = B.CreateURem(L.It, B.getInt32(uint32_t(S)));
  L.Parity = B.CreateAnd(B.CreateUDiv(L.It, B.getInt32(uint32_t(S))), 1);
  return L;
}

void endStageLoop(llvm::IRBuilder<> &B, StageLoop &L,
                  llvm::ArrayRef<llvm::Value *> Next = {}) {
  llvm::BasicBlock *At = B.GetInsertBlock();
  L.It->addIncoming(B.CreateAdd(L.It, B.getInt32(1)), At);
  for (size_t I = 0; I < Next.size(); ++I)
    L.Carried[I]->addIncoming(Next[I], At);
  B.CreateBr(L.Head);
  B.SetInsertPoint(L.Exit);
}

} // namespace

namespace {

llvm::Value *loadWord(llvm::IRBuilderBase &B, llvm::Value *Ptr) {
  llvm::LoadInst *L = B.CreateAlignedLoad(B.getInt32Ty(), Ptr, llvm::Align(4));
  L->setAtomic(llvm::AtomicOrdering::Monotonic);
  return L;
}

void storeWord(llvm::IRBuilderBase &B, llvm::Value *W, llvm::Value *Ptr) {
  llvm::StoreInst *S = B.CreateAlignedStore(W, Ptr, llvm::Align(4));
  S->setAtomic(llvm::AtomicOrdering::Monotonic);
}

} // namespace

void ScanKernel::pipeLoad(const Pipe &Pp) {
  // The whole load warp runs the loop, lane 0 doing the work: a warp left
  // diverged (lane 0 looping while the others wait at the block's closing
  // barrier) gets lane 0 scheduled only now and then.
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Value *Lane0 = B.CreateICmpEQ(Pp.Lane, idx(0));
  StageLoop L = beginStageLoop(B, *K, Pp.S, "load");
  emitIf(B, B.CreateICmpUGE(L.It, B.getInt32(uint32_t(Pp.S))), [&] {
    mbarrierWait(B, *K, Pp.bar(B, Pipe::Empty, L.Stage),
                 B.CreateXor(L.Parity, B.getInt32(1)));
  });
  llvm::Value *Mine = B.getInt32(0);
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Take = llvm::BasicBlock::Create(LC, "load.ticket", K);
  auto *Taken = llvm::BasicBlock::Create(LC, "load.taken", K);
  B.CreateCondBr(Lane0, Take, Taken);
  B.SetInsertPoint(Take);
  llvm::Value *Got = takeTicket();
  B.CreateBr(Taken);
  B.SetInsertPoint(Taken);
  llvm::PHINode *T = B.CreatePHI(B.getInt32Ty(), 2, "ticket");
  T->addIncoming(Mine, Pre);
  T->addIncoming(Got, Take);
  llvm::Value *Ticket = scanShuffle(B, T, Shuffle::Index, 0);
  llvm::Value *Slot = Pp.tile(B, L.Stage);
  llvm::Value *Full = Pp.bar(B, Pipe::Full, L.Stage);
  auto *Copy = llvm::BasicBlock::Create(LC, "load.copy", K);
  auto *Last = llvm::BasicBlock::Create(LC, "load.last", K);
  B.CreateCondBr(B.CreateICmpULT(Ticket, B.getInt32(uint32_t(SP.tiles()))),
                 Copy, Last);
  B.SetInsertPoint(Last);
  emitIf(B, Lane0, [&] {
    storeWord(B, B.getInt32(-1), Slot);
    mbarrierArrive(B, Full);
  });
  B.CreateBr(L.Exit);
  B.SetInsertPoint(Copy);
  emitIf(B, Lane0, [&] {
    storeWord(B, Ticket, Slot);
    mbarrierArrive(B, Full, B.getInt32(uint32_t(SP.PipeStageBytes)));
    llvm::Value *Tile = B.CreateZExtOrTrunc(Ticket, IndexTy);
    llvm::Value *Base = Pp.base(B, L.Stage, SP.PipeStageBytes);
    // The tile's first element: item (run 0, vec 0) of thread 0; the tile
    // lies after it in memory (planned: contiguous, in the scanned dim).
    std::vector<llvm::Value *> First = emitIndexExprs(
        B, MapRanges, P.Main.Map, {idx(0), Tile}, {idx(0), idx(0)}, IndexTy);
    for (const auto &[Pm, Off] : Pp.Loader->parts()) {
      llvm::Type *ST = storageType(LC, Pm->shape().Type);
      llvm::Value *Src =
          elementPointer(B, ST, K->getArg(Pm->parameterNumber()), Pm->shape(),
                         First, IndexTy, OffsetTermOrder::Logical);
      const int64_t Bytes = SP.stagePartBytes(Pm->shape().Type);
      bulkCopyToShared(
          B, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Base, uint64_t(Off)),
          Src, B.getInt32(uint32_t(Bytes)), Full);
    }
  });
  endStageLoop(B, L);
}

namespace {

/// After waiting for stage L's tile: the tile (IndexTy), or a branch to
/// \p Out (default: the loop's exit) when the load warp found no more.
llvm::Value *stageTile(llvm::IRBuilder<> &B, llvm::Function &K,
                       llvm::Value *Slot, StageLoop &L, llvm::Type *IndexTy,
                       llvm::BasicBlock *Out = nullptr) {
  llvm::Value *Ticket = loadWord(B, Slot);
  auto *Go = llvm::BasicBlock::Create(B.getContext(), "stage.tile", &K);
  B.CreateCondBr(B.CreateICmpEQ(Ticket, B.getInt32(-1)), Out ? Out : L.Exit,
                 Go);
  B.SetInsertPoint(Go);
  return B.CreateZExt(Ticket, IndexTy);
}

} // namespace

void ScanKernel::pipeReduce(const Pipe &Pp) {
  // One warp folds every warp part of the staged tile (part w: the items
  // of the tile's warp w), so each scan warp finds the parts before its
  // own, and publishes the tile's aggregate.
  llvm::IRBuilder<> &B = *BPtr;
  StageLoop L = beginStageLoop(B, *K, Pp.S, "reduce");
  mbarrierWait(B, *K, Pp.bar(B, Pipe::Full, L.Stage), L.Parity);
  llvm::Value *Tile = stageTile(B, *K, Pp.tile(B, L.Stage), L, IndexTy);
  llvm::Value *Base = Pp.base(B, L.Stage, SP.PipeStageBytes);
  llvm::Value *Agg = nullptr, *Init = nullptr;
  llvm::Value *Lane0 = B.CreateICmpEQ(Pp.Lane, idx(0));
  for (int64_t W = 0; W < Pp.Warps; ++W) {
    llvm::Value *Th = B.CreateAdd(Pp.Lane, idx(32 * W));
    TileState St = beginTile(Th, Tile);
    if (!Init)
      Init = St.Init;
    Pp.Loader->begin(Base, Th);
    llvm::Value *Tot = identity();
    for (int64_t Kr = 0; Kr < SP.Runs; ++Kr) {
      FusedElementEmitter FS(B, Ctx, C, Pp.Loader->loader(), Math, IndexTy);
      for (int64_t Vv = 0; Vv < SP.Vector; ++Vv) {
        Pp.Loader->Run = Kr;
        Pp.Loader->Lane = Vv;
        FS.clearCache();
        Tot = combine(Tot, inputAt(FS, itemIndex(St, Kr, Vv)));
      }
    }
    llvm::Value *Part =
        scanShuffle(B, warpScan(Pp.Lane, Tot), Shuffle::Index, 31);
    emitIf(B, Lane0,
           [&] { storeWord(B, toWord(B, Part), Pp.val(B, L.Stage, W)); });
    Agg = Agg ? combine(Agg, Part) : Part;
  }
  llvm::Value *Seg = segmentOf(Tile);
  emitIf(B, Lane0, [&] {
    storeWord(B, toWord(B, Agg), Pp.val(B, L.Stage, Pp.Warps));
    // A line's first tile publishes its inclusive prefix, its last none
    // (no tile of the line reads it).
    llvm::Value *First = B.CreateICmpEQ(Seg, idx(0));
    emitIf(B, First, [&] { publish(Tile, DescPrefix, combine(Init, Agg)); });
    emitIf(B,
           B.CreateAnd(B.CreateNot(First),
                       B.CreateICmpNE(Seg, idx(SP.TilesPerLine - 1))),
           [&] { publish(Tile, DescAggregate, Agg); });
    mbarrierArrive(B, Pp.bar(B, Pipe::Aggregate, L.Stage));
  });
  endStageLoop(B, L);
}

void ScanKernel::pipeChain(const Pipe &Pp) {
  // The look-back warp: carries its block's previous tile (+ 1; 0 none)
  // and that tile's inclusive prefix.
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Type *VT = identity()->getType();
  llvm::Value *Lane0 = B.CreateICmpEQ(Pp.Lane, idx(0));
  StageLoop L = beginStageLoop(B, *K, Pp.S, "chain", {idx(0), identity()});
  llvm::Value *PrevP1 = L.Carried[0], *PrevIncl = L.Carried[1];
  mbarrierWait(B, *K, Pp.bar(B, Pipe::Full, L.Stage), L.Parity);
  llvm::Value *Tile = stageTile(B, *K, Pp.tile(B, L.Stage), L, IndexTy);
  llvm::Value *Seg = segmentOf(Tile);
  llvm::Value *LineFirst = B.CreateSub(Tile, Seg);
  TileState St = beginTile(Pp.Lane, Tile);
  // The look-back stops at the previous tile when it is of this line.
  llvm::Value *Known = B.CreateICmpUGT(PrevP1, LineFirst);
  llvm::Value *BoundP1 = B.CreateSelect(Known, PrevP1, LineFirst);
  llvm::Value *BoundVal = B.CreateSelect(Known, PrevIncl, identity());
  llvm::Value *First = B.CreateICmpEQ(Seg, idx(0));
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Look = llvm::BasicBlock::Create(LC, "chain.look", K);
  auto *Join = llvm::BasicBlock::Create(LC, "chain.prefix", K);
  B.CreateCondBr(First, Join, Look);
  B.SetInsertPoint(Look);
  llvm::Value *Found = pipeLookBack(Pp.Lane, Tile, BoundP1, BoundVal);
  llvm::BasicBlock *LookEnd = B.GetInsertBlock();
  B.CreateBr(Join);
  B.SetInsertPoint(Join);
  llvm::PHINode *Ex = B.CreatePHI(VT, 2, "exclusive");
  Ex->addIncoming(St.Init, Pre);
  Ex->addIncoming(Found, LookEnd);
  mbarrierWait(B, *K, Pp.bar(B, Pipe::Aggregate, L.Stage), L.Parity);
  llvm::Value *Agg = fromWord(B, loadWord(B, Pp.val(B, L.Stage, Pp.Warps)), VT);
  llvm::Value *Incl = combine(Ex, Agg);
  emitIf(B, Lane0, [&] {
    emitIf(B,
           B.CreateAnd(B.CreateNot(First),
                       B.CreateICmpNE(Seg, idx(SP.TilesPerLine - 1))),
           [&] { publish(Tile, DescPrefix, Incl); });
    storeWord(B, toWord(B, Ex), Pp.val(B, L.Stage, Pp.Warps + 1));
    mbarrierArrive(B, Pp.bar(B, Pipe::Prefix, L.Stage));
  });
  endStageLoop(B, L, {B.CreateAdd(Tile, idx(1)), Incl});
}

llvm::Value *ScanKernel::pipeLookBack(llvm::Value *Lane, llvm::Value *Tile,
                                      llvm::Value *BoundP1,
                                      llvm::Value *BoundVal) {
  // Positions p = k * 32 + lane of a window count back from its top tile
  // Hi (p = 0); tiles down to the bound (whose inclusive prefix is
  // BoundVal) are the window's own. The nearest inclusive prefix, or the
  // bound, ends the walk; an unpublished descriptor before it
  // starts the walk again from the predecessor.
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Type *VT = identity()->getType();
  const int64_t Win = 32 * LookBackPerLane;
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Window = llvm::BasicBlock::Create(LC, "pipe.lookback", K);
  auto *Read = llvm::BasicBlock::Create(LC, "pipe.lookback.read", K);
  auto *Fold = llvm::BasicBlock::Create(LC, "pipe.lookback.fold", K);
  auto *Done = llvm::BasicBlock::Create(LC, "pipe.lookback.done", K);
  llvm::Value *Top = B.CreateSub(Tile, idx(1));
  B.CreateBr(Window);
  B.SetInsertPoint(Window);
  llvm::PHINode *Hi = B.CreatePHI(IndexTy, 3, "hi");
  llvm::PHINode *Acc = B.CreatePHI(VT, 3, "acc");
  Hi->addIncoming(Top, Pre);
  Acc->addIncoming(identity(), Pre);
  llvm::Value *Pb = B.CreateSub(B.CreateAdd(Hi, idx(1)), BoundP1);
  // The window starts at the bound: nothing left to fold.
  llvm::Value *AtBound = combine(Acc, BoundVal);
  llvm::BasicBlock *WindowEnd = B.GetInsertBlock();
  B.CreateCondBr(B.CreateICmpEQ(Pb, idx(0)), Done, Read);
  B.SetInsertPoint(Read);
  std::vector<llvm::Value *> Status, Value, Pos;
  llvm::Value *Nearest = idx(Win);
  for (int64_t Kk = 0; Kk < LookBackPerLane; ++Kk) {
    llvm::Value *P = B.CreateAdd(Lane, idx(32 * Kk));
    llvm::Value *In = B.CreateICmpULT(P, Pb);
    auto [St, V] = poll(B.CreateSelect(In, B.CreateSub(Hi, P), Hi));
    St = B.CreateSelect(In, St, B.getInt32(DescInvalid));
    Status.push_back(St);
    Value.push_back(V);
    Pos.push_back(P);
    llvm::Value *IsPrefix = B.CreateICmpEQ(St, B.getInt32(DescPrefix));
    Nearest = B.CreateSelect(B.CreateAnd(IsPrefix, B.CreateICmpULT(P, Nearest)),
                             P, Nearest);
  }
  for (unsigned D = 16; D; D /= 2) {
    llvm::Value *O = scanShuffle(B, Nearest, Shuffle::Down, D);
    Nearest = B.CreateSelect(B.CreateICmpULT(O, Nearest), O, Nearest);
  }
  Nearest = scanShuffle(B, Nearest, Shuffle::Index, 0);
  llvm::Value *Bp = B.CreateSelect(B.CreateICmpULT(Pb, Nearest), Pb, Nearest);
  llvm::Value *Bad = B.getFalse();
  llvm::Value *Part = identity(), *Mine = identity();
  for (int64_t Kk = 0; Kk < LookBackPerLane; ++Kk) {
    llvm::Value *Before = B.CreateICmpULT(Pos[size_t(Kk)], Bp);
    Bad = B.CreateOr(
        Bad, B.CreateAnd(Before, B.CreateICmpEQ(Status[size_t(Kk)],
                                                B.getInt32(DescInvalid))));
    Part = B.CreateSelect(Before, combine(Part, Value[size_t(Kk)]), Part);
    Mine = B.CreateSelect(B.CreateICmpEQ(Pos[size_t(Kk)], Bp),
                          Value[size_t(Kk)], Mine);
  }
  llvm::Value *AnyBad = B.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_any_sync,
                                          {}, {B.getInt32(-1), Bad});
  llvm::BasicBlock *ReadEnd = B.GetInsertBlock();
  B.CreateCondBr(AnyBad, Window, Fold);
  Hi->addIncoming(Top, ReadEnd);
  Acc->addIncoming(identity(), ReadEnd);
  B.SetInsertPoint(Fold);
  llvm::Value *Sum =
      combine(Acc, scanShuffle(B, warpScan(Lane, Part), Shuffle::Index, 31));
  llvm::Value *Boundary =
      B.CreateSelect(B.CreateICmpEQ(Bp, Pb), BoundVal,
                     scanShuffle(B, warpScan(Lane, Mine), Shuffle::Index, 31));
  llvm::Value *Inside = B.CreateICmpULT(Bp, idx(Win));
  llvm::Value *Ended = combine(Sum, Boundary);
  llvm::BasicBlock *FoldEnd = B.GetInsertBlock();
  llvm::Value *Lower = B.CreateSub(Hi, idx(Win));
  B.CreateCondBr(Inside, Done, Window);
  Hi->addIncoming(Lower, FoldEnd);
  Acc->addIncoming(Sum, FoldEnd);
  B.SetInsertPoint(Done);
  llvm::PHINode *Result = B.CreatePHI(VT, 2, "prefix");
  Result->addIncoming(AtBound, WindowEnd);
  Result->addIncoming(Ended, FoldEnd);
  return Result;
}

void ScanKernel::pipeScan(const Pipe &Pp) {
  // The tile's warps: each scans its part of the staged tile after the
  // prefix before the tile and the parts before its own, stores it, and
  // releases the stage.
  llvm::IRBuilder<> &B = *BPtr;
  llvm::Type *VT = identity()->getType();
  StageLoop L = beginStageLoop(B, *K, Pp.S, "scan");
  mbarrierWait(B, *K, Pp.bar(B, Pipe::Full, L.Stage), L.Parity);
  llvm::Value *Tile = stageTile(B, *K, Pp.tile(B, L.Stage), L, IndexTy);
  TileState St = beginTile(Pp.Tid, Tile);
  Pp.Loader->begin(Pp.base(B, L.Stage, SP.PipeStageBytes), Pp.Tid);
  mbarrierWait(B, *K, Pp.bar(B, Pipe::Aggregate, L.Stage), L.Parity);
  // The last warp's part is before none.
  llvm::Value *WarpPre = warpsBefore(Pp.Warp, Pp.Warps - 1, [&](int64_t W) {
    return fromWord(B, loadWord(B, Pp.val(B, L.Stage, W)), VT);
  });
  mbarrierWait(B, *K, Pp.bar(B, Pipe::Prefix, L.Stage), L.Parity);
  llvm::Value *Ex =
      fromWord(B, loadWord(B, Pp.val(B, L.Stage, Pp.Warps + 1)), VT);
  llvm::Value *Before = combine(Ex, WarpPre);
  for (int64_t Kr = 0; Kr < SP.Runs; ++Kr)
    Before = combine(Before, stagedRun(St, *Pp.Loader, Kr, Before));
  mbarrierArrive(B, Pp.bar(B, Pipe::Empty, L.Stage));
  endStageLoop(B, L);
}

} // namespace codegen
} // namespace idxmap
