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
// at every point of the domain, so the map's meaning is unchanged, and by
// one that evaluates without int64 overflow wherever the old one does (the
// overflow guard below). The output is canonical (summands in
// compareStructurally order, constants last; when the guard refuses that
// order, still a left-nested sum that print -> parse reproduces), and
// simplify(simplify(m)) == simplify(m).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Simplify.h"

#include "ExprStorage.h"
#include "SimplifyInternal.h"

#include <algorithm>
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
// Overflow guard
//===----------------------------------------------------------------------===//
//
// A rewrite replaces an expression E by a candidate C with the same value at
// every domain point. Evaluated node by node in checked int64 arithmetic (as
// codegen with `nsw` does), C may still overflow where E does not: the
// intermediate nodes differ (`s0 + s0 mod 3` has the value 2*s0 - 3q, but
// `s0 * 2 - 3q` computes 2*s0). Every rule therefore asks fitsBelowRoot()
// before it returns a candidate, and keeps its input when the answer is no.
//
// Claim: if fitsBelowRoot(C, Refs) and the nodes of Refs evaluate at a point
// p wherever E does, then C evaluates at p wherever E does.
// Proof, bottom-up over C's nodes N below the root: a leaf evaluates; a node
// of Refs evaluates by assumption; otherwise every operand of N evaluates
// (induction), so N's exact value lies in the interval nodeRange computes
// from sound intervals of its operands (interval arithmetic in 128 bits, or
// the RangeEvaluator's range of N, which is sound once N's operands
// evaluate), and nodeRange only answers when that interval lies in int64
// and no operand range admits a division by zero or INT64_MIN / -1. The
// root has E's value, so it fits wherever E evaluates. The RangeEvaluator
// reports the full range whenever its own arithmetic overflows; a full range
// is never taken as proof.
//
// The operands a rule names as Refs are its input's operands after
// simplification; they evaluate wherever the input does because each was
// itself produced by guarded rewrites, which is the same claim one level
// down. By induction, simplify() never adds an overflow.

namespace {

using i128 = __int128;

std::optional<Interval> intervalIfFits(i128 Lo, i128 Hi) {
  if (Lo < static_cast<i128>(INT64_MIN) || Hi > static_cast<i128>(INT64_MAX))
    return std::nullopt;
  return Interval{static_cast<int64_t>(Lo), static_cast<int64_t>(Hi)};
}

std::optional<Interval> addRanges(const Interval &A, const Interval &B) {
  return intervalIfFits(static_cast<i128>(A.Lo) + B.Lo,
                        static_cast<i128>(A.Hi) + B.Hi);
}

std::optional<Interval> mulRanges(const Interval &A, const Interval &B) {
  const i128 C[4] = {
      static_cast<i128>(A.Lo) * B.Lo, static_cast<i128>(A.Lo) * B.Hi,
      static_cast<i128>(A.Hi) * B.Lo, static_cast<i128>(A.Hi) * B.Hi};
  return intervalIfFits(std::min(std::min(C[0], C[1]), std::min(C[2], C[3])),
                        std::max(std::max(C[0], C[1]), std::max(C[2], C[3])));
}

} // namespace

