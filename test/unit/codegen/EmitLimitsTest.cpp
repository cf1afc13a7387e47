//===- test/unit/codegen/EmitLimitsTest.cpp - Emission at the limits ------===//
//
// Part of idxmap. Launch dimensions against the device's limits (grid-stride
// loops past grid.x), kernel parameter space, tuning knob ranges, located
// emission errors, and stress inputs generated here: 100,000- and
// 20,000-instruction chains, a 1,000-operand concatenate, 20,000
// parameters. Each stress case runs under 2 s of CPU or reports its budget.
//
//===----------------------------------------------------------------------===//

#include "idxmap/DeviceModel.h"
#include "idxmap/Emit.h"

#include "support/StressLimits.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>

using namespace idxmap;

namespace {

/// CPU seconds since \p Start.
double cpuSince(std::clock_t Start) {
  return double(std::clock() - Start) / CLOCKS_PER_SEC;
}

/// A module with one loop fusion `f`: `Body` inside, parameters declared
/// by \p Params (one per line of `name = type parameter(n)`), the entry
/// passing them in order.
std::string fusionModule(const std::string &Params, const std::string &Body,
                         const std::string &RootType, int64_t NumParams) {
  std::string Args;
  for (int64_t I = 0; I < NumParams; ++I)
    Args += (I ? ", p" : "p") + std::to_string(I);
  return "HloModule m\n\nf {\n" + Params + Body + "}\n\nENTRY main {\n" +
         Params + "  ROOT r = " + RootType + " fusion(" + Args +
         "), kind=kLoop, calls=f\n}\n";
}

/// `f32[N] negate(p0)`.
std::string negateModule(int64_t N) {
  std::string T = "f32[" + std::to_string(N) + "]";
  return fusionModule("  p0 = " + T + " parameter(0)\n",
                      "  ROOT n = " + T + " negate(p0)\n", T, 1);
}

/// An add chain of \p N instructions over one f32[1024] parameter.
std::string chainModule(int64_t N) {
  std::string Body;
  for (int64_t I = 0; I < N; ++I)
    Body += std::string(I + 1 == N ? "  ROOT a" : "  a") + std::to_string(I) +
            " = f32[1024] add(" + (I ? "a" + std::to_string(I - 1) : "p0") +
            ", p0)\n";
  return fusionModule("  p0 = f32[1024] parameter(0)\n", Body, "f32[1024]", 1);
}

Expected<EmitResult> emitText(const std::string &Text,
                              EmitOptions O = EmitOptions()) {
  auto M = parseHloModule(Text, "stress.hlo");
  if (!M)
    return M.error();
  return emitModule(**M, O);
}

/// True when ptxas is not installed or accepts \p Ptx for sm_90.
bool ptxasAccepts(const std::string &Ptx) {
  const std::string Ptxas = IDXMAP_TEST_PTXAS;
  if (access(Ptxas.c_str(), X_OK) != 0)
    return true;
  char Path[] = "/tmp/idxmap-emit-limits-XXXXXX";
  int Fd = mkstemp(Path);
  if (Fd < 0)
    return false;
  close(Fd);
  std::ofstream(Path) << Ptx;
  std::string Cmd =
      "'" + Ptxas + "' -arch=sm_90 '" + Path + "' -o /dev/null >/dev/null 2>&1";
  int Status = std::system(Cmd.c_str());
  std::remove(Path);
  return WIFEXITED(Status) && WEXITSTATUS(Status) == 0;
}

} // namespace

TEST(DeviceModel, PresetsByName) {
  auto H200 = lookupDeviceModel("h200");
  ASSERT_TRUE(H200);
  EXPECT_EQ(H200->Name, "H200");
  EXPECT_EQ(H200->SmCount, 132);
  EXPECT_EQ(H200->MaxGrid[0], 2147483647);
  EXPECT_EQ(H200->MaxGrid[1], 65535);
  EXPECT_EQ(H200->MaxGrid[2], 65535);
  EXPECT_EQ(lookupDeviceModel("A100")->SmCount, 108);
  EXPECT_EQ(lookupDeviceModel("H100")->SharedBytesPerBlock, 232448);
  EXPECT_FALSE(lookupDeviceModel("V100"));
  EXPECT_EQ(defaultDeviceModel("sm_80").Name, "A100");
  EXPECT_EQ(defaultDeviceModel("sm_90a").Name, "H100");
  EXPECT_EQ(deviceModelNames().size(), 3u);
}

