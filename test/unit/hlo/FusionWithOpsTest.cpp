//===- FusionWithOpsTest.cpp - Issue-15 ops inside random fusions ---------===//
//
// Part of idxmap. The generator of support/RandomFusionWithOps.h: the knob
// changes only the fusions it picks, the fusions cover every op and every
// source of gather/scatter indices, and a sample is sound (and exact where
// flagged) against the interpreter; fuzz_fusion_indexing --new-ops-percent
// runs thousands.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"
#include "support/HloDeps.h"
#include "support/RandomHlo.h"

#include "idxmap/HloIndexing.h"
#include "idxmap/Print.h"

#include <gtest/gtest.h>

#include <set>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

const std::set<HloOpcode> NewOps = {HloOpcode::Dot,
                                    HloOpcode::Convolution,
                                    HloOpcode::ReduceWindow,
                                    HloOpcode::Map,
                                    HloOpcode::Gather,
                                    HloOpcode::Scatter,
                                    HloOpcode::Sort,
                                    HloOpcode::AllGather,
                                    HloOpcode::AllReduce,
                                    HloOpcode::CollectivePermute,
                                    HloOpcode::ReducePrecision,
                                    HloOpcode::Erf,
                                    HloOpcode::BitcastConvert};

bool hasNewOp(const RandomFusion &F) {
  for (HloOpcode X : F.Ops)
    if (NewOps.count(X))
      return true;
  return false;
}

RandomHloOptions options(uint64_t Seed, unsigned Percent) {
  RandomHloOptions O;
  O.ExactOpsOnly = Seed % 3 == 0;
  O.StructuredPercent = 30;
  O.NewOpsPercent = Percent;
  return O;
}

TEST(FusionWithOpsTest, KnobChangesOnlyThePickedFusions) {
  int Picked = 0;
  for (uint64_t Seed = 1; Seed <= 400; ++Seed) {
    RandomFusion Plain = generateRandomFusion(Seed, options(Seed, 0));
    RandomFusion With = generateRandomFusion(Seed, options(Seed, 25));
    EXPECT_FALSE(hasNewOp(Plain)) << Plain.Text;
    if (With.Text != Plain.Text) {
      ++Picked;
    } else {
      EXPECT_EQ(With.Exact, Plain.Exact);
    }
  }
  // About a quarter.
  EXPECT_GT(Picked, 60);
  EXPECT_LT(Picked, 140);
}

TEST(FusionWithOpsTest, CoversEveryOpAndIndexSource) {
  std::set<HloOpcode> Seen;
  std::set<HloOpcode> IndexSources;
  int WithNewOps = 0, GatherBatching = 0, ScatterBatching = 0;
  for (uint64_t Seed = 1; Seed <= 300; ++Seed) {
    RandomFusion F = generateRandomFusion(Seed, options(Seed, 100));
    GatherBatching += F.Text.find("operand_batching_dims") != std::string::npos;
    ScatterBatching += F.Text.find("input_batching_dims") != std::string::npos;
    auto M = parseHloModule(F.Text, "seed" + std::to_string(Seed));
    ASSERT_TRUE(bool(M)) << M.error().str() << "\n" << F.Text;
    WithNewOps += hasNewOp(F);
    const HloComputation *C = (*M)->findComputation(F.FusedName);
    ASSERT_NE(C, nullptr);
    for (const HloInstruction *I : C->instructions()) {
      if (NewOps.count(I->opcode()))
        Seen.insert(I->opcode());
      if (I->opcode() == HloOpcode::Gather || I->opcode() == HloOpcode::Scatter)
        IndexSources.insert(I->operand(1)->opcode());
    }
  }
  EXPECT_EQ(Seen, NewOps);
  // Nearly every picked fusion gets one (a leaf-only root gets none).
  EXPECT_GT(WithNewOps, 270);
  EXPECT_GT(GatherBatching, 0);
  EXPECT_GT(ScatterBatching, 0);
  for (HloOpcode X : {HloOpcode::Parameter, HloOpcode::Constant,
                      HloOpcode::Iota, HloOpcode::Clamp, HloOpcode::Broadcast})
    EXPECT_TRUE(IndexSources.count(X)) << opcodeName(X);
}

/// The fuzzer's check (sound always, exact where flagged) on a sample.
TEST(FusionWithOpsTest, SampleIsSoundAndExactWhereFlagged) {
  int ExactWithDeps = 0;
  for (uint64_t Seed = 1; Seed <= 60; ++Seed) {
    RandomFusion F = generateRandomFusion(Seed, options(Seed, 100));
    auto M = parseHloModule(F.Text, "seed" + std::to_string(Seed));
    ASSERT_TRUE(bool(M)) << M.error().str();
    const HloComputation *C = (*M)->findComputation(F.FusedName);
    Context Ctx;
    for (unsigned Out = 0; Out < F.NumOutputs; ++Out) {
      GroupedIndexing G = computeGroupedIndexing(Ctx, *C, nullptr, Out);
      for (int64_t P = 0; P < C->parameterCount(); ++P) {
        auto It = G.find(C->parameter(P));
        std::vector<OperandMap> Maps =
            It == G.end() ? std::vector<OperandMap>{} : It->second;
        bool Large = false;
        for (const OperandMap &OM : Maps)
          Large |= !OM.Map.isUndefined() && !OM.Map.isKnownEmpty() &&
                   !boxSize(OM.Map, uint64_t(1) << 20);
        if (Large)
          continue;
        bool Exact = F.Exact[Out][size_t(P)];
        DepCheckResult R = checkDependencies(*C, P, Maps, Exact, Seed, Out);
        EXPECT_FALSE(R.Undefined) << F.Text;
        EXPECT_TRUE(R.Ok) << "seed " << Seed << ", output " << Out
                          << ", parameter " << P << ": " << R.Message << "\n"
                          << F.Text;
        ExactWithDeps += Exact && R.Pairs > 0;
      }
    }
  }
  EXPECT_GT(ExactWithDeps, 10);
}

} // namespace
