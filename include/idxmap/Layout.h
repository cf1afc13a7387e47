//===- idxmap/Layout.h - Maps and kernel plans drawn as grids ---*- C++ -*-===//
//
// Part of idxmap. What `idxmap draw` pictures, computed without drawing: a
// map's output elements as a grid of cells, each labelled by the variables
// that reach it and colored by one of them (a thread, a warp), as CuTe's
// layout printing does; a kernel plan's thread map over its output or hero
// operand; a transpose's shared-memory tile with the bank of every element
// and the threads that write and read it. The cells, labels and color keys
// are decided here (tested in test/unit); the tool only writes them as SVG.
// No LLVM here.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_LAYOUT_H
#define IDXMAP_LAYOUT_H

#include "idxmap/Coalescing.h"
#include "idxmap/Diagnostics.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/KernelPlan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace idxmap {

/// One element of a drawn grid.
struct LayoutCell {
  /// Domain points that reach the cell: 0 for a blank cell, more than 1 for
  /// a cell reached several times (which a drawing marks).
  int64_t Hits = 0;
  /// The color key (e.g. the warp) at the first point that reaches the
  /// cell; -1 for a blank cell. Cells with equal keys share a color.
  int64_t Color = -1;
  /// Text lines drawn in the cell, e.g. {"T37"} or {"b5", "w T37", "r T8"}.
  std::vector<std::string> Lines;
};

/// A two-dimensional grid of cells, one panel of a Layout.
struct LayoutPanel {
  /// What the panel shows (the values of the leading output dims, the
  /// sub-tile), "" for the only panel of a layout.
  std::string Title;
  /// The grid: Rows x Cols cells, row-major; row r shows index RowOrigin +
  /// r of the second-to-last output dim, column c index ColOrigin + c of
  /// the last one.
  int64_t Rows = 0, Cols = 0;
  int64_t RowOrigin = 0, ColOrigin = 0;
  std::vector<LayoutCell> Cells;

  const LayoutCell &cell(int64_t R, int64_t C) const {
    return Cells[size_t(R * Cols + C)];
  }
};

/// A picture of a map or a kernel plan: panels of cells and the words that
/// explain them.
struct Layout {
  std::string Title;
  /// The axes (e.g. "r0" and "r1", or "tile row" and "tile column").
  std::string RowName, ColName;
  /// What the cells' Color keys are ("warp", "th_x", "bank").
  std::string ColorName;
  /// Explanation lines (the map, the launch, what a cell's lines mean).
  std::vector<std::string> Notes;
  std::vector<LayoutPanel> Panels;
};

/// How computeMapLayout enumerates and draws a map.
struct MapLayoutOptions {
  /// Variables fixed to one value, by name (e.g. {"bl_x", 0}: block 0).
  std::vector<std::pair<std::string, int64_t>> Fixed;
  /// The color key: a variable's name, `thread` (th_x, else the first
  /// dim), `warp` (thread floordiv 32), or "" for `warp` when the map has
  /// a dim th_x and the first dim otherwise.
  std::string ColorBy;
  /// Variables whose values label a cell, by name; empty: every dim not
  /// fixed to one value (a thread map `(th_x, bl_x)[...]` with bl_x fixed:
  /// `T<th_x>`).
  std::vector<std::string> LabelVars;
  /// Values of the leading outputs (all but the last two) to draw; empty:
  /// one panel per combination reached.
  std::vector<int64_t> Panel;
  /// Only these indices of the second-to-last and last outputs (points
  /// reaching others are left out); unset: the bounding box of the points.
  std::optional<Interval> RowWindow, ColWindow;
  /// When positive and neither window is set: if the cells reached span
  /// more than FitCells cells (their bounding boxes, over every panel), draw
  /// only the first panel's top-left corner of at most FitCells cells, and
  /// say so in the Notes (a kernel plan's first block region, readable).
  /// The domain is then enumerated twice.
  int64_t FitCells = 0;
  /// Budgets: domain points enumerated, cells drawn (blank ones included,
  /// over every panel). Over either is an error that names the option.
  int64_t MaxPoints = int64_t(1) << 22;
  int64_t MaxCells = int64_t(1) << 14;
};

/// Enumerates every point of \p M's domain (the Fixed variables pinned)
/// and draws its output: the last output is the column, the one before the
/// row (a 1-D map is one row, a map without outputs one cell), the others
/// one panel per combination. A cell is labelled by the first point that
/// reaches it (in enumeration order, the last variable fastest); cells no
/// point reaches are blank. Errors (no location): an UNDEFINED map, an
/// unknown or repeated variable name in the options, an unbounded
/// variable, more than MaxPoints points, more than MaxCells cells, an
/// overflowing evaluation.
///
/// Example: `(d0, d1) -> (d1, d0 * 2), domain: d0 in [0, 1], d1 in [0, 2]`
/// with default options has one 3 x 3 panel, columns 0..2, column 1
/// blank; cell (2, 2) has Lines {"1,2"} and Color 1 (d0 colors it):
/// \code
///   Expected<Layout> L = computeMapLayout(M, MapLayoutOptions{});
///   L->Panels[0].cell(2, 2).Lines[0] == "1,2";
/// \endcode
Expected<Layout> computeMapLayout(const IndexingMap &M,
                                  const MapLayoutOptions &Options);

