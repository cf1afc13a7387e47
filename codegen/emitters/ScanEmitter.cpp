//===- ScanEmitter.cpp - Prefix scans, a line per thread ------------------===//
//
// Part of idxmap. The scan emitter builds the kernel ScanPlan describes:
// each thread walks one line of the scanned operand (forward, or from the
// end for a reverse scan), computes each element through the prologue,
// combines it with the carry in a register (the running value starts at
// the init: reduce-window's scalar, or the scan op's carry for the line)
// and stores every root at that element's index, the epilogue reading the
// running value through the hero's override. The combiner is the one
// ScanInfo recognized: reduce-window's to_apply(acc, x) inlined, or the
// scan body's one elementwise op of (x, carry).
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/Codegen.h"

#include "llvm/IR/Constants.h"

namespace idxmap {
namespace codegen {

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
  if (TM.Blocks * T != SP.Lines) {
    llvm::Value *Line = B.CreateAdd(B.CreateMul(GL.Bl, IdxC(T)), GL.Th);
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

  // The walk along the line: step k at position k (N-1-k reversed).
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "scan", K);
  auto *After = llvm::BasicBlock::Create(LC, "scan.done", K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *Step = B.CreatePHI(IndexTy, 2, "step");
  llvm::PHINode *Carry = B.CreatePHI(Init->getType(), 2, "carry");
  Step->addIncoming(IdxC(0), Pre);
  Carry->addIncoming(Init, Pre);
  llvm::Value *Pos =
      SP.Reverse ? B.CreateSub(IdxC(SP.Length - 1), Step) : Step;
  std::vector<llvm::Value *> Idx =
      emitIndexExprs(B, TM.Map, {GL.Th, GL.Bl}, {Pos}, IndexTy);
  FE.clearCache();
  Lanes.clear();
  llvm::Value *X = FE.valueAt(*S.Input, Idx);
  llvm::Value *Next;
  if (Hero.opcode() == HloOpcode::ReduceWindow) {
    Next = emitReduction(B, *Hero.toApply(), {Carry}, {X}, Math).front();
  } else {
    // The body's op of (x = parameter 0, carry = parameter 1), operands
    // in its own order.
    const HloInstruction &Op = *Hero.toApply()->root()->operand(0);
    std::vector<llvm::Value *> Ops;
    for (const HloInstruction *O : Op.operands())
      Ops.push_back(O->parameterNumber() == 0 ? X
                                              : static_cast<llvm::Value *>(Carry));
    Next = emitElementwise(B, Op, Ops, Math);
  }
  FE.setOverride(Hero, [&](llvm::ArrayRef<llvm::Value *>) { return Next; });
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction &Root = *A.Roots[R];
    const PrimitiveType RT = Root.shape().Type;
    llvm::Value *V = FE.valueAt(Root, Idx);
    llvm::Value *Ptr = B.CreateInBoundsGEP(
        storageType(LC, RT), K->getArg(unsigned(C.parameterCount() + R)),
        physicalOffset(B, Root.shape(), Idx, IndexTy));
    B.CreateAlignedStore(storeConvert(B, V, RT), Ptr,
                         llvm::Align(uint64_t(byteWidth(RT))));
  }
  FE.setOverride(Hero, nullptr);
  FE.clearCache();
  llvm::Value *StepNext = B.CreateAdd(Step, IdxC(1), "step.next", true, true);
  llvm::BasicBlock *Latch = B.GetInsertBlock();
  Step->addIncoming(StepNext, Latch);
  Carry->addIncoming(Next, Latch);
  B.CreateCondBr(B.CreateICmpULT(StepNext, IdxC(SP.Length)), Loop, After);
  B.SetInsertPoint(After);
  GL.finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
