//===- StoreIfTest.cpp - Predicated stores without branches ---------------===//
//
// Part of idxmap. storeIf writes a guarded store as one predicated PTX
// store where PTX has one (scalars and vectors of up to 16 bytes), and as
// a branch around a plain store otherwise (ptxas takes them in the golden
// scans, emit-scan.test).
//
//===----------------------------------------------------------------------===//
#include "emitters/GpuBuilder.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <gtest/gtest.h>

using namespace idxmap;

namespace {

/// The asm text of the only inline-asm call in \p F ("" if none), and the
/// number of blocks.
std::pair<std::string, size_t> asmOf(const llvm::Function &F) {
  std::string Text;
  for (const llvm::BasicBlock &BB : F)
    for (const llvm::Instruction &I : BB)
      if (const auto *CI = llvm::dyn_cast<llvm::CallInst>(&I))
        if (const auto *IA =
                llvm::dyn_cast<llvm::InlineAsm>(CI->getCalledOperand()))
          Text = IA->getAsmString();
  return {Text, F.size()};
}

/// storeIf of a value of \p Ty under an argument condition, in a fresh
/// function.
std::pair<std::string, size_t> storeOf(llvm::Type *(*Make)(llvm::LLVMContext &),
                                       uint64_t Align, bool ConstantTrue) {
  llvm::LLVMContext LC;
  llvm::Module M("m", LC);
  llvm::Type *Ty = Make(LC);
  llvm::IRBuilder<> B(LC);
  auto *FT = llvm::FunctionType::get(B.getVoidTy(),
                                     {B.getInt1Ty(), B.getPtrTy(1), Ty}, false);
  auto *F = llvm::Function::Create(FT, llvm::Function::ExternalLinkage, "f", M);
  B.SetInsertPoint(llvm::BasicBlock::Create(LC, "entry", F));
  llvm::Value *Cond =
      ConstantTrue ? static_cast<llvm::Value *>(B.getTrue()) : F->getArg(0);
  codegen::storeIf(B, Cond, F->getArg(2), F->getArg(1), Align);
  B.CreateRetVoid();
  return asmOf(*F);
}

TEST(StoreIf, PredicatesScalarsAndVectors) {
  auto F32 = [](llvm::LLVMContext &C) -> llvm::Type * {
    return llvm::Type::getFloatTy(C);
  };
  auto V4F32 = [](llvm::LLVMContext &C) -> llvm::Type * {
    return llvm::FixedVectorType::get(llvm::Type::getFloatTy(C), 4);
  };
  auto I8 = [](llvm::LLVMContext &C) -> llvm::Type * {
    return llvm::Type::getInt8Ty(C);
  };
  auto V2F64 = [](llvm::LLVMContext &C) -> llvm::Type * {
    return llvm::FixedVectorType::get(llvm::Type::getDoubleTy(C), 2);
  };
  auto V4BF16 = [](llvm::LLVMContext &C) -> llvm::Type * {
    return llvm::FixedVectorType::get(llvm::Type::getBFloatTy(C), 4);
  };
  EXPECT_EQ(
      storeOf(F32, 4, false),
      std::make_pair(std::string("@$0 st.global.b32 [$1], $2;"), size_t(1)));
  EXPECT_EQ(storeOf(V4F32, 16, false).first,
            "@$0 st.global.v4.b32 [$1], {$2, $3, $4, $5};");
  EXPECT_EQ(storeOf(I8, 1, false).first, "@$0 st.global.b8 [$1], $2;");
  EXPECT_EQ(storeOf(V2F64, 16, false).first,
            "@$0 st.global.v2.b64 [$1], {$2, $3};");
  EXPECT_EQ(storeOf(V4BF16, 8, false).first,
            "@$0 st.global.v4.b16 [$1], {$2, $3, $4, $5};");
}

TEST(StoreIf, BranchesWherePtxHasNoSuchStore) {
  // Eight bytes as a vector of 8 x i8 (no v8.b8 store), an under-aligned
  // vector: a branch around a plain store (three blocks).
  auto V8I8 = [](llvm::LLVMContext &C) -> llvm::Type * {
    return llvm::FixedVectorType::get(llvm::Type::getInt8Ty(C), 8);
  };
  auto V4F32 = [](llvm::LLVMContext &C) -> llvm::Type * {
    return llvm::FixedVectorType::get(llvm::Type::getFloatTy(C), 4);
  };
  EXPECT_EQ(storeOf(V8I8, 8, false), std::make_pair(std::string(), size_t(3)));
  EXPECT_EQ(storeOf(V4F32, 4, false), std::make_pair(std::string(), size_t(3)));
  // A constant condition: the plain store, no test.
  EXPECT_EQ(storeOf(V4F32, 16, true), std::make_pair(std::string(), size_t(1)));
}

} // namespace
