//===- PiecewisePlanTest.cpp - Concatenate and input-slices plans ---------===//
//
// Part of idxmap. The threads of the concatenate and input-slices plans:
// 128 per block from DRAM, 256 when the data stays in L2 (the blocks'
// start-up counts there), and the runs a thread computes (4 where the
// bytes fit in L2, IDXMAP_PIECE_UNROLL) shrinking the grid without leaving
// an element out; concatenates
// by operand (each operand's blocks walking its own space).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Tuning.h"
#include "support/FusionModules.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace idxmap;

namespace {

/// The plan of a fusion concatenating the operands \p Shapes (rank 2, of
/// type \p Ty) along \p Dim.
Expected<KernelPlan>
concatPlanOf(const std::vector<std::pair<int64_t, int64_t>> &Shapes,
             int64_t Dim, const Tuning &T, std::unique_ptr<HloModule> &M,
             const std::string &Ty = "bf16") {
  std::string Params, Args, Ops, Names;
  int64_t Total = 0;
  auto TypeOf = [&](int64_t R, int64_t C) {
    return Ty + "[" + std::to_string(R) + "," + std::to_string(C) + "]";
  };
  for (size_t K = 0; K < Shapes.size(); ++K) {
    std::string OpTy = TypeOf(Shapes[K].first, Shapes[K].second);
    Params += "  p" + std::to_string(K) + " = " + OpTy + " parameter(" +
              std::to_string(K) + ")\n";
    Args += "  a" + std::to_string(K) + " = " + OpTy + " parameter(" +
            std::to_string(K) + ")\n";
    Ops += (K ? ", p" : "p") + std::to_string(K);
    Names += (K ? ", a" : "a") + std::to_string(K);
    Total += Dim ? Shapes[K].second : Shapes[K].first;
  }
  const std::string Out =
      Dim ? TypeOf(Shapes[0].first, Total) : TypeOf(Total, Shapes[0].second);
  std::string Text = "HloModule m\n\nfused {\n" + Params + "  ROOT c = " + Out +
                     " concatenate(" + Ops + "), dimensions={" +
                     std::to_string(Dim) +
                     "}\n}\n\n"
                     "ENTRY e {\n" +
                     Args + "  ROOT f = " + Out + " fusion(" + Names +
                     "), kind=kLoop, calls=fused\n}\n";
  return idxmap::testing::planOfText(Text, EmitterKind::Concatenate, T, M);
}

/// The plan of a fusion concatenating bf16[Rows, W] for each W of \p Widths
/// along dim 1.
Expected<KernelPlan> concatPlan(int64_t Rows,
                                const std::vector<int64_t> &Widths,
                                const Tuning &T,
                                std::unique_ptr<HloModule> &M) {
  std::vector<std::pair<int64_t, int64_t>> Shapes;
  for (int64_t W : Widths)
    Shapes.push_back({Rows, W});
  return concatPlanOf(Shapes, 1, T, M);
}

TEST(PiecewisePlan, LargerBlocksWhenTheDataStaysInL2) {
  std::unique_ptr<HloModule> M;
  // 3.5 MiB moved: in the H200's L2.
  Expected<KernelPlan> Small = concatPlan(512, {1024, 512, 256}, {}, M);
  ASSERT_TRUE(bool(Small));
  EXPECT_EQ(Small->Block[0], 256);
  // 112 MiB from DRAM.
  Expected<KernelPlan> Large = concatPlan(16384, {1024, 512, 256}, {}, M);
  ASSERT_TRUE(bool(Large));
  EXPECT_EQ(Large->Block[0], 128);
  EXPECT_EQ(Large->Main.Unroll, 1);
  // 8 bf16 per thread over the largest operand, 16384 x 1024.
  EXPECT_EQ(Large->Grid[0], 16384 * 1024 / 8 / 128);
}

TEST(PiecewisePlan, FourRunsAThreadWhereTheBytesFitInL2) {
  std::unique_ptr<HloModule> M;
  auto UnrollOf = [&](int64_t Rows, const std::vector<int64_t> &Widths) {
    Expected<KernelPlan> P = concatPlan(Rows, Widths, {}, M);
    EXPECT_TRUE(bool(P));
    return P ? P->Main.Unroll : 0;
  };
  // 24 MiB: in the H200's 50 MiB of L2 but not a quarter of it.
  EXPECT_EQ(UnrollOf(2048, {1024, 1024, 1024}), 4);
  // 48 MiB: still.
  EXPECT_EQ(UnrollOf(4096, {1024, 1024, 1024}), 4);
  // 96 MiB: beyond it.
  EXPECT_EQ(UnrollOf(8192, {1024, 1024, 1024}), 1);
  // 6 MiB stays in L2 between launches.
  EXPECT_EQ(UnrollOf(512, {1024, 1024, 1024}), 1);
  // 15.8 MiB, but runs of 8 along the largest operand's rows of 1024 cut
  // the edge of the operand of 1004: its lanes are stored one by one.
  EXPECT_EQ(UnrollOf(2048, {1024, 1004}), 1);
  // The unrolled grid still covers every run: 2048 x 1024 / 8 runs of the
  // largest operand, 128 x 4 a block.
  Expected<KernelPlan> P = concatPlan(2048, {1024, 1024, 1024}, {}, M);
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Grid[0], 2048 * 1024 / 8 / (128 * 4));
  // Input slices keep one run a thread: f32[4096,1024] split into 4 heads
  // (32 MiB).
  std::string Split = "HloModule m\n\nfused {\n"
                      "  x = f32[4096,1024] parameter(0)\n";
  std::string Types, Names;
  for (int K = 0; K < 4; ++K) {
    const std::string N = "s" + std::to_string(K);
    Split += "  " + N + " = f32[4096,256] slice(x), slice={[0:4096], [" +
             std::to_string(256 * K) + ":" + std::to_string(256 * K + 256) +
             "]}\n";
    Types += (K ? ", " : "") + std::string("f32[4096,256]");
    Names += (K ? ", " : "") + N;
  }
  Split += "  ROOT t = (" + Types + ") tuple(" + Names +
           ")\n}\n\nENTRY e {\n  a = f32[4096,1024] parameter(0)\n"
           "  ROOT f = (" +
           Types + ") fusion(a), kind=kInput, calls=fused\n}\n";
  Expected<KernelPlan> S =
      idxmap::testing::planOfText(Split, EmitterKind::InputSlices, {}, M);
  ASSERT_TRUE(bool(S));
  EXPECT_EQ(S->Main.Unroll, 1);
  // The knob overrides the rule.
  Tuning T;
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_UNROLL", 1));
  P = concatPlan(2048, {1024, 1024, 1024}, T, M);
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Main.Unroll, 1);
}

