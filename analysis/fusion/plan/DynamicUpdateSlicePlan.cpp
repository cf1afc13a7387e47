//===- DynamicUpdateSlicePlan.cpp - Writing an update in place ------------===//
//
// Part of idxmap. The in-place dynamic-update-slice emitter's plan (XLA's
// kInPlaceDynamicUpdateSlice): the fusion's roots update parameters that
// nothing else reads, so each output shares its operand's buffer and the
// kernel only moves the update: the loop emitter's threads walk the
// update's index space, and every store goes through the map from the
// update to the output, whose runtime variables are the clamped starts.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Compose.h"
#include "idxmap/CostModel.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Simplify.h"

#include <algorithm>

namespace idxmap {
namespace plan {

std::optional<std::string>
planInPlaceDynamicUpdateSlice(const PlanInputs &In, KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const HloInstruction *Update = A.Roots.front()->operand(1);
  const Shape &U = Update->shape();
  DynamicUpdateSlicePlan D;
  D.UpdatedParams = A.UpdatedParams;
  for (const HloInstruction *R : A.Roots)
    D.OutputMaps.push_back(
        computeInputToOutputIndexing(In.Ctx, *R, 1).Operands.at(0).at(0));

  // The parameters the update reads (never the updated ones: nothing but
  // their root reads them), with their maps from the update's index.
  GroupedIndexing G;
  for (const HloInstruction *R : A.Roots)
    for (auto &[I, Maps] : computeGroupedIndexing(In.Ctx, C, R->operand(1)))
      for (OperandMap &OM : Maps)
        if (std::find(G[I].begin(), G[I].end(), OM) == G[I].end())
          G[I].push_back(std::move(OM));
  int64_t Bytes = 1;
  for (const HloInstruction *R : A.Roots)
    Bytes = std::max<int64_t>(Bytes, byteWidth(R->shape().Type));
  for (const HloInstruction *Pm : C.parameters())
    if (G.count(Pm) && Pm->shape().isArray() &&
        Pm->shape().numElements() > 1)
      Bytes = std::max<int64_t>(Bytes, byteWidth(Pm->shape().Type));

  // The widest run of at most 16 bytes that divides the update and that
  // every root can store as one vector whatever its starts are (a start
  // along the minor dim that is not a multiple of the run, or an update
  // narrower than the output's rows with unknown starts, leaves element
  // stores; the loads of the update stay vectors where proven).
  const int64_t T = 128;
  int64_t V = std::max<int64_t>(1, 16 / Bytes);
  while (V > 1 && U.numElements() % V != 0)
    V /= 2;
  int64_t Store = V;
  {
    ThreadMapping Probe = loopThreadMapping(In.Ctx, U, V, T);
    for (size_t R = 0; R < A.Roots.size(); ++R)
      Store = std::min(Store, provenAccessWidth(Probe, D.OutputMaps[R].Map,
                                          A.Roots[R]->shape()));
  }
  std::string Why = "update elements per thread: the widest run of at most "
                    "16 bytes of the widest element dividing the update";
  if (Store < V) {
    Why += "; " + std::to_string(Store) +
           " that every root's store is proven to take as one vector "
           "whatever the starts are";
    V = Store;
  }
  P.Main = loopThreadMapping(In.Ctx, U, V, T);
  P.Main.Target = Update;
  P.choose("vector", V, Why);

  // Unrolled as the loop emitter is, over the update's bytes: what is read
  // and written is the update, so the fusion is in L2 when that is.
  const int64_t Streamed = std::max<int64_t>(2, U.numElements() / 64);
  int64_t RunBytes = V * Bytes, Moved = 0;
  int64_t ReadBytes = 0;
  for (const HloInstruction *Pm : C.parameters()) {
    if (!G.count(Pm) || !Pm->shape().isArray())
      continue;
    Moved += Pm->shape().numElements() * byteWidth(Pm->shape().Type);
    if (Pm->shape().numElements() >= Streamed)
      ReadBytes += V * byteWidth(Pm->shape().Type);
  }
  for (const HloInstruction *R : A.Roots)
    Moved += U.numElements() * byteWidth(R->shape().Type);
  RunBytes = std::max(RunBytes, ReadBytes);
  const bool InL2 = In.Device.L2Bytes > 0 && Moved <= In.Device.L2Bytes / 4;
  const bool Saturated = V * Bytes >= 16 && !InL2;
  const int64_t Runs = ceilDiv(std::max<int64_t>(1, U.numElements()), V);
  int64_t Unroll = chooseLoopUnroll(In, P, Runs, RunBytes, Saturated);
  if (Unroll > 1) {
    P.Main = loopThreadMapping(In.Ctx, U, V, T, Unroll);
    P.Main.Target = Update;
  }
  const ThreadMapping &TM = P.Main;
  P.choose("threads", TM.ThreadsPerBlock, "threads per block");
  GridStride GS = gridStride(TM.Blocks, In.Device.MaxGrid[0]);
  P.choose("blocks", GS.Grid,
           GS.Iterations > 1
               ? "grid.x limit: " + std::to_string(GS.Iterations) +
                     " blocks of the mapping per block (grid stride)"
               : "one block per " +
                     std::to_string(TM.ThreadsPerBlock * TM.Vector *
                                    TM.Unroll) +
                     " update elements");

  // Stores and loads as the maps prove them under the plan's own mapping.
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    int64_t W =
        std::min(V, provenAccessWidth(TM, D.OutputMaps[R].Map, A.Roots[R]->shape()));
    D.StoreWidth.push_back(W);
  }
  std::vector<int64_t> Loads(C.parameters().size(), 1);
  for (size_t K = 0; K < C.parameters().size(); ++K) {
    auto It = G.find(C.parameters()[K]);
    if (It != G.end() && It->second.size() == 1)
      Loads[K] = std::min(V, provenAccessWidth(TM, It->second.front().Map,
                                         C.parameters()[K]->shape()));
  }
  int64_t MaxElements = U.numElements();
  for (const HloInstruction *R : A.Roots)
    MaxElements = std::max(MaxElements, R->shape().numElements());
  for (const HloInstruction *Pm : C.parameters())
    MaxElements = std::max(MaxElements, Pm->shape().numElements());
  chooseIndexWidth(P, MaxElements);
  P.Loop = LoopPlan{true, std::move(Loads), {}, {}};
  P.DynamicUpdateSlice = std::move(D);
  P.BackEndOptLevel = 0;
  P.Grid[0] = GS.Grid;
  P.Block[0] = TM.ThreadsPerBlock;
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
