//===- PrintTest.cpp - Printing expressions and maps ----------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Print.h"
#include "idxmap/Parse.h"

#include "support/Matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace idxmap;
using idxmap::testing::MatchesExpr;
using idxmap::testing::MatchesMap;
using idxmap::testing::parseOrDie;

namespace {

constexpr int64_t Int64Min = std::numeric_limits<int64_t>::min();

TEST(PrintTest, OperatorsAndParentheses) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), D1 = Ctx.dim(1), S0 = Ctx.symbol(0), S1 = Ctx.symbol(1);
  EXPECT_EQ(printExpr(D0 + S1 * -4 + 3), "d0 - s1 * 4 + 3");
  EXPECT_EQ(printExpr((D0 + S0) % 3), "(d0 + s0) mod 3");
  EXPECT_EQ(printExpr((D0 * 2).floorDiv(3)), "(d0 * 2) floordiv 3");
  EXPECT_EQ(printExpr(D0.ceilDiv(S0 + 1)), "d0 ceildiv (s0 + 1)");
  EXPECT_EQ(printExpr((D0 % 4) * (S0 % 2)), "(d0 mod 4) * (s0 mod 2)");
  EXPECT_EQ(printExpr(D0 % 4 + D1.floorDiv(2) * 8),
            "d0 mod 4 + (d1 floordiv 2) * 8");
  EXPECT_EQ(printExpr(Ctx.constant(4) * S1), "s1 * 4");
  EXPECT_EQ(printExpr(Ctx.constant(1) + S0), "s0 + 1");
  EXPECT_EQ(printExpr(Ctx.constant(-7)), "-7");
  EXPECT_EQ(printExpr(D0 * D1), "d0 * d1");
}

TEST(PrintTest, NegationsAndSubtractions) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), D1 = Ctx.dim(1), S0 = Ctx.symbol(0);
  EXPECT_EQ(printExpr(D0 * -1), "-d0");
  EXPECT_EQ(printExpr(-(D0 + S0)), "-(d0 + s0)");
  EXPECT_EQ(printExpr(-(D0 % 3)), "-(d0 mod 3)");
  EXPECT_EQ(printExpr((-D0) % 3), "(-d0) mod 3");
  EXPECT_EQ(printExpr(D0 + S0 * -1), "d0 - s0");
  EXPECT_EQ(printExpr(D0 - S0), "d0 - s0");
  EXPECT_EQ(printExpr(D0 - (S0 + D1)), "d0 - (s0 + d1)");
  EXPECT_EQ(printExpr(D0 - S0 % 3), "d0 - s0 mod 3");
  EXPECT_EQ(printExpr(D0 + S0 * -2), "d0 - s0 * 2");
  EXPECT_EQ(printExpr(D0 + (S0 + D1) * -2), "d0 - (s0 + d1) * 2");
  EXPECT_EQ(printExpr(D0 + (S0 % 3) * -2), "d0 - (s0 mod 3) * 2");
  EXPECT_EQ(printExpr(D0 + -5), "d0 - 5");
  EXPECT_EQ(printExpr(-D0 + 5), "-d0 + 5");
  EXPECT_EQ(printExpr(D0 * -3 + D1 * -1), "d0 * -3 - d1");
  // A product with a negative constant that is not a summand keeps `* -k`.
  EXPECT_EQ(printExpr((D0 * -2) % 5), "(d0 * -2) mod 5");
  // Negating INT64_MIN overflows: no subtraction form.
  EXPECT_EQ(printExpr(D0 + Ctx.constant(Int64Min)),
            "d0 + -9223372036854775808");
  EXPECT_EQ(printExpr(D0 + S0 * Int64Min), "d0 + s0 * -9223372036854775808");
}

