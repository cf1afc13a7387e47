//===- fuzz_compose.cpp - Seeded fuzzer for compose -----------------------===//
//
// Part of idxmap. For random pairs (first, second) of codegen-like maps
// whose shapes fit (first's results feed second's dims; second's dim bounds
// are exact, narrower or wider than first's result ranges), checks by brute
// force that:
//   - compose(first, second)(x, t) == second(first(x), t) on exactly the
//     domain FORMATS.md defines (x in first's domain, (first(x), t) in
//     second's);
//   - simplify(compose(first, second)) equals compose(first, second) point by
//     point, and is idempotent;
//   - compose(simplify(first), simplify(second)) is also a correct
//     composition of the unsimplified maps.
// A failure is shrunk (first, then second, then the composed map) and
// printed with the seed and index that reproduce it.
//
// Usage: fuzz_compose [--seed N] [--count N] [--only I] [--max-failures N]
//                     [--no-minimize] [--verbose] [--edge-odds N]
// Exit status: 0 if every check passed, 1 on a failure, 2 on a usage error.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"
#include "support/FuzzDriver.h"
#include "support/Minimize.h"
#include "support/RandomMaps.h"

#include "idxmap/Compose.h"
#include "idxmap/Context.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <unistd.h>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

struct FuzzOptions : FuzzRunOptions {
  FuzzOptions() { Count = 5000; }
  /// Generator settings (see RandomMapOptions).
  RandomMapOptions Gen;
};

enum class FailureKind {
  Compose,            ///< compose(a, b) is not b o a.
  SimplifyComposed,   ///< simplify changed compose(a, b)'s meaning.
  OverflowComposed,   ///< simplify(compose(a, b)) overflows where
                      ///< compose(a, b) does not.
  IdempotentComposed, ///< simplify is not idempotent on compose(a, b).
  ComposeSimplified,  ///< compose(simplify(a), simplify(b)) is not b o a.
  Count
};

const char *kindName(FailureKind K) {
  switch (K) {
  case FailureKind::Compose:
    return "compose(first, second) is not second o first";
  case FailureKind::SimplifyComposed:
    return "simplify changed the meaning of compose(first, second)";
  case FailureKind::OverflowComposed:
    return "simplify(compose(first, second)) overflows where "
           "compose(first, second) does not";
  case FailureKind::IdempotentComposed:
    return "simplify is not idempotent on compose(first, second)";
  case FailureKind::ComposeSimplified:
    return "compose(simplify(first), simplify(second)) is not second o first";
  case FailureKind::Count:
    break;
  }
  return "?";
}

struct Failure {
  FailureKind Kind;
  std::string Detail;
};

struct Counters {
  uint64_t Pairs = 0, Checked = 0, SkippedLarge = 0, SkippedOverflow = 0;
  uint64_t Points = 0, DomainPoints = 0, EmptyComposed = 0, BecameEmpty = 0;
  uint64_t Failures[unsigned(FailureKind::Count)] = {};
};

BruteForceOptions bruteOptions() {
  BruteForceOptions O;
  O.MaxPoints = uint64_t(1) << 16;
  return O;
}

/// An enumerable, evaluable check result that is not a real failure.
bool undecided(const CheckResult &R) {
  return R.Status == CheckStatus::TooLarge ||
         R.Status == CheckStatus::EvalError;
}

