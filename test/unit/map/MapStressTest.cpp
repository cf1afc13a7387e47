//===- MapStressTest.cpp - Big and extreme maps, generated at run time ----===//
//
// Part of idxmap. The map engine on inputs far beyond hand-written ones
// (issue 14): 1,000-dim maps through every query, 20,000-dim maps through
// the exact queries (they must answer `unknown` within their budgets),
// 100,000-term sums (the tree is 100,000 deep: run here on the test's own
// 8 MB stack, so any recursion that follows the input depth crashes), deep
// parentheses (a located error past the limit) and int64 extremes in every
// operator. Each case is timed in CPU time and must stay under 2 s in a
// RelWithDebInfo build.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Compose.h"
#include "idxmap/Domain.h"
#include "idxmap/Exact.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include "support/StressLimits.h"

#include <gtest/gtest.h>

#include <ctime>
#include <limits>
#include <string>
#include <vector>

using namespace idxmap;

namespace {

constexpr int64_t Int64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t Int64Max = std::numeric_limits<int64_t>::max();

/// CPU seconds since construction (less sensitive to a loaded machine than
/// wall time).
class CpuTimer {
public:
  double seconds() const {
    return double(std::clock() - Start) / CLOCKS_PER_SEC;
  }

private:
  std::clock_t Start = std::clock();
};

/// `(d0, ..., dN-1) -> (d0, ..., dN-1)` with every di in [0, 3] and, when
/// \p Chain, the constraints `di + di+1 in [0, 5]`.
std::string boxMap(unsigned N, bool Chain) {
  std::string Dims, Dom, Cons;
  for (unsigned I = 0; I < N; ++I) {
    std::string D = "d" + std::to_string(I);
    Dims += (I ? ", " : "") + D;
    Dom += (I ? ", " : "") + D + " in [0, 3]";
    if (Chain && I + 1 < N)
      Cons += ", " + D + " + d" + std::to_string(I + 1) + " in [0, 5]";
  }
  return "(" + Dims + ") -> (" + Dims + "), domain: " + Dom + Cons;
}

/// `(d0, d1) -> (d0 floordiv 2 + d0 floordiv 3 + ...)` with \p N terms that
/// no builder merges, and the constraint `d1 mod 2 + d1 mod 3 + ... in
/// [0, 4 * N]`: two left-deep trees N nodes deep.
std::string deepSumMap(unsigned N) {
  std::string Res, Con;
  for (unsigned I = 0; I < N; ++I) {
    Res += (I ? " + d0 floordiv " : "d0 floordiv ") + std::to_string(I + 2);
    Con += (I ? " + d1 mod " : "d1 mod ") + std::to_string(I + 2);
  }
  return "(d0, d1) -> (" + Res + "), domain: d0 in [0, 3], d1 in [0, 3], " +
         Con + " in [0, " + std::to_string(4 * N) + "]";
}

IndexingMap parseOrFail(Context &Ctx, const std::string &Text) {
  auto M = parseIndexingMap(Ctx, Text);
  if (!M) {
    ADD_FAILURE() << M.error().str();
    return IndexingMap::undefined();
  }
  return std::move(*M);
}

TEST(MapStress, ThousandDimsThroughEveryQuery) {
  for (bool Chain : {false, true}) {
    Context Ctx;
    std::string Text = boxMap(1000, Chain);
    CpuTimer T;
    IndexingMap M = parseOrFail(Ctx, Text);
    ASSERT_EQ(M.numDims(), 1000u);
    // Compared as booleans: a failure must not print a 50 KB map.
    EXPECT_TRUE(parseOrFail(Ctx, printMap(M)) == M);
    IndexingMap S = M;
    simplify(S);
    EXPECT_EQ(checkEmptyFast(M), Emptiness::NonEmpty);
    EXPECT_EQ(isEmptyExact(M), Emptiness::NonEmpty);
    IndexingMap C = compose(M, M);
    EXPECT_EQ(C.numDims(), 1000u);
    simplify(C);
    Interval B = boundsOf(Ctx.dim(7), M);
    EXPECT_EQ(B, Interval(0, 3));
    // The exact bound may be out of time on this box, never wrong.
    std::optional<Interval> E = boundsExact(Ctx.dim(7), M);
    if (E) {
      EXPECT_EQ(*E, Interval(0, 3));
    }
    EXPECT_LT(T.seconds(), idxmap::testing::stressSeconds())
        << (Chain ? "with constraints" : "box");
  }
}

TEST(MapStress, TwentyThousandDimsExactIsBudgeted) {
  Context Ctx;
  IndexingMap M = parseOrFail(Ctx, boxMap(20000, /*Chain=*/true));
  // No corner of this domain is a witness: isl would have to decide.
  IndexingMap Hard = M;
  Hard.addConstraint(Ctx.dim(0) + Ctx.dim(1) * 3, {7, 7});
  CpuTimer T;
  std::string Why;
  bool Hit = false;
  ExactOptions O;
  O.Explanation = &Why;
  O.BudgetHit = &Hit;
  EXPECT_EQ(isEmptyExact(Hard, O), Emptiness::Unknown);
  EXPECT_TRUE(Hit);
  // The operation budget, or on a slow machine (the sanitizer build) the
  // time limit, whichever isl reaches first: both are budgets and say so.
  EXPECT_TRUE(Why.find("budget") != std::string::npos ||
              Why.find("time limit") != std::string::npos)
      << Why;
  EXPECT_EQ(areEqual(Hard, M, O), Answer::Unknown);
  EXPECT_TRUE(Hit);
  EXPECT_EQ(boundsExact(Ctx.dim(3), Hard, O), std::nullopt);
  EXPECT_EQ(isInjective(Hard, O), Answer::Unknown);
  IndexingMap R = Hard;
  refineExact(R, O); // skipped, never wrong
  EXPECT_EQ(R, Hard);
  EXPECT_LT(T.seconds(), idxmap::testing::stressSeconds());
}

TEST(MapStress, HundredThousandTermSums) {
  // Each operation on the 100,000-term sum within the stress budget (one
  // at a time: together they take about as long as the budget, and a test
  // sharing the core's other hardware thread doubles that; a quadratic
  // step would take minutes either way).
  Context Ctx;
  std::string Text = deepSumMap(100000);
  auto Step = [](const char *Name, auto &&F) {
    CpuTimer T;
    F();
    EXPECT_LT(T.seconds(), idxmap::testing::stressSeconds()) << Name;
  };
  IndexingMap M;
  Step("parse", [&] { M = parseOrFail(Ctx, Text); });
  ASSERT_EQ(M.numResults(), 1u);
  Step("print", [&] {
    std::string Printed = printMap(M);
    EXPECT_TRUE(Printed == Text) << Printed.substr(0, 200);
  });
  Step("evaluate", [&] {
    auto V = M.evaluate({3, 1});
    ASSERT_TRUE(V);
    EXPECT_EQ((*V)[0], 2); // only 3 floordiv 2 and 3 floordiv 3 are 1
    EXPECT_TRUE(M.contains({3, 1}));
  });
  Step("range", [&] {
    RangeEvaluator RE(M);
    EXPECT_TRUE(RE.range(M.result(0)).contains(1));
  });
  Step("simplify", [&] {
    IndexingMap S = M;
    simplify(S);
  });
  Step("checkEmptyFast",
       [&] { EXPECT_NE(checkEmptyFast(M), Emptiness::Empty); });
  Step("isEmptyExact", [&] { EXPECT_NE(isEmptyExact(M), Emptiness::Empty); });
  Step("compose", [&] {
    IndexingMap C = compose(M, parseOrFail(Ctx, "(d0) -> (d0), domain: d0 in "
                                                "[0, 1000000]"));
    EXPECT_EQ(C.numResults(), 1u);
  });
}

TEST(MapStress, DeepCompositionChains) {
  // An expression 100,000 levels deep in mods, products and sums, as a
  // long chain of compositions can build (the parser limits such nesting).
  // Each operation within the stress budget, one at a time.
  Context Ctx;
  Expr E = Ctx.dim(0);
  for (int I = 0; I < 100000; ++I)
    E = (E * 3 + 1) % 1000003;
  IndexingMap M(Ctx, {{"", {0, 7}}}, {}, {}, {E});
  auto Step = [](const char *Name, auto &&F) {
    CpuTimer T;
    F();
    EXPECT_LT(T.seconds(), idxmap::testing::stressSeconds()) << Name;
  };
  Step("range", [&] {
    RangeEvaluator RE(M);
    EXPECT_EQ(RE.range(E), Interval(0, 1000002));
  });
  Step("evaluate", [&] { EXPECT_TRUE(M.evaluate({5})); });
  IndexingMap C = M;
  C.addConstraint(E, {0, 1000002});
  Step("exact", [&] {
    std::string Why;
    ExactOptions O;
    O.Explanation = &Why;
    // Unknown (budget) or non-empty; never a crash, never empty.
    EXPECT_NE(isEmptyExact(C, O), Emptiness::Empty);
    std::optional<Interval> B = boundsExact(Ctx.dim(0), C, O);
    if (B) {
      EXPECT_EQ(*B, Interval(0, 7));
    }
  });
  Step("print", [&] {
    std::string Printed = printExpr(E);
    EXPECT_EQ(Printed.substr(Printed.size() - 12), " mod 1000003");
  });
  Step("simplify", [&] {
    IndexingMap S = M;
    simplify(S);
    IndexingMap SC = C;
    simplify(SC);
  });
  Step("checkEmptyFast",
       [&] { EXPECT_NE(checkEmptyFast(C), Emptiness::Empty); });
}

TEST(MapStress, NestingIsLimitedWithALocation) {
  Context Ctx;
  auto Nested = [](unsigned Depth) {
    return "(d0) -> (" + std::string(Depth, '(') + "d0" +
           std::string(Depth, ')') + "), domain: d0 in [0, 3]";
  };
  auto Ok = parseIndexingMap(Ctx, Nested(900));
  EXPECT_TRUE(static_cast<bool>(Ok));
  auto Deep = parseIndexingMap(Ctx, Nested(100000));
  ASSERT_FALSE(static_cast<bool>(Deep));
  EXPECT_NE(Deep.error().str().find("1:"), std::string::npos);
  EXPECT_NE(Deep.error().str().find("nested too deeply"), std::string::npos);
  std::string Minus =
      "(d0) -> (" + std::string(100000, '-') + "d0), domain: d0 in [0, 3]";
  auto DeepMinus = parseIndexingMap(Ctx, Minus);
  ASSERT_FALSE(static_cast<bool>(DeepMinus));
  EXPECT_NE(DeepMinus.error().str().find("nested too deeply"),
            std::string::npos);
}

TEST(MapStress, DiagnosticsOnHugeLinesShowAWindow) {
  Context Ctx;
  std::string Text = deepSumMap(100000);
  size_t Bad = Text.find(" + d0 floordiv 50000 ");
  ASSERT_NE(Bad, std::string::npos);
  Text.replace(Bad, 3, " + )"); // `... + ) d0 floordiv 50000 ...`
  auto M = parseIndexingMap(Ctx, Text);
  ASSERT_FALSE(static_cast<bool>(M));
  std::string S = M.error().str();
  EXPECT_LT(S.size(), 1000u); // not the 2 MB line
  // The caret is under the offending byte of the shown window.
  size_t L1 = S.find('\n'), L2 = S.find('\n', L1 + 1);
  ASSERT_NE(L2, std::string::npos);
  std::string Shown = S.substr(L1 + 1, L2 - L1 - 1);
  size_t Caret = S.size() - L2 - 2;
  ASSERT_EQ(S.back(), '^');
  ASSERT_LT(Caret, Shown.size());
  EXPECT_EQ(Shown[Caret], ')');
  EXPECT_EQ(Shown.substr(0, 3), "...");
}

TEST(MapStress, Int64ExtremesInEveryOperator) {
  Context Ctx;
  const int64_t Values[] = {Int64Min, Int64Min + 1, -2,      -1, 0, 1,
                            2,        Int64Max - 1, Int64Max};
  const char *Ops[] = {"+", "*", "floordiv", "ceildiv", "mod"};
  CpuTimer T;
  for (const char *Op : Ops) {
    for (int64_t K : Values) {
      if (K == 0 && std::string(Op) != "+" && std::string(Op) != "*")
        continue;
      for (Interval B : {Interval(Int64Min, Int64Max), Interval(Int64Min, 0),
                         Interval(0, Int64Max), Interval(-3, 3)}) {
        std::string Text = "(d0) -> (d0 " + std::string(Op) + " " +
                           std::to_string(K) + "), domain: d0 in " + B.str() +
                           ", d0 " + Op + " " + std::to_string(K) + " in [" +
                           std::to_string(Int64Min) + ", 5]";
        auto M = parseIndexingMap(Ctx, Text);
        ASSERT_TRUE(static_cast<bool>(M)) << Text;
        // Every point that the simplified map keeps must be in the input
        // map and vice versa: check the points the interval edges give.
        IndexingMap S = *M;
        simplify(S);
        for (int64_t P : {B.Lo, B.Lo + 1, int64_t(-1), int64_t(0), int64_t(1),
                          B.Hi - 1, B.Hi}) {
          if (!B.contains(P))
            continue;
          bool In = M->contains({P}), SIn = S.contains({P});
          EXPECT_EQ(In, SIn)
              << Text << " at d0 = " << P << " simplified to " << printMap(S);
        }
        Emptiness Fast = checkEmptyFast(*M);
        Emptiness Exact = isEmptyExact(*M);
        if (Fast != Emptiness::Unknown && Exact != Emptiness::Unknown) {
          EXPECT_EQ(Fast, Exact) << Text;
        }
      }
    }
  }
  EXPECT_LT(T.seconds(), idxmap::testing::stressSeconds());
}

} // namespace
