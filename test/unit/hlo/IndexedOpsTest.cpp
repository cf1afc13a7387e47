//===- IndexedOpsTest.cpp - Gather, scatter, sort, collectives ------------===//
//
// Part of idxmap. Printed maps against XLA's expected text
// (indexing_analysis_test.cc: GatherOp, GatherOpWithShuffledStartIndexMap,
// DynamicSliceOp, all-gather's replica id), runtime-variable folding,
// the shape rules (malformed input is a located parse error), interpreter
// results against hand-computed values, and the runtime-variable maps
// checked by evaluating their bindings on random in- and out-of-range
// indices.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/Print.h"

#include "support/HloDeps.h"
#include "support/Matchers.h"
#include "support/RandomHlo.h"
#include "support/RandomIndexed.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

std::unique_ptr<HloModule> parse(const std::string &Text) {
  auto M = parseHloModule(Text, "t.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  return M ? std::move(*M) : nullptr;
}

std::string outToIn(const std::string &Text, int64_t OutputId = 0) {
  auto M = parse(Text);
  if (!M)
    return "";
  Context Ctx;
  return computeOutputToInputIndexing(Ctx, *M->entry()->root(), OutputId).str();
}

#define EXPECT_MAPS(Text, Want)                                                \
  do {                                                                         \
    std::string Got = (Text);                                                  \
    EXPECT_TRUE(equalIgnoringWhitespace(Got, Want)) << Got;                    \
  } while (0)

//===----------------------------------------------------------------------===//
// Indexing: XLA's expectations
//===----------------------------------------------------------------------===//

TEST(IndexedIndexingTest, GatherOpAsXla) {
  EXPECT_MAPS(outToIn(R"(ENTRY main {
      operand = f32[33,76,70] parameter(0)
      indices = s32[1806,2] parameter(1)
      ROOT r = f32[1806,7,8,4] gather(operand, indices), offset_dims={1,2,3},
          collapsed_slice_dims={}, start_index_map={0,1},
          index_vector_dim=1, slice_sizes={7,8,4}
    })"),
              R"(operand id = 0
      (d0, d1, d2, d3){rt0, rt1} -> (d1 + rt0, d2 + rt1, d3),
      domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3],
        rt0 in [0, 26], rt1 in [0, 68]
      runtime variables:
        rt0: parameter(1); (d0, d1, d2, d3) -> (d0, 0),
          domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]
        rt1: parameter(1); (d0, d1, d2, d3) -> (d0, 1),
          domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]
    operand id = 1
      (d0, d1, d2, d3)[s0] -> (d0, s0),
      domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3],
        s0 in [0, 1]
    )");
}

TEST(IndexedIndexingTest, GatherOpWithShuffledStartIndexMapAsXla) {
  EXPECT_MAPS(outToIn(R"(ENTRY main {
      operand = f32[33,76,70] parameter(0)
      indices = s32[1806,2] parameter(1)
      ROOT r = f32[1806,7,8,4] gather(operand, indices), offset_dims={1,2,3},
          collapsed_slice_dims={}, start_index_map={1,0},
          index_vector_dim=1, slice_sizes={7,8,4}
    })"),
              R"(operand id = 0
      (d0, d1, d2, d3){rt0, rt1} -> (d1 + rt0, d2 + rt1, d3),
      domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3],
        rt0 in [0, 26], rt1 in [0, 68]
      runtime variables:
        rt0: parameter(1); (d0, d1, d2, d3) -> (d0, 1),
          domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]
        rt1: parameter(1); (d0, d1, d2, d3) -> (d0, 0),
          domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3]
    operand id = 1
      (d0, d1, d2, d3)[s0] -> (d0, s0),
      domain: d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3],
        s0 in [0, 1]
    )");
}