std::optional<Interval> ExprSimplifier::nodeRange(Expr E, const Interval &L,
                                                  const Interval &R) {
  // An operand with no value in the domain: the node is never evaluated.
  if (L.isEmpty() || R.isEmpty())
    return Interval::empty();
  switch (E.kind()) {
  case ExprKind::Add: {
    if (auto S = addRanges(L, R))
      return S;
    // Correlated operands (`x*k - (x fd c)*(c*k)`): the RangeEvaluator's
    // range of the whole sum.
    Interval Whole = RE.range(E);
    if (!Whole.isFull())
      return Whole;
    return std::nullopt;
  }
  case ExprKind::Mul: {
    if (auto P = mulRanges(L, R))
      return P;
    // Both are sound: their intersection too (the RangeEvaluator sees
    // correlations inside a sum operand that interval arithmetic does not).
    Interval L2 = L.intersect(RE.range(E.lhs()));
    Interval R2 = R.intersect(RE.range(E.rhs()));
    if (L2.isEmpty() || R2.isEmpty())
      return Interval::empty();
    return mulRanges(L2, R2);
  }
  case ExprKind::FloorDiv:
  case ExprKind::CeilDiv: {
    if (R.contains(0) || (L.contains(INT64_MIN) && R.contains(-1)))
      return std::nullopt;
    bool Ceil = E.kind() == ExprKind::CeilDiv;
    if (R.isPoint()) // Exact in int64 now.
      return Ceil ? L.ceilDiv(R.Lo) : L.floorDiv(R.Lo);
    // R has one sign: the quotient is monotone in each operand.
    i128 Lo = 0, Hi = 0;
    bool First = true;
    for (int64_t N : {L.Lo, L.Hi})
      for (int64_t D : {R.Lo, R.Hi}) {
        i128 Q = Ceil ? ceilDiv128(N, D) : floorDiv128(N, D);
        Lo = First ? Q : std::min(Lo, Q);
        Hi = First ? Q : std::max(Hi, Q);
        First = false;
      }
    return intervalIfFits(Lo, Hi);
  }
  case ExprKind::Mod:
    if (R.contains(0))
      return std::nullopt;
    if (R.isPoint())
      return L.mod(R.Lo);
    return R.Lo > 0 ? Interval{0, R.Hi - 1} : Interval{R.Lo + 1, 0};
  default:
    return std::nullopt;
  }
}

Interval ExprSimplifier::leafRange(const ExprStorage *S) {
  if (S->Kind == ExprKind::Constant)
    return Interval::point(S->Value);
  // A variable's bound (the RangeEvaluator may know a tighter range from
  // constraints; the bound is sound and cheaper).
  const IndexingMap &M = RE.map();
  uint64_t P = static_cast<uint64_t>(S->Value);
  if (S->Kind == ExprKind::Dim)
    return P < M.numDims() ? M.dims()[P].Bound : Interval::full();
  return P < M.numSymbols() ? M.var(M.numDims() + P).Bound : Interval::full();
}

ExprSimplifier::FitInfo ExprSimplifier::fitInfo(Expr E) {
  const ExprStorage *S = E.storage();
  if (S->Kind < ExprKind::Add)
    return {true, leafRange(S)};
  auto It = Fit.find(E);
  if (It != Fit.end())
    return It->second;
  auto Known = [&](Expr N) {
    return N.storage()->Kind < ExprKind::Add || Fit.count(N);
  };
  auto Get = [&](Expr N) -> FitInfo {
    if (N.storage()->Kind < ExprKind::Add)
      return {true, leafRange(N.storage())};
    return Fit.at(N);
  };
  // Bottom-up with a worklist, not recursion: a sum of N terms is N deep.
  std::vector<std::pair<Expr, bool>> Work{{E, false}};
  while (!Work.empty()) {
    auto [N, Expanded] = Work.back();
    Work.pop_back();
    if (Known(N))
      continue;
    if (!Expanded) {
      Work.push_back({N, true});
      Work.push_back({N.rhs(), false});
      Work.push_back({N.lhs(), false});
      continue;
    }
    FitInfo L = Get(N.lhs()), R = Get(N.rhs());
    FitInfo Out{false, Interval::full()};
    if (L.Fits && R.Fits)
      if (auto NR = nodeRange(N, L.Range, R.Range))
        Out = {true, *NR};
    Fit.emplace(N, Out);
  }
  return Fit.at(E);
}

