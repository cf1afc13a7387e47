//===- Rescale.cpp - IndexingMap::rescaleSymbols --------------------------===//
//
// Part of idxmap. A range variable s with `s mod c in [r, r]` (c > 0) only
// takes the values c*t + r. Substituting s := c*s' + r turns the sparse range
// into a dense one: s' runs over [ceil((lo - r)/c), floor((hi - r)/c)], which
// is exactly the set {t : lo <= c*t + r <= hi}. The mod constraint then
// always holds and is dropped. Other constraints and the results are
// rewritten with the substitution, so every (old) domain point corresponds
// to exactly one new point with the same results.
//
// Mod constraints are merged first (CRT), so `s mod 6 in [3, 3]` and
// `s mod 7 in [5, 5]` become one `s mod 42 in [33, 33]` and the outcome does
// not depend on any iteration order (XLA's depends on hash-map order).
// Symbols are processed lowest first.
//
//===----------------------------------------------------------------------===//
#include "idxmap/IndexingMap.h"

#include "SimplifyInternal.h"

namespace idxmap {

using namespace detail;

bool IndexingMap::rescaleSymbols() {
  if (isUndefined() || isKnownEmpty())
    return false;
  bool Changed = mergeModConstraints(*this, nullptr);
  if (isKnownEmpty())
    return true;
  for (unsigned Pos = 0; Pos < numRangeVars(); ++Pos) {
    Expr S = Ctx->symbol(Pos);
    // The constraint `s mod c in [r, r]` with the largest c.
    int Best = -1;
    for (unsigned I = 0; I < Constraints.size(); ++I) {
      const Constraint &C = Constraints[I];
      if (C.E.kind() != ExprKind::Mod || C.E.lhs() != S ||
          !C.E.rhs().isConstant() || C.E.rhs().value() <= 0 || !C.I.isPoint())
        continue;
      if (Best < 0 || C.E.rhs().value() > Constraints[Best].E.rhs().value())
        Best = static_cast<int>(I);
    }
    if (Best < 0)
      continue;
    int64_t M = Constraints[Best].E.rhs().value();
    int64_t R = Constraints[Best].I.Lo;
    if (R < 0 || R >= M) {
      markKnownEmpty();
      return true;
    }
    Interval &B = RangeVars[Pos].Bound;
    Interval NewB =
        clampInterval(ceilDiv128(static_cast<__int128>(B.Lo) - R, M),
                      floorDiv128(static_cast<__int128>(B.Hi) - R, M));
    if (NewB.isEmpty()) {
      markKnownEmpty();
      return true;
    }
    B = NewB;
    Expr Repl = S * M + R;
    std::vector<Expr> SymRepl(numSymbols());
    SymRepl[Pos] = Repl;
    for (Expr &E : Results)
      E = E.replace({}, SymRepl);
    std::vector<Constraint> Old = std::move(Constraints);
    Constraints.clear();
    for (unsigned I = 0; I < Old.size(); ++I) {
      if (static_cast<int>(I) == Best)
        continue;
      if (!addConstraint(Old[I].E.replace({}, SymRepl), Old[I].I))
        return true;
    }
    Changed = true;
  }
  return Changed;
}

} // namespace idxmap
