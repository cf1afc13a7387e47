//===- LoopThreadMappingTest.cpp - The loop mapping as launched -----------===//
//
// Part of idxmap. The loop emitter's thread mapping on sizes near INT64_MAX
// (checked block counts) and as a grid of limited grid.x launches it: every
// output element is written exactly once by the launched grid-stride loop;
// the widest parameter element that sizes the loop's vectors.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"

#include "idxmap/Coalescing.h"
#include "idxmap/Context.h"
#include "idxmap/Hlo.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

TEST(LoopThreadMappingTest, BlockCountsNearInt64MaxDoNotWrap) {
  Context Ctx;
  const int64_t Max = std::numeric_limits<int64_t>::max();
  // ceil(Max / 128) blocks; A + B - 1 wrapped to a negative block count.
  ThreadMapping TM = loopThreadMapping(Ctx, Shape(PrimitiveType::U8, {Max}), 1);
  EXPECT_EQ(TM.ThreadsPerBlock, 128);
  EXPECT_EQ(TM.Blocks, Max / 128 + 1);
  EXPECT_EQ(TM.Iterations, 1);
  ASSERT_EQ(TM.Map.dims().size(), 2u);
  EXPECT_EQ(TM.Map.dims()[1].Bound.Hi, Max / 128);
  // The grid overshoots by one element: bounded by a constraint.
  EXPECT_FALSE(TM.Map.constraints().empty());

  // Launched on grid.x <= 2^31 - 1: ceil(2^56 / (2^31 - 1)) iterations.
  ThreadMapping L = launchedThreadMapping(TM, 2147483647);
  GridStride G = gridStride(Max / 128 + 1, 2147483647);
  EXPECT_EQ(L.Blocks, G.Grid);
  EXPECT_EQ(L.Iterations, G.Iterations);
  EXPECT_LE(G.Grid, 2147483647);
  EXPECT_GE(static_cast<__int128>(G.Grid) * G.Iterations, Max / 128 + 1);
}

TEST(LoopThreadMappingTest, GridStrideMatchesTheEmitter) {
  // The loop emitter's Iters = ceil(Blocks / MaxGrid), Grid = ceil(Blocks /
  // Iters): f32[2^40] and f32[2^41 + 512] with 4-element runs.
  GridStride A = gridStride(int64_t(1) << 31, 2147483647);
  EXPECT_EQ(A.Grid, int64_t(1) << 30);
  EXPECT_EQ(A.Iterations, 2);
  GridStride B = gridStride((int64_t(1) << 32) + 1, 2147483647);
  EXPECT_EQ(B.Grid, 1431655766);
  EXPECT_EQ(B.Iterations, 3);
  GridStride C = gridStride(512, 2147483647);
  EXPECT_EQ(C.Grid, 512);
  EXPECT_EQ(C.Iterations, 1);
}

/// Every element of [0, N) is produced by exactly one point of \p Map's
/// domain, and nothing else is.
void expectEachElementOnce(const IndexingMap &Map, int64_t N) {
  CheckStatus Status = CheckStatus::Ok;
  std::vector<Point> Points = enumerateDomain(Map, &Status);
  ASSERT_EQ(Status, CheckStatus::Ok) << checkStatusName(Status);
  std::vector<int> Hits(N, 0);
  for (const Point &P : Points) {
    std::vector<int64_t> Dims(P.begin(), P.begin() + Map.numDims());
    std::vector<int64_t> Syms(P.begin() + Map.numDims(), P.end());
    auto V = evaluateChecked(Map.result(0), Dims, Syms);
    ASSERT_TRUE(V.has_value());
    ASSERT_GE(*V, 0);
    ASSERT_LT(*V, N);
    ++Hits[*V];
  }
  for (int64_t I = 0; I < N; ++I)
    EXPECT_EQ(Hits[I], 1) << "element " << I;
}