bool ExprSimplifier::isRefNode(Expr E, const ExprRefs &Refs,
                               RelativeState &St) {
  if (!St.Built) {
    St.Built = true;
    std::vector<Expr> Stack;
    if (Refs.isSumLeaves()) {
      // The leaves below `+` and `* constant`, and what they simplified to
      // (their memoized results).
      std::vector<Expr> Work(Refs.begin(), Refs.end());
      while (!Work.empty()) {
        Expr N = Work.back();
        Work.pop_back();
        if (N.kind() == ExprKind::Add ||
            (N.kind() == ExprKind::Mul && N.rhs().isConstant())) {
          Work.push_back(N.lhs());
          Work.push_back(N.rhs());
          continue;
        }
        Stack.push_back(N);
        auto It = Memo.find(N);
        if (It != Memo.end())
          Stack.push_back(It->second);
      }
    } else {
      Stack.assign(Refs.begin(), Refs.end());
    }
    while (!Stack.empty()) {
      Expr N = Stack.back();
      Stack.pop_back();
      if (!N || !N.isBinary() || !St.RefNodes.insert(N.storage()).second)
        continue;
      Stack.push_back(N.lhs());
      Stack.push_back(N.rhs());
    }
  }
  return St.RefNodes.count(E.storage()) != 0;
}

std::optional<Interval>
ExprSimplifier::rangeRelative(Expr E, const ExprRefs &Refs, RelativeState &St) {
  // Bottom-up with a worklist over the nodes that neither fit by ranges
  // alone nor are nodes of Refs; nullopt propagates upward.
  auto Direct = [&](Expr N) -> std::optional<std::optional<Interval>> {
    FitInfo F = fitInfo(N);
    if (F.Fits)
      return std::optional<Interval>(F.Range);
    auto It = St.Memo.find(N.storage());
    if (It != St.Memo.end())
      return It->second;
    if (isRefNode(N, Refs, St)) {
      // It evaluates; the RangeEvaluator's range is then sound (full when
      // it knows nothing, which still contains the value).
      std::optional<Interval> R = RE.range(N);
      St.Memo.emplace(N.storage(), R);
      return R;
    }
    return std::nullopt; // to be computed from its operands
  };
  std::vector<std::pair<Expr, bool>> Work{{E, false}};
  while (!Work.empty()) {
    auto [N, Expanded] = Work.back();
    Work.pop_back();
    if (Direct(N))
      continue;
    if (!Expanded) {
      Work.push_back({N, true});
      Work.push_back({N.rhs(), false});
      Work.push_back({N.lhs(), false});
      continue;
    }
    std::optional<Interval> L = *Direct(N.lhs()), R = *Direct(N.rhs());
    std::optional<Interval> Out;
    if (L && R)
      Out = nodeRange(N, *L, *R);
    St.Memo.emplace(N.storage(), Out);
  }
  return *Direct(E);
}

bool ExprSimplifier::fitsBelowRoot(Expr Candidate, const ExprRefs &Refs) {
  if (!Candidate.isBinary())
    return true;
  if (fitInfo(Candidate.lhs()).Fits && fitInfo(Candidate.rhs()).Fits)
    return true;
  RelativeState St;
  bool Ok = rangeRelative(Candidate.lhs(), Refs, St) &&
            rangeRelative(Candidate.rhs(), Refs, St);
  if (!Ok)
    hit("guard.overflow");
  return Ok;
}

bool ExprSimplifier::fitsEverywhere(Expr Candidate, const ExprRefs &Refs) {
  if (!Candidate.isBinary() || fitInfo(Candidate).Fits)
    return true;
  RelativeState St;
  bool Ok = rangeRelative(Candidate, Refs, St).has_value();
  if (!Ok)
    hit("guard.overflow");
  return Ok;
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
  case ExprKind::CeilDiv:
  case ExprKind::Mod: {
    // A divisor that is zero on the whole box leaves E undefined wherever
    // it is evaluated; a literal zero divisor would not even parse back
    // (`s0 mod (s0 floordiv 4)` with s0 in [0, 1]). Keep E as written.
    Expr Rhs = simplify(E.rhs());
    if (Rhs.isConstant(0))
      return E;
    Expr Lhs = simplify(E.lhs());
    if (E.kind() == ExprKind::FloorDiv)
      return rewriteFloorDiv(Lhs, Rhs);
    if (E.kind() == ExprKind::CeilDiv)
      return rewriteCeilDiv(Lhs, Rhs);
    return rewriteMod(Lhs, Rhs);
  }
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
