//===- idxmap/CostModel.h - Kernel time estimated from the maps -*- C++ -*-===//
//
// Part of idxmap. Estimates the time of a planned kernel from its thread
// map, the fusion's indexing maps and the device model, in the spirit of
// XLA's indexing-based performance model (bytes moved over bandwidth, with
// occupancy), with the parts XLA leaves out where the maps allow:
//   - bytes: of each parameter the elements the kernel reads (a slice, at
//     most the target's points per map), times the sectors a warp request
//     touches over the fewest it could (analyzeAccess of the thread map
//     composed with the parameter's map) when it reads only part of it; a
//     parameter read whole moves each sector once; outputs once;
//   - where the data lives: inputs and outputs that fit in a quarter of the
//     L2 stay there between launches, and are read at L2 bandwidth;
//   - reads and writes: DRAM turns around between them, so a written byte
//     costs more of the bandwidth than a read one;
//   - latency: a kernel reaches the bandwidth only with enough bytes in
//     flight per SM (Little's law: bandwidth per SM x memory latency); the
//     plan's loads in flight per thread (vector width x unroll x rows per
//     thread) times the resident threads give what it has;
//   - SMs: a grid that leaves SMs idle loses their share, though an SM
//     alone pulls more than its even share;
//   - fixed costs: a launch, a grid-wide combine of partials (an L2 round
//     trip per batch of partials the last block folds).
// The figures beyond the device model (MemoryModel) are calibrated on the
// broad suite (bench/suite/, bench/RESULTS.md).
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
  /// The share of the data-sheet bandwidth that reads and writes reach:
  /// DRAM turns around between them, so a write costs more (H200: 1 GB
  /// read-only reductions move 4.55 of 4.8 TB/s, a 0.5 + 0.5 GB elementwise
  /// kernel 4.25).
  double ReadEfficiency = 0.95;
  double WriteEfficiency = 0.83;
  /// How many times its even share of the bandwidth one SM pulls when
  /// others are idle (a grid of 64 blocks of one row each reads at nearly
  /// the full bandwidth).
  double SmBandwidthShare = 2.0;
  /// A launch's fixed cost (the kernel time of an empty grid).
  double LaunchSeconds = 1.5e-6;
};

/// Bytes of \p A's parameters and outputs, each counted once.
int64_t uniqueBytes(const FusionAnalysis &A);

/// Bytes of \p A's outputs (a tuple root's elements each). Example: a
/// fusion whose root is f32[4096,768]: 12582912.
int64_t outputBytes(const FusionAnalysis &A);

/// Whether \p A's parameters and outputs stay in \p D's L2 between
/// launches: together at most a quarter of it (L2 is two partitions, and
/// the neighbouring kernels' data shares it).
///
/// Example: f32[262144,8] (8 MiB in, 1 MiB out) fits the H200's 50 MiB;
/// f16[8192,1000] (15.6 MiB) does not.
bool staysInL2(const FusionAnalysis &A, const DeviceModel &D);

/// True when \p A does not stay in L2 and moves at most 1.2 x L2: where
/// the plans give loads an L2 evict_last policy (concatenates, loops,
/// transposes).
///
/// Example: a 28 MiB concatenate on the H200's 50 MiB: true; 3.5 MiB
/// (stays in L2) or 112 MiB: false.
bool evictLastFits(const FusionAnalysis &A, const DeviceModel &D);

/// The estimate of plan \p P of fusion \p A on \p D.
///
/// Example: for `test/examples/rowsum_f32_8192x8192.hlo` on the H200 (268 MB
/// read once, from DRAM, 512 threads per row with 4 loads of 16 bytes in
/// flight each): about 60 us, bandwidth-bound:
/// \code
///   CostEstimate E = estimateCost(Ctx, A, *P, *lookupDeviceModel("H200"));
///   // E.Bytes ~ 2.68e8, E.L2Resident == false, E.Microseconds ~ 60
/// \endcode
CostEstimate estimateCost(Context &Ctx, const FusionAnalysis &A,
                          const KernelPlan &P, const DeviceModel &D,
                          const MemoryModel &Mem = MemoryModel());

} // namespace idxmap

#endif // IDXMAP_COSTMODEL_H