TEST(PrintTest, SumsFollowTheTree) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), D1 = Ctx.dim(1), D2 = Ctx.dim(2);
  EXPECT_EQ(printExpr((D2 + D0) + D1), "d2 + d0 + d1");
  // A right-nested sum (only reachable with the unfolded builder) prints
  // without parentheses, as MLIR does.
  Expr Right = Ctx.getBinaryUnfolded(
      ExprKind::Add, D0, Ctx.getBinaryUnfolded(ExprKind::Add, D1, D2));
  EXPECT_EQ(printExpr(Right), "d0 + d1 + d2");
  Expr RightNeg = Ctx.getBinaryUnfolded(
      ExprKind::Add, D0,
      Ctx.getBinaryUnfolded(ExprKind::Add, -D1, Ctx.constant(-4)));
  EXPECT_EQ(printExpr(RightNeg), "d0 - d1 - 4");
  EXPECT_EQ(printExpr(-(RightNeg)), "-(d0 - d1 - 4)");
}

TEST(PrintTest, Names) {
  Context Ctx;
  IndexingMap M(Ctx, {{"th_x", {0, 127}}, {"", {0, 3}}}, {{"vec", {0, 3}}},
                {{"", {0, 9}}}, {Ctx.dim(0) * 4 + Ctx.symbol(0)});
  Expr E = Ctx.dim(0) + Ctx.dim(1) + Ctx.symbol(0) + Ctx.symbol(1);
  EXPECT_EQ(printExpr(E, &M), "th_x + d1 + vec + rt0");
  EXPECT_EQ(printExpr(E), "d0 + d1 + s0 + s1");
  // Positions beyond the map fall back to default names.
  EXPECT_EQ(printExpr(Ctx.dim(7) + Ctx.symbol(5), &M), "d7 + s5");
  IndexingMap Undefined;
  EXPECT_EQ(printExpr(E, &Undefined), "d0 + d1 + s0 + s1");
  EXPECT_EQ(printExpr(Expr()), "<<null>>");
}

TEST(PrintTest, Maps) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), D1 = Ctx.dim(1), S0 = Ctx.symbol(0);
  // Constraints print sorted by their text, after the bounds.
  IndexingMap M(Ctx, {{"", {0, 9}}, {"", {-4, 4}}}, {{"", {0, 1}}}, {},
                {D0 + S0, D1},
                {{D1 % 2, {0, 0}}, {D0 + D1, {0, 10}}, {D0 % 3, {1, 1}}});
  EXPECT_EQ(printMap(M),
            "(d0, d1)[s0] -> (d0 + s0, d1), domain: d0 in [0, 9], d1 in "
            "[-4, 4], s0 in [0, 1], d0 + d1 in [0, 10], d0 mod 3 in [1, 1], "
            "d1 mod 2 in [0, 0]");
  EXPECT_THAT(M, MatchesMap("(d0,d1)[s0]->(d0+s0,d1),domain:d0 in[0,9],d1 "
                            "in[-4,4],s0 in[0,1],d0+d1 in[0,10],d0 mod 3 in "
                            "[1,1],d1 mod 2 in[0,0]"));
  EXPECT_EQ(printMapMlir(M), "affine_map<(d0, d1)[s0] -> (d0 + s0, d1)>");

  IndexingMap OnlySymbols(Ctx, {}, {{"", {0, 3}}}, {{"", {0, 1}}},
                          {S0 + Ctx.symbol(1)});
  EXPECT_EQ(printMap(OnlySymbols),
            "()[s0]{rt0} -> (s0 + rt0), domain: s0 in [0, 3], rt0 in [0, 1]");
  EXPECT_EQ(printMapMlir(OnlySymbols), "affine_map<()[s0, s1] -> (s0 + s1)>");

  IndexingMap NoResults(Ctx, {{"", {0, 3}}}, {}, {}, {});
  EXPECT_EQ(printMap(NoResults), "(d0) -> (), domain: d0 in [0, 3]");
  IndexingMap NoVars(Ctx, {}, {}, {}, {Ctx.constant(42)});
  EXPECT_EQ(printMap(NoVars), "() -> (42)");

  IndexingMap Empty = M;
  Empty.markKnownEmpty();
  EXPECT_EQ(printMap(Empty), "KNOWN EMPTY");
  EXPECT_EQ(printMapMlir(Empty), "KNOWN EMPTY");
  EXPECT_EQ(printMap(IndexingMap::undefined()), "UNDEFINED");
  EXPECT_EQ(printMapMlir(IndexingMap::undefined()), "UNDEFINED");
  EXPECT_EQ(printMap(IndexingMap::identity(Ctx, {4, 8})),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 7]");
}

