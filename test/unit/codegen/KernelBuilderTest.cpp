//===- test/unit/codegen/KernelBuilderTest.cpp - NVPTX IR helpers ---------===//
//
// Part of idxmap. Kernel creation, parameter attributes, launch bounds,
// special registers, shuffles of every width, shared memory, barriers and
// approximate math: checked on the IR and on the PTX LLVM 19 makes of it.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "SmokeKernels.h"

#include "idxmap/Codegen.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace idxmap;
using namespace idxmap::codegen;

namespace {

size_t countOf(const std::string &Text, const std::string &Needle) {
  size_t N = 0;
  for (size_t P = Text.find(Needle); P != std::string::npos;
       P = Text.find(Needle, P + 1))
    ++N;
  return N;
}

std::string ptxOf(llvm::Module &M) {
  EXPECT_FALSE(llvm::verifyModule(M, &llvm::errs()));
  auto Ptx = emitPtx(M, TargetOptions());
  EXPECT_TRUE(Ptx) << (Ptx ? "" : Ptx.error().Message);
  return Ptx ? *Ptx : "";
}

unsigned countAnnotations(const llvm::Module &M) {
  const llvm::NamedMDNode *N = M.getNamedMetadata("nvvm.annotations");
  return N ? N->getNumOperands() : 0;
}

} // namespace

TEST(KernelBuilder, KernelSignatureAndAttributes) {
  llvm::LLVMContext Ctx;
  llvm::Module M("m", Ctx);
  llvm::Function *F = createKernel(
      M, "k",
      {{"x", KernelParamRole::Input, 16},
       {"y", KernelParamRole::Output, 8},
       {"z", KernelParamRole::InOut, 4},
       {"n", KernelParamRole::Scalar},
       {"s", KernelParamRole::Scalar, 16, llvm::Type::getInt32Ty(Ctx)}});
  ASSERT_TRUE(F);
  EXPECT_TRUE(isKernel(*F));
  EXPECT_EQ(F->getCallingConv(), llvm::CallingConv::PTX_Kernel);
  EXPECT_TRUE(F->getReturnType()->isVoidTy());
  ASSERT_EQ(F->arg_size(), 5u);

  llvm::Argument *X = F->getArg(0), *Y = F->getArg(1), *Z = F->getArg(2),
                 *N = F->getArg(3), *S = F->getArg(4);
  EXPECT_EQ(X->getName(), "x");
  EXPECT_EQ(X->getType(), llvm::PointerType::get(Ctx, GlobalAddrSpace));
  EXPECT_TRUE(X->hasNoAliasAttr());
  EXPECT_TRUE(X->onlyReadsMemory());
  EXPECT_EQ(X->getParamAlign().valueOrOne().value(), 16u);

  EXPECT_TRUE(Y->hasNoAliasAttr());
  EXPECT_TRUE(Y->hasAttribute(llvm::Attribute::WriteOnly));
  EXPECT_FALSE(Y->onlyReadsMemory());
  EXPECT_EQ(Y->getParamAlign().valueOrOne().value(), 8u);

  EXPECT_TRUE(Z->hasNoAliasAttr());
  EXPECT_FALSE(Z->onlyReadsMemory());
  EXPECT_FALSE(Z->hasAttribute(llvm::Attribute::WriteOnly));
  EXPECT_EQ(Z->getParamAlign().valueOrOne().value(), 4u);

  EXPECT_TRUE(N->getType()->isIntegerTy(64));
  EXPECT_FALSE(N->hasNoAliasAttr());
  EXPECT_TRUE(S->getType()->isIntegerTy(32));

  EXPECT_EQ(F->size(), 1u) << "an empty entry block";
  EXPECT_TRUE(F->getEntryBlock().empty());

  // A function of another calling convention is not a kernel.
  auto *Plain = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx), false),
      llvm::GlobalValue::InternalLinkage, "plain", M);
  EXPECT_FALSE(isKernel(*Plain));
}

