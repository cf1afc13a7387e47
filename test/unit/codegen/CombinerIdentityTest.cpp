//===- CombinerIdentityTest.cpp - Identities the plan and codegen agree on ===//
//
// Part of idxmap. The scan plan takes the tiled kernels only where the
// combiner has an identity (hasCombinerIdentity, analysis); codegen builds
// that identity (combinerIdentity). The two must agree on every combiner
// and type, or a plan would ask for a constant codegen cannot build.
//
//===----------------------------------------------------------------------===//
#include "emitters/EmitterSupport.h"

#include "idxmap/Fusion.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"

#include <gtest/gtest.h>

using namespace idxmap;

namespace {

TEST(CombinerIdentity, PlanAndCodegenAgree) {
  llvm::LLVMContext LC;
  using PT = PrimitiveType;
  const PT Types[] = {PT::Pred, PT::S8,  PT::S16, PT::S32, PT::S64,
                      PT::U8,   PT::U16, PT::U32, PT::U64, PT::F16,
                      PT::BF16, PT::F32, PT::F64};
  const HloOpcode Ops[] = {HloOpcode::Add,     HloOpcode::Multiply,
                           HloOpcode::Maximum, HloOpcode::Minimum,
                           HloOpcode::And,     HloOpcode::Or,
                           HloOpcode::Xor,     HloOpcode::Subtract};
  for (HloOpcode Op : Ops)
    for (PT T : Types)
      EXPECT_EQ(codegen::combinerIdentity(LC, Op, T) != nullptr,
                hasCombinerIdentity(Op, T))
          << opcodeName(Op) << " on " << primitiveTypeName(T);
  // The values: -0.0 for a float sum, the lowest value for a maximum.
  auto *Sum = llvm::dyn_cast<llvm::ConstantFP>(
      codegen::combinerIdentity(LC, HloOpcode::Add, PT::F32));
  ASSERT_TRUE(Sum);
  EXPECT_TRUE(Sum->isNegativeZeroValue());
  auto *Max = llvm::dyn_cast<llvm::ConstantInt>(
      codegen::combinerIdentity(LC, HloOpcode::Maximum, PT::S32));
  ASSERT_TRUE(Max);
  EXPECT_EQ(Max->getSExtValue(), INT32_MIN);
}

} // namespace