std::optional<Failure> checkPair(const IndexingMap &A, const IndexingMap &B,
                                 std::optional<FailureKind> Only,
                                 Counters *Stats) {
  auto Want = [&](FailureKind K) { return !Only || *Only == K; };
  if (A.isUndefined() || B.isUndefined() || A.numResults() != B.numDims())
    return std::nullopt;
  BruteForceOptions BO = bruteOptions();
  // The operands must be enumerable and evaluable.
  for (const IndexingMap *M : {&A, &B}) {
    CheckResult Self = compareMaps(*M, *M, BO);
    if (!Self.ok()) {
      if (Stats)
        ++(Self.Status == CheckStatus::TooLarge ? Stats->SkippedLarge
                                                : Stats->SkippedOverflow);
      return std::nullopt;
    }
  }
  IndexingMap C = compose(A, B);
  CheckResult R = checkCompose(A, B, C, BO);
  if (undecided(R)) {
    if (Stats)
      ++(R.Status == CheckStatus::TooLarge ? Stats->SkippedLarge
                                           : Stats->SkippedOverflow);
    return std::nullopt;
  }
  if (Stats) {
    ++Stats->Checked;
    Stats->Points += R.PointsVisited;
    Stats->DomainPoints += R.DomainPoints;
    Stats->EmptyComposed += R.DomainPoints == 0;
  }
  if (!R.ok())
    return Want(FailureKind::Compose)
               ? std::optional<Failure>(
                     Failure{FailureKind::Compose,
                             R.str() + "\n  composed: " + printMap(C)})
               : std::nullopt;

  if (Want(FailureKind::SimplifyComposed) ||
      Want(FailureKind::OverflowComposed) ||
      Want(FailureKind::IdempotentComposed)) {
    IndexingMap S = C;
    simplify(S);
    if (Stats)
      Stats->BecameEmpty += S.isKnownEmpty() && !C.isKnownEmpty();
    CheckResult RS = compareMaps(C, S, BO);
    if (Stats)
      Stats->Points += RS.PointsVisited;
    FailureKind K = RS.Status == CheckStatus::EvalError
                        ? FailureKind::OverflowComposed
                        : FailureKind::SimplifyComposed;
    if (!RS.ok() && Want(K))
      return Failure{K, RS.str() + "\n  composed:   " + printMap(C) +
                            "\n  simplified: " + printMap(S)};
    if (Want(FailureKind::IdempotentComposed)) {
      IndexingMap S2 = S;
      simplify(S2);
      if (!(S2 == S) || printMap(S2) != printMap(S))
        return Failure{FailureKind::IdempotentComposed,
                       "once:  " + printMap(S) + "\n  twice: " + printMap(S2)};
    }
  }

  if (Want(FailureKind::ComposeSimplified)) {
    IndexingMap SA = A, SB = B;
    simplify(SA);
    simplify(SB);
    IndexingMap CS = compose(SA, SB);
    CheckResult RC = checkCompose(A, B, CS, BO);
    if (Stats)
      Stats->Points += RC.PointsVisited;
    if (RC.Status == CheckStatus::Mismatch || RC.Status == CheckStatus::Invalid)
      return Failure{FailureKind::ComposeSimplified,
                     RC.str() + "\n  simplify(first):  " + printMap(SA) +
                         "\n  simplify(second): " + printMap(SB) +
                         "\n  composed: " + printMap(CS)};
  }
  return std::nullopt;
}

/// Generator flags to repeat in "reproduce:" lines.
std::string GenFlags;

void setCrashInfo(uint64_t Seed, uint64_t Index, const IndexingMap &A,
                  const IndexingMap &B) {
  setCrashReport("  reproduce: fuzz_compose --seed %llu --only %llu%s\n"
                 "  first:  %s\n  second: %s",
                 (unsigned long long)Seed, (unsigned long long)Index,
                 GenFlags.c_str(), printMap(A).c_str(), printMap(B).c_str());
}

uint64_t pairSeed(uint64_t Seed, uint64_t Index) {
  Rng R(Seed * 0xD1B54A32D192ED03ull + Index);
  return R.next();
}

bool parseArgs(int Argc, char **Argv, FuzzOptions &O) {
  return parseFuzzArgs(Argc, Argv, O, [&](const std::string &A,
                                          const auto &Value) {
    uint64_t V = 0;
    if (A != "--edge-odds" || !parseFuzzNumber(Value(), V))
      return false;
    O.Gen.EdgeOdds = unsigned(V);
    GenFlags += " --edge-odds " + std::to_string(V);
    return true;
  });
}

/// Shrinks the pair: first with second fixed, then second with first fixed,
/// twice (a smaller second may allow a smaller first).
std::pair<IndexingMap, IndexingMap> minimizePair(IndexingMap A, IndexingMap B,
                                                 FailureKind K, uint64_t Seed,
                                                 uint64_t Index) {
  for (int Round = 0; Round < 2; ++Round) {
    A = minimizeMap(A, [&](const IndexingMap &Cand) {
      setCrashInfo(Seed, Index, Cand, B);
      return checkPair(Cand, B, K, nullptr).has_value();
    });
    B = minimizeMap(B, [&](const IndexingMap &Cand) {
      setCrashInfo(Seed, Index, A, Cand);
      return checkPair(A, Cand, K, nullptr).has_value();
    });
  }
  return {A, B};
}

} // namespace