TEST(PrintTest, MatchersDescribeMismatches) {
  Context Ctx;
  IndexingMap M = IndexingMap::identity(Ctx, {4});
  ::testing::Matcher<const IndexingMap &> Good =
      MatchesMap("(d0) -> (d0), domain: d0 in [0, 3]");
  ::testing::Matcher<const IndexingMap &> Bad =
      MatchesMap("(d0) -> (d0), domain: d0 in [0, 4]");
  EXPECT_TRUE(Good.Matches(M));
  EXPECT_FALSE(Bad.Matches(M));
  ::testing::StringMatchResultListener Listener;
  EXPECT_FALSE(Bad.MatchAndExplain(M, &Listener));
  EXPECT_EQ(Listener.str(),
            "which prints as \"(d0) -> (d0), domain: d0 in [0, 3]\"");
  EXPECT_THAT(Ctx.dim(0) * 4 + 1, MatchesExpr("d0*4+1"));
  EXPECT_FALSE(MatchesExpr("d0 * 4").Matches(Ctx.dim(0) * 4 + 1));
}

/// Builds a random expression over d0, d1, s0, s1 with the tier-0 builders.
Expr randomExpr(Context &Ctx, std::mt19937_64 &Rng, int Depth) {
  auto Pick = [&](int N) {
    return int(std::uniform_int_distribution<int>(0, N - 1)(Rng));
  };
  if (Depth == 0 || Pick(4) == 0) {
    switch (Pick(3)) {
    case 0:
      return Ctx.dim(unsigned(Pick(2)));
    case 1:
      return Ctx.symbol(unsigned(Pick(2)));
    default:
      return Ctx.constant(Pick(13) - 6);
    }
  }
  Expr L = randomExpr(Ctx, Rng, Depth - 1);
  Expr R = randomExpr(Ctx, Rng, Depth - 1);
  Expr Divisor = Pick(3) == 0 ? R : Ctx.constant(Pick(9) - 4);
  if (Divisor.isConstant(0))
    Divisor = Ctx.constant(3);
  switch (Pick(7)) {
  case 0:
  case 1:
    return L + R;
  case 2:
    return L - R;
  case 3:
    return L * R;
  case 4:
    return L % Divisor;
  case 5:
    return L.floorDiv(Divisor);
  default:
    return Pick(2) ? L.ceilDiv(Divisor) : -L;
  }
}

TEST(PrintTest, PrintedExpressionsReparseToTheSameFunction) {
  Context Ctx;
  IndexingMap Scope(Ctx, {{"", {-8, 8}}, {"", {-8, 8}}},
                    {{"", {-8, 8}}, {"", {-8, 8}}}, {}, {});
  std::mt19937_64 Rng(7);
  std::uniform_int_distribution<int64_t> Value(-8, 8);
  for (int I = 0; I < 2000; ++I) {
    Expr E = randomExpr(Ctx, Rng, 5);
    std::string Text = printExpr(E);
    Expected<Expr> Back = parseExpr(Text, Scope);
    ASSERT_TRUE(Back) << Text << "\n" << Back.error().str();
    // Printing is a fixed point of parse + print.
    ASSERT_EQ(printExpr(*Back), Text);
    // And the reparsed expression computes the same function.
    for (int P = 0; P < 8; ++P) {
      std::vector<int64_t> Dims = {Value(Rng), Value(Rng)};
      std::vector<int64_t> Syms = {Value(Rng), Value(Rng)};
      ASSERT_EQ(E.evaluate(Dims, Syms), Back->evaluate(Dims, Syms)) << Text;
    }
  }
}

} // namespace
