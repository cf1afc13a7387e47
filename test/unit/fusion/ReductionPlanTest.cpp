//===- ReductionPlanTest.cpp - Lanes per row, full reductions' tails ------===//
//
// Part of idxmap. How many lanes of a warp share a row of a row reduction
// whose rows share warps: one lane when the whole row is at most four
// 16-byte units that one thread reads in at most 8 loads, else a power of
// two covering the row's units. A full reduction whose length the widest
// vector does not divide reads all but a short tail in vectors; its
// partials are folded by the block with the last ticket only when tuned.
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

/// The H200 plan of a full sum of \p In (accumulated in f32), under \p T.
Expected<KernelPlan> fullSumPlan(const std::string &In, const Tuning &T,
                                 std::unique_ptr<HloModule> &M, Context &Ctx) {
  const std::string Wide = "f32" + In.substr(In.find('['));
  M = oneFusionModule(In, "f32[]",
                      "  x = " + In + " parameter(0)\n  c = " + Wide +
                          " convert(x)\n  z = f32[] constant(0)\n"
                          "  ROOT r = f32[] reduce(c, z), dimensions={0}, "
                          "to_apply=add\n");
  if (!M) {
    Diagnostic D;
    D.Message = "the module does not parse";
    return D;
  }
  FusionAnalysis A = analyzeFusion(fusionOf(*M));
  return planFusion(Ctx, A, T, *lookupDeviceModel("H200"));
}

TEST(ReductionPlan, FullReductionReadsAllButItsTailInVectors) {
  std::unique_ptr<HloModule> M;
  Context Ctx;
  // 2^25 - 1 bf16: 4194303 vectors of 8, then 7 elements one a thread.
  Expected<KernelPlan> P = fullSumPlan("bf16[33554431]", {}, M, Ctx);
  ASSERT_TRUE(bool(P)) << P.error().str();
  ASSERT_TRUE(P->Reduction);
  EXPECT_EQ(P->Reduction->Vector, 8);
  EXPECT_EQ(P->Reduction->TailElements, 7);
  EXPECT_EQ(P->Reduction->Dims[2], 33554424);
  // Without the tail: the widest vector that divides an odd length is 1.
  Tuning T;
  T.RedFullTail = 0;
  Expected<KernelPlan> Q = fullSumPlan("bf16[33554431]", T, M, Ctx);
  ASSERT_TRUE(bool(Q)) << Q.error().str();
  EXPECT_EQ(Q->Reduction->Vector, 1);
  EXPECT_EQ(Q->Reduction->TailElements, 0);
  EXPECT_EQ(Q->Reduction->Dims[2], 33554431);
  // A length the vector divides has no tail; one shorter than a vector
  // reads element by element.
  Expected<KernelPlan> Even = fullSumPlan("f32[1000000]", {}, M, Ctx);
  ASSERT_TRUE(bool(Even)) << Even.error().str();
  EXPECT_EQ(Even->Reduction->Vector, 4);
  EXPECT_EQ(Even->Reduction->TailElements, 0);
  Expected<KernelPlan> Short = fullSumPlan("f32[3]", {}, M, Ctx);
  ASSERT_TRUE(bool(Short)) << Short.error().str();
  EXPECT_EQ(Short->Reduction->Vector, 1);
  EXPECT_EQ(Short->Reduction->TailElements, 0);
}