TEST(IndexedIndexingTest, GatherCollapsedImplicitIndexVector) {
  // index_vector_dim == rank: an implicit trailing 1; the collapsed dim is
  // read at the start index alone.
  EXPECT_MAPS(outToIn(R"(ENTRY main {
      operand = f32[10,4] parameter(0)
      indices = s32[5] parameter(1)
      ROOT r = f32[5,4] gather(operand, indices), offset_dims={1},
          collapsed_slice_dims={0}, start_index_map={0},
          index_vector_dim=1, slice_sizes={1,4}
    })"),
              R"(operand id = 0
      (d0, d1){rt0} -> (rt0, d1),
      domain: d0 in [0, 4], d1 in [0, 3], rt0 in [0, 9]
      runtime variables:
        rt0: parameter(1); (d0, d1) -> (d0), domain: d0 in [0, 4], d1 in [0, 3]
    operand id = 1
      (d0, d1) -> (d0), domain: d0 in [0, 4], d1 in [0, 3]
    )");
}

TEST(IndexedIndexingTest, DynamicSliceOpAsXla) {
  EXPECT_MAPS(outToIn(R"(ENTRY e {
      %src = s32[2,2,258] parameter(0)
      %of1 = s32[] parameter(1)
      %of2 = s32[] parameter(2)
      %of3 = s32[] parameter(3)
      ROOT %ds = s32[1,2,32] dynamic-slice(s32[2,2,258] %src,
        s32[] %of1, s32[] %of2, s32[] %of3), dynamic_slice_sizes={1, 2, 32}
    })"),
              R"(operand id = 0
      (d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2),
      domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31],
        rt0 in [0, 1], rt1 in [0, 0], rt2 in [0, 226]
      runtime variables:
        rt0: parameter(1); (d0, d1, d2) -> (),
          domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
        rt1: parameter(2); (d0, d1, d2) -> (),
          domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
        rt2: parameter(3); (d0, d1, d2) -> (),
          domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
    operand id = 1 (d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
    operand id = 2 (d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
    operand id = 3 (d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]
    )");
}

TEST(IndexedIndexingTest, PadConcatenateIotaAsXla) {
  EXPECT_MAPS(outToIn(R"(ENTRY e {
      p0 = f32[4, 4] parameter(0)
      p1 = f32[] parameter(1)
      ROOT pad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0
    })"),
              R"(operand id = 0
      (d0, d1) -> ((d0 - 1) floordiv 2, d1 - 4),
      domain: d0 in [1, 7], d1 in [4, 7], (d0 - 1) mod 2 in [0, 0]
    operand id = 1
      (d0, d1) -> (), domain: d0 in [0, 11], d1 in [0, 15])");
  EXPECT_MAPS(outToIn(R"(ENTRY e {
      p0 = f32[2, 5, 7] parameter(0)
      p1 = f32[2, 11, 7] parameter(1)
      p2 = f32[2, 17, 7] parameter(2)
      ROOT concat = f32[2, 33, 7] concatenate(p0, p1, p2), dimensions={1}
    })"),
              R"(operand id = 0
      (d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 4], d2 in [0, 6]
    operand id = 1
      (d0, d1, d2) -> (d0, d1 - 5, d2), domain: d0 in [0, 1], d1 in [5, 15], d2 in [0, 6]
    operand id = 2
      (d0, d1, d2) -> (d0, d1 - 16, d2), domain: d0 in [0, 1], d1 in [16, 32], d2 in [0, 6])");
  // XLA's IotaOp: no operands, no maps.
  EXPECT_EQ(outToIn(R"(ENTRY e {
      ROOT iota = s32[5,5,111,42] iota(), iota_dimension=0
    })"),
            "");
}

//===----------------------------------------------------------------------===//
// Runtime-variable folding
//===----------------------------------------------------------------------===//

TEST(IndexedIndexingTest, ConstantOffsetsFoldClampedAsTheOpClamps) {
  // 3 is in range; 100 is clamped to 8 - 2 = 6 (XLA keeps it as rt0).
  EXPECT_MAPS(outToIn(R"(ENTRY e {
      p = f32[8,6] parameter(0)
      a = s32[] constant(100)
      b = s32[] constant(3)
      ROOT ds = f32[2,3] dynamic-slice(p, a, b), dynamic_slice_sizes={2,3}
    })"),
              R"(operand id = 0 (d0, d1) -> (d0 + 6, d1 + 3),
        domain: d0 in [0, 1], d1 in [0, 2]
      operand id = 1 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]
      operand id = 2 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2])");
}

