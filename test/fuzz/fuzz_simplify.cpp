//===- fuzz_simplify.cpp - Seeded fuzzer for simplify ---------------------===//
//
// Part of idxmap. For each random codegen-like map M (test/support/
// RandomMaps.h) with an enumerable domain, checks by brute force that:
//   - simplify(M) has the same domain point set and the same value at every
//     domain point as M, and keeps the numbers of variables and results;
//   - simplify reports a change whenever it changed the map;
//   - simplify(simplify(M)) == simplify(M), structurally and as text;
//   - the same two properties with ReplacePointDims = false;
//   - print -> parse gives the same map (for M and for simplify(M)), and
//     printing the parsed map gives the same text;
//   - simplifyExpr preserves every result's values over M's domain;
//   - RangeEvaluator's bounds and divisors hold at every domain point;
//   - removeUnusedVars and removeUnusedSymbols are projections, rescaleSymbols
//     keeps the relation from dims to results (symbols existential), and
//     convertSymbolsToDims keeps every value (on M and on simplify(M)).
// A failure is shrunk to the smallest failing map found and printed with the
// seed and index that reproduce it (`--seed S --only I`).
//
// Usage: fuzz_simplify [--seed N] [--count N] [--only I] [--max-failures N]
//                      [--no-minimize] [--verbose] [--skip KIND]...
//                      [--family NAME] [--edge-odds N] [--max-box N]
// Exit status: 0 if every check passed, 1 on a failure, 2 on a usage error.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"
#include "support/FuzzDriver.h"
#include "support/Minimize.h"
#include "support/RandomMaps.h"

#include "idxmap/Context.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

struct FuzzOptions : FuzzRunOptions {
  FuzzOptions() { Count = 20000; }
  /// Generator settings (see RandomMapOptions).
  RandomMapOptions Gen;
  std::optional<MapFamily> Family;
  /// Check kinds to skip (by short name), for triage.
  std::vector<std::string> Skip;
};

/// What a check found wrong. The kinds are minimized separately: a
/// candidate counts as failing only if it fails with the same kind.
enum class FailureKind {
  Semantics,      ///< simplify changed the domain or a value.
  Shape,          ///< simplify changed the numbers of variables/results.
  EvalOverflow,   ///< simplify(M) overflows where M does not.
  ChangeFlag,     ///< simplify returned false but changed the map.
  Idempotence,    ///< simplify(simplify(M)) != simplify(M).
  RoundTrip,      ///< parse(print(simplify(M))) != simplify(M).
  RoundTripInput, ///< print/parse of M is not faithful.
  SimplifyExpr,   ///< simplifyExpr changed a result's values.
  RangeBounds,    ///< RangeEvaluator's answer is violated at some point.
  RemoveUnused,   ///< removeUnusedVars/Symbols is not a projection.
  PreserveDims,   ///< simplify with ReplacePointDims = false is wrong or
                  ///< not idempotent.
  Rescale,        ///< rescaleSymbols changed the relation.
  ConvertSymbols, ///< convertSymbolsToDims changed a value or the domain.
  Count
};

const char *kindName(FailureKind K) {
  switch (K) {
  case FailureKind::Semantics:
    return "simplify changed the map's meaning";
  case FailureKind::Shape:
    return "simplify changed the numbers of variables or results";
  case FailureKind::EvalOverflow:
    return "simplified map overflows where the input does not";
  case FailureKind::ChangeFlag:
    return "simplify returned false but changed the map";
  case FailureKind::Idempotence:
    return "simplify is not idempotent";
  case FailureKind::RoundTrip:
    return "print/parse round trip of the simplified map";
  case FailureKind::RoundTripInput:
    return "print/parse round trip of the input map";
  case FailureKind::SimplifyExpr:
    return "simplifyExpr changed a result (or made it overflow)";
  case FailureKind::RangeBounds:
    return "RangeEvaluator bound or divisor violated";
  case FailureKind::RemoveUnused:
    return "removeUnusedVars/removeUnusedSymbols is not a projection";
  case FailureKind::PreserveDims:
    return "simplify with ReplacePointDims = false is wrong or not "
           "idempotent";
  case FailureKind::Rescale:
    return "rescaleSymbols changed the map's relation";
  case FailureKind::ConvertSymbols:
    return "convertSymbolsToDims changed the map";
  case FailureKind::Count:
    break;
  }
  return "?";
}

