//===- PiecewisePlanTest.cpp - Concatenate and input-slices plans ---------===//
//
// Part of idxmap. The threads of the concatenate and input-slices plans:
// 128 per block from DRAM, 256 when the data stays in L2 (the blocks'
// start-up counts there), and the runs a thread computes (IDXMAP_PIECE_
// UNROLL) shrinking the grid without leaving an element out.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Tuning.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace idxmap;

namespace {

/// The plan of a fusion concatenating bf16[Rows, W] for each W of \p Widths
/// along dim 1.
Expected<KernelPlan> concatPlan(int64_t Rows,
                                const std::vector<int64_t> &Widths,
                                const Tuning &T,
                                std::unique_ptr<HloModule> &M) {
  std::string Params, Args, Ops, Names;
  int64_t Total = 0;
  for (size_t K = 0; K < Widths.size(); ++K) {
    std::string Ty =
        "bf16[" + std::to_string(Rows) + "," + std::to_string(Widths[K]) + "]";
    Params += "  p" + std::to_string(K) + " = " + Ty + " parameter(" +
              std::to_string(K) + ")\n";
    Args += "  a" + std::to_string(K) + " = " + Ty + " parameter(" +
            std::to_string(K) + ")\n";
    Ops += (K ? ", p" : "p") + std::to_string(K);
    Names += (K ? ", a" : "a") + std::to_string(K);
    Total += Widths[K];
  }
  const std::string Out =
      "bf16[" + std::to_string(Rows) + "," + std::to_string(Total) + "]";
  std::string Text = "HloModule m\n\nfused {\n" + Params + "  ROOT c = " + Out +
                     " concatenate(" + Ops +
                     "), dimensions={1}\n}\n\n"
                     "ENTRY e {\n" +
                     Args + "  ROOT f = " + Out + " fusion(" + Names +
                     "), kind=kLoop, calls=fused\n}\n";
  auto Parsed = parseHloModule(Text, "test.hlo");
  EXPECT_TRUE(bool(Parsed)) << (Parsed ? "" : Parsed.error().str()) << Text;
  if (!Parsed)
    return Parsed.error();
  M = std::move(*Parsed);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  EXPECT_EQ(A.Kind, EmitterKind::Concatenate) << A.Reason;
  Context Ctx;
  return planFusion(Ctx, A, T, *lookupDeviceModel("H200"));
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

} // namespace
