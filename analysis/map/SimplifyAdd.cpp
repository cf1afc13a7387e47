//===- SimplifyAdd.cpp - Rules for sums -----------------------------------===//
//
// Part of idxmap. Sums are flattened into terms `Base * Coeff` plus a
// constant, merged, paired (mod/div recombination) and rebuilt in canonical
// order.
//
// Rules (hit counter names in brackets):
//   [sum.flatten]         nested sums and constant products are flattened;
//                         `(a + b) * k` inside a sum is distributed.
//   [sum.merge-terms]     `x*a + x*b -> x*(a+b)`; zero terms vanish.
//   [sum.mod-div-recombine]
//       (X mod c)*k + (X fd c)*(c*k) -> X*k            (any c != 0)
//       Proof: X mod c = X - (X fd c)*c by definition, so the left side is
//       k*X - k*c*(X fd c) + k*c*(X fd c). The div term is compared with
//       simplify(X fd c), so nested forms such as
//       ((x fd a) mod b)*k + (x fd (a*b))*(b*k) match too.
//   [sum.sub-to-mod]
//       X*k - (X fd c)*(c*k) -> (X mod c)*k
//       Proof: (X fd c)*(c*k) = k*X - k*(X mod c). Applied when every summand
//       of X occurs in the sum with the opposite sign and at least the
//       magnitude it cancels, so no coefficient grows (XLA rewrites even
//       when X is absent, which only adds summands).
//   [sum.canonical-order] summands sorted by compareStructurally of their
//                         bases, constant last (makes simplify idempotent).
//
// Counterexample kept in mind: pairing must compare the div term with the
// *simplified* X fd c; comparing unsimplified forms misses
// ((d0*2 + d1 fd 64) mod 3)*256 + ((d0*128 + d1) fd 192)*768.
//
//===----------------------------------------------------------------------===//
#include "SimplifyInternal.h"

#include <algorithm>

