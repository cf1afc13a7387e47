//===- idxmap/Tuning.h - Overrides of the kernel plans' choices -*- C++ -*-===//
//
// Part of idxmap. The kernel plans (KernelPlan.h) choose every parameter
// from the maps and the device model; a Tuning overrides some of them, for
// experiments and for the autotuner's cache. One table lists every knob:
// its name, range, default and meaning. The libraries never read the
// environment: the `idxmap` tool fills a Tuning from `--tune NAME=VALUE`
// and from environment variables of the knobs' names.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TUNING_H
#define IDXMAP_TUNING_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

/// Overrides of plan choices; an unset field leaves the choice to the plan.
///
/// Example:
/// \code
///   Tuning T;
///   T.RedRowLanes = 256; // row reductions: 256 threads per row
///   // or by name, validated: setTuning(T, "IDXMAP_RED_ROW_LANES", 256)
/// \endcode
struct Tuning {
  std::optional<int64_t> EvictLast, IrInstCombine;
  std::optional<int64_t> LoopUnroll;
  std::optional<int64_t> PieceByOperand, PieceEvictLast, PieceOverOutput,
      PieceThreads, PieceUnroll;
  std::optional<int64_t> RedColLanes, RedColSplit, RedColUnroll, RedColWarps;
  std::optional<int64_t> RedEvictFirst, RedFullBlocksPerSm, RedFullChunk,
      RedFullChunkThreads, RedFullTail, RedFullThreads, RedFullUnroll;
  std::optional<int64_t> RedLoadsFirst, RedMinBlocks, RedRowK, RedRowLanes,
      RedRowThreads, RedRowUnroll, RedTicketFold;
  std::optional<int64_t> RowNormElements, RowNormExactDivide, RowNormThreads;
  std::optional<int64_t> ScatterEvictFirst, ScatterThreads;
  std::optional<int64_t> ScanItems, ScanPipelined, ScanSharedRows,
      ScanSharedTile, ScanStages, ScanThreads;
  std::optional<int64_t> TrReadVec, TrSubP, TrSubM, TrWarps, TrWriteVec;
};

/// One knob of the table: its name (also the environment variable the tool
/// reads), the field it sets, the values it accepts [Lo, Hi] (with Pow2,
/// rounded down to a power of two), the default in words, and its meaning.
struct TuningKnobInfo {
  const char *Name;
  std::optional<int64_t> Tuning::*Field;
  int64_t Lo, Hi;
  bool Pow2;
  const char *Default;
  const char *Doc;
};

/// Every knob, sorted by name: {"IDXMAP_RED_COL_LANES",
/// &Tuning::RedColLanes, 1, 32, true, "32", "lanes along the kept minor dim
/// of a column reduction"}, ...
const std::vector<TuningKnobInfo> &tuningTable();

/// The knob named \p Name, or null.
const TuningKnobInfo *findTuningKnob(std::string_view Name);

/// Sets the knob \p Name of \p T to \p Value after checking both; returns
/// the error otherwise.
///
/// Example: `setTuning(T, "IDXMAP_RED_ROW_LANES", 4096)` is "tuning knob
/// IDXMAP_RED_ROW_LANES=4096 is out of range: valid values are 1 to 1024
/// (rounded down to a power of two)".
std::optional<std::string> setTuning(Tuning &T, std::string_view Name,
                                     int64_t Value);

/// The value of knob \p Name in \p T, or \p Default when unset, clamped to
/// the knob's range and rounded down to a power of two for Pow2 knobs.
/// \p Name must be in tuningTable().
///
/// Example: with T.RedRowLanes = 300,
/// `tuned(T, "IDXMAP_RED_ROW_LANES", 32)` is 256.
int64_t tuned(const Tuning &T, std::string_view Name, int64_t Default);

/// The same by field: `tuned(T, &Tuning::RedRowLanes, 32)`.
int64_t tuned(const Tuning &T, std::optional<int64_t> Tuning::*Field,
              int64_t Default);

/// Checks every set field of \p T against its knob's range (fields set
/// directly, not through setTuning). Returns nothing when valid, else
/// setTuning's message for the first knob out of range.
std::optional<std::string> validateTuning(const Tuning &T);

/// Whether knob \p Name is set in \p T.
bool isTuned(const Tuning &T, std::string_view Name);

/// \p Under with every knob set in \p Over replaced by Over's value: how
/// a tune cache's knobs are layered under the caller's overrides.
///
/// Example: Under = {RedRowLanes = 256, RedRowUnroll = 4}, Over =
/// {RedRowUnroll = 16} gives {RedRowLanes = 256, RedRowUnroll = 16}.
Tuning overlayTuning(const Tuning &Under, const Tuning &Over);

/// The set knobs as `NAME=VALUE` separated by spaces ("" when none).
std::string printTuning(const Tuning &T);

/// The table as Markdown, one row per knob: name, range (", power of two"
/// for knobs rounded down to one), default, meaning. What `idxmap tuning`
/// prints and docs/TUNING.md holds.
///
/// Example: the row of IDXMAP_RED_COL_WARPS is
/// "| `IDXMAP_RED_COL_WARPS` | 1..32, power of two | 8 | column reduction:
/// warps per block |".
std::string formatTuningTable();

} // namespace idxmap

#endif // IDXMAP_TUNING_H
