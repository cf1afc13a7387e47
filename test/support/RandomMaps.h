//===- support/RandomMaps.h - Seeded codegen-like maps ----------*- C++ -*-===//
//
// Part of idxmap. Generates indexing maps shaped like the ones XLA's GPU
// codegen builds (linearize/delinearize chains, reshapes, tiling, transposes,
// broadcasts, slices and pads, constrained sums, loop-emitter thread maps,
// dynamic slices) for the fuzzers (small, enumerable domains) and the
// benchmark corpus (realistic sizes). Deterministic for a seed on every
// platform (own PRNG, no std distributions).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_RANDOMMAPS_H
#define IDXMAP_TEST_SUPPORT_RANDOMMAPS_H

#include "idxmap/IndexingMap.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace idxmap::testing {

/// A small, portable PRNG (splitmix64).
class Rng {
public:
  explicit Rng(uint64_t Seed) : State(Seed) {}
  uint64_t next();
  /// Uniform in [Lo, Hi] (inclusive); Lo <= Hi.
  int64_t range(int64_t Lo, int64_t Hi);
  /// True with probability Num/Den.
  bool chance(unsigned Num, unsigned Den);
  template <typename T> const T &pick(const std::vector<T> &V) {
    return V[static_cast<size_t>(range(0, int64_t(V.size()) - 1))];
  }

private:
  uint64_t State;
};

/// The families of maps the generator produces.
enum class MapFamily : unsigned {
  LinearizeDelinearize, ///< `((d0 * 4 + s0) mod 32) floordiv 8` and chains.
  Reshape,              ///< Linearize some dims, delinearize into others.
  Tiling,               ///< Tile/in-tile splits with floordiv/mod, ceildiv.
  Transpose,            ///< Permutations, possibly fused with a reshape.
  Broadcast,            ///< Dropped dims, point dims, constant results.
  SliceOrPad,           ///< Offsets and strides, negative ones included.
  ConstrainedSum,       ///< Sums with mod/range/sum constraints (some empty).
  ThreadMap,            ///< Loop-emitter thread maps for ranks 1-6.
  DynamicSlice,         ///< Runtime variables as offsets.
  RandomExpr,           ///< Random expression trees and constraints.
  RuleTargets,          ///< The operand shapes of simplify's rules, with
                        ///< parameters on both sides of each rule's guard
                        ///< (signs, ranges crossing period boundaries).
  NumFamilies
};

const char *familyName(MapFamily F);

struct RandomMapOptions {
  /// Realistic sizes (thousands of threads, large tensors): for the
  /// benchmark corpus; domains are then not enumerable.
  bool Realistic = false;
  /// In the small mode, the most points of a map's variable box.
  uint64_t MaxBoxPoints = 4096;
  /// Occasionally use negative divisors and ceildiv.
  bool NegativeDivisors = true;
  bool CeilDiv = true;
  /// Occasionally use runtime variables and custom variable names.
  bool RuntimeVars = true;
  bool CustomNames = true;
  /// Occasionally add constraints that make the domain empty.
  bool InfeasibleConstraints = true;
  /// In the rule-target family, one variable bound in EdgeOdds sits at the
  /// ends of int64 (overflow handling).
  unsigned EdgeOdds = 24;
  /// Rank of the output shape of thread maps (1-6); 0 picks at random.
  unsigned ThreadMapRank = 0;
};

/// Generates random maps. The same seed and options give the same sequence.
///
/// Example:
/// \code
///   Context Ctx;
///   RandomMapGenerator Gen(Ctx, /*Seed=*/42);
///   IndexingMap M = Gen.generate();
///   // e.g. (th_x, bl_x)[s0, vec] -> ((bl_x * 16 + th_x * 4 + vec) floordiv 6,
///   //   (bl_x * 16 + th_x * 4 + vec) mod 6), domain: th_x in [0, 3], ...
/// \endcode
class RandomMapGenerator {
public:
  RandomMapGenerator(Context &Ctx, uint64_t Seed, RandomMapOptions Opts = {});

  /// A map of a random family.
  IndexingMap generate();
  /// A map of family \p F.
  IndexingMap generate(MapFamily F);
  /// A map whose dims have exactly the bounds \p DimBounds (each bound
  /// non-empty), to be the second operand of a composition.
  IndexingMap generateConsumer(const std::vector<Interval> &DimBounds);
  /// A pair (first, second) with first.numResults() == second.numDims(), the
  /// bounds of second's dims near the range of first's results (exact,
  /// narrower or wider), and a composed box small enough to enumerate.
  std::pair<IndexingMap, IndexingMap> generateComposablePair();

  MapFamily lastFamily() const { return Last; }
  Rng &rng() { return R; }
  Context &context() { return Ctx; }
  const RandomMapOptions &options() const { return Opts; }

  struct Impl;

private:
  Context &Ctx;
  Rng R;
  RandomMapOptions Opts;
  MapFamily Last = MapFamily::RandomExpr;
};

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_RANDOMMAPS_H