TEST(PiecewisePlan, EvictLastFromDramUpToSixFifthsOfL2) {
  std::unique_ptr<HloModule> M;
  // 28 MiB from DRAM, at most 1.2 x the H200's 50 MiB of L2: the operands
  // load with an L2 evict_last policy.
  Expected<KernelPlan> Mid = concatPlan(4096, {1024, 512, 256}, {}, M);
  ASSERT_TRUE(bool(Mid));
  ASSERT_TRUE(Mid->Pieces);
  EXPECT_TRUE(Mid->Pieces->EvictLast);
  const PlanChoice *C = nullptr;
  for (const PlanChoice &Ch : Mid->Choices)
    if (Ch.Name == "evict_last")
      C = &Ch;
  ASSERT_TRUE(C);
  EXPECT_EQ(C->Value, 1);
  // 7168 bytes moved per row.
  auto EvictLastAt = [&](int64_t Rows) {
    Expected<KernelPlan> P = concatPlan(Rows, {1024, 512, 256}, {}, M);
    EXPECT_TRUE(P && P->Pieces);
    return P && P->Pieces && P->Pieces->EvictLast;
  };
  // 56 MiB: still at most 60; 8777 rows are 60 MiB less 1 KiB, 8778 just
  // past 60 MiB; 112 MiB: plain loads; 3.5 MiB stays in L2: plain loads.
  EXPECT_TRUE(EvictLastAt(8192));
  EXPECT_TRUE(EvictLastAt(8777));
  EXPECT_FALSE(EvictLastAt(8778));
  EXPECT_FALSE(EvictLastAt(16384));
  EXPECT_FALSE(EvictLastAt(512));
  // The knob turns it off and on.
  Tuning T;
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_EVICT_LAST", 0));
  Expected<KernelPlan> Off = concatPlan(4096, {1024, 512, 256}, T, M);
  ASSERT_TRUE(bool(Off));
  EXPECT_FALSE(Off->Pieces->EvictLast);
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_EVICT_LAST", 1));
  Expected<KernelPlan> On = concatPlan(16384, {1024, 512, 256}, T, M);
  ASSERT_TRUE(bool(On));
  EXPECT_TRUE(On->Pieces->EvictLast);
}

TEST(PiecewisePlan, UnrolledRunsShrinkTheGrid) {
  std::unique_ptr<HloModule> M;
  Tuning T;
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_UNROLL", 4));
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_THREADS", 64));
  // 1000 rows of 1024: 128000 runs of 8, 64 x 4 per block: 500 blocks.
  Expected<KernelPlan> P = concatPlan(1000, {1024, 24}, T, M);
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Block[0], 64);
  EXPECT_EQ(P->Main.Unroll, 4);
  EXPECT_EQ(P->Grid[0], 500);
  // A ragged last block: 1001 rows leave 128128 runs, 501 blocks.
  P = concatPlan(1001, {1024, 24}, T, M);
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Grid[0], 501);
}

