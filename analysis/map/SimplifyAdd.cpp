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
//   Overflow guard: the canonical sum is returned only if fitsBelowRoot()
//   accepts it (merged terms like s0 * 2, distributed products and reordered
//   partial sums can overflow where the input does not); pairing is dropped
//   first if it is the cause. Otherwise rewriteAdd falls back, keeping the
//   result a left-nested sum that print -> parse reproduces:
//   [sum.keep-products]   products `(sum) * k` that rewriteMul refused to
//                         distribute stay single terms;
//   [sum.reorder]         the canonical terms, reordered so that every
//                         partial sum fits;
//   [sum.keep-summands]   the input's summands, each simplified unless it
//                         simplifies to a sum, in their order (or reordered
//                         as above);
//   [sum.keep-input]      the input unchanged.
//
// Counterexample kept in mind: pairing must compare the div term with the
// *simplified* X fd c; comparing unsimplified forms misses
// ((d0*2 + d1 fd 64) mod 3)*256 + ((d0*128 + d1) fd 192)*768.
//
//===----------------------------------------------------------------------===//
#include "ExprStorage.h"
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
  if (K == 0)
    return;
  // Sums have a few terms: one allocation instead of growing 1, 2, 4, 8.
  if (Terms.capacity() == 0)
    Terms.reserve(8);
  Terms.push_back({Base, K});
}