TEST(DeviceModel, CheckLaunchNamesTheLimit) {
  DeviceModel H100 = *lookupDeviceModel("H100");
  EXPECT_FALSE(
      checkLaunch(H100, {2147483647, 65535, 65535}, {1024, 1, 1}, 49152));
  EXPECT_EQ(*checkLaunch(H100, {int64_t(1) << 31, 1, 1}, {128, 1, 1}, 0),
            "grid.x = 2147483648 exceeds the H100 limit 2147483647");
  EXPECT_EQ(*checkLaunch(H100, {1, 65536, 1}, {128, 1, 1}, 0),
            "grid.y = 65536 exceeds the H100 limit 65535");
  EXPECT_EQ(*checkLaunch(H100, {1, 1, 1}, {512, 4, 1}, 0),
            "threads per block = 2048 exceeds the H100 limit 1024");
  EXPECT_TRUE(checkLaunch(H100, {1, 1, 1}, {128, 1, 1}, 49153));
  EXPECT_TRUE(checkLaunch(H100, {0, 1, 1}, {128, 1, 1}, 0));
  // Dynamic shared memory counts toward the opt-in limit (227 KiB).
  EXPECT_FALSE(checkLaunch(H100, {1, 1, 1}, {256, 1, 1}, 64, 131072));
  EXPECT_EQ(*checkLaunch(H100, {1, 1, 1}, {256, 1, 1}, 1024, 232448),
            "shared memory per block = 233472 exceeds the H100 limit 232448");
}

// f32[2^33]: 2^24 blocks of 128 threads x 4 elements, within grid.x: no
// grid-stride loop (the launch the emitter always made).
TEST(EmitLimits, LoopGridWithinTheLimitHasNoStrideLoop) {
  EmitOptions O;
  O.KeepLlvmIr = true;
  auto R = emitText(negateModule(int64_t(1) << 33), O);
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_EQ(R->Kernels[0].Grid[0], 1u << 24);
  EXPECT_EQ(R->LlvmIr.find("stride"), std::string::npos);
}

// f32[2^40]: 2^31 blocks would be one over grid.x (the emitter launched
// 2^31); now 2^30 blocks walk two blocks each with 64-bit indices.
TEST(EmitLimits, LoopGridPastTheLimitStridesOverBlocks) {
  EmitOptions O;
  O.KeepLlvmIr = true;
  auto R = emitText(negateModule(int64_t(1) << 40), O);
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_EQ(R->Kernels[0].Grid[0], 1u << 30);
  EXPECT_EQ(R->Kernels[0].Block[0], 128u);
  EXPECT_NE(R->LlvmIr.find("stride"), std::string::npos);
  EXPECT_NE(R->LlvmIr.find("phi i64"), std::string::npos);
  EXPECT_TRUE(ptxasAccepts(R->Ptx));
}

