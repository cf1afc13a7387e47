//===- CostModel.cpp - Kernel time estimated from the maps ----------------===//
//
// Part of idxmap. See include/idxmap/CostModel.h for the model.
//
//===----------------------------------------------------------------------===//
#include "idxmap/CostModel.h"

#include "idxmap/Compose.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace idxmap {
namespace {

int64_t bytesOf(const Shape &S) {
  return S.isArray() ? S.numElements() * byteWidth(S.Type) : 0;
}

/// Sectors one warp request of \p P touches over the fewest it could, when
/// the kernel reads it through one map from the main access; 1 otherwise
/// (a parameter the kernel reads element by element at another index is
/// charged once: what it wastes stays in L1/L2 for its neighbours).
double sectorWaste(const KernelPlan &Plan, const HloInstruction *P,
                   const GroupedIndexing &G) {
  auto It = G.find(P);
  if (It == G.end() || It->second.size() != 1 || Plan.Main.Map.isUndefined())
    return 1;
  const IndexingMap &M = It->second.front().Map;
  if (M.isUndefined() || M.numDims() != Plan.Main.Map.numResults())
    return 1;
  IndexingMap Comp = compose(Plan.Main.Map, M);
  simplify(Comp);
  // A few warps: the pattern repeats over the grid, and the estimate must
  // stay a small part of a fusion's compile time.
  AccessReport R = analyzeAccess(Comp, P->shape(), /*CountWarps=*/true,
                                 /*MaxWarps=*/4);
  if (R.Undefined || R.MinSectors <= 0 || R.Uniform)
    return 1;
  return std::clamp(double(R.Sectors) / double(R.MinSectors), 1.0, 8.0);
}

/// Bytes one thread has in flight from the plan's main read.
double bytesInFlightPerThread(const FusionAnalysis &A, const KernelPlan &P) {
  int64_t Elem = 4;
  if (P.Main.Target && P.Main.Target->shape().isArray())
    Elem = byteWidth(P.Main.Target->shape().Type);
  if (P.Reduction) {
    const ReductionPlan &R = *P.Reduction;
    return double(R.Vector * Elem * R.Unroll * R.RowsPerThread);
  }
  if (P.RowNormalization) {
    const RowNormalizationPlan &R = *P.RowNormalization;
    return double(R.Vector * Elem * R.ChunksPerThread);
  }
  if (P.Transpose)
    return double(P.Transpose->Tiling.readGroup() * Elem *
                  P.Transpose->Tiling.readIterations());
  // A tiled scan issues every item's load before its first combine; a line
  // per thread or a row per warp reads one element a step.
  if (P.Scan)
    return P.Scan->Mode == ScanMode::LinePerThread ||
                   P.Scan->Mode == ScanMode::WarpPerRow
               ? double(Elem)
               : double(P.Scan->Runs * P.Scan->Vector * Elem);
  // Loop: one vector of every parameter the thread reads, per run.
  double Bytes = 0;
  for (const HloInstruction *Pm : A.Computation->parameters())
    if (Pm->shape().isArray() && Pm->shape().numElements() > 1)
      Bytes += double(P.Main.Vector * byteWidth(Pm->shape().Type));
  return std::max(Bytes, double(P.Main.Vector * Elem)) *
         double(std::max<int64_t>(1, P.Main.Unroll));
}

} // namespace

int64_t outputBytes(const FusionAnalysis &A) {
  int64_t Bytes = 0;
  for (const HloInstruction *R : A.Roots) {
    Bytes += bytesOf(R->shape());
    if (R->shape().isTuple())
      for (const Shape &S : R->shape().TupleShapes)
        Bytes += bytesOf(S);
  }
  return Bytes;
}

int64_t uniqueBytes(const FusionAnalysis &A) {
  int64_t Bytes = outputBytes(A);
  for (const HloInstruction *Pm : A.Computation->parameters())
    Bytes += bytesOf(Pm->shape());
  return Bytes;
}

bool staysInL2(const FusionAnalysis &A, const DeviceModel &D) {
  return D.L2Bytes > 0 && uniqueBytes(A) <= D.L2Bytes / 4;
}

bool evictLastFits(const FusionAnalysis &A, const DeviceModel &D) {
  return !staysInL2(A, D) && uniqueBytes(A) <= D.L2Bytes * 6 / 5;
}

