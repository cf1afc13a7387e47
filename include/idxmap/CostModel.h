//===- idxmap/CostModel.h - Kernel time estimated from the maps -*- C++ -*-===//
//
// Part of idxmap. Estimates the time of a planned kernel from its thread
// map, the fusion's indexing maps and the device model, in the spirit of
// XLA's indexing-based performance model (bytes moved over bandwidth, with
// occupancy), with the parts XLA leaves out where the maps allow:
//   - bytes: each parameter's elements once, times the sectors a warp
//     request touches over the fewest it could (analyzeAccess of the thread
//     map composed with the parameter's map), outputs once;
//   - where the data lives: inputs and outputs that fit in half the L2 stay
//     there between launches, and are read at L2 bandwidth;
//   - latency: a kernel reaches the bandwidth only with enough bytes in
//     flight per SM (Little's law: bandwidth per SM x memory latency); the
//     plan's loads in flight per thread (vector width x unroll x rows per
//     thread) times the resident threads give what it has;
//   - waves: a grid that leaves SMs idle, or ends in a partial wave, loses
//     that share of the bandwidth;
//   - fixed costs: a launch, a grid-wide combine of partials, per-row
//     barriers and shuffles.
// No LLVM here.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_COSTMODEL_H
#define IDXMAP_COSTMODEL_H

#include "idxmap/KernelPlan.h"

namespace idxmap {

/// Figures of the memory system the model needs beyond DeviceModel's.
/// Defaults: H100/H200-class (loaded DRAM latency about 600 ns, L2 about
/// 2.5 x the DRAM bandwidth at about 300 ns).
struct MemoryModel {
  double DramLatencySeconds = 600e-9;
  double L2LatencySeconds = 300e-9;
  /// L2 bandwidth over DRAM bandwidth.
  double L2Speedup = 2.5;
  /// The share of the DRAM data-sheet bandwidth a streaming kernel reaches
  /// (H200: a device-to-device copy moves 4.27 of 4.8 TB/s).
  double DramEfficiency = 0.89;
  /// A launch's fixed cost (the kernel time of an empty grid).
  double LaunchSeconds = 2.0e-6;
};

/// Bytes of \p A's parameters and outputs, each counted once.
int64_t uniqueBytes(const FusionAnalysis &A);

/// Whether \p A's parameters and outputs stay in \p D's L2 between
/// launches: together at most a quarter of it (L2 is two partitions, and
/// the neighbouring kernels' data shares it).
///
/// Example: f32[262144,8] (8 MiB in, 1 MiB out) fits the H200's 50 MiB;
/// f16[8192,1000] (15.6 MiB) does not.
bool staysInL2(const FusionAnalysis &A, const DeviceModel &D);

/// The estimate of plan \p P of fusion \p A on \p D.
///
/// Example: for `test/examples/rowsum_f32_8192x8192.hlo` on the H200 (268 MB
/// read once, from DRAM, 512 threads per row with 8 loads of 16 bytes in
/// flight each): about 60 us, memory-bound:
/// \code
///   CostEstimate E = estimateCost(Ctx, A, *P, *lookupDeviceModel("H200"));
///   // E.Bytes ~ 2.68e8, E.L2Resident == false, E.Microseconds ~ 58
/// \endcode
CostEstimate estimateCost(Context &Ctx, const FusionAnalysis &A,
                          const KernelPlan &P, const DeviceModel &D,
                          const MemoryModel &Mem = MemoryModel());

} // namespace idxmap

#endif // IDXMAP_COSTMODEL_H
