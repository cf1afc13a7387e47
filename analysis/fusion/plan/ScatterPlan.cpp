//===- ScatterPlan.cpp - Combining updates in place -----------------------===//
//
// Part of idxmap. The scatter emitter's plan (XLA's scatter fusion): a
// thread per update element combines it into the operand's buffer, which
// the output shares (the sidecar's aliases). The combiner decides the
// atomic: a plain store for an overwrite, one atomic add, max or min where
// the hardware has it for the element type, else a compare-and-swap loop.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/HloInterpreter.h"

#include "idxmap/HloIndexing.h"
#include "idxmap/HloScatter.h"

#include <algorithm>

namespace idxmap {
namespace plan {
namespace {

/// The update elements a thread combines: the widest run of at most 16
/// bytes along the updates' minor dim whose operand elements are
/// contiguous and aligned for any indices that fit. That holds when the
/// minor dim is a window dim onto the operand's minor dim, both sizes are
/// multiples of the run, and the window starts at 0 along it (the dim is
/// not scattered to, or the window spans it, which leaves 0 as the only
/// start that fits). \p Why receives the reason.
int64_t scatterVector(const HloInstruction &S, std::string *Why) {
  const ScatterDimensions &SD = S.scatterDimensions();
  const Shape &Op = S.shape(), &Upd = S.operand(2)->shape();
  *Why = "one update element per thread: ";
  if (Upd.rank() == 0 || Op.rank() == 0) {
    *Why += "a scalar window";
    return 1;
  }
  const int64_t UM = Upd.layoutOrDefault().front();
  auto W =
      std::find(SD.UpdateWindowDims.begin(), SD.UpdateWindowDims.end(), UM);
  if (W == SD.UpdateWindowDims.end()) {
    *Why += "the updates' minor dim is a scatter dim";
    return 1;
  }
  // The operand dim of the W-th window dim.
  int64_t OD = -1;
  for (int64_t D = 0, Seen = 0; D < Op.rank(); ++D) {
    if (!isOperandWindowDim(SD, D))
      continue;
    if (Seen++ == W - SD.UpdateWindowDims.begin()) {
      OD = D;
      break;
    }
  }
  if (OD != Op.layoutOrDefault().front()) {
    *Why += "the window's minor dim is not the operand's";
    return 1;
  }
  if (isScatteredOperandDim(SD, OD) &&
      Upd.Dims[size_t(UM)] != Op.Dims[size_t(OD)]) {
    *Why += "the window's start along the minor dim comes from the indices";
    return 1;
  }
  int64_t V = std::max<int64_t>(1, 16 / byteWidth(Op.Type));
  while (V > 1 && (Upd.Dims[size_t(UM)] % V || Op.Dims[size_t(OD)] % V))
    V /= 2;
  if (V == 1) {
    *Why += "no run of 2 divides the minor dims";
    return 1;
  }
  *Why = "update elements per thread: the widest run of at most 16 bytes "
         "dividing the updates' and the operand's minor dim, the window "
         "starting at 0 along it";
  return V;
}

/// The updates a thread walks at one place of the window (ScatterPlan::
/// Segment): with sorted indices, runs of equal ones are combined in
/// registers first. The window dims must be the updates' minor dims (a
/// thread's updates are then a window apart, and a warp's threads
/// neighbours within it); the segment is the longest of 16, 8, 4, 2 that
/// leaves a thread per SM thread slot of the device (2 for a scatter
/// smaller than that).
int64_t scatterSegment(const PlanInputs &In, const HloInstruction &S,
                       const ScatterPlan &SP, std::string *Why) {
  const ScatterDimensions &SD = S.scatterDimensions();
  const Shape &Upd = S.operand(2)->shape();
  *Why = "one update per thread: ";
  if (S.attribute("indices_are_sorted") != "true") {
    *Why += "the indices are not sorted";
    return 1;
  }
  if (SP.Combine == ScatterCombine::Store ||
      SP.Combine == ScatterCombine::ReadModifyWrite) {
    *Why += "no atomics to save";
    return 1;
  }
  const std::vector<int64_t> Layout = Upd.layoutOrDefault();
  for (size_t I = 0; I < SD.UpdateWindowDims.size(); ++I)
    if (!isUpdateWindowDim(SD, Layout[I])) {
      *Why += "a scatter dim is more minor than a window dim";
      return 1;
    }
  const int64_t Window = scatterWindowElements(SD, Upd);
  const int64_t Updates = Window ? Upd.numElements() / Window : 0;
  const int64_t Runs = Updates * (Window / SP.Vector);
  const int64_t Slots =
      std::min(In.Device.SmCount * In.Device.MaxThreadsPerSm, Runs / 2);
  for (int64_t K = 16; K >= 2; K /= 2)
    if (Updates >= K && Runs / K >= Slots) {
      *Why = "sorted indices: " + std::to_string(K) +
             " updates per thread, equal neighbours combined in registers "
             "(one atomic per segment); the longest of 16 that leaves a "
             "thread per SM thread slot";
      return K;
    }
  *Why += "too few updates to share out";
  return 1;
}

} // namespace

std::optional<std::string> planScatter(const PlanInputs &In, KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const HloInstruction *S = A.Roots.front();
  const HloInstruction *Updates = S->operand(2);
  const PrimitiveType T = S->shape().Type;
  ScatterPlan SP;
  SP.UpdatedParam = A.UpdatedParams.front();
  // The combine: what the combiner computes and what the element type
  // has atomics for (4- and 8-byte adds of floats and integers, 4- and
  // 8-byte integer max and min; a 1- or 2-byte element shares its word).
  const HloOpcode Op = scatterCombinerOp(*S);
  const int64_t Bytes = byteWidth(T);
  const bool Word = Bytes == 4 || Bytes == 8;
  const bool HalfFloat = T == PrimitiveType::F16 || T == PrimitiveType::BF16;
  std::string Why;
  if (Op != HloOpcode::Parameter && S->attribute("unique_indices") == "true") {
    SP.Combine = ScatterCombine::ReadModifyWrite;
    Why = "unique_indices: no two updates meet, so a load, the combiner "
          "and a store (no atomics)";
  } else if (Op == HloOpcode::Parameter) {
    SP.Combine = ScatterCombine::Store;
    Why = "the combiner returns the update: a store (with duplicate "
          "indices one of them wins, as XLA leaves unspecified)";
  } else if (Op == HloOpcode::Add && (Word || HalfFloat) &&
             T != PrimitiveType::Pred) {
    SP.Combine = ScatterCombine::AtomicAdd;
    Why = "the combiner adds: one atomic add per element";
    if (HalfFloat)
      Why += " (the hardware's f16/bf16 add gives what the combiner's "
             "f32 add then the rounding to the element type give)";
  } else if ((Op == HloOpcode::Maximum || Op == HloOpcode::Minimum) && Word &&
             isIntegralType(T)) {
    SP.Combine = Op == HloOpcode::Maximum ? ScatterCombine::AtomicMax
                                          : ScatterCombine::AtomicMin;
    Why = "an integer max or min: one atomic per element";
  } else {
    SP.Combine = ScatterCombine::CompareAndSwap;
    Why = "no atomic computes this combiner on " +
          std::string(primitiveTypeName(T)) +
          ": a compare-and-swap loop on the element's word";
  }
  P.choose("combine", int64_t(SP.Combine), Why);
  // A thread per run of Vector update elements, in the updates' physical
  // order.
  SP.Vector = scatterVector(*S, &Why);
  P.choose("vector", SP.Vector, Why);
  P.Main =
      loopThreadMapping(In.Ctx, Updates->shape(), SP.Vector,
                        tuned(In.Overrides, "IDXMAP_SCATTER_THREADS", 128));
  P.Main.Target = Updates;
  const ThreadMapping &TM = P.Main;
  SP.Segment = scatterSegment(In, *S, SP, &Why);
  P.choose("segment", SP.Segment, Why);
  P.choose("threads", TM.ThreadsPerBlock,
           In.Overrides.ScatterThreads ? "tuning override"
                                       : "threads per block");
  // The updates and indices are read once; with atomics, duplicate
  // indices come back to the operand's lines, which L2 then keeps rather
  // than the stream. Measured on the H200 (f32 rows of 128, CUPTI, 10
  // interleaved groups): 1M rows into 65536 (a 32 MiB operand) 314 -> 249
  // us, into 262144 (128 MiB) 415 -> 396, 262144 rows into 16384 62.9 ->
  // 62.0, sorted indices unchanged; a unique index_add (no atomics) 97.2
  // -> 99.3, so not there.
  const bool Atomic = SP.Combine != ScatterCombine::Store &&
                      SP.Combine != ScatterCombine::ReadModifyWrite;
  SP.EvictFirst =
      choose(In, P, "IDXMAP_SCATTER_EVICT_FIRST", "evict_first", Atomic,
             Atomic ? "the updates and indices are read once; the atomics "
                      "come back to the operand's lines, which L2 keeps"
                    : "each operand element is written once: no line worth "
                      "keeping in L2") != 0;
  const int64_t Streamed =
      std::max<int64_t>(2, Updates->shape().numElements() / 64);
  for (size_t K = 0; K < C.parameters().size(); ++K) {
    const HloInstruction *Pm = C.parameters()[K];
    SP.ReadOnce.push_back(
        int64_t(K) != SP.UpdatedParam &&
        (Pm == S->operand(1) || Pm->shape().numElements() >= Streamed));
  }
  int64_t Threads = Updates->shape().numElements() / SP.Vector;
  if (SP.Segment > 1) {
    const int64_t Runs =
        scatterWindowElements(S->scatterDimensions(), Updates->shape()) /
        SP.Vector;
    Threads = ceilDiv(Threads / Runs, SP.Segment) * Runs;
  }
  GridStride GS =
      gridStride(ceilDiv(Threads, TM.ThreadsPerBlock), In.Device.MaxGrid[0]);
  P.choose(
      "blocks", GS.Grid,
      GS.Iterations > 1
          ? "grid.x limit: " + std::to_string(GS.Iterations) +
                " blocks of the mapping per block (grid stride)"
          : "one block per " +
                std::to_string(TM.ThreadsPerBlock * TM.Vector * SP.Segment) +
                " update elements");
  int64_t MaxElements =
      std::max(Updates->shape().numElements(), S->shape().numElements());
  for (const HloInstruction *Pm : C.parameters())
    MaxElements = std::max(MaxElements, Pm->shape().numElements());
  chooseIndexWidth(P, MaxElements);
  // The updates' parameters load vectors where their maps prove them (the
  // indices are read once per thread, at its run's first element).
  std::vector<int64_t> Loads(C.parameters().size(), 1);
  if (SP.Vector > 1) {
    GroupedIndexing G = computeGroupedIndexing(In.Ctx, C, Updates);
    GroupedIndexing ReadByIndices =
        computeGroupedIndexing(In.Ctx, C, S->operand(1));
    for (size_t K = 0; K < C.parameters().size(); ++K) {
      auto It = G.find(C.parameters()[K]);
      if (It != G.end() && It->second.size() == 1 &&
          int64_t(K) != SP.UpdatedParam &&
          !ReadByIndices.count(C.parameters()[K]))
        Loads[K] =
            std::min({SP.Vector,
                      std::max<int64_t>(
                          1, 16 / byteWidth(C.parameters()[K]->shape().Type)),
                      provenAccessWidth(TM, It->second.front().Map,
                                        C.parameters()[K]->shape())});
    }
  }
  P.Loop = LoopPlan{true, std::move(Loads), {}, {}};
  P.Scatter = SP;
  P.BackEndOptLevel = 0;
  P.Grid[0] = GS.Grid;
  P.Block[0] = TM.ThreadsPerBlock;
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
