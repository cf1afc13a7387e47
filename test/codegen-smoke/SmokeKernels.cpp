//===- test/codegen-smoke/SmokeKernels.cpp - Hand-built test kernels ------===//
//
// Part of idxmap. See SmokeKernels.h.
//
//===----------------------------------------------------------------------===//

#include "SmokeKernels.h"

#include "KernelBuilder.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Verifier.h"

#include <functional>

using namespace llvm;
using namespace idxmap;
using namespace idxmap::codegen;

namespace {

/// Common start of every smoke kernel: the global thread index (i64) and the
/// thread index within the block (i32).
struct ThreadIndex {
  Value *Tid;    // i32, [0, 256)
  Value *Global; // i64: ctaid * 256 + tid
};

ThreadIndex emitThreadIndex(IRBuilder<> &B) {
  Value *Tid = emitThreadId(B, GpuDim::X, SmokeBlockSize);
  Value *Bid = emitBlockId(B, GpuDim::X);
  Value *Global =
      B.CreateAdd(B.CreateMul(B.CreateZExt(Bid, B.getInt64Ty()),
                              B.getInt64(SmokeBlockSize), "", /*HasNUW=*/true,
                              /*HasNSW=*/true),
                  B.CreateZExt(Tid, B.getInt64Ty()), "gtid", true, true);
  return {Tid, Global};
}

Function *makeKernel(Module &M, StringRef Name,
                     std::vector<KernelParamSpec> Params, bool ExactBlock) {
  Params.push_back({"n", KernelParamRole::Scalar});
  Function *F = createKernel(M, Name, Params);
  setLaunchBounds(*F, {SmokeBlockSize, ExactBlock});
  return F;
}

/// Emits `for (i = Begin; i < End; ++i) Body(i)` at B's insertion point and
/// leaves B after the loop.
void emitScalarLoop(IRBuilder<> &B, Value *Begin, Value *End,
                    const std::function<void(Value *)> &Body) {
  Function *F = B.GetInsertBlock()->getParent();
  LLVMContext &Ctx = F->getContext();
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *Header = BasicBlock::Create(Ctx, "tail.header", F);
  BasicBlock *LoopBody = BasicBlock::Create(Ctx, "tail.body", F);
  BasicBlock *Exit = BasicBlock::Create(Ctx, "tail.exit", F);
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  PHINode *I = B.CreatePHI(B.getInt64Ty(), 2, "i");
  I->addIncoming(Begin, Pre);
  B.CreateCondBr(B.CreateICmpSLT(I, End), LoopBody, Exit);
  B.SetInsertPoint(LoopBody);
  Body(I);
  I->addIncoming(B.CreateAdd(I, B.getInt64(1), "", true, true),
                 B.GetInsertBlock());
  B.CreateBr(Header);
  B.SetInsertPoint(Exit);
}

void buildScale(Module &M) {
  Function *F = makeKernel(
      M, "scale_f32",
      {{"x", KernelParamRole::Input}, {"y", KernelParamRole::Output}},
      /*ExactBlock=*/false);
  LLVMContext &Ctx = M.getContext();
  IRBuilder<> B(&F->getEntryBlock());
  Value *X = F->getArg(0), *Y = F->getArg(1), *N = F->getArg(2);
  ThreadIndex T = emitThreadIndex(B);
  Value *Base = B.CreateShl(T.Global, 2, "base", true, true);
  Value *Full =
      B.CreateICmpSLE(B.CreateAdd(Base, B.getInt64(4), "", true, true), N);
  BasicBlock *Vec = BasicBlock::Create(Ctx, "vector", F);
  BasicBlock *Tail = BasicBlock::Create(Ctx, "tail", F);
  B.CreateCondBr(Full, Vec, Tail);

  Type *F32 = B.getFloatTy();
  auto *V4 = FixedVectorType::get(F32, 4);
  B.SetInsertPoint(Vec);
  Value *In = B.CreateAlignedLoad(V4, B.CreateInBoundsGEP(V4, X, T.Global),
                                  Align(16), "x4");
  Value *Out = B.CreateFMul(In, ConstantFP::get(V4, 2.0));
  B.CreateAlignedStore(Out, B.CreateInBoundsGEP(V4, Y, T.Global), Align(16));
  B.CreateRetVoid();

  B.SetInsertPoint(Tail);
  emitScalarLoop(B, Base, N, [&](Value *I) {
    Value *Xi =
        B.CreateAlignedLoad(F32, B.CreateInBoundsGEP(F32, X, I), Align(4));
    B.CreateAlignedStore(B.CreateFMul(Xi, ConstantFP::get(F32, 2.0)),
                         B.CreateInBoundsGEP(F32, Y, I), Align(4));
  });
  B.CreateRetVoid();
}

void buildBlockSum(Module &M) {
  Function *F = makeKernel(
      M, "block_sum_f32",
      {{"x", KernelParamRole::Input}, {"y", KernelParamRole::Output}},
      /*ExactBlock=*/true);
  LLVMContext &Ctx = M.getContext();
  constexpr unsigned NumWarps = SmokeBlockSize / WarpSize;
  Type *F32 = Type::getFloatTy(Ctx);
  GlobalVariable *Partial =
      createSharedArray(M, F32, NumWarps, "block_sum_f32.partial", 16);

  IRBuilder<> B(&F->getEntryBlock());
  Value *X = F->getArg(0), *Y = F->getArg(1), *N = F->getArg(2);
  ThreadIndex T = emitThreadIndex(B);
  BasicBlock *Entry = B.GetInsertBlock();
  BasicBlock *Load = BasicBlock::Create(Ctx, "load", F);
  BasicBlock *Reduce = BasicBlock::Create(Ctx, "reduce", F);
  B.CreateCondBr(B.CreateICmpSLT(T.Global, N), Load, Reduce);
  B.SetInsertPoint(Load);
  Value *Xi = B.CreateAlignedLoad(F32, B.CreateInBoundsGEP(F32, X, T.Global),
                                  Align(4), "xi");
  B.CreateBr(Reduce);

  B.SetInsertPoint(Reduce);
  PHINode *V = B.CreatePHI(F32, 2, "v");
  V->addIncoming(ConstantFP::get(F32, 0.0), Entry);
  V->addIncoming(Xi, Load);
  Value *Sum = V;
  for (unsigned Mask = WarpSize / 2; Mask >= 1; Mask /= 2)
    Sum = B.CreateFAdd(Sum, emitShuffleXor(B, Sum, Mask));
  Value *Lane = B.CreateAnd(T.Tid, WarpSize - 1, "lane");
  Value *Warp = B.CreateLShr(T.Tid, 5, "warp");
  BasicBlock *WriteSlot = BasicBlock::Create(Ctx, "write.slot", F);
  BasicBlock *Sync = BasicBlock::Create(Ctx, "sync", F);
  B.CreateCondBr(B.CreateICmpEQ(Lane, B.getInt32(0)), WriteSlot, Sync);
  B.SetInsertPoint(WriteSlot);
  auto *PartialTy = Partial->getValueType();
  B.CreateAlignedStore(
      Sum, B.CreateInBoundsGEP(PartialTy, Partial, {B.getInt32(0), Warp}),
      Align(4));
  B.CreateBr(Sync);

  B.SetInsertPoint(Sync);
  emitBarrier(B);
  BasicBlock *Final = BasicBlock::Create(Ctx, "final", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "done", F);
  B.CreateCondBr(B.CreateICmpEQ(Warp, B.getInt32(0)), Final, Done);

  // Warp 0: lanes 0..7 read the partial sums, the rest contribute 0; a
  // shuffle of width 8 reduces each group of 8 lanes, lane 0 writes.
  B.SetInsertPoint(Final);
  Value *SlotIdx = B.CreateAnd(Lane, NumWarps - 1);
  Value *Slot = B.CreateAlignedLoad(
      F32, B.CreateInBoundsGEP(PartialTy, Partial, {B.getInt32(0), SlotIdx}),
      Align(4), "slot");
  Value *W = B.CreateSelect(B.CreateICmpULT(Lane, B.getInt32(NumWarps)), Slot,
                            ConstantFP::get(F32, 0.0));
  for (unsigned Mask = NumWarps / 2; Mask >= 1; Mask /= 2)
    W = B.CreateFAdd(W, emitShuffleXor(B, W, Mask, NumWarps));
  BasicBlock *Write = BasicBlock::Create(Ctx, "write", F);
  B.CreateCondBr(B.CreateICmpEQ(Lane, B.getInt32(0)), Write, Done);
  B.SetInsertPoint(Write);
  Value *Bid = B.CreateZExt(emitBlockId(B, GpuDim::X), B.getInt64Ty());
  B.CreateAlignedStore(W, B.CreateInBoundsGEP(F32, Y, Bid), Align(4));
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  B.CreateRetVoid();
}

void buildApprox(Module &M) {
  Function *F = makeKernel(M, "approx_f32",
                           {{"x", KernelParamRole::Input},
                            {"t", KernelParamRole::Output},
                            {"e", KernelParamRole::Output}},
                           /*ExactBlock=*/false);
  LLVMContext &Ctx = M.getContext();
  IRBuilder<> B(&F->getEntryBlock());
  Value *X = F->getArg(0), *Tn = F->getArg(1), *E = F->getArg(2),
        *N = F->getArg(3);
  ThreadIndex T = emitThreadIndex(B);
  Value *End = B.CreateShl(B.CreateAdd(T.Global, B.getInt64(1), "", true, true),
                           2, "", true, true);
  BasicBlock *Body = BasicBlock::Create(Ctx, "body", F);
  BasicBlock *Exit = BasicBlock::Create(Ctx, "exit", F);
  B.CreateCondBr(B.CreateICmpSLE(End, N), Body, Exit);
  B.SetInsertPoint(Body);
  auto *V4 = FixedVectorType::get(B.getFloatTy(), 4);
  Value *In = B.CreateAlignedLoad(V4, B.CreateInBoundsGEP(V4, X, T.Global),
                                  Align(16), "x4");
  // One statement per instruction: the order of a call's arguments is the
  // host compiler's choice, and the IR (so the PTX) must not depend on it.
  Value *Tanh = emitTanhApprox(B, In);
  B.CreateAlignedStore(Tanh, B.CreateInBoundsGEP(V4, Tn, T.Global), Align(16));
  Value *Exp = emitExpApprox(B, In);
  B.CreateAlignedStore(Exp, B.CreateInBoundsGEP(V4, E, T.Global), Align(16));
  B.CreateBr(Exit);
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
}

void buildTanhPrecise(Module &M) {
  Function *F = makeKernel(
      M, "tanh_precise_f32",
      {{"x", KernelParamRole::Input}, {"y", KernelParamRole::Output}},
      /*ExactBlock=*/false);
  LLVMContext &Ctx = M.getContext();
  Type *F32 = Type::getFloatTy(Ctx);
  FunctionCallee Tanh =
      M.getOrInsertFunction("__nv_tanhf", FunctionType::get(F32, {F32}, false));
  IRBuilder<> B(&F->getEntryBlock());
  Value *X = F->getArg(0), *Y = F->getArg(1), *N = F->getArg(2);
  ThreadIndex T = emitThreadIndex(B);
  BasicBlock *Body = BasicBlock::Create(Ctx, "body", F);
  BasicBlock *Exit = BasicBlock::Create(Ctx, "exit", F);
  B.CreateCondBr(B.CreateICmpSLT(T.Global, N), Body, Exit);
  B.SetInsertPoint(Body);
  Value *Xi =
      B.CreateAlignedLoad(F32, B.CreateInBoundsGEP(F32, X, T.Global), Align(4));
  B.CreateAlignedStore(B.CreateCall(Tanh, {Xi}),
                       B.CreateInBoundsGEP(F32, Y, T.Global), Align(4));
  B.CreateBr(Exit);
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
}

} // namespace

const std::vector<std::string> &codegen::smokeKernelNames() {
  static const std::vector<std::string> Names = {
      "scale_f32", "block_sum_f32", "approx_f32", "tanh_precise_f32"};
  return Names;
}

std::unique_ptr<Module> codegen::buildSmokeKernel(LLVMContext &Ctx,
                                                  const std::string &Name) {
  auto M = std::make_unique<Module>(Name, Ctx);
  if (Name == "scale_f32")
    buildScale(*M);
  else if (Name == "block_sum_f32")
    buildBlockSum(*M);
  else if (Name == "approx_f32")
    buildApprox(*M);
  else if (Name == "tanh_precise_f32")
    buildTanhPrecise(*M);
  else
    return nullptr;
  assert(!verifyModule(*M, &errs()) && "smoke kernel IR is invalid");
  return M;
}
