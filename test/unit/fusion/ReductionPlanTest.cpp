//===- ReductionPlanTest.cpp - Lanes per row of row reductions ------------===//
//
// Part of idxmap. How many lanes of a warp share a row of a row reduction
// whose rows share warps: one lane when the whole row is at most four
// 16-byte units that one thread reads in at most 8 loads, else a power of
// two covering the row's units.
//
//===----------------------------------------------------------------------===//
#include "idxmap/DeviceModel.h"
#include "idxmap/Fusion.h"
#include "idxmap/KernelPlan.h"
#include "support/FusionModules.h"

#include <gtest/gtest.h>

#include <string>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

/// The H200 plan's lanes per row of a row sum of f32[Rows, Cols].
int64_t rowSumLanes(int64_t Rows, int64_t Cols) {
  const std::string In =
      "f32[" + std::to_string(Rows) + "," + std::to_string(Cols) + "]";
  const std::string Out = "f32[" + std::to_string(Rows) + "]";
  auto M = oneFusionModule(In, Out,
                           "  x = " + In +
                               " parameter(0)\n  z = f32[] constant(0)\n"
                               "  ROOT r = " +
                               Out +
                               " reduce(x, z), dimensions={1}, "
                               "to_apply=add\n");
  if (!M)
    return -1;
  FusionAnalysis A = analyzeFusion(fusionOf(*M));
  Context Ctx;
  Expected<KernelPlan> P =
      planFusion(Ctx, A, Tuning{}, *lookupDeviceModel("H200"));
  EXPECT_TRUE(bool(P)) << (P ? "" : P.error().str());
  if (!P || !P->Reduction)
    return -1;
  return P->Reduction->LanesPerRow;
}

TEST(ReductionPlan, OneLanePerShortRow) {
  // 4 floats: one 16-byte load per row.
  EXPECT_EQ(rowSumLanes(65536, 4), 1);
  // 16 floats: 4 vectors, all in flight in one thread.
  EXPECT_EQ(rowSumLanes(65536, 16), 1);
  // 7 floats: no vector divides the row, 7 loads of 4 bytes.
  EXPECT_EQ(rowSumLanes(65536, 7), 1);
}

TEST(ReductionPlan, LanesCoverLongerRows) {
  // 9 floats: 3 units, but 9 loads of 4 bytes: 4 lanes.
  EXPECT_EQ(rowSumLanes(65536, 9), 4);
  // 24 floats: 6 units of 16 bytes: 8 lanes.
  EXPECT_EQ(rowSumLanes(65536, 24), 8);
  // 17 floats: 5 units: 8 lanes.
  EXPECT_EQ(rowSumLanes(65536, 17), 8);
}

} // namespace
