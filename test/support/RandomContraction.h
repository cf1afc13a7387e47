//===- support/RandomContraction.h - Random dot/conv/window ops -*- C++ -*-===//
//
// Part of idxmap. The single-op instances of RandomHlo.h's per-op mode for
// dot, convolution, reduce-window and map: a fused computation whose root
// is one such op on parameters, with random dimension numbers, dim_labels,
// windows (size, stride, low/high padding, possibly negative, base and
// window dilation, reversal), feature and batch groups, variadic
// reduce-windows, and the exactness of every (output, parameter) pair.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_RANDOMCONTRACTION_H
#define IDXMAP_TEST_SUPPORT_RANDOMCONTRACTION_H

#include "support/RandomHlo.h"

namespace idxmap::testing {

/// dot, convolution, reduce-window, map.
const std::vector<HloOpcode> &contractionSingleOps();

/// One instance of \p Op (one of contractionSingleOps()); the same seed
/// gives the same text. Exact[Out][P] is true where every element the
/// output-to-input map names is a real dependency: f32 sums of products
/// (dot, convolution inputs without batch groups, kernels when no window
/// position falls in the padding or a hole), reduce-windows with add
/// (output k from input k and init k), maps of add/negate.
RandomFusion generateContractionFusion(uint64_t Seed, HloOpcode Op);

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_RANDOMCONTRACTION_H
