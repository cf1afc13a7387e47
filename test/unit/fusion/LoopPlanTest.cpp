//===- LoopPlanTest.cpp - The loop plan's runs per thread -----------------===//
//
// Part of idxmap. How many runs (vectors of outputs) a loop thread computes:
// enough that its loads in flight cover the memory's latency. A gather
// waits on its indices before it reads a row, so its 16-byte vectors from
// DRAM do not count as a saturating stream.
//
//===----------------------------------------------------------------------===//
#include "idxmap/KernelPlan.h"
#include "support/FusionModules.h"

#include <gtest/gtest.h>

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

TEST(LoopPlan, GatheredRowsTakeTwoRunsPerThread) {
  std::unique_ptr<HloModule> M;
  Expected<KernelPlan> G = planOfText(Embedding, EmitterKind::Loop, {}, M);
  ASSERT_TRUE(bool(G)) << G.error().str();
  EXPECT_EQ(G->Main.Vector, 4);
  EXPECT_EQ(G->Main.Unroll, 2);
  std::unique_ptr<HloModule> N;
  Expected<KernelPlan> C = planOfText(Copy, EmitterKind::Loop, {}, N);
  ASSERT_TRUE(bool(C)) << C.error().str();
  EXPECT_EQ(C->Main.Vector, 4);
  EXPECT_EQ(C->Main.Unroll, 1);
}

} // namespace
