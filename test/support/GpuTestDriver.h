//===- test/support/GpuTestDriver.h - Flags of the GPU test programs -*- C++
//-*-===//
//
// Part of idxmap. The command line every `random_*` GPU test program takes:
// seed, count, size bound and the dry-run / ptxas / print / verbose flags.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_GPUTESTDRIVER_H
#define IDXMAP_TEST_SUPPORT_GPUTESTDRIVER_H

#include "idxmap/HostSimulator.h"
#include "idxmap/Runtime.h"
#include "idxmap/Tuning.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace idxmap::testing {

/// `--seed N --count N --max-elements N [--dry-run] [--ptxas PATH]
/// [--print] [--simulate] [-v]`. A program sets its defaults and the optional
/// flags it takes before parsing.
struct GpuTestFlags {
  uint64_t Seed = 1;
  unsigned Count = 200;
  int64_t MaxElements = 4096;
  /// --max-elements below this is raised to it.
  int64_t MinMaxElements = 1;
  bool DryRun = false, Print = false, Verbose = false;
  /// --simulate: run the kernels in the host simulator (HostSimulator.h)
  /// instead of on a GPU; the fusions are emitted with EmitOptions::HostIr.
  bool Simulate = false;
  /// --resident N: with --simulate, N blocks in flight at once, taking
  /// turns in an order drawn from --seed (HostSimulatorOptions).
  unsigned Resident = 1;
  std::string Ptxas;
  /// --max-grid N: emit against a device model whose grid.x limit is N
  /// (0: the target's own), so that small fusions take the grid-stride
  /// path that only fusions of over 2^31 blocks take on a real limit.
  int64_t MaxGridX = 0;
  /// --new-ops PERCENT: the share of random fusions that hold the ops after
  /// Call (RandomHloOptions::NewOpsPercent), for the programs that take it.
  unsigned NewOpsPercent = 0;
  /// --tune NAME=VALUE[,...]: knob overrides every fusion is emitted with
  /// (as `idxmap emit --tune`), for the programs that take them.
  Tuning Knobs;
  /// The optional flags the program accepts; with PrintMeansDryRun,
  /// --print also sets DryRun.
  bool TakesDryRun = true, TakesPtxas = true, TakesPrint = true;
  bool TakesMaxGrid = false, TakesTune = false, TakesNewOps = false;
  bool PrintMeansDryRun = false;
};

/// Parses \p Argv into \p F. On an unknown flag, a missing value or a
/// value that is not a whole number, prints `usage: PROGRAM ...` (the
/// flags \p F takes) to stderr and returns 2, the exit code; else nothing.
///
/// Example: `GpuTestFlags F; F.Count = 100; F.TakesPtxas = false;
/// if (auto Exit = parseGpuTestArgs(Argc, Argv, "random_x", F)) return
/// *Exit;` accepts `random_x --seed 7 --count 3 --dry-run`.
std::optional<int> parseGpuTestArgs(int Argc, char **Argv, const char *Program,
                                    GpuTestFlags &F);

/// The CUDA driver library to open (CudaDriver::OpenOptions::LibraryPath):
/// `$IDXMAP_LIBCUDA`, as `idxmap run` reads it; empty when unset (the
/// runtime then opens libcuda.so.1). The libraries read no environment.
///
/// Example: `runtime::CudaDriver::open({0, libcudaFromEnvironment()})`.
std::string libcudaFromEnvironment();

/// The driver a program runs its kernels on: the host simulator with
/// --simulate, else the CUDA driver ($IDXMAP_LIBCUDA or libcuda.so.1).
inline runtime::DriverResult<std::unique_ptr<runtime::CudaDriver>>
openTestDriver(const GpuTestFlags &F) {
  if (F.Simulate) {
    HostSimulatorOptions O;
    O.ResidentBlocks = F.Resident;
    O.Seed = F.Seed;
    return openHostSimulator(O);
  }
  runtime::CudaDriver::OpenOptions O;
  O.LibraryPath = libcudaFromEnvironment();
  return runtime::CudaDriver::open(O);
}

/// What a GPU test program does without a driver: \p Drv is the result of
/// CudaDriver::open(). Returns the exit code after printing `SKIP: why`
/// (77, ctest's skip code, when no driver or GPU exists, else 1), or nothing
/// when the driver opened or for a \p DryRun (which needs none).
template <typename DriverResultT>
std::optional<int> skipWithoutDriver(const DriverResultT &Drv, bool DryRun) {
  if (Drv || DryRun)
    return std::nullopt;
  std::printf("SKIP: %s\n", Drv.error().Message.c_str());
  return Drv.error().isUnavailable() ? 77 : 1;
}

} // namespace idxmap::testing

#endif
