//===- idxmap/Print.h - Printing indexing maps ------------------*- C++ -*-===//
//
// Part of idxmap. Deterministic printing as FORMATS.md specifies.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_PRINT_H
#define IDXMAP_PRINT_H

#include "idxmap/Diagnostics.h"
#include "idxmap/IndexingMap.h"

#include <string>

namespace idxmap {

/// Prints an expression. Variable names come from \p Names when given
/// (custom or default names of that map), else default `d<i>`/`s<i>`.
///
/// Example: `d0 + s1 * -4 + 3` prints "d0 - s1 * 4 + 3";
/// `(d0 + s0) mod 3` prints "(d0 + s0) mod 3"; `(d0 + 1) * 2` prints
/// "(d0 + 1) * 2" (distribution is simplify's job, not the builders').
std::string printExpr(Expr E, const IndexingMap *Names = nullptr);

/// Prints a map on one line in XLA syntax, e.g.
/// "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1], d0 + s0 in [0,
/// 3]". Constraints are sorted by printed text. `UNDEFINED` / `KNOWN EMPTY` for
/// the special states.
std::string printMap(const IndexingMap &Map);

/// Prints `affine_map<(d0)[s0] -> (d0 + s0)>` (the domain is dropped; runtime
/// variables become trailing symbols).
std::string printMapMlir(const IndexingMap &Map);

/// Prints \p Map as the text of an isl map: the symbols (range, then
/// runtime variables) as parameters, the dims as the input tuple, the
/// results as the output tuple, and the domain as a conjunction of bounds
/// and constraints. Divisions print as `floor((x)/c)` and `ceil((x)/c)`,
/// remainders as `(x) mod c`, products with a constant as `c * (x)`.
/// parseIndexingMap reads the text back (runtime variables must keep the
/// names `rt<N>` to stay runtime variables). Fails for UNDEFINED, for a
/// product of two non-constants or a symbolic divisor (isl has no such
/// affine expression), and for a variable named like an isl keyword.
///
/// Example:
/// \code
///   (d0, d1)[s0] -> (d0 + s0, d1 floordiv 4), domain: d0 in [0, 9],
///       d1 in [0, 7], s0 in [0, 3], d0 + s0 in [0, 10]
///   // [s0] -> { [d0, d1] -> [d0 + s0, floor((d1)/4)] : 0 <= d0 <= 9 and
///   //           0 <= d1 <= 7 and 0 <= s0 <= 3 and 0 <= d0 + s0 <= 10 }
///   KNOWN EMPTY (of (d0) -> (d0))   // { [d0] -> [0] : false }
/// \endcode
Expected<std::string> printMapIsl(const IndexingMap &Map);

} // namespace idxmap

#endif // IDXMAP_PRINT_H