namespace {

/// Runs kernel `r(p0, out)` of \p Ir (a loop fusion computing negate of
/// f32[N]) in LLVM's interpreter for every block of \p Grid and thread of
/// \p Block, with p0[i] = i; returns the number of outputs that are not
/// -i, or -1 when lli is missing or fails.
int interpretNegate(std::string Ir, int64_t N, unsigned Grid, unsigned Block) {
  const char *Lli = "/usr/lib/llvm-19/bin/lli";
  if (access(Lli, X_OK) != 0)
    return -1;
  auto ReplaceAll = [&](const std::string &From, const std::string &To) {
    for (size_t P = Ir.find(From); P != std::string::npos;
         P = Ir.find(From, P + To.size()))
      Ir.replace(P, From.size(), To);
  };
  ReplaceAll("ptx_kernel ", "");
  ReplaceAll(" addrspace(1)", "");
  ReplaceAll("@llvm.nvvm.read.ptx.sreg.tid.x()", "@tidx()");
  ReplaceAll("@llvm.nvvm.read.ptx.sreg.ctaid.x()", "@ctax()");
  std::string Kept;
  for (size_t P = 0; P < Ir.size();) {
    size_t E = Ir.find('\n', P);
    std::string Line = Ir.substr(P, E == std::string::npos ? E : E - P + 1);
    P = E == std::string::npos ? Ir.size() : E + 1;
    if (Line.rfind("target ", 0) && Line.rfind("declare", 0) &&
        Line.rfind("source_filename", 0) && Line.rfind("; ModuleID", 0) &&
        Line.rfind("!nvvm.annotations", 0))
      Kept += Line;
  }
  std::string NS = std::to_string(N);
  std::string Main =
      "@P0 = global [" + NS + " x float] zeroinitializer\n@C = global [" + NS +
      " x float] zeroinitializer\n@TID = global i32 0\n@CTA = global i32 0\n"
      "define i32 @tidx() {\n  %v = load i32, ptr @TID\n  ret i32 %v\n}\n"
      "define i32 @ctax() {\n  %v = load i32, ptr @CTA\n  ret i32 %v\n}\n"
      "define i32 @main() {\nentry:\n  br label %init\n"
      "init:\n  %j = phi i32 [0, %entry], [%j1, %init]\n"
      "  %jf = sitofp i32 %j to float\n"
      "  %pj = getelementptr [" +
      NS +
      " x float], ptr @P0, i32 0, i32 %j\n"
      "  store float %jf, ptr %pj\n  %j1 = add i32 %j, 1\n"
      "  %jc = icmp ult i32 %j1, " +
      NS +
      "\n"
      "  br i1 %jc, label %init, label %outer\n"
      "outer:\n  %b = phi i32 [0, %init], [%b1, %olatch]\n"
      "  store i32 %b, ptr @CTA\n  br label %inner\n"
      "inner:\n  %t = phi i32 [0, %outer], [%t1, %inner]\n"
      "  store i32 %t, ptr @TID\n  call void @r(ptr @P0, ptr @C)\n"
      "  %t1 = add i32 %t, 1\n  %tc = icmp ult i32 %t1, " +
      std::to_string(Block) +
      "\n  br i1 %tc, label %inner, label %olatch\n"
      "olatch:\n  %b1 = add i32 %b, 1\n  %bc = icmp ult i32 %b1, " +
      std::to_string(Grid) +
      "\n  br i1 %bc, label %outer, label %check\n"
      "check:\n  %i = phi i32 [0, %olatch], [%i1, %check]\n"
      "  %bad = phi i32 [0, %olatch], [%bad1, %check]\n"
      "  %pi = getelementptr [" +
      NS +
      " x float], ptr @C, i32 0, i32 %i\n"
      "  %x = load float, ptr %pi\n  %if = sitofp i32 %i to float\n"
      "  %want = fneg float %if\n  %ok = fcmp oeq float %x, %want\n"
      "  %inc = select i1 %ok, i32 0, i32 1\n  %bad1 = add i32 %bad, %inc\n"
      "  %i1 = add i32 %i, 1\n  %ic = icmp ult i32 %i1, " +
      NS +
      "\n"
      "  br i1 %ic, label %check, label %done\n"
      "done:\n  %big = icmp ugt i32 %bad1, 100\n"
      "  %r = select i1 %big, i32 100, i32 %bad1\n"
      "  ret i32 %r\n}\n";
  char Path[] = "/tmp/idxmap-interp-XXXXXX";
  int Fd = mkstemp(Path);
  if (Fd < 0)
    return -1;
  close(Fd);
  std::ofstream(Path) << Kept << Main;
  std::string Cmd =
      std::string(Lli) + " -force-interpreter '" + Path + "' >/dev/null 2>&1";
  int Status = std::system(Cmd.c_str());
  std::remove(Path);
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

} // namespace

// The grid-stride loop on a device whose grid.x allows 7 blocks: 4,099
// threads' runs of 4 elements (a ragged last block) need 33 blocks, so 7
// blocks walk 5 each. Every output is right in LLVM's interpreter.
TEST(EmitLimits, GridStrideLoopCoversEveryElement) {
  const int64_t N = 16396;
  EmitOptions O;
  O.KeepLlvmIr = true;
  O.Device = *lookupDeviceModel("H100");
  O.Device->MaxGrid[0] = 7;
  auto R = emitText(negateModule(N), O);
  ASSERT_TRUE(R) << R.error().str();
  ASSERT_EQ(R->Kernels[0].Grid[0], 7u);
  ASSERT_EQ(R->Kernels[0].Block[0], 128u);
  EXPECT_NE(R->LlvmIr.find("stride"), std::string::npos);
  int Bad = interpretNegate(R->LlvmIr, N, 7, 128);
  if (Bad < 0)
    GTEST_SKIP() << "no lli";
  EXPECT_EQ(Bad, 0);
  // The oracle can fail: one block fewer leaves outputs unwritten.
  EXPECT_GT(interpretNegate(R->LlvmIr, N, 6, 128), 0);
}

// f32[2^41 + 512]: 2^32 + 1 blocks narrowed to 32 bits gave grid [1, 1, 1]
// (exit 0, one block doing 512 elements). Now ceil((2^32 + 1) / 3) blocks
// of three iterations each.
TEST(EmitLimits, LoopGridDoesNotWrapAt32Bits) {
  auto R = emitText(negateModule(2199023256064));
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_EQ(R->Kernels[0].Grid[0], 1431655766u);
  EXPECT_TRUE(ptxasAccepts(R->Ptx));
  // A device with a small grid.x limit: the same loop, more iterations.
  EmitOptions O;
  O.Device = *lookupDeviceModel("H100");
  O.Device->MaxGrid[0] = 1000;
  O.Tuning.LoopUnroll = 1; // a run per thread (L2-resident: 2 by default)
  auto Small = emitText(negateModule(int64_t(1) << 20), O);
  ASSERT_TRUE(Small) << Small.error().str();
  EXPECT_EQ(Small->Kernels[0].Grid[0], 683u); // 2048 blocks, 3 each
}

// Other emitters reject a grid past the limit with a located diagnostic.
TEST(EmitLimits, RowReductionPastTheGridLimitIsALocatedError) {
  const char *Hlo = R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

fused {
  p0 = f32[4096,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4096] reduce(p0, z), dimensions={1}, to_apply=add
}

ENTRY main {
  p = f32[4096,64] parameter(0)
  ROOT f = f32[4096] fusion(p), kind=kInput, calls=fused
}
)";
  EmitOptions O;
  O.Device = *lookupDeviceModel("H100");
  O.Device->MaxGrid[0] = 4;
  auto R = emitText(Hlo, O);
  ASSERT_FALSE(R);
  EXPECT_EQ(R.error().Loc.File, "stress.hlo");
  EXPECT_EQ(R.error().Loc.Line, 17u);
  EXPECT_NE(R.error().Message.find("exceeds the H100 limit 4"),
            std::string::npos)
      << R.error().Message;
}

