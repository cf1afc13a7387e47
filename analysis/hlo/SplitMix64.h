//===- SplitMix64.h - A small seeded generator ------------------*- C++ -*-===//
//
// Part of idxmap. The generator behind Literal::fillRandom and the random
// scatter indices (fillUniqueScatterIndices): identical output on every
// platform, so a seed names the same inputs everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_SPLITMIX64_H
#define IDXMAP_ANALYSIS_HLO_SPLITMIX64_H

#include <cstdint>

namespace idxmap {

/// SplitMix64. Example: `SplitMix64 R{1}; R.next() % 6` is a die roll.
struct SplitMix64 {
  uint64_t State;
  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ull);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  }
  /// Uniform in [0, 1).
  double unit() { return double(next() >> 11) * 0x1.0p-53; }
};

} // namespace idxmap

#endif
