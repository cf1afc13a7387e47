//===- TransposeTilingTest.cpp - The transpose emitter's tiling -----------===//
//
// Part of idxmap. transposeTiling's read and write indices, enumerated over
// every thread, block, iteration and vector element of their domains: each
// input element is read exactly once and written exactly once, by the same
// block (the tile passes through that block's shared memory), and the
// vector accesses are what the emitter assumes: ReadVec consecutive
// elements of the input from an offset divisible by ReadVec, WriteVec
// consecutive elements of the output from an offset divisible by WriteVec.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Coalescing.h"
#include "idxmap/Context.h"
#include "idxmap/Fusion.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace idxmap;

namespace {

struct Case {
  std::vector<int64_t> Dims, Permutation;
  int64_t Warps, ReadVec, WriteVec;  // requested (0: the default)
  int64_t WantReadVec, WantWriteVec; // chosen
  int64_t SubP = 1, SubM = 1, TileBytes = 4;
  /// The GPU's SMs: few make tiles of 32 x 64 (V = 2) fill it.
  int64_t Sms = 132;
};

std::string describe(const Case &C) {
  std::string S = "[";
  for (int64_t D : C.Dims)
    S += std::to_string(D) + " ";
  S += "] perm [";
  for (int64_t P : C.Permutation)
    S += std::to_string(P) + " ";
  return S + "] warps " + std::to_string(C.Warps) + " rvec " +
         std::to_string(C.ReadVec) + " wvec " + std::to_string(C.WriteVec) +
         " sub " + std::to_string(C.SubP) + "x" + std::to_string(C.SubM) +
         " bytes " + std::to_string(C.TileBytes);
}

/// Linear offsets of a normalized input index in the input and the output.
struct Offsets {
  int64_t In = 0, Out = 0;
};

Offsets offsets(const Case &C, const std::vector<int64_t> &Idx) {
  Offsets O;
  for (size_t D = 0; D < C.Dims.size(); ++D)
    O.In = O.In * C.Dims[D] + Idx[D];
  for (int64_t P : C.Permutation)
    O.Out = O.Out * C.Dims[P] + Idx[P];
  return O;
}

/// Calls F(Offsets, Block, J, Offsets at J = 0) for every point of one
/// side's domain.
template <typename Fn>
void enumerate(const Case &C, const TransposeTiling &T,
               const std::vector<Expr> &Idx,
               const std::vector<Constraint> &Cs, int64_t Iters, int64_t Vec,
               Fn F) {
  for (int64_t Bl = 0; Bl < T.Blocks; ++Bl)
    for (int64_t Th = 0; Th < T.Threads; ++Th)
      for (int64_t It = 0; It < Iters; ++It) {
        Offsets First;
        for (int64_t J = 0; J < Vec; ++J) {
          bool In = true;
          for (const Constraint &K : Cs) {
            std::optional<int64_t> V = K.E.evaluate({Th, Bl}, {It, J});
            ASSERT_TRUE(V.has_value());
            In = In && K.I.contains(*V);
          }
          if (!In) {
            // A vector is entirely inside or outside the domain.
            ASSERT_EQ(J, 0) << describe(C) << " th " << Th << " bl " << Bl;
            break;
          }
          std::vector<int64_t> Point;
          for (size_t D = 0; D < Idx.size(); ++D) {
            std::optional<int64_t> V = Idx[D].evaluate({Th, Bl}, {It, J});
            ASSERT_TRUE(V.has_value());
            ASSERT_GE(*V, 0);
            ASSERT_LT(*V, C.Dims[D]) << describe(C) << " dim " << D;
            Point.push_back(*V);
          }
          Offsets O = offsets(C, Point);
          if (J == 0)
            First = O;
          F(O, Bl, J, First);
        }
      }
}

void check(const Case &C) {
  SCOPED_TRACE(describe(C));
  Context Ctx;
  TransposeInfo TI{C.Dims, C.Permutation};
  TransposeRequest Want;
  Want.Warps = C.Warps;
  Want.ReadVec = C.ReadVec;
  Want.WriteVec = C.WriteVec;
  Want.SubP = C.SubP;
  Want.SubM = C.SubM;
  DeviceModel Device = defaultDeviceModel("sm_90");
  Device.SmCount = C.Sms;
  TransposeTiling T = transposeTiling(Ctx, TI, C.TileBytes, Want, Device);
  EXPECT_EQ(T.ReadVec, C.WantReadVec);
  EXPECT_EQ(T.WriteVec, C.WantWriteVec);
  EXPECT_EQ(T.SubP, C.SubP);
  EXPECT_EQ(T.SubM, C.SubM);
  int64_t N = 1;
  for (int64_t D : C.Dims)
    N *= D;
  std::vector<int64_t> Reads(N, 0), Writes(N, 0), Owner(N, -1);
  enumerate(C, T, T.ReadIdx, T.ReadCs, T.readIterations(), T.readGroup(),
            [&](Offsets O, int64_t Bl, int64_t J, Offsets First) {
              ++Reads[O.In];
              Owner[O.In] = Bl;
              if (T.ReadVec > 1) {
                EXPECT_EQ(First.In % T.ReadVec, 0);
                EXPECT_EQ(O.In, First.In + J);
              }
            });
  enumerate(C, T, T.WriteIdx, T.WriteCs, T.writeIterations(), T.writeGroup(),
            [&](Offsets O, int64_t Bl, int64_t J, Offsets First) {
              ++Writes[O.In];
              EXPECT_EQ(Owner[O.In], Bl) << "element " << O.In;
              if (T.WriteVec > 1) {
                EXPECT_EQ(First.Out % T.WriteVec, 0);
                EXPECT_EQ(O.Out, First.Out + J);
              }
            });
  for (int64_t I = 0; I < N; ++I) {
    ASSERT_EQ(Reads[I], 1) << "input element " << I;
    ASSERT_EQ(Writes[I], 1) << "input element " << I;
  }
}

} // namespace