// 20,000 parameters: 160 KB of kernel parameters (LLVM ran out of memory at
// 7.7 GB after 73 s); rejected before any analysis.
TEST(EmitLimits, TwentyThousandParametersAreRejectedQuickly) {
  const int64_t N = 20000;
  std::string Params, Body;
  for (int64_t I = 0; I < N; ++I)
    Params += "  p" + std::to_string(I) + " = f32[16] parameter(" +
              std::to_string(I) + ")\n";
  for (int64_t I = 1; I < N; ++I)
    Body += std::string(I + 1 == N ? "  ROOT a" : "  a") + std::to_string(I) +
            " = f32[16] add(" + (I > 1 ? "a" + std::to_string(I - 1) : "p0") +
            ", p" + std::to_string(I) + ")\n";
  std::string Text = fusionModule(Params, Body, "f32[16]", N);
  std::clock_t Start = std::clock();
  auto R = emitText(Text);
  EXPECT_LT(cpuSince(Start), idxmap::testing::stressSeconds());
  ASSERT_FALSE(R);
  EXPECT_NE(R.error().Message.find("160016 bytes of kernel parameters"),
            std::string::npos)
      << R.error().Message;
  EXPECT_NE(R.error().Message.find("limit of 4096 bytes (511 parameters and "
                                   "outputs)"),
            std::string::npos);
  EXPECT_EQ(R.error().Loc.Line, 3u * N + 6);
}

