//===- PiecewisePlan.cpp - Plans that store pieces of one index space -----===//
//
// Part of idxmap. What the concatenate and input-slices plans share once
// their thread map and pieces are set: the vector widths the maps prove
// for every store and load, the launch and the index width.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Compose.h"
#include "idxmap/CostModel.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <map>

namespace idxmap {
namespace plan {

int64_t provenAccessWidth(const ThreadMapping &TM, const IndexingMap &Access,
                          const Shape &S) {
  if (Access.isUndefined() || Access.numDims() != TM.Map.numResults())
    return 1;
  IndexingMap M = compose(TM.Map, Access);
  simplify(M);
  AccessReport R = analyzeAccess(M, S, /*CountWarps=*/false);
  return std::max<int64_t>(1, R.VectorWidth);
}

int64_t concatUnroll(const PlanInputs &In, bool Straddles) {
  // Where the fusion's bytes fit in L2 the written lines need not reach
  // DRAM while the kernel runs, and several runs' loads in flight per
  // thread pay. Measured on the H100 (CUPTI, 4 interleaved groups, unroll
  // 1 / 4): concatenates of 18.8 to 48 MiB 1-8 % faster (f32[4096, 4 x
  // 256] 10.55 / 9.68 us, f32[2048, 2 x 1024] 10.27 / 9.90); from 56 MiB
  // up 0.4-1.9 % slower but for one (0.9 % faster); in L2 between launches
  // 10-20 % slower. Re-measured with shuffled groups and an A/A control
  // (10 groups, the default timed twice within 1.1 %): f32[4096, 4 x 256]
  // 10.25 / 9.62, the others of 18.8 to 48 MiB level or up to 1.1 %
  // faster. Input slices keep 1: the split of f32 rows of 1024 into 4
  // heads was 2.8 % slower with 4 there, the split of rows of 1000 at odd
  // edges (lanes stored one by one) 26 %.
  const bool Fits = In.Device.L2Bytes > 0 &&
                    uniqueBytes(In.A) <= In.Device.L2Bytes &&
                    !staysInL2(In.A, In.Device);
  return Fits && !Straddles ? 4 : 1;
}

ThreadMapping pieceThreadMapping(const PlanInputs &In, const Shape &S,
                                 int64_t V, int64_t Unroll) {
  // Data that stays in L2 takes little time to move, and the blocks'
  // start-up then counts: half as many blocks of 256 threads. Measured on
  // the H200 (CUPTI, 8 interleaved groups): concatenates of f32 rows in L2
  // 1.61 -> 1.39 us, of s8 rows 1.33 -> 1.11; from DRAM no gain (f32 rows
  // of 128, 256 and 33: 4.98 -> 5.43).
  const int64_t T = tuned(In.Overrides, "IDXMAP_PIECE_THREADS",
                          staysInL2(In.A, In.Device) ? 256 : 128);
  const int64_t U = tuned(In.Overrides, "IDXMAP_PIECE_UNROLL", Unroll);
  return loopThreadMapping(In.Ctx, S, V, T, U);
}

void finishPiecewise(const PlanInputs &In, KernelPlan &P, PiecewisePlan PP,
                     const std::set<const HloInstruction *> &Excluded,
                     const std::string &Unit) {
  const HloComputation &C = *In.A.Computation;
  // Stores: one vector where the piece's map proves it and its runs are
  // whole.
  GroupedIndexing G;
  std::set<const HloInstruction *> Straddled;
  // Blocked, the walk each instruction is read under (null: several).
  std::map<const HloInstruction *, const ThreadMapping *> Walk;
  for (PiecewisePlan::Piece &Pc : PP.Pieces) {
    const Shape &Out = In.A.Roots[Pc.Output]->shape();
    const ThreadMapping &M = PP.Blocked ? Pc.Main : P.Main;
    Pc.StoreWidth =
        Pc.WholeRuns
            ? std::min(M.Vector, provenAccessWidth(M, Pc.OutputMap, Out))
            : 1;
    for (auto &[I, Maps] : computeGroupedIndexing(In.Ctx, C, Pc.Source)) {
      if (!Pc.WholeRuns && !Pc.Covers)
        Straddled.insert(I);
      auto [W, New] = Walk.emplace(I, &M);
      if (!New && W->second != &M)
        W->second = nullptr;
      for (OperandMap &OM : Maps)
        if (std::find(G[I].begin(), G[I].end(), OM) == G[I].end())
          G[I].push_back(std::move(OM));
    }
  }
  // Loads: a parameter read by the pieces through one map (not by an
  // epilogue, which reads at the output's index) loads vectors where the
  // maps prove them, unless a piece whose runs straddle its domain's edge
  // reads it (a group's vector would reach past the edge).
  std::vector<int64_t> Loads(C.parameters().size(), 1);
  for (size_t K = 0; K < C.parameters().size(); ++K) {
    const HloInstruction *Pm = C.parameters()[K];
    auto It = G.find(Pm);
    const ThreadMapping *M = PP.Blocked ? Walk[Pm] : &P.Main;
    if (It != G.end() && It->second.size() == 1 && !Excluded.count(Pm) &&
        !Straddled.count(Pm) && M)
      Loads[K] =
          std::min(M->Vector,
                   provenAccessWidth(*M, It->second.front().Map, Pm->shape()));
  }
  const ThreadMapping &TM = P.Main;
  // The reason of pieceThreadMapping's rule, from the same condition.
  P.choose("threads", TM.ThreadsPerBlock,
           In.Overrides.PieceThreads ? "tuning override"
           : staysInL2(In.A, In.Device)
               ? "threads per block: the data stays in L2, so fewer, larger "
                 "blocks"
               : "threads per block");
  if (TM.Unroll > 1 || In.Overrides.PieceUnroll)
    P.choose("unroll", TM.Unroll,
             In.Overrides.PieceUnroll
                 ? "tuning override"
                 : "runs per thread, their loads in flight together: the "
                   "fusion's bytes fit in L2 (measured up to 7 % faster "
                   "there, slower beyond it or where a run straddles an "
                   "edge)");
  GridStride GS = gridStride(PP.blocks(TM), In.Device.MaxGrid[0]);
  P.choose(
      "blocks", GS.Grid,
      GS.Iterations > 1 ? "grid.x limit: " + std::to_string(GS.Iterations) +
                              " blocks of the mapping per block (grid stride)"
      : PP.Blocked
          ? "one block per " + std::to_string(TM.ThreadsPerBlock * TM.Unroll) +
                " runs of one operand"
          : "one block per " +
                std::to_string(TM.ThreadsPerBlock * TM.Unroll * TM.Vector) +
                " " + Unit);
  int64_t MaxElements = TM.Target->shape().numElements();
  for (const HloInstruction *R : In.A.Roots)
    MaxElements = std::max(MaxElements, R->shape().numElements());
  for (const HloInstruction *Pm : C.parameters())
    MaxElements = std::max(MaxElements, Pm->shape().numElements());
  chooseIndexWidth(P, MaxElements);
  P.Loop = LoopPlan{true, std::move(Loads), {}, {}};
  P.Pieces = std::move(PP);
  P.BackEndOptLevel = 0;
  P.Grid[0] = GS.Grid;
  P.Block[0] = TM.ThreadsPerBlock;
}

} // namespace plan
} // namespace idxmap
