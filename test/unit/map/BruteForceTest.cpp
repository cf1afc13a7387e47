//===- BruteForceTest.cpp - Tests of the brute-force checker and friends --===//
//
// Part of idxmap. The fuzzers are only as good as their checker: these tests
// make sure that it detects wrong simplifications, domain differences,
// compose mismatches, wrong projections and overflow, so that a fuzzer
// cannot pass vacuously. Also checks the random generator and the shrinker.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"
#include "support/Minimize.h"
#include "support/RandomMaps.h"

#include "idxmap/Compose.h"
#include "idxmap/Context.h"
#include "idxmap/IndexingMap.h"

#include <gtest/gtest.h>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

class BruteForceTest : public ::testing::Test {
protected:
  Context Ctx;
  Expr d(unsigned I) { return Ctx.dim(I); }
  Expr s(unsigned I) { return Ctx.symbol(I); }
  static Variable v(int64_t Lo, int64_t Hi) { return {"", {Lo, Hi}}; }
};

TEST_F(BruteForceTest, EvaluatorAgreesWithIntegerSemantics) {
  // floordiv to -inf, ceildiv to +inf, mod = a - floordiv(a, b) * b.
  for (int64_t A = -13; A <= 13; ++A)
    for (int64_t B : {-5, -3, -2, -1, 1, 2, 3, 7}) {
      auto F = evaluateChecked(d(0).floorDiv(d(1)), {A, B}, {});
      auto C = evaluateChecked(d(0).ceilDiv(d(1)), {A, B}, {});
      auto M = evaluateChecked(d(0) % d(1), {A, B}, {});
      ASSERT_TRUE(F && C && M);
      EXPECT_EQ(*M, A - *F * B);
      if (B > 0) {
        EXPECT_GE(*M, 0);
        EXPECT_LT(*M, B);
        EXPECT_LE(*F * B, A);
        EXPECT_GT((*F + 1) * B, A);
        EXPECT_GE(*C * B, A);
        EXPECT_LT((*C - 1) * B, A);
      }
      // The engine's evaluator must agree with the independent one.
      EXPECT_EQ(F, d(0).floorDiv(d(1)).evaluate({A, B}, {}));
      EXPECT_EQ(C, d(0).ceilDiv(d(1)).evaluate({A, B}, {}));
      EXPECT_EQ(M, (d(0) % d(1)).evaluate({A, B}, {}));
    }
  EXPECT_EQ(*evaluateChecked(d(0).floorDiv(-3), {7}, {}), -3);
  EXPECT_EQ(*evaluateChecked(d(0).ceilDiv(-3), {7}, {}), -2);
  EXPECT_EQ(*evaluateChecked(d(0) % -3, {7}, {}), -2);
}

TEST_F(BruteForceTest, EvaluatorReportsOverflowAndDivisionByZero) {
  EXPECT_FALSE(evaluateChecked(d(0) * d(1), {INT64_MAX, 2}, {}));
  EXPECT_FALSE(evaluateChecked(d(0) + 1, {INT64_MAX}, {}));
  EXPECT_FALSE(evaluateChecked(d(0).floorDiv(d(1)), {INT64_MIN, -1}, {}));
  EXPECT_FALSE(evaluateChecked(d(0).floorDiv(d(1)), {5, 0}, {}));
  EXPECT_FALSE(evaluateChecked(d(0) % d(1), {5, 0}, {}));
  EXPECT_EQ(evaluateChecked(d(0) % d(1), {INT64_MIN, -1}, {}), 0);
  EXPECT_FALSE(evaluateChecked(s(2), {}, {1, 2})); // Missing variable.
}

