//===- ScatterPlanTest.cpp - The scatter emitter's plan -------------------===//
//
// Part of idxmap. How a scatter combines its updates (a store, an atomic,
// a compare-and-swap, or no atomic at all under unique_indices) and how
// many update elements a thread takes: a run along the updates' minor dim
// only where the run's operand elements are contiguous and aligned for
// every index that fits.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"
#include "support/FusionModules.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace idxmap;

namespace {

struct Case {
  std::string Type = "f32";
  std::string Operand = "[4096,256]";
  std::string Indices = "[1000,1]";
  std::string Updates = "[1000,256]";
  std::string Dims = "update_window_dims={1}, inserted_window_dims={0}, "
                     "scatter_dims_to_operand_dims={0}, index_vector_dim=1";
  std::string Combiner = "add(a, b)";
  std::string Extra;
};

/// The plan of a fusion whose root scatters into parameter 0.
Expected<KernelPlan> planOf(const Case &C, std::unique_ptr<HloModule> &M) {
  const std::string T = C.Type;
  const std::string Op = T + C.Operand, Idx = "s32" + C.Indices,
                    Upd = T + C.Updates;
  std::string Root = C.Combiner.rfind("ROOT", 0) == 0
                         ? "  a = " + T + "[] parameter(0)\n  ROOT b = " + T +
                               "[] parameter(1)\n"
                         : "  a = " + T + "[] parameter(0)\n  b = " + T +
                               "[] parameter(1)\n  ROOT r = " + T + "[] " +
                               C.Combiner + "\n";
  std::string Text =
      "HloModule m\n\ncomb {\n" + Root + "}\n\nfused {\n  p0 = " + Op +
      " parameter(0)\n  p1 = " + Idx + " parameter(1)\n  p2 = " + Upd +
      " parameter(2)\n  ROOT s = " + Op + " scatter(p0, p1, p2), " + C.Dims +
      ", to_apply=comb" + C.Extra + "\n}\n\nENTRY e {\n  a0 = " + Op +
      " parameter(0)\n  a1 = " + Idx + " parameter(1)\n  a2 = " + Upd +
      " parameter(2)\n  ROOT f = " + Op +
      " fusion(a0, a1, a2), kind=kInput, calls=fused\n}\n";
  return idxmap::testing::planOfText(Text, EmitterKind::Scatter, {}, M);
}

ScatterPlan scatterPlan(const Case &C) {
  std::unique_ptr<HloModule> M;
  Expected<KernelPlan> P = planOf(C, M);
  EXPECT_TRUE(bool(P)) << (P ? "" : P.error().str());
  if (!P || !P->Scatter)
    return {};
  // Every update element has a thread: runs of Vector along the rows.
  EXPECT_EQ(P->Main.Vector, P->Scatter->Vector);
  EXPECT_GE(P->Grid[0] * P->Block[0] * P->Main.Vector * P->Scatter->Segment,
            M->entry()->root()->operand(2)->shape().numElements());
  return *P->Scatter;
}

TEST(ScatterPlan, RowsOfFloatsAddFourAtATime) {
  ScatterPlan SP = scatterPlan(Case{});
  EXPECT_EQ(SP.Combine, ScatterCombine::AtomicAdd);
  EXPECT_EQ(SP.UpdatedParam, 0);
  EXPECT_EQ(SP.Vector, 4);
}

TEST(ScatterPlan, HalfFloatsAddWithTheirOwnAtomics) {
  Case C;
  C.Type = "bf16";
  ScatterPlan SP = scatterPlan(C);
  EXPECT_EQ(SP.Combine, ScatterCombine::AtomicAdd);
  EXPECT_EQ(SP.Vector, 8);
}

TEST(ScatterPlan, UniqueIndicesNeedNoAtomics) {
  Case C;
  C.Extra = ", unique_indices=true";
  C.Combiner = "multiply(a, b)";
  EXPECT_EQ(scatterPlan(C).Combine, ScatterCombine::ReadModifyWrite);
  // An overwrite stays a store, promised unique or not.
  C.Combiner = "ROOT";
  EXPECT_EQ(scatterPlan(C).Combine, ScatterCombine::Store);
}

// The updates and indices stream past with an evict_first hint wherever
// atomics come back to the operand's lines; not where each operand element
// is written once.
TEST(ScatterPlan, StreamedUpdatesEvictFirstUnderAtomics) {
  Case C;
  ScatterPlan SP = scatterPlan(C);
  EXPECT_TRUE(SP.EvictFirst);
  // The hint goes to the indices and the updates, never to the operand the
  // atomics come back to.
  EXPECT_EQ(SP.ReadOnce, (std::vector<bool>{false, true, true}));
  C.Combiner = "multiply(a, b)"; // a compare-and-swap loop
  EXPECT_TRUE(scatterPlan(C).EvictFirst);
  C.Extra = ", unique_indices=true";
  EXPECT_FALSE(scatterPlan(C).EvictFirst);
  C.Combiner = "ROOT";
  C.Extra = "";
  EXPECT_FALSE(scatterPlan(C).EvictFirst);
}

TEST(ScatterPlan, CombinersWithoutAnAtomicSwap) {
  Case C;
  C.Combiner = "multiply(a, b)";
  EXPECT_EQ(scatterPlan(C).Combine, ScatterCombine::CompareAndSwap);
  C.Type = "s8";
  C.Combiner = "maximum(a, b)";
  EXPECT_EQ(scatterPlan(C).Combine, ScatterCombine::CompareAndSwap);
  C.Type = "s32";
  EXPECT_EQ(scatterPlan(C).Combine, ScatterCombine::AtomicMax);
  C.Type = "f32";
  EXPECT_EQ(scatterPlan(C).Combine, ScatterCombine::CompareAndSwap);
}

TEST(ScatterPlan, RunsOnlyWhereTheOperandsElementsAreContiguous) {
  // A window narrower than the row: the start along the row is 0 (the
  // dim is not scattered to), so runs of 4 dividing 100 and 256 hold.
  Case C;
  C.Updates = "[1000,100]";
  EXPECT_EQ(scatterPlan(C).Vector, 4);
  // An odd row width: no run of two divides it.
  C.Operand = "[4096,255]";
  C.Updates = "[1000,255]";
  EXPECT_EQ(scatterPlan(C).Vector, 1);
  // The row's start comes from the indices and the window is narrower
  // than the row: any alignment is possible.
  C = Case{};
  C.Indices = "[1000,2]";
  C.Updates = "[1000,8]";
  C.Dims = "update_window_dims={1}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1";
  EXPECT_EQ(scatterPlan(C).Vector, 1);
  // The same with a window as wide as the row: 0 is the only start that
  // fits.
  C.Updates = "[1000,256]";
  EXPECT_EQ(scatterPlan(C).Vector, 4);
  // Scattered elements (no window dims): one element per thread.
  C = Case{};
  C.Indices = "[1000,2]";
  C.Updates = "[1000]";
  C.Dims = "update_window_dims={}, inserted_window_dims={0,1}, "
           "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1";
  EXPECT_EQ(scatterPlan(C).Vector, 1);
  // Column-major operand: the window's minor dim is not the operand's.
  C = Case{};
  C.Operand = "[4096,256]{0,1}";
  EXPECT_EQ(scatterPlan(C).Vector, 1);
}

TEST(ScatterPlan, SortedIndicesWalkSegments) {
  // 1M sorted rows into 65536: 16 updates per thread still leave 2M
  // threads (runs of 4 along a row of 128).
  Case C;
  C.Operand = "[65536,128]";
  C.Indices = "[1048576,1]";
  C.Updates = "[1048576,128]";
  C.Extra = ", indices_are_sorted=true";
  ScatterPlan SP = scatterPlan(C);
  EXPECT_EQ(SP.Segment, 16);
  EXPECT_EQ(SP.Vector, 4);
  // Unsorted: one update per thread.
  C.Extra = "";
  EXPECT_EQ(scatterPlan(C).Segment, 1);
  // An overwrite has no atomics to save.
  C.Extra = ", indices_are_sorted=true";
  C.Combiner = "ROOT";
  EXPECT_EQ(scatterPlan(C).Segment, 1);
  // Updates whose scatter dim is minor: a thread's updates would not be a
  // window apart.
  C = Case{};
  C.Updates = "[1000,256]{0,1}";
  C.Extra = ", indices_are_sorted=true";
  EXPECT_EQ(scatterPlan(C).Segment, 1);
  // Fewer updates: shorter segments, to keep a thread per SM thread slot
  // (132 x 2048 on the H200): 20000 x 64 runs of 4 in segments of 4.
  C = Case{};
  C.Indices = "[20000,1]";
  C.Updates = "[20000,256]";
  C.Extra = ", indices_are_sorted=true";
  EXPECT_EQ(scatterPlan(C).Segment, 4);
  // Smaller than that: 2.
  C.Indices = "[100,1]";
  C.Updates = "[100,256]";
  EXPECT_EQ(scatterPlan(C).Segment, 2);
}

} // namespace