TEST(LoopThreadMappingTest, LaunchedMappingCoversEveryElementOnce) {
  Context Ctx;
  // 33 blocks of 8 threads x 2 elements, the last one ragged (522 elements
  // need 261 threads), on grids of at most 7, 11, 33 and 40 blocks.
  const int64_t N = 522;
  ThreadMapping TM = loopThreadMapping(Ctx, Shape(PrimitiveType::F32, {N}),
                                       /*Vector=*/2, /*ThreadsPerBlock=*/8);
  ASSERT_EQ(TM.Blocks, 33);
  for (int64_t MaxGrid : {7, 11, 33, 40}) {
    SCOPED_TRACE(MaxGrid);
    ThreadMapping L = launchedThreadMapping(TM, MaxGrid);
    GridStride G = gridStride(33, MaxGrid);
    EXPECT_EQ(L.Blocks, G.Grid);
    EXPECT_EQ(L.Iterations, G.Iterations);
    EXPECT_LE(L.Blocks, MaxGrid);
    EXPECT_EQ(L.Map.dims()[1].Bound.Hi, G.Grid - 1);
    // The vector variable stays last.
    EXPECT_EQ(L.Map.rangeVars().back().Name, "vec");
    EXPECT_EQ(L.Vector, 2);
    expectEachElementOnce(L.Map, N);
  }
  // 7 blocks x 5 iterations = 35 > 33: the overshoot is cut off.
  EXPECT_EQ(gridStride(33, 7).Iterations, 5);
}

TEST(LoopThreadMappingTest, UnrolledMappingCoversEveryElementOnce) {
  Context Ctx;
  // 1003 f32 (odd: one element per run), 8 threads x 4 runs per block:
  // ceil(1003 / 32) = 32 blocks, the last one ragged.
  const int64_t N = 1003;
  ThreadMapping TM = loopThreadMapping(Ctx, Shape(PrimitiveType::F32, {N}),
                                       /*Vector=*/1, /*ThreadsPerBlock=*/8,
                                       /*Unroll=*/4);
  EXPECT_EQ(TM.Unroll, 4);
  EXPECT_EQ(TM.Blocks, 32);
  ASSERT_EQ(TM.Map.rangeVars().size(), 2u);
  EXPECT_EQ(TM.Map.rangeVars()[0].Name, "u");
  EXPECT_EQ(TM.Map.rangeVars().back().Name, "vec");
  EXPECT_FALSE(TM.Map.constraints().empty());
  expectEachElementOnce(TM.Map, N);
  // Run u of a block is T consecutive elements: thread th of block 3, run 2
  // computes element (3 * 4 + 2) * 8 + th.
  for (int64_t Th = 0; Th < 8; ++Th)
    EXPECT_EQ(evaluateChecked(TM.Map.result(0), {Th, 3}, {2, 0}),
              std::optional<int64_t>((3 * 4 + 2) * 8 + Th));
  // Launched on at most 5 blocks, still each element once.
  expectEachElementOnce(launchedThreadMapping(TM, 5).Map, N);
  // More runs than there are: capped, and exact (no constraint).
  ThreadMapping Small = loopThreadMapping(Ctx, Shape(PrimitiveType::F32, {16}),
                                          /*Vector=*/2, 8, /*Unroll=*/4);
  EXPECT_EQ(Small.Unroll, 1);
  EXPECT_EQ(Small.Blocks, 1);
  EXPECT_TRUE(Small.Map.constraints().empty());
  expectEachElementOnce(Small.Map, 16);
}

} // namespace

namespace {

TEST(LoopThreadMappingTest, WidestParameterBytesLeavesOutScalarsAndBroadcasts) {
  auto M = parseHloModule(R"(HloModule m
fused {
  p0 = bf16[4096,1000] parameter(0)
  p1 = f32[] parameter(1)
  p2 = f32[1000] parameter(2)
  c = f32[4096,1000] convert(p0)
  b = f32[4096,1000] broadcast(p1), dimensions={}
  s = f32[4096,1000] broadcast(p2), dimensions={1}
  a = f32[4096,1000] add(c, b)
  ROOT r = f32[4096,1000] multiply(a, s)
}
ENTRY e {
  x = bf16[4096,1000] parameter(0)
  y = f32[] parameter(1)
  z = f32[1000] parameter(2)
  ROOT f = f32[4096,1000] fusion(x, y, z), kind=kLoop, calls=fused
}
)",
                          "widest.hlo");
  ASSERT_TRUE(M) << M.error().str();
  const HloComputation &C = *(*M)->entry()->root()->fusedComputation();
  EXPECT_EQ(widestParameterBytes(C), 4);                  // p2, f32
  EXPECT_EQ(widestParameterBytes(C, 4096 * 1000 / 64), 2); // p0 only
  EXPECT_EQ(widestParameterBytes(C, 1 << 30), 1);          // none
}

} // namespace
