//===- CostModelTest.cpp - The cost model on small fusions ----------------===//
//
// Part of idxmap. estimateCost on fusions built from HLO text: where the
// data lives (L2-resident against DRAM-sized, the boundary at a quarter of
// the L2), bytes moved with the sectors a strided access wastes, and the
// latency bound of a grid too small to cover the memory latency.
//
//===----------------------------------------------------------------------===//
#include "idxmap/CostModel.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"

#include "support/FusionModules.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

/// negate(x) over f32[N]: N * 4 bytes in, as many out.
std::unique_ptr<HloModule> negate(int64_t N) {
  std::string S = "f32[" + std::to_string(N) + "]";
  return oneFusionModule(
      S, S, "  x = " + S + " parameter(0)\n  ROOT n = " + S + " negate(x)\n");
}

DeviceModel h200() { return *lookupDeviceModel("H200"); }

/// A fusion, its analysis and its plan on the H200.
struct Planned {
  std::unique_ptr<HloModule> M;
  FusionAnalysis A;
  Context Ctx;
  KernelPlan P;
};

std::unique_ptr<Planned> plan(std::unique_ptr<HloModule> M) {
  auto R = std::make_unique<Planned>();
  if (!M)
    return nullptr;
  R->M = std::move(M);
  R->A = analyzeFusion(*R->M->entry()->root());
  Expected<KernelPlan> P = planFusion(R->Ctx, R->A, Tuning{}, h200());
  EXPECT_TRUE(P) << P.error().str();
  if (!P)
    return nullptr;
  R->P = std::move(*P);
  return R;
}

TEST(CostModel, L2ResidentAgainstDram) {
  // 32 MiB moved: over a quarter of the H200's 50 MiB L2, within a quarter
  // of 256 MiB. The same plan costs less where its data stays in L2.
  auto F = plan(negate(int64_t(1) << 22));
  ASSERT_TRUE(F);
  EXPECT_EQ(uniqueBytes(F->A), int64_t(32) << 20);
  DeviceModel Big = h200();
  Big.Name = "big-l2";
  Big.L2Bytes = int64_t(256) << 20;
  CostEstimate Dram = estimateCost(F->Ctx, F->A, F->P, h200());
  CostEstimate L2 = estimateCost(F->Ctx, F->A, F->P, Big);
  EXPECT_FALSE(Dram.L2Resident);
  EXPECT_TRUE(L2.L2Resident);
  EXPECT_DOUBLE_EQ(Dram.Bytes, L2.Bytes);
  EXPECT_LT(L2.MemoryMicroseconds / L2.Bytes,
            Dram.MemoryMicroseconds / Dram.Bytes);
  EXPECT_LT(L2.Microseconds, Dram.Microseconds);
  EXPECT_NE(Dram.Summary.find("from DRAM"), std::string::npos);
  EXPECT_NE(L2.Summary.find("in L2"), std::string::npos);
  // A 1 GiB input is read from DRAM at no more than the device's bandwidth.
  auto G = plan(negate(int64_t(1) << 28));
  ASSERT_TRUE(G);
  CostEstimate E = estimateCost(G->Ctx, G->A, G->P, h200());
  EXPECT_FALSE(E.L2Resident);
  EXPECT_GE(E.MemoryMicroseconds, 1e6 * E.Bytes / h200().DramBytesPerSecond);
  EXPECT_LT(E.MemoryMicroseconds,
            3 * 1e6 * E.Bytes / h200().DramBytesPerSecond);
}

TEST(CostModel, SlicesMoveTheSectorsTheyTouch) {
  // Every fourth f32 of the input: a quarter of the elements, but a warp's
  // request touches every sector, so the whole input moves.
  auto F = plan(oneFusionModule("f32[4194304]", "f32[1048576]",
                                "  x = f32[4194304] parameter(0)\n"
                                "  ROOT s = f32[1048576] slice(x), "
                                "slice={[0:4194304:4]}\n"));
  ASSERT_TRUE(F);
  const double Unique = double(uniqueBytes(F->A));
  EXPECT_EQ(Unique, double((int64_t(16) << 20) + (int64_t(4) << 20)));
  CostEstimate E = estimateCost(F->Ctx, F->A, F->P, h200());
  EXPECT_DOUBLE_EQ(E.Bytes, Unique);
  // The first quarter, contiguous: only that quarter moves.
  auto Q = plan(oneFusionModule("f32[4194304]", "f32[1048576]",
                                "  x = f32[4194304] parameter(0)\n"
                                "  ROOT s = f32[1048576] slice(x), "
                                "slice={[0:1048576]}\n"));
  ASSERT_TRUE(Q);
  CostEstimate Part = estimateCost(Q->Ctx, Q->A, Q->P, h200());
  EXPECT_DOUBLE_EQ(Part.Bytes, double(int64_t(8) << 20));
  EXPECT_NE(Part.Summary.find("MB in the arrays"), std::string::npos);
  EXPECT_LT(Part.MemoryMicroseconds, E.MemoryMicroseconds);
  // The dense read of the same input moves its bytes once.
  auto D = plan(negate(int64_t(1) << 22));
  ASSERT_TRUE(D);
  CostEstimate Dense = estimateCost(D->Ctx, D->A, D->P, h200());
  EXPECT_DOUBLE_EQ(Dense.Bytes, double(uniqueBytes(D->A)));
}

TEST(CostModel, StaysInL2AtAQuarter) {
  auto F = plan(negate(1024));
  ASSERT_TRUE(F);
  EXPECT_EQ(uniqueBytes(F->A), 8192);
  DeviceModel D = h200();
  D.Name = "custom";
  D.L2Bytes = 4 * 8192; // exactly a quarter: stays
  EXPECT_TRUE(staysInL2(F->A, D));
  EXPECT_TRUE(estimateCost(F->Ctx, F->A, F->P, D).L2Resident);
  D.L2Bytes = 4 * 8192 - 4; // a quarter is one element short
  EXPECT_FALSE(staysInL2(F->A, D));
  EXPECT_FALSE(estimateCost(F->Ctx, F->A, F->P, D).L2Resident);
  D.L2Bytes = 0; // unknown: never resident
  EXPECT_FALSE(staysInL2(F->A, D));
}

TEST(CostModel, OneBlockIsLatencyBound) {
  // 512 elements: one block of 128 threads, 4 elements each. What one block
  // has in flight covers a small share of the memory latency: the estimate
  // lies far above bytes over bandwidth, even the DRAM's.
  auto F = plan(negate(512));
  ASSERT_TRUE(F);
  EXPECT_EQ(F->P.Grid[0] * F->P.Grid[1] * F->P.Grid[2], 1);
  const DeviceModel D = h200();
  CostEstimate E = estimateCost(F->Ctx, F->A, F->P, D);
  EXPECT_TRUE(E.L2Resident);
  EXPECT_GT(E.MemoryMicroseconds, 10 * 1e6 * E.Bytes / D.DramBytesPerSecond);
  EXPECT_NE(E.Summary.find("latency-bound"), std::string::npos);
  EXPECT_GE(E.Microseconds, E.LaunchMicroseconds + E.MemoryMicroseconds);
  // A grid of many waves reaches the bandwidth.
  auto G = plan(negate(int64_t(1) << 28));
  ASSERT_TRUE(G);
  EXPECT_NE(estimateCost(G->Ctx, G->A, G->P, D).Summary.find("bandwidth-bound"),
            std::string::npos);
}

} // namespace
