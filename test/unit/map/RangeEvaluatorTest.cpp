//===- RangeEvaluatorTest.cpp - Interval bounds and divisibility ----------===//
//
// Part of idxmap. Expected intervals are checked for soundness by
// enumeration (support/BruteForce.h) and pinned exactly where the answer is
// known to be tight.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"
#include "support/Matchers.h"

#include "idxmap/Context.h"
#include "idxmap/Print.h"
#include "idxmap/RangeEvaluator.h"

#include <gtest/gtest.h>

#include <random>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

/// Range and divisor of \p Text over \p MapText's domain, checked sound.
ExprInfo infoOf(const char *MapText, const char *Text,
                bool UseConstraints = true, bool MayDivideByZero = false) {
  Context Ctx;
  IndexingMap M = parseOrDie(Ctx, MapText);
  Expr E = parseExprOrDie(Text, M);
  RangeEvaluator RE(M, UseConstraints);
  ExprInfo I = RE.info(E);
  CheckResult R = checkExprBounds(M, E, I.Range, I.Divisor);
  EXPECT_TRUE(R.ok() || R.Status == CheckStatus::TooLarge ||
              (MayDivideByZero && R.Status == CheckStatus::EvalError))
      << Text << " over " << MapText << ": " << I.Range.str() << " / "
      << I.Divisor << "\n"
      << R.str();
  return I;
}

const char *Box = "(d0, d1, d2, d3)[s0] -> (0), domain: d0 in [0, 9], d1 in "
                  "[-10, -1], d2 in [-1, 2], d3 in [0, 0], s0 in [0, 15]";

TEST(RangeEvaluatorTest, XlaBasics) {
  Context Ctx;
  IndexingMap M = parseOrDie(Ctx, Box);
  RangeEvaluator RE(M);
  EXPECT_TRUE(RE.isNonNegative(Ctx.dim(0)));
  EXPECT_FALSE(RE.isNonNegative(Ctx.dim(1)));
  EXPECT_FALSE(RE.isNonNegative(Ctx.dim(2)));
  EXPECT_TRUE(RE.isNonNegative(Ctx.dim(3)));
  EXPECT_EQ(RE.range(Ctx.dim(0) * 2 + Ctx.dim(1)), (Interval{-10, 17}));
  EXPECT_TRUE(RE.isWithin(Ctx.dim(0), {0, 9}));
  EXPECT_FALSE(RE.isWithin(Ctx.dim(0), {0, 8}));
}

TEST(RangeEvaluatorTest, Operators) {
  EXPECT_EQ(infoOf(Box, "d0 mod 4 + s0").Range, (Interval{0, 18}));
  EXPECT_EQ(infoOf(Box, "d1 floordiv 3").Range, (Interval{-4, -1}));
  EXPECT_EQ(infoOf(Box, "d1 ceildiv 3").Range, (Interval{-3, 0}));
  EXPECT_EQ(infoOf(Box, "d1 floordiv -3").Range, (Interval{0, 3}));
  EXPECT_EQ(infoOf(Box, "d1 ceildiv -3").Range, (Interval{1, 4}));
  EXPECT_EQ(infoOf(Box, "d1 mod 4").Range, (Interval{0, 3}));
  EXPECT_EQ(infoOf(Box, "d1 mod -4").Range, (Interval{-3, 0}));
  EXPECT_EQ(infoOf(Box, "d0 mod 16").Range, (Interval{0, 9}));
  EXPECT_EQ(infoOf(Box, "(d1 + 10) mod 16").Range, (Interval{0, 9}));
  EXPECT_EQ(infoOf(Box, "d0 * d1").Range, (Interval{-90, 0}));
  EXPECT_EQ(infoOf(Box, "d2 * d2").Range, (Interval{0, 4}));
}

TEST(RangeEvaluatorTest, Divisibility) {
  ExprInfo I = infoOf(Box, "d0 * 4");
  EXPECT_EQ(I.Divisor, 4);
  I = infoOf(Box, "d0 * 4 + s0 * 8 + 12");
  EXPECT_EQ(I.Divisor, 4);
  EXPECT_EQ(I.Range, (Interval{12, 168}));
  I = infoOf(Box, "(d0 * 8) floordiv 2");
  EXPECT_EQ(I.Divisor, 4);
  // (d0 * 4) mod 8 is 0 or 4: the range snaps to the divisor.
  I = infoOf(Box, "(d0 * 4) mod 8");
  EXPECT_EQ(I.Divisor, 4);
  EXPECT_EQ(I.Range, (Interval{0, 4}));
  I = infoOf(Box, "(d0 * 6 + 3) mod 12");
  EXPECT_EQ(I.Divisor, 3);
  EXPECT_EQ(I.Range, (Interval{0, 9}));
}