/// Short names for --skip.
const char *kindShortName(FailureKind K) {
  static const char *Names[] = {
      "semantics",      "shape",         "overflow",         "change-flag",
      "idempotence",    "round-trip",    "round-trip-input", "simplify-expr",
      "range",          "remove-unused", "preserve-dims",    "rescale",
      "convert-symbols"};
  return Names[unsigned(K)];
}

struct Failure {
  FailureKind Kind;
  std::string Detail;
};

struct Counters {
  uint64_t Maps = 0, Checked = 0, SkippedLarge = 0, SkippedOverflow = 0;
  uint64_t Points = 0, DomainPoints = 0, EmptyInputs = 0, BecameEmpty = 0;
  uint64_t Changed = 0, RoundTrips = 0, Projections = 0, RangeChecks = 0;
  uint64_t Rescaled = 0;
  std::map<std::string, uint64_t> PerFamily;
  uint64_t Failures[unsigned(FailureKind::Count)] = {};
};

BruteForceOptions bruteOptions() {
  BruteForceOptions O;
  O.MaxPoints = uint64_t(1) << 16;
  return O;
}

/// Collects the distinct subexpressions of E.
void collectSubexprs(Expr E, std::vector<Expr> &Out) {
  if (std::find(Out.begin(), Out.end(), E) != Out.end())
    return;
  Out.push_back(E);
  if (E.isBinary()) {
    collectSubexprs(E.lhs(), Out);
    collectSubexprs(E.rhs(), Out);
  }
}

/// The expression tree with every node parenthesized and constants raw, to
/// show structural differences that print alike.
std::string treeString(Expr E) {
  switch (E.kind()) {
  case ExprKind::Constant:
    return std::to_string(E.value());
  case ExprKind::Dim:
    return "d" + std::to_string(E.position());
  case ExprKind::Symbol:
    return "s" + std::to_string(E.position());
  default:
    break;
  }
  static const char *Ops[] = {"",    "",      "",           " + ",
                              " * ", " mod ", " floordiv ", " ceildiv "};
  return "(" + treeString(E.lhs()) + Ops[unsigned(E.kind())] +
         treeString(E.rhs()) + ")";
}

std::string treesOf(const IndexingMap &M) {
  std::string S;
  for (Expr E : M.results())
    S += "\n    result " + treeString(E);
  for (const Constraint &C : M.constraints())
    S += "\n    constraint " + treeString(C.E) + " in " + C.I.str();
  for (unsigned I = 0; I < M.numVars(); ++I)
    S += "\n    " + M.varName(I) + " in " + M.var(I).Bound.str();
  return S;
}

/// Checks the round trip of \p M through the printer and the parser.
std::optional<std::string> roundTrip(const IndexingMap &M, bool Structural) {
  Context &Ctx = M.context();
  std::string Text = printMap(M);
  Expected<IndexingMap> P = parseIndexingMap(Ctx, Text);
  if (!P)
    return "printed text does not parse:\n  " + Text + "\n" + P.error().str();
  // `KNOWN EMPTY` does not carry the numbers of variables and results, so
  // only the state can round-trip.
  if (M.isKnownEmpty())
    return P->isKnownEmpty() ? std::nullopt
                             : std::optional<std::string>(
                                   "KNOWN EMPTY parses as " + printMap(*P));
  if (Structural && !(*P == M))
    return "parsed map differs structurally from the printed one:\n  " + Text +
           "\n  reparsed: " + printMap(*P) + "\n  trees:" + treesOf(M) +
           "\n  reparsed trees:" + treesOf(*P);
  std::string Again = printMap(*P);
  if (Again != Text)
    return "reprinting the parsed map changes the text:\n  " + Text + "\n  " +
           Again;
  CheckResult R = compareMaps(M, *P, bruteOptions());
  if (R.Status == CheckStatus::Mismatch)
    return "parsed map has another meaning: " + R.str() + "\n  " + Text;
  return std::nullopt;
}

