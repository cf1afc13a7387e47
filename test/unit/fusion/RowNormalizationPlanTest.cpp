//===- RowNormalizationPlanTest.cpp - The row-normalization plan ----------===//
//
// Part of idxmap. planFusion on softmax-like fusions: which fusions are row
// normalizations, the sizes chosen (vector width, threads per row, chunks
// per thread, rows per block and the few-rows shrink), the thread map, the
// vector widths proven, the refusal of rows too long for one block (from
// the device model's block limit), and tuning overrides recorded as such.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Print.h"

#include "support/FusionModules.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

const char *AddF32 = "add_f32 {\n"
                     "  a = f32[] parameter(0)\n"
                     "  b = f32[] parameter(1)\n"
                     "  ROOT s = f32[] add(a, b)\n"
                     "}\n"
                     "max_f32 {\n"
                     "  a = f32[] parameter(0)\n"
                     "  b = f32[] parameter(1)\n"
                     "  ROOT m = f32[] maximum(a, b)\n"
                     "}\n";

/// Softmax of f32[R, N] rows.
std::unique_ptr<HloModule> softmax(int64_t R, int64_t N) {
  std::string S = "f32[" + std::to_string(R) + "," + std::to_string(N) + "]";
  std::string V = "f32[" + std::to_string(R) + "]";
  return oneFusionModule(
      S, S,
      "  x = " + S + " parameter(0)\n" +
          "  ninf = f32[] constant(-inf)\n"
          "  zero = f32[] constant(0)\n"
          "  rmax = " +
          V + " reduce(x, ninf), dimensions={1}, to_apply=max_f32\n" +
          "  bmax = " + S + " broadcast(rmax), dimensions={0}\n" +
          "  shifted = " + S + " subtract(x, bmax)\n" + "  e = " + S +
          " exponential(shifted)\n" + "  rsum = " + V +
          " reduce(e, zero), dimensions={1}, to_apply=add_f32\n" +
          "  bsum = " + S + " broadcast(rsum), dimensions={0}\n" +
          "  ROOT out = " + S + " divide(e, bsum)\n");
}

const PlanChoice *findChoice(const KernelPlan &P, const std::string &Name) {
  for (const PlanChoice &C : P.Choices)
    if (C.Name == Name)
      return &C;
  return nullptr;
}

DeviceModel h200() { return *lookupDeviceModel("H200"); }

TEST(RowNormalizationPlan, Softmax) {
  auto M = softmax(4096, 4096);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  EXPECT_TRUE(isRowNormalization(A));
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, h200());
  ASSERT_TRUE(P) << P.error().str();
  EXPECT_EQ(P->Emitter, "row normalization");
  EXPECT_EQ(P->Grid[0], 4096);
  EXPECT_EQ(P->Block[0], 512);
  ASSERT_TRUE(P->RowNormalization);
  const RowNormalizationPlan &RN = *P->RowNormalization;
  EXPECT_EQ(RN.Rows, 4096);
  EXPECT_EQ(RN.RowLength, 4096);
  EXPECT_EQ(RN.Vector, 4);
  EXPECT_EQ(RN.LanesPerRow, 512);
  EXPECT_EQ(RN.ChunksPerThread, 2);
  EXPECT_EQ(RN.RowsPerBlock, 1);
  EXPECT_FALSE(RN.ExactDivide);
  EXPECT_EQ(RN.BackEndOptLevel, 0u);
  // max, then the sum of exp(x - max): two levels.
  ASSERT_EQ(RN.Reduces.size(), 2u);
  EXPECT_EQ(RN.Reduces[0]->name(), "rmax");
  EXPECT_EQ(RN.Reduces[1]->name(), "rsum");
  EXPECT_EQ(RN.Levels, (std::vector<int>{0, 1}));
  EXPECT_EQ(RN.NumLevels, 2);
  EXPECT_EQ(RN.KeptDims, (std::vector<int64_t>{0}));
  EXPECT_EQ(RN.ElementRoot, (std::vector<bool>{true}));
  EXPECT_EQ(RN.LoadWidth, (std::vector<int64_t>{4}));
  EXPECT_EQ(RN.StoreWidth, (std::vector<int64_t>{4}));
  EXPECT_EQ(P->Main.Target->name(), "x");
  EXPECT_EQ(printMap(P->Main.Map),
            "(th_x, bl_x)[j, vec] -> (bl_x, th_x * 4 + j * 2048 + vec), "
            "domain: th_x in [0, 511], bl_x in [0, 4095], j in [0, 1], vec "
            "in [0, 3]");
  const PlanChoice *E = findChoice(*P, "elements");
  ASSERT_TRUE(E);
  EXPECT_EQ(E->Value, 8);
  EXPECT_EQ(E->Reason.find("tuning override"), std::string::npos);
  std::string Text = printKernelPlan(*P);
  EXPECT_NE(Text.find("plan: row normalization, grid [4096, 1, 1], block "
                      "[512, 1, 1]"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("lanes_per_row = 512"), std::string::npos) << Text;
}

