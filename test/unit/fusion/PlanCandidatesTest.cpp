//===- PlanCandidatesTest.cpp - Plans for an autotuner --------------------===//
//
// Part of idxmap. planCandidates: the rules' plan first without overrides
// (and equal to planFusion's), every candidate's knobs giving its plan back
// through planFusion, the caller's overrides kept in every candidate, no
// two candidates with one plan, the order by estimate and the count limit.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"

#include "support/FusionModules.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

/// A sum over dim \p Dim of f32[R, N].
std::unique_ptr<HloModule> sum2d(int64_t R, int64_t N, int Dim) {
  std::string S = "f32[" + std::to_string(R) + "," + std::to_string(N) + "]";
  std::string V = "f32[" + std::to_string(Dim == 1 ? R : N) + "]";
  return oneFusionModule(S, V,
                         "  x = " + S +
                             " parameter(0)\n  z = f32[] constant(0)\n"
                             "  ROOT r = " +
                             V + " reduce(x, z), dimensions={" +
                             std::to_string(Dim) + "}, to_apply=add\n");
}

/// A sum of the rows of f32[R, N].
std::unique_ptr<HloModule> rowSum(int64_t R, int64_t N) {
  return sum2d(R, N, 1);
}

/// A sum of the columns of f32[R, N].
std::unique_ptr<HloModule> columnSum(int64_t R, int64_t N) {
  return sum2d(R, N, 0);
}

/// The plan's identity: launch and every choice's value.
std::string signature(const KernelPlan &P) {
  std::string S = P.Emitter;
  for (int K = 0; K < 3; ++K)
    S += " " + std::to_string(P.Grid[K]) + "/" + std::to_string(P.Block[K]);
  for (const PlanChoice &C : P.Choices)
    S += " " + C.Name + "=" + std::to_string(C.Value);
  return S;
}

DeviceModel h200() { return *lookupDeviceModel("H200"); }

TEST(PlanCandidates, FirstWithoutOverridesIsPlanFusionsPlan) {
  auto M = rowSum(8192, 8192);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(fusionOf(*M));
  Context Ctx;
  auto C = planCandidates(Ctx, A, Tuning{}, h200(), &fusionOf(*M));
  ASSERT_TRUE(C) << C.error().str();
  ASSERT_GT(C->size(), 1u);
  auto P = planFusion(Ctx, A, Tuning{}, h200(), &fusionOf(*M));
  ASSERT_TRUE(P);
  // Ties keep the rules' plan first; a variant may still estimate lower.
  auto Rules = std::find_if(C->begin(), C->end(), [](const PlanCandidate &X) {
    return printTuning(X.Knobs).empty();
  });
  ASSERT_NE(Rules, C->end());
  EXPECT_EQ(signature(Rules->Plan), signature(*P));
  EXPECT_EQ(Rules->Plan.Cost.Microseconds, P->Cost.Microseconds);
  for (auto It = C->begin(); It != Rules; ++It)
    EXPECT_LT(It->Plan.Cost.Microseconds, P->Cost.Microseconds);
}

TEST(PlanCandidates, KnobsReproduceEachPlan) {
  for (auto &M : {rowSum(8192, 8192), rowSum(4096, 64), columnSum(4096, 512)}) {
    ASSERT_TRUE(M);
    FusionAnalysis A = analyzeFusion(fusionOf(*M));
    Context Ctx;
    auto C = planCandidates(Ctx, A, Tuning{}, h200(), &fusionOf(*M), 64);
    ASSERT_TRUE(C) << C.error().str();
    EXPECT_GT(C->size(), 1u) << C->front().Plan.Emitter;
    for (const PlanCandidate &X : *C) {
      auto P = planFusion(Ctx, A, X.Knobs, h200(), &fusionOf(*M));
      ASSERT_TRUE(P) << printTuning(X.Knobs);
      EXPECT_EQ(signature(*P), signature(X.Plan)) << printTuning(X.Knobs);
      EXPECT_EQ(P->Cost.Microseconds, X.Plan.Cost.Microseconds);
    }
  }
}

TEST(PlanCandidates, SortedUniqueAndLimited) {
  auto M = rowSum(8192, 8192);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(fusionOf(*M));
  Context Ctx;
  auto All = planCandidates(Ctx, A, Tuning{}, h200(), &fusionOf(*M), 1000);
  ASSERT_TRUE(All);
  std::set<std::string> Seen;
  for (size_t I = 0; I < All->size(); ++I) {
    EXPECT_TRUE(Seen.insert(signature((*All)[I].Plan)).second)
        << "duplicate plan: " << printTuning((*All)[I].Knobs);
    if (I) {
      EXPECT_LE((*All)[I - 1].Plan.Cost.Microseconds,
                (*All)[I].Plan.Cost.Microseconds);
    }
  }
  ASSERT_GT(All->size(), 5u);
  for (size_t Max : {1u, 3u, 5u}) {
    auto Few = planCandidates(Ctx, A, Tuning{}, h200(), &fusionOf(*M), Max);
    ASSERT_TRUE(Few);
    EXPECT_EQ(Few->size(), Max);
    // The rules' plan is always measured.
    EXPECT_TRUE(
        std::any_of(Few->begin(), Few->end(), [](const PlanCandidate &X) {
          return printTuning(X.Knobs).empty();
        }));
  }
}

TEST(PlanCandidates, OverridesAreKept) {
  auto M = rowSum(8192, 8192);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(fusionOf(*M));
  Context Ctx;
  Tuning Over;
  Over.RedRowLanes = 256;
  Over.RedEvictFirst = 0;
  auto C = planCandidates(Ctx, A, Over, h200(), &fusionOf(*M), 1000);
  ASSERT_TRUE(C);
  ASSERT_GT(C->size(), 1u);
  for (const PlanCandidate &X : *C) {
    EXPECT_EQ(X.Knobs.RedRowLanes, 256);
    EXPECT_EQ(X.Knobs.RedEvictFirst, 0);
    EXPECT_EQ(X.Plan.Block[0], 256);
  }
}

TEST(PlanCandidates, LoopFusionVariesOnlyItsUnroll) {
  // f32[1003]: one element per run; the rules leave unroll 1 (too few
  // blocks for more), the variants unroll 2, 4 and 8.
  auto M = oneFusionModule("f32[1003]", "f32[1003]",
                           "  x = f32[1003] parameter(0)\n"
                           "  ROOT e = f32[1003] exponential(x)\n");
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(fusionOf(*M));
  Context Ctx;
  auto C = planCandidates(Ctx, A, Tuning{}, h200(), &fusionOf(*M));
  ASSERT_TRUE(C);
  ASSERT_EQ(C->size(), 4u);
  std::set<int64_t> Unrolls;
  for (const PlanCandidate &P : *C) {
    EXPECT_EQ(P.Plan.Emitter, "loop");
    Unrolls.insert(P.Plan.Main.Unroll);
  }
  EXPECT_EQ(Unrolls, (std::set<int64_t>{1, 2, 4, 8}));
}

} // namespace
