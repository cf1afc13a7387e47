//===- CoreTest.cpp - Expr, Interval, IndexingMap and compose -------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Compose.h"
#include "idxmap/Context.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace idxmap;

namespace {

TEST(ExprTest, Uniquing) {
  Context Ctx;
  Expr A = Ctx.dim(0) + Ctx.symbol(1);
  Expr B = Ctx.dim(0) + Ctx.symbol(1);
  EXPECT_EQ(A, B);
  EXPECT_NE(A, Ctx.symbol(1) + Ctx.dim(0));
}

TEST(ExprTest, TierZeroFolding) {
  Context Ctx;
  Expr D0 = Ctx.dim(0);
  EXPECT_EQ(Ctx.constant(2) + 3, Ctx.constant(5));
  EXPECT_EQ(D0 * 1, D0);
  EXPECT_EQ(D0 + 0, D0);
  EXPECT_EQ(D0 * 0, Ctx.constant(0));
  EXPECT_EQ(Ctx.constant(4) * D0, D0 * 4);
  EXPECT_EQ(Ctx.constant(4) + D0, D0 + 4);
  EXPECT_EQ((D0 + 3) + 4, D0 + 7);
  EXPECT_EQ((D0 * 3) * 4, D0 * 12);
  EXPECT_EQ((D0 % 8) % 4, D0 % 4);
  EXPECT_NE((D0 % 4) % 8, D0 % 8);
  EXPECT_EQ((D0 * 8) % 4, Ctx.constant(0));
  EXPECT_EQ((D0 * 8).floorDiv(4), D0 * 2);
  EXPECT_EQ((D0 * 8).ceilDiv(-4), D0 * -2);
  EXPECT_EQ(D0.floorDiv(1), D0);
  EXPECT_EQ(Ctx.constant(-7).floorDiv(2), Ctx.constant(-4));
  EXPECT_EQ(Ctx.constant(-7).ceilDiv(2), Ctx.constant(-3));
  EXPECT_EQ(Ctx.constant(-7) % 2, Ctx.constant(1));
  EXPECT_EQ(Ctx.constant(7) % -2, Ctx.constant(-1));
  EXPECT_EQ(D0 % 1, Ctx.constant(0));
  // Overflowing folds keep the node; evaluation reports the overflow.
  Expr Big = Ctx.constant(INT64_MAX) + 1;
  EXPECT_FALSE(Big.isConstant());
  EXPECT_FALSE(Big.evaluate({}, {}).has_value());
}

TEST(ExprTest, CheckedHelpersAgreeWithDefinition) {
  for (int64_t A = -20; A <= 20; ++A)
    for (int64_t B = -7; B <= 7; ++B) {
      if (B == 0) {
        EXPECT_FALSE(checkedFloorDiv(A, B));
        EXPECT_FALSE(checkedMod(A, B));
        continue;
      }
      int64_t F = *checkedFloorDiv(A, B), C = *checkedCeilDiv(A, B);
      double Q = static_cast<double>(A) / static_cast<double>(B);
      EXPECT_EQ(F, static_cast<int64_t>(std::floor(Q))) << A << "/" << B;
      EXPECT_EQ(C, static_cast<int64_t>(std::ceil(Q))) << A << "/" << B;
      EXPECT_EQ(*checkedMod(A, B), A - F * B);
    }
  EXPECT_FALSE(checkedFloorDiv(INT64_MIN, -1));
  EXPECT_FALSE(checkedAdd(INT64_MAX, 1));
  EXPECT_FALSE(checkedMul(INT64_MIN, -1));
}

TEST(ExprTest, ReplaceAndEvaluate) {
  Context Ctx;
  Expr E = (Ctx.dim(0) * 4 + Ctx.symbol(0)).floorDiv(3);
  Expr R = E.replace({Ctx.dim(1)}, {Ctx.constant(2)});
  EXPECT_EQ(R, (Ctx.dim(1) * 4 + 2).floorDiv(3));
  EXPECT_EQ(*E.evaluate({5}, {1}), 7);
  EXPECT_EQ(*E.evaluate({-1}, {0}), -2);
  EXPECT_TRUE(E.usesDim(0));
  EXPECT_FALSE(E.usesDim(1));
  EXPECT_TRUE(E.usesSymbol(0));
  EXPECT_TRUE(Ctx.dim(100).usesDim(100));
  EXPECT_FALSE(Ctx.dim(100).usesDim(99));
}

/// Interval arithmetic is checked against enumeration.
TEST(IntervalTest, SoundAndTightAgainstEnumeration) {
  std::mt19937_64 Rng(7);
  std::uniform_int_distribution<int64_t> Dist(-12, 12);
  for (int It = 0; It < 2000; ++It) {
    int64_t A = Dist(Rng), B = Dist(Rng), C = Dist(Rng), D = Dist(Rng);
    Interval X{std::min(A, B), std::max(A, B)}, Y{std::min(C, D), std::max(C, D)};
    int64_t K = Dist(Rng);
    if (K == 0)
      K = 3;
    Interval Sum = X + Y, Prod = X * Y, Fd = X.floorDiv(K), Cd = X.ceilDiv(K),
             Md = X.mod(K);
    Interval SumE = Interval::empty(), ProdE = SumE, FdE = SumE, CdE = SumE,
             MdE = SumE;
    for (int64_t I = X.Lo; I <= X.Hi; ++I) {
      FdE = FdE.hull(Interval::point(*checkedFloorDiv(I, K)));
      CdE = CdE.hull(Interval::point(*checkedCeilDiv(I, K)));
      MdE = MdE.hull(Interval::point(*checkedMod(I, K)));
      for (int64_t J = Y.Lo; J <= Y.Hi; ++J) {
        SumE = SumE.hull(Interval::point(I + J));
        ProdE = ProdE.hull(Interval::point(I * J));
      }
    }
    EXPECT_EQ(Sum, SumE);
    EXPECT_EQ(Prod, ProdE);
    EXPECT_EQ(Fd, FdE);
    EXPECT_EQ(Cd, CdE);
    EXPECT_TRUE(Md.contains(MdE)) << X.str() << " mod " << K;
  }
}

TEST(IntervalTest, OverflowGivesFullRange) {
  Interval Big{INT64_MAX - 1, INT64_MAX};
  EXPECT_TRUE((Big + Interval::point(2)).isFull());
  EXPECT_TRUE((Big * Interval::point(2)).isFull());
  EXPECT_TRUE((-Interval{INT64_MIN, 0}).isFull());
  EXPECT_TRUE(Interval(INT64_MIN, 0).floorDiv(-1).isFull());
  EXPECT_EQ(Interval::full().size(), UINT64_MAX);
  EXPECT_EQ(Interval(0, 9).size(), 10u);
}

IndexingMap sampleMap(Context &Ctx) {
  // (d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 15], s0 in [0, 3]
  return IndexingMap(Ctx, {{"", {0, 15}}}, {{"", {0, 3}}}, {},
                     {Ctx.dim(0) * 4 + Ctx.symbol(0)});
}

TEST(IndexingMapTest, EvaluateAndContains) {
  Context Ctx;
  IndexingMap M = sampleMap(Ctx);
  EXPECT_EQ(*M.evaluate({2, 1}), std::vector<int64_t>{9});
  EXPECT_TRUE(M.contains({15, 3}));
  EXPECT_FALSE(M.contains({16, 0}));
  EXPECT_TRUE(M.addConstraint(Ctx.dim(0) % 2, {0, 0}));
  EXPECT_FALSE(M.contains({3, 0}));
  EXPECT_TRUE(M.contains({4, 0}));
  EXPECT_FALSE(M.evaluate({1}));
}

TEST(IndexingMapTest, AddConstraintFolding) {
  Context Ctx;
  IndexingMap M = sampleMap(Ctx);
  M.addConstraint(Ctx.dim(0), {2, 100});
  EXPECT_EQ(M.dims()[0].Bound, Interval(2, 15));
  EXPECT_TRUE(M.constraints().empty());
  M.addConstraint(Ctx.constant(3), {0, 5});
  EXPECT_FALSE(M.isKnownEmpty());
  M.addConstraint(Ctx.dim(0) + Ctx.symbol(0), {0, 10});
  M.addConstraint(Ctx.dim(0) + Ctx.symbol(0), {5, 20});
  ASSERT_EQ(M.constraints().size(), 1u);
  EXPECT_EQ(M.constraints()[0].I, Interval(5, 10));
  M.addConstraint(Ctx.dim(0) + Ctx.symbol(0), {11, 20});
  EXPECT_TRUE(M.isKnownEmpty());
  EXPECT_EQ(M.numDims(), 1u);
  EXPECT_EQ(M.numResults(), 1u);
}

TEST(IndexingMapTest, EqualityIgnoresConstraintOrderAndNames) {
  Context Ctx;
  IndexingMap A = sampleMap(Ctx), B = sampleMap(Ctx);
  A.addConstraint(Ctx.dim(0) % 2, {0, 0});
  A.addConstraint(Ctx.symbol(0) % 3, {0, 1});
  B.addConstraint(Ctx.symbol(0) % 3, {0, 1});
  B.addConstraint(Ctx.dim(0) % 2, {0, 0});
  B.var(0).Name = "th_x";
  EXPECT_EQ(A, B);
  EXPECT_EQ(A.hash(), B.hash());
  B.addConstraint(Ctx.dim(0) % 4, {0, 0});
  EXPECT_NE(A, B);
  EXPECT_EQ(IndexingMap::undefined(), IndexingMap());
  EXPECT_NE(IndexingMap::undefined(), A);
}

TEST(IndexingMapTest, RemoveUnusedVars) {
  Context Ctx;
  // (d0, d1)[s0, s1] -> (d0 + s1), d1 + s0 in [0, 3], s1 mod 2 in [0, 0]
  IndexingMap M(Ctx, {{"", {0, 3}}, {"", {0, 5}}}, {{"", {0, 7}}, {"", {0, 9}}},
                {}, {Ctx.dim(0) + Ctx.symbol(1)});
  M.addConstraint(Ctx.dim(1) + Ctx.symbol(0), {0, 3});
  M.addConstraint(Ctx.symbol(1) % 2, {0, 0});
  std::vector<bool> R = M.removeUnusedVars();
  EXPECT_EQ(R, (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(M.numDims(), 1u);
  EXPECT_EQ(M.numRangeVars(), 1u);
  EXPECT_EQ(M.result(0), Ctx.dim(0) + Ctx.symbol(0));
  ASSERT_EQ(M.constraints().size(), 1u);
  EXPECT_EQ(M.constraints()[0].E, Ctx.symbol(0) % 2);
  EXPECT_EQ(M.rangeVars()[0].Bound, Interval(0, 9));
}

TEST(IndexingMapTest, ConvertSymbolsToDims) {
  Context Ctx;
  IndexingMap M(Ctx, {{"", {0, 3}}}, {{"", {0, 7}}}, {{"", {0, 9}}},
                {Ctx.dim(0) + Ctx.symbol(0) + Ctx.symbol(1)});
  IndexingMap C = M.convertSymbolsToDims();
  EXPECT_EQ(C.numDims(), 3u);
  EXPECT_EQ(C.numSymbols(), 0u);
  EXPECT_EQ(C.result(0), Ctx.dim(0) + Ctx.dim(1) + Ctx.dim(2));
  EXPECT_EQ(C.dims()[2].Bound, Interval(0, 9));
}

TEST(ComposeTest, SymbolOrderAndConstraints) {
  Context Ctx;
  // first: (d0)[s0]{rt0} -> (d0 * 4 + s0 + rt0)
  IndexingMap First(Ctx, {{"", {0, 7}}}, {{"", {0, 3}}}, {{"", {0, 2}}},
                    {Ctx.dim(0) * 4 + Ctx.symbol(0) + Ctx.symbol(1)});
  // second: (d0)[s0]{rt0} -> (d0 floordiv 2 + rt0, s0), d0 in [0, 31]
  IndexingMap Second(Ctx, {{"", {0, 31}}}, {{"", {0, 1}}}, {{"", {0, 5}}},
                     {Ctx.dim(0).floorDiv(2) + Ctx.symbol(1), Ctx.symbol(0)});
  Second.addConstraint(Ctx.dim(0) % 2, {0, 0});
  IndexingMap C = compose(First, Second);
  // Symbols: [second.range s0, first.range s1, second.rt s2, first.rt s3].
  ASSERT_EQ(C.numRangeVars(), 2u);
  ASSERT_EQ(C.numRuntimeVars(), 2u);
  EXPECT_EQ(C.rangeVars()[0].Bound, Interval(0, 1));
  EXPECT_EQ(C.rangeVars()[1].Bound, Interval(0, 3));
  EXPECT_EQ(C.runtimeVars()[0].Bound, Interval(0, 5));
  EXPECT_EQ(C.runtimeVars()[1].Bound, Interval(0, 2));
  Expr FR = Ctx.dim(0) * 4 + Ctx.symbol(1) + Ctx.symbol(3);
  EXPECT_EQ(C.result(0), FR.floorDiv(2) + Ctx.symbol(2));
  EXPECT_EQ(C.result(1), Ctx.symbol(0));
  EXPECT_EQ(C.constraints().size(), 2u);
  // compose(a, b)(x) == b(a(x)) on every point of the composed domain.
  int Checked = 0;
  for (int64_t D0 = 0; D0 <= 7; ++D0)
    for (int64_t S0 = 0; S0 <= 1; ++S0)
      for (int64_t S1 = 0; S1 <= 3; ++S1)
        for (int64_t S2 = 0; S2 <= 5; ++S2)
          for (int64_t S3 = 0; S3 <= 2; ++S3) {
            std::vector<int64_t> P{D0, S0, S1, S2, S3};
            auto A = *First.evaluate({D0, S1, S3});
            bool In = First.contains({D0, S1, S3}) &&
                      Second.contains({A[0], S0, S2});
            EXPECT_EQ(C.contains(P), In);
            if (!In)
              continue;
            EXPECT_EQ(*C.evaluate(P), *Second.evaluate({A[0], S0, S2}));
            ++Checked;
          }
  EXPECT_GT(Checked, 100);
}

TEST(ComposeTest, UndefinedAndEmpty) {
  Context Ctx;
  IndexingMap M = sampleMap(Ctx);
  IndexingMap Id = IndexingMap::identity(Ctx, {64});
  EXPECT_TRUE(compose(M, IndexingMap()).isUndefined());
  EXPECT_TRUE(compose(IndexingMap(), Id).isUndefined());
  EXPECT_TRUE(compose(M, IndexingMap::knownEmpty(Ctx, 1, 0, 0, 1)).isKnownEmpty());
  IndexingMap Small = IndexingMap::identity(Ctx, {10});
  IndexingMap C = compose(M, Small);
  EXPECT_FALSE(C.isKnownEmpty());
  EXPECT_TRUE(C.contains({2, 1}));
  EXPECT_FALSE(C.contains({2, 2}));
}

} // namespace

namespace {
TEST(IndexingMapTest, RemoveUnusedKeepsEmptiness) {
  Context Ctx;
  // (d0) -> (), domain: d0 in [0, 0], d0 - 1 in [0, 0]: empty, and removing
  // d0 must not forget it.
  IndexingMap M(Ctx, {{"", {0, 0}}}, {}, {}, {});
  M.addConstraint(Ctx.dim(0) - 1, {0, 0});
  M.removeUnusedVars();
  EXPECT_TRUE(M.isKnownEmpty());
  // A satisfiable dropped constraint goes with its variable.
  IndexingMap F(Ctx, {{"", {0, 9}}}, {{"", {0, 9}}}, {}, {Ctx.dim(0)});
  F.addConstraint(Ctx.symbol(0) * 2, {4, 4});
  F.removeUnusedVars();
  EXPECT_FALSE(F.isKnownEmpty());
  EXPECT_EQ(F.numRangeVars(), 0u);
  EXPECT_TRUE(F.constraints().empty());
}
} // namespace