TEST_F(BruteForceTest, EnumeratesDomain) {
  // (d0)[s0] -> (d0 + s0), d0 in [0, 7], s0 in [0, 1], d0 mod 4 in [1, 1].
  IndexingMap M(Ctx, {v(0, 7)}, {v(0, 1)}, {}, {d(0) + s(0)},
                {{d(0) % 4, {1, 1}}});
  CheckStatus St;
  std::vector<Point> Pts = enumerateDomain(M, &St);
  EXPECT_EQ(St, CheckStatus::Ok);
  std::vector<Point> Want = {{1, 0}, {1, 1}, {5, 0}, {5, 1}};
  EXPECT_EQ(Pts, Want);
  EXPECT_TRUE(enumerateDomain(IndexingMap::knownEmpty(Ctx, 1), &St).empty());
  EXPECT_EQ(St, CheckStatus::Ok);
  // A map without variables has exactly one point.
  IndexingMap Unit(Ctx, {}, {}, {}, {Ctx.constant(3)});
  EXPECT_EQ(enumerateDomain(Unit).size(), 1u);
  // Unbounded or huge boxes are refused, not enumerated.
  IndexingMap Huge(Ctx, {v(0, 1 << 20), v(0, 1 << 20)}, {}, {}, {d(0)});
  EXPECT_TRUE(enumerateDomain(Huge, &St).empty());
  EXPECT_EQ(St, CheckStatus::TooLarge);
  IndexingMap Full(Ctx, {{"", Interval::full()}}, {}, {}, {d(0)});
  EXPECT_FALSE(boxSize(Full, 1000).has_value());
  EXPECT_EQ(compareMaps(Full, Full).Status, CheckStatus::TooLarge);
  EXPECT_EQ(*boxSize(M, 1000), 16u);
}

TEST_F(BruteForceTest, AcceptsACorrectSimplification) {
  // d0 mod 8 + (d0 floordiv 8) * 8 == d0 and (d0 * 4 + s0) mod 4 == s0.
  IndexingMap A(Ctx, {v(0, 31)}, {v(0, 3)}, {},
                {d(0) % 8 + d(0).floorDiv(8) * 8, (d(0) * 4 + s(0)) % 4});
  IndexingMap B(Ctx, {v(0, 31)}, {v(0, 3)}, {}, {d(0), s(0)});
  CheckResult R = compareMaps(A, B);
  EXPECT_TRUE(R.ok()) << R.str();
  EXPECT_EQ(R.PointsVisited, 128u);
  EXPECT_EQ(R.DomainPoints, 128u);
  // Tightened bounds that drop no point are fine: the union box is visited.
  IndexingMap C(Ctx, {v(0, 9)}, {}, {}, {d(0)}, {{d(0) * 2, {0, 10}}});
  IndexingMap D(Ctx, {v(0, 5)}, {}, {}, {d(0)});
  EXPECT_TRUE(compareMaps(C, D).ok()) << compareMaps(C, D).str();
}

TEST_F(BruteForceTest, DetectsAWrongSimplification) {
  // A plausible but wrong rewrite: (d0 + 1) floordiv 4 -> d0 floordiv 4.
  IndexingMap A(Ctx, {v(0, 15)}, {}, {}, {(d(0) + 1).floorDiv(4)});
  IndexingMap B(Ctx, {v(0, 15)}, {}, {}, {d(0).floorDiv(4)});
  CheckResult R = compareMaps(A, B);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_EQ(R.FailingPoint, Point{3}); // The first point where they differ.
  EXPECT_NE(R.Message.find("results differ at (d0=3)"), std::string::npos)
      << R.Message;
  // Wrong only at one corner of a 2-D box.
  IndexingMap C(Ctx, {v(0, 7), v(0, 7)}, {}, {}, {d(0) * 8 + d(1)});
  IndexingMap D(Ctx, {v(0, 7), v(0, 7)}, {}, {},
                {d(0) * 8 + d(1) + (d(0) + d(1)).floorDiv(14)});
  R = compareMaps(C, D);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_EQ(R.FailingPoint, (Point{7, 7}));
  // The unsound negative-divisor constraint rule of FORMATS.md:
  // s0 floordiv -3 in [-11, -5] means s0 in [13, 33], not [15, 35].
  IndexingMap E(Ctx, {}, {v(0, 40)}, {}, {s(0)},
                {{s(0).floorDiv(-3), {-11, -5}}});
  IndexingMap Wrong(Ctx, {}, {v(15, 35)}, {}, {s(0)});
  IndexingMap Right(Ctx, {}, {v(13, 33)}, {}, {s(0)});
  EXPECT_TRUE(compareMaps(E, Right).ok());
  R = compareMaps(E, Wrong);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_EQ(R.FailingPoint, Point{13});
}