/// Where element (\p Row, \p Col) of sub-tile \p Sub of a transpose's
/// shared tile lives, as the transpose emitter lays it out
/// (TransposeKernel::groupPtr and elemPtr in codegen/emitters): an element
/// offset into the tile array. Row is a tile row (P), Col an element of M
/// within the tile (< 32 T.V). Scalar tiles keep group slots of V elements
/// XOR-swizzled by row: `Row * 32V + ((Col / V) ^ Row) * V + Col % V`;
/// vector tiles (ReadVec or WriteVec > 1) slots of GS = max(ReadVec,
/// WriteVec) elements swizzled by `Row / WriteVec`. Sub-tiles follow one
/// another, 32 * 32V elements each.
///
/// Example: the scalar tiling with V = 2: element (3, 5) is group 2 of
/// row 3, at slot 2 ^ 3 = 1: offset 3 * 64 + 1 * 2 + 1 = 195.
int64_t transposeTileOffset(const TransposeTiling &T, int64_t Row, int64_t Col,
                            int64_t Sub = 0);

/// The shared-memory bank of tile offset \p Offset of elements of
/// \p ElementBytes: (byte address / 4) mod 32.
///
/// Example: `sharedBank(195, 4)` is 3 (word 195); `sharedBank(195, 2)` is
/// 1 (byte 390, word 97); `sharedBank(195, 8)` is 6 (word 390).
inline int64_t sharedBank(int64_t Offset, int64_t ElementBytes) {
  return (Offset * ElementBytes / 4) % 32;
}

/// The thread that stores tile element (Row, Col) of sub-tile Sub in the
/// reading phase and the one that loads it in the writing phase, each with
/// the range variables `[it, j]` of TransposeTiling's ReadIdx and WriteIdx
/// at that access (so ReadIdx(Writer, bl)[WriterIt, WriterJ] and
/// WriteIdx(Reader, bl)[ReaderIt, ReaderJ] are the same input element).
struct TileAccess {
  int64_t Writer = -1, WriterIt = 0, WriterJ = 0;
  int64_t Reader = -1, ReaderIt = 0, ReaderJ = 0;
};

/// What each thread of a block of tiling \p T stores into and loads from
/// the tile: [Sub][Row][Col], -1 where no thread does (none, for a full
/// tile). The reading phase: warp w, iteration it stores row w + W it, lane
/// l its group (vector tiles: ReadVec rows per warp instruction); the
/// writing phase: lane l loads row l (vector tiles: WriteVec rows of one
/// column).
///
/// Example: the scalar tiling of 4 warps, V = 1 (Iters = 8):
/// \code
///   auto A = transposeTileAccesses(T);
///   // A[0][5][7]: row 5 = warp 1 + 4 * it 1, lane 7 stores it:
///   //   Writer 39, WriterIt 1, WriterJ 0;
///   // lane 5 loads row 5, group 7 = warp 3 + 4 * it 1:
///   //   Reader 101, ReaderIt 1, ReaderJ 0.
/// \endcode
std::vector<std::vector<std::vector<TileAccess>>>
transposeTileAccesses(const TransposeTiling &T);

/// What a tile drawing colors its cells by.
enum class TileColor { Bank, Writer, Reader };

/// Sub-tile \p Sub of a transpose's shared tile (32 rows of P by 32 V
/// elements of M), each cell with the bank of its element (\p ElementBytes
/// wide, sharedBank), its offset in the tile array (transposeTileOffset:
/// the swizzle), the thread that writes it in the reading phase and the
/// one that reads it in the writing phase: Lines {"b<bank>", "@<offset>",
/// "w T<thread>", "r T<thread>"}; colored by bank, or by the writer's or
/// reader's warp.
/// Panels: sub-tile \p Sub, or every sub-tile when \p Sub is negative.
///
/// Example: the scalar tiling of 4-byte elements with V = 1: cell (1, 0)
/// is word 32 + (0 ^ 1) = 33, bank 1; warp 1 writes it (lane 0), thread 1
/// (lane 1) reads it: Lines {"b1", "@33", "w T32", "r T1"}.
Layout transposeTileLayout(const TransposeTiling &T, int64_t ElementBytes,
                           TileColor ColorBy = TileColor::Bank,
                           int64_t Sub = 0);

} // namespace idxmap

#endif // IDXMAP_LAYOUT_H
