//===- test/support/FusionModules.h - One-fusion HLO modules ---*- C++ -*-===//
//
// Part of idxmap. The module the plan and cost-model tests build around a
// fused computation: f32 reducers (`add`, `add_f32`, `max_f32`), the
// computation `fused` holding \p Body, and an ENTRY
// whose root is fusion `fusion` of one parameter `p`.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_FUSIONMODULES_H
#define IDXMAP_TEST_SUPPORT_FUSIONMODULES_H

#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Tuning.h"

#include <memory>
#include <string>

namespace idxmap::testing {

/// The module of one fusion of \p Body (ending in its ROOT), on parameter
/// `p` of type \p In, with result type \p Out; \p Kind is the fusion kind.
/// Fails the current test (and returns null) when the text does not parse.
///
/// Example: `oneFusionModule("f32[8,4]", "f32[8]", "  x = f32[8,4]
/// parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[8] reduce(x, z),
/// dimensions={1}, to_apply=add\n")`.
std::unique_ptr<HloModule> oneFusionModule(const std::string &In,
                                           const std::string &Out,
                                           const std::string &Body,
                                           const std::string &Kind = "kInput");

/// The fusion instruction of a oneFusionModule: the ENTRY's root.
const HloInstruction &fusionOf(const HloModule &M);

/// The H200 plan, under \p T, of the fusion at the ENTRY root of the module
/// text \p Text, parsed into \p M (which owns what the plan points at).
/// Fails the current test when the text does not parse or the analysis
/// picks another emitter than \p Kind.
///
/// Example: `planOfText(Text, EmitterKind::Concatenate, {}, M)->Grid[0]`.
Expected<KernelPlan> planOfText(const std::string &Text, EmitterKind Kind,
                                const Tuning &T, std::unique_ptr<HloModule> &M);

} // namespace idxmap::testing

#endif