TEST_F(BruteForceTest, DetectsADomainDifference) {
  // Dropping a constraint that does not always hold.
  IndexingMap A(Ctx, {v(0, 15)}, {}, {}, {d(0)}, {{d(0) % 4, {0, 0}}});
  IndexingMap B(Ctx, {v(0, 15)}, {}, {}, {d(0)});
  CheckResult R = compareMaps(A, B);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_EQ(R.FailingPoint, Point{1});
  EXPECT_NE(R.Message.find("second map's domain only"), std::string::npos);
  // A bound tightened too far.
  IndexingMap C(Ctx, {v(0, 15)}, {}, {}, {d(0)}, {{d(0) * 3, {0, 30}}});
  IndexingMap D(Ctx, {v(0, 9)}, {}, {}, {d(0)});
  R = compareMaps(C, D);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_EQ(R.FailingPoint, Point{10});
  // A non-empty domain declared KNOWN EMPTY, and the converse.
  IndexingMap E = IndexingMap::knownEmpty(Ctx, 1, 0, 0, 1);
  R = compareMaps(B, E);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_EQ(R.FailingPoint, Point{0});
  // d0 mod 8 + 5 in [50, 54] is really empty: KNOWN EMPTY is right.
  IndexingMap F(Ctx, {v(0, 15)}, {}, {}, {d(0)}, {{d(0) % 8 + 5, {50, 54}}});
  EXPECT_TRUE(compareMaps(F, E).ok());
  // Shapes must agree.
  EXPECT_EQ(compareMaps(B, IndexingMap::identity(Ctx, {16, 2})).Status,
            CheckStatus::Invalid);
  EXPECT_EQ(compareMaps(B, IndexingMap()).Status, CheckStatus::Mismatch);
  EXPECT_TRUE(compareMaps(IndexingMap(), IndexingMap()).ok());
}

TEST_F(BruteForceTest, ReportsOverflowInsteadOfWrapping) {
  // Results that overflow at a domain point.
  IndexingMap A(Ctx, {v(0, 3)}, {}, {}, {d(0) * (INT64_MAX / 2)});
  IndexingMap B = A;
  CheckResult R = compareMaps(A, B);
  EXPECT_EQ(R.Status, CheckStatus::EvalError);
  EXPECT_EQ(R.FailingPoint, Point{3});
  // A constraint that overflows where no other constraint excludes the point.
  IndexingMap C(Ctx, {{"", {INT64_MAX - 3, INT64_MAX}}}, {}, {},
                {Ctx.constant(0)}, {{d(0) + 2, {0, INT64_MAX}}});
  R = compareMaps(C, C);
  EXPECT_EQ(R.Status, CheckStatus::EvalError);
  // ... but an overflowing constraint at a point that another constraint
  // excludes is no error, whatever the order of the constraints.
  // MAX = 2^63 - 1 is 3 mod 4: only d0 = MAX - 3 satisfies d0 mod 4 == 0.
  IndexingMap D(Ctx, {{"", {INT64_MAX - 3, INT64_MAX}}}, {}, {},
                {Ctx.constant(0)});
  D.setConstraints({{d(0) + 3, {0, INT64_MAX}}, {d(0) % 4, {0, 0}}});
  R = compareMaps(D, D);
  EXPECT_TRUE(R.ok()) << R.str();
  EXPECT_EQ(R.DomainPoints, 1u);
  D.setConstraints({{d(0) % 4, {0, 0}}, {d(0) + 3, {0, INT64_MAX}}});
  R = compareMaps(D, D);
  EXPECT_TRUE(R.ok()) << R.str();
  // With d0 mod 2 == 1, d0 = MAX passes and d0 + 3 overflows there.
  D.setConstraints({{d(0) + 3, {0, INT64_MAX}}, {d(0) % 2, {1, 1}}});
  R = compareMaps(D, D);
  EXPECT_EQ(R.Status, CheckStatus::EvalError);
}

TEST_F(BruteForceTest, ChecksACorrectComposition) {
  // The example of Compose.h.
  IndexingMap First(Ctx, {v(0, 7)}, {v(0, 3)}, {}, {d(0) * 4 + s(0)});
  IndexingMap Second(Ctx, {v(0, 31)}, {v(0, 1)}, {}, {d(0).floorDiv(2), s(0)});
  IndexingMap C = compose(First, Second);
  CheckResult R = checkCompose(First, Second, C);
  EXPECT_TRUE(R.ok()) << R.str();
  EXPECT_EQ(R.DomainPoints, 64u);
  // Second's bound restricts the domain: only d0 * 4 + s1 <= 20 survives.
  IndexingMap Second2(Ctx, {v(0, 20)}, {v(0, 1)}, {}, {d(0).floorDiv(2), s(0)});
  R = checkCompose(First, Second2, compose(First, Second2));
  EXPECT_TRUE(R.ok()) << R.str();
  EXPECT_EQ(R.DomainPoints, 2u * 21u);
}