TEST(IndexedIndexingTest, ClampWithConstantBoundsNarrowsOrFolds) {
  // clamp(1, i, 2) narrows rt0 to [1, 2]; clamp(0, 5, 1) folds to 1.
  EXPECT_MAPS(outToIn(R"(ENTRY e {
      p = f32[8,6] parameter(0)
      i = s32[] parameter(1)
      lo = s32[] constant(1)
      hi = s32[] constant(2)
      five = s32[] constant(5)
      zero = s32[] constant(0)
      ci = s32[] clamp(lo, i, hi)
      cf = s32[] clamp(zero, five, lo)
      ROOT ds = f32[2,3] dynamic-slice(p, ci, cf), dynamic_slice_sizes={2,3}
    })"),
              R"(operand id = 0 (d0, d1){rt0} -> (d0 + rt0, d1 + 1),
        domain: d0 in [0, 1], d1 in [0, 2], rt0 in [1, 2]
      runtime variables:
        rt0: ci; (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]
      operand id = 1 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]
      operand id = 2 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2])");
}

TEST(IndexedIndexingTest, IotaIndicesFoldToTheIndex) {
  // indices[i, 0] = i: the gather reads row d0 + 0 (in range: folds).
  EXPECT_MAPS(outToIn(R"(ENTRY e {
      p = f32[4,6] parameter(0)
      idx = s32[4,1] iota(), iota_dimension=0
      ROOT g = f32[4,6] gather(p, idx), offset_dims={1},
          collapsed_slice_dims={0}, start_index_map={0},
          index_vector_dim=1, slice_sizes={1,6}
    })"),
              R"(operand id = 0 (d0, d1) -> (d0, d1),
        domain: d0 in [0, 3], d1 in [0, 5]
      operand id = 1 (d0, d1) -> (d0, 0), domain: d0 in [0, 3], d1 in [0, 5])");
  // An iota that leaves the feasible range is clamped by the op: kept.
  std::string Kept = outToIn(R"(ENTRY e {
      p = f32[4,6] parameter(0)
      idx = s32[4,1] iota(), iota_dimension=0
      ROOT g = f32[4,4] gather(p, idx), offset_dims={1},
          collapsed_slice_dims={0}, start_index_map={1},
          index_vector_dim=1, slice_sizes={1,4}
    })");
  EXPECT_NE(Kept.find("rt0: idx;"), std::string::npos) << Kept;
}

TEST(IndexedIndexingTest, AllGatherHasXlasReplicaIdMap) {
  EXPECT_MAPS(outToIn(R"(ENTRY e {
      p = f32[4,8] parameter(0)
      ROOT ag = f32[4,32] all-gather(p), dimensions={1},
          replica_groups={{0,1,2,3}}
    })"),
              R"(operand id = 0 (d0, d1) -> (d0, d1 mod 8),
        domain: d0 in [0, 3], d1 in [0, 31]
      replica id:
        (d0, d1) -> (d1 floordiv 8), domain: d0 in [0, 3], d1 in [0, 31])");
}

TEST(IndexedIndexingTest, SortReadsTheWholeRow) {
  const char *Text = R"(
    lt {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      c = s32[] parameter(2)
      d = s32[] parameter(3)
      ROOT r = pred[] compare(a, b), direction=LT
    }
    ENTRY e {
      k = f32[3,5] parameter(0)
      v = s32[3,5] parameter(1)
      ROOT s = (f32[3,5], s32[3,5]) sort(k, v), dimensions={1}, to_apply=lt
    })";
  const char *Want = R"(operand id = 0 (d0, d1)[s0] -> (d0, s0),
        domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 4]
      operand id = 1 (d0, d1)[s0] -> (d0, s0),
        domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 4])";
  EXPECT_MAPS(outToIn(Text, 0), Want);
  EXPECT_MAPS(outToIn(Text, 1), Want);
}

TEST(IndexedIndexingTest, ScatterOperandIdentityUpdatesByWindow) {
  EXPECT_MAPS(outToIn(R"(
    add {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT r = f32[] add(a, b)
    }
    ENTRY e {
      p = f32[6,4] parameter(0)
      i = s32[3,1] parameter(1)
      u = f32[3,2,4] parameter(2)
      ROOT s = f32[6,4] scatter(p, i, u), update_window_dims={1,2},
          inserted_window_dims={}, scatter_dims_to_operand_dims={0},
          index_vector_dim=1, to_apply=add
    })"),
              R"(operand id = 0 (d0, d1) -> (d0, d1),
        domain: d0 in [0, 5], d1 in [0, 3]
      operand id = 1 (d0, d1)[s0] -> (s0, 0),
        domain: d0 in [0, 5], d1 in [0, 3], s0 in [0, 2]
      operand id = 2 (d0, d1)[s0, s1] -> (s0, s1, d1),
        domain: d0 in [0, 5], d1 in [0, 3], s0 in [0, 2], s1 in [0, 1])");
}

