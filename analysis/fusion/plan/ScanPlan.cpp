//===- ScanPlan.cpp - Prefix scans: a line per thread or warp -------------===//
//
// Part of idxmap. The scan emitter's plan (ScanPlan in KernelPlan.h), the
// first scan kernels of issue 18. A scan along a non-minor dim gives each
// thread one line, scanned serially with the carry in a register; lines
// are numbered in the layout's order (the dims more major than the scanned
// one, then those more minor), so that the 32 lanes of a warp sit on 32
// neighbouring elements of the minor dim and each step is one coalesced
// access. A row scan of at least 32 elements gives each warp a row, walked
// in chunks of 32 consecutive elements scanned with shuffles. The block
// scan through shared memory and the decoupled look-back of long lines are
// the next kernels (docs/KERNEL_PLAN.md).
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
    return Hero + " scans lines of " + std::to_string(N) +
           " elements; a thread or warp scans at most " +
           std::to_string(MaxSerialLength) +
           " (the block scan and decoupled look-back of long lines are not "
           "built yet, issue 18)";
  ScanPlan SP;
  SP.Lines = Lines;
  SP.Length = N;
  SP.Reverse = S.Reverse;
  Context &Ctx = In.Ctx;
  // A row of at least a warp's width: a warp per row, 32 consecutive
  // elements a step (coalesced) scanned with shuffles.
  SP.LanesPerLine = P.choose(
      "lanes_per_line", S.isRow() && N >= 32 ? 32 : 1,
      S.isRow() ? (N >= 32 ? "a row scan: a warp per row, 32 consecutive "
                             "elements a step, a shfl.sync.up scan of each"
                           : "a row shorter than a warp: a thread per row")
                : "a column scan: a thread per line, lanes on neighbouring "
                  "elements of the minor dim (every step coalesced)");
  int64_t T, Blocks;
  Expr Lin;
  std::vector<Constraint> Cs;
  std::vector<Variable> Range;
  if (SP.LanesPerLine == 32) {
    const int64_t Rows =
        P.choose("lines_per_block", std::min<int64_t>(4, Lines),
                 "4 warps of 128 threads, a row each");
    T = 32 * Rows;
    Blocks = ceilDiv(Lines, Rows);
    const int64_t Chunks = ceilDiv(N, 32);
    // (th_x, bl_x)[it] -> element it * 32 + lane of row bl_x * Rows + warp.
    Expr Line = Ctx.dim(1) * Rows + Ctx.dim(0).floorDiv(32);
    Expr Step = Ctx.symbol(0) * 32 + Ctx.dim(0) % 32;
    Expr Pos = S.Reverse ? Ctx.constant(N - 1) - Step : Step;
    Lin = Line * N + Pos;
    if (Chunks * 32 != N)
      Cs.push_back({Step, {0, N - 1}});
    if (Blocks * Rows != Lines)
      Cs.push_back({Line, {0, Lines - 1}});
    Range.push_back({"it", {0, Chunks - 1}});
  } else {
    T = P.choose("threads", std::min<int64_t>(128, Lines),
                 "a line per thread, serially");
    Blocks = ceilDiv(Lines, T);
    // (th_x, bl_x)[pos] -> the element `pos` of line `bl_x * T + th_x` in
    // the operand's physical order: (outer * N + pos) * inner + e.
    Expr Line = Ctx.dim(1) * T + Ctx.dim(0);
    Lin = (Line.floorDiv(S.Dims[2]) * N + Ctx.symbol(0)) * S.Dims[2] +
          Line % S.Dims[2];
    if (Blocks * T != Lines)
      Cs.push_back({Line, {0, Lines - 1}});
    Range.push_back({"pos", {0, N - 1}});
  }
  P.Main.ThreadsPerBlock = T;
  P.Main.Blocks = Blocks;
  P.Main.Target = S.Input;
  P.Main.Map =
      IndexingMap(Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}},
                  std::move(Range), {}, delinearizePhysical(Ctx, Lin, X), Cs);
  simplify(P.Main.Map);
  GridStride GS = gridStride(Blocks, In.Device.MaxGrid[0]);
  P.choose("blocks", GS.Grid,
           GS.Iterations > 1
               ? "grid.x limit: " + std::to_string(GS.Iterations) +
                     " blocks of lines per block (grid stride)"
               : "one block per " + std::to_string(T / SP.LanesPerLine) +
                     " lines");
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
