//===- SimplifyMod.cpp - Rules for mod ------------------------------------===//
//
// Part of idxmap. `x mod m = x - (x fd m)*m`: in [0, m-1] for m > 0 and in
// [m+1, 0] for m < 0. All rules need a constant modulus m != 0; `x mod 0`
// (no value) and symbolic moduli are kept as they are.
//
// Rules (hit counter names in brackets):
//   [mod.one-period]  x mod m -> x - q*m when x fd m is the constant q over
//       x's range (covers XLA's "mod is sub" and "mod is add"). Exact: the
//       definition with x fd m = q.
//   [mod.drop-multiple] (y*(k*m) + R) mod m -> R mod m, any m.
//       (y*k*m + R) fd m = y*k + R fd m, so the difference is R mod m.
//   [mod.drop-divisible] the same when the summand's value is a multiple of
//       m by divisibility facts (e.g. `d0 mod 8 in [0, 0]` makes d0*2 a
//       multiple of 16).
//   [mod.reduce-constant] (R + c) mod m -> (R + c mod m) mod m; same proof.
//   [mod.factor-gcd] (G*A) mod (G*m') -> (A mod m')*G for G > 0, any m'.
//       G*A - floor(G*A/(G*m'))*G*m' = G*(A - floor(A/m')*m'). This covers
//       XLA's `(x*a) mod (a*b) -> (x mod b)*a`.
//   [mod.split-remainder] (G*A + B) mod m -> (A mod (m/G))*G + B for m > 0,
//       G | m and 0 <= B <= G - 1 (B may first be shifted by a multiple of
//       G, which moves into A). Proof: (G*A) mod m = G*s with
//       0 <= s <= m/G - 1, so 0 <= G*s + B <= m - 1 is the remainder of
//       G*A + B. The largest usable G is chosen.
//   Not applied: XLA leaves `(-d0) mod 2` alone and so do we (G = 1).
//
// Overflow guard: every candidate that builds a new sum passes
// fitsBelowRoot() or is not returned (mod.one-period's x - q*m can be part of
// a sum whose partial sums overflow; the kept summands of drop-multiple may
// be reordered).
//
//===----------------------------------------------------------------------===//
#include "SimplifyInternal.h"

namespace idxmap {
namespace detail {

Expr ExprSimplifier::rewriteMod(Expr L, Expr R) {
  if (!R.isConstant() || R.value() == 0)
    return L % R;
  int64_t M = R.value();
  if (M == 1 || M == -1)
    return Ctx->constant(0);

  // One period: x mod m == x - q*m.
  Interval LR = RE.range(L);
  if (!LR.isEmpty()) {
    auto QL = checkedFloorDiv(LR.Lo, M), QH = checkedFloorDiv(LR.Hi, M);
    if (QL && QH && *QL == *QH) {
      LinearSum S;
      S.add(L);
      auto QM = checkedMul(*QL, M);
      if (QM && *QM != INT64_MIN) {
        S.addConstant(-*QM);
        if (!S.Overflow) {
          if (auto Sum = finishSum(S, {L, R})) {
            hit("mod.one-period");
            return *Sum;
          }
        }
      }
    }
  }

  if (!(L.kind() == ExprKind::Add ||
        (L.kind() == ExprKind::Mul && L.rhs().isConstant())))
    return L % R;

  LinearSum S;
  S.add(L);
  if (S.Overflow)
    return L % R;
  bool Changed = false;
  LinearSum Kept;
  for (const Term &T : S.Terms) {
    if (T.Coeff % M == 0) {
      hit("mod.drop-multiple");
      Changed = true;
      continue;
    }
    int64_t D = RE.info(T.Base).Divisor;
    if (D > 1) {
      auto P = checkedMul(D, T.Coeff);
      if (P && *P % M == 0) {
        hit("mod.drop-divisible");
        Changed = true;
        continue;
      }
    }
    Kept.Terms.push_back(T);
  }
  int64_t C = *checkedMod(S.Constant, M);
  if (C != S.Constant) {
    hit("mod.reduce-constant");
    Changed = true;
  }
  Kept.Constant = C;

  if (M > 0) {
    if (auto Split = findGSplit(RE, Kept, M)) {
      bool PureFactor = Split->Rest.Terms.empty() && Split->Rest.Constant == 0;
      canonicalize(Split->A);
      int64_t InnerM = M / Split->G;
      Expr Inner = buildSum(*Ctx, Split->A) % InnerM;
      LinearSum Out = std::move(Split->Rest);
      Out.add(Inner, Split->G);
      if (!Out.Overflow) {
        canonicalize(Out);
        Expr Cand = buildSum(*Ctx, Out);
        // Quick form of the guard: A fits entirely, then A mod m' is in
        // [0, m' - 1], and Out (bases: nodes of L and Inner) below its root.
        bool Quick = false;
        if (Inner.kind() == ExprKind::Mod)
          if (auto AR = sumRangeFast(Split->A, /*BasesAreRefNodes=*/true,
                                     /*RootMustFit=*/true))
            Quick = sumRangeFast(Out, /*BasesAreRefNodes=*/true,
                                 /*RootMustFit=*/false, Inner,
                                 AR->isEmpty() ? *AR : AR->mod(InnerM))
                        .has_value();
        if (Quick || fitsBelowRoot(Cand, {L, R})) {
          hit(PureFactor ? "mod.factor-gcd" : "mod.split-remainder");
          return Cand;
        }
      }
    }
  } else {
    // Factor the common gcd G > 0 of m, every coefficient and the constant.
    int64_t G = gcd64(M, Kept.Constant);
    for (const Term &T : Kept.Terms)
      G = gcd64(G, T.Coeff);
    if (G > 1 && !Kept.Terms.empty()) {
      LinearSum A;
      for (const Term &T : Kept.Terms)
        A.addTerm(T.Base, T.Coeff / G);
      A.Constant = Kept.Constant / G;
      canonicalize(A);
      Expr Cand = (buildSum(*Ctx, A) % (M / G)) * G;
      if (fitsBelowRoot(Cand, {L, R})) {
        hit("mod.factor-gcd");
        return Cand;
      }
    }
  }
  if (!Changed)
    return L % R;
  canonicalize(Kept);
  Expr Cand = buildSum(*Ctx, Kept) % M;
  // Below the root there is only the dividend (bases: nodes of L).
  if (!(Cand.kind() == ExprKind::Mod &&
        sumRangeFast(Kept, /*BasesAreRefNodes=*/true, /*RootMustFit=*/true)) &&
      !fitsBelowRoot(Cand, {L, R}))
    return L % R;
  return Cand;
}

} // namespace detail
} // namespace idxmap
