//===- RangeEvaluator.cpp - Interval bounds and divisibility --------------===//
//
// Part of idxmap. Computes, bottom-up and memoized per Expr, a sound interval
// and a divisor of every expression over a map's domain.
//
// Soundness argument per node kind:
//   - leaves: a constant is its own point; a variable lies in its bound.
//   - `a + b`, `a * b`: interval arithmetic (checked; overflow gives the
//     full range).
//   - `a fd k`, `a cd k` for a constant k != 0: floor and ceil are monotone,
//     so the end points map to the end points (swapped for k < 0).
//   - `a fd b` with a non-constant b: for b of one sign, a / b is monotone in
//     a and in b separately, so its extremes over the box are at the corners;
//     floor/ceil keep that. b's range is split at 0 (division by zero has no
//     value) and the two parts are joined.
//   - `a mod m`: [0, m-1] for m > 0 ([m+1, 0] for m < 0), exact inside one
//     period.
//   - divisors: a sum is divisible by the gcd of its summands' divisors; a
//     product by the product; `a fd k` by D/k when k | D; `a mod m` by
//     gcd(D, m). A range is snapped to multiples of its divisor.
//   - correlated sums: inside a flattened sum, `X*k - (X fd c)*(c*k)` is
//     evaluated as `(X mod c)*k` and `(X mod c)*k + (X fd c)*(c*k)` as
//     `X*k` (both exact identities), which is far tighter than adding the
//     ranges of the parts.
//   - constraints (when enabled): an expression equal to a constraint's
//     expression is intersected with its interval; `X mod c in [0, 0]` makes
//     X divisible by c. Both hold at every point of the domain.
//
//===----------------------------------------------------------------------===//
#include "idxmap/RangeEvaluator.h"

#include "SimplifyInternal.h"

#include "idxmap/ExprVisitor.h"

#include <algorithm>
#include <cstdint>
#include <unordered_set>

