//===- ScanPlan.cpp - Prefix scans, a line per thread ---------------------===//
//
// Part of idxmap. The scan emitter's plan (ScanPlan in KernelPlan.h): the
// first scan kernel of issue 18 gives each thread one line and scans it
// serially, the carry in a register. Lines are numbered in the layout's
// order (the dims more major than the scanned one, then those more minor),
// so that a scan along a non-minor dim has the 32 lanes of a warp on 32
// neighbouring elements of the minor dim: each step is one coalesced
// access. A row scan has lanes a line apart; the warp scan
// (shfl.sync.up), the block scan through shared memory and the decoupled
// look-back of long lines are the next kernels (docs/KERNEL_PLAN.md).
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Delinearize.h"
#include "idxmap/Simplify.h"

#include <algorithm>

namespace idxmap {
namespace plan {

std::optional<std::string> planScan(const PlanInputs &In, KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const ScanInfo &S = *A.Scan;
  const Shape &X = S.Input->shape();
  const int64_t Lines = S.Dims[0] * S.Dims[2], N = S.Length;
  const std::string Hero =
      std::string(opcodeName(S.Hero->opcode())) + " '" + S.Hero->name() + "'";
  if (X.numElements() == 0)
    return Hero + " of " + X.str() + " has no elements";
  // One thread walks a whole line: past this length the line needs the
  // block scan and the decoupled look-back across blocks, not built yet.
  constexpr int64_t MaxSerialLength = 16384;
  if (N > MaxSerialLength)
    return Hero + " scans lines of " +
           std::to_string(N) + " elements; a thread scans at most " +
           std::to_string(MaxSerialLength) +
           " (the block scan and decoupled look-back of long lines are not "
           "built yet, issue 18)";
  ScanPlan SP;
  SP.Lines = Lines;
  SP.Length = N;
  SP.Reverse = S.Reverse;
  const int64_t T = P.choose(
      "threads", std::min<int64_t>(128, Lines),
      S.isRow() ? "a line per thread, serially: no warp or block scan yet "
                  "(issue 18)"
                : "a line per thread, lanes on neighbouring elements of the "
                  "minor dim: every step one coalesced access");
  const int64_t Blocks = ceilDiv(Lines, T);
  // (th_x, bl_x)[pos] -> the element `pos` of line `bl_x * T + th_x` in
  // the operand's physical order: (outer * N + pos) * inner + e.
  Context &Ctx = In.Ctx;
  Expr Line = Ctx.dim(1) * T + Ctx.dim(0);
  Expr Lin = (Line.floorDiv(S.Dims[2]) * N + Ctx.symbol(0)) * S.Dims[2] +
             Line % S.Dims[2];
  std::vector<Constraint> Cs;
  if (Blocks * T != Lines)
    Cs.push_back({Line, {0, Lines - 1}});
  P.Main.ThreadsPerBlock = T;
  P.Main.Blocks = Blocks;
  P.Main.Target = S.Input;
  P.Main.Map = IndexingMap(Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}},
                           {{"pos", {0, N - 1}}}, {},
                           delinearizePhysical(Ctx, Lin, X), Cs);
  simplify(P.Main.Map);
  GridStride GS = gridStride(Blocks, In.Device.MaxGrid[0]);
  P.choose("blocks", GS.Grid,
           GS.Iterations > 1
               ? "grid.x limit: " + std::to_string(GS.Iterations) +
                     " blocks of lines per block (grid stride)"
               : "one block per " + std::to_string(T) + " lines");
  int64_t MaxElements = X.numElements();
  for (const HloInstruction *Pm : C.parameters())
    MaxElements = std::max(MaxElements, Pm->shape().numElements());
  chooseIndexWidth(P, MaxElements);
  P.Loop = LoopPlan{true, std::vector<int64_t>(C.parameters().size(), 1)};
  P.Scan = SP;
  P.BackEndOptLevel = 3;
  P.Grid[0] = GS.Grid;
  P.Block[0] = T;
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
