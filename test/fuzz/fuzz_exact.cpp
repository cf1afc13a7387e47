//===- fuzz_exact.cpp - Differential fuzzer for the exact (isl) queries ---===//
//
// Part of idxmap. For each random codegen-like map M with an enumerable
// domain (test/support/RandomMaps.h, small mode), compares every exact query
// of idxmap/Exact.h with brute-force enumeration (test/support/BruteForce.h):
//   - isEmptyExact(M) against the enumerated domain;
//   - boundsExact(E, M) against the enumerated min and max, for every result,
//     every constraint expression and a few subexpressions;
//   - isInjective(M) against a search for two points with the same results
//     (and the same runtime values);
//   - isBijectiveOnto(M, Shape) against per-runtime-value image counting, for
//     the shape spanned by the results (sometimes cut short by one);
//   - arePointwiseEqual and areEqual against point-by-point comparison and
//     against the enumerated relations, on (M, simplify(M)), (M, M with a
//     perturbed bound, result or constraint) and (M, M with every range
//     variable reflected within its bound: the same relation, other points);
//   - refineExact(M) keeps every point and value, tightens every bound to the
//     enumerated projection, marks empty domains KNOWN EMPTY, and is
//     idempotent.
// An Unknown answer is not a failure for one map, but more than 1% of
// representable maps undecided is (the queries are meant to decide them).
// A failure is shrunk to the smallest failing map found and printed with the
// seed and index that reproduce it.
//
// Usage: fuzz_exact [--seed N] [--count N] [--only I] [--max-failures N]
//                   [--no-minimize] [--verbose]
// Exit status: 0 if every check passed, 1 on a failure, 2 on a usage error.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"
#include "support/FuzzDriver.h"
#include "support/Minimize.h"
#include "support/RandomMaps.h"

#include "idxmap/Context.h"
#include "idxmap/Exact.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

struct FuzzOptions : FuzzRunOptions {
  FuzzOptions() { Count = 5000; }
};

enum class FailureKind {
  Emptiness,     ///< isEmptyExact disagrees with enumeration.
  Bounds,        ///< boundsExact disagrees with enumeration.
  Injective,     ///< isInjective disagrees with enumeration.
  Bijective,     ///< isBijectiveOnto disagrees with enumeration.
  PointwiseEq,   ///< arePointwiseEqual disagrees with compareMaps.
  RelationEq,    ///< areEqual disagrees with the enumerated relations.
  Refine,        ///< refineExact changed the domain or is not exact.
  Count
};

const char *kindName(FailureKind K) {
  switch (K) {
  case FailureKind::Emptiness:
    return "isEmptyExact disagrees with enumeration";
  case FailureKind::Bounds:
    return "boundsExact disagrees with enumeration";
  case FailureKind::Injective:
    return "isInjective disagrees with enumeration";
  case FailureKind::Bijective:
    return "isBijectiveOnto disagrees with enumeration";
  case FailureKind::PointwiseEq:
    return "arePointwiseEqual disagrees with point-by-point comparison";
  case FailureKind::RelationEq:
    return "areEqual disagrees with the enumerated relations";
  case FailureKind::Refine:
    return "refineExact is unsound or not exact";
  case FailureKind::Count:
    break;
  }
  return "?";
}

struct Failure {
  FailureKind Kind;
  std::string Detail;
};

/// Per query: answered, Unknown on a map isl cannot represent, Unknown for
/// another reason (budget, time), agreed with enumeration.
struct QueryCounts {
  uint64_t Asked = 0, NonAffine = 0, Undecided = 0, Yes = 0;
  double Seconds = 0;
};

/// Runs \p Fn, adding its wall time to \p Q (if any).
template <typename F> auto timed(QueryCounts *Q, F Fn) {
  auto T0 = std::chrono::steady_clock::now();
  auto R = Fn();
  if (Q)
    Q->Seconds += std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - T0)
                      .count();
  return R;
}