// 510 parameters and one output: the most a launch can pass.
TEST(EmitLimits, ParametersUpToTheLimitEmit) {
  const int64_t N = 510;
  std::string Params, Body;
  for (int64_t I = 0; I < N; ++I)
    Params += "  p" + std::to_string(I) + " = f32[16] parameter(" +
              std::to_string(I) + ")\n";
  for (int64_t I = 1; I < N; ++I)
    Body += std::string(I + 1 == N ? "  ROOT a" : "  a") + std::to_string(I) +
            " = f32[16] add(" + (I > 1 ? "a" + std::to_string(I - 1) : "p0") +
            ", p" + std::to_string(I) + ")\n";
  std::clock_t Start = std::clock();
  auto R = emitText(fusionModule(Params, Body, "f32[16]", N));
  EXPECT_LT(cpuSince(Start), idxmap::testing::stressSeconds());
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_EQ(R->Kernels[0].Params.size(), 511u);
  EXPECT_TRUE(ptxasAccepts(R->Ptx));
}

// The emitter's walk is iterative: 20,000 chained instructions (31,743
// frames of valueAt overflowed the stack) emit in well under 2 s of CPU.
TEST(EmitLimits, TwentyThousandInstructionChainEmits) {
  std::string Text = chainModule(20000);
  std::clock_t Start = std::clock();
  auto R = emitText(Text);
  double Cpu = cpuSince(Start);
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_LT(Cpu, idxmap::testing::stressSeconds());
  // (ptxas takes minutes on this PTX: not run here.)
}

// 100,000 instructions: over the emission budget, said at once.
TEST(EmitLimits, HundredThousandInstructionChainHitsTheBudget) {
  std::string Text = chainModule(100000);
  std::clock_t Start = std::clock();
  auto R = emitText(Text);
  EXPECT_LT(cpuSince(Start), idxmap::testing::stressSeconds());
  ASSERT_FALSE(R);
  EXPECT_NE(R.error().Message.find("has 100001 instructions, over the "
                                   "emission budget of 25000"),
            std::string::npos)
      << R.error().Message;
  EXPECT_EQ(R.error().Loc.File, "stress.hlo");
}

namespace {

/// A concatenate of \p N copies of an f32[4,8] parameter along dim 1.
std::string concatModule(int N) {
  std::string Ops;
  for (int I = 0; I < N; ++I)
    Ops += I ? ", p0" : "p0";
  std::string T = "f32[4," + std::to_string(8 * N) + "]";
  return fusionModule(
      "  p0 = f32[4,8] parameter(0)\n",
      "  ROOT c = " + T + " concatenate(" + Ops + "), dimensions={1}\n", T, 1);
}

} // namespace

// A 1,000-operand concatenate: a switch over the operands found by a
// binary search (a chain of 999 domain checks took 25 s).
TEST(EmitLimits, ThousandOperandConcatenateEmits) {
  std::string Text = concatModule(1000);
  std::clock_t Start = std::clock();
  EmitOptions O;
  O.KeepLlvmIr = true;
  auto R = emitText(Text, O);
  double Cpu = cpuSince(Start);
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_LT(Cpu, idxmap::testing::stressSeconds());
  EXPECT_NE(R->LlvmIr.find("switch"), std::string::npos);
  // (ptxas takes 10 s of CPU on this PTX; the same code for 17 operands,
  // the fewest the concatenate emitter leaves to the loop emitter, is
  // assembled below.)
  auto Small = emitText(concatModule(17), O);
  ASSERT_TRUE(Small) << Small.error().str();
  EXPECT_NE(Small->LlvmIr.find("switch"), std::string::npos);
  EXPECT_TRUE(ptxasAccepts(Small->Ptx));
  // 16 operands: the concatenate emitter, one guarded store per operand.
  auto Sixteen = emitText(concatModule(16), O);
  ASSERT_TRUE(Sixteen) << Sixteen.error().str();
  EXPECT_EQ(Sixteen->LlvmIr.find("switch"), std::string::npos);
  EXPECT_TRUE(ptxasAccepts(Sixteen->Ptx));
}

