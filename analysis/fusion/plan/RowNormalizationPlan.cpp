//===- RowNormalizationPlan.cpp - Softmax-like fusions in one kernel ------===//
//
// Part of idxmap. (Being moved here from the row-normalization emitter.)
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

namespace idxmap {

bool isRowNormalization(const FusionAnalysis &) { return false; }

namespace plan {

std::optional<std::string> planRowNormalization(const PlanInputs &,
                                                KernelPlan &) {
  return std::string("not planned yet");
}

} // namespace plan
} // namespace idxmap