struct Counters {
  uint64_t Maps = 0, Checked = 0, SkippedLarge = 0, SkippedEval = 0;
  uint64_t EmptyDomains = 0, DomainPoints = 0;
  QueryCounts Empty, Bounds, Injective, Bijective, PointwiseEq, RelationEq,
      Refine;
  std::map<std::string, uint64_t> PerFamily;
  uint64_t Failures[unsigned(FailureKind::Count)] = {};
};

BruteForceOptions bruteOptions() {
  BruteForceOptions O;
  O.MaxPoints = uint64_t(1) << 16;
  return O;
}

/// The exact queries' options: the default budget, and a time limit long
/// enough not to matter on a loaded machine.
ExactOptions exactOptions(std::string *Why) {
  ExactOptions O;
  O.TimeLimitMs = 5000;
  O.Explanation = Why;
  return O;
}

/// Counts an Unknown answer by its reason.
void countUnknown(QueryCounts *Q, const std::string &Why) {
  if (!Q)
    return;
  if (Why.find("cannot represent") != std::string::npos)
    ++Q->NonAffine;
  else
    ++Q->Undecided;
}

//===----------------------------------------------------------------------===//
// Enumeration helpers
//===----------------------------------------------------------------------===//

/// Splits a point into dims and symbols and evaluates \p E.
std::optional<int64_t> evalAt(const IndexingMap &M, Expr E, const Point &P) {
  std::vector<int64_t> Dims(P.begin(), P.begin() + M.numDims());
  std::vector<int64_t> Syms(P.begin() + M.numDims(), P.end());
  return evaluateChecked(E, Dims, Syms);
}

/// The results at \p P, or nullopt if one cannot be evaluated.
std::optional<std::vector<int64_t>> resultsAt(const IndexingMap &M,
                                              const Point &P) {
  std::vector<int64_t> R;
  for (Expr E : M.results()) {
    std::optional<int64_t> V = evalAt(M, E, P);
    if (!V)
      return std::nullopt;
    R.push_back(*V);
  }
  return R;
}

std::vector<int64_t> runtimeValues(const IndexingMap &M, const Point &P) {
  return std::vector<int64_t>(P.begin() + M.numDims() + M.numRangeVars(),
                              P.end());
}

std::string tupleStr(const std::vector<int64_t> &V) {
  std::string S = "(";
  for (size_t I = 0; I < V.size(); ++I)
    S += (I ? ", " : "") + std::to_string(V[I]);
  return S + ")";
}

/// The enumerated relation of \p M: tuples [dims, runtime vars, results] (range
/// variables projected out when \p Project), or nullopt if not enumerable.
std::optional<std::set<std::vector<int64_t>>>
enumerateRelation(const IndexingMap &M, bool Project) {
  CheckStatus S = CheckStatus::Ok;
  std::vector<Point> Pts = enumerateDomain(M, &S, bruteOptions());
  if (S != CheckStatus::Ok)
    return std::nullopt;
  std::set<std::vector<int64_t>> Rel;
  for (const Point &P : Pts) {
    std::optional<std::vector<int64_t>> R = resultsAt(M, P);
    if (!R)
      return std::nullopt;
    std::vector<int64_t> T(P.begin(), P.begin() + M.numDims());
    if (!Project)
      T.insert(T.end(), P.begin() + M.numDims(),
               P.begin() + M.numDims() + M.numRangeVars());
    std::vector<int64_t> Rt = runtimeValues(M, P);
    T.insert(T.end(), Rt.begin(), Rt.end());
    T.insert(T.end(), R->begin(), R->end());
    Rel.insert(T);
  }
  return Rel;
}

