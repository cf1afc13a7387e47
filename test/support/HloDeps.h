//===- test/support/HloDeps.h - Indexing vs. actual dependencies -*- C++ -*-===//
//
// Part of idxmap. Checks an output-to-input indexing against the reference
// interpreter: perturb one input element at a time and see which output
// elements change. Every such dependency must be named by a map (sound);
// with Exact, every element a map names must be a real dependency.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_HLODEPS_H
#define IDXMAP_TEST_SUPPORT_HLODEPS_H

#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"

#include <cstdint>
#include <string>
#include <vector>

namespace idxmap::testing {

struct DepCheckResult {
  bool Ok = true;
  /// The first violation, with the output and input indices.
  std::string Message;
  /// Number of (output element, input element) pairs compared.
  int64_t Pairs = 0;
  /// True if the maps were UNDEFINED (nothing could be checked).
  bool Undefined = false;
};

/// For computation \p C (its root's array output \p OutputId), checks the
/// maps \p Maps from the output to parameter \p Param. Inputs are random
/// (seeded); each element of the parameter is perturbed once.
///
/// Example: for `ROOT t = f32[3,2] transpose(f32[2,3] p), dimensions={1,0}`
/// the map `(d0, d1) -> (d1, d0)` passes with Exact; `(d0, d1) -> (d0, d1)`
/// fails ("output [0,1] depends on input [1,0], which no map names").
DepCheckResult checkDependencies(const HloComputation &C, int64_t Param,
                                 const std::vector<OperandMap> &Maps,
                                 bool Exact, uint64_t Seed,
                                 int64_t OutputId = 0);

/// The instruction a generated fusion computation \p C tests: its root, or,
/// where the root is the `tuple` of get-tuple-elements the parser gives a
/// variadic root (parseHloModule), the variadic instruction under it.
const HloInstruction &opUnderTest(const HloComputation &C);

} // namespace idxmap::testing

#endif
