//===- support/RandomIndexed.h - Random gather/scatter/sort/... -*- C++ -*-===//
//
// Part of idxmap. The single-op instances of RandomHlo.h's per-op mode for
// gather, scatter, sort and all-gather: a fused computation whose root is
// one such op on parameters, with random dimension numbers (collapsed and
// offset dims in any position, shuffled start_index_map, index_vector_dim
// anywhere or implicit, inserted window dims, variadic sorts), and the
// exactness of every (output, parameter) pair. Indices are filled by
// checkDependencies with values in [-2, 2]: in range, and out of range on
// the low side, where gather clamps and scatter skips.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_RANDOMINDEXED_H
#define IDXMAP_TEST_SUPPORT_RANDOMINDEXED_H

#include "support/RandomHlo.h"

namespace idxmap::testing {

/// gather, scatter, sort, all-gather.
const std::vector<HloOpcode> &indexedSingleOps();

/// One instance of \p Op (one of indexedSingleOps()); the same seed gives
/// the same text. Only all-gather's map is exact (data movement); gather's
/// runtime variables range over every start, scatter's and sort's maps name
/// everything that may be read.
RandomFusion generateIndexedFusion(uint64_t Seed, HloOpcode Op);

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_RANDOMINDEXED_H