//===----------------------------------------------------------------------===//
// Verifier: malformed input is a located parse error
//===----------------------------------------------------------------------===//

struct BadCase {
  const char *Text;
  const char *Message;
};

TEST(IndexedVerifierTest, MalformedIsALocatedError) {
  const BadCase Cases[] = {
      {R"(ENTRY e {
  p = f32[10,4] parameter(0)
  i = s32[5,2] parameter(1)
  ROOT g = f32[5,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})",
       "start_index_map {0} has 1 entries, the index vector 2"},
      {R"(ENTRY e {
  p = f32[10,4] parameter(0)
  i = s32[5] parameter(1)
  ROOT g = f32[5,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
})",
       "slice_sizes {1,5} exceed the operand"},
      {R"(ENTRY e {
  p = f32[10,4] parameter(0)
  i = s32[5] parameter(1)
  ROOT g = f32[5,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})",
       "result shape is f32[5,3], expected f32[5,4]"},
      {R"(lt {
  a = f32[] parameter(0)
  ROOT r = pred[] compare(a, a), direction=LT
}
ENTRY e {
  p = f32[8] parameter(0)
  ROOT s = f32[8] sort(p), dimensions={0}, to_apply=lt
})",
       "'lt' has 1 parameters, expected 2"},
      {R"(ENTRY e {
  p = f32[4,8] parameter(0)
  ROOT ag = f32[4,20] all-gather(p), dimensions={1}
})",
       "a whole times the operand's extent 8"},
      {R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  p = f32[6,4] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,4] parameter(2)
  ROOT s = f32[6,4] scatter(p, i, u), update_window_dims={1,2},
    inserted_window_dims={}, scatter_dims_to_operand_dims={0},
    index_vector_dim=1, to_apply=add
})",
       "update_window_dims {1,2} out of range [0, 2)"},
  };
  for (const BadCase &C : Cases) {
    auto M = parseHloModule(C.Text, "bad.hlo");
    ASSERT_FALSE(bool(M)) << C.Text;
    std::string E = M.error().str();
    EXPECT_NE(E.find(C.Message), std::string::npos) << E;
    EXPECT_NE(E.find("bad.hlo:"), std::string::npos) << E;
  }
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

std::vector<int64_t> ints(const Literal &L) {
  std::vector<int64_t> V;
  for (int64_t K = 0; K < L.elementCount(); ++K)
    V.push_back(L.getInt(K));
  return V;
}

Literal run1(const std::string &Text, std::vector<Literal> Args) {
  auto M = parse(Text);
  if (!M)
    return Literal();
  auto R = evaluateToLiteral(*M->entry(), Args);
  EXPECT_TRUE(bool(R)) << (R ? "" : R.error().str());
  return R ? std::move(*R) : Literal();
}

TEST(IndexedInterpreterTest, GatherClampsStarts) {
  // Rows 2, 0 and 9 (clamped to 10 - 2 = 8) of a 10x3 iota, 2 rows each.
  Literal P = Literal::fromInts(Shape(PrimitiveType::S32, {10, 3}), [] {
    std::vector<int64_t> V;
    for (int K = 0; K < 30; ++K)
      V.push_back(K);
    return V;
  }());
  Literal I = Literal::fromInts(Shape(PrimitiveType::S32, {3}), {2, 0, 9});
  Literal R = run1(R"(ENTRY e {
      p = s32[10,3] parameter(0)
      i = s32[3] parameter(1)
      ROOT g = s32[3,2,3] gather(p, i), offset_dims={1,2},
          collapsed_slice_dims={}, start_index_map={0},
          index_vector_dim=1, slice_sizes={2,3}
    })",
                   {P, I});
  EXPECT_EQ(ints(R), (std::vector<int64_t>{6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5,
                                           24, 25, 26, 27, 28, 29}));
}

