//===- SvgWriter.h - A Layout as an SVG picture -----------------*- C++ -*-===//
//
// Part of idxmap. `idxmap draw` writes the Layout the library computed
// (idxmap/Layout.h) as one SVG document, by hand: panels of cells, each a
// <rect> (class "cell", "cell multi" for one reached several times, or
// "blank") and its text lines, row and column indices, a color legend.
// Colors follow the cells' keys (equal keys, equal colors). Every text is
// XML-escaped, so any name from the input leaves the document well formed.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TOOLS_SVGWRITER_H
#define IDXMAP_TOOLS_SVGWRITER_H

#include "idxmap/Layout.h"

#include <string>
#include <string_view>

namespace idxmap::cli {

/// \p Text escaped for XML character data and attribute values: `&`, `<`,
/// `>`, `"` and `'` become entities; control characters other than tab and
/// newline (not allowed in XML 1.0) become `?`.
/// Example: `xmlEscape("(d0) -> (d0 & 1)")` is `(d0) -&gt; (d0 &amp; 1)`.
std::string xmlEscape(std::string_view Text);

/// The fill of color key \p Key: hues a golden angle apart, so that
/// neighbouring keys (warps 0 and 1, banks 4 and 5) differ clearly; white
/// for a negative key.
/// Example: `svgColor(0)` is `hsl(0,65%,78%)`.
std::string svgColor(int64_t Key);

/// \p L as a whole SVG document (with the XML declaration).
/// Example: `writeLayoutSvg(*computeMapLayout(M, {}))` for a 2 x 3 map
/// holds 6 `<rect class="cell..."` or `<rect class="blank"` elements.
std::string writeLayoutSvg(const Layout &L);

} // namespace idxmap::cli

#endif // IDXMAP_TOOLS_SVGWRITER_H