TEST(ReductionPlan, TicketFoldIsTheDefaultForMultiBlockReductions) {
  std::unique_ptr<HloModule> M;
  Context Ctx;
  Tuning T;
  T.RedTicketFold = 1;
  Tuning Arrival;
  Arrival.RedTicketFold = 0;
  // 1000000 f32: 123 blocks, whose partials the block with the last
  // ticket folds by default; tuned to 0, the last block to arrive.
  Expected<KernelPlan> Def = fullSumPlan("f32[1000000]", {}, M, Ctx);
  ASSERT_TRUE(bool(Def)) << Def.error().str();
  EXPECT_TRUE(Def->Reduction->MultiBlock);
  EXPECT_TRUE(Def->Reduction->TicketFold);
  Expected<KernelPlan> Tk = fullSumPlan("f32[1000000]", T, M, Ctx);
  ASSERT_TRUE(bool(Tk)) << Tk.error().str();
  EXPECT_TRUE(Tk->Reduction->MultiBlock);
  EXPECT_TRUE(Tk->Reduction->TicketFold);
  bool Recorded = false;
  for (const PlanChoice &C : Tk->Choices)
    Recorded |= C.Name == "ticket_fold" && C.Value == 1;
  EXPECT_TRUE(Recorded);
  Expected<KernelPlan> Ar = fullSumPlan("f32[1000000]", Arrival, M, Ctx);
  ASSERT_TRUE(bool(Ar)) << Ar.error().str();
  EXPECT_TRUE(Ar->Reduction->MultiBlock);
  EXPECT_FALSE(Ar->Reduction->TicketFold);
  // Fewer round trips after the blocks' loads: a lower estimate.
  EXPECT_LT(Tk->Cost.Microseconds, Ar->Cost.Microseconds);
  // A split column reduction folds by ticket too; tuned to 0, by arrival,
  // with up to 32 partials a thread loads at a time.
  const char *ColText =
      "HloModule c\nadd {\n  a = f32[] parameter(0)\n  b = f32[] "
      "parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nfused {\n  x = "
      "f32[100352,64] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = "
      "f32[64] reduce(x, z), dimensions={0}, to_apply=add\n}\nENTRY e {\n"
      "  p = f32[100352,64] parameter(0)\n  ROOT f = f32[64] fusion(p), "
      "kind=kInput, calls=fused\n}\n";
  Expected<KernelPlan> Col =
      planOfText(ColText, EmitterKind::ColumnReduction, {}, M);
  ASSERT_TRUE(bool(Col)) << Col.error().str();
  EXPECT_TRUE(Col->Reduction->MultiBlock);
  EXPECT_TRUE(Col->Reduction->TicketFold);
  EXPECT_LE(Col->Reduction->CombineBatch, Col->Reduction->TicketBatch);
  // Each folding thread polls at most TicketBatch flag words at a time
  // (their registers), in more batches than the arrival fold's loads: 8
  // lanes and 8 warps give 242 chunks in 8 groups.
  Tuning TK;
  TK.RedColLanes = 8;
  TK.RedColWarps = 8;
  Col = planOfText(ColText, EmitterKind::ColumnReduction, TK, M);
  ASSERT_TRUE(bool(Col)) << Col.error().str();
  EXPECT_TRUE(Col->Reduction->TicketFold);
  EXPECT_EQ(Col->Reduction->CombineBatch, Col->Reduction->TicketBatch);
  const int64_t PerGroup =
      (Col->Reduction->Split + Col->Reduction->CombineGroups - 1) /
      Col->Reduction->CombineGroups;
  EXPECT_GT(PerGroup, Col->Reduction->TicketBatch);
  EXPECT_EQ(Col->Reduction->combineBatches(),
            (PerGroup + Col->Reduction->TicketBatch - 1) /
                Col->Reduction->TicketBatch);
  // The same lanes and warps by arrival: the whole column's share in one
  // batch of loads.
  Tuning TA = TK;
  TA.RedTicketFold = 0;
  Expected<KernelPlan> ColAr =
      planOfText(ColText, EmitterKind::ColumnReduction, TA, M);
  ASSERT_TRUE(bool(ColAr)) << ColAr.error().str();
  EXPECT_FALSE(ColAr->Reduction->TicketFold);
  EXPECT_EQ(ColAr->Reduction->CombineGroups, Col->Reduction->CombineGroups);
  EXPECT_EQ(ColAr->Reduction->CombineBatch, PerGroup);
  EXPECT_EQ(ColAr->Reduction->combineBatches(), 1);
  // One block: nothing to fold, the knob does not apply.
  Expected<KernelPlan> One = fullSumPlan("f32[3]", T, M, Ctx);
  ASSERT_TRUE(bool(One)) << One.error().str();
  EXPECT_FALSE(One->Reduction->MultiBlock);
  EXPECT_FALSE(One->Reduction->TicketFold);
}

TEST(ReductionPlan, RoundingDepthCountsAThreadsStepsInSeries) {
  // f16[5,13,2,1000]{2,0,1,3} summed over {2,3}: rows of 2 elements, 1000
  // major steps apart. One thread per row adds its 2 x 1000 elements in
  // series (rows share warps, one lane each): 2000 roundings, where a
  // tree's depth is 11.
  auto M = oneFusionModule(
      "f16[5,13,2,1000]{2,0,1,3}", "f32[5,13]",
      "  x = f16[5,13,2,1000]{2,0,1,3} parameter(0)\n"
      "  c = f32[5,13,2,1000]{2,0,1,3} convert(x)\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[5,13] reduce(c, z), dimensions={2,3}, to_apply=add\n");
  ASSERT_TRUE(M);
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, analyzeFusion(fusionOf(*M)),
                                      Tuning{}, *lookupDeviceModel("H200"));
  ASSERT_TRUE(bool(P)) << P.error().str();
  const ReductionPlan &R = *P->Reduction;
  ASSERT_EQ(R.Mode, ReductionMode::RowGroup);
  ASSERT_EQ(R.LanesPerRow, 1);
  EXPECT_EQ(R.Dims[0] * R.Iterations * R.Vector, 2000);
  EXPECT_EQ(R.RoundingDepth, 2000);

  // f32[1000000] over 123 blocks of 512 threads, 4-element vectors: a
  // thread's 4 vectors (16 adds), 9 levels of shuffles and warps, then the
  // block with the last ticket folds the 123 partials with one warp (4 a
  // lane) and 5 levels of shuffles.
  std::unique_ptr<HloModule> F;
  Expected<KernelPlan> Full = fullSumPlan("f32[1000000]", {}, F, Ctx);
  ASSERT_TRUE(bool(Full)) << Full.error().str();
  const ReductionPlan &FR = *Full->Reduction;
  ASSERT_TRUE(FR.MultiBlock);
  ASSERT_EQ(Full->Block[0], 512);
  ASSERT_EQ(Full->Grid[0], 123);
  EXPECT_EQ(FR.Dims[0] * FR.Iterations * FR.Vector, 16);
  ASSERT_TRUE(FR.TicketFold);
  ASSERT_EQ(FR.TicketFolders, 32);
  EXPECT_EQ(FR.RoundingDepth, 16 + 9 + 4 + 5);
}

} // namespace
