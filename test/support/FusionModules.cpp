//===- test/support/FusionModules.cpp - One-fusion HLO modules ------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "support/FusionModules.h"

#include "idxmap/DeviceModel.h"

#include <gtest/gtest.h>

namespace idxmap::testing {

std::unique_ptr<HloModule> oneFusionModule(const std::string &In,
                                           const std::string &Out,
                                           const std::string &Body,
                                           const std::string &Kind) {
  std::string Text = "HloModule m\n"
                     "add {\n  a = f32[] parameter(0)\n"
                     "  b = f32[] parameter(1)\n"
                     "  ROOT s = f32[] add(a, b)\n}\n"
                     "add_f32 {\n  a = f32[] parameter(0)\n"
                     "  b = f32[] parameter(1)\n"
                     "  ROOT s = f32[] add(a, b)\n}\n"
                     "max_f32 {\n  a = f32[] parameter(0)\n"
                     "  b = f32[] parameter(1)\n"
                     "  ROOT m = f32[] maximum(a, b)\n}\n"
                     "fused {\n" +
                     Body + "}\nENTRY main {\n  p = " + In +
                     " parameter(0)\n  ROOT fusion = " + Out +
                     " fusion(p), kind=" + Kind + ", calls=fused\n}\n";
  auto M = parseHloModule(Text, "test.hlo");
  EXPECT_TRUE(M) << M.error().str();
  return M ? std::move(*M) : nullptr;
}

const HloInstruction &fusionOf(const HloModule &M) {
  return *M.entry()->root();
}

Expected<KernelPlan> planOfText(const std::string &Text, EmitterKind Kind,
                                const Tuning &T,
                                std::unique_ptr<HloModule> &M) {
  auto Parsed = parseHloModule(Text, "test.hlo");
  EXPECT_TRUE(bool(Parsed)) << (Parsed ? "" : Parsed.error().str()) << Text;
  if (!Parsed)
    return Parsed.error();
  M = std::move(*Parsed);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  EXPECT_EQ(A.Kind, Kind) << A.Reason;
  Context Ctx;
  return planFusion(Ctx, A, T, *lookupDeviceModel("H200"));
}

} // namespace idxmap::testing