TEST_F(BruteForceTest, DetectsACompositionMismatch) {
  IndexingMap First(Ctx, {v(0, 7)}, {v(0, 3)}, {}, {d(0) * 4 + s(0)});
  IndexingMap Second(Ctx, {v(0, 20)}, {v(0, 1)}, {}, {d(0).floorDiv(2), s(0)});
  IndexingMap Good = compose(First, Second);
  ASSERT_TRUE(checkCompose(First, Second, Good).ok());
  // Missing the `first.result in second.dim bound` constraint.
  IndexingMap NoBound(Ctx, {v(0, 7)}, {v(0, 1), v(0, 3)}, {},
                      {(d(0) * 4 + s(1)).floorDiv(2), s(0)});
  CheckResult R = checkCompose(First, Second, NoBound);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_NE(R.Message.find("composition's domain only"), std::string::npos);
  EXPECT_EQ(R.FailingPoint, (Point{5, 0, 1})); // 5 * 4 + 1 = 21 > 20.
  // Symbols in the wrong order ([first.range, second.range]).
  IndexingMap Swapped(Ctx, {v(0, 7)}, {v(0, 3), v(0, 1)}, {},
                      {(d(0) * 4 + s(0)).floorDiv(2), s(1)},
                      {{d(0) * 4 + s(0), {0, 20}}});
  R = checkCompose(First, Second, Swapped);
  EXPECT_FALSE(R.ok()) << R.str();
  // A wrong result value.
  IndexingMap WrongVal(Ctx, {v(0, 7)}, {v(0, 1), v(0, 3)}, {},
                       {(d(0) * 4 + s(1)).floorDiv(4) * 2, s(0)},
                       {{d(0) * 4 + s(1), {0, 20}}});
  R = checkCompose(First, Second, WrongVal);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_NE(R.Message.find("results differ"), std::string::npos);
  // Dropping second's constraint.
  IndexingMap Second3(Ctx, {v(0, 31)}, {v(0, 1)}, {}, {d(0), s(0)},
                      {{d(0) % 3, {0, 0}}});
  IndexingMap Dropped(Ctx, {v(0, 7)}, {v(0, 1), v(0, 3)}, {},
                      {d(0) * 4 + s(1), s(0)});
  EXPECT_TRUE(checkCompose(First, Second3, compose(First, Second3)).ok());
  EXPECT_EQ(checkCompose(First, Second3, Dropped).Status,
            CheckStatus::Mismatch);
  // Undefined operands.
  EXPECT_TRUE(checkCompose(IndexingMap(), Second, IndexingMap()).ok());
  EXPECT_FALSE(checkCompose(IndexingMap(), Second, Good).ok());
}

TEST_F(BruteForceTest, ChecksCompositionWithRuntimeVariables) {
  // first: (d0){rt0} -> (d0 + rt0); second: (d0)[s0]{rt0} -> (d0 * 2 + s0 +
  // rt0).
  IndexingMap First(Ctx, {v(0, 3)}, {}, {v(0, 2)}, {d(0) + s(0)});
  IndexingMap Second(Ctx, {v(0, 4)}, {v(0, 1)}, {v(0, 1)},
                     {d(0) * 2 + s(0) + s(1)});
  IndexingMap C = compose(First, Second);
  CheckResult R = checkCompose(First, Second, C);
  EXPECT_TRUE(R.ok()) << R.str();
  EXPECT_GT(R.DomainPoints, 0u);
  // Runtime symbols swapped: [first.rt, second.rt] instead of the reverse.
  IndexingMap Bad(Ctx, {v(0, 3)}, {v(0, 1)}, {v(0, 2), v(0, 1)},
                  {(d(0) + s(2)) * 2 + s(0) + s(1)}, {{d(0) + s(2), {0, 4}}});
  EXPECT_FALSE(checkCompose(First, Second, Bad).ok());
}