TEST(KernelBuilder, LaunchBoundsAreReplacedNotAccumulated) {
  llvm::LLVMContext Ctx;
  llvm::Module M("m", Ctx);
  llvm::Function *F = createKernel(M, "k", {{"x", KernelParamRole::Input}});
  llvm::Function *G = createKernel(M, "g", {{"x", KernelParamRole::Input}});
  llvm::IRBuilder<>(&F->getEntryBlock()).CreateRetVoid();
  llvm::IRBuilder<>(&G->getEntryBlock()).CreateRetVoid();

  LaunchBounds None = getLaunchBounds(*F);
  EXPECT_EQ(None.MaxThreadsX, 0u);
  EXPECT_FALSE(None.Exact);

  setLaunchBounds(*G, {64, false});
  setLaunchBounds(*F, {256, false});
  EXPECT_EQ(getLaunchBounds(*F).MaxThreadsX, 256u);
  EXPECT_FALSE(getLaunchBounds(*F).Exact);
  EXPECT_EQ(countAnnotations(M), 2u);

  setLaunchBounds(*F, {128, true, 2});
  LaunchBounds B = getLaunchBounds(*F);
  EXPECT_EQ(B.MaxThreadsX, 128u);
  EXPECT_TRUE(B.Exact);
  EXPECT_EQ(B.MinBlocksPerSm, 2u);
  EXPECT_EQ(countAnnotations(M), 3u) << "g's bound, f's reqntid and minctasm";
  EXPECT_EQ(getLaunchBounds(*G).MaxThreadsX, 64u) << "g is untouched";

  std::string Ptx = ptxOf(M);
  EXPECT_NE(Ptx.find(".reqntid 128, 1, 1"), std::string::npos) << Ptx;
  EXPECT_NE(Ptx.find(".minnctapersm 2"), std::string::npos) << Ptx;
  EXPECT_NE(Ptx.find(".maxntid 64, 1, 1"), std::string::npos) << Ptx;
  EXPECT_EQ(Ptx.find(".maxntid 256"), std::string::npos) << Ptx;
}

