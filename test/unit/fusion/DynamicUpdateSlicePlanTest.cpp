//===- DynamicUpdateSlicePlanTest.cpp - In-place dynamic-update-slice -----===//
//
// Part of idxmap. Which fusions update their operand in place (every root a
// dynamic-update-slice of a parameter nothing else reads), the
// update-to-output map the stores go through, and the plan: threads over
// the update only, store widths proven for every start, the aliased
// parameters, the estimate charging the update's bytes and not the buffer's.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Print.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace idxmap;

namespace {

std::unique_ptr<HloModule> parse(const std::string &Body,
                                 const std::string &Params,
                                 const std::string &RootType,
                                 const std::string &Operands = "a0, a1, a2") {
  std::string Text = "HloModule m\n\nfused {\n" + Body + "}\n\nENTRY e {\n" +
                     Params + "  ROOT f = " + RootType +
                     " fusion(" + Operands +
                     "), kind=kLoop, calls=fused\n}\n";
  auto M = parseHloModule(Text, "test.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str()) << Text;
  return M ? std::move(*M) : nullptr;
}

/// A KV-cache write: \p Rows rows of bf16[.., 4096] at a dynamic row.
std::unique_ptr<HloModule> kvWrite(int64_t Rows, const std::string &Extra = "",
                                   const std::string &Update = "p1") {
  std::string U = "bf16[" + std::to_string(Rows) + ",4096]";
  return parse("  p0 = bf16[1024,4096] parameter(0)\n"
               "  p1 = " + U + " parameter(1)\n"
               "  p2 = s32[] parameter(2)\n"
               "  c0 = s32[] constant(0)\n" + Extra +
                   "  ROOT d = bf16[1024,4096] dynamic-update-slice(p0, " +
                   Update + ", p2, c0)\n",
               "  a0 = bf16[1024,4096] parameter(0)\n  a1 = " + U +
                   " parameter(1)\n  a2 = s32[] parameter(2)\n",
               "bf16[1024,4096]");
}

TEST(InPlaceDynamicUpdateSlice, KvCacheWriteIsInPlace) {
  auto M = kvWrite(8);
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  EXPECT_EQ(A.Kind, EmitterKind::InPlaceDynamicUpdateSlice) << A.Reason;
  EXPECT_EQ(A.UpdatedParams, std::vector<int64_t>({0}));
  EXPECT_EQ(emitterKindName(A.Kind), "in-place dynamic-update-slice");
}

TEST(InPlaceDynamicUpdateSlice, OperandReadElsewhereIsNotInPlace) {
  // The update reads the operand: writing in place would race.
  auto M = kvWrite(8,
                   "  s = bf16[8,4096] slice(p0), slice={[0:8], [0:4096]}\n"
                   "  u = bf16[8,4096] add(s, p1)\n",
                   "u");
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  EXPECT_EQ(A.Kind, EmitterKind::Loop);
  std::string Why;
  EXPECT_FALSE(inPlaceUpdatedParams(*A.Computation, &Why));
  EXPECT_EQ(Why, "parameter 'p0' is also read by 's'");
}

TEST(InPlaceDynamicUpdateSlice, UpdateToOutputMap) {
  auto M = kvWrite(8);
  ASSERT_TRUE(M);
  Context Ctx;
  const HloInstruction *D = M->entry()->root()->fusedComputation()->root();
  InstructionIndexing I = computeInputToOutputIndexing(Ctx, *D, 1);
  ASSERT_EQ(I.Operands.size(), 1u);
  const OperandMap &OM = I.Operands[0].at(0);
  EXPECT_EQ(printMap(OM.Map),
            "(d0, d1){rt0} -> (d0 + rt0, d1), domain: d0 in [0, 7], "
            "d1 in [0, 4095], rt0 in [0, 1016]");
  ASSERT_EQ(OM.Bindings.size(), 1u);
  EXPECT_EQ(OM.Bindings[0].Source->name(), "p2");
  // The operand's elements go where the window is not: no map says it.
  EXPECT_TRUE(
      computeInputToOutputIndexing(Ctx, *D, 0).Operands[0][0].Map.isUndefined());
}

TEST(InPlaceDynamicUpdateSlice, PlanWalksTheUpdateOnly) {
  auto M = kvWrite(8);
  ASSERT_TRUE(M);
  Context Ctx;
  const DeviceModel Dev = *lookupDeviceModel("H200");
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, Dev);
  ASSERT_TRUE(bool(P)) << P.error().str();
  EXPECT_EQ(P->Emitter, "in-place dynamic-update-slice");
  ASSERT_TRUE(P->DynamicUpdateSlice);
  // 8 x 4096 bf16 in runs of 8: 4096 threads, 32 blocks of 128.
  EXPECT_EQ(P->Main.Vector, 8);
  EXPECT_EQ(P->Grid[0] * P->Block[0] * P->Main.Vector * P->Main.Unroll,
            8 * 4096);
  EXPECT_EQ(P->Main.Target->name(), "p1");
  // A row of the update is a row of the output whatever the start is.
  EXPECT_EQ(P->DynamicUpdateSlice->StoreWidth, std::vector<int64_t>({8}));
  EXPECT_EQ(P->DynamicUpdateSlice->UpdatedParams, std::vector<int64_t>({0}));
  // The estimate moves the update twice (read and written), not the cache.
  EXPECT_NEAR(P->Cost.Bytes, 2.0 * 8 * 4096 * 2, 8 * 4096 * 0.1);
}

TEST(InPlaceDynamicUpdateSlice, DynamicMinorStartStoresElements) {
  auto M = parse("  p0 = f32[100,1000] parameter(0)\n"
                 "  p1 = f32[10,32] parameter(1)\n"
                 "  p2 = s32[] parameter(2)\n"
                 "  ROOT d = f32[100,1000] dynamic-update-slice(p0, p1, p2, "
                 "p2)\n",
                 "  a0 = f32[100,1000] parameter(0)\n"
                 "  a1 = f32[10,32] parameter(1)\n"
                 "  a2 = s32[] parameter(2)\n",
                 "f32[100,1000]");
  ASSERT_TRUE(M);
  Context Ctx;
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  ASSERT_EQ(A.Kind, EmitterKind::InPlaceDynamicUpdateSlice);
  Expected<KernelPlan> P =
      planFusion(Ctx, A, Tuning{}, *lookupDeviceModel("H200"));
  ASSERT_TRUE(bool(P)) << P.error().str();
  // A start of 3 along the minor dim misaligns any vector: proven for
  // none, so one element per store.
  EXPECT_EQ(P->DynamicUpdateSlice->StoreWidth, std::vector<int64_t>({1}));
  EXPECT_EQ(P->Main.Vector, 1);
}

TEST(InPlaceDynamicUpdateSlice, TwoRootsIntoTwoBuffers) {
  auto M = parse("  p0 = f32[64,256] parameter(0)\n"
                 "  p1 = f32[4,256] parameter(1)\n"
                 "  p2 = s32[] parameter(2)\n"
                 "  p3 = f16[32,256] parameter(3)\n"
                 "  c0 = s32[] constant(0)\n"
                 "  n = f16[4,256] convert(p1)\n"
                 "  d0 = f32[64,256] dynamic-update-slice(p0, p1, p2, c0)\n"
                 "  d1 = f16[32,256] dynamic-update-slice(p3, n, p2, c0)\n"
                 "  ROOT t = (f32[64,256], f16[32,256]) tuple(d0, d1)\n",
                 "  a0 = f32[64,256] parameter(0)\n"
                 "  a1 = f32[4,256] parameter(1)\n"
                 "  a2 = s32[] parameter(2)\n"
                 "  a3 = f16[32,256] parameter(3)\n",
                 "(f32[64,256], f16[32,256])", "a0, a1, a2, a3");
  ASSERT_TRUE(M);
  Context Ctx;
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  ASSERT_EQ(A.Kind, EmitterKind::InPlaceDynamicUpdateSlice) << A.Reason;
  EXPECT_EQ(A.UpdatedParams, std::vector<int64_t>({0, 3}));
  Expected<KernelPlan> P =
      planFusion(Ctx, A, Tuning{}, *lookupDeviceModel("H200"));
  ASSERT_TRUE(bool(P)) << P.error().str();
  // 16 bytes of f32: runs of 4, which both roots store as vectors.
  EXPECT_EQ(P->Main.Vector, 4);
  EXPECT_EQ(P->DynamicUpdateSlice->StoreWidth, std::vector<int64_t>({4, 4}));
  // p1 is read through one map (by both roots) and loaded as vectors.
  EXPECT_EQ(P->Loop->LoadWidth.at(1), 4);
}

TEST(InPlaceDynamicUpdateSlice, UpdatesOfDifferentShapesAreNotInPlace) {
  auto M = parse("  p0 = f32[64,256] parameter(0)\n"
                 "  p1 = f32[4,256] parameter(1)\n"
                 "  p2 = s32[] parameter(2)\n"
                 "  p3 = f32[64,256] parameter(3)\n"
                 "  c0 = s32[] constant(0)\n"
                 "  s = f32[2,256] slice(p1), slice={[0:2], [0:256]}\n"
                 "  d0 = f32[64,256] dynamic-update-slice(p0, p1, p2, c0)\n"
                 "  d1 = f32[64,256] dynamic-update-slice(p3, s, p2, c0)\n"
                 "  ROOT t = (f32[64,256], f32[64,256]) tuple(d0, d1)\n",
                 "  a0 = f32[64,256] parameter(0)\n"
                 "  a1 = f32[4,256] parameter(1)\n"
                 "  a2 = s32[] parameter(2)\n"
                 "  a3 = f32[64,256] parameter(3)\n",
                 "(f32[64,256], f32[64,256])", "a0, a1, a2, a3");
  ASSERT_TRUE(M);
  std::string Why;
  EXPECT_FALSE(inPlaceUpdatedParams(*M->entry()->root()->fusedComputation(),
                                    &Why));
  EXPECT_EQ(Why, "the updates of 'd0' and 'd1' differ in shape");
}

} // namespace
