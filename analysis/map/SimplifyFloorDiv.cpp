//===- SimplifyFloorDiv.cpp - Rules for floordiv and ceildiv --------------===//
//
// Part of idxmap. `x fd d` rounds toward -inf, `x cd d` toward +inf. All
// rules need a constant divisor d != 0; a symbolic divisor is kept as is.
//
// Rules (hit counter names in brackets):
//   [floordiv.by-minus-one]  x fd -1 -> -x. Exact.
//   [floordiv.mod-to-div-mod] (X mod M) fd d -> (X fd d) mod (M/d)
//       for M > 0, d > 0, d | M. Proof: X = M*q + r with 0 <= r < M, so
//       X fd d = (M/d)*q + r fd d with 0 <= r fd d < M/d.
//       Counterexample for M < 0 (XLA does not check the sign): M = -6,
//       d = 3, X = -5: (X mod -6) fd 3 = -2, but (X fd 3) mod -2 = 0.
//   [floordiv.nested]  (X fd a) fd d -> X fd (a*d) for d > 0, any a != 0.
//       Proof: floor(floor(y) / d) = floor(y / d) for real y and integer
//       d > 0, with y = X/a. Counterexample for d < 0: (15 fd 2) fd -7 = -1
//       but 15 fd -14 = -2.
//   [floordiv.extract-multiple] (y*(k*d) + R) fd d -> y*k + R fd d, any d.
//       floor(n + r) = n + floor(r) for integer n.
//   [floordiv.extract-constant] (R + q*d + r) fd d -> (R + r) fd d + q with
//       q = c fd d, r = c mod d; same argument.
//   [floordiv.drop-remainder] (G*A + B) fd (G*d') -> A fd d' when
//       0 <= B <= G - 1 (d' > 0). Proof: write A = q*d' + s, 0 <= s < d';
//       then 0 <= G*s + B <= G*d' - 1, so the quotient is q. B may be shifted
//       by a multiple of G into [0, G - 1] first (moved into A). This covers
//       XLA's "divide by the common gcd" (B = 0) and "drop a remainder that
//       cannot reach the next multiple" cases, with the largest usable G.
//   [floordiv.merge-inner-div] (X fd c + R) fd d -> (X + R*c) fd (c*d) for
//       d > 0, c != 0, when exactly one summand is a division with
//       coefficient 1. Proof: X fd c + R = (X + R*c) fd c for integer R, then
//       [floordiv.nested]. XLA shipped and reverted a form with two inner
//       divisions: (a0 fd 3 + a1 fd 3) fd 6 with a0 = 16, a1 = 2 is 0, but
//       (a0 + a1) fd 18 is 1.
//   [ceildiv.*] the same for ceildiv: nested (d > 0, ceil(ceil(y)/d) =
//       ceil(y/d)), extraction of multiples and constants, and drop-remainder
//       with -(G - 1) <= B <= 0: ceil((G*A + B)/(G*d')) = ceil(A/d').
//
// Overflow guard: the rules that build new sums (extraction, drop-remainder,
// merge-inner-div, whose R*c can exceed int64 where R does not) return their
// candidate only if fitsBelowRoot() accepts it; a refused merge falls back
// to the same rewrite without the merge, then to the input. The other rules
// only reuse subexpressions of the input: X fd d' and (X fd d) mod (M/d)
// evaluate wherever X does (d, d' > 0).
//
//===----------------------------------------------------------------------===//
#include "SimplifyInternal.h"

