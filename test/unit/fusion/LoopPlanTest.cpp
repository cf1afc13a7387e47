//===- LoopPlanTest.cpp - The loop plan's runs per thread -----------------===//
//
// Part of idxmap. How many runs (vectors of outputs) a loop thread computes:
// enough that its loads in flight cover the memory's latency. A gather
// waits on its indices before it reads a row, so its 16-byte vectors from
// DRAM do not count as a saturating stream, and where the rows it moves fit
// in L2 it keeps twice as many in flight.
//
//===----------------------------------------------------------------------===//
#include "idxmap/KernelPlan.h"
#include "support/FusionModules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

const char *const Embedding = R"(HloModule embedding
fused {
  table = f32[50257,768]{1,0} parameter(0)
  idx = s32[4096,1]{1,0} parameter(1)
  ROOT g = f32[4096,768]{1,0} gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,768}
}
ENTRY main {
  a0 = f32[50257,768]{1,0} parameter(0)
  a1 = s32[4096,1]{1,0} parameter(1)
  ROOT f = f32[4096,768]{1,0} fusion(a0, a1), kind=kLoop, calls=fused
}
)";

/// The same rows read in order: a stream of 16-byte vectors from DRAM.
const char *const Copy = R"(HloModule copy
fused {
  table = f32[50257,768]{1,0} parameter(0)
  ROOT s = f32[4096,768]{1,0} slice(table), slice={[0:4096], [0:768]}
}
ENTRY main {
  a0 = f32[50257,768]{1,0} parameter(0)
  ROOT f = f32[4096,768]{1,0} fusion(a0), kind=kLoop, calls=fused
}
)";

TEST(LoopPlan, GatheredRowsTakeTwoRunsPerThreadFourWhereTheyFitInL2) {
  std::unique_ptr<HloModule> M;
  // 4096 rows of 768 f32: 12 MiB written, 12 read, in the H200's L2.
  Expected<KernelPlan> G = planOfText(Embedding, EmitterKind::Loop, {}, M);
  ASSERT_TRUE(bool(G)) << G.error().str();
  EXPECT_EQ(G->Main.Vector, 4);
  EXPECT_EQ(G->Main.Unroll, 4);
  // 16384 of them: 48 MiB each way, beyond it.
  std::string Large = Embedding;
  for (const char *From : {"s32[4096,1]", "f32[4096,768]"}) {
    std::string To = From;
    To.replace(To.find("4096"), 4, "16384");
    for (size_t At; (At = Large.find(From)) != std::string::npos;)
      Large.replace(At, std::string(From).size(), To);
  }
  std::unique_ptr<HloModule> L;
  Expected<KernelPlan> GL = planOfText(Large, EmitterKind::Loop, {}, L);
  ASSERT_TRUE(bool(GL)) << GL.error().str();
  EXPECT_EQ(GL->Main.Unroll, 2);
  std::unique_ptr<HloModule> N;
  Expected<KernelPlan> C = planOfText(Copy, EmitterKind::Loop, {}, N);
  ASSERT_TRUE(bool(C)) << C.error().str();
  EXPECT_EQ(C->Main.Vector, 4);
  EXPECT_EQ(C->Main.Unroll, 1);
}

/// exp of f32[R,C] as a loop fusion.
std::string expModule(int64_t R, int64_t C) {
  const std::string T =
      "f32[" + std::to_string(R) + "," + std::to_string(C) + "]{1,0}";
  return "HloModule e\nfused {\n  x = " + T + " parameter(0)\n  ROOT e = " + T +
         " exponential(x)\n}\nENTRY main {\n  a = " + T +
         " parameter(0)\n  ROOT f = " + T +
         " fusion(a), kind=kLoop, calls=fused\n}\n";
}

