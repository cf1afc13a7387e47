//===- SimplifyMul.cpp - Rules for products -------------------------------===//
//
// Part of idxmap.
//
// Rules (hit counter names in brackets):
//   [mul.distribute]  (a + b) * k -> a*k + b*k for a constant k (then the sum
//                     rules run on the result). Exact: distributivity. Not
//                     when a*k (or a partial sum) can overflow where
//                     (a + b) * k does not (overflow guard).
//   x * 1 -> x, x * 0 -> 0, (x * a) * b -> x * (a*b): tier-0 builders.
//   [mul.commute]     a non-linear product `x * y` is ordered by
//                     compareStructurally (commutativity), so equal products
//                     are one Expr and merge inside sums.
//
//===----------------------------------------------------------------------===//
#include "SimplifyInternal.h"

namespace idxmap {
namespace detail {

Expr ExprSimplifier::rewriteMul(Expr L, Expr R) {
  if (L.isConstant() && !R.isConstant())
    std::swap(L, R);
  if (R.isConstant()) {
    if (L.kind() == ExprKind::Add) {
      LinearSum S;
      S.add(L, R.value());
      if (!S.Overflow) {
        // Kept as a product if a summand times k would overflow.
        if (auto Sum = finishSum(S, L)) {
          hit("mul.distribute");
          return *Sum;
        }
      }
    }
    return L * R;
  }
  if (compareStructurally(L, R) > 0) {
    hit("mul.commute");
    std::swap(L, R);
  }
  return L * R;
}

} // namespace detail
} // namespace idxmap