namespace idxmap {
namespace detail {

namespace {
/// `S = D * Extracted + Rem`, where Extracted holds the terms whose
/// coefficients are multiples of D and `Constant fd D`.
struct Extraction {
  LinearSum Extracted;
  LinearSum Rem;
};

Extraction extractMultiples(const LinearSum &S, int64_t D) {
  Extraction Out;
  for (const Term &T : S.Terms) {
    if (T.Coeff % D == 0)
      Out.Extracted.addTerm(T.Base, T.Coeff / D);
    else
      Out.Rem.addTerm(T.Base, T.Coeff);
  }
  int64_t Q = *checkedFloorDiv(S.Constant, D); // D != 0, D != -1.
  Out.Extracted.Constant = Q;
  // The floor remainder S.Constant - Q * D, without forming Q * D: near
  // INT64_MIN the product passes it (floor(INT64_MIN / 100) * 100).
  int64_t R = S.Constant % D;
  if (R != 0 && ((R < 0) != (D < 0)))
    R += D; // opposite signs: no overflow
  Out.Rem.Constant = R;
  return Out;
}

/// Finds the only summand `X fd c` (constant c != 0, coefficient 1).
const Term *singleInnerDiv(const LinearSum &S) {
  const Term *Found = nullptr;
  for (const Term &T : S.Terms) {
    if (T.Base.kind() != ExprKind::FloorDiv || T.Coeff != 1)
      continue;
    if (!T.Base.rhs().isConstant() || T.Base.rhs().value() == 0)
      continue;
    if (Found)
      return nullptr;
    Found = &T;
  }
  return Found;
}
} // namespace

/// The quick form of the guard for `Out` = `Extracted + (Rem div D)`, all of
/// whose bases are nodes of the replaced expression's dividend: true if
/// Rem fits entirely and then Out below its root (see sumRangeFast).
bool ExprSimplifier::quickDivFits(const LinearSum &Rem, Expr DivE, int64_t D,
                                  bool Ceil, const LinearSum &Out) {
  if (DivE.kind() != (Ceil ? ExprKind::CeilDiv : ExprKind::FloorDiv))
    return false; // Folded by the tier-0 builder: ask fitsBelowRoot.
  auto RR = sumRangeFast(Rem, /*BasesAreRefNodes=*/true, /*RootMustFit=*/true);
  if (!RR)
    return false;
  Interval DR = RR->isEmpty() ? *RR : Ceil ? RR->ceilDiv(D) : RR->floorDiv(D);
  return sumRangeFast(Out, /*BasesAreRefNodes=*/true, /*RootMustFit=*/false,
                      DivE, DR)
      .has_value();
}

Expr ExprSimplifier::rewriteFloorDiv(Expr L, Expr R) {
  if (!R.isConstant() || R.value() == 0 || R.value() == 1)
    return L.floorDiv(R);
  int64_t D = R.value();
  if (D == -1) {
    hit("floordiv.by-minus-one");
    return rewriteMul(L, Ctx->constant(-1));
  }
  if (D > 0) {
    if (L.kind() == ExprKind::Mod && L.rhs().isConstant()) {
      int64_t M = L.rhs().value();
      if (M > 0 && M % D == 0) {
        hit("floordiv.mod-to-div-mod");
        return L.lhs().floorDiv(D) % (M / D);
      }
    }
    if (L.kind() == ExprKind::FloorDiv && L.rhs().isConstant() &&
        L.rhs().value() != 0) {
      if (auto AD = checkedMul(L.rhs().value(), D)) {
        hit("floordiv.nested");
        return L.lhs().floorDiv(*AD);
      }
    }
  }
  if (!(L.kind() == ExprKind::Add ||
        (L.kind() == ExprKind::Mul && L.rhs().isConstant())))
    return L.floorDiv(R);

  LinearSum S;
  S.add(L);
  if (S.Overflow)
    return L.floorDiv(R);
  Extraction X = extractMultiples(S, D);
  bool Extracted = !X.Extracted.Terms.empty() || X.Extracted.Constant != 0;
  bool Split = false;
  int64_t NewD = D;
  // The merged dividend and divisor, when [floordiv.merge-inner-div]
  // applies.
  std::optional<std::pair<LinearSum, int64_t>> Merged;
  if (D > 0) {
    if (auto G = findGSplit(RE, X.Rem, D)) {
      X.Rem = std::move(G->A);
      NewD = D / G->G;
      Split = true;
    }
    if (const Term *Inner = singleInnerDiv(X.Rem); Inner && NewD > 1) {
      int64_t C = Inner->Base.rhs().value();
      // New dividend: X + R*c, where R is everything but the inner division.
      LinearSum Scaled;
      Scaled.add(Inner->Base.lhs());
      LinearSum RestTimesC;
      for (const Term &T : X.Rem.Terms)
        if (&T != Inner)
          RestTimesC.addTerm(T.Base, T.Coeff);
      RestTimesC.Constant = X.Rem.Constant;
      RestTimesC.scale(C);
      auto CD = checkedMul(C, NewD);
      if (!RestTimesC.Overflow && !Scaled.Overflow && CD) {
        for (const Term &T : RestTimesC.Terms)
          Scaled.Terms.push_back(T);
        Scaled.addConstant(RestTimesC.Constant);
        if (!Scaled.Overflow)
          Merged.emplace(std::move(Scaled), *CD);
      }
    }
  }
  // `Extracted + Rem fd Div`, if it passes the overflow guard.
  // Every base of Rem and Extracted is a node of L.
  auto Build = [&](LinearSum Rem, int64_t Div) -> std::optional<Expr> {
    canonicalize(Rem);
    Expr DivE = buildSum(*Ctx, Rem).floorDiv(Div);
    LinearSum Out = X.Extracted;
    Out.add(DivE);
    if (Out.Overflow)
      return std::nullopt;
    canonicalize(Out);
    Expr Cand = buildSum(*Ctx, Out);
    if (!quickDivFits(Rem, DivE, Div, /*Ceil=*/false, Out) &&
        !fitsBelowRoot(Cand, {L, R}))
      return std::nullopt;
    return Cand;
  };
  auto Hits = [&]() {
    if (!X.Extracted.Terms.empty())
      hit("floordiv.extract-multiple");
    if (X.Extracted.Constant != 0)
      hit("floordiv.extract-constant");
    if (Split)
      hit("floordiv.drop-remainder");
  };
  if (Merged) {
    if (auto Cand = Build(std::move(Merged->first), Merged->second)) {
      Hits();
      hit("floordiv.merge-inner-div");
      return *Cand;
    }
  }
  if (Extracted || Split) {
    if (auto Cand = Build(std::move(X.Rem), NewD)) {
      Hits();
      return *Cand;
    }
  }
  return L.floorDiv(R);
}

Expr ExprSimplifier::rewriteCeilDiv(Expr L, Expr R) {
  if (!R.isConstant() || R.value() == 0 || R.value() == 1)
    return L.ceilDiv(R);
  int64_t D = R.value();
  if (D == -1) {
    hit("ceildiv.by-minus-one");
    return rewriteMul(L, Ctx->constant(-1));
  }
  if (D > 0 && L.kind() == ExprKind::CeilDiv && L.rhs().isConstant() &&
      L.rhs().value() != 0) {
    if (auto AD = checkedMul(L.rhs().value(), D)) {
      hit("ceildiv.nested");
      return L.lhs().ceilDiv(*AD);
    }
  }
  if (!(L.kind() == ExprKind::Add ||
        (L.kind() == ExprKind::Mul && L.rhs().isConstant())))
    return L.ceilDiv(R);

  LinearSum S;
  S.add(L);
  if (S.Overflow)
    return L.ceilDiv(R);
  // (R + n*D) cd D = R cd D + n for integer n: same split as floordiv.
  Extraction X = extractMultiples(S, D);
  bool Extracted = !X.Extracted.Terms.empty() || X.Extracted.Constant != 0;
  bool Split = false;
  int64_t NewD = D;
  if (D > 0) {
    if (auto G = findGSplit(RE, X.Rem, D, /*RestNonPositive=*/true)) {
      X.Rem = std::move(G->A);
      NewD = D / G->G;
      Split = true;
    }
  }
  if (!Extracted && !Split)
    return L.ceilDiv(R);
  canonicalize(X.Rem);
  Expr DivE = buildSum(*Ctx, X.Rem).ceilDiv(NewD);
  LinearSum Out = std::move(X.Extracted);
  Out.add(DivE);
  if (Out.Overflow)
    return L.ceilDiv(R);
  canonicalize(Out);
  Expr Cand = buildSum(*Ctx, Out);
  if (!quickDivFits(X.Rem, DivE, NewD, /*Ceil=*/true, Out) &&
      !fitsBelowRoot(Cand, {L, R}))
    return L.ceilDiv(R);
  if (Extracted)
    hit("ceildiv.extract-multiple");
  if (Split)
    hit("ceildiv.drop-remainder");
  return Cand;
}

} // namespace detail
} // namespace idxmap
