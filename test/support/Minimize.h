//===- support/Minimize.h - Shrinking failing indexing maps -----*- C++ -*-===//
//
// Part of idxmap. Greedy test-case reduction for the fuzzers: given a map
// for which a predicate fails, tries smaller maps (fewer results and
// constraints, subexpressions replaced by operands or constants, smaller
// bounds, fewer variables) and keeps any that still fail.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_MINIMIZE_H
#define IDXMAP_TEST_SUPPORT_MINIMIZE_H

#include "idxmap/IndexingMap.h"

#include <cstdint>
#include <functional>

namespace idxmap::testing {

/// Returns true if the map still shows the failure being minimized.
using FailurePredicate = std::function<bool(const IndexingMap &)>;

/// A size measure: smaller is simpler. Counts expression nodes, constraints,
/// results and variables first, then the total width of the bounds and the
/// magnitude of the constants.
struct MapSize {
  uint64_t Structure = 0;
  uint64_t Widths = 0;
  uint64_t Constants = 0;
  bool operator<(const MapSize &O) const;
};
MapSize measureMap(const IndexingMap &M);

struct MinimizeOptions {
  /// The most predicate calls.
  unsigned MaxSteps = 4000;
};

/// Shrinks \p M while \p Fails holds; returns the smallest failing map
/// found (\p M itself if nothing smaller fails). Deterministic.
///
/// Example: for a simplifier bug on `d0 floordiv -3` inside a 3-result map
/// with two constraints, the result is typically a one-result map
/// `(d0) -> (d0 floordiv -3), domain: d0 in [0, 2]`.
IndexingMap minimizeMap(const IndexingMap &M, const FailurePredicate &Fails,
                        const MinimizeOptions &Options = {});

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_MINIMIZE_H