TEST(PiecewisePlan, ByOperandAlongTheMajorMostDim) {
  std::unique_ptr<HloModule> M;
  // Three bf16[4096, 2048] along dim 0: each operand one chunk of the
  // output, walked by blocks of its own in runs of 8.
  Expected<KernelPlan> P =
      concatPlanOf({{4096, 2048}, {4096, 2048}, {4096, 2048}}, 0, {}, M);
  ASSERT_TRUE(bool(P));
  ASSERT_TRUE(P->Pieces.has_value());
  ASSERT_TRUE(P->Pieces->Blocked);
  const int64_t Each = 4096 * 2048 / 8 / 128;
  for (size_t K = 0; K < 3; ++K) {
    const PiecewisePlan::Piece &Pc = P->Pieces->Pieces[K];
    EXPECT_EQ(Pc.Main.Vector, 8);
    EXPECT_EQ(Pc.Main.Blocks, Each);
    EXPECT_EQ(Pc.FirstBlock, int64_t(K) * Each);
    EXPECT_TRUE(Pc.WholeRuns);
    EXPECT_EQ(Pc.StoreWidth, 8);
  }
  EXPECT_EQ(P->Grid[0], 3 * Each);
  // Small operands at odd offsets walk in runs of 1 (3 and 15 elements
  // at 3000 and 3003); the launch's blocks are as wide as the widest walk.
  P = concatPlanOf({{1000, 3}, {1, 3}, {5, 3}}, 0, {}, M);
  ASSERT_TRUE(bool(P));
  ASSERT_TRUE(P->Pieces->Blocked);
  EXPECT_EQ(P->Pieces->Pieces[0].Main.Vector, 8);
  EXPECT_EQ(P->Pieces->Pieces[1].Main.Vector, 1);
  EXPECT_EQ(P->Pieces->Pieces[2].Main.Vector, 1);
  for (const PiecewisePlan::Piece &Pc : P->Pieces->Pieces)
    EXPECT_LE(Pc.Main.ThreadsPerBlock, P->Block[0]);
  // The knob turns it off.
  Tuning T;
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_BY_OPERAND", 0));
  P = concatPlanOf({{4096, 2048}, {4096, 2048}}, 0, T, M);
  ASSERT_TRUE(bool(P));
  EXPECT_FALSE(P->Pieces->Blocked);
  EXPECT_EQ(P->Grid[0], 4096 * 2048 / 8 / 128);
}

TEST(PiecewisePlan, ByOperandAlongTheMinorDimOnlyByTheKnob) {
  std::unique_ptr<HloModule> M;
  Expected<KernelPlan> P = concatPlan(8192, {1024, 512, 256}, {}, M);
  ASSERT_TRUE(bool(P));
  EXPECT_FALSE(P->Pieces->Blocked);
  Tuning T;
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_BY_OPERAND", 1));
  P = concatPlan(8192, {1024, 512, 256}, T, M);
  ASSERT_TRUE(bool(P));
  ASSERT_TRUE(P->Pieces->Blocked);
  // Runs of 8 in each operand's rows, the blocks one after another.
  const int64_t Blocks[] = {8192 * 1024 / 8 / 128, 8192 * 512 / 8 / 128,
                            8192 * 256 / 8 / 128};
  int64_t First = 0;
  for (size_t K = 0; K < 3; ++K) {
    const PiecewisePlan::Piece &Pc = P->Pieces->Pieces[K];
    EXPECT_EQ(Pc.Main.Vector, 8);
    EXPECT_EQ(Pc.Main.Blocks, Blocks[K]);
    EXPECT_EQ(Pc.FirstBlock, First);
    EXPECT_EQ(Pc.StoreWidth, 8);
    First += Blocks[K];
  }
  // f32 rows of 128 + 256 + 33: the output's rows of 417 start unaligned,
  // so every operand walks in runs of 1 (kept as a concatenate plan: the
  // walk over the output would take it otherwise).
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_OVER_OUTPUT", 0));
  P = concatPlanOf({{4096, 128}, {4096, 256}, {4096, 33}}, 1, T, M, "f32");
  ASSERT_TRUE(bool(P));
  ASSERT_TRUE(P->Pieces.has_value());
  for (const PiecewisePlan::Piece &Pc : P->Pieces->Pieces)
    EXPECT_EQ(Pc.Main.Vector, 1);
}

TEST(PiecewisePlan, NoVectorStoreGoesOverTheOutput) {
  // Rows of 417 f32: no operand's run is a vector in the output, so the
  // loop emitter walks the output in vectors of 4.
  std::unique_ptr<HloModule> M;
  Expected<KernelPlan> P =
      concatPlanOf({{4096, 128}, {4096, 256}, {4096, 33}}, 1, {}, M, "f32");
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Kind, EmitterKind::Loop);
  EXPECT_FALSE(P->Pieces.has_value());
  EXPECT_EQ(P->Main.Vector, 4);
  // Aligned rows keep the concatenate plan and its vector stores.
  P = concatPlanOf({{4096, 128}, {4096, 256}, {4096, 32}}, 1, {}, M, "f32");
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Kind, EmitterKind::Concatenate);
  // Below 1 MiB moved, the concatenate plan's fewer blocks stay.
  P = concatPlanOf({{1000, 77}, {1000, 33}, {1000, 1}}, 1, {}, M, "s8");
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Kind, EmitterKind::Concatenate);
  // The knob forces either way.
  Tuning T;
  ASSERT_FALSE(setTuning(T, "IDXMAP_PIECE_OVER_OUTPUT", 1));
  P = concatPlanOf({{4096, 128}, {4096, 256}, {4096, 32}}, 1, T, M, "f32");
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Kind, EmitterKind::Loop);
}

} // namespace
