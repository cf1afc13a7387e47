//===- fuzz_int64_extremes.cpp - Seeded fuzzer: int64 limits everywhere ---===//
//
// Part of idxmap. Maps whose constraints have coefficients, divisors,
// constants and interval ends at or near the int64 limits (2^62, 2^63 - 1,
// INT64_MIN, 2^31, ...), over small boxes that may sit at either end of
// int64, so that the domain can be enumerated. The oracle is evaluation
// (IndexingMap::contains: a point whose constraint overflows is outside the
// domain) at every point of the box. Checks (issue 14: overflow must make a
// fact unknown, never true):
//   - simplify(M) keeps exactly the domain points of M;
//   - checkEmptyFast(M) is never wrong (Empty or NonEmpty);
//   - isEmptyExact(M) (exact integers) is never Empty when a point evaluates
//     into the domain, and when every constraint evaluates at every point
//     of the box (the two semantics agree) it equals the enumeration;
//   - boundsOf(d0) contains d0 at every domain point.
//
// Usage: fuzz_int64_extremes [--seed N] [--count N] [--only I] [--verbose]
// Exit status: 0 if every check passed, 1 on a failure, 2 on a usage error.
//
//===----------------------------------------------------------------------===//
#include "support/FuzzDriver.h"

#include "idxmap/Context.h"
#include "idxmap/Domain.h"
#include "idxmap/Exact.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

constexpr int64_t Min = std::numeric_limits<int64_t>::min();
constexpr int64_t Max = std::numeric_limits<int64_t>::max();

struct Gen {
  std::mt19937_64 R;
  explicit Gen(uint64_t Seed) : R(Seed) {}

  uint64_t below(uint64_t N) { return R() % N; }

  /// A value at or near an int64 limit or a power of two, or a small one.
  int64_t extreme() {
    static const int64_t Pool[] = {Min,
                                   Min + 1,
                                   Max,
                                   Max - 1,
                                   int64_t(1) << 62,
                                   -(int64_t(1) << 62),
                                   (int64_t(1) << 62) + 1,
                                   int64_t(1) << 31,
                                   -(int64_t(1) << 31),
                                   (int64_t(1) << 32) + 1,
                                   Max / 3,
                                   Min / 3};
    if (below(3) == 0)
      return int64_t(below(9)) - 4;
    return Pool[below(sizeof(Pool) / sizeof(Pool[0]))];
  }

  /// A box of at most 8 values, at an end of int64 or around 0.
  Interval box() {
    int64_t W = int64_t(below(8));
    switch (below(3)) {
    case 0:
      return {Min, Min + W};
    case 1:
      return {Max - W, Max};
    default: {
      int64_t Lo = int64_t(below(9)) - 4;
      return {Lo, Lo + W};
    }
    }
  }

  Expr term(Expr Var) {
    Expr E = Var * extreme();
    switch (below(5)) {
    case 0: {
      int64_t D = extreme();
      return D ? E.floorDiv(D) : E;
    }
    case 1: {
      int64_t D = extreme();
      return D ? E.ceilDiv(D) : E;
    }
    case 2: {
      int64_t D = extreme();
      return D ? E % D : E;
    }
    default:
      return E;
    }
  }

  IndexingMap map(Context &Ctx) {
    unsigned NumDims = 1 + unsigned(below(2));
    std::vector<Variable> Dims(NumDims);
    for (Variable &V : Dims)
      V.Bound = box();
    std::vector<Expr> Results;
    for (unsigned I = 0; I < NumDims; ++I)
      Results.push_back(Ctx.dim(I));
    IndexingMap M(Ctx, Dims, {}, {}, Results);
    unsigned NumCons = 1 + unsigned(below(3));
    for (unsigned C = 0; C < NumCons; ++C) {
      Expr E = term(Ctx.dim(unsigned(below(NumDims))));
      if (below(2))
        E = E + term(Ctx.dim(unsigned(below(NumDims))));
      if (below(2))
        E = E + extreme();
      int64_t A = extreme(), B = extreme();
      if (A > B)
        std::swap(A, B);
      if (below(3) == 0)
        B = Max;
      if (below(4) == 0)
        A = Min;
      if (below(4) == 0) // holds wherever E evaluates
        A = Min, B = Max;
      M.addConstraint(E, {A, B});
    }
    return M;
  }
};

