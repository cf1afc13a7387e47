//===- idxmap/Parse.h - Parsing indexing maps -------------------*- C++ -*-===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_PARSE_H
#define IDXMAP_PARSE_H

#include "idxmap/Diagnostics.h"
#include "idxmap/IndexingMap.h"

#include <string>
#include <string_view>

namespace idxmap {

enum class InputFormat { Auto, Xla, Mlir, Isl };

struct ParseOptions {
  InputFormat Format = InputFormat::Auto;
  /// File name and first line number used in diagnostics.
  std::string FileName = "<input>";
  unsigned FirstLine = 1;
};

/// Parses one map in XLA syntax (`(d0)[s0]{rt0} -> (...), domain: ...`,
/// `UNDEFINED`, `KNOWN EMPTY`, custom names) or MLIR syntax
/// (`affine_map<(d0)[s0] -> (...)>` or the bare form without a domain; its
/// variables are unbounded). Leading/trailing whitespace and `//` comment
/// lines are ignored.
///
/// Example:
/// \code
///   Context Ctx;
///   auto M = parseIndexingMap(Ctx, "(d0) -> (d0 mod 2), domain: d0 in [0,
///   3]"); assert(M && M->numDims() == 1); auto Bad = parseIndexingMap(Ctx,
///   "(d0) -> (d1), domain: d0 in [0, 3]");
///   // Bad.error().str():
///   // <input>:1:10: error: unknown identifier 'd1'
///   // (d0) -> (d1), domain: d0 in [0, 3]
///   //          ^
/// \endcode
Expected<IndexingMap> parseIndexingMap(Context &Ctx, std::string_view Text,
                                       const ParseOptions &Options = {});

/// Parses an expression whose identifiers are resolved against \p Scope's
/// variable names (custom or default).
///
/// Example: with Scope `(d0)[s0] -> ...`, `"d0 mod 4 + s0"` parses to that
/// Expr.
Expected<Expr> parseExpr(std::string_view Text, const IndexingMap &Scope,
                         const ParseOptions &Options = {});

} // namespace idxmap

#endif // IDXMAP_PARSE_H