TEST(LoopPlan, RunsNarrowUntilTheOutputHasAWarpOfThem) {
  auto VectorOf = [](int64_t R, int64_t C) {
    std::unique_ptr<HloModule> M;
    Expected<KernelPlan> P =
        planOfText(expModule(R, C), EmitterKind::Loop, {}, M);
    EXPECT_TRUE(bool(P));
    return P ? P->Main.Vector : 0;
  };
  // 128 elements: 32 runs of 4.
  EXPECT_EQ(VectorOf(32, 4), 4);
  // 64: 32 runs of 2; 28: 28 threads of one element.
  EXPECT_EQ(VectorOf(16, 4), 2);
  EXPECT_EQ(VectorOf(7, 4), 1);
  std::unique_ptr<HloModule> M;
  Expected<KernelPlan> P =
      planOfText(expModule(7, 4), EmitterKind::Loop, {}, M);
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Block[0] * P->Grid[0], 28);
}

TEST(LoopPlan, EvictLastFromDramUpToSixFifthsOfL2) {
  auto EvictLast = [](int64_t R, int64_t C, const Tuning &T = {}) {
    std::unique_ptr<HloModule> M;
    Expected<KernelPlan> P =
        planOfText(expModule(R, C), EmitterKind::Loop, T, M);
    EXPECT_TRUE(bool(P));
    return P && P->EvictLast;
  };
  // f32 in and out, 8 bytes per element, on the H200's 50 MiB of L2:
  // 32 MiB from DRAM takes the evict_last policy; 2 MiB stays in L2; 60
  // MiB less 8 KiB is within 1.2 x L2, 60 MiB and 8 KiB past it.
  EXPECT_TRUE(EvictLast(2048, 2048));
  EXPECT_FALSE(EvictLast(512, 512));
  EXPECT_TRUE(EvictLast(3839, 2048));
  EXPECT_FALSE(EvictLast(3841, 2048));
  EXPECT_FALSE(EvictLast(4096, 4096));
  // The knob decides either way.
  Tuning Off, On;
  Off.EvictLast = 0;
  On.EvictLast = 1;
  EXPECT_FALSE(EvictLast(2048, 2048, Off));
  EXPECT_TRUE(EvictLast(4096, 4096, On));
}

TEST(LoopPlan, OneWarpIsCompiledForCompileTime) {
  // 28 threads in one block: no instcombine, and the back end keeps the
  // plan's level even with libdevice.
  std::unique_ptr<HloModule> M;
  Expected<KernelPlan> P =
      planOfText(expModule(7, 4), EmitterKind::Loop, {}, M);
  ASSERT_TRUE(bool(P));
  EXPECT_FALSE(P->IrInstCombine);
  EXPECT_TRUE(P->LibdeviceAtPlanLevel);
  // 33 threads: more than a warp.
  std::unique_ptr<HloModule> W;
  Expected<KernelPlan> Q =
      planOfText(expModule(3, 11), EmitterKind::Loop, {}, W);
  ASSERT_TRUE(bool(Q));
  EXPECT_EQ(Q->Block[0] * Q->Grid[0], 33);
  EXPECT_TRUE(Q->IrInstCombine);
  EXPECT_FALSE(Q->LibdeviceAtPlanLevel);
  // The knob still decides instcombine.
  Tuning T;
  T.IrInstCombine = 1;
  std::unique_ptr<HloModule> K;
  Expected<KernelPlan> R = planOfText(expModule(7, 4), EmitterKind::Loop, T, K);
  ASSERT_TRUE(bool(R));
  EXPECT_TRUE(R->IrInstCombine);
}

} // namespace