/// Every point of the box of \p M (at most 64).
std::vector<std::vector<int64_t>> boxPoints(const IndexingMap &M) {
  std::vector<std::vector<int64_t>> Out{{}};
  for (unsigned V = 0; V < M.numVars(); ++V) {
    std::vector<std::vector<int64_t>> Next;
    Interval B = M.var(V).Bound;
    for (const auto &P : Out)
      for (__int128 X = B.Lo; X <= B.Hi; ++X) {
        Next.push_back(P);
        Next.back().push_back(int64_t(X));
      }
    Out = std::move(Next);
  }
  return Out;
}

/// True if every constraint of \p M evaluates at every point of \p Points.
bool evaluatesEverywhere(const IndexingMap &M,
                         const std::vector<std::vector<int64_t>> &Points) {
  for (const auto &P : Points) {
    std::vector<int64_t> D(P.begin(), P.begin() + M.numDims());
    for (const Constraint &C : M.constraints())
      if (!C.E.evaluate(D, {}))
        return false;
  }
  return true;
}

} // namespace

int main(int Argc, char **Argv) {
  FuzzRunOptions O;
  O.Count = 20000;
  if (!parseFuzzArgs(Argc, Argv, O))
    return 2;
  installCrashReporter("fuzz_int64_extremes");
  unsigned Failures = 0;
  uint64_t Decided = 0, Empty = 0;
  for (uint64_t I = 0; I < O.Count && Failures < O.MaxFailures; ++I) {
    if (O.Only && I != *O.Only)
      continue;
    Gen G(O.Seed * 1000003 + I);
    Context Ctx;
    IndexingMap M = G.map(Ctx);
    if (M.isKnownEmpty())
      continue;
    std::string Text = printMap(M);
    setCrashReport("seed %llu index %llu: %s", (unsigned long long)O.Seed,
                   (unsigned long long)I, Text.c_str());
    auto Fail = [&](const std::string &What) {
      ++Failures;
      std::printf("FAIL (--seed %llu --only %llu): %s\n  map: %s\n",
                  (unsigned long long)O.Seed, (unsigned long long)I,
                  What.c_str(), Text.c_str());
    };
    std::vector<std::vector<int64_t>> Points = boxPoints(M);
    std::vector<std::vector<int64_t>> In;
    for (const auto &P : Points)
      if (M.contains(P))
        In.push_back(P);
    bool TrulyEmpty = In.empty();
    Empty += TrulyEmpty;

    IndexingMap S = M;
    simplify(S);
    for (const auto &P : Points)
      if (M.contains(P) != S.contains(P)) {
        Fail("simplify changed the domain at d0 = " + std::to_string(P[0]) +
             ": " + printMap(S));
        break;
      }
    Emptiness Fast = checkEmptyFast(M);
    if ((Fast == Emptiness::Empty && !TrulyEmpty) ||
        (Fast == Emptiness::NonEmpty && TrulyEmpty))
      Fail(std::string("checkEmptyFast says ") + emptinessName(Fast));
    Emptiness Exact = isEmptyExact(M);
    if (Exact == Emptiness::Empty && !TrulyEmpty)
      Fail("isEmptyExact says empty, a point evaluates into the domain");
    if (Exact != Emptiness::Unknown && evaluatesEverywhere(M, Points)) {
      ++Decided;
      if ((Exact == Emptiness::Empty) != TrulyEmpty)
        Fail(std::string("isEmptyExact says ") + emptinessName(Exact));
    }
    Interval B = boundsOf(Ctx.dim(0), M);
    for (const auto &P : In)
      if (!B.contains(P[0])) {
        Fail("boundsOf(d0) = " + B.str() +
             " misses d0 = " + std::to_string(P[0]));
        break;
      }
    if (O.Verbose)
      std::printf("%llu: %s\n", (unsigned long long)I, Text.c_str());
  }
  std::printf("fuzz_int64_extremes: %llu maps, %llu empty, %llu exact answers "
              "compared; %u failures\n",
              (unsigned long long)O.Count, (unsigned long long)Empty,
              (unsigned long long)Decided, Failures);
  return Failures ? 1 : 0;
}
