//===- ElementPointerTest.cpp - Addresses as shared part plus constant ----===//
//
// Part of idxmap. elementPointer splits an element's offset into the part
// that unrolled items share and a constant GEP of its own; the pointer must
// be the same element, and inbounds only where the shared part alone stays
// inside the array.
//
//===----------------------------------------------------------------------===//
#include "emitters/EmitterSupport.h"

#include "idxmap/Hlo.h"

#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"

#include <gtest/gtest.h>

using namespace idxmap;

namespace {

struct Fixture {
  llvm::LLVMContext LC;
  llvm::Module M{"m", LC};
  llvm::Function *F = nullptr;
  llvm::IRBuilder<> B{LC};
  llvm::Type *I32 = B.getInt32Ty(), *F32 = B.getFloatTy();
  Shape S{PrimitiveType::F32, {4, 8}};

  Fixture() {
    auto *FT = llvm::FunctionType::get(B.getVoidTy(), {B.getPtrTy(1), I32, I32},
                                       /*isVarArg=*/false);
    F = llvm::Function::Create(FT, llvm::Function::ExternalLinkage, "f", M);
    B.SetInsertPoint(llvm::BasicBlock::Create(LC, "entry", F));
  }
  llvm::Value *arg(unsigned I) { return F->getArg(I); }
};

/// The constant offset in elements of \p P from the GEP below it, and
/// that GEP.
std::pair<int64_t, const llvm::Value *> constantStep(const llvm::Value *P) {
  const auto *G = llvm::cast<llvm::GEPOperator>(P);
  const auto *C = llvm::cast<llvm::ConstantInt>(G->getOperand(1));
  return {C->getSExtValue(), G->getPointerOperand()};
}

TEST(ElementPointer, PeelsThePositiveConstantOfAnUnsignedAdd) {
  // (i, j + 3) of f32[4,8]: `x + (i * 8 + j)`, then 3 more elements.
  Fixture Fx;
  llvm::IRBuilder<> &B = Fx.B;
  llvm::Value *J3 = B.CreateAdd(Fx.arg(2), B.getInt32(3), "", true, true);
  llvm::Value *P = codegen::elementPointer(B, Fx.F32, Fx.arg(0), Fx.S,
                                           {Fx.arg(1), J3}, Fx.I32);
  auto [C, Shared] = constantStep(P);
  EXPECT_EQ(C, 3);
  EXPECT_TRUE(llvm::cast<llvm::GEPOperator>(P)->isInBounds());
  const auto *G = llvm::cast<llvm::GEPOperator>(Shared);
  EXPECT_TRUE(G->isInBounds());
  EXPECT_EQ(G->getPointerOperand(), Fx.arg(0));
  // The shared offset no longer mentions j + 3.
  const auto *Off = llvm::cast<llvm::BinaryOperator>(G->getOperand(1));
  EXPECT_EQ(Off->getOperand(0), Fx.arg(2));
}

TEST(ElementPointer, ItemsShareTheVariablePart) {
  Fixture Fx;
  llvm::IRBuilder<> &B = Fx.B;
  const llvm::Value *Shared[2];
  for (int64_t K = 0; K < 2; ++K) {
    llvm::Value *J =
        B.CreateAdd(Fx.arg(2), B.getInt32(uint32_t(1 + K)), "", true, true);
    llvm::Value *I =
        B.CreateAdd(Fx.arg(1), B.getInt32(uint32_t(2)), "", true, true);
    auto [C, Sh] = constantStep(
        codegen::elementPointer(B, Fx.F32, Fx.arg(0), Fx.S, {I, J}, Fx.I32));
    EXPECT_EQ(C, 2 * 8 + 1 + K);
    Shared[K] = Sh;
  }
  // Both `j + i * 8`, built twice (early CSE merges them).
  for (const llvm::Value *Sh : Shared) {
    const auto *Off = llvm::cast<llvm::BinaryOperator>(
        llvm::cast<llvm::GEPOperator>(Sh)->getOperand(1));
    EXPECT_EQ(Off->getOperand(0), Fx.arg(2));
    const auto *Row = llvm::cast<llvm::BinaryOperator>(Off->getOperand(1));
    EXPECT_EQ(Row->getOperand(0), Fx.arg(1));
  }
}

TEST(ElementPointer, ANegativeConstantDropsInbounds) {
  // (i, j - 5) with nsw: j alone may lie past the row, so past the array.
  Fixture Fx;
  llvm::IRBuilder<> &B = Fx.B;
  llvm::Value *J = B.CreateAdd(Fx.arg(2), B.getInt32(uint32_t(-5)), "",
                               /*HasNUW=*/false, /*HasNSW=*/true);
  llvm::Value *P = codegen::elementPointer(B, Fx.F32, Fx.arg(0), Fx.S,
                                           {Fx.arg(1), J}, Fx.I32);
  auto [C, Shared] = constantStep(P);
  EXPECT_EQ(C, -5);
  EXPECT_FALSE(llvm::cast<llvm::GEPOperator>(P)->isInBounds());
  EXPECT_FALSE(llvm::cast<llvm::GEPOperator>(Shared)->isInBounds());
}

TEST(ElementPointer, KeepsAddsWhoseVariablePartMightBeNegative) {
  // j + 3 with nsw only: j might be -3, so the add stays in the offset.
  Fixture Fx;
  llvm::IRBuilder<> &B = Fx.B;
  llvm::Value *J = B.CreateAdd(Fx.arg(2), B.getInt32(3), "",
                               /*HasNUW=*/false, /*HasNSW=*/true);
  llvm::Value *P = codegen::elementPointer(B, Fx.F32, Fx.arg(0), Fx.S,
                                           {Fx.arg(1), J}, Fx.I32);
  const auto *G = llvm::cast<llvm::GEPOperator>(P);
  EXPECT_EQ(G->getPointerOperand(), Fx.arg(0));
  EXPECT_TRUE(G->isInBounds());
  const auto *Off = llvm::cast<llvm::BinaryOperator>(G->getOperand(1));
  EXPECT_EQ(Off->getOperand(0), J);
}

TEST(ElementPointer, ConstantIndexAndBack) {
  // (2, 7) less one vector lane of 4 elements back: element 2 * 8 + 7 - 3.
  Fixture Fx;
  llvm::IRBuilder<> &B = Fx.B;
  llvm::Value *P = codegen::elementPointer(
      B, Fx.F32, Fx.arg(0), Fx.S, {B.getInt32(2), B.getInt32(7)}, Fx.I32,
      codegen::OffsetTermOrder::MinorToMajor, /*Back=*/3);
  auto [C, Base] = constantStep(P);
  EXPECT_EQ(C, 20);
  EXPECT_EQ(Base, Fx.arg(0));
}

} // namespace