TEST(IndexedInterpreterTest, ScatterAddsInOrderAndSkipsOutOfBounds) {
  // Updates for rows 1, 1 and 7 (out of bounds: skipped) of a 4x2 zero
  // matrix, combined with add.
  Literal P(Shape(PrimitiveType::S32, {4, 2}));
  Literal I = Literal::fromInts(Shape(PrimitiveType::S32, {3, 1}), {1, 1, 7});
  Literal U = Literal::fromInts(Shape(PrimitiveType::S32, {3, 2}),
                                {1, 2, 10, 20, 5, 5});
  Literal R = run1(R"(
    add {
      a = s32[] parameter(0)
      b = s32[] parameter(1)
      ROOT r = s32[] add(a, b)
    }
    ENTRY e {
      p = s32[4,2] parameter(0)
      i = s32[3,1] parameter(1)
      u = s32[3,2] parameter(2)
      ROOT s = s32[4,2] scatter(p, i, u), update_window_dims={1},
          inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
          index_vector_dim=1, to_apply=add
    })",
                   {P, I, U});
  EXPECT_EQ(ints(R), (std::vector<int64_t>{0, 0, 11, 22, 0, 0, 0, 0}));
}

TEST(IndexedInterpreterTest, ScatterOverwriteTakesTheLastUpdate) {
  Literal P = Literal::fromInts(Shape(PrimitiveType::S32, {3}), {7, 7, 7});
  Literal I = Literal::fromInts(Shape(PrimitiveType::S32, {3}), {2, 0, 2});
  Literal U = Literal::fromInts(Shape(PrimitiveType::S32, {3}), {1, 2, 3});
  Literal R = run1(R"(
    second {
      a = s32[] parameter(0)
      ROOT b = s32[] parameter(1)
    }
    ENTRY e {
      p = s32[3] parameter(0)
      i = s32[3] parameter(1)
      u = s32[3] parameter(2)
      ROOT s = s32[3] scatter(p, i, u), update_window_dims={},
          inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
          index_vector_dim=1, to_apply=second
    })",
                   {P, I, U});
  EXPECT_EQ(ints(R), (std::vector<int64_t>{2, 7, 3}));
}

TEST(IndexedInterpreterTest, VariadicStableSortPermutesValues) {
  // Keys 3 1 3 0 sorted ascending; ties keep their order (values 10, 12).
  Literal K = Literal::fromInts(Shape(PrimitiveType::S32, {4}), {3, 1, 3, 0});
  Literal V =
      Literal::fromInts(Shape(PrimitiveType::S32, {4}), {10, 11, 12, 13});
  Literal R = run1(R"(
    lt {
      a = s32[] parameter(0)
      b = s32[] parameter(1)
      c = s32[] parameter(2)
      d = s32[] parameter(3)
      ROOT r = pred[] compare(a, b), direction=LT
    }
    ENTRY e {
      k = s32[4] parameter(0)
      v = s32[4] parameter(1)
      ROOT s = (s32[4], s32[4]) sort(k, v), dimensions={0}, is_stable=true,
          to_apply=lt
    })",
                   {K, V});
  ASSERT_TRUE(R.isTuple());
  EXPECT_EQ(ints(R.elements()[0]), (std::vector<int64_t>{0, 1, 3, 3}));
  EXPECT_EQ(ints(R.elements()[1]), (std::vector<int64_t>{13, 11, 10, 12}));
}

TEST(IndexedInterpreterTest, SortAlongTheMajorDim) {
  Literal K =
      Literal::fromInts(Shape(PrimitiveType::S32, {3, 2}), {5, 0, 1, 9, 3, 4});
  Literal R = run1(R"(
    gt {
      a = s32[] parameter(0)
      b = s32[] parameter(1)
      ROOT r = pred[] compare(a, b), direction=GT
    }
    ENTRY e {
      k = s32[3,2] parameter(0)
      ROOT s = s32[3,2] sort(k), dimensions={0}, to_apply=gt
    })",
                   {K});
  EXPECT_EQ(ints(R), (std::vector<int64_t>{5, 9, 3, 4, 1, 0}));
}