namespace {

/// \p N pads in a chain, each adding one element: f32[16] to f32[16 + N].
std::string padChainModule(int64_t N) {
  std::string Body = "  z = f32[] constant(0)\n";
  for (int64_t I = 0; I < N; ++I)
    Body += std::string(I + 1 == N ? "  ROOT q" : "  q") + std::to_string(I) +
            " = f32[" + std::to_string(17 + I) + "] pad(" +
            (I ? "q" + std::to_string(I - 1) : "p0") + ", z), padding=0_1\n";
  return fusionModule("  p0 = f32[16] parameter(0)\n", Body,
                      "f32[" + std::to_string(16 + N) + "]", 1);
}

} // namespace

// Pads, concatenates, dynamic slices and reduces are emitted by recursion:
// 1,000 nested ones emit (they need 2 MB of stack; 2,000 crashed on a 2 MB
// stack and needed 4 MB); deeper ones are
// rejected at the deepest instruction.
TEST(EmitLimits, NestedBranchesHaveALimit) {
  EmitOptions O;
  O.KernelsOnly = true;
  std::clock_t Start = std::clock();
  auto R = emitText(padChainModule(1000), O);
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_LT(cpuSince(Start), idxmap::testing::stressSeconds());
  auto Deep = emitText(padChainModule(1001), O);
  ASSERT_FALSE(Deep);
  EXPECT_EQ(Deep.error().Loc.Line, 1006u);
  EXPECT_NE(Deep.error().Message.find("'q1000' is nested 1001 pads, "
                                      "concatenates, dynamic slices or "
                                      "reduces deep, over the emitter's "
                                      "limit of 1000"),
            std::string::npos)
      << Deep.error().Message;
}

TEST(EmitLimits, TuningValuesOutsideTheirRangeAreRejected) {
  // The messages of setTuning and validateTuning (TuningTest covers the
  // table); emitModule checks the fields set directly.
  // emitModule checks them too: an option error has no location.
  EmitOptions O;
  O.Tuning.RedColWarps = 1000;
  auto R = emitText(negateModule(1024), O);
  ASSERT_FALSE(R);
  EXPECT_EQ(R.error().Message,
            "tuning knob IDXMAP_RED_COL_WARPS=1000 is out of range: valid "
            "values are 1 to 32 (rounded down to a power of two)");
  EXPECT_EQ(R.error().Loc.File, "");
  EXPECT_EQ(R.error().Loc.Line, 0u);
}

// An emitter's refusal points at the fusion in the input (it said
// `<emit>:1:1`).
TEST(EmitLimits, EmitterRefusalsPointAtTheFusion) {
  const char *Hlo = R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

fused {
  p0 = f32[8,131072] parameter(0)
  z = f32[] constant(0)
  r = f32[8] reduce(p0, z), dimensions={1}, to_apply=add
  b = f32[8,131072] broadcast(r), dimensions={0}
  ROOT d = f32[8,131072] divide(p0, b)
}

ENTRY main {
  p = f32[8,131072] parameter(0)
  ROOT fusion = f32[8,131072] fusion(p), kind=kInput, calls=fused
}
)";
  auto R = emitText(Hlo);
  ASSERT_FALSE(R);
  EXPECT_EQ(R.error().Loc.File, "stress.hlo");
  EXPECT_EQ(R.error().Loc.Line, 19u);
  EXPECT_EQ(R.error().Loc.Col, 8u);
  EXPECT_NE(R.error().Message.find("does not fit in one block"),
            std::string::npos)
      << R.error().Message;
}
