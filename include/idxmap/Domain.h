//===- idxmap/Domain.h - Fast questions about a map's domain ----*- C++ -*-===//
//
// Part of idxmap. Interval-tier (tier 1) answers about the domain of an
// IndexingMap: emptiness and the bounds of an expression. Incomplete checks
// say so: the answer may be Unknown.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_DOMAIN_H
#define IDXMAP_DOMAIN_H

#include "idxmap/IndexingMap.h"

namespace idxmap {

/// A tri-state answer: proven empty, proven non-empty (a witness point was
/// found), or not decided by this tier.
enum class Emptiness { Empty, NonEmpty, Unknown };

/// Decides emptiness of \p Map's domain with interval reasoning only.
///
/// A copy of the map is simplified; if that proves it KNOWN EMPTY the answer
/// is Empty. A map without constraints (all bounds non-empty) is NonEmpty.
/// Otherwise the domain is searched for a witness: exhaustively when the
/// variable box has at most 4096 points (then the answer is exact), else at
/// the box corners, the bound mid points and a fixed pseudo-random sample.
/// Found: NonEmpty; not found: Unknown. An UNDEFINED map is Unknown.
///
/// Example:
/// \code
///   // (d0) -> (d0), domain: d0 in [0, 99], d0 mod 8 + 5 in [50, 54]
///   checkEmptyFast(M) == Emptiness::Empty      // d0 mod 8 + 5 <= 12
///   // (d0) -> (d0), domain: d0 in [0, 99], d0 mod 7 in [3, 3]
///   checkEmptyFast(M) == Emptiness::NonEmpty   // witness d0 = 3
/// \endcode
Emptiness checkEmptyFast(const IndexingMap &Map);

/// A sound interval containing every value of \p E over \p Map's domain
/// (bounds and constraints). The map is simplified on a copy first, and \p E
/// is simplified over that domain, so correlated forms are recognized.
/// Returns the empty interval for a KNOWN EMPTY map and the full range for
/// an UNDEFINED one.
///
/// Example:
/// \code
///   // (d0)[s0] -> (d0), domain: d0 in [0, 15], s0 in [0, 3]
///   boundsOf(d0 mod 4 + s0, M)                     // [0, 6]
///   boundsOf(d0 - (d0 floordiv 4) * 4, M)          // [0, 3]
/// \endcode
Interval boundsOf(Expr E, const IndexingMap &Map);

} // namespace idxmap

#endif // IDXMAP_DOMAIN_H