namespace idxmap {
namespace detail {

//===----------------------------------------------------------------------===//
// LinearSum
//===----------------------------------------------------------------------===//

void LinearSum::addConstant(int64_t C) {
  auto S = checkedAdd(Constant, C);
  if (!S) {
    Overflow = true;
    return;
  }
  Constant = *S;
}

void LinearSum::addTerm(Expr Base, int64_t K) {
  if (K != 0)
    Terms.push_back({Base, K});
}

void LinearSum::add(Expr E, int64_t K) {
  if (Overflow || K == 0)
    return;
  switch (E.kind()) {
  case ExprKind::Constant: {
    auto P = checkedMul(E.value(), K);
    if (!P) {
      Overflow = true;
      return;
    }
    addConstant(*P);
    return;
  }
  case ExprKind::Add:
    add(E.lhs(), K);
    add(E.rhs(), K);
    return;
  case ExprKind::Mul:
    if (E.rhs().isConstant()) {
      auto P = checkedMul(E.rhs().value(), K);
      if (!P) {
        Overflow = true;
        return;
      }
      add(E.lhs(), *P);
      return;
    }
    break;
  default:
    break;
  }
  addTerm(E, K);
}

void LinearSum::scale(int64_t K) {
  for (Term &T : Terms) {
    auto P = checkedMul(T.Coeff, K);
    if (!P) {
      Overflow = true;
      return;
    }
    T.Coeff = *P;
  }
  auto P = checkedMul(Constant, K);
  if (!P) {
    Overflow = true;
    return;
  }
  Constant = *P;
}

void canonicalize(LinearSum &S) {
  if (S.Terms.size() > 1)
    std::sort(S.Terms.begin(), S.Terms.end(),
              [](const Term &A, const Term &B) {
                return compareStructurally(A.Base, B.Base) < 0;
              });
  size_t Out = 0;
  for (size_t I = 0; I < S.Terms.size(); ++I) {
    if (Out > 0 && S.Terms[Out - 1].Base == S.Terms[I].Base) {
      // On overflow the two terms simply stay apart (same value).
      if (auto Sum = checkedAdd(S.Terms[Out - 1].Coeff, S.Terms[I].Coeff)) {
        S.Terms[Out - 1].Coeff = *Sum;
        continue;
      }
    }
    S.Terms[Out++] = S.Terms[I];
  }
  S.Terms.resize(Out);
  S.Terms.erase(std::remove_if(S.Terms.begin(), S.Terms.end(),
                               [](const Term &T) { return T.Coeff == 0; }),
                S.Terms.end());
}

Expr buildSum(Context &Ctx, const LinearSum &S) {
  Expr Acc;
  for (const Term &T : S.Terms) {
    Expr P = T.Coeff == 1 ? T.Base : T.Base * T.Coeff;
    Acc = Acc ? Acc + P : P;
  }
  if (!Acc)
    return Ctx.constant(S.Constant);
  if (S.Constant != 0)
    Acc = Acc + S.Constant;
  return Acc;
}

Interval sumRange(RangeEvaluator &RE, const std::vector<Term> &Terms,
                  int64_t Constant) {
  Interval R = Interval::point(Constant);
  for (const Term &T : Terms)
    R = R + scaleInterval(RE.range(T.Base), T.Coeff);
  return R;
}

std::optional<GSplit> findGSplit(RangeEvaluator &RE, const LinearSum &S,
                                 int64_t Modulus, bool RestNonPositive) {
  if (Modulus <= 1 || S.Terms.empty())
    return std::nullopt;
  std::vector<int64_t> Candidates;
  for (const Term &T : S.Terms) {
    int64_t G = gcd64(Modulus, T.Coeff);
    if (G > 1)
      Candidates.push_back(G);
  }
  std::sort(Candidates.begin(), Candidates.end(), std::greater<int64_t>());
  Candidates.erase(std::unique(Candidates.begin(), Candidates.end()),
                   Candidates.end());
  for (int64_t G : Candidates) {
    GSplit Out;
    Out.G = G;
    for (const Term &T : S.Terms) {
      if (T.Coeff % G == 0)
        Out.A.Terms.push_back({T.Base, T.Coeff / G});
      else
        Out.Rest.Terms.push_back(T);
    }
    Interval B = sumRange(RE, Out.Rest.Terms, S.Constant);
    if (B.isEmpty() || B.isFull())
      continue;
    // Shift B by a multiple of G into [0, G - 1] (or [-(G - 1), 0]) if its
    // width allows.
    __int128 T;
    if (!RestNonPositive) {
      T = floorDiv128(B.Lo, G);
      if (static_cast<__int128>(B.Hi) - T * G > G - 1)
        continue;
    } else {
      T = ceilDiv128(B.Hi, G);
      if (static_cast<__int128>(B.Lo) - T * G < -(G - 1))
        continue;
    }
    __int128 RestConst = static_cast<__int128>(S.Constant) - T * G;
    if (T < INT64_MIN || T > INT64_MAX || RestConst < INT64_MIN ||
        RestConst > INT64_MAX)
      continue;
    Out.A.Constant = static_cast<int64_t>(T);
    Out.Rest.Constant = static_cast<int64_t>(RestConst);
    return Out;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Sum rewriting
//===----------------------------------------------------------------------===//

void ExprSimplifier::flattenSimplified(Expr E, int64_t K, LinearSum &S) {
  if (S.Overflow || K == 0)
    return;
  switch (E.kind()) {
  case ExprKind::Constant: {
    auto P = checkedMul(E.value(), K);
    if (!P) {
      S.Overflow = true;
      return;
    }
    S.addConstant(*P);
    return;
  }
  case ExprKind::Add:
    flattenSimplified(E.lhs(), K, S);
    flattenSimplified(E.rhs(), K, S);
    return;
  case ExprKind::Mul:
    if (E.rhs().isConstant()) {
      auto P = checkedMul(E.rhs().value(), K);
      if (!P) {
        S.Overflow = true;
        return;
      }
      if (E.lhs().kind() == ExprKind::Add)
        hit("mul.distribute");
      flattenSimplified(E.lhs(), *P, S);
      return;
    }
    break;
  default:
    break;
  }
  // A leaf of the sum: simplify it; the result may itself be a sum.
  S.add(simplify(E), K);
}

Expr ExprSimplifier::rewriteAdd(Expr E) {
  LinearSum S;
  flattenSimplified(E, 1, S);
  if (S.Overflow)
    return simplify(E.lhs()) + simplify(E.rhs());
  return finishSum(S);
}

Expr ExprSimplifier::finishSum(LinearSum &S) {
  size_t Before = S.Terms.size();
  canonicalize(S);
  if (S.Terms.size() != Before)
    hit("sum.merge-terms");
  if (pairModsAndDivs(S))
    canonicalize(S);
  return buildSum(*Ctx, S);
}

bool ExprSimplifier::pairModsAndDivs(LinearSum &S) {
  bool Any = false;
  for (unsigned Iter = 0; Iter < 16 && !S.Overflow; ++Iter) {
    // Div terms `X fd c` (constant c) indexed by base pointer.
    std::vector<std::pair<const void *, size_t>> Divs;
    bool HasMod = false;
    for (size_t I = 0; I < S.Terms.size(); ++I) {
      Expr B = S.Terms[I].Base;
      if (B.kind() == ExprKind::FloorDiv && B.rhs().isConstant())
        Divs.push_back({B.storage(), I});
      else if (B.kind() == ExprKind::Mod && B.rhs().isConstant())
        HasMod = true;
    }
    if (Divs.empty())
      return Any;
    std::sort(Divs.begin(), Divs.end());
    auto FindDiv = [&](Expr B) -> Term * {
      auto It = std::lower_bound(
          Divs.begin(), Divs.end(), B.storage(),
          [](const auto &P, const void *K) { return P.first < K; });
      if (It == Divs.end() || It->first != B.storage())
        return nullptr;
      Term &T = S.Terms[It->second];
      return T.Coeff != 0 ? &T : nullptr;
    };

    bool Changed = false;
    LinearSum Added;
    // (X mod c)*k + (X fd c)*(c*k) -> X*k.
    if (HasMod) {
      for (size_t I = 0; I < S.Terms.size(); ++I) {
        Term &M = S.Terms[I];
        if (M.Coeff == 0 || M.Base.kind() != ExprKind::Mod ||
            !M.Base.rhs().isConstant())
          continue;
        int64_t C = M.Base.rhs().value();
        auto Want = checkedMul(C, M.Coeff);
        if (C == 0 || !Want)
          continue;
        Expr X = M.Base.lhs();
        Term *D = FindDiv(simplify(X.floorDiv(C)));
        if (!D || D->Coeff != *Want)
          continue;
        hit("sum.mod-div-recombine");
        Added.add(X, M.Coeff);
        M.Coeff = 0;
        D->Coeff = 0;
        Changed = true;
      }
    }

    // X*k - (X fd c)*(c*k) -> (X mod c)*k, when X's summands cancel.
    for (const auto &[Ptr, I] : Divs) {
      Term &D = S.Terms[I];
      if (D.Coeff == 0)
        continue;
      int64_t C = D.Base.rhs().value();
      if (C == 0 || D.Coeff % C != 0)
        continue;
      int64_t K = D.Coeff / C; // D = K*X - K*(X mod c).
      Expr X = D.Base.lhs();
      LinearSum XS;
      XS.add(X);
      if (XS.Overflow || XS.Terms.empty())
        continue;
      bool Cancels = true;
      std::vector<std::pair<size_t, int64_t>> Updates;
      for (const Term &XT : XS.Terms) {
        auto Delta = checkedMul(XT.Coeff, K);
        // S is in canonical order: binary search by structure.
        auto It = std::lower_bound(S.Terms.begin(), S.Terms.end(), XT.Base,
                                   [](const Term &T, Expr B) {
                                     return compareStructurally(T.Base, B) < 0;
                                   });
        if (!Delta || It == S.Terms.end() || It->Base != XT.Base ||
            !((It->Coeff > 0 && *Delta < 0 && It->Coeff >= -*Delta) ||
              (It->Coeff < 0 && *Delta > 0 && -It->Coeff >= *Delta))) {
          Cancels = false;
          break;
        }
        Updates.push_back({static_cast<size_t>(It - S.Terms.begin()), *Delta});
      }
      auto ConstDelta = checkedMul(XS.Constant, K);
      if (!Cancels || !ConstDelta)
        continue;
      auto NewConst = checkedAdd(S.Constant, *ConstDelta);
      if (!NewConst)
        continue;
      hit("sum.sub-to-mod");
      for (const auto &[Idx, Delta] : Updates)
        S.Terms[Idx].Coeff += Delta; // Magnitude shrinks: no overflow.
      S.Constant = *NewConst;
      D.Coeff = 0;
      Added.add(simplify(X % C), -K);
      Changed = true;
    }

    if (!Changed)
      return Any;
    Any = true;
    if (Added.Overflow) {
      S.Overflow = true;
      return Any;
    }
    for (const Term &T : Added.Terms)
      S.Terms.push_back(T);
    S.addConstant(Added.Constant);
    canonicalize(S);
  }
  return Any;
}

} // namespace detail
} // namespace idxmap
