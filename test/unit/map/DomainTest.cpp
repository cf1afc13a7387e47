//===- DomainTest.cpp - checkEmptyFast and boundsOf -----------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"
#include "support/Matchers.h"

#include "idxmap/Context.h"
#include "idxmap/Domain.h"

#include <gtest/gtest.h>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

Emptiness emptiness(const char *Text) {
  Context Ctx;
  return checkEmptyFast(parseOrDie(Ctx, Text));
}

TEST(DomainTest, CheckEmptyFast) {
  EXPECT_EQ(emptiness("(d0) -> (d0), domain: d0 in [0, 99], d0 mod 8 + 5 in "
                      "[50, 54]"),
            Emptiness::Empty);
  EXPECT_EQ(emptiness("(d0) -> (d0), domain: d0 in [0, 99], d0 mod 7 in [3, "
                      "3]"),
            Emptiness::NonEmpty);
  EXPECT_EQ(emptiness("(d0) -> (d0), domain: d0 in [0, 99]"),
            Emptiness::NonEmpty);
  EXPECT_EQ(emptiness("KNOWN EMPTY"), Emptiness::Empty);
  EXPECT_EQ(emptiness("() -> ()"), Emptiness::NonEmpty);
  Context Ctx;
  EXPECT_EQ(checkEmptyFast(IndexingMap()), Emptiness::Unknown);
  // Small boxes are decided exactly by enumeration: d0 = d1 and
  // d0 + d1 = 7 has no integer solution.
  EXPECT_EQ(emptiness("(d0, d1) -> (d0), domain: d0 in [0, 20], d1 in [0, 20], "
                      "d0 - d1 in [0, 0], d0 + d1 in [7, 7]"),
            Emptiness::Empty);
  // Large boxes: a witness is found by sampling...
  EXPECT_EQ(emptiness("(d0, d1) -> (d0), domain: d0 in [0, 100000], d1 in [0, "
                      "100000], d0 + d1 in [1000, 150000]"),
            Emptiness::NonEmpty);
  // Bounds tightening can shrink a large box to an enumerable one.
  EXPECT_EQ(emptiness("(d0, d1) -> (d0), domain: d0 in [0, 100000], d1 in [0, "
                      "100000], d0 - d1 in [0, 0], d0 + d1 in [7, 7]"),
            Emptiness::Empty);
  // Otherwise the answer is honestly Unknown (d0 = d1 makes d0 + d1 even).
  EXPECT_EQ(emptiness("(d0, d1) -> (d0), domain: d0 in [0, 100000], d1 in [0, "
                      "100000], d0 - d1 in [0, 0], (d0 + d1) mod 2 in [1, 1]"),
            Emptiness::Unknown);
}

TEST(DomainTest, CheckEmptyFastAgreesWithEnumeration) {
  const char *Maps[] = {
      "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 * 3 + d1 in "
      "[31, 40]",
      "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], (d0 * 3 + d1) "
      "mod 7 in [6, 6], d0 mod 2 in [1, 1]",
      "(d0)[s0] -> (d0), domain: d0 in [-5, 5], s0 in [-5, 5], d0 floordiv 2 "
      "+ s0 in [9, 9]",
      "(d0)[s0] -> (d0), domain: d0 in [-5, 5], s0 in [-5, 5], d0 floordiv 2 "
      "+ s0 in [8, 8]",
  };
  for (const char *T : Maps) {
    Context Ctx;
    IndexingMap M = parseOrDie(Ctx, T);
    CheckStatus St;
    bool Empty = enumerateDomain(M, &St).empty();
    ASSERT_EQ(St, CheckStatus::Ok);
    EXPECT_EQ(checkEmptyFast(M), Empty ? Emptiness::Empty : Emptiness::NonEmpty)
        << T;
  }
}

TEST(DomainTest, BoundsOf) {
  Context Ctx;
  IndexingMap M = parseOrDie(Ctx, "(d0)[s0] -> (d0), domain: d0 in [0, 15], "
                                  "s0 in [0, 3]");
  EXPECT_EQ(boundsOf(parseExprOrDie("d0 mod 4 + s0", M), M), (Interval{0, 6}));
  EXPECT_EQ(boundsOf(parseExprOrDie("d0 - (d0 floordiv 4) * 4", M), M),
            (Interval{0, 3}));
  EXPECT_EQ(boundsOf(parseExprOrDie("(d0 * 4 + s0) floordiv 4", M), M),
            (Interval{0, 15}));
  // Constraints are used (after simplification tightens the domain).
  IndexingMap C = parseOrDie(Ctx, "(d0)[s0] -> (d0), domain: d0 in [0, 99], "
                                  "s0 in [0, 3], d0 * 4 + s0 in [0, 31]");
  EXPECT_EQ(boundsOf(parseExprOrDie("d0", C), C), (Interval{0, 7}));
  EXPECT_TRUE(boundsOf(Ctx.dim(0), IndexingMap::knownEmpty(Ctx, 1)).isEmpty());
  EXPECT_TRUE(boundsOf(Ctx.dim(0), IndexingMap()).isFull());
}

} // namespace