TEST_F(BruteForceTest, ChecksProjections) {
  // (d0, d1)[s0] -> (d0 + s0), d1 unused: removing d1 is a projection.
  IndexingMap M(Ctx, {v(0, 3), v(0, 2)}, {v(0, 1)}, {}, {d(0) + s(0)});
  IndexingMap Red(Ctx, {v(0, 3)}, {v(0, 1)}, {}, {d(0) + s(0)});
  EXPECT_TRUE(checkProjection(M, Red, {false, true, false}).ok());
  // Removing a variable that matters is caught.
  IndexingMap Bad(Ctx, {v(0, 3), v(0, 2)}, {}, {}, {d(0)});
  EXPECT_EQ(checkProjection(M, Bad, {false, false, true}).Status,
            CheckStatus::Mismatch);
  // Dropping an infeasible constraint on a removed variable widens the
  // domain: the projection of an empty domain is empty.
  IndexingMap E(Ctx, {v(0, 3)}, {v(0, 3)}, {}, {d(0)},
                {{s(0) % 8 + 5, {50, 54}}});
  IndexingMap EBad(Ctx, {v(0, 3)}, {}, {}, {d(0)});
  CheckResult R = checkProjection(E, EBad, {false, true});
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_NE(R.Message.find("not the projection"), std::string::npos);
  // Wrong shape of the flags.
  EXPECT_EQ(checkProjection(M, Red, {false, true}).Status,
            CheckStatus::Invalid);
}

TEST_F(BruteForceTest, ComparesRelationsWithExistentialSymbols) {
  // s0 in [0, 3] with s0 mod 2 == 0 is s0 = 2 * t, t in [0, 1].
  IndexingMap A(Ctx, {v(0, 3)}, {v(0, 3)}, {}, {d(0) + s(0) * 2},
                {{s(0) % 2, {0, 0}}});
  IndexingMap Rescaled(Ctx, {v(0, 3)}, {v(0, 1)}, {}, {d(0) + s(0) * 4});
  CheckResult R = compareRelations(A, Rescaled);
  EXPECT_TRUE(R.ok()) << R.str();
  // A wrong rescale (residue lost: s0 = 2 * t + 1) is caught, and the
  // report names the smallest tuple that differs.
  IndexingMap Wrong(Ctx, {v(0, 3)}, {v(0, 1)}, {}, {d(0) + s(0) * 4 + 2});
  R = compareRelations(A, Wrong);
  ASSERT_EQ(R.Status, CheckStatus::Mismatch);
  EXPECT_NE(R.Message.find("(d0=0) -> (0) is in the first relation only"),
            std::string::npos)
      << R.Message;
  // Dropping an unused symbol keeps the relation; point-wise comparison
  // would refuse the shapes.
  IndexingMap WithUnused(Ctx, {v(0, 3)}, {v(0, 5)}, {}, {d(0)});
  IndexingMap Without(Ctx, {v(0, 3)}, {}, {}, {d(0)});
  EXPECT_TRUE(compareRelations(WithUnused, Without).ok());
  EXPECT_EQ(compareMaps(WithUnused, Without).Status, CheckStatus::Invalid);
  // Flat layout: symbols turned into dims compare point by point.
  BruteForceOptions Flat;
  Flat.FlatLayout = true;
  IndexingMap Conv(Ctx, {v(0, 3), v(0, 3)}, {}, {}, {d(0) + d(1) * 2},
                   {{d(1) % 2, {0, 0}}});
  EXPECT_TRUE(compareMaps(A, Conv, Flat).ok());
  IndexingMap ConvBad(Ctx, {v(0, 3), v(0, 3)}, {}, {}, {d(0) * 2 + d(1)},
                      {{d(1) % 2, {0, 0}}});
  EXPECT_EQ(compareMaps(A, ConvBad, Flat).Status, CheckStatus::Mismatch);
  EXPECT_EQ(compareMaps(A, Conv).Status, CheckStatus::Invalid);
}

TEST_F(BruteForceTest, ChecksExpressionBounds) {
  IndexingMap M(Ctx, {v(0, 15)}, {v(0, 3)}, {}, {d(0)});
  Expr E = d(0) % 4 * 2 + s(0) * 2;
  EXPECT_TRUE(checkExprBounds(M, E, {0, 12}, 2).ok());
  EXPECT_EQ(checkExprBounds(M, E, {0, 11}, 2).Status, CheckStatus::Mismatch);
  EXPECT_EQ(checkExprBounds(M, E, {0, 12}, 4).Status, CheckStatus::Mismatch);
}

