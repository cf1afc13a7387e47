//===- Constraints.cpp - Constraint passes of the simplifier --------------===//
//
// Part of idxmap. Every pass replaces the domain by an equal one (same point
// set) or proves it empty. Ranges here come from the variable bounds only: a
// constraint must never be used to simplify itself.
//
// Rules (hit counter names in brackets):
//   [constraint.always-true]   drop `E in I` when range(E) is inside I and E
//       evaluates without overflow on the whole bounds box (a point where E
//       overflows is outside the domain: dropping E would add it).
//   [constraint.infeasible]    range(E) disjoint from I: KNOWN EMPTY (this
//       catches `d0 mod 8 + 5 in [50, 54]`, which XLA misses).
//   [constraint.tighten]       I becomes I intersected with range(E).
//   [constraint.move-constant] X + c in [l, u]  <=>  X in [l - c, u - c].
//   [constraint.move-mul]      X*k in [l, u]  <=>  X in [ceil(l/k), floor(u/k)]
//       for k > 0 and X in [ceil(u/k), floor(l/k)] for k < 0.
//   [constraint.move-floordiv] X fd k in [l, u]  <=>
//       X in [k*l, k*(u+1) - 1]             for k > 0,
//       X in [k*(u+1) + 1, k*l]             for k < 0.
//       Proof (k < 0): floor(X/k) >= l <=> X/k >= l <=> X <= k*l, and
//       floor(X/k) <= u <=> X/k < u + 1 <=> X > k*(u+1).
//       XLA negates and swaps the bounds instead, which is unsound:
//       `s0 fd -3 in [-11, -5]` is s0 in [13, 33], not [15, 35].
//   [constraint.move-ceildiv]  X cd k in [l, u]  <=>
//       X in [k*(l-1) + 1, k*u]             for k > 0,
//       X in [k*u, k*(l-1) - 1]             for k < 0.
//   [constraint.factor-gcd]    sum(k_i x_i) in [l, u] with g = gcd(k_i) > 1
//       <=> sum((k_i/g) x_i) in [ceil(l/g), floor(u/g)].
//   [constraint.negate]        a sum whose first term is negative is negated
//       (bounds negated and swapped), so equal constraints look equal.
//   [constraint.sum-split]     G*A + B in [l, u], with B in [b0, b1]: if
//       ceil((l - b)/G) and floor((u - b)/G) are the same for b = b0 and
//       b = b1 (they are monotone in b, so then for every b), the constraint
//       is A in [ceil((l - b0)/G), floor((u - b0)/G)] whatever B is. XLA's
//       version only checks the upper side and drops B's offset, which is
//       unsound when 0 is not in B's range; ours needs no such assumption.
//   [constraint.propagate]     for a sum constraint, each variable term
//       k*v gets the bound (I - range of the other terms) / k (interval
//       constraint propagation); this gives d0 in [0, 99] from
//       `d0 * 6 + s0 * 3 + s1 in [0, 598]` with s0 in [0, 1], s1 in [0, 2].
//   [constraint.difference-bounds] difference constraints x - y in [a, b]
//       and the bounds form a graph; Bellman-Ford gives the tightest bounds
//       at once and a negative cycle proves emptiness (propagation alone
//       creeps one unit per round around such a cycle).
//   [constraint.mod-shift]     (Y + c) mod m in [a, b] becomes
//       Y mod m in [a - c', b - c'] (c' = c mod m, shifted by m when below
//       0) when that interval does not wrap around; proof at the rule.
//   [constraint.bound]         a constraint on a bare variable intersects
//       its bound; on a constant it holds or the map is empty.
//   [constraint.mod-merge]     X mod c1 in [r1, r1] and X mod c2 in [r2, r2]
//       become X mod lcm in [r, r] by the Chinese remainder theorem, or
//       KNOWN EMPTY when r1 != r2 (mod gcd(c1, c2)). Order independent.
//   [constraint.mod-implied]   with X mod L in [r, r] known, X mod c (c | L)
//       is the constant r mod c: such a constraint holds or is infeasible.
//   [constraint.mod-snap]      a variable's bounds move inward to the nearest
//       values whose residue satisfies `v mod c in [a, b]` (exact for
//       negative bounds; XLA truncates toward zero).
//
// While a constraint's expression may overflow somewhere on the bounds box,
// it is not simplified and only the exact moves (constant, mul, floordiv,
// ceildiv) apply [constraint.keep-overflowing]: its overflowing points are
// outside the domain, which a rewritten expression may not respect.
//
// Overflow guard: the rules that build a new sum (factor-gcd, negate,
// sum-split) apply only if ExprSimplifier::fitsEverywhere() accepts it, so a
// rewritten constraint evaluates at every point of the bounds box where the
// old one did (`-(x + y)` overflows at x + y = INT64_MIN; a reordered subset
// of a sum can leave int64). The other rules keep a subexpression of the
// constraint.
//
//===----------------------------------------------------------------------===//
#include "SimplifyInternal.h"