/// Runs every check on \p M (or only \p Only). \p Stats may be null (as in
/// the minimizer's predicate). Returns the first failure.
std::vector<bool> Skipped(unsigned(FailureKind::Count), false);

std::optional<Failure> checkMap(const IndexingMap &M,
                                std::optional<FailureKind> Only,
                                Counters *Stats) {
  auto Want = [&](FailureKind K) {
    return !Skipped[unsigned(K)] && (!Only || *Only == K);
  };
  BruteForceOptions BO = bruteOptions();
  // The input itself must be enumerable and evaluable, or the map is
  // skipped (the minimizer then rejects the candidate).
  CheckResult Self = compareMaps(M, M, BO);
  if (!Self.ok()) {
    if (Stats)
      ++(Self.Status == CheckStatus::TooLarge ? Stats->SkippedLarge
                                              : Stats->SkippedOverflow);
    return std::nullopt;
  }
  if (Stats) {
    ++Stats->Checked;
    Stats->Points += Self.PointsVisited;
    Stats->DomainPoints += Self.DomainPoints;
    Stats->EmptyInputs += Self.DomainPoints == 0;
  }

  IndexingMap S = M;
  bool Changed = simplify(S);
  if (Stats) {
    Stats->Changed += Changed;
    Stats->BecameEmpty += S.isKnownEmpty() && !M.isKnownEmpty();
  }
  bool ShapeOk = S.numDims() == M.numDims() &&
                 S.numRangeVars() == M.numRangeVars() &&
                 S.numRuntimeVars() == M.numRuntimeVars() &&
                 S.numResults() == M.numResults();
  if (!ShapeOk)
    return Want(FailureKind::Shape)
               ? std::optional<Failure>(
                     Failure{FailureKind::Shape, "got " + printMap(S)})
               : std::nullopt;

  if (Want(FailureKind::Semantics) || Want(FailureKind::EvalOverflow)) {
    CheckResult R = compareMaps(M, S, BO);
    if (Stats)
      Stats->Points += R.PointsVisited;
    if (R.Status == CheckStatus::Mismatch && Want(FailureKind::Semantics))
      return Failure{FailureKind::Semantics, R.str()};
    if (R.Status == CheckStatus::EvalError && Want(FailureKind::EvalOverflow))
      return Failure{FailureKind::EvalOverflow, R.str()};
    if (R.Status == CheckStatus::TooLarge && Want(FailureKind::Semantics))
      return Failure{FailureKind::Semantics,
                     "the simplified map's bounds are wider than the input's "
                     "(box too large): " +
                         printMap(S)};
  }

  if (Want(FailureKind::ChangeFlag) && !Changed && !(S == M))
    return Failure{FailureKind::ChangeFlag, "after: " + printMap(S)};

  if (Want(FailureKind::Idempotence)) {
    IndexingMap S2 = S;
    simplify(S2);
    std::string T1 = printMap(S), T2 = printMap(S2);
    if (!(S2 == S) || T1 != T2)
      return Failure{FailureKind::Idempotence,
                     "once:  " + T1 + "\n  twice: " + T2};
  }

  if (Want(FailureKind::RoundTrip)) {
    if (Stats)
      ++Stats->RoundTrips;
    if (auto Err = roundTrip(S, /*Structural=*/true))
      return Failure{FailureKind::RoundTrip, *Err};
  }
  if (Want(FailureKind::RoundTripInput)) {
    if (auto Err = roundTrip(M, /*Structural=*/false))
      return Failure{FailureKind::RoundTripInput, *Err};
  }

  if (Want(FailureKind::SimplifyExpr) && !M.isKnownEmpty()) {
    IndexingMap E = M;
    std::vector<Expr> Res;
    for (Expr R : M.results())
      Res.push_back(simplifyExpr(R, M));
    E.setResults(Res);
    CheckResult R = compareMaps(M, E, BO);
    if (R.Status == CheckStatus::Mismatch ||
        R.Status == CheckStatus::EvalError) {
      std::string Detail = R.str();
      for (unsigned I = 0; I < Res.size(); ++I)
        if (Res[I] != M.result(I))
          Detail += "\n  " + printExpr(M.result(I), &M) + "  ->  " +
                    printExpr(Res[I], &M);
      return Failure{FailureKind::SimplifyExpr, Detail};
    }
  }

  if (Want(FailureKind::RangeBounds) && !M.isKnownEmpty()) {
    std::vector<Expr> Subs;
    for (Expr E : M.results())
      collectSubexprs(E, Subs);
    for (const Constraint &C : M.constraints())
      collectSubexprs(C.E, Subs);
    // Bounded work per map: the top-level expressions always, subexpressions
    // while the box is small.
    uint64_t Box = boxSize(M, BO.MaxPoints).value_or(BO.MaxPoints);
    size_t Limit =
        std::max<size_t>(1, size_t(200000 / std::max<uint64_t>(1, Box)));
    if (Subs.size() > Limit)
      Subs.resize(Limit);
    for (bool UseConstraints : {true, false}) {
      RangeEvaluator RE(M, UseConstraints);
      for (Expr E : Subs) {
        if (E.isConstant())
          continue;
        ExprInfo Info = RE.info(E);
        CheckResult R = checkExprBounds(M, E, Info.Range, Info.Divisor, BO);
        if (Stats)
          ++Stats->RangeChecks;
        if (R.Status == CheckStatus::Mismatch)
          return Failure{
              FailureKind::RangeBounds,
              "range(" + printExpr(E, &M) + ") = " + Info.Range.str() +
                  ", divisor " + std::to_string(Info.Divisor) +
                  (UseConstraints ? " (with constraints)" : " (bounds only)") +
                  ": " + R.str()};
      }
    }
  }

  if (Want(FailureKind::PreserveDims)) {
    SimplifyOptions Keep;
    Keep.ReplacePointDims = false;
    IndexingMap P = M;
    simplify(P, Keep);
    CheckResult R = compareMaps(M, P, BO);
    if (R.Status != CheckStatus::Ok)
      return Failure{FailureKind::PreserveDims,
                     R.str() + "\n  simplified (ReplacePointDims = false): " +
                         printMap(P)};
    IndexingMap P2 = P;
    simplify(P2, Keep);
    if (!(P2 == P) || printMap(P2) != printMap(P))
      return Failure{FailureKind::PreserveDims,
                     "not idempotent:\n  once:  " + printMap(P) +
                         "\n  twice: " + printMap(P2)};
  }

  auto Bad = [](const CheckResult &R) {
    return R.Status == CheckStatus::Mismatch ||
           R.Status == CheckStatus::Invalid;
  };
  const IndexingMap *Bases[] = {&M, &S};
  if (Want(FailureKind::RemoveUnused)) {
    for (const IndexingMap *Base : Bases) {
      const char *Where = Base == &M ? "on the input" : "on simplify(M)";
      for (bool SymbolsOnly : {false, true}) {
        IndexingMap Red = *Base;
        std::vector<bool> Removed;
        if (SymbolsOnly) {
          Removed.assign(Base->numDims(), false);
          std::vector<bool> RS = Red.removeUnusedSymbols();
          Removed.insert(Removed.end(), RS.begin(), RS.end());
        } else {
          Removed = Red.removeUnusedVars();
        }
        if (std::none_of(Removed.begin(), Removed.end(),
                         [](bool B) { return B; }))
          continue;
        if (Stats)
          ++Stats->Projections;
        CheckResult R = checkProjection(*Base, Red, Removed, BO);
        if (Bad(R))
          return Failure{FailureKind::RemoveUnused,
                         std::string(SymbolsOnly ? "removeUnusedSymbols "
                                                 : "removeUnusedVars ") +
                             Where + ": " + R.str() +
                             "\n  reduced: " + printMap(Red)};
      }
    }
  }

  if (Want(FailureKind::Rescale)) {
    for (const IndexingMap *Base : Bases) {
      IndexingMap Res = *Base;
      if (!Res.rescaleSymbols())
        continue;
      if (Stats)
        ++Stats->Rescaled;
      CheckResult R = compareRelations(*Base, Res, BO);
      if (Bad(R))
        return Failure{
            FailureKind::Rescale,
            std::string(Base == &M ? "on the input" : "on simplify(M)") + ": " +
                R.str() + "\n  rescaled: " + printMap(Res)};
    }
  }

  if (Want(FailureKind::ConvertSymbols)) {
    BruteForceOptions Flat = BO;
    Flat.FlatLayout = true;
    for (const IndexingMap *Base : Bases) {
      IndexingMap Conv = Base->convertSymbolsToDims();
      bool ShapeOk = Conv.numDims() == Base->numVars() &&
                     Conv.numSymbols() == 0 &&
                     Conv.numResults() == Base->numResults();
      CheckResult R = compareMaps(*Base, Conv, Flat);
      if (!ShapeOk || Bad(R))
        return Failure{
            FailureKind::ConvertSymbols,
            std::string(Base == &M ? "on the input" : "on simplify(M)") + ": " +
                (ShapeOk ? R.str() : "wrong shape") +
                "\n  converted: " + printMap(Conv)};
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Crash reporting: an assertion or a crash in the engine still tells which
// map caused it.
//===----------------------------------------------------------------------===//

/// Generator flags to repeat in "reproduce:" lines.
std::string GenFlags;

void setCrashInfo(uint64_t Seed, uint64_t Index, const std::string &Text) {
  setCrashReport("  reproduce: fuzz_simplify --seed %llu --only %llu%s\n  map: %s",
                 (unsigned long long)Seed, (unsigned long long)Index,
                 GenFlags.c_str(), Text.c_str());
}

uint64_t mapSeed(uint64_t Seed, uint64_t Index) {
  Rng R(Seed * 0x9E3779B97F4A7C15ull + Index);
  return R.next();
}

bool parseArgs(int Argc, char **Argv, FuzzOptions &O) {
  return parseFuzzArgs(Argc, Argv, O, [&](const std::string &A,
                                          const auto &Value) {
    uint64_t V = 0;
    if (A == "--skip") {
      const char *K = Value();
      if (!K)
        return false;
      O.Skip.push_back(K);
    } else if (A == "--edge-odds") {
      if (!parseFuzzNumber(Value(), V))
        return false;
      GenFlags += " --edge-odds " + std::to_string(V);
      O.Gen.EdgeOdds = unsigned(V);
    } else if (A == "--max-box") {
      if (!parseFuzzNumber(Value(), V))
        return false;
      GenFlags += " --max-box " + std::to_string(V);
      O.Gen.MaxBoxPoints = V;
    } else if (A == "--family") {
      const char *F = Value();
      if (!F)
        return false;
      for (unsigned K = 0; K < unsigned(MapFamily::NumFamilies); ++K)
        if (std::string(F) == familyName(MapFamily(K)))
          O.Family = MapFamily(K);
      if (!O.Family)
        return false;
      GenFlags += std::string(" --family ") + F;
    } else {
      return false;
    }
    return true;
  });
}

} // namespace

int main(int Argc, char **Argv) {
  FuzzOptions O;
  if (!parseArgs(Argc, Argv, O)) {
    fprintf(stderr,
            "usage: fuzz_simplify [--seed N] [--count N] [--only INDEX] "
            "[--max-failures N] [--no-minimize] [--verbose] [--skip KIND]...\n"
            "       [--family NAME] [--edge-odds N] [--max-box N]\n"
            "kinds:");
    for (unsigned K = 0; K < unsigned(FailureKind::Count); ++K)
      fprintf(stderr, " %s", kindShortName(FailureKind(K)));
    fprintf(stderr, "\n");
    return 2;
  }
  for (const std::string &Name : O.Skip) {
    bool Found = false;
    for (unsigned K = 0; K < unsigned(FailureKind::Count); ++K)
      if (Name == kindShortName(FailureKind(K)))
        Skipped[K] = Found = true;
    if (!Found) {
      fprintf(stderr, "fuzz_simplify: unknown check kind '%s'\n", Name.c_str());
      return 2;
    }
  }
  installCrashReporter("fuzz_simplify");

  auto Start = std::chrono::steady_clock::now();
  Counters C;
  uint64_t Failed = 0;
  uint64_t First = O.Only ? *O.Only : 0, Last = O.Only ? *O.Only + 1 : O.Count;
  for (uint64_t I = First; I < Last; ++I) {
    Context Ctx; // Fresh per map: a failure reproduces with --only.
    RandomMapGenerator Gen(Ctx, mapSeed(O.Seed, I), O.Gen);
    IndexingMap M = O.Family ? Gen.generate(*O.Family) : Gen.generate();
    ++C.Maps;
    ++C.PerFamily[familyName(Gen.lastFamily())];
    std::string Text = printMap(M);
    setCrashInfo(O.Seed, I, Text);
    if (O.Verbose)
      printf("[%llu] %s\n", (unsigned long long)I, Text.c_str());
    std::optional<Failure> F = checkMap(M, std::nullopt, &C);
    if (!F)
      continue;
    ++Failed;
    ++C.Failures[unsigned(F->Kind)];
    if (Failed > O.MaxFailures)
      continue;
    printf("\nFAILURE %llu: %s\n  reproduce: fuzz_simplify --seed %llu "
           "--only %llu%s\n  family: %s\n  input:      %s\n",
           (unsigned long long)Failed, kindName(F->Kind),
           (unsigned long long)O.Seed, (unsigned long long)I, GenFlags.c_str(),
           familyName(Gen.lastFamily()), Text.c_str());
    {
      IndexingMap S = M;
      simplify(S);
      printf("  simplified: %s\n  %s\n", printMap(S).c_str(),
             F->Detail.c_str());
    }
    if (O.Minimize) {
      FailureKind K = F->Kind;
      IndexingMap Min = minimizeMap(M, [&](const IndexingMap &Cand) {
        setCrashInfo(O.Seed, I, printMap(Cand));
        return checkMap(Cand, K, nullptr).has_value();
      });
      std::optional<Failure> MF = checkMap(Min, K, nullptr);
      IndexingMap S = Min;
      simplify(S);
      printf("  minimized:  %s\n  simplified: %s\n  %s\n",
             printMap(Min).c_str(), printMap(S).c_str(),
             MF ? MF->Detail.c_str() : "(does not fail any more?)");
    }
    fflush(stdout);
  }
  double Secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();

  printf("\nfuzz_simplify: seed %llu, %llu maps generated, %llu checked "
         "(%llu skipped: box too large; %llu skipped: input overflows)\n",
         (unsigned long long)O.Seed, (unsigned long long)C.Maps,
         (unsigned long long)C.Checked, (unsigned long long)C.SkippedLarge,
         (unsigned long long)C.SkippedOverflow);
  printf("  points evaluated: %llu (%llu in domains); %llu inputs with an "
         "empty domain, %llu became KNOWN EMPTY; simplify changed %llu\n",
         (unsigned long long)C.Points, (unsigned long long)C.DomainPoints,
         (unsigned long long)C.EmptyInputs, (unsigned long long)C.BecameEmpty,
         (unsigned long long)C.Changed);
  printf("  round trips: %llu, projections: %llu, rescaled: %llu, range "
         "checks: %llu\n",
         (unsigned long long)C.RoundTrips, (unsigned long long)C.Projections,
         (unsigned long long)C.Rescaled, (unsigned long long)C.RangeChecks);
  printf("  families:");
  for (auto &[Name, N] : C.PerFamily)
    printf(" %s=%llu", Name.c_str(), (unsigned long long)N);
  printf("\n  time: %.1f s\n", Secs);
  if (Failed) {
    printf("  FAILED: %llu maps\n", (unsigned long long)Failed);
    for (unsigned K = 0; K < unsigned(FailureKind::Count); ++K)
      if (C.Failures[K])
        printf("    %llu x %s\n", (unsigned long long)C.Failures[K],
               kindName(FailureKind(K)));
    return 1;
  }
  printf("  all checks passed\n");
  return 0;
}