TEST(RowNormalizationPlan, OverridesAreRecorded) {
  auto M = softmax(4096, 4096);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  Tuning T;
  T.RowNormElements = 16;
  T.RowNormExactDivide = 1;
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, A, T, h200());
  ASSERT_TRUE(P) << P.error().str();
  const RowNormalizationPlan &RN = *P->RowNormalization;
  // 16 elements per thread: 256 threads of 4 vectors per row.
  EXPECT_EQ(RN.LanesPerRow, 256);
  EXPECT_EQ(RN.ChunksPerThread, 4);
  EXPECT_EQ(P->Block[0], 256);
  EXPECT_TRUE(RN.ExactDivide);
  const PlanChoice *E = findChoice(*P, "elements");
  ASSERT_TRUE(E);
  EXPECT_EQ(E->Value, 16);
  EXPECT_EQ(E->Reason, "tuning override IDXMAP_ROWNORM_ELEMENTS");
  const PlanChoice *D = findChoice(*P, "exact_divide");
  ASSERT_TRUE(D);
  EXPECT_EQ(D->Reason, "tuning override IDXMAP_ROWNORM_EXACT_DIVIDE");
}

TEST(RowNormalizationPlan, FewShortRowsShrinkTheBlock) {
  // 3 rows of 128: 16 threads per row; 64 threads hold 4 rows, and half
  // the block (2 rows) would not hold all three: 64 threads stay.
  auto M = softmax(3, 128);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, h200());
  ASSERT_TRUE(P) << P.error().str();
  const RowNormalizationPlan &RN = *P->RowNormalization;
  EXPECT_EQ(RN.LanesPerRow, 16);
  EXPECT_EQ(RN.ChunksPerThread, 2);
  EXPECT_EQ(RN.RowsPerBlock, 4);
  EXPECT_EQ(P->Block[0], 64);
  EXPECT_EQ(P->Grid[0], 1);
  // The fourth row of the block is past the end: its threads map nowhere.
  EXPECT_EQ(printMap(P->Main.Map),
            "(th_x, bl_x)[j, vec] -> (th_x floordiv 16, j * 64 + vec + (th_x "
            "mod 16) * 4), domain: th_x in [0, 47], bl_x in [0, 0], j in [0, "
            "1], vec in [0, 3]");
}

TEST(RowNormalizationPlan, TwoWarpBlocksUnlessTuned) {
  // Rows of 256 f32: 32 threads of two vectors each, blocks of two warps
  // (two rows); IDXMAP_ROWNORM_THREADS widens them, never below a row.
  auto M = softmax(4096, 256);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, h200());
  ASSERT_TRUE(P) << P.error().str();
  EXPECT_EQ(P->RowNormalization->LanesPerRow, 32);
  EXPECT_EQ(P->RowNormalization->RowsPerBlock, 2);
  EXPECT_EQ(P->Block[0], 64);
  EXPECT_EQ(P->Grid[0], 2048);
  Tuning T;
  T.RowNormThreads = 256;
  Expected<KernelPlan> W = planFusion(Ctx, A, T, h200());
  ASSERT_TRUE(W) << W.error().str();
  EXPECT_EQ(W->RowNormalization->RowsPerBlock, 8);
  EXPECT_EQ(W->Block[0], 256);
  EXPECT_EQ(W->Grid[0], 512);
  const PlanChoice *C = findChoice(*W, "threads");
  ASSERT_TRUE(C);
  EXPECT_EQ(C->Reason, "tuning override IDXMAP_ROWNORM_THREADS");
  // Long rows keep a block per row: 512 lanes, whatever the knob asks.
  auto L = softmax(64, 4096);
  ASSERT_TRUE(L);
  FusionAnalysis LA = analyzeFusion(*L->entry()->root());
  T.RowNormThreads = 32;
  Expected<KernelPlan> R = planFusion(Ctx, LA, T, h200());
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_EQ(R->Block[0], 512);
  EXPECT_EQ(R->RowNormalization->RowsPerBlock, 1);
}

TEST(RowNormalizationPlan, RowTooLongForOneBlock) {
  auto M = oneFusionModule("f32[8,131072]", "f32[8,131072]",
                           "  x = f32[8,131072] parameter(0)\n"
                           "  zero = f32[] constant(0)\n"
                           "  s = f32[8] reduce(x, zero), dimensions={1}, "
                           "to_apply=add_f32\n"
                           "  b = f32[8,131072] broadcast(s), dimensions={0}\n"
                           "  ROOT y = f32[8,131072] divide(x, b)\n");
  ASSERT_TRUE(M);
  const HloInstruction &F = *M->entry()->root();
  FusionAnalysis A = analyzeFusion(F);
  EXPECT_TRUE(isRowNormalization(A));
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, h200(), &F);
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().Message,
            "fusion 'fusion': row normalization emitter: a row of 131072 "
            "elements does not fit in one block (128 elements per thread at "
            "1024 threads; at most 64) (the loop emitter would take 131072 "
            "reduce steps per output element, more than its budget of "
            "65536)");
  EXPECT_GT(P.error().Loc.Line, 0u);
}