/// The runtime values the map is meant for: runtime bounds and runtime-only
/// constraints (nullopt if too many or not evaluable).
std::optional<std::vector<std::vector<int64_t>>>
runtimeContext(const IndexingMap &M) {
  unsigned First = M.numDims() + M.numRangeVars();
  std::vector<std::vector<int64_t>> Ctx{{}};
  for (unsigned I = First; I < M.numVars(); ++I) {
    Interval B = M.var(I).Bound;
    if (B.isEmpty())
      return std::vector<std::vector<int64_t>>{};
    if (B.size() * Ctx.size() > 100000)
      return std::nullopt;
    std::vector<std::vector<int64_t>> Next;
    for (const std::vector<int64_t> &C : Ctx)
      for (int64_t V = B.Lo;; ++V) {
        Next.push_back(C);
        Next.back().push_back(V);
        if (V == B.Hi)
          break;
      }
    Ctx = std::move(Next);
  }
  std::vector<std::vector<int64_t>> Out;
  for (const std::vector<int64_t> &Rt : Ctx) {
    Point P(First, 0);
    P.insert(P.end(), Rt.begin(), Rt.end());
    bool In = true;
    for (const Constraint &C : M.constraints()) {
      bool OnlyRt = true;
      C.E.walkVariables([&](Expr V) {
        if (V.isDim() || V.position() < M.numRangeVars())
          OnlyRt = false;
      });
      if (!OnlyRt)
        continue;
      std::optional<int64_t> V = evalAt(M, C.E, P);
      if (!V)
        return std::nullopt;
      In = In && C.I.contains(*V);
    }
    if (In)
      Out.push_back(Rt);
  }
  return Out;
}

/// Collects distinct non-constant subexpressions of \p E.
void collectSubexprs(Expr E, std::vector<Expr> &Out) {
  if (E.isConstant() || std::find(Out.begin(), Out.end(), E) != Out.end())
    return;
  Out.push_back(E);
  if (E.isBinary()) {
    collectSubexprs(E.lhs(), Out);
    collectSubexprs(E.rhs(), Out);
  }
}

//===----------------------------------------------------------------------===//
// Variants of a map for the equality checks
//===----------------------------------------------------------------------===//

/// M with a small change that may or may not change its meaning: a bound cut
/// by one, a result plus one on part of the domain, or an extra constraint.
IndexingMap perturb(const IndexingMap &M, Rng &R) {
  IndexingMap P = M;
  if (M.isKnownEmpty() || M.numVars() == 0)
    return P;
  switch (R.range(0, 2)) {
  case 0: {
    unsigned V = unsigned(R.range(0, M.numVars() - 1));
    Interval B = P.var(V).Bound;
    if (B.Lo < B.Hi) {
      if (R.chance(1, 2))
        ++B.Lo;
      else
        --B.Hi;
      P.var(V).Bound = B;
    }
    break;
  }
  case 1: {
    if (!M.numResults())
      break;
    unsigned I = unsigned(R.range(0, M.numResults() - 1));
    unsigned V = unsigned(R.range(0, M.numVars() - 1));
    std::vector<Expr> Res = M.results();
    // Differs exactly where the chosen variable is 3 mod 4.
    Res[I] = Res[I] + ((M.varExpr(V) + 1) % 4).floorDiv(3);
    P.setResults(Res);
    break;
  }
  default: {
    // Cut the top corner of two variables' box (a no-op when no domain
    // point lies there).
    unsigned V = unsigned(R.range(0, M.numVars() - 1));
    unsigned W = unsigned(R.range(0, M.numVars() - 1));
    std::optional<int64_t> Lo =
        checkedAdd(M.var(V).Bound.Lo, M.var(W).Bound.Lo);
    std::optional<int64_t> Hi =
        checkedAdd(M.var(V).Bound.Hi, M.var(W).Bound.Hi);
    if (V == W || !Lo || !Hi)
      break;
    std::vector<Constraint> Cs = P.constraints();
    Cs.push_back({M.varExpr(V) + M.varExpr(W),
                  Interval(*Lo, *Hi - R.range(0, 2))});
    P.setConstraints(Cs);
    break;
  }
  }
  return P;
}