TEST(IndexedInterpreterTest, CollectivesOnOneDevice) {
  Literal P = Literal::fromInts(Shape(PrimitiveType::S32, {2}), {1, 2});
  Literal AG = run1(R"(ENTRY e {
      p = s32[2] parameter(0)
      ROOT ag = s32[6] all-gather(p), dimensions={0}, replica_groups={{0,1,2}}
    })",
                    {P});
  EXPECT_EQ(ints(AG), (std::vector<int64_t>{1, 2, 1, 2, 1, 2}));
  Literal AR = run1(R"(
    add {
      a = s32[] parameter(0)
      b = s32[] parameter(1)
      ROOT r = s32[] add(a, b)
    }
    ENTRY e {
      p = s32[2] parameter(0)
      ROOT ar = s32[2] all-reduce(p), replica_groups={{0,1,2}}, to_apply=add
    })",
                    {P});
  EXPECT_EQ(ints(AR), (std::vector<int64_t>{3, 6}));
  Literal RS = run1(R"(
    add {
      a = s32[] parameter(0)
      b = s32[] parameter(1)
      ROOT r = s32[] add(a, b)
    }
    ENTRY e {
      p = s32[2] parameter(0)
      ROOT rs = s32[1] reduce-scatter(p), dimensions={0},
          replica_groups={{0,1}}, to_apply=add
    })",
                    {P});
  EXPECT_EQ(ints(RS), (std::vector<int64_t>{2}));
  Literal CP = run1(R"(ENTRY e {
      p = s32[2] parameter(0)
      ROOT cp = s32[2] collective-permute(p), source_target_pairs={{0,1},{1,2}}
    })",
                    {P});
  EXPECT_EQ(ints(CP), (std::vector<int64_t>{0, 0}));
  Literal ID = run1(R"(ENTRY e {
      ROOT r = u32[] replica-id()
    })",
                    {});
  EXPECT_EQ(ints(ID), (std::vector<int64_t>{0}));
}

TEST(IndexedInterpreterTest, MalformedCollectivesAreDiagnosedNotCrashes) {
  // The collectives other than all-gather have no shape rule yet: the
  // interpreter checks what it indexes with and names the instruction.
  const char *Bad[] = {
      R"(ENTRY e {
        p = s32[4] parameter(0)
        ROOT a = s32[4] all-to-all(p), replica_groups={{0,1,2}}, dimensions={0}
      })",
      R"(ENTRY e {
        p = s32[4] parameter(0)
        ROOT a = s32[3] reduce-scatter(p), dimensions={0}, to_apply=e2
      }
      e2 {
        a = s32[] parameter(0)
        b = s32[] parameter(1)
        ROOT r = s32[] add(a, b)
      })",
      R"(add {
        a = f32[] parameter(0)
        b = f32[] parameter(1)
        ROOT r = f32[] add(a, b)
      }
      ENTRY e {
        p = s32[4] parameter(0)
        ROOT a = s32[4] all-reduce(p), to_apply=add
      })",
      R"(ENTRY e {
        p = s32[4] parameter(0)
        q = s32[4] parameter(1)
        ROOT a = (s32[4], s32[4]) all-to-all(p, q)
      })",
  };
  for (const char *T : Bad) {
    auto M = parseHloModule(T, "bad.hlo");
    if (!M)
      continue; // Refused by the parser: fine too.
    std::vector<Literal> Args;
    for (const HloInstruction *P : (*M)->entry()->parameters())
      Args.push_back(Literal(P->shape()));
    auto R = evaluate(*(*M)->entry(), Args);
    ASSERT_FALSE(bool(R)) << T;
    EXPECT_NE(R.error().str().find("cannot evaluate 'a'"), std::string::npos)
        << R.error().str();
  }
}