namespace idxmap {

using namespace detail;

namespace {

/// A summand during range evaluation: the base's facts are kept explicitly
/// so that rewritten summands (like `X mod c`) need no Expr.
struct RangeTerm {
  Expr Base;
  int64_t Coeff;
  ExprInfo Info;
  bool Dead = false;
  /// Info no longer describes Base (the summand was rewritten); Base stays
  /// as the sort key.
  bool Rewritten = false;
};

/// Divisor used in gcd accumulation: 0 for an expression that is always 0.
int64_t gcdDivisor(const ExprInfo &I) {
  if (I.Range.isPoint() && I.Range.Lo == 0)
    return 0;
  return I.Divisor;
}

/// Snaps the range to multiples of the divisor.
void snapToDivisor(ExprInfo &I) {
  if (I.Divisor <= 1 || I.Range.isEmpty() || I.Range.isFull())
    return;
  __int128 D = I.Divisor;
  __int128 Lo = ceilDiv128(I.Range.Lo, D) * D;
  __int128 Hi = floorDiv128(I.Range.Hi, D) * D;
  I.Range = clampInterval(Lo, Hi);
}

/// Range of `X mod M` for a constant M != 0 given X's facts.
ExprInfo modInfo(const ExprInfo &X, int64_t M) {
  ExprInfo R;
  R.Range = X.Range.mod(M);
  int64_t AbsM = abs64(M).value_or(int64_t(1) << 62);
  R.Divisor = std::max<int64_t>(1, gcd64(gcdDivisor(X), AbsM));
  if (gcdDivisor(X) == 0)
    R.Divisor = 1;
  snapToDivisor(R);
  return R;
}

/// Hull of floor/ceil quotients at the corners of Num x Den, where Den does
/// not contain 0.
Interval cornerQuotients(const Interval &Num, const Interval &Den, bool Ceil) {
  Interval R = Interval::empty();
  const int64_t Ns[2] = {Num.Lo, Num.Hi}, Ds[2] = {Den.Lo, Den.Hi};
  for (int64_t N : Ns)
    for (int64_t D : Ds) {
      auto Q = Ceil ? checkedCeilDiv(N, D) : checkedFloorDiv(N, D);
      if (!Q)
        return Interval::full();
      R = R.hull(Interval::point(*Q));
    }
  return R;
}

Interval symbolicDivRange(const Interval &Num, const Interval &Den, bool Ceil) {
  if (Num.isEmpty() || Den.isEmpty())
    return Interval::empty();
  Interval Neg = Den.intersect({Interval::Min, -1});
  Interval Pos = Den.intersect({1, Interval::Max});
  if (Neg.isEmpty() && Pos.isEmpty())
    return Interval::full(); // Always a division by zero: no value at all.
  Interval R = Interval::empty();
  if (!Neg.isEmpty())
    R = R.hull(cornerQuotients(Num, Neg, Ceil));
  if (!Pos.isEmpty())
    R = R.hull(cornerQuotients(Num, Pos, Ceil));
  return R;
}

Interval symbolicModRange(const Interval &Num, const Interval &Den) {
  if (Num.isEmpty() || Den.isEmpty())
    return Interval::empty();
  Interval Neg = Den.intersect({Interval::Min, -1});
  Interval Pos = Den.intersect({1, Interval::Max});
  if (Neg.isEmpty() && Pos.isEmpty())
    return Interval::full();
  Interval R = Interval::empty();
  if (!Pos.isEmpty()) {
    // x mod y in [0, y - 1]; x mod y == x when 0 <= x < y.
    if (Num.Lo >= 0 && Num.Hi < Pos.Lo)
      R = R.hull(Num);
    else
      R = R.hull({0, Pos.Hi - 1});
  }
  if (!Neg.isEmpty()) {
    // x mod y in [y + 1, 0]; x mod y == x when y < x <= 0.
    if (Num.Hi <= 0 && Num.Lo > Neg.Hi)
      R = R.hull(Num);
    else
      R = R.hull({Neg.Lo + 1, 0});
  }
  return R;
}

} // namespace

RangeEvaluator::RangeEvaluator(const IndexingMap &Map, bool UseConstraints)
    : Map(Map), UseConstraints(UseConstraints && !Map.isUndefined() &&
                               !Map.constraints().empty()) {
  if (!this->UseConstraints)
    return;
  for (const Constraint &C : Map.constraints()) {
    auto [It, New] = ByExpr.emplace(C.E, C.I);
    if (!New)
      It->second = It->second.intersect(C.I);
    // `E mod c in [0, 0]` means c divides E.
    if (C.E.kind() == ExprKind::Mod && C.E.rhs().isConstant() &&
        C.I.isPoint() && C.I.Lo == 0)
      DivisorsOf[C.E.lhs()].push_back(C.E.rhs().value());
  }
}

void RangeEvaluator::applyConstraintFacts(Expr E, ExprInfo &Info) const {
  if (auto It = ByExpr.find(E); It != ByExpr.end())
    Info.Range = Info.Range.intersect(It->second);
  auto It = DivisorsOf.find(E);
  if (It == DivisorsOf.end())
    return;
  for (int64_t C : It->second) {
    auto AbsC = abs64(C);
    if (!AbsC || *AbsC == 0)
      continue;
    if (auto L = lcm64(Info.Divisor, *AbsC))
      Info.Divisor = *L;
  }
}

namespace {
/// Flattens a sum for range evaluation. Sub-sums that carry a constraint are
/// kept as opaque summands so that their constraint is used.
struct RangeFlattener {
  RangeEvaluator &RE;
  const IndexingMap &Map;
  bool UseConstraints;
  std::vector<std::pair<Expr, int64_t>> Terms;
  int64_t Constant = 0;
  bool Overflow = false;