TEST(RangeEvaluatorTest, SymbolicDivisors) {
  const char *M = "(d0, d1, d2) -> (0), domain: d0 in [-7, 9], d1 in [2, 4], "
                  "d2 in [-3, 3]";
  EXPECT_EQ(infoOf(M, "d0 floordiv d1").Range, (Interval{-4, 4}));
  EXPECT_EQ(infoOf(M, "d0 ceildiv d1").Range, (Interval{-3, 5}));
  EXPECT_EQ(infoOf(M, "d0 mod d1").Range, (Interval{0, 3}));
  // A divisor range containing 0: both signs are joined, 0 is skipped.
  // (checkExprBounds reports the points with d2 = 0 as evaluation errors
  // after checking all the others.)
  EXPECT_EQ(infoOf(M, "d0 floordiv d2", true, true).Range, (Interval{-9, 9}));
  EXPECT_EQ(infoOf(M, "d0 mod d2", true, true).Range, (Interval{-2, 2}));
  EXPECT_EQ(infoOf(M, "d0 ceildiv d2", true, true).Range, (Interval{-9, 9}));
  // Never a wrap: the full range on overflow.
  Context Ctx;
  IndexingMap Big = parseOrDie(Ctx, "(d0) -> (0), domain: d0 in [0, "
                                    "4611686018427387904]");
  RangeEvaluator RE(Big);
  EXPECT_TRUE((RE.range(Ctx.dim(0) * 4)).isFull());
  EXPECT_TRUE((RE.range(Ctx.dim(0) * 4 + 1)).isFull());
}

TEST(RangeEvaluatorTest, CorrelatedSums) {
  const char *M = "()[s0, s1] -> (0), domain: s0 in [0, 1023], s1 in [0, 255]";
  // x - (x floordiv c) * c == x mod c inside a sum.
  EXPECT_EQ(infoOf(M, "s0 + s1 * 32 - (s0 floordiv 32) * 32").Range,
            (Interval{0, 8191}));
  // (x mod c) * k + (x floordiv c) * (c * k) == x * k.
  EXPECT_EQ(infoOf(M, "(s0 mod 32) * 2 + (s0 floordiv 32) * 64").Range,
            (Interval{0, 2046}));
  // A sum as x, with a constant.
  EXPECT_EQ(infoOf(M, "s0 + s1 + 3 - ((s0 + s1 + 3) floordiv 8) * 8").Range,
            (Interval{0, 7}));
  // Partial cancellation keeps the rest.
  EXPECT_EQ(infoOf(M, "s0 * 3 - (s0 floordiv 4) * 4").Range,
            (Interval{0, 2049}));
}

TEST(RangeEvaluatorTest, Constraints) {
  const char *M = "(d0, d1) -> (0), domain: d0 in [0, 99], d1 in [0, 99], d0 "
                  "+ d1 in [10, 20], d0 mod 8 in [0, 0]";
  EXPECT_EQ(infoOf(M, "d0 + d1").Range, (Interval{10, 20}));
  EXPECT_EQ(infoOf(M, "d0 + d1", /*UseConstraints=*/false).Range,
            (Interval{0, 198}));
  // d0 is a multiple of 8 on the domain.
  ExprInfo I = infoOf(M, "d0 * 2");
  EXPECT_EQ(I.Divisor, 16);
  EXPECT_EQ(infoOf(M, "d0").Range, (Interval{0, 96}));
  EXPECT_EQ(infoOf(M, "d0", false).Divisor, 1);
  // A constrained sub-sum keeps its constraint inside a larger sum.
  EXPECT_EQ(infoOf(M, "d0 + d1 + 5").Range, (Interval{15, 25}));
}

TEST(RangeEvaluatorTest, EmptyAndUndefinedDoNotCrash) {
  Context Ctx;
  IndexingMap E = IndexingMap::knownEmpty(Ctx, 1, 1, 0, 1);
  RangeEvaluator RE(E);
  EXPECT_TRUE(RE.range(Ctx.dim(0) + Ctx.symbol(0)).isEmpty());
  IndexingMap U;
  RangeEvaluator RU(U);
  EXPECT_TRUE(RU.range(Ctx.dim(0)).isFull());
}

TEST(RangeEvaluatorTest, RandomSoundness) {
  std::mt19937_64 Rng(7);
  const char *M = "(d0, d1)[s0] -> (0), domain: d0 in [-9, 7], d1 in [0, 12], "
                  "s0 in [-4, 4], d0 + s0 in [-6, 5], d1 mod 3 in [0, 0]";
  Context Ctx;
  IndexingMap Map = parseOrDie(Ctx, M);
  static const int64_t Ks[] = {-5, -3, -2, 2, 3, 4, 7};
  std::function<Expr(unsigned)> Gen = [&](unsigned D) -> Expr {
    if (D == 0 || Rng() % 4 == 0) {
      switch (Rng() % 4) {
      case 0:
        return Ctx.dim(0);
      case 1:
        return Ctx.dim(1);
      case 2:
        return Ctx.symbol(0);
      default:
        return Ctx.constant(static_cast<int64_t>(Rng() % 9) - 4);
      }
    }
    int64_t K = Ks[Rng() % 7];
    Expr A = Gen(D - 1);
    switch (Rng() % 7) {
    case 0:
      return A + Gen(D - 1);
    case 1:
      return A * K;
    case 2:
      return A.floorDiv(K);
    case 3:
      return A.ceilDiv(K);
    case 4:
      return A % K;
    case 5:
      return A * Gen(D - 1);
    default:
      return A - A.floorDiv(K) * K + Gen(D - 1);
    }
  };
  for (unsigned I = 0; I < 400; ++I) {
    Expr E = Gen(4);
    for (bool UseC : {false, true}) {
      RangeEvaluator RE(Map, UseC);
      ExprInfo Info = RE.info(E);
      IndexingMap Scope = Map;
      if (!UseC)
        Scope.setConstraints({});
      CheckResult R = checkExprBounds(Scope, E, Info.Range, Info.Divisor);
      ASSERT_TRUE(R.ok() || R.Status == CheckStatus::EvalError)
          << printExpr(E, &Map) << " " << Info.Range.str() << " / "
          << Info.Divisor << "\n"
          << R.str();
    }
  }
}

} // namespace
