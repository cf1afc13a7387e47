//===- idxmap/Compose.h - Composition of indexing maps ----------*- C++ -*-===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_COMPOSE_H
#define IDXMAP_COMPOSE_H

#include "idxmap/IndexingMap.h"

namespace idxmap {

/// Composes `first: A -> B` with `second: B -> C` into `A -> C`
/// (second after first), with XLA's semantics. Result dims are first's dims;
/// result symbols are ordered `[second's range vars, first's range vars,
/// second's runtime vars, first's runtime vars]`. The domain keeps first's
/// constraints, second's constraints with its dims replaced by first's
/// results, and `first.result_i in second.dim_bound_i` for every i (a bare
/// variable result intersects its bound instead). Nothing is simplified.
/// Either operand UNDEFINED gives UNDEFINED; KNOWN EMPTY gives KNOWN EMPTY.
/// Requires first.numResults() == second.numDims().
///
/// Example:
/// \code
///   first:  (d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 7], s0 in [0, 3]
///   second: (d0)[s0] -> (d0 floordiv 2, s0), domain: d0 in [0, 31], s0 in [0, 1]
///   compose(first, second) ==
///     (d0)[s0, s1] -> ((d0 * 4 + s1) floordiv 2, s0), domain: d0 in [0, 7],
///       s0 in [0, 1], s1 in [0, 3], d0 * 4 + s1 in [0, 31]
/// \endcode
IndexingMap compose(const IndexingMap &First, const IndexingMap &Second);

} // namespace idxmap

#endif // IDXMAP_COMPOSE_H
