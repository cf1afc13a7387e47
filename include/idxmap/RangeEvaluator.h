//===- idxmap/RangeEvaluator.h - Interval bounds of expressions -*- C++ -*-===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_RANGEEVALUATOR_H
#define IDXMAP_RANGEEVALUATOR_H

#include "idxmap/IndexingMap.h"

#include <unordered_map>
#include <vector>

namespace idxmap {

/// Facts about an expression over a domain: a sound interval and a
/// divisor (every value is a multiple of Divisor, Divisor >= 1).
struct ExprInfo {
  Interval Range = Interval::full();
  int64_t Divisor = 1;
};

/// Computes sound bounds and divisibility of expressions over a map's domain
/// (variable bounds; constraints too when \p UseConstraints). Results are
/// cached per expression. Overflow gives the full range, never a wrap.
///
/// Example:
/// \code
///   // domain: d0 in [0, 15], s0 in [0, 3]
///   RangeEvaluator RE(Map);
///   RE.range(d0 mod 4 + s0)         // [0, 6]
///   RE.info(d0 * 4).Divisor         // 4
///   RE.range(d0 floordiv 4)         // [0, 3]
/// \endcode
class RangeEvaluator {
public:
  explicit RangeEvaluator(const IndexingMap &Map, bool UseConstraints = true);

  ExprInfo info(Expr E);
  Interval range(Expr E) { return info(E).Range; }
  bool isNonNegative(Expr E) { return range(E).Lo >= 0; }
  /// True if every value of \p E in the domain lies within \p I.
  bool isWithin(Expr E, Interval I) { return I.contains(range(E)); }

  const IndexingMap &map() const { return Map; }

  /// True if some constraint of the map has \p E as its expression (always
  /// false without UseConstraints).
  bool isConstrained(Expr E) const { return ByExpr.count(E) != 0; }

private:
  /// Intersects \p Info with the facts the constraints state about \p E
  /// itself (its own constraints, and `E mod c in [0, 0]`).
  void applyConstraintFacts(Expr E, ExprInfo &Info) const;
  /// Evaluates the operands of \p E bottom-up without recursion (for deep
  /// expressions).
  void computeOperandsFirst(Expr E);

  const IndexingMap &Map;
  bool UseConstraints;
  std::unordered_map<Expr, ExprInfo> Cache;
  /// Nesting of info() calls.
  unsigned Depth = 0;
  /// Inside computeOperandsFirst's walk: the node being evaluated has its
  /// operands known (sums apart, whose terms are), so it starts no walk of
  /// its own (one per node of a deep chain, each allocating its stack).
  bool Walking = false;
  /// The constraints by expression, and the divisors c of the constraints
  /// `E mod c in [0, 0]` by E: built once, so that looking up the facts of
  /// one expression does not scan every constraint (quadratic on maps with
  /// thousands of constraints).
  std::unordered_map<Expr, Interval> ByExpr;
  std::unordered_map<Expr, std::vector<int64_t>> DivisorsOf;
};

/// True when every node of \p E's tree has a known range (not the full int64
/// range) within int32 over \p Ranges' domain: then computing \p E in 32-bit
/// arithmetic gives exactly the int64 value at every point of the domain.
///
/// Example: over `d0 in [0, 1023]`, `fitsInI32(d0 * 4096, RE)` is true,
/// `fitsInI32(d0 * 4194304, RE)` false (the product passes 2^31 - 1).
bool fitsInI32(Expr E, RangeEvaluator &Ranges);

/// True when every result of \p Map fits (fitsInI32 with \p Ranges), and
/// every constraint expression fits over the variable bounds alone (what a
/// domain check evaluates). Bounds of variables do not matter: a domain
/// check compares the variables' run-time values, given in the index type.
///
/// Example: `(d0)[s0] -> (d0 * 4 + s0), d0 in [0, 1023], s0 in [0, 3]`
/// fits; the same map with `d0 in [0, 2^30]` does not.
bool mapFitsInI32(const IndexingMap &Map, RangeEvaluator &Ranges);

} // namespace idxmap

#endif // IDXMAP_RANGEEVALUATOR_H
