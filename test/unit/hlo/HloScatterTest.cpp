//===- HloScatterTest.cpp - Scatter's window geometry ---------------------===//
//
// Part of idxmap. The answers of idxmap/HloScatter.h on parsed (so
// verified) scatters: the header's worked example, and one with input
// batching dims and an inserted dim between window dims.
//
//===----------------------------------------------------------------------===//
#include "idxmap/HloScatter.h"
#include "idxmap/Hlo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

using namespace idxmap;

namespace {

/// A parsed (so verified) module whose entry is `p`, `i`, `u` and the
/// scatter \p Root (an add), and that scatter's dims and updates' shape.
struct Scatter {
  std::unique_ptr<HloModule> M;
  const ScatterDimensions *SD = nullptr;
  const Shape *Upd = nullptr;
};

Scatter parseScatter(const std::string &Params, const std::string &Root) {
  auto M = parseHloModule(R"(HloModule m
    add {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT r = f32[] add(a, b)
    }
    ENTRY e {
)" + Params +
                              "\n      ROOT s = " + Root + "\n    }",
                          "t.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  if (!M)
    return {};
  const HloInstruction &S = *(*M)->entry()->root();
  return {std::move(*M), &S.scatterDimensions(), &S.operand(2)->shape()};
}

// The example of HloScatter.h: 2x6 patches into rows and columns of a
// 10x4x6 operand.
TEST(HloScatter, WorkedExample) {
  Scatter X =
      parseScatter(R"(p = f32[10,4,6] parameter(0)
      i = s32[3,2] parameter(1)
      u = f32[3,2,6] parameter(2))",
                   R"(f32[10,4,6] scatter(p, i, u), update_window_dims={1,2},
          inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1},
          index_vector_dim=1, to_apply=add)");
  ASSERT_TRUE(X.M);
  const ScatterDimensions &SD = *X.SD;
  const Shape &Upd = *X.Upd;

  EXPECT_FALSE(isUpdateWindowDim(SD, 0));
  EXPECT_TRUE(isUpdateWindowDim(SD, 1));
  EXPECT_TRUE(isUpdateWindowDim(SD, 2));

  EXPECT_FALSE(isOperandWindowDim(SD, 0));
  EXPECT_TRUE(isOperandWindowDim(SD, 1));
  EXPECT_TRUE(isOperandWindowDim(SD, 2));

  EXPECT_TRUE(isScatteredOperandDim(SD, 0));
  EXPECT_TRUE(isScatteredOperandDim(SD, 1));
  EXPECT_FALSE(isScatteredOperandDim(SD, 2));

  EXPECT_EQ(scatterWindowSize(SD, Upd, 0), 1);
  EXPECT_EQ(scatterWindowSize(SD, Upd, 1), 2);
  EXPECT_EQ(scatterWindowSize(SD, Upd, 2), 6);
  EXPECT_EQ(scatterWindowElements(SD, Upd), 12);
}

// Operand dim 0 is an input batching dim and dim 2 inserted: the window
// dims 1 and 3 are spanned by updates dims 2 and 3, in order.
TEST(HloScatter, BatchingAndInsertedDims) {
  Scatter X =
      parseScatter(R"(p = f32[4,9,7,5] parameter(0)
      i = s32[4,3,1] parameter(1)
      u = f32[4,3,2,5] parameter(2))",
                   R"(f32[4,9,7,5] scatter(p, i, u), update_window_dims={2,3},
          inserted_window_dims={2}, scatter_dims_to_operand_dims={2},
          index_vector_dim=2, input_batching_dims={0},
          scatter_indices_batching_dims={0}, to_apply=add)");
  ASSERT_TRUE(X.M);
  const ScatterDimensions &SD = *X.SD;
  const Shape &Upd = *X.Upd;

  EXPECT_FALSE(isUpdateWindowDim(SD, 0));
  EXPECT_FALSE(isUpdateWindowDim(SD, 1));
  EXPECT_TRUE(isUpdateWindowDim(SD, 2));
  EXPECT_TRUE(isUpdateWindowDim(SD, 3));

  EXPECT_FALSE(isOperandWindowDim(SD, 0));
  EXPECT_TRUE(isOperandWindowDim(SD, 1));
  EXPECT_FALSE(isOperandWindowDim(SD, 2));
  EXPECT_TRUE(isOperandWindowDim(SD, 3));

  EXPECT_FALSE(isScatteredOperandDim(SD, 0));
  EXPECT_TRUE(isScatteredOperandDim(SD, 2));

  EXPECT_EQ(scatterWindowSize(SD, Upd, 0), 1);
  EXPECT_EQ(scatterWindowSize(SD, Upd, 1), 2);
  EXPECT_EQ(scatterWindowSize(SD, Upd, 2), 1);
  EXPECT_EQ(scatterWindowSize(SD, Upd, 3), 5);
  EXPECT_EQ(scatterWindowElements(SD, Upd), 10);
}