  void run(Expr Root, int64_t RootK) {
    // A worklist in tree order (left operand first), not recursion: a sum
    // of N terms is a tree N deep.
    struct Item {
      Expr E;
      int64_t K;
      bool Top;
    };
    std::vector<Item> Work{{Root, RootK, true}};
    while (!Work.empty() && !Overflow) {
      Item I = Work.back();
      Work.pop_back();
      Expr E = I.E;
      bool Opaque = !I.Top && UseConstraints && RE.isConstrained(E);
      if (!Opaque && E.kind() == ExprKind::Add) {
        Work.push_back({E.rhs(), I.K, false});
        Work.push_back({E.lhs(), I.K, false});
        continue;
      }
      if (!Opaque && E.kind() == ExprKind::Mul && E.rhs().isConstant()) {
        auto K2 = checkedMul(I.K, E.rhs().value());
        if (!K2) {
          Overflow = true;
          return;
        }
        Work.push_back({E.lhs(), *K2, false});
        continue;
      }
      if (E.isConstant()) {
        auto P = checkedMul(I.K, E.value());
        auto S = P ? checkedAdd(Constant, *P) : std::nullopt;
        if (!S) {
          Overflow = true;
          return;
        }
        Constant = *S;
        continue;
      }
      if (Terms.capacity() == 0)
        Terms.reserve(8); // One allocation for the usual few summands.
      Terms.push_back({E, I.K});
    }
  }
};
} // namespace

/// The plain interval sum of \p E's summands (the operands of its chain of
/// `+` nodes, walked without recursion) and the gcd of their divisors: the
/// fallback when flattening the sum overflows.
static ExprInfo addSummands(RangeEvaluator &RE, Expr E) {
  std::vector<Expr> Work{E};
  ExprInfo Out;
  Out.Range = Interval::point(0);
  int64_t G = 0;
  while (!Work.empty()) {
    Expr N = Work.back();
    Work.pop_back();
    if (N.kind() == ExprKind::Add) {
      Work.push_back(N.rhs());
      Work.push_back(N.lhs());
      continue;
    }
    ExprInfo I = RE.info(N);
    Out.Range = Out.Range + I.Range;
    G = gcd64(G, gcdDivisor(I));
  }
  Out.Divisor = std::max<int64_t>(1, G);
  return Out;
}

/// Merges summands with the same base (X = s0 + s0 lists s0 twice; each
/// base must be looked up once) and drops zero coefficients. False on
/// overflow.
static bool mergeEqualBases(std::vector<std::pair<Expr, int64_t>> &Terms) {
  std::sort(Terms.begin(), Terms.end(), [](const auto &A, const auto &B) {
    return A.first.storage() < B.first.storage();
  });
  size_t Out = 0;
  for (size_t I = 0; I < Terms.size(); ++I) {
    if (Out > 0 && Terms[Out - 1].first == Terms[I].first) {
      auto S = checkedAdd(Terms[Out - 1].second, Terms[I].second);
      if (!S)
        return false;
      Terms[Out - 1].second = *S;
      continue;
    }
    Terms[Out++] = Terms[I];
  }
  Terms.resize(Out);
  Terms.erase(std::remove_if(Terms.begin(), Terms.end(),
                             [](const auto &T) { return T.second == 0; }),
              Terms.end());
  return true;
}

/// Evaluates a sum, recognizing `X*k - (X fd c)*(c*k)` and
/// `(X mod c)*k + (X fd c)*(c*k)`.
static ExprInfo evaluateSum(RangeEvaluator &RE, const IndexingMap &Map,
                            bool UseConstraints, Expr E) {
  RangeFlattener F{RE, Map, UseConstraints, {}, 0, false};
  F.run(E, 1);
  if (F.Overflow)
    return addSummands(RE, E);
  // Merge equal bases (order by pointer; the order is irrelevant here).
  std::sort(F.Terms.begin(), F.Terms.end(), [](const auto &A, const auto &B) {
    return A.first.storage() < B.first.storage();
  });
  std::vector<RangeTerm> Terms;
  Terms.reserve(F.Terms.size());
  int64_t Constant = F.Constant;
  bool Overflow = false;
  for (const auto &[Base, K] : F.Terms) {
    if (!Terms.empty() && Terms.back().Base == Base) {
      auto S = checkedAdd(Terms.back().Coeff, K);
      if (!S) {
        Overflow = true;
        break;
      }
      Terms.back().Coeff = *S;
      continue;
    }
    Terms.push_back({Base, K, ExprInfo(), false});
  }
  if (Overflow) {
    ExprInfo Out;
    Out.Range = addSummands(RE, E).Range;
    return Out;
  }
  for (RangeTerm &T : Terms)
    if (T.Coeff != 0)
      T.Info = RE.info(T.Base);
    else
      T.Dead = true;

  // Correlated pairs. Indexed lookups keep this O(n log n).
  bool HasDiv = false;
  for (const RangeTerm &T : Terms)
    HasDiv |= !T.Dead && T.Base.kind() == ExprKind::FloorDiv &&
              T.Base.rhs().isConstant() && T.Base.rhs().value() != 0;
  if (HasDiv && Terms.size() >= 2) {
    // Index of live terms by base pointer (Terms is sorted by pointer).
    auto Find = [&](Expr B) -> RangeTerm * {
      auto It = std::lower_bound(Terms.begin(), Terms.end(), B,
                                 [](const RangeTerm &T, Expr X) {
                                   return T.Base.storage() < X.storage();
                                 });
      if (It == Terms.end() || It->Base != B || It->Dead || It->Rewritten)
        return nullptr;
      return &*It;
    };
    // Mod terms indexed by (lhs, rhs) pointers.
    std::vector<std::pair<std::pair<const void *, const void *>, size_t>> Mods;
    for (size_t I = 0; I < Terms.size(); ++I)
      if (!Terms[I].Dead && Terms[I].Base.kind() == ExprKind::Mod)
        Mods.push_back(
            {{Terms[I].Base.lhs().storage(), Terms[I].Base.rhs().storage()},
             I});
    std::sort(Mods.begin(), Mods.end());
    auto FindMod = [&](Expr X, Expr C) -> RangeTerm * {
      std::pair<const void *, const void *> Key{X.storage(), C.storage()};
      auto It = std::lower_bound(
          Mods.begin(), Mods.end(), Key,
          [](const auto &A, const auto &K) { return A.first < K; });
      if (It == Mods.end() || It->first != Key || Terms[It->second].Dead ||
          Terms[It->second].Rewritten)
        return nullptr;
      return &Terms[It->second];
    };
    size_t N = Terms.size();
    for (size_t I = 0; I < N; ++I) {
      RangeTerm &D = Terms[I];
      if (D.Dead || D.Rewritten || D.Base.kind() != ExprKind::FloorDiv ||
          !D.Base.rhs().isConstant())
        continue;
      int64_t C = D.Base.rhs().value();
      if (C == 0 || D.Coeff % C != 0)
        continue;
      Expr X = D.Base.lhs();
      int64_t K = D.Coeff / C; // D.Coeff == C * K.
      // (X mod c)*K + (X fd c)*(c*K) == X*K.
      if (RangeTerm *M = FindMod(X, D.Base.rhs()); M && M->Coeff == K) {
        M->Dead = true;
        D.Rewritten = true;
        D.Coeff = K;
        D.Info = RE.info(X);
        continue;
      }
      // (X fd c)*(c*K) == X*K - (X mod c)*K: cancel X's summands if all
      // of them are present with the opposite sign.
      RangeFlattener FX{RE, Map, false, {}, 0, false};
      FX.run(X, 1);
      if (FX.Overflow || !mergeEqualBases(FX.Terms) || FX.Terms.empty())
        continue;
      bool AllPresent = true;
      for (const auto &[XB, XA] : FX.Terms) {
        RangeTerm *T = Find(XB);
        auto Want = checkedMul(XA, K);
        if (!T || !Want || T == &D ||
            !((T->Coeff > 0 && *Want < 0) || (T->Coeff < 0 && *Want > 0))) {
          AllPresent = false;
          break;
        }
      }
      if (!AllPresent)
        continue;
      bool Ovf = false;
      for (const auto &[XB, XA] : FX.Terms) {
        RangeTerm *T = Find(XB);
        auto Want = checkedMul(XA, K);
        auto S = Want ? checkedAdd(T->Coeff, *Want) : std::nullopt;
        if (!S) {
          Ovf = true;
          break;
        }
        T->Coeff = *S;
        if (T->Coeff == 0)
          T->Dead = true;
      }
      auto CK = checkedMul(FX.Constant, K);
      auto NC = CK ? checkedAdd(Constant, *CK) : std::nullopt;
      if (Ovf || !NC) {
        ExprInfo Out;
        Out.Range = addSummands(RE, E).Range;
        return Out;
      }
      Constant = *NC;
      // The summand becomes (X mod c) * (-K).
      D.Info = modInfo(RE.info(X), C);
      D.Coeff = -K;
      D.Rewritten = true;
    }
  }

  ExprInfo Out;
  Interval Sum = Interval::point(Constant);
  int64_t G = abs64(Constant).value_or(1);
  for (const RangeTerm &T : Terms) {
    if (T.Dead)
      continue;
    Sum = Sum + scaleInterval(T.Info.Range, T.Coeff);
    int64_t TD = gcdDivisor(T.Info);
    if (TD != 0) {
      auto P = checkedMul(TD, abs64(T.Coeff).value_or(1));
      G = gcd64(G, P ? *P : abs64(T.Coeff).value_or(1));
    }
  }
  Out.Range = Sum;
  Out.Divisor = std::max<int64_t>(1, G);
  return Out;
}

void RangeEvaluator::computeOperandsFirst(Expr E) {
  // Each node's operands are known when it is visited: info() goes one
  // level deep.
  const bool Outer = !Walking;
  Walking = true;
  visitOperandsPostOrder(
      E, [&](Expr N) { return Cache.count(N) != 0; },
      [&](Expr N) {
        info(N);
        return true;
      });
  Walking = !Outer;
}

ExprInfo RangeEvaluator::info(Expr E) {
  auto It = Cache.find(E);
  if (It != Cache.end())
    return It->second;
  // Expressions built by composition can be deeper than anything parsed:
  // past a few hundred nested calls, the operands are evaluated bottom-up
  // first, so that the recursion below stays one level deep.
  if (Depth > 200 && E.isBinary() && !Walking)
    computeOperandsFirst(E);
  struct DepthGuard {
    unsigned &D;
    explicit DepthGuard(unsigned &D) : D(D) { ++D; }
    ~DepthGuard() { --D; }
  } Guard(Depth);

  ExprInfo Out;
  switch (E.kind()) {
  case ExprKind::Constant:
    Out.Range = Interval::point(E.value());
    Out.Divisor = std::max<int64_t>(1, abs64(E.value()).value_or(1));
    break;
  case ExprKind::Dim:
    if (E.position() < Map.numDims())
      Out.Range = Map.bound(E);
    break;
  case ExprKind::Symbol:
    if (E.position() < Map.numSymbols())
      Out.Range = Map.bound(E);
    break;
  case ExprKind::Add:
    Out = evaluateSum(*this, Map, UseConstraints, E);
    break;
  case ExprKind::Mul: {
    ExprInfo L = info(E.lhs()), R = info(E.rhs());
    Out.Range = L.Range * R.Range;
    // A square is non-negative (not after an overflow: the full range must
    // stay full, it means "unknown").
    if (E.lhs() == E.rhs() && !Out.Range.isEmpty() && !Out.Range.isFull())
      Out.Range.Lo = std::max<int64_t>(Out.Range.Lo, 0);
    auto P = checkedMul(L.Divisor, R.Divisor);
    Out.Divisor = P ? *P : std::max(L.Divisor, R.Divisor);
    break;
  }
  case ExprKind::FloorDiv:
  case ExprKind::CeilDiv: {
    bool Ceil = E.kind() == ExprKind::CeilDiv;
    ExprInfo L = info(E.lhs()), R = info(E.rhs());
    if (R.Range.isPoint() && R.Range.Lo != 0) {
      int64_t K = R.Range.Lo;
      Out.Range = Ceil ? L.Range.ceilDiv(K) : L.Range.floorDiv(K);
      if (auto AbsK = abs64(K); AbsK && L.Divisor % *AbsK == 0)
        Out.Divisor = L.Divisor / *AbsK;
    } else {
      Out.Range = symbolicDivRange(L.Range, R.Range, Ceil);
    }
    break;
  }
  case ExprKind::Mod: {
    ExprInfo L = info(E.lhs()), R = info(E.rhs());
    if (R.Range.isPoint() && R.Range.Lo != 0) {
      Out = modInfo(L, R.Range.Lo);
    } else {
      Out.Range = symbolicModRange(L.Range, R.Range);
      Out.Divisor = std::max<int64_t>(1, gcd64(L.Divisor, R.Divisor));
    }
    break;
  }
  }
  if (Out.Divisor < 1)
    Out.Divisor = 1;
  if (UseConstraints)
    applyConstraintFacts(E, Out);
  snapToDivisor(Out);
  Cache.emplace(E, Out);
  return Out;
}

//===----------------------------------------------------------------------===//
// 32-bit arithmetic
//===----------------------------------------------------------------------===//

static bool fitsI32Rec(Expr E, RangeEvaluator &R,
                       std::unordered_set<Expr> &Seen) {
  if (!Seen.insert(E).second)
    return true;
  Interval I = R.range(E);
  if (!I.isEmpty() && (I.isFull() || I.Lo < INT32_MIN || I.Hi > INT32_MAX))
    return false;
  if (E.isBinary())
    return fitsI32Rec(E.lhs(), R, Seen) && fitsI32Rec(E.rhs(), R, Seen);
  return true;
}

bool fitsInI32(Expr E, RangeEvaluator &Ranges) {
  std::unordered_set<Expr> Seen;
  return fitsI32Rec(E, Ranges, Seen);
}

bool mapFitsInI32(const IndexingMap &Map, RangeEvaluator &Ranges) {
  if (Map.isUndefined())
    return false;
  if (Map.isKnownEmpty())
    return true;
  for (Expr R : Map.results())
    if (!fitsInI32(R, Ranges))
      return false;
  RangeEvaluator NoConstraints(Map, /*UseConstraints=*/false);
  for (const Constraint &C : Map.constraints())
    if (!fitsInI32(C.E, NoConstraints))
      return false;
  return true;
}

} // namespace idxmap
