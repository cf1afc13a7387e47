//===- idxmap/HostSimulator.h - Run emitted kernels on the CPU --*- C++ -*-===//
//
// Part of idxmap. A CudaDriver whose "device" is this process: it loads the
// LLVM IR of emitModule with EmitOptions::HostIr (not PTX), compiles it for
// the host with LLVM's JIT, and runs every thread of a launch on the
// calling CPU thread (blocks in launch order, or several in flight taking
// turns; the threads of a block as fibers that meet at barriers and warp
// shuffles, votes and ballots). Memory
// is the process's, each buffer between guard pages, so a kernel's stray
// access fails the launch (CUDA_ERROR_ILLEGAL_ADDRESS) instead of passing
// unseen. The device it reports has the attributes of the sm_90 device
// model, so kernels are planned as for the GPU.
//
// What it is for: checking the emitters' kernels against the interpreter
// where no GPU is (CI, a laptop), with every runner and test program that
// takes a CudaDriver. What it is not: a timer (its times are the CPU's) or
// a race detector (one thread runs at a time, memory is sequentially
// consistent; compute-sanitizer's racecheck on the GPU finds races).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_HOSTSIMULATOR_H
#define IDXMAP_HOSTSIMULATOR_H

#include "idxmap/Runtime.h"

#include <cstdint>
#include <memory>

namespace idxmap {

/// How the simulator schedules a launch's blocks.
struct HostSimulatorOptions {
  /// Blocks in flight at once. 1: one after another in launch order, so a
  /// block that waits on others (a decoupled look-back, a reduction's fold
  /// by ticket) finds them finished. More: a block starts when one ends, in
  /// launch order, and the blocks in flight take turns, each running until
  /// its threads wait again (a barrier, a collective, a poll), in an order
  /// drawn from Seed: a block then meets others half done, as on the GPU
  /// (a look-back reads aggregates, a fold waits for partials), and a wait
  /// that nothing can end is reported as a deadlock.
  /// From 1 to MaxResidentBlocks.
  unsigned ResidentBlocks = 1;
  static constexpr unsigned MaxResidentBlocks = 64;
  /// The first launch's seed; each later launch adds one.
  uint64_t Seed = 1;
};

/// Opens the host simulator as a CudaDriver. One may be open at a time in
/// a process (a second open fails with NoDevice until the first is
/// destroyed). Its loadPtx takes the EmitResult::LlvmIr of an emit with
/// EmitOptions::HostIr; a failure to compile it, a launch that deadlocks,
/// faults or touches memory outside its buffers is an error of the call,
/// its message saying why.
///
/// Example:
/// \code
///   auto Drv = openHostSimulator();
///   EmitOptions O;
///   O.HostIr = true;
///   auto R = emitModule(*M, O);
///   auto Runs = runKernels(**Drv, *M, R->LlvmIr, R->Kernels, RunOptions{},
///                          std::cout);
///   // each KernelRunResult says "ok (max abs err ...)" or the mismatch
///
///   HostSimulatorOptions Four;
///   Four.ResidentBlocks = 4; // blocks meet others half done
///   auto Concurrent = openHostSimulator(Four); // (after Drv is closed)
/// \endcode
runtime::DriverResult<std::unique_ptr<runtime::CudaDriver>>
openHostSimulator(const HostSimulatorOptions &Options = HostSimulatorOptions());

} // namespace idxmap

#endif // IDXMAP_HOSTSIMULATOR_H
