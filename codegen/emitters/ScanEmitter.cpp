//===- ScanEmitter.cpp - Prefix scans: a line per thread or warp ----------===//
//
// Part of idxmap. The scan emitter builds the kernel ScanPlan describes:
// a thread (or, for a row, a warp) walks one line of the scanned operand
// (forward, or from the end for a reverse scan), computes each element
// through the prologue, combines it with the carry in a register (the
// running value starts at the init: reduce-window's scalar, or the scan
// op's carry for the line; a warp first scans its chunk of 32 with
// shfl.sync.up) and stores every root at that element's index, the
// epilogue reading the running value through the hero's override. The
// combiner is the one ScanInfo recognized: reduce-window's to_apply(acc,
// x) inlined, or the scan body's one elementwise op of (x, carry).
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/Codegen.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace idxmap {
namespace codegen {

namespace {

/// `shfl.sync.up` (lane l gets lane l - Delta's value, lanes below Delta
/// their own) or `shfl.sync.idx` (every lane gets lane Delta's) of \p V
/// across the full warp, a value of any type up to 64 bits moved as 32-bit
/// words.
llvm::Value *shuffle(llvm::IRBuilderBase &B, llvm::Value *V, bool Up,
                     unsigned Delta) {
  llvm::Type *T = V->getType();
  const unsigned Bits = unsigned(T->getPrimitiveSizeInBits().getFixedValue());
  llvm::Type *I32 = B.getInt32Ty(), *IN = B.getIntNTy(Bits);
  auto Word = [&](llvm::Value *W) -> llvm::Value * {
    return B.CreateIntrinsic(Up ? llvm::Intrinsic::nvvm_shfl_sync_up_i32
                                : llvm::Intrinsic::nvvm_shfl_sync_idx_i32,
                             {},
                             {B.getInt32(0xffffffffu), W, B.getInt32(Delta),
                              B.getInt32(Up ? 0 : 31)});
  };
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

} // namespace

Expected<KernelInfo> emitScanKernel(llvm::Module &M, const HloInstruction &F,
                                    const FusionAnalysis &A,
                                    const KernelPlan &P, Context &Ctx,
                                    const MathOptions &Math) {
  requestBackEndOptLevel(M, P.BackEndOptLevel);
  const HloComputation &C = *A.Computation;
  const ScanInfo &S = *A.Scan;
  const ScanPlan &SP = *P.Scan;
  const ThreadMapping &TM = P.Main;
  const int64_t T = TM.ThreadsPerBlock;
  const HloInstruction &Hero = *S.Hero;

  llvm::LLVMContext &LC = M.getContext();
  KernelInfo Info;
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = P.Emitter;
  if (auto Err = setLaunchShape(Info, F, Math.Device, P.Grid[0], T))
    return *Err;
  std::vector<KernelParamSpec> Specs;
  for (const HloInstruction *Pm : C.parameters()) {
    Specs.push_back({Pm->name(), KernelParamRole::Input, 16, nullptr});
    Info.Params.push_back({Pm->name(), false, Pm->shape(), 16});
  }
  for (const HloInstruction *R : A.Roots) {
    Specs.push_back({R->name(), KernelParamRole::Output, 16, nullptr});
    Info.Params.push_back({R->name(), true, R->shape(), 16});
  }
  llvm::Function *K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(T), /*Exact=*/true, 0});
  llvm::IRBuilder<> B(&K->getEntryBlock());
  llvm::Type *IndexTy = P.Index32 ? B.getInt32Ty() : B.getInt64Ty();
  auto IdxC = [&](int64_t N) { return llvm::ConstantInt::get(IndexTy, N); };

  GridLoop GL(B, *K, IndexTy, T, P.Grid[0], TM.Blocks);
  const bool Warp = SP.LanesPerLine == 32;
  const int64_t PerBlock = T / SP.LanesPerLine;
  if (TM.Blocks * PerBlock != SP.Lines) {
    // Whole warps leave together in the warp scan (its shuffles need every
    // lane).
    llvm::Value *Line =
        B.CreateAdd(B.CreateMul(GL.Bl, IdxC(PerBlock)),
                    Warp ? B.CreateUDiv(GL.Th, IdxC(32)) : GL.Th);
    auto *Body = llvm::BasicBlock::Create(LC, "line", K);
    B.CreateCondBr(B.CreateICmpULT(Line, IdxC(SP.Lines)), Body, GL.Done);
    B.SetInsertPoint(Body);
  }
  LaneLoader Lanes(B, *K, C, P.Loop->LoadWidth, IndexTy);
  FusedElementEmitter FE(B, Ctx, C, Lanes.loader(), Math, IndexTy);

  // The line's carry at the start: the init (a scalar, or the scan op's
  // carry at the line's index: the element's index without the scanned
  // dim, which does not depend on the position).
  std::vector<llvm::Value *> First =
      emitIndexExprs(B, TM.Map, {GL.Th, GL.Bl}, {IdxC(0)}, IndexTy);
  std::vector<llvm::Value *> LineIdx;
  if (!S.Init->shape().isScalar())
    for (size_t D = 0; D < First.size(); ++D)
      if (int64_t(D) != S.Dim)
        LineIdx.push_back(First[D]);
  llvm::Value *Init = FE.valueAt(*S.Init, LineIdx);

  // Earlier op Later: reduce-window's to_apply(acc, x), or the scan body's
  // op of (x = parameter 0, carry = parameter 1) in its operand order.
  auto Combine = [&](llvm::Value *Earlier, llvm::Value *Later) {
    if (Hero.opcode() == HloOpcode::ReduceWindow)
      return emitReduction(B, *Hero.toApply(), {Earlier}, {Later}, Math)
          .front();
    const HloInstruction &Op = *Hero.toApply()->root()->operand(0);
    std::vector<llvm::Value *> Ops;
    for (const HloInstruction *O : Op.operands())
      Ops.push_back(O->parameterNumber() == 0 ? Later : Earlier);
    return emitElementwise(B, Op, Ops, Math);
  };
  // Stores every root at \p Idx, the hero's value there being \p V.
  auto StoreRoots = [&](llvm::ArrayRef<llvm::Value *> Idx, llvm::Value *V) {
    FE.setOverride(Hero, [V](llvm::ArrayRef<llvm::Value *>) { return V; });
    for (size_t R = 0; R < A.Roots.size(); ++R) {
      const HloInstruction &Root = *A.Roots[R];
      const PrimitiveType RT = Root.shape().Type;
      llvm::Value *Val = FE.valueAt(Root, Idx);
      llvm::Value *Ptr = B.CreateInBoundsGEP(
          storageType(LC, RT), K->getArg(unsigned(C.parameterCount() + R)),
          physicalOffset(B, Root.shape(), Idx, IndexTy));
      B.CreateAlignedStore(storeConvert(B, Val, RT), Ptr,
                           llvm::Align(uint64_t(byteWidth(RT))));
    }
    FE.setOverride(Hero, nullptr);
    FE.clearCache();
  };

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
  Step->addIncoming(IdxC(0), Pre);
  Carry->addIncoming(Init, Pre);
  FE.clearCache();
  Lanes.clear();
  llvm::Value *NextCarry;
  if (!Warp) {
    llvm::Value *Pos =
        SP.Reverse ? B.CreateSub(IdxC(SP.Length - 1), Step) : Step;
    std::vector<llvm::Value *> Idx =
        emitIndexExprs(B, TM.Map, {GL.Th, GL.Bl}, {Pos}, IndexTy);
    llvm::Value *X = FE.valueAt(*S.Input, Idx);
    NextCarry = Combine(Carry, X);
    StoreRoots(Idx, NextCarry);
  } else {
    // The lane's element, when the chunk holds it (the last chunk's lanes
    // past the row hold a zero that reaches no lane of the row: shuffles
    // move values up only).
    llvm::Value *Lane = B.CreateURem(GL.Th, IdxC(32));
    llvm::Value *Valid = B.CreateICmpULT(
        B.CreateAdd(B.CreateMul(Step, IdxC(32)), Lane), IdxC(SP.Length));
    std::vector<llvm::Value *> Idx =
        emitIndexExprs(B, TM.Map, {GL.Th, GL.Bl}, {Step}, IndexTy);
    llvm::BasicBlock *Head = B.GetInsertBlock();
    auto *Load = llvm::BasicBlock::Create(LC, "scan.load", K);
    auto *Have = llvm::BasicBlock::Create(LC, "scan.have", K);
    B.CreateCondBr(Valid, Load, Have);
    B.SetInsertPoint(Load);
    llvm::Value *X = FE.valueAt(*S.Input, Idx);
    llvm::BasicBlock *Loaded = B.GetInsertBlock();
    B.CreateBr(Have);
    B.SetInsertPoint(Have);
    FE.clearCache();
    Lanes.clear();
    llvm::PHINode *XP = B.CreatePHI(X->getType(), 2, "elem");
    XP->addIncoming(X, Loaded);
    XP->addIncoming(llvm::Constant::getNullValue(X->getType()), Head);
    // Inclusive scan across the warp: 5 shuffles up.
    llvm::Value *V = XP;
    for (unsigned Off = 1; Off < 32; Off *= 2) {
      llvm::Value *Up = shuffle(B, V, /*Up=*/true, Off);
      V = B.CreateSelect(B.CreateICmpUGE(Lane, IdxC(Off)), Combine(Up, V), V);
    }
    V = Combine(Carry, V);
    auto *Store = llvm::BasicBlock::Create(LC, "scan.store", K);
    auto *Stored = llvm::BasicBlock::Create(LC, "scan.stored", K);
    B.CreateCondBr(Valid, Store, Stored);
    B.SetInsertPoint(Store);
    StoreRoots(Idx, V);
    B.CreateBr(Stored);
    B.SetInsertPoint(Stored);
    // The next chunk's carry: the last lane's (a full chunk's).
    NextCarry = shuffle(B, V, /*Up=*/false, 31);
  }
  llvm::Value *StepNext = B.CreateAdd(Step, IdxC(1), "step.next", true, true);
  llvm::BasicBlock *Latch = B.GetInsertBlock();
  Step->addIncoming(StepNext, Latch);
  Carry->addIncoming(NextCarry, Latch);
  B.CreateCondBr(B.CreateICmpULT(StepNext, IdxC(Steps)), Loop, After);
  B.SetInsertPoint(After);
  GL.finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