#include <algorithm>

namespace idxmap {
namespace detail {

namespace {

using i128 = __int128;

constexpr i128 kMin = static_cast<i128>(INT64_MIN);
constexpr i128 kMax = static_cast<i128>(INT64_MAX);

/// An interval with 128-bit end points. The int64 limits are real bounds,
/// not infinities: a constraint `E in [0, INT64_MAX]` excludes the points
/// where E's exact value exceeds INT64_MAX (evaluation overflows there, and
/// isl sees the exact value), so `d0 * 2^62 in [0, INT64_MAX]` is
/// `d0 in [0, 1]`, not `d0 >= 0`. Treating the limits as unbounded made such
/// a constraint vanish from the domain.
struct Range128 {
  i128 Lo, Hi;
};

Range128 widen(const Interval &I) { return {I.Lo, I.Hi}; }

/// [Lo, Hi] clamped to int64: exact for sets of int64 values, which every
/// expression that evaluates takes.
Interval narrow(i128 Lo, i128 Hi) { return clampInterval(Lo, Hi); }

/// The set of X with `X * K in I`.
Interval divideInterval(const Interval &I, int64_t K) {
  Range128 R = widen(I);
  if (K > 0)
    return narrow(ceilDiv128(R.Lo, K), floorDiv128(R.Hi, K));
  return narrow(ceilDiv128(R.Hi, K), floorDiv128(R.Lo, K));
}

/// The set of X with `X fd K in I`.
Interval unFloorDiv(const Interval &I, int64_t K) {
  Range128 R = widen(I);
  if (K > 0)
    return narrow(R.Lo * K, (R.Hi + 1) * K - 1);
  return narrow((R.Hi + 1) * K + 1, R.Lo * K);
}

/// The set of X with `X cd K in I`.
Interval unCeilDiv(const Interval &I, int64_t K) {
  Range128 R = widen(I);
  if (K > 0)
    return narrow((R.Lo - 1) * K + 1, R.Hi * K);
  return narrow(R.Hi * K, (R.Lo - 1) * K - 1);
}

/// The set of X with `X + C in I`.
Interval shiftInterval(const Interval &I, int64_t C) {
  Range128 R = widen(I);
  return narrow(R.Lo - C, R.Hi - C);
}

class ConstraintSimplifier {
public:
  ConstraintSimplifier(IndexingMap &Map, SimplifyStats *Stats)
      : Map(Map), Stats(Stats) {}

  /// One round; returns false if the map became known empty.
  bool runRound();

private:
  void hit(const char *Rule) {
    if (Stats)
      Stats->hit(Rule);
  }
  /// Moves operations from E into I until none applies.
  void peel(Expr &E, Interval &I);
  /// One move; \p Fits says whether E evaluates on the whole bounds box.
  bool peelOnce(Expr &E, Interval &I, bool Fits);
  bool splitSum(Expr &E, Interval &I, const LinearSum &S);
  void propagate(const Constraint &C);
  void addBoundUpdate(Expr Var, Interval I) {
    BoundUpdates.push_back({Var, I});
  }