// A scalar window: every operand dim inserted, one element per update.
TEST(HloScatter, ScalarWindow) {
  Scatter X = parseScatter(R"(p = f32[9,7] parameter(0)
      i = s32[5,2] parameter(1)
      u = f32[5] parameter(2))",
                           R"(f32[9,7] scatter(p, i, u), update_window_dims={},
          inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1},
          index_vector_dim=1, to_apply=add)");
  ASSERT_TRUE(X.M);
  const ScatterDimensions &SD = *X.SD;
  const Shape &Upd = *X.Upd;
  EXPECT_FALSE(isUpdateWindowDim(SD, 0));
  EXPECT_FALSE(isOperandWindowDim(SD, 0));
  EXPECT_FALSE(isOperandWindowDim(SD, 1));
  EXPECT_EQ(scatterWindowSize(SD, Upd, 1), 1);
  EXPECT_EQ(scatterWindowElements(SD, Upd), 1);
}

} // namespace

// Indices for `unique_indices=true`: windows that never overlap. Rows into
// an 8-row operand: the 8 rows in some order, then starts past the end
// (skipped windows); the example of the header.
TEST(HloScatter, UniqueIndicesAreDistinctRows) {
  Scatter X = parseScatter(R"(p = f32[8,4] parameter(0)
      i = s32[10,1] parameter(1)
      u = f32[10,4] parameter(2))",
                           R"(f32[8,4] scatter(p, i, u), update_window_dims={1},
          inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
          index_vector_dim=1, to_apply=add, unique_indices=true)");
  ASSERT_TRUE(X.M);
  const HloInstruction &S = *X.M->entry()->root();
  for (uint64_t Seed : {1, 2, 3}) {
    Literal I(S.operand(1)->shape());
    I.fillRandom(Seed);
    fillUniqueScatterIndices(S, I, Seed);
    std::vector<int64_t> Rows;
    for (int64_t K = 0; K < 8; ++K)
      Rows.push_back(I.getInt(K));
    std::sort(Rows.begin(), Rows.end());
    for (int64_t K = 0; K < 8; ++K)
      EXPECT_EQ(Rows[size_t(K)], K) << "seed " << Seed;
    EXPECT_EQ(I.getInt(8), 8);
    EXPECT_EQ(I.getInt(9), 8);
  }
}

// Windows 2 rows tall and a second scattered dim: the first dim's starts
// are distinct multiples of 2 (windows apart), the second's fit.
TEST(HloScatter, UniqueIndicesKeepWindowsApart) {
  Scatter X =
      parseScatter(R"(p = f32[10,4,6] parameter(0)
      i = s32[3,2] parameter(1)
      u = f32[3,2,6] parameter(2))",
                   R"(f32[10,4,6] scatter(p, i, u), update_window_dims={1,2},
          inserted_window_dims={0}, scatter_dims_to_operand_dims={1,0},
          index_vector_dim=1, to_apply=add, unique_indices=true)");
  ASSERT_TRUE(X.M);
  const HloInstruction &S = *X.M->entry()->root();
  // Component 0 starts operand dim 1 (window 2 of 4: starts 0 or 2);
  // component 1 operand dim 0 (window 1 of 10).
  Literal I(S.operand(1)->shape());
  fillUniqueScatterIndices(S, I, 5);
  std::set<int64_t> Starts;
  for (int64_t V = 0; V < 3; ++V) {
    const int64_t D1 = I.getInt(V * 2), D0 = I.getInt(V * 2 + 1);
    EXPECT_TRUE(D1 == 0 || D1 == 2 || D1 == 4) << D1;
    EXPECT_GE(D0, 0);
    EXPECT_LE(D0, 9);
    if (D1 < 4) {
      EXPECT_TRUE(Starts.insert(D1).second) << "two windows at " << D1;
    }
  }
  EXPECT_EQ(Starts.size(), 2u); // two slots, the third vector skipped
}