/// Random instances with one number of their text changed (an attribute
/// entry, a dimension, an index): the parser refuses them with a located
/// error, or indexing and evaluation run without crashing.
TEST(IndexedVerifierTest, MutatedInstancesNeverCrash) {
  int Parsed = 0, Refused = 0;
  std::mt19937_64 Rng(7);
  for (HloOpcode Op : indexedSingleOps())
    for (uint64_t Seed = 1; Seed <= 150; ++Seed) {
      std::string T = generateIndexedFusion(Seed, Op).Text;
      // Only the fused computation's root line is mutated.
      size_t Root = T.find("ROOT r = "), End = T.find('\n', Root);
      std::vector<size_t> Digits;
      for (size_t K = Root; K < End; ++K)
        if (std::isdigit(static_cast<unsigned char>(T[K])))
          Digits.push_back(K);
      if (Digits.empty())
        continue;
      size_t At = Digits[Rng() % Digits.size()];
      static const char *Repl[] = {"0", "1", "2", "5", "9", "-1", "17"};
      T.replace(At, 1, Repl[Rng() % 7]);
      auto M = parseHloModule(T, "mut.hlo");
      if (!M) {
        ++Refused;
        EXPECT_NE(M.error().str().find("mut.hlo:"), std::string::npos);
        continue;
      }
      ++Parsed;
      const HloComputation *C = (*M)->findComputation("fused_computation");
      ASSERT_NE(C, nullptr);
      Context Ctx;
      for (int64_t Out = 0; Out < numOutputs(*C->root()); ++Out)
        (void)computeOutputToInputIndexing(Ctx, *C->root(), Out).str();
      std::vector<Literal> Args;
      for (const HloInstruction *P : C->parameters()) {
        Literal L(P->shape());
        L.fillRandom(Seed, -3, 9);
        Args.push_back(std::move(L));
      }
      (void)evaluate(*C, Args);
    }
  EXPECT_GT(Parsed, 0);
  EXPECT_GT(Refused, 0);
}

//===----------------------------------------------------------------------===//
// Runtime-variable maps evaluated through their bindings
//===----------------------------------------------------------------------===//

/// For every output element: the runtime variables' values read from their
/// bindings (clamped to their range, as the ops clamp), the map's operand
/// index, and the interpreter's output equal to the operand there.
void checkThroughBindings(const std::string &Text, int64_t Operand,
                          uint64_t Seed, int64_t Lo, int64_t Hi) {
  auto M = parse(Text);
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  std::vector<Literal> Args;
  std::mt19937_64 Rng(Seed);
  for (int64_t P = 0; P < C.parameterCount(); ++P) {
    const Shape &S = C.parameter(P)->shape();
    std::vector<int64_t> V;
    for (int64_t K = 0; K < S.numElements(); ++K)
      V.push_back(P == Operand ? K * 7 + 1
                               : Lo + int64_t(Rng() % uint64_t(Hi - Lo + 1)));
    Args.push_back(Literal::fromInts(S, V));
  }
  auto Out = evaluate(C, Args);
  ASSERT_TRUE(bool(Out)) << Out.error().str();
  Context Ctx;
  InstructionIndexing Idx = computeOutputToInputIndexing(Ctx, *C.root());
  ASSERT_EQ(Idx.Operands[size_t(Operand)].size(), 1u);
  const OperandMap &OM = Idx.Operands[size_t(Operand)][0];
  const Literal &O = (*Out)[0];
  const Literal &In = Args[size_t(Operand)];
  std::vector<int64_t> OIdx(O.shape().Dims.size(), 0);
  for (int64_t L = 0; L < O.elementCount(); ++L) {
    std::vector<int64_t> Point = OIdx;
    for (size_t R = 0; R < OM.Bindings.size(); ++R) {
      const RuntimeBinding &B = OM.Bindings[R];
      auto BI = B.Map.evaluate(OIdx);
      ASSERT_TRUE(BI.has_value());
      const Literal &Src = Args[size_t(B.Source->parameterNumber())];
      int64_t V = Src.getInt(Src.linearIndex(*BI));
      const Interval &Bound = OM.Map.runtimeVars()[R].Bound;
      Point.push_back(std::min(std::max(V, Bound.Lo), Bound.Hi));
    }
    auto InIdx = OM.Map.evaluate(Point);
    ASSERT_TRUE(InIdx.has_value());
    EXPECT_EQ(O.getInt(L), In.getInt(In.linearIndex(*InIdx)))
        << "output element " << L << "\n"
        << Idx.str();
    for (size_t D = OIdx.size(); D-- > 0;)
      if (++OIdx[D] < O.shape().Dims[D])
        break;
      else
        OIdx[D] = 0;
  }
}