TEST_F(BruteForceTest, GeneratorIsDeterministicAndSmall) {
  Context C1, C2;
  RandomMapGenerator G1(C1, 7), G2(C2, 7), G3(C1, 8);
  unsigned Different = 0;
  for (unsigned I = 0; I < 300; ++I) {
    IndexingMap A = G1.generate(), B = G2.generate(), D = G3.generate();
    ASSERT_EQ(A.numVars(), B.numVars());
    ASSERT_EQ(A.numResults(), B.numResults());
    ASSERT_EQ(A.constraints().size(), B.constraints().size());
    ASSERT_EQ(A.isKnownEmpty(), B.isKnownEmpty());
    for (unsigned V = 0; V < A.numVars(); ++V)
      ASSERT_EQ(A.var(V).Bound, B.var(V).Bound);
    for (unsigned K = 0; K < A.numResults(); ++K)
      ASSERT_EQ(compareStructurally(A.result(K), B.result(K)), 0);
    Different +=
        !(A.numVars() == D.numVars() && A.numResults() == D.numResults());
    // Small mode: every box is enumerable.
    ASSERT_TRUE(boxSize(A, 1 << 16).has_value());
  }
  EXPECT_GT(Different, 10u); // Another seed gives other maps.
}

TEST_F(BruteForceTest, GeneratorCoversEveryFamily) {
  RandomMapGenerator G(Ctx, 1);
  unsigned Overflowing = 0;
  for (unsigned F = 0; F < unsigned(MapFamily::NumFamilies); ++F) {
    unsigned NonEmpty = 0;
    for (unsigned I = 0; I < 40; ++I) {
      IndexingMap M = G.generate(MapFamily(F));
      EXPECT_FALSE(M.isUndefined());
      CheckStatus St;
      if (!enumerateDomain(M, &St).empty())
        ++NonEmpty;
      // Rule targets sometimes sit at the ends of int64 on purpose; the
      // fuzzers skip inputs that overflow. Nothing else may be refused.
      if (St == CheckStatus::EvalError &&
          MapFamily(F) == MapFamily::RuleTargets)
        ++Overflowing;
      else
        EXPECT_EQ(St, CheckStatus::Ok) << familyName(MapFamily(F));
    }
    EXPECT_GT(NonEmpty, 10u) << familyName(MapFamily(F));
  }
  EXPECT_LT(Overflowing, 8u);
  // Thread maps have the loop emitter's constraint and names.
  IndexingMap T = G.generate(MapFamily::ThreadMap);
  EXPECT_EQ(T.varName(0), "th_x");
  EXPECT_GE(T.constraints().size(), 1u);
}

TEST_F(BruteForceTest, ComposablePairsCompose) {
  RandomMapGenerator G(Ctx, 3);
  unsigned NonEmpty = 0, Overflowing = 0;
  for (unsigned I = 0; I < 200; ++I) {
    auto [A, B] = G.generateComposablePair();
    ASSERT_EQ(A.numResults(), B.numDims());
    IndexingMap C = compose(A, B);
    CheckResult R = checkCompose(A, B, C);
    if (R.Status == CheckStatus::EvalError) { // Inputs at the ends of int64.
      ++Overflowing;
      continue;
    }
    ASSERT_TRUE(R.ok()) << R.str();
    NonEmpty += R.DomainPoints > 0;
  }
  EXPECT_LT(Overflowing, 10u);
  EXPECT_GT(NonEmpty, 100u);
}

TEST_F(BruteForceTest, MinimizerShrinksToTheCulprit) {
  // Fails whenever a result contains a floordiv by a negative constant.
  std::function<bool(Expr)> HasNegDiv = [&](Expr E) {
    if (!E.isBinary())
      return false;
    if (E.kind() == ExprKind::FloorDiv && E.rhs().isConstant() &&
        E.rhs().value() < 0)
      return true;
    return HasNegDiv(E.lhs()) || HasNegDiv(E.rhs());
  };
  auto Fails = [&](const IndexingMap &M) {
    for (Expr E : M.results())
      if (HasNegDiv(E))
        return true;
    return false;
  };
  IndexingMap M(Ctx, {v(0, 15), v(0, 7)}, {v(0, 3)}, {},
                {d(0) * 8 + d(1), ((d(0) + s(0) * 4) % 9).floorDiv(-3) + d(1)},
                {{d(0) + d(1), {0, 20}}, {s(0) % 2, {0, 0}}});
  IndexingMap Min = minimizeMap(M, Fails);
  EXPECT_TRUE(Fails(Min));
  EXPECT_EQ(Min.numResults(), 1u);
  EXPECT_TRUE(Min.constraints().empty());
  EXPECT_TRUE(measureMap(Min) < measureMap(M));
  // The smallest failing form is a negative-divisor floordiv of something.
  EXPECT_EQ(Min.result(0).kind(), ExprKind::FloorDiv);
  EXPECT_LE(Min.numVars(), 1u);
}

} // namespace