namespace {

/// The combiner op of a scatter into f32[8] whose combiner's body is \p Body
/// (its parameters included), or of a variadic scatter of two such arrays
/// with \p Body over the parameters a0, a1, b0, b1 when \p Pair.
HloOpcode combinerOf(const std::string &Body, bool Pair = false) {
  const std::string Comb =
      Pair ? "c {\n a0 = f32[] parameter(0)\n a1 = f32[] parameter(1)\n"
             " b0 = f32[] parameter(2)\n b1 = f32[] parameter(3)\n" +
                 Body + "\n}\n"
           : "c {\n" + Body + "\n}\n";
  const std::string Entry =
      Pair ? "ENTRY e {\n p = f32[8] parameter(0)\n q = f32[8] parameter(1)\n"
             " i = s32[3,1] parameter(2)\n u = f32[3] parameter(3)\n"
             " v = f32[3] parameter(4)\n"
             " ROOT s = (f32[8], f32[8]) scatter(p, q, i, u, v), "
             "update_window_dims={}, inserted_window_dims={0}, "
             "scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
             "to_apply=c\n}"
           : "ENTRY e {\n p = f32[8] parameter(0)\n i = s32[3,1] parameter(1)\n"
             " u = f32[3] parameter(2)\n"
             " ROOT s = f32[8] scatter(p, i, u), update_window_dims={}, "
             "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
             "index_vector_dim=1, to_apply=c\n}";
  auto M = parseHloModule("HloModule m\n" + Comb + Entry, "t.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  if (!M)
    return HloOpcode::Tuple;
  return scatterCombinerOp(*(*M)->entry()->root());
}

} // namespace

TEST(HloScatter, CombinerOp) {
  const std::string A = "a = f32[] parameter(0)\n";
  const std::string B = "b = f32[] parameter(1)\n";
  EXPECT_EQ(combinerOf(A + B + "ROOT r = f32[] add(a, b)"), HloOpcode::Add);
  EXPECT_EQ(combinerOf(A + B + "ROOT r = f32[] maximum(b, a)"),
            HloOpcode::Maximum);
  EXPECT_EQ(combinerOf(A + "ROOT b = f32[] parameter(1)"),
            HloOpcode::Parameter);
  // Not one op of both parameters, or the operand it holds.
  EXPECT_EQ(combinerOf(A + B + "ROOT r = f32[] multiply(a, a)"),
            HloOpcode::Call);
  EXPECT_EQ(combinerOf("ROOT a = f32[] parameter(0)\n" + B), HloOpcode::Call);
  EXPECT_EQ(
      combinerOf(A + B + "n = f32[] negate(b)\n ROOT r = f32[] add(a, n)"),
      HloOpcode::Call);
  // Variadic: the updates in order, or anything else.
  EXPECT_EQ(combinerOf("ROOT r = (f32[], f32[]) tuple(b0, b1)", true),
            HloOpcode::Parameter);
  EXPECT_EQ(combinerOf("ROOT r = (f32[], f32[]) tuple(b1, b0)", true),
            HloOpcode::Call);
  EXPECT_EQ(combinerOf("x = f32[] add(a0, b0)\n y = f32[] add(a1, b1)\n"
                       " ROOT r = (f32[], f32[]) tuple(x, y)",
                       true),
            HloOpcode::Call);
}