namespace {

/// f32[R,C] padded high by (PR, PC), as a loop fusion.
std::string paddedModule(int64_t R, int64_t C, int64_t PR, int64_t PC) {
  const std::string In =
      "f32[" + std::to_string(R) + "," + std::to_string(C) + "]{1,0}";
  const std::string Out =
      "f32[" + std::to_string(R + PR) + "," + std::to_string(C + PC) + "]{1,0}";
  return "HloModule pad\nfused {\n  x = " + In +
         " parameter(0)\n  z = f32[] constant(0)\n  e = " + In +
         " exponential(x)\n  ROOT p = " + Out + " pad(e, z), padding=0_" +
         std::to_string(PR) + "x0_" + std::to_string(PC) +
         "\n}\nENTRY main {\n  a = " + In + " parameter(0)\n  ROOT f = " + Out +
         " fusion(a), kind=kLoop, calls=fused\n}\n";
}

TEST(LoopPlan, PadsWithOneTestPerRunAreSpeculated) {
  // 1000 columns padded to 1024: runs of 4 never straddle column 1000.
  std::unique_ptr<HloModule> M;
  Expected<KernelPlan> P =
      planOfText(paddedModule(1000, 1000, 24, 24), EmitterKind::Loop, {}, M);
  ASSERT_TRUE(bool(P)) << P.error().str();
  EXPECT_EQ(P->Main.Vector, 4);
  ASSERT_EQ(P->Loop->SpeculatedPads.size(), 1u);
  EXPECT_EQ(P->Loop->SpeculatedPads[0]->name(), "p");
  // 998 columns padded to 1000: the run of columns 996-999 straddles the
  // edge (x is read in pairs), so the pad keeps its branch per lane.
  std::unique_ptr<HloModule> N;
  Expected<KernelPlan> Q =
      planOfText(paddedModule(1000, 998, 0, 2), EmitterKind::Loop, {}, N);
  ASSERT_TRUE(bool(Q)) << Q.error().str();
  EXPECT_EQ(Q->Main.Vector, 4);
  EXPECT_EQ(Q->Loop->LoadWidth[0], 2);
  EXPECT_TRUE(Q->Loop->SpeculatedPads.empty());
}

} // namespace

namespace {

/// A row sum of f32[R,C] broadcast over rows of 8 and multiplied with a
/// second input: the reduction emitter refuses the epilogue (and it is not
/// a row normalization: the rows it scales are not the reduced ones).
std::string rowScaled(int64_t R, int64_t C) {
  const std::string X =
      "f32[" + std::to_string(R) + "," + std::to_string(C) + "]{1,0}";
  const std::string Y = "f32[" + std::to_string(R) + ",8]{1,0}";
  const std::string S = "f32[" + std::to_string(R) + "]{0}";
  return "HloModule scaled\nadd {\n  a = f32[] parameter(0)\n  b = f32[] "
         "parameter(1)\n  ROOT c = f32[] add(a, b)\n}\nfused {\n  x = " +
         X + " parameter(0)\n  y = " + Y +
         " parameter(1)\n  z = f32[] constant(0)\n  s = " + S +
         " reduce(x, z), dimensions={1}, to_apply=add\n  b = " + Y +
         " broadcast(s), dimensions={0}\n  ROOT m = " + Y +
         " multiply(b, y)\n}\nENTRY main {\n  a = " + X +
         " parameter(0)\n  c = " + Y + " parameter(1)\n  ROOT f = " + Y +
         " fusion(a, c), kind=kLoop, calls=fused\n}\n";
}

TEST(LoopPlan, RefusedReductionsFallBackToTheLoopWithinABudget) {
  std::unique_ptr<HloModule> M;
  Expected<KernelPlan> P =
      planOfText(rowScaled(24, 40), EmitterKind::MultiRowReduction, {}, M);
  ASSERT_TRUE(bool(P)) << P.error().str();
  EXPECT_EQ(P->Kind, EmitterKind::Loop);
  EXPECT_EQ(P->Emitter, "loop");
  auto Steps = std::find_if(
      P->Choices.begin(), P->Choices.end(),
      [](const PlanChoice &C) { return C.Name == "reduce_steps"; });
  ASSERT_NE(Steps, P->Choices.end());
  EXPECT_EQ(Steps->Value, 40);
  // 65537 reduce steps per element: over the budget, the refusal stays
  // and says why the loop emitter did not take it.
  std::unique_ptr<HloModule> N;
  Expected<KernelPlan> Q =
      planOfText(rowScaled(2, 65537), EmitterKind::RowReduction, {}, N);
  ASSERT_FALSE(bool(Q));
  EXPECT_NE(Q.error().str().find("not elementwise on the reduced values (the "
                                 "loop emitter would take 65537 reduce steps "
                                 "per output element"),
            std::string::npos)
      << Q.error().str();
  // Within the budget per element, over 2^32 in all.
  std::unique_ptr<HloModule> O;
  Expected<KernelPlan> R =
      planOfText(rowScaled(1 << 20, 8192), EmitterKind::RowReduction, {}, O);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(R.error().str().find("more than its budget of 2^32 in all"),
            std::string::npos)
      << R.error().str();
}

} // namespace