  IndexingMap &Map;
  SimplifyStats *Stats;
  RangeEvaluator *RE = nullptr;
  ExprSimplifier *S = nullptr;
  std::vector<Constraint> BoundUpdates;
};

bool ConstraintSimplifier::splitSum(Expr &E, Interval &I,
                                    const LinearSum &Sum) {
  if (Sum.Terms.size() < 2)
    return false;
  std::vector<int64_t> Candidates;
  for (size_t A = 0; A < Sum.Terms.size(); ++A) {
    int64_t KA = gcd64(Sum.Terms[A].Coeff, 0);
    if (KA > 1)
      Candidates.push_back(KA);
    if (Sum.Terms.size() <= 8)
      for (size_t B = A + 1; B < Sum.Terms.size(); ++B) {
        int64_t G = gcd64(Sum.Terms[A].Coeff, Sum.Terms[B].Coeff);
        if (G > 1)
          Candidates.push_back(G);
      }
  }
  std::sort(Candidates.begin(), Candidates.end(), std::greater<int64_t>());
  Candidates.erase(std::unique(Candidates.begin(), Candidates.end()),
                   Candidates.end());
  Range128 R = widen(I);
  for (int64_t G : Candidates) {
    LinearSum A, B;
    for (const Term &T : Sum.Terms) {
      if (T.Coeff % G == 0)
        A.addTerm(T.Base, T.Coeff / G);
      else
        B.addTerm(T.Base, T.Coeff);
    }
    if (A.Terms.empty() || B.Terms.empty())
      continue;
    Interval BR = sumRange(*RE, B.Terms, 0);
    if (BR.isEmpty() || BR.Lo == INT64_MIN || BR.Hi == INT64_MAX)
      continue;
    i128 NewLo = ceilDiv128(R.Lo - BR.Lo, G);
    if (NewLo != ceilDiv128(R.Lo - BR.Hi, G))
      continue;
    i128 NewHi = floorDiv128(R.Hi - BR.Lo, G);
    if (NewHi != floorDiv128(R.Hi - BR.Hi, G))
      continue;
    canonicalize(A);
    Expr NewE = buildSum(Map.context(), A);
    if (!S->fitsEverywhere(NewE, E))
      continue;
    hit("constraint.sum-split");
    E = NewE;
    I = narrow(NewLo, NewHi);
    return true;
  }
  return false;
}

bool ConstraintSimplifier::peelOnce(Expr &E, Interval &I, bool Fits) {
  if (I.isEmpty() || E.isConstant() || E.isVariable())
    return false;
  switch (E.kind()) {
  case ExprKind::Add: {
    if (E.rhs().isConstant()) {
      hit("constraint.move-constant");
      I = shiftInterval(I, E.rhs().value());
      E = E.lhs();
      return true;
    }
    // `X + c in [l, u]`, `X * k in [l, u]` and the divisions move exactly
    // even where E overflows (the new interval lies in int64 and says that
    // E's value does); the rules below rewrite the expression itself.
    if (!Fits) {
      hit("constraint.keep-overflowing");
      return false;
    }
    LinearSum Sum;
    Sum.add(E);
    if (Sum.Overflow || Sum.Terms.empty() || Sum.Constant != 0)
      return false;
    int64_t G = 0;
    for (const Term &T : Sum.Terms)
      G = gcd64(G, T.Coeff);
    if (G > 1) {
      LinearSum Div = Sum;
      for (Term &T : Div.Terms)
        T.Coeff /= G;
      Expr NewE = buildSum(Map.context(), Div);
      if (S->fitsEverywhere(NewE, E)) {
        hit("constraint.factor-gcd");
        I = divideInterval(I, G);
        E = NewE;
        return true;
      }
    }
    if (Sum.Terms.front().Coeff < 0) {
      LinearSum Neg = Sum;
      Neg.scale(-1);
      if (!Neg.Overflow) {
        Expr NewE = buildSum(Map.context(), Neg);
        if (S->fitsEverywhere(NewE, E)) {
          hit("constraint.negate");
          I = divideInterval(I, -1);
          E = NewE;
          return true;
        }
      }
      return false;
    }
    return splitSum(E, I, Sum);
  }
  case ExprKind::Mul:
    if (E.rhs().isConstant() && E.rhs().value() != 0) {
      hit("constraint.move-mul");
      I = divideInterval(I, E.rhs().value());
      E = E.lhs();
      return true;
    }
    return false;
  case ExprKind::FloorDiv:
    if (E.rhs().isConstant() && E.rhs().value() != 0) {
      hit("constraint.move-floordiv");
      I = unFloorDiv(I, E.rhs().value());
      E = E.lhs();
      return true;
    }
    return false;
  case ExprKind::CeilDiv:
    if (E.rhs().isConstant() && E.rhs().value() != 0) {
      hit("constraint.move-ceildiv");
      I = unCeilDiv(I, E.rhs().value());
      E = E.lhs();
      return true;
    }
    return false;
  case ExprKind::Mod: {
    // (Y + c) mod m in [a, b] <=> Y mod m in [a - c', b - c'] (shifted by m
    // when below 0) with c' = c mod m, unless that interval wraps around.
    // With v = Y mod m, (Y + c) mod m is v + c' (v + c' < m) or v + c' - m.
    // If a >= c', the wrapped value v + c' - m >= a >= c' needs v >= m: only
    // the first case remains. If b < c', only the wrapped one does.
    if (!E.rhs().isConstant() || E.rhs().value() <= 0 ||
        E.lhs().kind() != ExprKind::Add || !E.lhs().rhs().isConstant())
      return false;
    if (!Fits) { // dropping the + c would drop its overflow
      hit("constraint.keep-overflowing");
      return false;
    }
    int64_t M = E.rhs().value();
    int64_t C = *checkedMod(E.lhs().rhs().value(), M);
    Interval J = I.intersect({0, M - 1});
    if (J.isEmpty())
      return false;
    Interval Shifted;
    if (J.Lo >= C)
      Shifted = {J.Lo - C, J.Hi - C};
    else if (J.Hi < C)
      Shifted = {J.Lo - C + M, J.Hi - C + M};
    else
      return false;
    hit("constraint.mod-shift");
    E = E.lhs().lhs() % M;
    I = Shifted;
    return true;
  }
  default:
    return false;
  }
}

void ConstraintSimplifier::peel(Expr &E, Interval &I) {
  for (unsigned Iter = 0; Iter < 256; ++Iter) {
    // A point where E overflows is outside the domain, and a rewrite of E
    // could make it evaluate there (`d0 * (2^62 + 1) - d0 * 2^61` becomes
    // `d0 * (2^61 + 1)`). While E may overflow on the bounds box, only the
    // moves that keep E's exact condition apply (see peelOnce).
    bool Fits = S->evaluatesEverywhere(E);
    if (Fits)
      E = S->simplify(E);
    if (!peelOnce(E, I, Fits))
      return;
  }
}

void ConstraintSimplifier::propagate(const Constraint &C) {
  LinearSum Sum;
  Sum.add(C.E);
  if (Sum.Overflow || Sum.Terms.size() < 2)
    return;
  bool AnyVar = false;
  for (const Term &T : Sum.Terms)
    AnyVar |= T.Base.isVariable();
  if (!AnyVar)
    return;
  std::vector<Interval> TR;
  TR.reserve(Sum.Terms.size());
  i128 SumLo = Sum.Constant, SumHi = Sum.Constant;
  for (const Term &T : Sum.Terms) {
    Interval R = RE->range(T.Base);
    if (R.isEmpty())
      return;
    // k * [lo, hi] exactly in 128 bits.
    i128 A = static_cast<i128>(R.Lo) * T.Coeff;
    i128 B = static_cast<i128>(R.Hi) * T.Coeff;
    if (A > B)
      std::swap(A, B);
    // Each product is below 2^126 in magnitude, but a sum of several can
    // leave 128 bits: then the pass learns nothing from this constraint.
    if (__builtin_add_overflow(SumLo, A, &SumLo) ||
        __builtin_add_overflow(SumHi, B, &SumHi))
      return;
    TR.push_back(R);
  }
  Range128 I = widen(C.I);
  for (size_t Idx = 0; Idx < Sum.Terms.size(); ++Idx) {
    const Term &T = Sum.Terms[Idx];
    if (!T.Base.isVariable())
      continue;
    i128 A = static_cast<i128>(TR[Idx].Lo) * T.Coeff;
    i128 B = static_cast<i128>(TR[Idx].Hi) * T.Coeff;
    if (A > B)
      std::swap(A, B);
    // k*v in [I.lo - (SumHi - B), I.hi - (SumLo - A)].
    i128 RestHi, RestLo, Lo, Hi;
    if (__builtin_sub_overflow(SumHi, B, &RestHi) ||
        __builtin_sub_overflow(SumLo, A, &RestLo) ||
        __builtin_sub_overflow(I.Lo, RestHi, &Lo) ||
        __builtin_sub_overflow(I.Hi, RestLo, &Hi))
      continue;
    i128 VLo, VHi;
    if (T.Coeff > 0) {
      VLo = ceilDiv128(Lo, T.Coeff);
      VHi = floorDiv128(Hi, T.Coeff);
    } else {
      VLo = ceilDiv128(Hi, T.Coeff);
      VHi = floorDiv128(Lo, T.Coeff);
    }
    Interval New = narrow(VLo, VHi);
    Interval Old = Map.bound(T.Base);
    Interval Tight = Old.intersect(New);
    if (Tight != Old) {
      hit("constraint.propagate");
      addBoundUpdate(T.Base, New);
    }
  }
}

bool ConstraintSimplifier::runRound() {
  RangeEvaluator Eval(Map, /*UseConstraints=*/false);
  ExprSimplifier Simp(Eval, /*ReplacePointDims=*/true, Stats);
  RE = &Eval;
  S = &Simp;
  BoundUpdates.clear();

  std::vector<Constraint> Kept;
  for (const Constraint &C : Map.constraints()) {
    Expr E = C.E;
    Interval I = C.I;
    peel(E, I);
    if (I.isEmpty()) {
      hit("constraint.infeasible");
      Map.markKnownEmpty();
      return false;
    }
    if (E.isConstant()) {
      if (!I.contains(E.value())) {
        hit("constraint.infeasible");
        Map.markKnownEmpty();
        return false;
      }
      hit("constraint.always-true");
      continue;
    }
    if (E.isVariable()) {
      hit("constraint.bound");
      addBoundUpdate(E, I);
      continue;
    }
    Interval R = Eval.range(E);
    Interval Tight = I.intersect(R);
    if (Tight.isEmpty()) {
      hit("constraint.infeasible");
      Map.markKnownEmpty();
      return false;
    }
    if (I.contains(R) && S->evaluatesEverywhere(E)) {
      hit("constraint.always-true");
      continue;
    }
    if (Tight != I)
      hit("constraint.tighten");
    // Merge with an equal expression kept earlier.
    auto It = std::find_if(Kept.begin(), Kept.end(),
                           [&](const Constraint &K) { return K.E == E; });
    if (It != Kept.end()) {
      It->I = It->I.intersect(Tight);
      if (It->I.isEmpty()) {
        hit("constraint.infeasible");
        Map.markKnownEmpty();
        return false;
      }
      continue;
    }
    Kept.push_back({E, Tight});
  }
  for (const Constraint &C : Kept)
    propagate(C);

  Map.setConstraints(std::move(Kept));
  for (const Constraint &U : BoundUpdates)
    if (!Map.intersectBound(U.E, U.I))
      return false;
  RE = nullptr;
  S = nullptr;
  return true;
}

//===----------------------------------------------------------------------===//
// Mod constraints
//===----------------------------------------------------------------------===//

/// Solves x = R1 (mod M1), x = R2 (mod M2). Returns {r, lcm} with r in
/// [0, lcm - 1], nullopt if incompatible; sets Overflow when lcm does not fit.
std::optional<std::pair<int64_t, int64_t>>
crt(int64_t R1, int64_t M1, int64_t R2, int64_t M2, bool &Overflow) {
  Overflow = false;
  int64_t G = gcd64(M1, M2);
  i128 Diff = static_cast<i128>(R2) - R1;
  if (Diff % G != 0)
    return std::nullopt;
  auto L = lcm64(M1, M2);
  if (!L) {
    Overflow = true;
    return std::nullopt;
  }
  // x = R1 + M1*t with (M1/G)*t = Diff/G (mod M2/G).
  i128 A = M1 / G, Mod = M2 / G, B = Diff / G;
  // Inverse of A modulo Mod by the extended Euclid algorithm.
  i128 OldR = ((A % Mod) + Mod) % Mod, R = Mod, OldS = 1, S = 0;
  while (R != 0) {
    i128 Q = OldR / R;
    i128 T = OldR - Q * R;
    OldR = R;
    R = T;
    T = OldS - Q * S;
    OldS = S;
    S = T;
  }
  i128 Inv = Mod == 1 ? 0 : ((OldS % Mod) + Mod) % Mod;
  i128 T = ((B % Mod + Mod) % Mod) * Inv % Mod;
  i128 X = (static_cast<i128>(R1) + static_cast<i128>(M1) * T) % *L;
  if (X < 0)
    X += *L;
  return std::make_pair(static_cast<int64_t>(X), *L);
}

/// Moves the bounds of V inward to values whose residue mod C lies in
/// [A, B] (0 <= A <= B <= C - 1).
Interval snapToResidues(Interval V, int64_t C, int64_t A, int64_t B) {
  if (V.isEmpty())
    return V;
  i128 Lo = V.Lo, Hi = V.Hi;
  i128 RLo = ((Lo % C) + C) % C;
  if (RLo < A)
    Lo += A - RLo;
  else if (RLo > B)
    Lo += C - RLo + A;
  i128 RHi = ((Hi % C) + C) % C;
  if (RHi > B)
    Hi -= RHi - B;
  else if (RHi < A)
    Hi -= RHi + (C - B);
  return clampInterval(Lo, Hi);
}

/// Difference constraints `x - y in [lo, hi]` between bare variables, with
/// the variables' bounds, form a graph whose shortest paths are the tightest
/// bounds (Bellman-Ford); a negative cycle means no integer (or real) point
/// satisfies them. Interval propagation reaches the same bounds, but a cycle
/// such as d0 - d1 >= 1, d1 - d2 >= 1, d2 - d0 >= 1 only creeps toward
/// emptiness one unit per round; this pass decides it at once. Returns false
/// if the map became known empty.
bool tightenDifferenceBounds(IndexingMap &Map, SimplifyStats *Stats,
                             bool &Changed) {
  struct Edge {
    unsigned From, To;
    i128 W;
  };
  std::vector<Edge> Edges;
  std::vector<int> Node(Map.numVars(), -1);
  std::vector<unsigned> Vars; // node id - 1 -> flat variable index
  auto NodeOf = [&](Expr V) {
    unsigned F = Map.flatIndex(V);
    if (Node[F] < 0) {
      Node[F] = static_cast<int>(Vars.size()) + 1;
      Vars.push_back(F);
    }
    return static_cast<unsigned>(Node[F]);
  };
  unsigned NumDiffs = 0;
  for (const Constraint &C : Map.constraints()) {
    if (C.E.kind() != ExprKind::Add)
      continue;
    LinearSum S;
    S.add(C.E);
    if (S.Overflow || S.Terms.size() != 2 || S.Constant != 0 ||
        !S.Terms[0].Base.isVariable() || !S.Terms[1].Base.isVariable())
      continue;
    const Term *X = &S.Terms[0], *Y = &S.Terms[1];
    if (X->Coeff == -1 && Y->Coeff == 1)
      std::swap(X, Y);
    if (X->Coeff != 1 || Y->Coeff != -1)
      continue;
    ++NumDiffs;
    unsigned NX = NodeOf(X->Base), NY = NodeOf(Y->Base);
    // x - y <= hi: y -> x with weight hi; y - x <= -lo: x -> y, -lo.
    if (C.I.Hi != INT64_MAX)
      Edges.push_back({NY, NX, C.I.Hi});
    if (C.I.Lo != INT64_MIN)
      Edges.push_back({NX, NY, -static_cast<i128>(C.I.Lo)});
  }
  if (NumDiffs < 2)
    return true;
  // Node 0 is the constant 0: v <= hi is 0 -> v (hi), v >= lo is v -> 0 (-lo).
  for (unsigned I = 0; I < Vars.size(); ++I) {
    const Interval &B = Map.var(Vars[I]).Bound;
    if (B.Hi != INT64_MAX)
      Edges.push_back({0, I + 1, B.Hi});
    if (B.Lo != INT64_MIN)
      Edges.push_back({I + 1, 0, -static_cast<i128>(B.Lo)});
  }
  unsigned N = Vars.size() + 1;
  const i128 Inf = static_cast<i128>(1) << 100;
  // Shortest distances from node 0 (Reverse: to node 0). With AllZero every
  // node starts at 0, which finds negative cycles anywhere.
  auto Run = [&](bool Reverse, bool AllZero, std::vector<i128> &D) {
    D.assign(N, AllZero ? 0 : Inf);
    D[0] = 0;
    for (unsigned Pass = 0; Pass < N; ++Pass) {
      bool Relaxed = false;
      for (const Edge &E : Edges) {
        unsigned U = Reverse ? E.To : E.From, V = Reverse ? E.From : E.To;
        if (D[U] < Inf && D[U] + E.W < D[V]) {
          D[V] = D[U] + E.W;
          Relaxed = true;
        }
      }
      if (!Relaxed)
        return true;
    }
    return false; // Still relaxing after N passes: a negative cycle.
  };
  std::vector<i128> Up, Down, Any;
  if (!Run(false, true, Any) || !Run(false, false, Up) ||
      !Run(true, false, Down)) {
    if (Stats)
      Stats->hit("constraint.infeasible");
    Map.markKnownEmpty();
    return false;
  }
  for (unsigned I = 0; I < Vars.size(); ++I) {
    Interval Old = Map.var(Vars[I]).Bound;
    Interval New = clampInterval(Down[I + 1] >= Inf ? kMin : -Down[I + 1],
                                 Up[I + 1] >= Inf ? kMax : Up[I + 1]);
    if (Old.intersect(New) == Old)
      continue;
    if (Stats)
      Stats->hit("constraint.difference-bounds");
    Changed = true;
    if (!Map.intersectBound(Map.varExpr(Vars[I]), New))
      return false;
  }
  return true;
}

} // namespace

bool mergeModConstraints(IndexingMap &Map, SimplifyStats *Stats) {
  auto Hit = [&](const char *Rule) {
    if (Stats)
      Stats->hit(Rule);
  };
  if (Map.isUndefined() || Map.isKnownEmpty())
    return false;
  bool Changed = false;
  std::vector<Constraint> Cs = Map.constraints();
  auto IsPointMod = [](const Constraint &C) {
    return C.E.kind() == ExprKind::Mod && C.E.rhs().isConstant() &&
           C.E.rhs().value() > 0 && C.I.isPoint();
  };
  // Merge point mod constraints on the same X (groups in order of first
  // appearance; the CRT result does not depend on the order).
  for (size_t I = 0; I < Cs.size(); ++I) {
    if (!IsPointMod(Cs[I]))
      continue;
    Expr X = Cs[I].E.lhs();
    int64_t R = Cs[I].I.Lo, M = Cs[I].E.rhs().value();
    if (R < 0 || R >= M) {
      Hit("constraint.infeasible");
      Map.markKnownEmpty();
      return true;
    }
    bool Merged = false;
    for (size_t J = I + 1; J < Cs.size();) {
      if (!IsPointMod(Cs[J]) || Cs[J].E.lhs() != X) {
        ++J;
        continue;
      }
      int64_t R2 = Cs[J].I.Lo, M2 = Cs[J].E.rhs().value();
      bool Overflow = false;
      auto Sol = crt(R, M, R2, M2, Overflow);
      if (Overflow) {
        ++J;
        continue;
      }
      if (!Sol || R2 < 0 || R2 >= M2) {
        Hit("constraint.infeasible");
        Map.markKnownEmpty();
        return true;
      }
      Hit("constraint.mod-merge");
      R = Sol->first;
      M = Sol->second;
      Cs.erase(Cs.begin() + J);
      Merged = true;
    }
    if (Merged) {
      Cs[I] = {X % M, Interval::point(R)};
      Changed = true;
    }
  }
  // Constraints X mod c with c | M for a known `X mod M in [r, r]`.
  for (size_t I = 0; I < Cs.size(); ++I) {
    if (!IsPointMod(Cs[I]))
      continue;
    Expr X = Cs[I].E.lhs();
    int64_t M = Cs[I].E.rhs().value(), R = Cs[I].I.Lo;
    for (size_t J = 0; J < Cs.size();) {
      const Constraint &D = Cs[J];
      if (J == I || D.E.kind() != ExprKind::Mod || D.E.lhs() != X ||
          !D.E.rhs().isConstant() || D.E.rhs().value() <= 0 ||
          M % D.E.rhs().value() != 0) {
        ++J;
        continue;
      }
      int64_t V = R % D.E.rhs().value();
      if (!D.I.contains(V)) {
        Hit("constraint.infeasible");
        Map.markKnownEmpty();
        return true;
      }
      Hit("constraint.mod-implied");
      Cs.erase(Cs.begin() + J);
      if (J < I)
        --I;
      Changed = true;
    }
  }
  if (Changed)
    Map.setConstraints(Cs);
  // Snap bare variables to their residue classes.
  for (const Constraint &C : Map.constraints()) {
    if (C.E.kind() != ExprKind::Mod || !C.E.lhs().isVariable() ||
        !C.E.rhs().isConstant() || C.E.rhs().value() <= 0)
      continue;
    int64_t M = C.E.rhs().value();
    Interval Res = C.I.intersect({0, M - 1});
    if (Res.isEmpty()) {
      Hit("constraint.infeasible");
      Map.markKnownEmpty();
      return true;
    }
    Expr V = C.E.lhs();
    Interval Old = Map.bound(V);
    Interval New = snapToResidues(Old, M, Res.Lo, Res.Hi);
    if (New != Old) {
      Hit("constraint.mod-snap");
      Changed = true;
      if (!Map.intersectBound(V, New))
        return true;
    }
  }
  return Changed;
}

bool simplifyConstraints(IndexingMap &Map, SimplifyStats *Stats) {
  if (Map.isUndefined() || Map.isKnownEmpty())
    return false;
  if (Map.constraints().empty())
    return false;
  bool Changed = false;
  for (unsigned Round = 0; Round < 64; ++Round) {
    std::vector<Interval> OldBounds;
    OldBounds.reserve(Map.numVars());
    for (unsigned I = 0, E = Map.numVars(); I < E; ++I)
      OldBounds.push_back(Map.var(I).Bound);
    std::vector<Constraint> OldCs = Map.constraints();

    ConstraintSimplifier CS(Map, Stats);
    if (!CS.runRound())
      return true;
    mergeModConstraints(Map, Stats);
    if (Map.isKnownEmpty())
      return true;
    bool DiffChanged = false;
    if (!tightenDifferenceBounds(Map, Stats, DiffChanged))
      return true;

    bool RoundChanged = OldCs.size() != Map.constraints().size();
    for (size_t I = 0; !RoundChanged && I < OldCs.size(); ++I)
      RoundChanged = OldCs[I].E != Map.constraints()[I].E ||
                     OldCs[I].I != Map.constraints()[I].I;
    for (unsigned I = 0, E = Map.numVars(); !RoundChanged && I < E; ++I)
      RoundChanged = OldBounds[I] != Map.var(I).Bound;
    if (!RoundChanged)
      break;
    Changed = true;
    if (Map.constraints().empty())
      break;
  }
  return Changed;
}

} // namespace detail
} // namespace idxmap
