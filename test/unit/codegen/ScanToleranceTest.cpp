//===- ScanToleranceTest.cpp - A scan kernel against the oracle -----------===//
//
// Part of idxmap. The warp scan adds a float line in another order than the
// interpreter's step by step: kernelTolerance grows by (n / 32 + 6)
// roundings of the type (of f32 for f16 and bf16, which the kernel and the
// runner's reference accumulate wide) for add (absolute) and multiply
// (relative) scans; integer and max/min scans stay exact.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Emit.h"
#include "idxmap/Hlo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace idxmap;

namespace {

/// A fusion of one prefix reduce-window of \p Comb over a row of \p N
/// elements of type \p Ty.
std::string windowFusion(const std::string &Ty, const std::string &Comb,
                         int64_t N) {
  std::string S = Ty + "[4," + std::to_string(N) + "]";
  return "HloModule m\ncomb {\n  a = " + Ty + "[] parameter(0)\n  b = " + Ty +
         "[] parameter(1)\n  ROOT r = " + Ty + "[] " + Comb +
         "(a, b)\n}\nfused {\n  p0 = " + S + " parameter(0)\n  c = " + Ty +
         "[] constant(0)\n  ROOT w = " + S +
         " reduce-window(p0, c), window={size=1x" + std::to_string(N) +
         " pad=0_0x" + std::to_string(N - 1) + "_0}, to_apply=comb\n}\n" +
         "ENTRY e {\n  a = " + S + " parameter(0)\n  ROOT f = " + S +
         " fusion(a), kind=kLoop, calls=fused\n}\n";
}

Tolerance toleranceOf(const std::string &Text) {
  auto M = parseHloModule(Text, "scan.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  if (!M)
    return {};
  return kernelTolerance(*(*M)->entry()->root(), /*PreciseMath=*/true);
}

TEST(ScanTolerance, FloatSumsGrowWithTheLine) {
  const double U = std::ldexp(1.0, -24); // f32's unit roundoff
  Tolerance T = toleranceOf(windowFusion("f32", "add", 1000));
  // 1000 / 32 = 31 chunks' carries and 6 more roundings, |x| <= 1.
  EXPECT_DOUBLE_EQ(T.Abs, 37 * U * 1000);
  // A product of 8192: 256 + 6 roundings relative (above f32's default).
  Tolerance P = toleranceOf(windowFusion("f32", "multiply", 8192));
  EXPECT_DOUBLE_EQ(P.Rel, 262 * U);
}

TEST(ScanTolerance, TwoByteFloatSumsAreCheckedAtF32Precision) {
  // The kernel adds bf16 in f32 and the runner's reference in f64
  // (EvaluateOptions::WideScans), each output rounded once: the order
  // allows 1000 / 32 + 6 roundings of f32, which stay under bf16's own
  // tolerance for 1000 elements, so the type's tolerance decides. A
  // kernel that rounded every step to bf16 would be off by far more (100
  // steps of 2^-8 each).
  const double U = std::ldexp(1.0, -24);
  Tolerance T = toleranceOf(windowFusion("bf16", "add", 1000));
  EXPECT_DOUBLE_EQ(T.Abs, std::max(37 * U * 1000,
                                   Tolerance::forType(PrimitiveType::BF16).Abs));
  EXPECT_DOUBLE_EQ(T.Rel, Tolerance::forType(PrimitiveType::BF16).Rel);
  // An f16 product of 20 elements: 6 roundings of f32, relative.
  Tolerance P = toleranceOf(windowFusion("f16", "multiply", 20));
  EXPECT_DOUBLE_EQ(P.Rel, Tolerance::forType(PrimitiveType::F16).Rel);
  EXPECT_LT(6 * U, P.Rel);
}

TEST(ScanTolerance, ExactCombinersStayExact) {
  Tolerance M = toleranceOf(windowFusion("s32", "add", 1000));
  EXPECT_EQ(M.Abs, 0);
  EXPECT_EQ(M.Rel, 0);
  // max of floats: the type's default only.
  Tolerance F = toleranceOf(windowFusion("f32", "maximum", 1000));
  EXPECT_EQ(F.Abs, Tolerance::forType(PrimitiveType::F32).Abs);
}

} // namespace
