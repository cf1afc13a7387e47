//===- idxmap/Print.h - Printing indexing maps ------------------*- C++ -*-===//
//
// Part of idxmap. Deterministic printing as FORMATS.md specifies.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_PRINT_H
#define IDXMAP_PRINT_H

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
/// "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1], d0 + s0 in [0, 3]".
/// Constraints are sorted by printed text. `UNDEFINED` / `KNOWN EMPTY` for the
/// special states.
std::string printMap(const IndexingMap &Map);

/// Prints `affine_map<(d0)[s0] -> (d0 + s0)>` (the domain is dropped; runtime
/// variables become trailing symbols).
std::string printMapMlir(const IndexingMap &Map);

} // namespace idxmap

#endif // IDXMAP_PRINT_H
