//===- AccessSampleTest.cpp - Sampled warps of analyzeAccess --------------===//
//
// Part of idxmap. analyzeAccess samples large grids; the samples must not
// all fall on one warp of their blocks. A map whose warp 0 of every block is
// aligned and whose other warps straddle sectors (rows of 33 bytes, one
// warp a row) must be reported as straddling, whatever the grid size; and
// a grid small enough to count warp by warp must agree with the sample.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Coalescing.h"
#include "idxmap/Context.h"
#include "idxmap/Hlo.h"

#include <gtest/gtest.h>

using namespace idxmap;

namespace {

/// (th_x, bl_x) -> (row, col) of s8[Rows, 33] for 256-thread blocks: warp
/// w of block b writes row b * 8 + w, its lanes columns 0..31, and the
/// last block has only its warp 0 (a constraint). Rows of 33 bytes: row r
/// starts at byte 33 r, aligned to 32 bytes when r is a multiple of 32, so
/// warp 0 of every fourth block is aligned and most other warps touch two
/// sectors.
AccessReport rowsOf33(Context &Ctx, int64_t Blocks, int64_t MaxWarps) {
  Expr Th = Ctx.dim(0), Bl = Ctx.dim(1);
  const int64_t Rows = (Blocks - 1) * 8 + 1;
  Expr Row = Bl * 8 + Th.floorDiv(32);
  IndexingMap M(Ctx, {{"th_x", {0, 255}}, {"bl_x", {0, Blocks - 1}}}, {}, {},
                {Row, Th % 32}, {{Row, {0, Rows - 1}}});
  return analyzeAccess(M, Shape(PrimitiveType::S8, {Rows, 33}),
                       /*CountWarps=*/true, MaxWarps);
}

TEST(AccessSample, SamplesReachWarpsBesideEachBlocksFirst) {
  Context Ctx;
  // 504 blocks of 8 warps: an even spread of 64 samples has a stride of
  // 4032 / 63 = 64 warps, which would sample warp 0 of every eighth block
  // only (rows 64 k, all aligned; the last warp has no row).
  for (int64_t Blocks : {int64_t(504), int64_t(1) << 15, int64_t(4033)}) {
    AccessReport R = rowsOf33(Ctx, Blocks, 64);
    ASSERT_FALSE(R.Undefined);
    EXPECT_EQ(R.MinSectors, 1) << Blocks;
    EXPECT_EQ(R.Sectors, 2) << Blocks << " blocks: " << R.Coverage;
    EXPECT_FALSE(R.Coalesced) << Blocks;
  }
  // Counted warp by warp: the same answer.
  AccessReport All = rowsOf33(Ctx, 8, 2048);
  EXPECT_EQ(All.Coverage, "all 64 warps");
  EXPECT_EQ(All.Sectors, 2);
  EXPECT_EQ(All.MinSectors, 1);
}

} // namespace