TEST(IndexedIndexingTest, GatherMapsMatchTheInterpreterThroughBindings) {
  const char *Gathers[] = {
      R"(ENTRY e {
        p = s32[9,7,5] parameter(0)
        i = s32[4,2] parameter(1)
        ROOT g = s32[4,3,2,5] gather(p, i), offset_dims={1,2,3},
          collapsed_slice_dims={}, start_index_map={0,1},
          index_vector_dim=1, slice_sizes={3,2,5}
      })",
      R"(ENTRY e {
        p = s32[9,7,5] parameter(0)
        i = s32[2,3,2] parameter(1)
        ROOT g = s32[3,2,2,5] gather(p, i), offset_dims={2,3},
          collapsed_slice_dims={1}, start_index_map={1,0},
          index_vector_dim=0, slice_sizes={2,1,5}
      })",
      R"(ENTRY e {
        p = s32[3,8,4] parameter(0)
        i = s32[3,5] parameter(1)
        ROOT g = s32[3,5,2] gather(p, i), offset_dims={2},
          collapsed_slice_dims={1}, start_index_map={1},
          operand_batching_dims={0}, start_indices_batching_dims={0},
          index_vector_dim=2, slice_sizes={1,1,2}
      })",
  };
  for (const char *G : Gathers)
    for (uint64_t Seed = 1; Seed <= 4; ++Seed) {
      SCOPED_TRACE(G);
      // In range, and far out of range on both sides (clamped).
      checkThroughBindings(G, 0, Seed, 0, 4);
      checkThroughBindings(G, 0, Seed, -20, 20);
    }
}

TEST(IndexedIndexingTest, DynamicSliceMapsMatchTheInterpreterThroughBindings) {
  for (uint64_t Seed = 1; Seed <= 6; ++Seed)
    checkThroughBindings(R"(ENTRY e {
        p = s32[8,6] parameter(0)
        i = s32[] parameter(1)
        j = s32[] parameter(2)
        ROOT ds = s32[3,2] dynamic-slice(p, i, j), dynamic_slice_sizes={3,2}
      })",
                         0, Seed, -9, 9);
}

//===----------------------------------------------------------------------===//
// Soundness: random instances against the interpreter (support/HloDeps.h)
//===----------------------------------------------------------------------===//

/// Every operand of the root is a parameter: the maps of each output to
/// each parameter are checked against the interpreter (sound; exact where
/// the generator says), and the input-to-output maps against them.
void checkSound(const RandomFusion &F, uint64_t Seed, int64_t &Pairs) {
  SCOPED_TRACE(F.Text);
  auto M = parse(F.Text);
  ASSERT_TRUE(M);
  const HloComputation &C = *M->findComputation(F.FusedName);
  const HloInstruction &I = opUnderTest(C);
  int64_t Outputs = int64_t(F.NumOutputs);
  Context Ctx;
  for (int64_t Out = 0; Out < Outputs; ++Out) {
    InstructionIndexing Idx = computeOutputToInputIndexing(Ctx, I, Out);
    ASSERT_EQ(int64_t(Idx.Operands.size()), I.operandCount());
    for (int64_t P = 0; P < I.operandCount(); ++P) {
      DepCheckResult R =
          checkDependencies(C, P, Idx.Operands[size_t(P)],
                            F.Exact[size_t(Out)][size_t(P)], Seed, Out);
      EXPECT_TRUE(R.Ok) << "output " << Out << ", operand " << P << ": "
                        << R.Message << "\n"
                        << Idx.str();
      EXPECT_FALSE(R.Undefined);
      Pairs += R.Pairs;
    }
  }
  for (int64_t K = 0; K < I.operandCount(); ++K) {
    InverseCheckResult R = checkInverseConsistency(Ctx, I, K);
    EXPECT_TRUE(R.Ok) << "operand " << K << ": " << R.Message;
  }
}

TEST(IndexedSoundnessTest, GatherScatterSortAllGather) {
  // More instances than OpIndexingSoundnessTest's 25 per op.
  for (HloOpcode Op : indexedSingleOps()) {
    int64_t Pairs = 0;
    for (uint64_t Seed = 1; Seed <= 100; ++Seed) {
      RandomFusion F = generateIndexedFusion(Seed, Op);
      checkSound(F, Seed, Pairs);
    }
    // The interpreter saw real dependencies: the checks are not vacuous.
    EXPECT_GT(Pairs, 0) << opcodeName(Op);
  }
}

} // namespace
