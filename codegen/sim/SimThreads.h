//===- codegen/sim/SimThreads.h - A grid of GPU threads on one CPU -*- C++ -*-//
//
// Part of idxmap. Runs a kernel entry (SimIr.h) for every thread of a grid
// on the calling CPU thread. Blocks run one after another in launch order
// (so a decoupled look-back only ever waits on finished blocks); the
// threads of a block that may meet at a barrier or a warp collective run as
// fibers, each until it waits, and a collective completes when every thread
// it names waits at it (a barrier: every live thread of the block). A thread
// that keeps reading one value at a poll (PollFn) gives the CPU to the
// others of its block. A block where some thread waits forever (a poll
// included) is reported as a deadlock; a fault (bad address, integer
// division by zero) ends the launch with an error.
//
// Shared memory is checked for races: an access of one thread and a write
// of another to the same byte with neither a barrier nor (for two lanes of
// one warp) a warp collective between them fail the launch. Races in global
// memory are not seen: one thread runs at a time and memory is sequentially
// consistent; compute-sanitizer's racecheck on the GPU finds those.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_SIM_SIMTHREADS_H
#define IDXMAP_CODEGEN_SIM_SIMTHREADS_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace idxmap {
namespace sim {

using KernelEntry = void (*)(void **Args);

struct GridLaunch {
  KernelEntry Entry = nullptr;
  void **Args = nullptr;
  unsigned Grid[3] = {1, 1, 1};
  unsigned Block[3] = {1, 1, 1};
  /// Threads of a block run as fibers (the kernel may wait at a barrier or
  /// a warp collective); else each runs to its end in turn.
  bool Collectives = true;
  /// Shared-memory arrays, filled with 0xff before each block (a kernel
  /// that reads shared memory it did not write sees NaNs and -1s).
  std::vector<std::pair<void *, uint64_t>> Shared;
  /// Blocks in flight at once (1: one after another in launch order). With
  /// more, a block starts when one ends, in launch order, and each pass
  /// runs every block in flight until its threads wait again, in an order
  /// drawn from Seed: a block may then wait on one that has started and
  /// not finished (a look-back meeting an aggregate, a fold polling a
  /// partial not yet published), as resident blocks do on the GPU.
  unsigned Resident = 1;
  uint64_t Seed = 0;
  /// Where a faulting address lies ("12 bytes past the end of a buffer of
  /// 4096 bytes"), for the launch's error.
  std::function<std::string(uintptr_t)> DescribeAddress;
};

/// Runs \p L. Returns an empty string when every thread finished, else
/// what went wrong ("deadlock in block (3,0,0): ...", "invalid memory
/// access in block ...").
std::string runGrid(const GridLaunch &L);

} // namespace sim
} // namespace idxmap

#endif // IDXMAP_CODEGEN_SIM_SIMTHREADS_H