/// M with every range variable s reflected within its bound [lo, hi]
/// (s := lo + hi - s): the same relation with range vars projected out, but
/// usually other values at each point.
IndexingMap reflectRangeVars(const IndexingMap &M) {
  if (M.isKnownEmpty() || M.numRangeVars() == 0)
    return M;
  Context &Ctx = M.context();
  std::vector<Expr> SymRepl(M.numSymbols());
  for (unsigned I = 0; I < M.numRangeVars(); ++I) {
    Interval B = M.rangeVars()[I].Bound;
    std::optional<int64_t> Sum = checkedAdd(B.Lo, B.Hi);
    if (!Sum)
      return M;
    SymRepl[I] = Ctx.constant(*Sum) - Ctx.symbol(I);
  }
  IndexingMap R = M;
  std::vector<Expr> Res;
  for (Expr E : M.results())
    Res.push_back(E.replace({}, SymRepl));
  R.setResults(Res);
  std::vector<Constraint> Cs;
  for (const Constraint &C : M.constraints())
    Cs.push_back({C.E.replace({}, SymRepl), C.I});
  R.setConstraints(Cs);
  return R;
}

//===----------------------------------------------------------------------===//
// The checks
//===----------------------------------------------------------------------===//

/// Checks arePointwiseEqual (when \p Pointwise) and areEqual (when
/// \p Relation) on (A, B) against enumeration.
std::optional<Failure> checkEquality(const IndexingMap &A, const IndexingMap &B,
                                     const char *What, bool Pointwise,
                                     bool Relation,
                                     std::optional<FailureKind> Only,
                                     Counters *Stats) {
  auto Want = [&](FailureKind K) {
    return (!Only || *Only == K) &&
           (K == FailureKind::PointwiseEq ? Pointwise : Relation);
  };
  std::string Why;
  ExactOptions O = exactOptions(&Why);
  auto Describe = [&](Answer Got, bool Truth) {
    return std::string(What) + ": got " + answerName(Got) + ", enumeration " +
           (Truth ? "equal" : "different") + (Why.empty() ? "" : " (" + Why + ")") +
           "\n  A: " + printMap(A) + "\n  B: " + printMap(B);
  };
  if (Want(FailureKind::PointwiseEq)) {
    CheckResult R = compareMaps(A, B, bruteOptions());
    if (R.Status == CheckStatus::Ok || R.Status == CheckStatus::Mismatch) {
      bool Truth = R.Status == CheckStatus::Ok;
      QueryCounts *Q = Stats ? &Stats->PointwiseEq : nullptr;
      Answer Got = timed(Q, [&] { return arePointwiseEqual(A, B, O); });
      if (Q)
        ++Q->Asked;
      if (Got == Answer::Unknown)
        countUnknown(Q, Why);
      else if ((Got == Answer::Yes) != Truth)
        return Failure{FailureKind::PointwiseEq,
                       Describe(Got, Truth) + "\n  " + R.str()};
      else if (Q && Truth)
        ++Q->Yes;
    }
  }
  if (Want(FailureKind::RelationEq)) {
    auto RA = enumerateRelation(A, /*Project=*/true);
    auto RB = RA ? enumerateRelation(B, /*Project=*/true) : std::nullopt;
    if (RA && RB) {
      bool Truth = *RA == *RB;
      QueryCounts *Q = Stats ? &Stats->RelationEq : nullptr;
      Answer Got = timed(Q, [&] { return areEqual(A, B, O); });
      if (Q)
        ++Q->Asked;
      if (Got == Answer::Unknown)
        countUnknown(Q, Why);
      else if ((Got == Answer::Yes) != Truth)
        return Failure{FailureKind::RelationEq, Describe(Got, Truth)};
      else if (Q && Truth)
        ++Q->Yes;
    }
  }
  return std::nullopt;
}