TEST(TransposeTiling, ExampleUsesVectorsOnBothSides) {
  // exp_transpose_abs: f32[20,160,170]{2,1,0}, P = 3200, M = 170.
  check({{20, 160, 170}, {2, 1, 0}, 0, 0, 0, 2, 4});
}

TEST(TransposeTiling, ForcedWidths) {
  check({{20, 160, 170}, {2, 1, 0}, 0, 1, 1, 1, 1});
  check({{20, 160, 170}, {2, 1, 0}, 0, 1, 0, 1, 4});
  check({{20, 160, 170}, {2, 1, 0}, 0, 0, 2, 2, 2});
  check({{20, 160, 170}, {2, 1, 0}, 0, 2, 1, 2, 1});
  // Widths that are not powers of two round down: 3 -> 2 (3200 % 3 != 0
  // anyway; 48 % 3 == 0 would otherwise give vectors of 3).
  check({{36, 48}, {1, 0}, 0, 0, 3, 2, 2});
  check({{36, 48}, {1, 0}, 0, 3, 0, 2, 4});
}

TEST(TransposeTiling, RaggedAndOddExtents) {
  // Odd M: scalar reads; P % 4 == 2: writes of 2.
  check({{6, 37}, {1, 0}, 0, 0, 0, 1, 2});
  // Odd P: scalar writes and reads (reads of 2 need vector writes).
  check({{45, 38}, {1, 0}, 0, 0, 0, 1, 1});
  // Batched {0,2,1} with ragged tiles on both sides.
  check({{3, 36, 50}, {0, 2, 1}, 0, 0, 0, 2, 4});
  // 4-D, two row dims.
  check({{6, 5, 4, 34}, {3, 2, 1, 0}, 0, 0, 0, 2, 4});
}

TEST(TransposeTiling, WarpCounts) {
  check({{20, 16, 70}, {2, 1, 0}, 2, 0, 0, 2, 4});
  check({{20, 16, 70}, {2, 1, 0}, 8, 0, 0, 2, 4});
  // 16 warps leave 2 rows per warp: writes of at most 2, reads of 2.
  check({{20, 16, 70}, {2, 1, 0}, 16, 0, 0, 2, 2});
  // 32 warps: one row each, scalar.
  check({{20, 16, 70}, {2, 1, 0}, 32, 0, 0, 1, 1});
}

TEST(TransposeTiling, SubTiles) {
  // Several tiles per block, along P, along M and both, ragged on both
  // sides; scalar and vector tiles; 2-byte tiles.
  check({{45, 70}, {1, 0}, 0, 0, 0, 1, 1, 2, 1});
  check({{45, 70}, {1, 0}, 0, 0, 0, 1, 1, 1, 2});
  check({{3, 36, 50}, {0, 2, 1}, 0, 0, 0, 2, 4, 2, 2});
  check({{6, 5, 4, 34}, {3, 2, 1, 0}, 0, 0, 0, 2, 4, 4, 1});
  check({{97, 13, 103}, {2, 0, 1}, 0, 0, 0, 1, 1, 2, 2, 2});
  // Tiles of 32 x 64 (V = 2: 4 SMs need 32 tiles), 8 warps.
  check({{5, 70, 130}, {0, 2, 1}, 0, 0, 0, 1, 1, 2, 1, 4, 4});
  check({{5, 70, 130}, {0, 2, 1}, 0, 0, 0, 1, 1, 1, 2, 2, 4});
  Context Ctx;
  DeviceModel Four = defaultDeviceModel("sm_90");
  Four.SmCount = 4;
  TransposeRequest Want;
  Want.SubP = 2;
  TransposeTiling T =
      transposeTiling(Ctx, {{5, 70, 130}, {0, 2, 1}}, 4, Want, Four);
  EXPECT_EQ(T.V, 2);
  EXPECT_EQ(T.Warps, 8);
  EXPECT_EQ(T.Blocks, 5 * 2 * 3); // P: 2 blocks of 2 tiles; M: 3 tiles
}