TEST(RowNormalizationPlan, BlockLimitFromTheDevice) {
  // 32768 elements fit at 1024 threads per row (32 each), not at 256.
  auto M = softmax(8, 32768);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, h200());
  ASSERT_TRUE(P) << P.error().str();
  EXPECT_EQ(P->RowNormalization->LanesPerRow, 1024);
  DeviceModel Small = h200();
  Small.MaxThreadsPerBlock = 256;
  Expected<KernelPlan> Q = planFusion(Ctx, A, Tuning{}, Small);
  ASSERT_FALSE(Q);
  EXPECT_NE(Q.error().Message.find("128 elements per thread at 256 threads"),
            std::string::npos)
      << Q.error().Message;
  // Short rows share blocks of at most the device's threads.
  auto S = softmax(64, 128);
  ASSERT_TRUE(S);
  FusionAnalysis SA = analyzeFusion(*S->entry()->root());
  Small.MaxThreadsPerBlock = 64;
  Expected<KernelPlan> R = planFusion(Ctx, SA, Tuning{}, Small);
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_EQ(R->Block[0], 64);
  EXPECT_EQ(R->RowNormalization->RowsPerBlock, 4);
  EXPECT_EQ(R->Grid[0], 16);
}

TEST(RowNormalizationPlan, LayerNormWithRowValueRoot) {
  std::string Text = "HloModule m\n" + std::string(AddF32) +
                     "fused {\n"
                     "  x = f32[512,768] parameter(0)\n"
                     "  gamma = f32[768] parameter(1)\n"
                     "  zero = f32[] constant(0)\n"
                     "  sum = f32[512] reduce(x, zero), dimensions={1}, "
                     "to_apply=add_f32\n"
                     "  n = f32[] constant(768)\n"
                     "  nb = f32[512] broadcast(n), dimensions={}\n"
                     "  mean = f32[512] divide(sum, nb)\n"
                     "  bmean = f32[512,768] broadcast(mean), dimensions={0}\n"
                     "  d = f32[512,768] subtract(x, bmean)\n"
                     "  d2 = f32[512,768] multiply(d, d)\n"
                     "  ssq = f32[512] reduce(d2, zero), dimensions={1}, "
                     "to_apply=add_f32\n"
                     "  binv = f32[512,768] broadcast(ssq), dimensions={0}\n"
                     "  xn = f32[512,768] multiply(d, binv)\n"
                     "  g = f32[512,768] broadcast(gamma), dimensions={1}\n"
                     "  y = f32[512,768] multiply(xn, g)\n"
                     "  ROOT t = (f32[512,768], f32[512]) tuple(y, mean)\n"
                     "}\n"
                     "ENTRY main {\n"
                     "  p = f32[512,768] parameter(0)\n"
                     "  q = f32[768] parameter(1)\n"
                     "  ROOT fusion = (f32[512,768], f32[512]) fusion(p, q), "
                     "kind=kInput, calls=fused\n"
                     "}\n";
  auto M = parseHloModule(Text, "test.hlo");
  ASSERT_TRUE(M) << M.error().str();
  FusionAnalysis A = analyzeFusion(*(*M)->entry()->root());
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, h200());
  ASSERT_TRUE(P) << P.error().str();
  const RowNormalizationPlan &RN = *P->RowNormalization;
  EXPECT_EQ(RN.ElementRoot, (std::vector<bool>{true, false}));
  // The weights are read through the broadcast: 4 consecutive elements
  // per vector too.
  EXPECT_EQ(RN.LoadWidth, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(RN.StoreWidth, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(RN.Levels, (std::vector<int>{0, 1}));
}

TEST(RowNormalizationPlan, PlainReductionIsNot) {
  // A row sum with an epilogue but no broadcast back along the row: the
  // reduction emitter's.
  auto M = oneFusionModule("f32[64,256]", "f32[64]",
                           "  x = f32[64,256] parameter(0)\n"
                           "  zero = f32[] constant(0)\n"
                           "  s = f32[64] reduce(x, zero), dimensions={1}, "
                           "to_apply=add_f32\n"
                           "  ROOT y = f32[64] negate(s)\n");
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  EXPECT_FALSE(isRowNormalization(A));
  Context Ctx;
  Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, h200());
  ASSERT_TRUE(P) << P.error().str();
  EXPECT_FALSE(P->RowNormalization);
  EXPECT_NE(P->Emitter, "row normalization");
}

} // namespace