/// Runs every check on \p M (or only \p Only); \p Stats may be null (in the
/// minimizer's predicate). \p Seed drives the perturbations.
std::optional<Failure> checkMap(const IndexingMap &M,
                                std::optional<FailureKind> Only,
                                Counters *Stats, uint64_t Seed) {
  auto Want = [&](FailureKind K) { return !Only || *Only == K; };
  CheckStatus Status = CheckStatus::Ok;
  std::vector<Point> Pts = enumerateDomain(M, &Status, bruteOptions());
  if (Status != CheckStatus::Ok) {
    if (Stats)
      ++(Status == CheckStatus::TooLarge ? Stats->SkippedLarge
                                         : Stats->SkippedEval);
    return std::nullopt;
  }
  // Every result must be evaluable at every domain point.
  std::vector<std::vector<int64_t>> Images;
  for (const Point &P : Pts) {
    std::optional<std::vector<int64_t>> R = resultsAt(M, P);
    if (!R) {
      if (Stats)
        ++Stats->SkippedEval;
      return std::nullopt;
    }
    Images.push_back(*R);
  }
  if (Stats) {
    ++Stats->Checked;
    Stats->EmptyDomains += Pts.empty();
    Stats->DomainPoints += Pts.size();
  }
  std::string Why;
  ExactOptions O = exactOptions(&Why);
  std::string Input = "\n  map: " + printMap(M);

  // Emptiness.
  if (Want(FailureKind::Emptiness)) {
    QueryCounts *Q = Stats ? &Stats->Empty : nullptr;
    Emptiness E = timed(Q, [&] { return isEmptyExact(M, O); });
    if (Q)
      ++Q->Asked;
    if (E == Emptiness::Unknown)
      countUnknown(Q, Why);
    else if ((E == Emptiness::Empty) != Pts.empty())
      return Failure{FailureKind::Emptiness,
                     std::string("got ") + emptinessName(E) + ", enumeration "
                     "found " + std::to_string(Pts.size()) + " points" +
                         (Pts.empty() ? "" : ", e.g. " + formatPoint(M, Pts[0])) +
                         Input};
    else if (Q && E == Emptiness::Empty)
      ++Q->Yes;
  }

  // Bounds of results, constraint expressions and some subexpressions.
  if (Want(FailureKind::Bounds)) {
    std::vector<Expr> Exprs;
    for (Expr E : M.results())
      collectSubexprs(E, Exprs);
    for (const Constraint &C : M.constraints())
      collectSubexprs(C.E, Exprs);
    if (Exprs.size() > 6)
      Exprs.resize(6);
    for (Expr E : Exprs) {
      Interval Truth = Interval::empty();
      bool Evaluable = true;
      for (const Point &P : Pts) {
        std::optional<int64_t> V = evalAt(M, E, P);
        if (!V) {
          Evaluable = false;
          break;
        }
        Truth = Truth.isEmpty() ? Interval::point(*V)
                                : Truth.hull(Interval::point(*V));
      }
      if (!Evaluable)
        continue;
      QueryCounts *Q = Stats ? &Stats->Bounds : nullptr;
      std::optional<Interval> Got =
          timed(Q, [&] { return boundsExact(E, M, O); });
      if (Q)
        ++Q->Asked;
      if (!Got)
        countUnknown(Q, Why);
      else if (!(*Got == Truth))
        return Failure{FailureKind::Bounds,
                       "bounds of " + printExpr(E, &M) + ": got " +
                           Got->str() + ", enumeration " + Truth.str() + Input};
    }
  }

  // Injectivity: a collision is two points with the same results and the same
  // runtime values.
  if (Want(FailureKind::Injective)) {
    std::map<std::vector<int64_t>, size_t> Seen;
    std::optional<std::pair<size_t, size_t>> Collision;
    for (size_t I = 0; I < Pts.size() && !Collision; ++I) {
      std::vector<int64_t> Key = Images[I];
      std::vector<int64_t> Rt = runtimeValues(M, Pts[I]);
      Key.insert(Key.end(), Rt.begin(), Rt.end());
      auto [It, New] = Seen.emplace(Key, I);
      if (!New)
        Collision = std::make_pair(It->second, I);
    }
    QueryCounts *Q = Stats ? &Stats->Injective : nullptr;
    Answer Got = timed(Q, [&] { return isInjective(M, O); });
    if (Q)
      ++Q->Asked;
    if (Got == Answer::Unknown)
      countUnknown(Q, Why);
    else if ((Got == Answer::Yes) != !Collision)
      return Failure{
          FailureKind::Injective,
          std::string("got ") + answerName(Got) +
              (Collision ? ", but " + formatPoint(M, Pts[Collision->first]) +
                               " and " + formatPoint(M, Pts[Collision->second]) +
                               " both map to " + tupleStr(Images[Collision->first])
                         : ", enumeration found no collision") +
              (Why.empty() ? "" : " (" + Why + ")") + Input};
    else if (Q && Got == Answer::Yes)
      ++Q->Yes;
  }

  Rng R(Seed);

  // Bijectivity onto the box spanned by the results (sometimes one short).
  if (Want(FailureKind::Bijective) && !Pts.empty() && M.numResults() > 0) {
    std::vector<int64_t> Shape(M.numResults(), 0);
    bool NonNegative = true;
    for (const std::vector<int64_t> &Img : Images)
      for (size_t I = 0; I < Img.size(); ++I) {
        NonNegative = NonNegative && Img[I] >= 0;
        Shape[I] = std::max(Shape[I], Img[I] + 1);
      }
    if (R.chance(1, 4))
      Shape[0] = std::max<int64_t>(0, Shape[0] - 1);
    uint64_t BoxSize = 1;
    for (int64_t S : Shape)
      BoxSize = S > 0 && BoxSize <= (1u << 20) ? BoxSize * uint64_t(S) : 0;
    std::optional<std::vector<std::vector<int64_t>>> RtCtx =
        runtimeContext(M);
    if (NonNegative && BoxSize > 0 && BoxSize <= (1u << 20) && RtCtx) {
      // Per runtime value: distinct images, all inside the box, all of it.
      std::map<std::vector<int64_t>, std::set<std::vector<int64_t>>> PerRt;
      bool Truth = true;
      std::string Reason;
      for (size_t I = 0; I < Pts.size() && Truth; ++I) {
        std::vector<int64_t> Rt = runtimeValues(M, Pts[I]);
        for (size_t D = 0; D < Shape.size(); ++D)
          if (Images[I][D] >= Shape[D]) {
            Truth = false;
            Reason = "image " + tupleStr(Images[I]) + " outside the box";
          }
        if (!PerRt[Rt].insert(Images[I]).second && Truth) {
          Truth = false;
          Reason = "image " + tupleStr(Images[I]) + " touched twice";
        }
      }
      for (const std::vector<int64_t> &Rt : *RtCtx)
        if (Truth && PerRt[Rt].size() != BoxSize) {
          Truth = false;
          Reason = "for runtime values " + tupleStr(Rt) + " only " +
                   std::to_string(PerRt[Rt].size()) + " of " +
                   std::to_string(BoxSize) + " elements touched";
        }
      QueryCounts *Q = Stats ? &Stats->Bijective : nullptr;
      Answer Got = timed(Q, [&] { return isBijectiveOnto(M, Shape, O); });
      if (Q)
        ++Q->Asked;
      if (Got == Answer::Unknown)
        countUnknown(Q, Why);
      else if ((Got == Answer::Yes) != Truth)
        return Failure{FailureKind::Bijective,
                       std::string("onto ") + tupleStr(Shape) + ": got " +
                           answerName(Got) + (Why.empty() ? "" : " (" + Why + ")") +
                           ", enumeration says " + (Truth ? "yes" : Reason) +
                           Input};
      else if (Q && Truth)
        ++Q->Yes;
    }
  }

  // Equalities.
  if (Want(FailureKind::PointwiseEq) || Want(FailureKind::RelationEq)) {
    IndexingMap S = M;
    simplify(S);
    // areEqual on maps with the same variables starts with the pointwise
    // test (and without range variables it is nothing else), so on
    // (M, simplify(M)), and on maps without range variables, it mostly
    // repeats it: ask it for a quarter of those only (every map under the
    // minimizer).
    bool Sampled = !Stats || R.chance(1, 4);
    if (auto F = checkEquality(M, S, "M vs simplify(M)", true, Sampled, Only,
                               Stats))
      return F;
    if (auto F = checkEquality(M, perturb(M, R), "M vs perturbed M", true,
                               M.numRangeVars() > 0 || Sampled, Only, Stats))
      return F;
    if (M.numRangeVars())
      if (auto F = checkEquality(M, reflectRangeVars(M),
                                 "M vs M with reflected range vars", true,
                                 true, Only, Stats))
        return F;
  }

  // Refinement: same points and values; when fully decided, exact bounds,
  // KNOWN EMPTY exactly when empty, and idempotent.
  if (Want(FailureKind::Refine)) {
    IndexingMap Ref = M;
    QueryCounts *Q = Stats ? &Stats->Refine : nullptr;
    timed(Q, [&] { return refineExact(Ref, O); });
    bool Decided = Why.empty();
    if (Q) {
      ++Q->Asked;
      if (!Decided)
        countUnknown(Q, Why);
    }
    CheckResult C = compareMaps(M, Ref, bruteOptions());
    if (C.Status == CheckStatus::Mismatch)
      return Failure{FailureKind::Refine, "changed the meaning: " + C.str() +
                                              "\n  refined: " + printMap(Ref) +
                                              Input};
    if (Decided) {
      if (Pts.empty() != Ref.isKnownEmpty())
        return Failure{FailureKind::Refine,
                       "domain has " + std::to_string(Pts.size()) +
                           " points; refined: " + printMap(Ref) + Input};
      for (unsigned V = 0; V < M.numVars() && !Pts.empty(); ++V) {
        Interval Truth = Interval::point(Pts[0][V]);
        for (const Point &P : Pts)
          Truth = Truth.hull(Interval::point(P[V]));
        if (!(Ref.var(V).Bound == Truth))
          return Failure{FailureKind::Refine,
                         "bound of " + M.varName(V) + " is " +
                             Ref.var(V).Bound.str() + ", projection " +
                             Truth.str() + "\n  refined: " + printMap(Ref) +
                             Input};
      }
      IndexingMap Again = Ref;
      if (refineExact(Again, O) && Why.empty())
        return Failure{FailureKind::Refine,
                       "not idempotent:\n  once:  " + printMap(Ref) +
                           "\n  twice: " + printMap(Again) + Input};
    }
    if (Q && Decided)
      ++Q->Yes;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

void setCrashInfo(uint64_t Seed, uint64_t Index, const std::string &Text) {
  setCrashReport("  reproduce: fuzz_exact --seed %llu --only %llu\n  map: %s",
                 (unsigned long long)Seed, (unsigned long long)Index,
                 Text.c_str());
}

uint64_t mapSeed(uint64_t Seed, uint64_t Index) {
  Rng R(Seed * 0x9E3779B97F4A7C15ull + Index + 0x15A);
  return R.next();
}

bool parseArgs(int Argc, char **Argv, FuzzOptions &O) {
  return parseFuzzArgs(Argc, Argv, O);
}

void printCounts(const char *Name, const QueryCounts &Q, const char *YesWord) {
  printf("  %-18s %6llu asked, %6llu %-7s %4llu non-affine, %4llu undecided, "
         "%6.2f s\n",
         Name, (unsigned long long)Q.Asked, (unsigned long long)Q.Yes, YesWord,
         (unsigned long long)Q.NonAffine, (unsigned long long)Q.Undecided,
         Q.Seconds);
}

} // namespace

int main(int Argc, char **Argv) {
  FuzzOptions O;
  if (!parseArgs(Argc, Argv, O)) {
    fprintf(stderr, "usage: fuzz_exact [--seed N] [--count N] [--only INDEX] "
                    "[--max-failures N] [--no-minimize] [--verbose]\n");
    return 2;
  }
  installCrashReporter("fuzz_exact");

  auto Start = std::chrono::steady_clock::now();
  Counters C;
  uint64_t Failed = 0;
  uint64_t First = O.Only ? *O.Only : 0, Last = O.Only ? *O.Only + 1 : O.Count;
  for (uint64_t I = First; I < Last; ++I) {
    Context Ctx; // Fresh per map: a failure reproduces with --only.
    uint64_t Seed = mapSeed(O.Seed, I);
    RandomMapGenerator Gen(Ctx, Seed);
    IndexingMap M = Gen.generate();
    ++C.Maps;
    ++C.PerFamily[familyName(Gen.lastFamily())];
    std::string Text = printMap(M);
    setCrashInfo(O.Seed, I, Text);
    if (O.Verbose)
      printf("[%llu] %s\n", (unsigned long long)I, Text.c_str());
    std::optional<Failure> F = checkMap(M, std::nullopt, &C, Seed);
    if (!F)
      continue;
    ++Failed;
    ++C.Failures[unsigned(F->Kind)];
    if (Failed > O.MaxFailures)
      continue;
    printf("\nFAILURE %llu: %s\n  reproduce: fuzz_exact --seed %llu --only "
           "%llu\n  family: %s\n  %s\n",
           (unsigned long long)Failed, kindName(F->Kind),
           (unsigned long long)O.Seed, (unsigned long long)I,
           familyName(Gen.lastFamily()), F->Detail.c_str());
    if (O.Minimize) {
      FailureKind K = F->Kind;
      IndexingMap Min = minimizeMap(M, [&](const IndexingMap &Cand) {
        setCrashInfo(O.Seed, I, printMap(Cand));
        return checkMap(Cand, K, nullptr, Seed).has_value();
      });
      std::optional<Failure> MF = checkMap(Min, K, nullptr, Seed);
      printf("  minimized: %s\n  %s\n", printMap(Min).c_str(),
             MF ? MF->Detail.c_str() : "(does not fail any more?)");
    }
    fflush(stdout);
  }
  double Secs = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - Start)
                    .count();

  printf("\nfuzz_exact: seed %llu, %llu maps generated, %llu checked "
         "(%llu skipped: box too large; %llu skipped: not evaluable)\n",
         (unsigned long long)O.Seed, (unsigned long long)C.Maps,
         (unsigned long long)C.Checked, (unsigned long long)C.SkippedLarge,
         (unsigned long long)C.SkippedEval);
  printf("  %llu domain points enumerated, %llu empty domains\n",
         (unsigned long long)C.DomainPoints,
         (unsigned long long)C.EmptyDomains);
  printCounts("isEmptyExact", C.Empty, "empty,");
  printCounts("boundsExact", C.Bounds, "-,");
  printCounts("isInjective", C.Injective, "yes,");
  printCounts("isBijectiveOnto", C.Bijective, "yes,");
  printCounts("arePointwiseEqual", C.PointwiseEq, "equal,");
  printCounts("areEqual", C.RelationEq, "equal,");
  printCounts("refineExact", C.Refine, "decided,");
  printf("  families:");
  for (auto &[Name, N] : C.PerFamily)
    printf(" %s=%llu", Name.c_str(), (unsigned long long)N);
  printf("\n  time: %.1f s\n", Secs);

  // Undecided answers on representable maps: tolerated one by one, but not
  // en masse (that would mean the translation or the budget is broken).
  const QueryCounts *All[] = {&C.Empty,       &C.Bounds,     &C.Injective,
                              &C.Bijective,   &C.PointwiseEq, &C.RelationEq,
                              &C.Refine};
  bool TooManyUndecided = false;
  for (const QueryCounts *Q : All) {
    uint64_t Representable = Q->Asked - Q->NonAffine;
    if (Q->Undecided * 100 > Representable)
      TooManyUndecided = true;
  }
  if (Failed || TooManyUndecided) {
    if (TooManyUndecided)
      printf("  FAILED: more than 1%% of the representable queries of one "
             "kind were undecided\n");
    if (Failed)
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
