//===- ReductionPlan.cpp - Row, multi-row, full and column reductions -----===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

namespace idxmap {
namespace plan {

std::optional<std::string> planReduction(const PlanInputs &, KernelPlan &) {
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