int main(int Argc, char **Argv) {
  FuzzOptions O;
  if (!parseArgs(Argc, Argv, O)) {
    fprintf(stderr, "usage: fuzz_compose [--seed N] [--count N] [--only INDEX] "
                    "[--max-failures N] [--no-minimize] [--verbose] "
                    "[--edge-odds N]\n");
    return 2;
  }
  installCrashReporter("fuzz_compose");

  auto Start = std::chrono::steady_clock::now();
  Counters C;
  uint64_t Failed = 0;
  uint64_t First = O.Only ? *O.Only : 0, Last = O.Only ? *O.Only + 1 : O.Count;
  for (uint64_t I = First; I < Last; ++I) {
    Context Ctx;
    RandomMapGenerator Gen(Ctx, pairSeed(O.Seed, I), O.Gen);
    auto [A, B] = Gen.generateComposablePair();
    ++C.Pairs;
    setCrashInfo(O.Seed, I, A, B);
    if (O.Verbose)
      printf("[%llu] first:  %s\n       second: %s\n", (unsigned long long)I,
             printMap(A).c_str(), printMap(B).c_str());
    std::optional<Failure> F = checkPair(A, B, std::nullopt, &C);
    if (!F)
      continue;
    ++Failed;
    ++C.Failures[unsigned(F->Kind)];
    if (Failed > O.MaxFailures)
      continue;
    printf("\nFAILURE %llu: %s\n  reproduce: fuzz_compose --seed %llu "
           "--only %llu%s\n  first:  %s\n  second: %s\n  %s\n",
           (unsigned long long)Failed, kindName(F->Kind),
           (unsigned long long)O.Seed, (unsigned long long)I, GenFlags.c_str(),
           printMap(A).c_str(), printMap(B).c_str(), F->Detail.c_str());
    if (O.Minimize) {
      auto [MA, MB] = minimizePair(A, B, F->Kind, O.Seed, I);
      std::optional<Failure> MF = checkPair(MA, MB, F->Kind, nullptr);
      printf("  minimized first:  %s\n  minimized second: %s\n  %s\n",
             printMap(MA).c_str(), printMap(MB).c_str(),
             MF ? MF->Detail.c_str() : "(does not fail any more?)");
      if (F->Kind == FailureKind::SimplifyComposed ||
          F->Kind == FailureKind::OverflowComposed) {
        // The composed map alone shows the simplifier bug: shrink it too.
        CheckStatus Want = F->Kind == FailureKind::SimplifyComposed
                               ? CheckStatus::Mismatch
                               : CheckStatus::EvalError;
        IndexingMap Comp = compose(MA, MB);
        IndexingMap Min = minimizeMap(Comp, [&](const IndexingMap &Cand) {
          IndexingMap S = Cand;
          CheckResult Self = compareMaps(Cand, Cand, bruteOptions());
          if (!Self.ok())
            return false;
          simplify(S);
          return compareMaps(Cand, S, bruteOptions()).Status == Want;
        });
        IndexingMap S = Min;
        simplify(S);
        printf("  minimized composed map: %s\n  simplified:             %s\n",
               printMap(Min).c_str(), printMap(S).c_str());
      }
    }
    fflush(stdout);
  }
  double Secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  printf("\nfuzz_compose: seed %llu, %llu pairs generated, %llu checked "
         "(%llu skipped: box too large; %llu skipped: overflow)\n",
         (unsigned long long)O.Seed, (unsigned long long)C.Pairs,
         (unsigned long long)C.Checked, (unsigned long long)C.SkippedLarge,
         (unsigned long long)C.SkippedOverflow);
  printf("  points evaluated: %llu (%llu in composed domains); %llu "
         "compositions with an empty domain, %llu simplified to KNOWN EMPTY\n",
         (unsigned long long)C.Points, (unsigned long long)C.DomainPoints,
         (unsigned long long)C.EmptyComposed,
         (unsigned long long)C.BecameEmpty);
  printf("  time: %.1f s\n", Secs);
  if (Failed) {
    printf("  FAILED: %llu pairs\n", (unsigned long long)Failed);
    for (unsigned K = 0; K < unsigned(FailureKind::Count); ++K)
      if (C.Failures[K])
        printf("    %llu x %s\n", (unsigned long long)C.Failures[K],
               kindName(FailureKind(K)));
    return 1;
  }
  printf("  all checks passed\n");
  return 0;
}
