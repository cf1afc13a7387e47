//===- analysis/hlo/HloVerifier.h - Shape checks for parsed HLO -*- C++ -*-===//
//
// Part of idxmap. Private to analysis/hlo.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_HLOVERIFIER_H
#define IDXMAP_ANALYSIS_HLO_HLOVERIFIER_H

#include "idxmap/Hlo.h"

#include <optional>
#include <string>
#include <unordered_set>

namespace idxmap {
namespace hlo {

/// Checks \p I against its operands, attributes and called computations
/// (which must be resolved): operand counts, element types, ranks and
/// dimensions, attribute ranges, required attributes (\p Attrs holds the
/// attribute names the text gave). Returns a message such as
/// `add: operand 1 is f32[8], expected f32[4]`, or nullopt if it is valid.
std::optional<std::string>
verifyInstruction(const HloInstruction &I,
                  const std::unordered_set<std::string> &Attrs);

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_HLOVERIFIER_H
