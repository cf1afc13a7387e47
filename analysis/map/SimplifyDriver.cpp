//===- SimplifyDriver.cpp - Tier-1 simplification driver ------------------===//
//
// Part of idxmap. The entry points simplify() and simplifyExpr(), the
// memoized bottom-up walk of ExprSimplifier, the point-range rule, and the
// exact integer helpers shared by the rules.
//
// simplify(Map) runs, as XLA's IndexingMap::Simplify does:
//   1. the constraint passes to a fixpoint (Constraints.cpp), with ranges
//      from the variable bounds only (a constraint must not be used to
//      simplify itself);
//   2. the result expressions, each to a fixpoint, with ranges that also use
//      the constraints.
// Both phases only ever replace an expression by one that has the same value
// at every point of the domain, so the map's meaning is unchanged. The
// output is canonical (summands in compareStructurally order, constants
// last), and simplify(simplify(m)) == simplify(m).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Simplify.h"

#include "ExprStorage.h"
#include "SimplifyInternal.h"

#include <cassert>

namespace idxmap {
namespace detail {

//===----------------------------------------------------------------------===//
// Integer helpers
//===----------------------------------------------------------------------===//

int64_t gcd64(int64_t A, int64_t B) {
  auto Abs = [](int64_t V) -> uint64_t {
    return V < 0 ? uint64_t(0) - static_cast<uint64_t>(V)
                 : static_cast<uint64_t>(V);
  };
  uint64_t X = Abs(A), Y = Abs(B);
  while (Y) {
    uint64_t T = X % Y;
    X = Y;
    Y = T;
  }
  // Only gcd(INT64_MIN, INT64_MIN or 0) reaches 2^63.
  if (X > static_cast<uint64_t>(INT64_MAX))
    return int64_t(1) << 62;
  return static_cast<int64_t>(X);
}

std::optional<int64_t> lcm64(int64_t A, int64_t B) {
  if (A <= 0 || B <= 0)
    return std::nullopt;
  return checkedMul(A / gcd64(A, B), B);
}

std::optional<int64_t> abs64(int64_t V) {
  if (V == INT64_MIN)
    return std::nullopt;
  return V < 0 ? -V : V;
}

__int128 floorDiv128(__int128 A, __int128 B) {
  assert(B != 0);
  __int128 Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}

__int128 ceilDiv128(__int128 A, __int128 B) {
  assert(B != 0);
  __int128 Q = A / B;
  if ((A % B != 0) && ((A < 0) == (B < 0)))
    ++Q;
  return Q;
}

int64_t clamp64(__int128 V) {
  if (V < static_cast<__int128>(INT64_MIN))
    return INT64_MIN;
  if (V > static_cast<__int128>(INT64_MAX))
    return INT64_MAX;
  return static_cast<int64_t>(V);
}

Interval clampInterval(__int128 Lo, __int128 Hi) {
  if (Lo > Hi || Lo > static_cast<__int128>(INT64_MAX) ||
      Hi < static_cast<__int128>(INT64_MIN))
    return Interval::empty();
  return {clamp64(Lo), clamp64(Hi)};
}

Interval scaleInterval(const Interval &R, int64_t K) {
  if (K == 1)
    return R;
  return R * K;
}

//===----------------------------------------------------------------------===//
// ExprSimplifier
//===----------------------------------------------------------------------===//

ExprSimplifier::ExprSimplifier(RangeEvaluator &RE, bool ReplacePointDims,
                               SimplifyStats *Stats)
    : RE(RE), Ctx(RE.map().contextPtr()), ReplacePointDims(ReplacePointDims),
      Stats(Stats) {
  if (!ReplacePointDims && Ctx)
    for (unsigned I = 0, E = RE.map().numDims(); I < E; ++I)
      if (RE.map().dims()[I].Bound.isPoint()) {
        if (I < 63)
          PointDimMask |= uint64_t(1) << I;
        else
          AnyPointDimBeyondMask = true;
      }
}

/// With ReplacePointDims == false (XLA's kPreserve, used by reshape and
/// bitcast indexing), an expression that mentions a dim with a one-point
/// bound is kept, so that such dims do not vanish from the map.
bool ExprSimplifier::mayReplaceByConstant(Expr E) {
  if (ReplacePointDims)
    return true;
  uint64_t Mask = E.storage()->DimMask;
  if (Mask & PointDimMask & ~(uint64_t(1) << 63))
    return false;
  if ((Mask >> 63) && AnyPointDimBeyondMask) {
    const IndexingMap &M = RE.map();
    for (unsigned I = 63; I < M.numDims(); ++I)
      if (M.dims()[I].Bound.isPoint() && E.usesDim(I))
        return false;
  }
  return true;
}

Expr ExprSimplifier::simplify(Expr E) {
  if (E.isConstant())
    return E;
  auto It = Memo.find(E);
  if (It != Memo.end())
    return It->second;
  // Deep recursion (pathological inputs) stops rewriting, which is always
  // sound: the expression is returned unchanged.
  if (Depth > 1000)
    return E;
  ++Depth;
  Expr Cur = E;
  for (unsigned Iter = 0; Iter < 32; ++Iter) {
    Expr Next = simplifyOnce(Cur);
    if (Next == Cur)
      break;
    Cur = Next;
    // A known fixpoint ends the loop early.
    auto Known = Memo.find(Cur);
    if (Known != Memo.end()) {
      Cur = Known->second;
      break;
    }
  }
  --Depth;
  Memo[E] = Cur;
  Memo.emplace(Cur, Cur);
  return Cur;
}

Expr ExprSimplifier::simplifyOnce(Expr E) {
  if (E.isConstant())
    return E;
  // Rule: a subexpression whose range is a single point is that constant.
  ExprInfo Info = RE.info(E);
  if (Info.Range.isPoint() && mayReplaceByConstant(E)) {
    hit("point-range");
    return Ctx->constant(Info.Range.Lo);
  }
  switch (E.kind()) {
  case ExprKind::Constant:
  case ExprKind::Dim:
  case ExprKind::Symbol:
    return E;
  case ExprKind::Add:
    return rewriteAdd(E);
  case ExprKind::Mul:
    return rewriteMul(simplify(E.lhs()), simplify(E.rhs()));
  case ExprKind::FloorDiv:
    return rewriteFloorDiv(simplify(E.lhs()), simplify(E.rhs()));
  case ExprKind::CeilDiv:
    return rewriteCeilDiv(simplify(E.lhs()), simplify(E.rhs()));
  case ExprKind::Mod:
    return rewriteMod(simplify(E.lhs()), simplify(E.rhs()));
  }
  return E;
}

} // namespace detail

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

using namespace detail;

bool simplify(IndexingMap &Map, const SimplifyOptions &Options) {
  if (Map.isUndefined() || Map.isKnownEmpty())
    return false;
  std::vector<Expr> OldResults = Map.results();

  bool Changed = simplifyConstraints(Map, Options.Stats);
  if (Map.isKnownEmpty())
    return true;

  RangeEvaluator RE(Map, /*UseConstraints=*/true);
  ExprSimplifier S(RE, Options.ReplacePointDims, Options.Stats);
  std::vector<Expr> Results;
  Results.reserve(Map.numResults());
  for (Expr E : Map.results())
    Results.push_back(S.simplify(E));
  if (Results != OldResults) {
    Changed = true;
    Map.setResults(std::move(Results));
  }
  return Changed;
}

Expr simplifyExpr(Expr E, const IndexingMap &Map, bool UseConstraints,
                  const SimplifyOptions &Options) {
  if (!E || Map.isUndefined() || Map.isKnownEmpty())
    return E;
  RangeEvaluator RE(Map, UseConstraints);
  ExprSimplifier S(RE, Options.ReplacePointDims, Options.Stats);
  return S.simplify(E);
}

} // namespace idxmap