void LinearSum::add(Expr Root, int64_t RootK) {
  // A worklist in tree order, not recursion: a sum of N terms is N deep.
  std::vector<std::pair<Expr, int64_t>> Work{{Root, RootK}};
  while (!Work.empty() && !Overflow) {
    auto [E, K] = Work.back();
    Work.pop_back();
    if (K == 0)
      continue;
    switch (E.kind()) {
    case ExprKind::Constant: {
      auto P = checkedMul(E.value(), K);
      if (!P) {
        Overflow = true;
        return;
      }
      addConstant(*P);
      continue;
    }
    case ExprKind::Add:
      Work.push_back({E.rhs(), K});
      Work.push_back({E.lhs(), K});
      continue;
    case ExprKind::Mul:
      if (E.rhs().isConstant()) {
        auto P = checkedMul(E.rhs().value(), K);
        if (!P) {
          Overflow = true;
          return;
        }
        Work.push_back({E.lhs(), *P});
        continue;
      }
      break;
    default:
      break;
    }
    addTerm(E, K);
  }
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
    std::sort(S.Terms.begin(), S.Terms.end(), [](const Term &A, const Term &B) {
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

void ExprSimplifier::flattenSimplified(Expr Root, int64_t RootK, LinearSum &S,
                                       std::vector<Expr> *Leaves) {
  // A worklist in tree order (left operand first), not recursion.
  std::vector<std::pair<Expr, int64_t>> Work{{Root, RootK}};
  while (!Work.empty() && !S.Overflow) {
    auto [E, K] = Work.back();
    Work.pop_back();
    if (K == 0)
      continue;
    switch (E.kind()) {
    case ExprKind::Constant: {
      auto P = checkedMul(E.value(), K);
      if (!P) {
        S.Overflow = true;
        return;
      }
      S.addConstant(*P);
      continue;
    }
    case ExprKind::Add:
      Work.push_back({E.rhs(), K});
      Work.push_back({E.lhs(), K});
      continue;
    case ExprKind::Mul:
      if (E.rhs().isConstant()) {
        auto P = checkedMul(E.rhs().value(), K);
        if (!P) {
          S.Overflow = true;
          return;
        }
        if (E.lhs().kind() == ExprKind::Add)
          hit("mul.distribute");
        Work.push_back({E.lhs(), *P});
        continue;
      }
      break;
    default:
      break;
    }
    // A leaf of the sum: simplify it; the result may itself be a sum.
    Expr Leaf = simplify(E);
    if (Leaves)
      Leaves->push_back(Leaf);
    S.add(Leaf, K);
  }
}

namespace {
/// Collects the summands of \p E's chain of `+` nodes, left to right.
void collectSummands(Expr E, std::vector<Expr> &Out) {
  std::vector<Expr> Work{E};
  while (!Work.empty()) {
    Expr N = Work.back();
    Work.pop_back();
    if (N.kind() == ExprKind::Add) {
      Work.push_back(N.rhs());
      Work.push_back(N.lhs());
      continue;
    }
    Out.push_back(N);
  }
}

/// Adds \p E to \p S like LinearSum::add, except that a sum multiplied by a
/// constant stays one term `(sum) * k`: the overflow guard refused to
/// distribute it.
void addKeepingProducts(LinearSum &S, Expr Root) {
  std::vector<Expr> Summands;
  collectSummands(Root, Summands);
  for (Expr E : Summands) {
    if (E.kind() == ExprKind::Mul && E.rhs().isConstant() &&
        E.lhs().kind() == ExprKind::Add) {
      S.addTerm(E.lhs(), E.rhs().value());
      continue;
    }
    S.add(E);
  }
}
} // namespace

/// Sums are rewritten in up to three attempts, each a left-nested sum that
/// the overflow guard checks (the first that passes is the result, so that
/// the result is the same whenever the input simplifies to the same terms,
/// which keeps simplify idempotent):
///   1. the canonical sum: fully flattened (constants distributed, leaves
///      that simplify to sums flattened), merged, paired, sorted;
///   2. the same, but a product `(sum) * k` that the guard kept together
///      (rewriteMul) stays one term;
///   3. the terms of 1 or 2 in an order whose partial sums fit;
///   4. the input's own summands, each replaced by its simplified form
///      unless that is a sum, in their order, else in an order whose partial
///      sums fit.
/// If none passes, the input stays as it is.
Expr ExprSimplifier::rewriteAdd(Expr E) {
  LinearSum S;
  flattenSimplified(E, 1, S);
  if (!S.Overflow)
    if (auto R = finishSum(S, ExprRefs::sumLeavesOf(E)))
      return *R;
  std::vector<Expr> Refs;
  LinearSum Again;
  flattenSimplified(E, 1, Again, &Refs); // Memoized: only collects leaves.
  return rewriteAddCarefully(E, S, Refs);
}

Expr ExprSimplifier::rewriteAddCarefully(Expr E, const LinearSum &S,
                                         std::vector<Expr> &Refs) {
  std::vector<Expr> Summands;
  collectSummands(E, Summands);
  std::vector<Expr> Simplified;
  Simplified.reserve(Summands.size());
  LinearSum Kept;
  for (Expr X : Summands) {
    Expr SX = simplify(X);
    Simplified.push_back(SX);
    Refs.push_back(SX);
    addKeepingProducts(Kept, SX);
  }
  if (!Kept.Overflow) {
    // Skip the second attempt when it has the first one's terms (S is
    // canonical and unpaired after a failed finishSum).
    canonicalize(Kept);
    bool Same = !S.Overflow && Kept.Terms.size() == S.Terms.size() &&
                Kept.Constant == S.Constant;
    for (size_t I = 0; Same && I < Kept.Terms.size(); ++I)
      Same = Kept.Terms[I].Base == S.Terms[I].Base &&
             Kept.Terms[I].Coeff == S.Terms[I].Coeff;
    if (!Same) {
      if (auto R = finishSum(Kept, Refs)) {
        hit("sum.keep-products");
        return *R;
      }
    } else {
      Kept.Overflow = true; // Nothing new to try with it.
    }
  }
  // The canonical terms in an order whose partial sums fit.
  const LinearSum *KeptP = &Kept;
  for (const LinearSum *T : {&S, KeptP}) {
    if (T->Overflow)
      continue;
    if (auto R = buildReorderedSum(*T, Refs)) {
      hit("sum.reorder");
      return *R;
    }
  }

  // The input's summands, simplified unless that gives a sum, then as they
  // are; each list in its order, else reordered. A chain equal to the input
  // ends the search (the input is always acceptable, and a second simplify
  // must stop at the same place).
  std::vector<Expr> Chosen;
  Chosen.reserve(Summands.size());
  for (size_t I = 0; I < Summands.size(); ++I)
    Chosen.push_back(Simplified[I].kind() == ExprKind::Add ? Summands[I]
                                                           : Simplified[I]);
  for (Expr X : Summands)
    Refs.push_back(X);
  for (const std::vector<Expr> *List : {&Chosen, &Summands}) {
    Expr Chain;
    for (Expr X : *List)
      Chain = Chain ? Chain + X : X;
    if (Chain == E)
      return E;
    if (fitsBelowRoot(Chain, Refs)) {
      hit("sum.keep-summands");
      return Chain;
    }
    if (auto R = buildReorderedSum(*List, 0, Refs)) {
      if (*R != E)
        hit("sum.keep-summands");
      return *R;
    }
  }
  // Only a sum that is not left-nested can get here (a left-nested input is
  // its own chain of summands); it stays as it is.
  hit("sum.keep-input");
  return E;
}

std::optional<Expr> ExprSimplifier::buildReorderedSum(const LinearSum &S,
                                                      const ExprRefs &Refs) {
  std::vector<Expr> Summands;
  Summands.reserve(S.Terms.size());
  for (const Term &T : S.Terms) {
    if (T.Coeff == 1 && T.Base.kind() == ExprKind::Add)
      return std::nullopt;
    Summands.push_back(T.Coeff == 1 ? T.Base : T.Base * T.Coeff);
  }
  return buildReorderedSum(std::move(Summands), S.Constant, Refs);
}

/// Greedy: start with the summand nearest to zero, then always add the one
/// that keeps the partial sum's interval nearest to zero (ties broken by
/// compareStructurally, so the order depends only on the summands); the
/// constant goes last, as the tier-0 builders want it. The built sum must
/// still pass fitsBelowRoot().
std::optional<Expr>
ExprSimplifier::buildReorderedSum(std::vector<Expr> Summands, int64_t Constant,
                                  const ExprRefs &Refs) {
  // Constants among the summands join the constant.
  std::vector<std::pair<Expr, Interval>> Items;
  RelativeState St;
  for (Expr X : Summands) {
    if (X.isConstant()) {
      auto C = checkedAdd(Constant, X.value());
      if (!C)
        return std::nullopt;
      Constant = *C;
      continue;
    }
    auto R = rangeRelative(X, Refs, St);
    if (!R || R->isEmpty())
      return std::nullopt;
    Items.push_back({X, *R});
  }
  if (Items.size() < 2)
    return std::nullopt;
  std::sort(Items.begin(), Items.end(), [](const auto &A, const auto &B) {
    return compareStructurally(A.first, B.first) < 0;
  });
  using i128 = __int128;
  auto Magnitude = [](i128 Lo, i128 Hi) {
    return std::max(Lo < 0 ? -Lo : Lo, Hi < 0 ? -Hi : Hi);
  };
  std::vector<bool> Used(Items.size(), false);
  Expr Acc;
  i128 Lo = 0, Hi = 0;
  for (size_t Step = 0; Step < Items.size(); ++Step) {
    size_t Best = Items.size();
    i128 BestMag = 0;
    for (size_t I = 0; I < Items.size(); ++I) {
      if (Used[I])
        continue;
      i128 NLo = Lo + Items[I].second.Lo, NHi = Hi + Items[I].second.Hi;
      i128 Mag = Magnitude(NLo, NHi);
      if (Best == Items.size() || Mag < BestMag) {
        Best = I;
        BestMag = Mag;
      }
    }
    Used[Best] = true;
    Lo += Items[Best].second.Lo;
    Hi += Items[Best].second.Hi;
    Acc = Acc ? Acc + Items[Best].first : Items[Best].first;
  }
  if (Constant != 0)
    Acc = Acc + Constant;
  if (!fitsBelowRoot(Acc, Refs))
    return std::nullopt;
  return Acc;
}

std::optional<Expr> ExprSimplifier::buildCheckedSum(const LinearSum &S,
                                                    const ExprRefs &Refs,
                                                    bool BasesAreRefNodes) {
  if (S.Overflow)
    return std::nullopt;
  // `x + (a + b)` would print as `x + a + b`, which parses as another tree.
  for (const Term &T : S.Terms)
    if (T.Coeff == 1 && T.Base.kind() == ExprKind::Add)
      return std::nullopt;
  Expr E = buildSum(*Ctx, S);
  if (!sumRangeFast(S, BasesAreRefNodes, /*RootMustFit=*/false) &&
      !fitsBelowRoot(E, Refs))
    return std::nullopt;
  return E;
}

/// buildSum(S) is `((t0 + t1) + ...) + c` with ti = Base_i * Coeff_i. If
/// every base fits and every term and partial sum has an interval (from the
/// bases' intervals, in 128 bits) inside int64, fitsBelowRoot would accept
/// it (fitsEverywhere too when \p RootMustFit). Returns the sum's interval
/// then (empty if no domain point evaluates it), else nullopt, which means
/// "ask fitsBelowRoot". This answers the common case without building or
/// hashing nodes. Bases: leaves, \p Extra (interval \p ExtraRange, known to
/// fit), nodes of the replaced expression's operands when
/// \p BasesAreRefNodes (they evaluate, so the RangeEvaluator's interval is
/// sound), else fitInfo.
std::optional<Interval> ExprSimplifier::sumRangeFast(const LinearSum &S,
                                                     bool BasesAreRefNodes,
                                                     bool RootMustFit,
                                                     Expr Extra,
                                                     Interval ExtraRange) {
  using i128 = __int128;
  size_t N = S.Terms.size();
  i128 Lo = 0, Hi = 0;
  for (size_t I = 0; I < N; ++I) {
    const Term &T = S.Terms[I];
    Interval BR;
    const ExprStorage *BS = T.Base.storage();
    if (BS->Kind < ExprKind::Add) {
      BR = leafRange(BS);
    } else if (T.Base == Extra) {
      BR = ExtraRange;
    } else if (BasesAreRefNodes) {
      BR = RE.range(T.Base);
    } else {
      FitInfo F = fitInfo(T.Base);
      if (!F.Fits)
        return std::nullopt;
      BR = F.Range;
    }
    if (BR.isEmpty())
      return Interval::empty(); // No domain point evaluates this sum.
    if (BR.isFull())
      return std::nullopt; // Unknown.
    i128 A = static_cast<i128>(BR.Lo) * T.Coeff;
    i128 B = static_cast<i128>(BR.Hi) * T.Coeff;
    if (A > B)
      std::swap(A, B);
    // Which nodes exist: term I is a product unless Coeff is 1; the partial
    // sum after it is a node for I > 0. The root (the last node) is exempt
    // unless RootMustFit.
    bool LastNode = I + 1 == N && S.Constant == 0;
    bool Exempt = LastNode && !RootMustFit;
    if (T.Coeff != 1 && !(Exempt && N == 1) && (A < INT64_MIN || B > INT64_MAX))
      return std::nullopt;
    Lo += A;
    Hi += B;
    if (I > 0 && !Exempt && (Lo < INT64_MIN || Hi > INT64_MAX))
      return std::nullopt;
  }
  Lo += S.Constant;
  Hi += S.Constant;
  if (Lo < INT64_MIN || Hi > INT64_MAX) {
    if (RootMustFit || N == 0)
      return std::nullopt;
    return Interval::full(); // Exempt root: its interval is not needed.
  }
  return Interval{static_cast<int64_t>(Lo), static_cast<int64_t>(Hi)};
}

std::optional<Expr> ExprSimplifier::finishSum(LinearSum &S,
                                              const ExprRefs &Refs) {
  size_t Before = S.Terms.size();
  canonicalize(S);
  if (S.Terms.size() != Before)
    hit("sum.merge-terms");
  // The caller's S has bases that are nodes of Refs (flattened from them);
  // pairing adds others.
  LinearSum Unpaired;
  if (pairModsAndDivs(S, &Unpaired)) {
    canonicalize(S);
    if (auto R = buildCheckedSum(S, Refs, /*BasesAreRefNodes=*/false))
      return R;
    // Pairing can build big intermediates (x*k from (x mod c)*k + ...).
    S = std::move(Unpaired);
  }
  return buildCheckedSum(S, Refs, /*BasesAreRefNodes=*/true);
}

bool ExprSimplifier::pairModsAndDivs(LinearSum &S, LinearSum *Backup) {
  bool Any = false;
  // S as it was, saved before the first change.
  auto Save = [&]() {
    if (Backup && !Any) {
      *Backup = S;
      Backup = nullptr;
    }
  };
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
        Save();
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
        // Opposite signs and |Delta| <= |Coeff|; the sums of opposite
        // signs cannot overflow where negating INT64_MIN would.
        if (!Delta || It == S.Terms.end() || It->Base != XT.Base ||
            !((It->Coeff > 0 && *Delta < 0 && It->Coeff + *Delta >= 0) ||
              (It->Coeff < 0 && *Delta > 0 && It->Coeff + *Delta <= 0))) {
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
      Save();
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