CostEstimate estimateCost(Context &Ctx, const FusionAnalysis &A,
                          const KernelPlan &P, const DeviceModel &D,
                          const MemoryModel &Mem) {
  CostEstimate E;
  const HloComputation &C = *A.Computation;
  GroupedIndexing G;
  if (P.Main.Target && !P.Main.Map.isUndefined())
    G = computeGroupedIndexing(Ctx, C, P.Main.Target);
  // Reads: each parameter's elements the kernel reads (a slice reads its
  // part: at most the target's points per map), times the sectors a warp
  // request touches over the fewest it could when it reads only part; a
  // parameter read whole moves each sector once, whatever a warp wastes
  // (its neighbours read the rest through L2). Writes: every output once.
  const double Unique = double(uniqueBytes(A));
  const double TargetElems = P.Main.Target && P.Main.Target->shape().isArray()
                                 ? double(P.Main.Target->shape().numElements())
                                 : 0;
  double Read = 0;
  for (const HloInstruction *Pm : C.parameters()) {
    const double Bytes = double(bytesOf(Pm->shape()));
    auto It = G.find(Pm);
    // An in-place update reads what its update reads, never the buffer it
    // updates.
    if (P.DynamicUpdateSlice &&
        std::count(P.DynamicUpdateSlice->UpdatedParams.begin(),
                   P.DynamicUpdateSlice->UpdatedParams.end(),
                   Pm->parameterNumber()))
      continue;
    // A scatter reads and writes its operand's elements where the updates
    // go: counted with the writes below.
    if (P.Scatter && Pm->parameterNumber() == P.Scatter->UpdatedParam)
      continue;
    if (Bytes == 0 || It == G.end() || TargetElems == 0) {
      Read += Bytes;
      continue;
    }
    const double Elems = double(Pm->shape().numElements());
    const double Part =
        std::min(1.0, TargetElems * double(It->second.size()) / Elems);
    Read +=
        Part < 1 ? Bytes * std::min(1.0, Part * sectorWaste(P, Pm, G)) : Bytes;
  }
  double Write = double(outputBytes(A));
  if (P.DynamicUpdateSlice || P.Scatter) {
    // Each root writes its update's elements only (a scatter reads them
    // too).
    Write = 0;
    for (const HloInstruction *R : A.Roots)
      Write += TargetElems * double(byteWidth(R->shape().Type)) *
               (P.Scatter ? 2 : 1);
  }
  const double Moved = Read + Write;
  E.Bytes = Moved;
  E.L2Resident = P.DynamicUpdateSlice || P.Scatter
                     ? D.L2Bytes > 0 && Moved <= double(D.L2Bytes) / 4
                     : staysInL2(A, D);
  const double Peak =
      D.DramBytesPerSecond * (E.L2Resident ? Mem.L2Speedup : 1.0);
  const double Latency =
      E.L2Resident ? Mem.L2LatencySeconds : Mem.DramLatencySeconds;

  // Occupancy from the thread and block limits (registers and shared
  // memory are ptxas's, unknown here; the plans keep them small).
  const int64_t Threads =
      std::max<int64_t>(1, P.Block[0] * P.Block[1] * P.Block[2]);
  const int64_t Blocks =
      std::max<int64_t>(1, P.Grid[0] * P.Grid[1] * P.Grid[2]);
  int64_t PerSm = std::max<int64_t>(
      1, std::min(D.MaxBlocksPerSm, D.MaxThreadsPerSm / Threads));
  if (P.SharedBytes > 0)
    PerSm = std::max<int64_t>(
        1, std::min(PerSm, D.SharedBytesPerSm / P.SharedBytes));
  const int64_t Sms = std::max<int64_t>(1, D.SmCount);
  const double Waves = double(Blocks) / double(Sms * PerSm);
  const double BusySms = std::min<double>(double(Sms), double(Blocks));
  const double BlocksPerBusySm =
      std::min<double>(double(PerSm), std::ceil(double(Blocks) / Sms));
  // An SM alone pulls up to SmBandwidthShare times its even share.
  const double Share =
      std::min(1.0, Mem.SmBandwidthShare * BusySms / double(Sms));
  // DRAM turns around between reads and writes: a write costs more of the
  // data-sheet bandwidth than a read.
  const double BandwidthSeconds =
      (Read / Mem.ReadEfficiency + Write / Mem.WriteEfficiency) /
      (Peak * Share);
  // Little's law: what is in flight over the latency bounds the rate.
  const double InFlight = BusySms * BlocksPerBusySm * double(Threads) *
                          bytesInFlightPerThread(A, P);
  const double LatencySeconds = Moved / (InFlight / Latency);
  const bool LatencyBound = LatencySeconds > BandwidthSeconds;
  E.MemoryMicroseconds = std::max(BandwidthSeconds, LatencySeconds) * 1e6;
  E.LaunchMicroseconds = Mem.LaunchSeconds * 1e6;
  if (P.Reduction && P.Reduction->MultiBlock && P.Reduction->TicketFold) {
    // Partials published with their flags, folded by the block with the
    // last ticket: the partials' visibility, then one L2 round trip per
    // batch of flags (a full reduction's: 8 a thread, a warp of folders up
    // to 4 partials a lane).
    const ReductionPlan &R = *P.Reduction;
    const double Trips =
        R.Mode == ReductionMode::Column
            ? double(R.combineBatches())
            : std::ceil(std::ceil(double(Blocks) / double(R.TicketFolders)) /
                        double(R.TicketBatch));
    E.LaunchMicroseconds += (Trips + 1) * Mem.L2LatencySeconds * 1e6;
  } else if (P.Reduction && P.Reduction->MultiBlock) {
    // Partials through the workspace, an arrival counter, then the last
    // block's fold: one L2 round trip per batch of partial loads.
    const ReductionPlan &R = *P.Reduction;
    double Trips = R.Mode == ReductionMode::Column
                       ? double(R.combineBatches())
                       : std::ceil(double(Blocks) / double(Threads));
    E.LaunchMicroseconds += 0.5 + (Trips + 1) * Mem.L2LatencySeconds * 1e6;
  }
  E.Microseconds = E.MemoryMicroseconds + E.LaunchMicroseconds;
  std::ostringstream OS;
  OS.precision(3);
  OS << E.Bytes / 1e6 << " MB moved";
  if (std::abs(Moved - Unique) > Unique * 0.01 && !P.DynamicUpdateSlice &&
      !P.Scatter)
    OS << " (" << Unique / 1e6 << " MB in the arrays)";
  OS << (E.L2Resident ? ", in L2" : ", from DRAM") << ", "
     << (!LatencyBound
             ? "bandwidth-bound"
             : "latency-bound (" + std::to_string(int64_t(InFlight / 1024)) +
                   " KiB in flight)")
     << ", " << Waves << " waves";
  E.Summary = OS.str();
  return E;
}

} // namespace idxmap
