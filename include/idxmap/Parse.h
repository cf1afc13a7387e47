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

/// The syntax the parser accepts: Auto (all), Xla (no `affine_map`, no
/// aliases, a domain required), Mlir (as Auto), Isl (isl maps only).
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
/// Before the map, the text may define MLIR aliases (`#m = affine_map<...>`,
/// `#m = #other`, `#m = #xla.indexing_map<"...">`), and the map may be a use
/// `#m` or XLA's attribute `#xla.indexing_map<"...">`, whose quoted XLA text
/// (MLIR string escapes) is parsed with errors located in \p Text. Text that
/// starts with `[` or `{` (or any text with InputFormat::Isl) is an isl map,
/// `[params] -> { [dims] -> [results] : constraints }` (docs/FORMATS.md).
///
/// Example (aliases, XLA's attribute, isl):
/// \code
///   parseIndexingMap(Ctx, "#a = affine_map<(d0) -> (d0 * 2)>\n#a");
///   // (d0) -> (d0 * 2), all of int64 as d0's bound
///   parseIndexingMap(Ctx, "#xla.indexing_map<\"(d0) -> (d0), domain: "
///                         "d0 in [0, 9]\">");
///   parseIndexingMap(Ctx, "[s0] -> { [d0] -> [d0 + s0, floor(d0/4)] : "
///                         "0 <= d0 <= 9 and 0 <= s0 <= 3 }");
///   // (d0)[s0] -> (d0 + s0, d0 floordiv 4), domain: d0 in [0, 9],
///   //                                               s0 in [0, 3]
///   parseIndexingMap(Ctx, "#a = affine_map<(d0) -> (d0)>\n#b");
///   // <input>:2:1: error: undefined alias '#b'
/// \endcode
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
