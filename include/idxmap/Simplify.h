//===- idxmap/Simplify.h - Range-aware simplification -----------*- C++ -*-===//
//
// Part of idxmap. Tier-1 simplification: a bottom-up walk that computes each
// subexpression's range and divisibility and applies range-guarded rewrite
// rules, plus constraint passes to a fixpoint.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_SIMPLIFY_H
#define IDXMAP_SIMPLIFY_H

#include "idxmap/IndexingMap.h"

#include <cstdint>
#include <map>
#include <string>

namespace idxmap {

/// Counts how often each rewrite rule fired (`idxmap simplify --stats`).
struct SimplifyStats {
  std::map<std::string, uint64_t> RuleHits;
  void hit(const char *Rule) { ++RuleHits[Rule]; }
};

struct SimplifyOptions {
  /// Replace dims whose bound is a single point by that constant (XLA's
  /// kReplace). Reshape/bitcast indexing passes false (kPreserve).
  bool ReplacePointDims = true;
  /// Optional rule-hit counters.
  SimplifyStats *Stats = nullptr;
};

/// Simplifies \p Map in place with XLA's semantics (variables are kept;
/// unused ones are removed only by removeUnusedVars()). Infeasible domains
/// become KNOWN EMPTY. The output is canonical and simplify is idempotent.
/// Returns true if anything changed.
///
/// Example:
/// \code
///   (d0, d1) -> (d0 floordiv 8, (d0 mod 8) * 4 + d1 floordiv 4 ...)
///   // with d0 in [0, 7]:  d0 floordiv 8 -> 0, d0 mod 8 -> d0
///   (d0)[s0] -> ((d0 * 4 + s0) mod 4), domain: d0 in [0, 9], s0 in [0, 3]
///   // simplifies to (d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 3]
/// \endcode
bool simplify(IndexingMap &Map, const SimplifyOptions &Options = {});

/// Simplifies a single expression over \p Map's domain (bounds and, when
/// \p UseConstraints, its constraints) without changing the map.
///
/// Example: over `d0 in [0, 7]`, `d0 mod 8 + (d0 floordiv 8) * 8` becomes `d0`.
Expr simplifyExpr(Expr E, const IndexingMap &Map, bool UseConstraints = true,
                  const SimplifyOptions &Options = {});

} // namespace idxmap

#endif // IDXMAP_SIMPLIFY_H