TEST(KernelBuilder, SpecialRegistersCarryRanges) {
  llvm::LLVMContext Ctx;
  llvm::Module M("m", Ctx);
  llvm::Function *F = createKernel(M, "k", {{"y", KernelParamRole::Output}});
  llvm::IRBuilder<> B(&F->getEntryBlock());
  auto *Tid = llvm::cast<llvm::CallInst>(emitThreadId(B, GpuDim::X, 128));
  auto *TidY = llvm::cast<llvm::CallInst>(emitThreadId(B, GpuDim::Y));
  auto *Bid = llvm::cast<llvm::CallInst>(emitBlockId(B, GpuDim::Z, 7));
  auto *Lane = llvm::cast<llvm::CallInst>(emitLaneId(B));
  auto *Ntid = llvm::cast<llvm::CallInst>(emitBlockDim(B, GpuDim::X));
  auto *Nctaid = llvm::cast<llvm::CallInst>(emitGridDim(B, GpuDim::Y));
  B.CreateRetVoid();

  EXPECT_EQ(Tid->getIntrinsicID(), llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  EXPECT_EQ(TidY->getIntrinsicID(), llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y);
  EXPECT_EQ(Bid->getIntrinsicID(), llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z);
  EXPECT_EQ(Lane->getIntrinsicID(), llvm::Intrinsic::nvvm_read_ptx_sreg_laneid);
  EXPECT_EQ(Ntid->getIntrinsicID(), llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  EXPECT_EQ(Nctaid->getIntrinsicID(),
            llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y);

  auto RangeOf = [](llvm::CallInst *C) -> std::pair<int64_t, int64_t> {
    llvm::MDNode *R = C->getMetadata(llvm::LLVMContext::MD_range);
    if (!R)
      return {-1, -1};
    return {llvm::mdconst::extract<llvm::ConstantInt>(R->getOperand(0))
                ->getSExtValue(),
            llvm::mdconst::extract<llvm::ConstantInt>(R->getOperand(1))
                ->getSExtValue()};
  };
  EXPECT_EQ(RangeOf(Tid), std::make_pair(int64_t(0), int64_t(128)));
  EXPECT_EQ(RangeOf(TidY), std::make_pair(int64_t(-1), int64_t(-1)));
  EXPECT_EQ(RangeOf(Bid), std::make_pair(int64_t(0), int64_t(7)));
  EXPECT_EQ(RangeOf(Lane), std::make_pair(int64_t(0), int64_t(32)));
  EXPECT_EQ(RangeOf(Ntid), std::make_pair(int64_t(1), int64_t(1025)));
  EXPECT_EQ(RangeOf(Nctaid), std::make_pair(int64_t(-1), int64_t(-1)));
  EXPECT_FALSE(llvm::verifyModule(M, &llvm::errs()));
}

TEST(KernelBuilder, ShufflesEveryValueWidth) {
  llvm::LLVMContext Ctx;
  llvm::Module M("m", Ctx);
  llvm::Type *Types[] = {
      llvm::Type::getFloatTy(Ctx),
      llvm::Type::getInt32Ty(Ctx),
      llvm::Type::getHalfTy(Ctx),
      llvm::Type::getBFloatTy(Ctx),
      llvm::Type::getInt8Ty(Ctx),
      llvm::Type::getDoubleTy(Ctx),
      llvm::Type::getInt64Ty(Ctx),
      llvm::FixedVectorType::get(llvm::Type::getFloatTy(Ctx), 2),
      llvm::FixedVectorType::get(llvm::Type::getHalfTy(Ctx), 2)};
  // Words shuffled per type: 1 for ≤ 32 bits, 2 for 64 bits.
  unsigned ExpectedWords = 1 + 1 + 1 + 1 + 1 + 2 + 2 + 2 + 1;
  std::vector<KernelParamSpec> Params;
  for (unsigned I = 0; I < std::size(Types); ++I)
    Params.push_back({"p" + std::to_string(I), KernelParamRole::InOut});
  llvm::Function *F = createKernel(M, "shuffles", Params);
  llvm::IRBuilder<> B(&F->getEntryBlock());
  for (unsigned I = 0; I < std::size(Types); ++I) {
    llvm::Value *P = F->getArg(I);
    llvm::Value *V = B.CreateLoad(Types[I], P);
    llvm::Value *S = emitShuffleXor(B, V, 1);
    EXPECT_EQ(S->getType(), Types[I]);
    B.CreateStore(S, P);
  }
  B.CreateRetVoid();

  // Count the shuffle intrinsics and check their operands.
  unsigned Calls = 0;
  for (llvm::Instruction &I : F->getEntryBlock())
    if (auto *II = llvm::dyn_cast<llvm::IntrinsicInst>(&I)) {
      auto ID = II->getIntrinsicID();
      if (ID != llvm::Intrinsic::nvvm_shfl_sync_bfly_f32 &&
          ID != llvm::Intrinsic::nvvm_shfl_sync_bfly_i32)
        continue;
      ++Calls;
      EXPECT_EQ(
          llvm::cast<llvm::ConstantInt>(II->getArgOperand(0))->getZExtValue(),
          0xffffffffu);
      EXPECT_EQ(
          llvm::cast<llvm::ConstantInt>(II->getArgOperand(2))->getZExtValue(),
          1u);
      EXPECT_EQ(
          llvm::cast<llvm::ConstantInt>(II->getArgOperand(3))->getZExtValue(),
          31u);
    }
  EXPECT_EQ(Calls, ExpectedWords);
  std::string Ptx = ptxOf(M);
  EXPECT_EQ(countOf(Ptx, "shfl.sync.bfly.b32"), ExpectedWords) << Ptx;
}

TEST(KernelBuilder, ShuffleWidthPacksTheClamp) {
  llvm::LLVMContext Ctx;
  llvm::Module M("m", Ctx);
  llvm::Function *F = createKernel(M, "k", {{"p", KernelParamRole::InOut}});
  llvm::IRBuilder<> B(&F->getEntryBlock());
  llvm::Value *V = B.CreateLoad(B.getFloatTy(), F->getArg(0));
  auto *S8 = llvm::cast<llvm::IntrinsicInst>(emitShuffleXor(B, V, 4, 8, 0xff));
  auto *S2 = llvm::cast<llvm::IntrinsicInst>(emitShuffleXor(B, S8, 1, 2));
  B.CreateStore(S2, F->getArg(0));
  B.CreateRetVoid();
  auto Arg = [](llvm::IntrinsicInst *I, unsigned N) {
    return llvm::cast<llvm::ConstantInt>(I->getArgOperand(N))->getZExtValue();
  };
  EXPECT_EQ(Arg(S8, 0), 0xffu);
  EXPECT_EQ(Arg(S8, 2), 4u);
  EXPECT_EQ(Arg(S8, 3), uint64_t((32 - 8) << 8 | 31)); // 0x181f
  EXPECT_EQ(Arg(S2, 3), uint64_t((32 - 2) << 8 | 31)); // 0x1e1f
  std::string Ptx = ptxOf(M);
  EXPECT_NE(Ptx.find("6175"), std::string::npos) << Ptx; // 0x181f
  EXPECT_NE(Ptx.find("7711"), std::string::npos) << Ptx; // 0x1e1f
}

TEST(KernelBuilder, SharedArrayAndBarrier) {
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, "block_sum_f32");
  ASSERT_TRUE(M);
  llvm::GlobalVariable *GV = M->getGlobalVariable("block_sum_f32.partial",
                                                  /*AllowInternal=*/true);
  ASSERT_TRUE(GV);
  EXPECT_EQ(GV->getAddressSpace(), unsigned(SharedAddrSpace));
  EXPECT_TRUE(GV->hasInternalLinkage());
  EXPECT_EQ(GV->getAlign().valueOrOne().value(), 16u);
  EXPECT_TRUE(llvm::isa<llvm::UndefValue>(GV->getInitializer()));
  auto *AT = llvm::cast<llvm::ArrayType>(GV->getValueType());
  EXPECT_EQ(AT->getNumElements(), 8u);
  LaunchBounds LB = getLaunchBounds(*M->getFunction("block_sum_f32"));
  EXPECT_EQ(LB.MaxThreadsX, 256u);
  EXPECT_TRUE(LB.Exact);

  std::string Ptx = ptxOf(*M);
  EXPECT_NE(Ptx.find(".shared .align 16 .b8"), std::string::npos) << Ptx;
  EXPECT_EQ(countOf(Ptx, "bar.sync \t0;") + countOf(Ptx, "bar.sync 0;"), 1u)
      << Ptx;
  EXPECT_EQ(countOf(Ptx, "shfl.sync.bfly.b32"), 5u + 3u) << Ptx;
  EXPECT_NE(Ptx.find(".reqntid 256, 1, 1"), std::string::npos);
}

TEST(KernelBuilder, ApproximateMath) {
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, "approx_f32");
  ASSERT_TRUE(M);
  std::string Ptx = ptxOf(*M);
  EXPECT_EQ(countOf(Ptx, "tanh.approx.f32"), 4u) << Ptx;
  EXPECT_EQ(countOf(Ptx, "ex2.approx.ftz.f32"), 4u) << Ptx;
  EXPECT_EQ(countOf(Ptx, "ld.global.nc.v4.f32"), 1u) << Ptx;
  EXPECT_EQ(countOf(Ptx, "st.global.v4.f32"), 2u) << Ptx;
}

TEST(KernelBuilder, TanhAsmIsPureSoDeadCallsVanish) {
  llvm::LLVMContext Ctx;
  llvm::Module M("m", Ctx);
  llvm::Function *F = createKernel(M, "k", {{"p", KernelParamRole::InOut}});
  llvm::IRBuilder<> B(&F->getEntryBlock());
  llvm::Value *V = B.CreateLoad(B.getFloatTy(), F->getArg(0));
  emitTanhApprox(B, V);                   // unused: must be deleted
  llvm::Value *T1 = emitTanhApprox(B, V); // two identical calls:
  llvm::Value *T2 = emitTanhApprox(B, V); // CSE keeps one
  B.CreateStore(B.CreateFAdd(T1, T2), F->getArg(0));
  B.CreateRetVoid();
  std::string Ptx = ptxOf(M);
  EXPECT_EQ(countOf(Ptx, "tanh.approx.f32"), 1u) << Ptx;
}
