//===- ScanEmitter.cpp - Prefix scans: a line per thread or warp ----------===//
//
// Part of idxmap. The scan emitter builds the kernel ScanPlan describes.
// Here: what every scan kernel shares (parameters, the line's init, the
// combiner, the roots' stores) and the kernels that walk a line serially:
// a thread (or, for a row, a warp) walks one line of the scanned operand
// (forward, or from the end for a reverse scan), computes each element
// through the prologue, combines it with the carry in a register (the
// running value starts at the init: reduce-window's scalar, or the scan
// op's carry for the line; a warp first scans its chunk of 32 with
// shfl.sync.up) and stores every root at that element's index, the
// epilogue reading the running value through the hero's override. The
// combiner is the one ScanInfo recognized: reduce-window's to_apply(acc,
// x) inlined, or the scan body's one elementwise op of (x, carry). The
// tiled kernel is in ScanTiles.cpp.
//
//===----------------------------------------------------------------------===//
#include "ScanKernel.h"

#include "Emitters.h"
#include "ExprCodegen.h"
#include "KernelBuilder.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

#include <tuple>

namespace idxmap {
namespace codegen {

llvm::Value *scanShuffle(llvm::IRBuilderBase &B, llvm::Value *V, Shuffle Kind,
                         unsigned Delta) {
  llvm::Type *T = V->getType();
  if (auto *ST = llvm::dyn_cast<llvm::StructType>(T)) {
    // A variadic scan's value: each element on its own.
    llvm::Value *Out = llvm::UndefValue::get(ST);
    for (unsigned I = 0; I < ST->getNumElements(); ++I)
      Out = B.CreateInsertValue(
          Out, scanShuffle(B, B.CreateExtractValue(V, I), Kind, Delta), I);
    return Out;
  }
  const unsigned Bits = unsigned(T->getPrimitiveSizeInBits().getFixedValue());
  llvm::Type *I32 = B.getInt32Ty(), *IN = B.getIntNTy(Bits);
  // An f32 moves as itself: no bitcasts for the IR passes and instruction
  // selection to look through (the same shfl.sync.b32).
  const bool F32 = T->isFloatTy();
  auto Word = [&](llvm::Value *W) -> llvm::Value * {
    const llvm::Intrinsic::ID Id =
        Kind == Shuffle::Up ? (F32 ? llvm::Intrinsic::nvvm_shfl_sync_up_f32
                                   : llvm::Intrinsic::nvvm_shfl_sync_up_i32)
        : Kind == Shuffle::Down
            ? (F32 ? llvm::Intrinsic::nvvm_shfl_sync_down_f32
                   : llvm::Intrinsic::nvvm_shfl_sync_down_i32)
            : (F32 ? llvm::Intrinsic::nvvm_shfl_sync_idx_f32
                   : llvm::Intrinsic::nvvm_shfl_sync_idx_i32);
    return B.CreateIntrinsic(Id, {},
                             {B.getInt32(0xffffffffu), W, B.getInt32(Delta),
                              B.getInt32(Kind == Shuffle::Up ? 0 : 31)});
  };
  if (F32)
    return Word(V);
  llvm::Value *I = B.CreateBitCast(V, IN);
  if (Bits <= 32) {
    llvm::Value *W = Word(Bits < 32 ? B.CreateZExt(I, I32) : I);
    I = Bits < 32 ? B.CreateTrunc(W, IN) : W;
  } else {
    llvm::Value *Lo = Word(B.CreateTrunc(I, I32));
    llvm::Value *Hi = Word(B.CreateTrunc(B.CreateLShr(I, 32), I32));
    I = B.CreateOr(B.CreateZExt(Lo, IN), B.CreateShl(B.CreateZExt(Hi, IN), 32));
  }
  return B.CreateBitCast(I, T);
}

namespace {

/// The bytes of the block-shared arrays named after kernel \p Name (each
/// rounded up to its alignment), as the sidecar reports them.
unsigned sharedBytesOf(const llvm::Module &M, const std::string &Name) {
  uint64_t Bytes = 0;
  for (const llvm::GlobalVariable &G : M.globals()) {
    if (G.getAddressSpace() != 3 || !G.getName().starts_with(Name + "."))
      continue;
    const uint64_t Align = G.getAlign() ? G.getAlign()->value() : 1;
    Bytes = (Bytes + Align - 1) / Align * Align +
            M.getDataLayout().getTypeAllocSize(G.getValueType());
  }
  return unsigned(Bytes);
}

} // namespace

ScanKernel::ScanKernel(llvm::Module &M, const HloInstruction &F,
                       const FusionAnalysis &A, const KernelPlan &P,
                       Context &Ctx, const MathOptions &Math)
    : M(M), F(F), A(A), P(P), Ctx(Ctx), Math(Math), C(*A.Computation),
      S(*A.Scan), SP(*P.Scan), LC(M.getContext()) {}

std::optional<Diagnostic> ScanKernel::createFunction() {
  const int64_t T = P.Block[0];
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = P.Emitter;
  if (auto Err = setLaunchShape(Info, F, Math.Device, P.Grid[0], T))
    return Err;
  std::vector<KernelParamSpec> Specs = fusionKernelParams(C, A.Roots, Info);
  Info.WorkspaceBytes = uint64_t(SP.workspaceBytes());
  if (Info.WorkspaceBytes)
    Specs.push_back({"workspace", KernelParamRole::InOut, 16, nullptr});
  K = createKernel(M, Info.Name, Specs);
  if (Info.WorkspaceBytes)
    Workspace = K->getArg(K->arg_size() - 1);
  setLaunchBounds(*K, {unsigned(T), /*Exact=*/true, unsigned(SP.MinBlocks)});
  BPtr = std::make_unique<llvm::IRBuilder<>>(&K->getEntryBlock());
  IndexTy = P.Index32 ? BPtr->getInt32Ty() : BPtr->getInt64Ty();
  Lanes =
      std::make_unique<LaneLoader>(*BPtr, *K, C, P.Loop->LoadWidth, IndexTy);
  FE = std::make_unique<FusedElementEmitter>(*BPtr, Ctx, C, Lanes->loader(),
                                             Math, IndexTy);
  return std::nullopt;
}

Expected<KernelInfo> ScanKernel::emit() {
  requestBackEndOptLevel(M, P.BackEndOptLevel);
  if (auto Err = createFunction())
    return *Err;
  if (SP.Mode == ScanMode::LinePerThread || SP.Mode == ScanMode::WarpPerRow)
    emitLines();
  else
    emitTiles();
  Info.SharedBytes = sharedBytesOf(M, Info.Name);
  return Info;
}

llvm::Value *ScanKernel::pack(llvm::ArrayRef<llvm::Value *> Vs) {
  if (Vs.size() == 1)
    return Vs.front();
  std::vector<llvm::Type *> Types;
  for (llvm::Value *V : Vs)
    Types.push_back(V->getType());
  llvm::Value *Out = llvm::UndefValue::get(llvm::StructType::get(LC, Types));
  for (size_t I = 0; I < Vs.size(); ++I)
    Out = BPtr->CreateInsertValue(Out, Vs[I], unsigned(I));
  return Out;
}

std::vector<llvm::Value *> ScanKernel::unpack(llvm::Value *V) {
  auto *ST = llvm::dyn_cast<llvm::StructType>(V->getType());
  if (!ST)
    return {V};
  std::vector<llvm::Value *> Out;
  for (unsigned I = 0; I < ST->getNumElements(); ++I)
    Out.push_back(BPtr->CreateExtractValue(V, I));
  return Out;
}

llvm::Value *ScanKernel::inputAt(FusedElementEmitter &E,
                                 llvm::ArrayRef<llvm::Value *> Idx) {
  std::vector<llvm::Value *> Vs;
  for (const HloInstruction *In : S.Inputs)
    Vs.push_back(widen(E.valueAt(*In, Idx)));
  return pack(Vs);
}

llvm::Value *ScanKernel::combine(llvm::Value *Earlier, llvm::Value *Later) {
  llvm::IRBuilder<> &B = *BPtr;
  const HloInstruction &Hero = *S.Hero;
  if (S.variadic())
    return pack(emitReduction(B, *Hero.toApply(), unpack(Earlier),
                              unpack(Later), Math));
  if (SP.Accumulate32)
    return S.Combiner == HloOpcode::Add ? B.CreateFAdd(Earlier, Later)
                                        : B.CreateFMul(Earlier, Later);
  if (Hero.opcode() == HloOpcode::ReduceWindow)
    return emitReduction(B, *Hero.toApply(), {Earlier}, {Later}, Math).front();
  const HloInstruction &Op = *Hero.toApply()->root()->operand(0);
  std::vector<llvm::Value *> Ops;
  for (const HloInstruction *O : Op.operands())
    Ops.push_back(O->parameterNumber() == 0 ? Later : Earlier);
  return emitElementwise(B, Op, Ops, Math);
}

llvm::Constant *ScanKernel::identity() {
  return combinerIdentity(LC, S.Combiner,
                          SP.Accumulate32 ? PrimitiveType::F32 : S.Type);
}

llvm::Value *ScanKernel::widen(llvm::Value *V) {
  return SP.Accumulate32 ? BPtr->CreateFPExt(V, BPtr->getFloatTy()) : V;
}

llvm::Value *ScanKernel::warpScan(llvm::Value *Lane, llvm::Value *V) {
  llvm::IRBuilder<> &B = *BPtr;
  for (unsigned Off = 1; Off < 32; Off *= 2) {
    llvm::Value *Up = scanShuffle(B, V, Shuffle::Up, Off);
    V = B.CreateSelect(B.CreateICmpUGE(Lane, idx(Off)), combine(Up, V), V);
  }
  return V;
}

llvm::Value *ScanKernel::lineInit(llvm::ArrayRef<llvm::Value *> First) {
  std::vector<llvm::Value *> LineIdx;
  if (!S.Init->shape().isScalar())
    for (size_t D = 0; D < First.size(); ++D)
      if (int64_t(D) != S.Dim)
        LineIdx.push_back(First[D]);
  std::vector<llvm::Value *> Vs;
  for (const HloInstruction *I : S.Inits)
    Vs.push_back(widen(FE->valueAt(*I, LineIdx)));
  return pack(Vs);
}

void ScanKernel::storeRoots(llvm::ArrayRef<llvm::Value *> Idx, llvm::Value *V) {
  storeRun({std::vector<llvm::Value *>(Idx.begin(), Idx.end())}, {V});
}

void ScanKernel::storeRun(const std::vector<std::vector<llvm::Value *>> &Idx,
                          llvm::ArrayRef<llvm::Value *> Vs,
                          llvm::Value *Guard) {
  llvm::IRBuilder<> &B = *BPtr;
  // Under a guard, every root's store waits for one branch at the end.
  std::vector<std::tuple<llvm::Value *, llvm::Value *, uint64_t>> Guarded;
  auto Store = [&](llvm::Value *V, llvm::Value *Ptr, uint64_t Align) {
    if (Guard)
      Guarded.emplace_back(V, Ptr, Align);
    else
      B.CreateAlignedStore(V, Ptr, llvm::Align(Align));
  };
  const HloInstruction &Hero = *S.Hero;
  const int64_t W = int64_t(Vs.size());
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction &Root = *A.Roots[R];
    const PrimitiveType RT = Root.shape().Type;
    llvm::Type *ST = storageType(LC, RT);
    llvm::Value *Out = K->getArg(unsigned(C.parameterCount() + R));
    const bool Vector =
        W > 1 && R < SP.StoreWidth.size() && SP.StoreWidth[R] == W;
    llvm::Value *Vec =
        Vector
            ? llvm::UndefValue::get(llvm::FixedVectorType::get(ST, unsigned(W)))
            : nullptr;
    for (int64_t L = 0; L < W; ++L) {
      // The hero's value there (a variadic window's elements: its
      // get-tuple-elements').
      std::vector<const HloInstruction *> At = {&Hero};
      std::vector<llvm::Value *> Vals = {
          SP.Accumulate32
              ? B.CreateFPTrunc(Vs[size_t(L)], valueType(LC, S.Type))
              : Vs[size_t(L)]};
      if (S.variadic()) {
        At.assign(Hero.users().begin(), Hero.users().end());
        std::vector<llvm::Value *> Parts = unpack(Vs[size_t(L)]);
        Vals.clear();
        for (const HloInstruction *U : At)
          Vals.push_back(Parts[size_t(U->tupleIndex())]);
      }
      for (size_t J = 0; J < At.size(); ++J) {
        llvm::Value *V = Vals[J];
        FE->setOverride(*At[J],
                        [V](llvm::ArrayRef<llvm::Value *>) { return V; });
      }
      Lanes->Lane = L;
      llvm::Value *Val = storeConvert(B, FE->valueAt(Root, Idx[size_t(L)]), RT);
      for (const HloInstruction *I : At)
        FE->setOverride(*I, nullptr);
      FE->clearCache();
      if (Vector) {
        Vec = B.CreateInsertElement(Vec, Val, uint64_t(L));
        continue;
      }
      llvm::Value *Ptr =
          elementPointer(B, ST, Out, Root.shape(), Idx[size_t(L)], IndexTy);
      Store(Val, Ptr, uint64_t(byteWidth(RT)));
    }
    if (Vector) {
      llvm::Value *Ptr =
          elementPointer(B, ST, Out, Root.shape(), Idx[0], IndexTy);
      Store(Vec, Ptr, uint64_t(W * byteWidth(RT)));
    }
  }
  if (!Guarded.empty())
    emitIf(B, Guard, [&] {
      for (auto &[V, Ptr, Align] : Guarded)
        B.CreateAlignedStore(V, Ptr, llvm::Align(Align));
    });
  Lanes->Lane = 0;
}

void ScanKernel::emitLines() {
  llvm::IRBuilder<> &B = *BPtr;
  const ThreadMapping &TM = P.Main;
  const int64_t T = TM.ThreadsPerBlock;
  GridLoop GL(B, *K, IndexTy, T, P.Grid[0], TM.Blocks);
  const bool Warp = SP.Mode == ScanMode::WarpPerRow;
  const int64_t PerBlock = T / SP.LanesPerLine;
  if (TM.Blocks * PerBlock != SP.Lines) {
    // Whole warps leave together in the warp scan (its shuffles need every
    // lane).
    llvm::Value *Line =
        B.CreateAdd(B.CreateMul(GL.Bl, idx(PerBlock)),
                    Warp ? B.CreateUDiv(GL.Th, idx(32)) : GL.Th);
    auto *Body = llvm::BasicBlock::Create(LC, "line", K);
    B.CreateCondBr(B.CreateICmpULT(Line, idx(SP.Lines)), Body, GL.Done);
    B.SetInsertPoint(Body);
  }
  llvm::Value *Init = lineInit(
      emitIndexExprs(B, MapRanges, TM.Map, {GL.Th, GL.Bl}, {idx(0)}, IndexTy));

  // The walk along the line: step k at position k (N-1-k reversed), or,
  // for a warp, chunk k of 32 elements (the map counts from the end when
  // reversed).
  const int64_t Steps = Warp ? (SP.Length + 31) / 32 : SP.Length;
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "scan", K);
  auto *After = llvm::BasicBlock::Create(LC, "scan.done", K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *Step = B.CreatePHI(IndexTy, 2, "step");
  llvm::PHINode *Carry = B.CreatePHI(Init->getType(), 2, "carry");
  Step->addIncoming(idx(0), Pre);
  Carry->addIncoming(Init, Pre);
  FE->clearCache();
  Lanes->clear();
  llvm::Value *NextCarry;
  if (!Warp) {
    llvm::Value *Pos =
        SP.Reverse ? B.CreateSub(idx(SP.Length - 1), Step) : Step;
    std::vector<llvm::Value *> Idx =
        emitIndexExprs(B, MapRanges, TM.Map, {GL.Th, GL.Bl}, {Pos}, IndexTy);
    llvm::Value *X = inputAt(*FE, Idx);
    NextCarry = combine(Carry, X);
    storeRoots(Idx, NextCarry);
  } else {
    // The lane's element, when the chunk holds it (the last chunk's lanes
    // past the row hold a zero that reaches no lane of the row: shuffles
    // move values up only).
    llvm::Value *Lane = B.CreateURem(GL.Th, idx(32));
    llvm::Value *Valid = B.CreateICmpULT(
        B.CreateAdd(B.CreateMul(Step, idx(32)), Lane), idx(SP.Length));
    std::vector<llvm::Value *> Idx =
        emitIndexExprs(B, MapRanges, TM.Map, {GL.Th, GL.Bl}, {Step}, IndexTy);
    llvm::BasicBlock *Head = B.GetInsertBlock();
    auto *Load = llvm::BasicBlock::Create(LC, "scan.load", K);
    auto *Have = llvm::BasicBlock::Create(LC, "scan.have", K);
    B.CreateCondBr(Valid, Load, Have);
    B.SetInsertPoint(Load);
    llvm::Value *X = inputAt(*FE, Idx);
    llvm::BasicBlock *Loaded = B.GetInsertBlock();
    B.CreateBr(Have);
    B.SetInsertPoint(Have);
    FE->clearCache();
    Lanes->clear();
    llvm::PHINode *XP = B.CreatePHI(X->getType(), 2, "elem");
    XP->addIncoming(X, Loaded);
    XP->addIncoming(llvm::Constant::getNullValue(X->getType()), Head);
    llvm::Value *V = combine(Carry, warpScan(Lane, XP));
    auto *Store = llvm::BasicBlock::Create(LC, "scan.store", K);
    auto *Stored = llvm::BasicBlock::Create(LC, "scan.stored", K);
    B.CreateCondBr(Valid, Store, Stored);
    B.SetInsertPoint(Store);
    storeRoots(Idx, V);
    B.CreateBr(Stored);
    B.SetInsertPoint(Stored);
    // The next chunk's carry: the last lane's (a full chunk's).
    NextCarry = scanShuffle(B, V, Shuffle::Index, 31);
  }
  llvm::Value *StepNext = B.CreateAdd(Step, idx(1), "step.next", true, true);
  llvm::BasicBlock *Latch = B.GetInsertBlock();
  Step->addIncoming(StepNext, Latch);
  Carry->addIncoming(NextCarry, Latch);
  B.CreateCondBr(B.CreateICmpULT(StepNext, idx(Steps)), Loop, After);
  B.SetInsertPoint(After);
  GL.finish();
}

Expected<KernelInfo> emitScanKernel(llvm::Module &M, const HloInstruction &F,
                                    const FusionAnalysis &A,
                                    const KernelPlan &P, Context &Ctx,
                                    const MathOptions &Math) {
  return ScanKernel(M, F, A, P, Ctx, Math).emit();
}

} // namespace codegen
} // namespace idxmap