TEST(TransposeTiling, OnlyNarrowTilesOf4ByteElementsUseVectors) {
  // Tiles of 32 x 64 (V = 2) keep their own scheme: no ReadVec/WriteVec.
  Context Ctx;
  TransposeTiling T = transposeTiling(Ctx, {{8192, 8192}, {1, 0}}, 4);
  EXPECT_EQ(T.subTiles(), 1);
  EXPECT_EQ(T.V, 2);
  EXPECT_EQ(T.ReadVec, 1);
  EXPECT_EQ(T.WriteVec, 1);
  // 2-byte tiles of 32 x 32 are not vectorized either.
  T = transposeTiling(Ctx, {{20, 160, 170}, {2, 1, 0}}, 2);
  EXPECT_EQ(T.WriteVec, 1);
}

/// transposeTiling of 2-D transposes on 132 SMs, where blocks of 4 warps
/// and 4 KiB tiles fill a wave of 2112.
class TransposeTilingOn132Sms : public ::testing::Test {
protected:
  TransposeTiling Tiling(std::vector<int64_t> Dims, int64_t Bytes,
                         TransposeRequest Want = {}) {
    DeviceModel Device = defaultDeviceModel("sm_90");
    Device.SmCount = 132;
    return transposeTiling(Ctx, {std::move(Dims), {1, 0}}, Bytes, Want, Device);
  }

  Context Ctx;
};

TEST_F(TransposeTilingOn132Sms, WarpsFollowTheWaves) {
  // Blocks of 4 warps of 128 threads and 4 KiB tiles: 16 per SM, a wave of
  // 2112 on 132 SMs. At most 8 waves of them take 8 warps instead.
  // 2-byte tiles of 32 x 64 (V = 2): 32 x 528 = 16896 tiles, 8 waves.
  TransposeTiling T = Tiling({1024, 33792}, 2);
  EXPECT_EQ(T.V, 2);
  EXPECT_EQ(T.Blocks, 16896);
  EXPECT_EQ(T.Warps, 8);
  EXPECT_EQ(T.Threads, 256);
  EXPECT_NE(T.WarpsReason.find("at most 8 waves"), std::string::npos)
      << T.WarpsReason;
  // One more column of tiles: more than 8 waves, 4 warps.
  T = Tiling({1024, 33794}, 2);
  EXPECT_EQ(T.Blocks, 16928);
  EXPECT_EQ(T.Warps, 4);
  EXPECT_NE(T.WarpsReason.find("more than 8 waves"), std::string::npos)
      << T.WarpsReason;
  // A request wins over the rule.
  TransposeRequest Four;
  Four.Warps = 4;
  T = Tiling({1024, 33792}, 2, Four);
  EXPECT_EQ(T.Warps, 4);
  // Tiles of 32 x 64 4-byte elements take 8 warps however many there are.
  T = Tiling({8192, 8192}, 4);
  EXPECT_EQ(T.V, 2);
  EXPECT_EQ(T.Warps, 8);
  EXPECT_NE(T.WarpsReason.find("4-byte"), std::string::npos) << T.WarpsReason;
}

TEST_F(TransposeTilingOn132Sms, FourTilesAlongPWhereTheyFillAFewWaves) {
  // Blocks of one tile (4 warps) fill a wave of 2112 on 132 SMs; 4 tiles
  // along P where those would fill 2 to 8 waves, the tiles are 32 x 32 of
  // 2- or 4-byte elements, and P wastes at most 5 % of 4-tile blocks.
  // f32 [12610, 1031] (odd M: V = 1): 395 x 33 tiles, 6.2 waves; P = 12610
  // in 99 blocks of 128 (0.5 % empty).
  TransposeTiling T = Tiling({12610, 1031}, 4);
  EXPECT_EQ(T.V, 1);
  EXPECT_EQ(T.SubM, 1);
  EXPECT_EQ(T.SubP, 4);
  EXPECT_EQ(T.Blocks, 99 * 33);
  // 2-byte tiles (two along M: 8 tiles a block) take 4 as well: 99 x 17
  // blocks; 1-byte ones keep one.
  T = Tiling({12610, 1031}, 2);
  EXPECT_EQ(T.SubM, 2);
  EXPECT_EQ(T.SubP, 4);
  EXPECT_EQ(T.Blocks, 99 * 17);
  EXPECT_EQ(Tiling({12610, 1031}, 1).SubP, 1);
  // Tiles of 32 x 64 (V = 2) keep one.
  T = Tiling({129, 90300}, 4);
  EXPECT_EQ(T.V, 2);
  EXPECT_EQ(T.SubP, 1);
  // P = 200 leaves 28 % of two 4-tile blocks empty.
  EXPECT_EQ(Tiling({200, 30001}, 4).SubP, 1);
  // Under 2 waves (f32[1023,2049]: 32 x 65 tiles) and over 8 (f32[16384,
  // 16385]: 124 waves) keep one.
  EXPECT_EQ(Tiling({1023, 2049}, 4).SubP, 1);
  EXPECT_EQ(Tiling({16384, 16385}, 4).SubP, 1);
  // A request wins over the rule.
  TransposeRequest One;
  One.SubP = 1;
  EXPECT_EQ(Tiling({12610, 1031}, 4, One).SubP, 1);
}
