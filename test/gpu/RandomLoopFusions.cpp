//===- RandomLoopFusions.cpp - Random loop fusions on the GPU -------------===//
//
// Part of idxmap. Generates seeded random fusions (test/support/RandomHlo),
// keeps those the analysis sends to the loop emitter, emits each to PTX and
// runs it through the CUDA driver against the reference interpreter (fresh
// random inputs, outputs poisoned). Exit 0 when every kernel matches, 1 on a
// mismatch or an emission failure, 77 without a CUDA driver (ctest skips).
//
//   random_loop_fusions [--seed N] [--count N] [--max-elements N]
//                       [--max-grid N] [-v]
//
// --max-grid N lowers the device model's grid.x limit to N, so that the
// loop emitter's grid-stride loop (a fusion needing more blocks than the
// limit) runs on small fusions.
//
//===----------------------------------------------------------------------===//
#include "support/GpuTestDriver.h"
#include "support/RandomHlo.h"

#include "idxmap/Emit.h"
#include "idxmap/Fusion.h"
#include "idxmap/Runner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

using namespace idxmap;

int main(int Argc, char **Argv) {
  testing::GpuTestFlags Flags;
  Flags.MaxElements = 4096;
  Flags.TakesDryRun = Flags.TakesPtxas = Flags.TakesPrint = false;
  Flags.TakesMaxGrid = Flags.TakesNewOps = true;
  if (auto Exit =
          testing::parseGpuTestArgs(Argc, Argv, "random_loop_fusions", Flags))
    return *Exit;
  auto Drv = testing::openTestDriver(Flags);
  if (auto Exit = testing::skipWithoutDriver(Drv, false))
    return *Exit;
  unsigned Run = 0, Failed = 0, Skipped = 0, Strided = 0;
  uint64_t Elements = 0;
  for (uint64_t S = Flags.Seed;
       Run < Flags.Count && S < Flags.Seed + 100 * uint64_t(Flags.Count); ++S) {
    testing::RandomHloOptions O;
    // Alternate small fusions (many edge shapes) and larger ones (several
    // blocks, vector widths > 1).
    O.MaxElements = S % 2 ? 96 : Flags.MaxElements;
    O.NewOpsPercent = Flags.NewOpsPercent;
    testing::RandomFusion F = testing::generateRandomFusion(S, O);
    auto M = parseHloModule(F.Text, "random-" + std::to_string(S));
    if (!M) {
      std::printf("FAIL seed %llu: generated module does not parse:\n%s\n",
                  (unsigned long long)S, M.error().str().c_str());
      ++Failed;
      continue;
    }
    const HloInstruction *Fusion = (*M)->fusions().front();
    // Loop fusions only; a tuple-shaped output (a variadic reduce returned
    // as a whole) is not supported by the loop emitter.
    FusionAnalysis FA = analyzeFusion(*Fusion);
    bool ArrayOutputs = std::all_of(
        FA.Roots.begin(), FA.Roots.end(),
        [](const HloInstruction *R) { return R->shape().isArray(); });
    // With --new-ops, a fusion holding an op no emitter computes (dot,
    // sort, collectives, ...) is the whole-module path's to skip.
    if (FA.Kind != EmitterKind::Loop || !ArrayOutputs ||
        findUnmodeledInstruction(*Fusion->fusedComputation())) {
      ++Skipped;
      continue;
    }
    ++Run;
    // libdevice math: random chains of transcendental ops amplify the
    // approximations' errors (sin(exp(exp(x))) in bf16); this test checks
    // the emitter's logic, the approximations are measured on their own
    // (test/unit/codegen/lower/LowerGpu.cpp).
    EmitOptions EO;
    EO.HostIr = Flags.Simulate;
    EO.Target.PreciseMath = true;
    if (Flags.MaxGridX) {
      EO.Device = defaultDeviceModel(EO.Target.Gpu);
      EO.Device->MaxGrid[0] = Flags.MaxGridX;
      // Every other fusion one run per thread: the plan unrolls small
      // fusions (fewer blocks), and both grid-stride forms are checked.
      if (S % 2)
        EO.Tuning.LoopUnroll = 1;
    }
    auto R = emitModule(**M, EO);
    if (!R) {
      std::printf("FAIL seed %llu: emit: %s\n%s\n", (unsigned long long)S,
                  R.error().str().c_str(), F.Text.c_str());
      ++Failed;
      continue;
    }
    // With the lowered limit, a kernel whose own grid is wider walks its
    // blocks with the grid-stride loop.
    if (Flags.MaxGridX) {
      EmitOptions Wide = EO;
      Wide.Device.reset();
      if (auto W = emitModule(**M, Wide))
        for (const KernelInfo &K : W->Kernels)
          Strided += K.Grid[0] > uint64_t(Flags.MaxGridX);
    }
    RunOptions RO;
    RO.Seed = S;
    RO.Tol = kernelTolerance(*Fusion, /*PreciseMath=*/true);
    std::ostringstream Log;
    auto Res = runKernels(**Drv, **M, Flags.Simulate ? R->LlvmIr : R->Ptx,
                          R->Kernels, RO, Log);
    if (!Res) {
      std::printf("FAIL seed %llu: run: %s\n%s\n", (unsigned long long)S,
                  Res.error().Message.c_str(), F.Text.c_str());
      ++Failed;
      continue;
    }
    for (const KernelRunResult &K : *Res) {
      if (!K.Ok) {
        std::printf("FAIL seed %llu:\n", (unsigned long long)S);
        for (const std::string &L : K.OutputReports)
          std::printf("  %s\n", L.c_str());
        std::printf("%s\n", F.Text.c_str());
        ++Failed;
      } else if (Flags.Verbose) {
        for (const std::string &L : K.OutputReports)
          std::printf("ok seed %llu %s\n", (unsigned long long)S, L.c_str());
      }
    }
    for (const HloInstruction *P : Fusion->operands())
      Elements += P->shape().numElements();
  }
  std::printf("%u random loop fusions run on %s (%u other fusions skipped, "
              "%llu input elements), %u failed\n",
              Run, (*Drv)->device().Name.c_str(), Skipped,
              (unsigned long long)Elements, Failed);
  if (Flags.MaxGridX) {
    std::printf("%u kernels past the grid.x limit %lld (grid-stride loop)\n",
                Strided, (long long)Flags.MaxGridX);
    if (!Strided) {
      std::printf("FAIL: no kernel needed the grid-stride loop\n");
      return 1;
    }
  }
  if (Run < Flags.Count) {
    std::printf("FAIL: only %u loop fusions generated\n", Run);
    return 1;
  }
  return Failed ? 1 : 0;
}
