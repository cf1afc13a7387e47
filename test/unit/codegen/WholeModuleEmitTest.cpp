//===- test/unit/codegen/WholeModuleEmitTest.cpp - Fusions left out -------===//
//
// Part of idxmap. EmitOptions::SkipUnsupported: a whole module emits the
// fusions the emitters take and records the others (EmitResult::Skipped)
// with the error each would have been, and drops a kernel whose IR fails
// the verifier; a fusion asked for by name, or a module without
// SkipUnsupported, fails as before.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "idxmap/Emit.h"

#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"

#include <gtest/gtest.h>

#include <string>

using namespace idxmap;

namespace {

/// A gemm fusion (a dot: no emitter), a loop fusion, a fusion with a
/// type-changing bitcast of one width (emitted: the bits are
/// reinterpreted), one that changes the width (left) and a c64 fusion
/// beside a custom-call.
const char *Module = R"(HloModule whole
gemm {
  a = f32[16,16] parameter(0)
  ROOT d = f32[16,16] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
relu {
  x = f32[16,16] parameter(0)
  z = f32[] constant(0)
  zb = f32[16,16] broadcast(z), dimensions={}
  ROOT m = f32[16,16] maximum(x, zb)
}
bits {
  u = u32[16] parameter(0)
  ROOT f = f32[16] bitcast(u)
}
wide {
  v = u32[16] parameter(0)
  ROOT h = u16[16,2] bitcast(v)
}
cplx {
  r = f32[16] parameter(0)
  ROOT c = c64[16] complex(r, r)
}
ENTRY main {
  p = f32[16,16] parameter(0)
  q = u32[16] parameter(1)
  s = f32[16] parameter(2)
  cc = f32[16,16] custom-call(p), custom_call_target="__cublas$gemm"
  g = f32[16,16] fusion(cc), kind=kCustom, calls=gemm
  l = f32[16,16] fusion(g), kind=kLoop, calls=relu
  b = f32[16] fusion(q), kind=kLoop, calls=bits
  w = u16[16,2] fusion(q), kind=kLoop, calls=wide
  k = c64[16] fusion(s), kind=kLoop, calls=cplx
  ROOT t = (f32[16,16], f32[16], u16[16,2], c64[16]) tuple(l, b, w, k)
}
)";

Expected<EmitResult> emit(EmitOptions O) {
  auto M = parseHloModule(Module, "whole.hlo");
  if (!M)
    return M.error();
  // The result points into the module: keep it alive.
  static std::vector<std::unique_ptr<HloModule>> Keep;
  Keep.push_back(std::move(*M));
  return emitModule(*Keep.back(), O);
}

TEST(WholeModuleEmit, SkipsWhatNoEmitterTakes) {
  EmitOptions O;
  O.SkipUnsupported = true;
  auto R = emit(O);
  ASSERT_TRUE(bool(R)) << R.error().str();
  ASSERT_EQ(R->Kernels.size(), 2u);
  EXPECT_EQ(R->Kernels[0].Name, "l");
  EXPECT_EQ(R->Kernels[1].Name, "b");
  EXPECT_NE(R->Ptx.find(".entry l("), std::string::npos);
  EXPECT_NE(R->Ptx.find(".entry b("), std::string::npos);
  EXPECT_EQ(R->Ptx.find(".entry g("), std::string::npos);
  ASSERT_EQ(R->Skipped.size(), 3u);
  EXPECT_EQ(R->Skipped[0].Fusion->name(), "g");
  EXPECT_EQ(R->Skipped[0].Why.Message,
            "fusion 'g': no emitter computes dot 'd'");
  EXPECT_EQ(R->Skipped[0].Why.Loc.Line, 4u);
  EXPECT_EQ(R->Skipped[1].Why.Message,
            "fusion 'w': bitcast 'h' changes the element width (u32 to "
            "u16); the emitters do not split or join elements");
  EXPECT_EQ(R->Skipped[2].Why.Message,
            "fusion 'k': 'c' has type c64[16]; the emitters take pred, "
            "integer and f16/bf16/f32/f64 values only");
}

TEST(WholeModuleEmit, WithoutSkippingTheFirstFailureIsTheError) {
  auto R = emit(EmitOptions());
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(R.error().Message, "fusion 'g': no emitter computes dot 'd'");
}

TEST(WholeModuleEmit, AFusionAskedForFailsEvenWhenSkipping) {
  EmitOptions O;
  O.SkipUnsupported = true;
  O.OnlyFusion = "k";
  auto R = emit(O);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(R.error().Loc.Line, 22u);
  O.OnlyFusion = "l";
  auto L = emit(O);
  ASSERT_TRUE(bool(L)) << L.error().str();
  EXPECT_EQ(L->Kernels.size(), 1u);
  EXPECT_TRUE(L->Skipped.empty());
}

TEST(WholeModuleEmit, NothingLeftGivesNoPtx) {
  auto M = parseHloModule("HloModule m\nf {\n  p = f32[4] parameter(0)\n"
                          "  ROOT c = c64[4] convert(p)\n}\nENTRY e {\n"
                          "  x = f32[4] parameter(0)\n"
                          "  ROOT r = c64[4] fusion(x), kind=kLoop, calls=f\n"
                          "}\n",
                          "none.hlo");
  ASSERT_TRUE(bool(M));
  EmitOptions O;
  O.SkipUnsupported = true;
  auto R = emitModule(**M, O);
  ASSERT_TRUE(bool(R)) << R.error().str();
  EXPECT_TRUE(R->Kernels.empty());
  EXPECT_TRUE(R->Ptx.empty());
  ASSERT_EQ(R->Skipped.size(), 1u);
  EXPECT_EQ(R->Skipped[0].Why.Loc.Line, 4u);
}

/// Breaks kernel `b` as an emitter bug would: a block without a terminator.
void breakKernelB(llvm::Function &Kernel) {
  if (Kernel.getName() == "b")
    llvm::BasicBlock::Create(Kernel.getContext(), "broken", &Kernel);
}

/// Installs codegen::AfterKernelBuilt for one test.
struct KernelHook {
  explicit KernelHook(void (*H)(llvm::Function &)) {
    codegen::AfterKernelBuilt = H;
  }
  ~KernelHook() { codegen::AfterKernelBuilt = nullptr; }
};

TEST(WholeModuleEmit, AKernelThatFailsTheVerifierIsLeftOut) {
  KernelHook Hook(breakKernelB);
  EmitOptions O;
  O.SkipUnsupported = true;
  auto R = emit(O);
  ASSERT_TRUE(bool(R)) << R.error().str();
  ASSERT_EQ(R->Kernels.size(), 1u);
  EXPECT_EQ(R->Kernels[0].Name, "l");
  EXPECT_NE(R->Ptx.find(".entry l("), std::string::npos);
  EXPECT_EQ(R->Ptx.find(".entry b("), std::string::npos);
  ASSERT_EQ(R->Skipped.size(), 4u);
  const SkippedFusion &B = R->Skipped.back();
  EXPECT_EQ(B.Fusion->name(), "b");
  EXPECT_EQ(B.Why.Message.rfind("fusion 'b': the emitter built invalid LLVM "
                                "IR (an idxmap bug): ",
                                0),
            0u)
      << B.Why.Message;
  EXPECT_EQ(B.Why.Loc.Line, 31u); // the fusion instruction
}

TEST(WholeModuleEmit, WithoutSkippingInvalidIrIsTheModulesError) {
  KernelHook Hook(breakKernelB);
  EmitOptions O;
  O.OnlyFusion = "b";
  auto R = emit(O);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(R.error().Message.rfind(
                "invalid LLVM IR for module 'whole' (an idxmap bug): ", 0),
            0u)
      << R.error().Message;
}

} // namespace
