//===- ExactTest.cpp - Tests of the exact (isl) queries -------------------===//
//
// Part of idxmap. Unit tests of idxmap/Exact.h: cases that interval
// reasoning cannot decide, the semantics of divisions of either sign, the
// runtime-variable conventions, witnesses, and the budget and time limits.
//
//===----------------------------------------------------------------------===//

#include "idxmap/Exact.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "support/CpuTime.h"
#include "support/Matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>


using namespace idxmap;
using idxmap::testing::MatchesMap;
using idxmap::testing::parseExprOrDie;
using idxmap::testing::parseOrDie;

namespace {

class ExactTest : public ::testing::Test {
protected:
  IndexingMap map(std::string_view Text) { return parseOrDie(Ctx, Text); }

  /// boundsExact of \p ExprText over \p M.
  std::optional<Interval> bounds(const IndexingMap &M, std::string_view Expr,
                                 const ExactOptions &O = {}) {
    return boundsExact(parseExprOrDie(Expr, M), M, O);
  }

  Context Ctx;
  std::string Why;
  ExactOptions withWhy() {
    ExactOptions O;
    O.Explanation = &Why;
    return O;
  }
};

bool contains(const std::string &S, const std::string &Part) {
  return S.find(Part) != std::string::npos;
}

//===----------------------------------------------------------------------===//
// Emptiness
//===----------------------------------------------------------------------===//

TEST_F(ExactTest, EmptyByTwoModuli) {
  // 0 mod 7 and 0 mod 11 means a multiple of 77, and there is none in
  // [1, 50]; each constraint alone is satisfiable.
  IndexingMap M = map("(d0) -> (d0), domain: d0 in [1, 50], "
                      "d0 mod 7 in [0, 0], d0 mod 11 in [0, 0]");
  EXPECT_EQ(isEmptyExact(M), Emptiness::Empty);
  IndexingMap Wider = map("(d0) -> (d0), domain: d0 in [1, 80], "
                          "d0 mod 7 in [0, 0], d0 mod 11 in [0, 0]");
  EXPECT_EQ(isEmptyExact(Wider), Emptiness::NonEmpty);
  EXPECT_EQ(boundsExact(Ctx.dim(0), Wider), Interval(77, 77));
}

TEST_F(ExactTest, EmptyShiftedMod) {
  EXPECT_EQ(isEmptyExact(map("(d0) -> (d0), domain: d0 in [0, 100], "
                             "d0 mod 8 + 5 in [50, 54]")),
            Emptiness::Empty);
  EXPECT_EQ(isEmptyExact(map("(d0) -> (d0), domain: d0 in [0, 100], "
                             "d0 mod 8 + 5 in [12, 54]")),
            Emptiness::NonEmpty);
}

TEST_F(ExactTest, EmptyByCorrelatedConstraints) {
  // Each constraint alone leaves points; together they need d0 + d1 >= 15
  // and d0 - d1 >= 12 with d1 >= 2, i.e. d0 >= 14, beyond d0's bound.
  IndexingMap M = map("(d0, d1) -> (d0), domain: d0 in [0, 13], d1 in [2, 9], "
                      "d0 + d1 in [15, 100], d0 - d1 in [12, 100]");
  EXPECT_EQ(isEmptyExact(M), Emptiness::Empty);
}

TEST_F(ExactTest, EmptyWithFloorDivAndRuntimeVariables) {
  IndexingMap M = map("(d0){rt0} -> (d0), domain: d0 in [0, 63], "
                      "rt0 in [0, 3], d0 floordiv 16 - rt0 in [4, 10]");
  EXPECT_EQ(isEmptyExact(M), Emptiness::Empty);
  IndexingMap N = map("(d0){rt0} -> (d0), domain: d0 in [0, 63], "
                      "rt0 in [0, 3], d0 floordiv 16 - rt0 in [3, 10]");
  EXPECT_EQ(isEmptyExact(N), Emptiness::NonEmpty);
}

TEST_F(ExactTest, SpecialStates) {
  ExactOptions O = withWhy();
  EXPECT_EQ(isEmptyExact(IndexingMap::undefined(), O), Emptiness::Unknown);
  EXPECT_TRUE(contains(Why, "UNDEFINED"));
  IndexingMap E = IndexingMap::knownEmpty(Ctx, 1, 0, 0, 1);
  EXPECT_EQ(isEmptyExact(E), Emptiness::Empty);
  std::optional<Interval> B = boundsExact(Ctx.dim(0), E);
  ASSERT_TRUE(B);
  EXPECT_TRUE(B->isEmpty());
  EXPECT_EQ(isInjective(E), Answer::Yes);
  EXPECT_EQ(emptinessName(Emptiness::NonEmpty), std::string("non-empty"));
  EXPECT_EQ(answerName(Answer::Unknown), std::string("unknown"));
}

TEST_F(ExactTest, NonAffineIsUnknownWithReason) {
  ExactOptions O = withWhy();
  IndexingMap M = map("(d0, d1) -> (d0 * d1), domain: d0 in [0, 7], "
                      "d1 in [0, 3], d0 * d1 in [100, 200]");
  EXPECT_EQ(isEmptyExact(M, O), Emptiness::Unknown);
  EXPECT_TRUE(contains(Why, "product of two non-constant")) << Why;
  EXPECT_TRUE(contains(Why, "d0 * d1")) << Why;

  IndexingMap Div = map("(d0, d1) -> (d0 floordiv d1), domain: d0 in [0, 7], "
                        "d1 in [1, 3]");
  EXPECT_FALSE(boundsExact(Div.result(0), Div, O));
  EXPECT_TRUE(contains(Why, "symbolic divisor")) << Why;
  EXPECT_EQ(isInjective(Div, O), Answer::Unknown);
  // The domain itself is affine, so emptiness is still decided.
  EXPECT_EQ(isEmptyExact(Div, O), Emptiness::NonEmpty);

  Expected<std::string> S = toIslString(M);
  ASSERT_FALSE(S);
  EXPECT_TRUE(contains(S.error().Message, "cannot represent exactly"));
}

TEST_F(ExactTest, IslStringOfAMap) {
  Expected<std::string> S =
      toIslString(map("(d0)[s0] -> (d0 floordiv 4), domain: d0 in [0, 15], "
                      "s0 in [0, 3]"));
  ASSERT_TRUE(S) << S.error().str();
  EXPECT_TRUE(contains(*S, "[d0, s0] -> [o0")) << *S;
  EXPECT_TRUE(contains(*S, "0 <= d0 <= 15")) << *S;
}

//===----------------------------------------------------------------------===//
// Bounds
//===----------------------------------------------------------------------===//

TEST_F(ExactTest, BoundsUseEveryConstraint) {
  IndexingMap M = map("(d0) -> (d0), domain: d0 in [0, 100], "
                      "d0 mod 8 in [3, 3]");
  EXPECT_EQ(bounds(M, "d0"), Interval(3, 99));
  EXPECT_EQ(bounds(M, "d0 floordiv 8"), Interval(0, 12));
  EXPECT_EQ(bounds(M, "d0 mod 4"), Interval(3, 3));

  // Intervals give [0, 63]; the sum constraint cuts it to [0, 16].
  IndexingMap N = map("(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 15], "
                      "s0 in [0, 3], d0 + s0 in [0, 4]");
  EXPECT_EQ(bounds(N, "d0 * 4 + s0"), Interval(0, 16));
  EXPECT_EQ(bounds(N, "d0 * -4 + s0"), Interval(-16, 3));
}

TEST_F(ExactTest, BoundsOfEmptyDomainAreEmpty) {
  IndexingMap M = map("(d0) -> (d0), domain: d0 in [0, 100], "
                      "d0 mod 8 + 5 in [50, 54]");
  std::optional<Interval> B = bounds(M, "d0");
  ASSERT_TRUE(B);
  EXPECT_TRUE(B->isEmpty());
}

TEST_F(ExactTest, BoundsClampAtInt64) {
  IndexingMap M = map("(d0) -> (d0)");
  EXPECT_EQ(bounds(M, "d0"), Interval::full());
  EXPECT_EQ(bounds(M, "d0 * 2 + 1"), Interval::full());
  EXPECT_EQ(bounds(M, "d0 mod 5"), Interval(0, 4));
}

// Every division kind and divisor sign, checked against int64 semantics at
// each point of [-13, 13] (one point per query, so the exact bound is the
// value itself).
TEST_F(ExactTest, DivisionSemanticsMatchEvaluation) {
  for (int64_t V = -13; V <= 13; ++V) {
    IndexingMap M(Ctx, {{"", {V, V}}}, {}, {}, {Ctx.dim(0)});
    for (int64_t D : {-5, -3, -2, -1, 1, 2, 3, 7}) {
      for (Expr E : {Ctx.dim(0).floorDiv(D), Ctx.dim(0).ceilDiv(D),
                     Ctx.dim(0) % D, (Ctx.dim(0) * 3 + 1).floorDiv(D) % 4}) {
        std::optional<int64_t> Want = E.evaluate({V}, {});
        ASSERT_TRUE(Want);
        std::optional<Interval> Got = boundsExact(E, M);
        ASSERT_TRUE(Got) << printExpr(E);
        EXPECT_EQ(*Got, Interval::point(*Want))
            << printExpr(E) << " at d0 = " << V;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Refinement (gist and projection)
//===----------------------------------------------------------------------===//

TEST_F(ExactTest, RefineTightensBoundsAndDropsImpliedConstraints) {
  IndexingMap M = map("(d0) -> (d0), domain: d0 in [0, 100], "
                      "d0 mod 8 in [3, 3], d0 floordiv 8 in [0, 20]");
  EXPECT_TRUE(refineExact(M));
  EXPECT_THAT(M, MatchesMap("(d0) -> (d0), domain: d0 in [3, 99], "
                            "d0 mod 8 in [3, 3]"));
  EXPECT_FALSE(refineExact(M)); // already refined
}

TEST_F(ExactTest, RefineKeepsOneOfTwoEquivalentConstraints) {
  // Each constraint implies the other: exactly one must stay.
  IndexingMap M = map("(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], "
                      "d0 + d1 in [0, 9], (d0 + d1) * 2 in [0, 19]");
  EXPECT_TRUE(refineExact(M));
  EXPECT_EQ(M.constraints().size(), 1u);
  IndexingMap Orig = map("(d0, d1) -> (d0), domain: d0 in [0, 9], "
                         "d1 in [0, 9], d0 + d1 in [0, 9]");
  EXPECT_EQ(arePointwiseEqual(M, Orig), Answer::Yes);
}

TEST_F(ExactTest, RefineDetectsEmptiness) {
  IndexingMap M = map("(d0) -> (d0), domain: d0 in [1, 50], "
                      "d0 mod 7 in [0, 0], d0 mod 11 in [0, 0]");
  EXPECT_TRUE(refineExact(M));
  EXPECT_TRUE(M.isKnownEmpty());
}

TEST_F(ExactTest, RefineLeavesNonAffineConstraintsAlone) {
  IndexingMap M = map("(d0, d1) -> (d0), domain: d0 in [0, 7], d1 in [1, 3], "
                      "d0 floordiv d1 in [0, 1]");
  IndexingMap Before = M;
  EXPECT_FALSE(refineExact(M));
  EXPECT_EQ(M, Before);
}

TEST_F(ExactTest, RefineUsesTheConstraintsItCanRepresent) {
  // The product cannot be represented; the mod constraint still tightens d0,
  // and the explanation says what was left out.
  ExactOptions O = withWhy();
  IndexingMap M = map("(d0, d1) -> (d0), domain: d0 in [0, 100], "
                      "d1 in [1, 3], d0 mod 8 in [3, 3], d0 * d1 in [0, 250]");
  EXPECT_TRUE(refineExact(M, O));
  EXPECT_EQ(M.dims()[0].Bound, Interval(3, 99));
  EXPECT_EQ(M.constraints().size(), 2u);
  EXPECT_TRUE(contains(Why, "d0 * d1")) << Why;
}

TEST_F(ExactTest, SimplifyExactTightensToPoints) {
  IndexingMap M = map("(d0, d1) -> (d0 + d1), domain: d0 in [0, 10], "
                      "d1 in [0, 10], d0 + d1 in [20, 30]");
  simplifyExact(M);
  EXPECT_EQ(M.dims()[0].Bound, Interval(10, 10));
  EXPECT_EQ(M.dims()[1].Bound, Interval(10, 10));
  EXPECT_TRUE(M.constraints().empty()) << printMap(M);
  EXPECT_EQ(isEmptyExact(M), Emptiness::NonEmpty);
}

TEST_F(ExactTest, SimplifyExactFindsEmptyDomain) {
  IndexingMap M = map("(d0, d1) -> (d0), domain: d0 in [0, 13], d1 in [2, 9], "
                      "d0 + d1 in [15, 100], d0 - d1 in [12, 100]");
  EXPECT_TRUE(simplifyExact(M));
  EXPECT_TRUE(M.isKnownEmpty());
}

//===----------------------------------------------------------------------===//
// Injectivity, bijectivity, equality
//===----------------------------------------------------------------------===//

TEST_F(ExactTest, Injectivity) {
  ExactOptions O = withWhy();
  EXPECT_EQ(isInjective(map("(d0)[s0] -> (d0 * 4 + s0), domain: "
                            "d0 in [0, 7], s0 in [0, 3]"),
                        O),
            Answer::Yes);
  IndexingMap Bad = map("(d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, 7], "
                        "s0 in [0, 3]");
  EXPECT_EQ(isInjective(Bad, O), Answer::No);
  EXPECT_TRUE(contains(Why, "both map to")) << Why;
  // A delinearization is injective; dropping the high part is not.
  EXPECT_EQ(isInjective(map("(d0) -> (d0 floordiv 6, d0 mod 6), domain: "
                            "d0 in [0, 35]")),
            Answer::Yes);
  EXPECT_EQ(isInjective(map("(d0) -> (d0 mod 6), domain: d0 in [0, 35]")),
            Answer::No);
  // Only the residue class 3 mod 8 is in the domain: floordiv 8 separates.
  EXPECT_EQ(isInjective(map("(d0) -> (d0 floordiv 8), domain: "
                            "d0 in [0, 100], d0 mod 8 in [3, 3]")),
            Answer::Yes);
}

TEST_F(ExactTest, InjectivityIsPerRuntimeValue) {
  // For a fixed rt0, d0 -> d0 + rt0 is one to one; two points with different
  // runtime values do not count as a collision.
  EXPECT_EQ(isInjective(map("(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 7], "
                            "rt0 in [0, 10]")),
            Answer::Yes);
  EXPECT_EQ(isInjective(map("(d0){rt0} -> ((d0 + rt0) floordiv 2), domain: "
                            "d0 in [0, 7], rt0 in [0, 10]")),
            Answer::No);
}

TEST_F(ExactTest, TiledThreadMapIsABijection) {
  ExactOptions O = withWhy();
  IndexingMap M = map(
      "(th_x, bl_x)[vec] -> ((bl_x * 128 + th_x * 4 + vec) floordiv 128, "
      "(th_x * 4 + vec) mod 128), domain: th_x in [0, 31], bl_x in [0, 63], "
      "vec in [0, 3]");
  EXPECT_EQ(isBijectiveOnto(M, {64, 128}, O), Answer::Yes) << Why;
  EXPECT_EQ(isBijectiveOnto(M, {64, 256}, O), Answer::No);
  EXPECT_TRUE(contains(Why, "is never touched")) << Why;
  EXPECT_EQ(isBijectiveOnto(M, {32, 128}, O), Answer::No);
  EXPECT_TRUE(contains(Why, "outside the box")) << Why;
  EXPECT_EQ(isBijectiveOnto(M, {64}, O), Answer::Unknown);
  EXPECT_TRUE(contains(Why, "sizes")) << Why;
}

TEST_F(ExactTest, LinearizedThreadMapWithTail) {
  // 3 x 100 elements, blocks of 128 threads; the tail is masked off by a
  // constraint, so the map is still one to one onto the shape.
  IndexingMap M = map(
      "(th_x, bl_x) -> ((bl_x * 128 + th_x) floordiv 100, "
      "(bl_x * 128 + th_x) mod 100), domain: th_x in [0, 127], "
      "bl_x in [0, 2], bl_x * 128 + th_x in [0, 299]");
  EXPECT_EQ(isBijectiveOnto(M, {3, 100}), Answer::Yes);
  // Without the mask, threads run past the end.
  IndexingMap Unmasked = map(
      "(th_x, bl_x) -> ((bl_x * 128 + th_x) floordiv 100, "
      "(bl_x * 128 + th_x) mod 100), domain: th_x in [0, 127], "
      "bl_x in [0, 2]");
  EXPECT_EQ(isBijectiveOnto(Unmasked, {3, 100}), Answer::No);
}

TEST_F(ExactTest, CoveringTwiceIsNotABijection) {
  ExactOptions O = withWhy();
  IndexingMap M = map("(d0)[s0] -> ((d0 * 4 + s0) mod 8), domain: "
                      "d0 in [0, 3], s0 in [0, 3]");
  EXPECT_EQ(isBijectiveOnto(M, {8}, O), Answer::No);
  EXPECT_TRUE(contains(Why, "both touch element")) << Why;
}

TEST_F(ExactTest, BijectionForEveryRuntimeValue) {
  // A rotation by rt0 is a bijection for each rt0.
  EXPECT_EQ(isBijectiveOnto(map("(d0){rt0} -> ((d0 + rt0) mod 8), domain: "
                                "d0 in [0, 7], rt0 in [0, 100]"),
                            {8}),
            Answer::Yes);
  // Without the mod, it leaves the box for rt0 > 0.
  EXPECT_EQ(isBijectiveOnto(map("(d0){rt0} -> (d0 + rt0), domain: "
                                "d0 in [0, 7], rt0 in [0, 100]"),
                            {8}),
            Answer::No);
  // Only even rt0 are meant (a runtime-only constraint); then d0 + rt0 mod 2
  // stays a bijection of the two parities.
  EXPECT_EQ(isBijectiveOnto(map("(d0){rt0} -> ((d0 + rt0) mod 2), domain: "
                                "d0 in [0, 1], rt0 in [0, 9], "
                                "rt0 mod 2 in [0, 0]"),
                            {2}),
            Answer::Yes);
}

TEST_F(ExactTest, EqualityAsRelations) {
  ExactOptions O = withWhy();
  IndexingMap A = map("(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 7], "
                      "s0 in [0, 3]");
  IndexingMap B = map("(d0)[s0] -> (d0 * 4 - s0 + 3), domain: d0 in [0, 7], "
                      "s0 in [0, 3]");
  EXPECT_EQ(areEqual(A, B, O), Answer::Yes) << Why;
  EXPECT_EQ(arePointwiseEqual(A, B, O), Answer::No);
  EXPECT_TRUE(contains(Why, "the results differ")) << Why;
  // Different numbers of range variables, same relation.
  IndexingMap C = map("(d0)[s0, s1] -> (d0 * 4 + s0 * 2 + s1), domain: "
                      "d0 in [0, 7], s0 in [0, 1], s1 in [0, 1]");
  EXPECT_EQ(areEqual(A, C), Answer::Yes);
  EXPECT_EQ(arePointwiseEqual(A, C, O), Answer::No);
  IndexingMap D = map("(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 7], "
                      "s0 in [0, 2]");
  EXPECT_EQ(areEqual(A, D, O), Answer::No);
  EXPECT_TRUE(contains(Why, "(d0=")) << Why;
}

TEST_F(ExactTest, PointwiseEquality) {
  EXPECT_EQ(arePointwiseEqual(map("(d0) -> (d0 mod 8), domain: d0 in [0, 7]"),
                              map("(d0) -> (d0), domain: d0 in [0, 7]")),
            Answer::Yes);
  EXPECT_EQ(arePointwiseEqual(map("(d0) -> (d0), domain: d0 in [0, 7]"),
                              map("(d0) -> (d0), domain: d0 in [0, 8]")),
            Answer::No);
  // Recombination of a delinearization, with a negative divisor.
  EXPECT_EQ(arePointwiseEqual(
                map("(d0) -> (d0 floordiv -4 * -4 + d0 mod -4), domain: "
                    "d0 in [-20, 20]"),
                map("(d0) -> (d0), domain: d0 in [-20, 20]")),
            Answer::Yes);
  // Two empty domains are the same (empty) relation.
  EXPECT_EQ(arePointwiseEqual(map("(d0) -> (d0), domain: d0 in [0, 7], "
                                  "d0 mod 8 in [9, 9]"),
                              IndexingMap::knownEmpty(Ctx, 1, 0, 0, 1)),
            Answer::Yes);
  EXPECT_EQ(arePointwiseEqual(map("(d0) -> (d0), domain: d0 in [0, 7]"),
                              map("(d0, d1) -> (d0), domain: d0 in [0, 7], "
                                  "d1 in [0, 0]")),
            Answer::No);
}

TEST_F(ExactTest, KnownEmptyEqualsExactlyTheEmptyMaps) {
  // Text `KNOWN EMPTY` has no variables or results: shapes do not matter.
  IndexingMap KnownEmpty = map("KNOWN EMPTY");
  IndexingMap EmptyDomain = map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 9], "
                                "s0 in [0, 3], d0 * 2 + s0 * 4 in [7, 7]");
  IndexingMap NonEmpty = map("(d0) -> (d0), domain: d0 in [0, 9]");
  EXPECT_EQ(areEqual(KnownEmpty, EmptyDomain), Answer::Yes);
  EXPECT_EQ(arePointwiseEqual(EmptyDomain, KnownEmpty), Answer::Yes);
  EXPECT_EQ(areEqual(NonEmpty, KnownEmpty), Answer::No);
  EXPECT_EQ(areEqual(IndexingMap::undefined(), NonEmpty), Answer::Unknown);
}

TEST_F(ExactTest, NestedDivisionsAreOneQuotient) {
  // A mixed-radix chain: (x floordiv 8) floordiv 4 == x floordiv 32 and
  // (x floordiv 8) mod 4 * 8 + x mod 8 == x mod 32, whatever the spelling.
  IndexingMap A = map("(d0, d1) -> ((d0 * 16 + d1) floordiv 8 floordiv 4, "
                      "((d0 * 16 + d1) floordiv 8) mod 4 * 8 + d1 mod 8), "
                      "domain: d0 in [0, 63], d1 in [0, 15]");
  IndexingMap B = map("(d0, d1) -> (d0 floordiv 2, (d0 * 16 + d1) mod 32), "
                      "domain: d0 in [0, 63], d1 in [0, 15]");
  EXPECT_EQ(arePointwiseEqual(A, B), Answer::Yes);
  EXPECT_EQ(isBijectiveOnto(A, {32, 32}), Answer::Yes);
}

//===----------------------------------------------------------------------===//
// Budget and time limit
//===----------------------------------------------------------------------===//

// 8 variables up to 10^12, 12 mod constraints with large prime moduli and
// coefficients: unbudgeted, isl does not decide this one within 100 s.
constexpr const char *Pathological =
    "(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0), domain: "
    "d0 in [0, 1000000000000], d1 in [0, 1000000000000], "
    "d2 in [0, 1000000000000], d3 in [0, 1000000000000], "
    "d4 in [0, 1000000000000], d5 in [0, 1000000000000], "
    "d6 in [0, 1000000000000], d7 in [0, 1000000000000], "
    "(d5 * 134845481 + d4 * 741511915 + d6 * 922661068) mod 3141593 "
    "in [2747128, 2747128], "
    "(d0 * 421413640 + d3 * 427524008 + d5 * 428500257) mod 7919 "
    "in [3944, 3944], "
    "(d6 * 224257762 + d0 * 473219500 + d1 * 174371721) mod 999983 "
    "in [629908, 629908], "
    "(d0 * 162519487 + d7 * 576289932 + d6 * 109046535) mod 2147483647 "
    "in [1317990736, 1317990736], "
    "(d0 * 404073202 + d7 * 159604871 + d1 * 681292097) mod 2147483647 "
    "in [746013368, 746013368], "
    "(d5 * 911639081 + d3 * 524159081 + d0 * 500452373) mod 999983 "
    "in [327000, 327000], "
    "(d1 * 368002431 + d7 * 795046073 + d0 * 284380550) mod 998244353 "
    "in [743090301, 743090301], "
    "(d2 * 567312062 + d4 * 388528749 + d0 * 157513274) mod 15485863 "
    "in [15336821, 15336821], "
    "(d0 * 690426952 + d6 * 927088196 + d4 * 97821832) mod 1299709 "
    "in [769025, 769025], "
    "(d2 * 581603267 + d7 * 836603816 + d1 * 539866818) mod 7919 "
    "in [1827, 1827], "
    "(d3 * 794532601 + d6 * 862664799 + d1 * 243559673) mod 999999937 "
    "in [529120474, 529120474], "
    "(d5 * 848478593 + d7 * 300123374 + d0 * 507163907) mod 1000003 "
    "in [726161, 726161]";

double cpuSeconds() { return test::threadCpuMs() * 1e-3; }

double secondsSince(double T0) { return cpuSeconds() - T0; }

TEST_F(ExactTest, PathologicalInputIsUnknownWithinOneSecond) {
  IndexingMap M = map(Pathological);
  ExactOptions O = withWhy(); // the defaults
  double T0 = cpuSeconds();
  EXPECT_EQ(isEmptyExact(M, O), Emptiness::Unknown);
  EXPECT_LT(secondsSince(T0), 1.0);
  EXPECT_TRUE(contains(Why, "budget") || contains(Why, "time limit")) << Why;

  T0 = cpuSeconds();
  EXPECT_FALSE(boundsExact(M.result(0), M, O));
  EXPECT_LT(secondsSince(T0), 1.0);

  T0 = cpuSeconds();
  IndexingMap R = M;
  refineExact(R, O); // may tighten a little; must stay sound and bounded
  EXPECT_LT(secondsSince(T0), 1.0);
  EXPECT_FALSE(R.isKnownEmpty());
}

TEST_F(ExactTest, BudgetExhaustionIsUnknown) {
  ExactOptions O = withWhy();
  O.TimeLimitMs = 0; // the operation budget alone
  O.MaxOperations = 1000;
  double T0 = cpuSeconds();
  EXPECT_EQ(isEmptyExact(map(Pathological), O), Emptiness::Unknown);
  EXPECT_LT(secondsSince(T0), 1.0);
  EXPECT_TRUE(contains(Why, "budget exhausted (1000 operations)")) << Why;

  // A budget of one pivot cannot decide the two-moduli case...
  IndexingMap M = map("(d0) -> (d0), domain: d0 in [1, 50], "
                      "d0 mod 7 in [0, 0], d0 mod 11 in [0, 0]");
  O.MaxOperations = 1;
  EXPECT_EQ(isEmptyExact(M, O), Emptiness::Unknown);
  EXPECT_EQ(isInjective(M, O), Answer::Unknown);
  IndexingMap R = M;
  EXPECT_FALSE(refineExact(R, O));
  EXPECT_EQ(R, M);
  // ...while an unlimited one can.
  O.MaxOperations = 0;
  EXPECT_EQ(isEmptyExact(M, O), Emptiness::Empty);
}

TEST_F(ExactTest, TimeLimitIsUnknown) {
  ExactOptions O = withWhy();
  O.MaxOperations = 0; // the time limit alone
  O.TimeLimitMs = 50;
  double T0 = cpuSeconds();
  EXPECT_EQ(isEmptyExact(map(Pathological), O), Emptiness::Unknown);
  EXPECT_LT(secondsSince(T0), 1.0);
  EXPECT_TRUE(contains(Why, "time limit exceeded (50 ms of CPU time)")) << Why;
}

} // namespace
