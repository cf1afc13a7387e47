//===- Plans.h - One planner per emitter kind (private) ---------*- C++ -*-===//
//
// Part of idxmap. planFusion (PlanFusion.cpp) picks the emitter and calls
// one of these; each fills the kind's fields of the plan, its launch, its
// main thread map and the reasons, or returns why no plan fits.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_FUSION_PLAN_PLANS_H
#define IDXMAP_ANALYSIS_FUSION_PLAN_PLANS_H

#include "idxmap/KernelPlan.h"

#include <set>

namespace idxmap {
namespace plan {

inline int64_t ceilDiv(int64_t A, int64_t B) { return A / B + (A % B > 0); }

/// The smallest power of two >= \p V (1 for V <= 1).
inline int64_t nextPow2(int64_t V) {
  int64_t P = 1;
  while (P < V)
    P *= 2;
  return P;
}

/// ceil(log2 V): the exponent of nextPow2(V) (0 for V <= 1).
inline int64_t ceilLog2(int64_t V) {
  int64_t L = 0;
  while ((int64_t(1) << L) < V)
    ++L;
  return L;
}

/// The largest power of two <= \p V (1 for V <= 1).
inline int64_t floorPow2(int64_t V) {
  int64_t P = 1;
  while (P <= V / 2)
    P *= 2;
  return P;
}

/// Everything a planner reads.
struct PlanInputs {
  Context &Ctx;
  const FusionAnalysis &A;
  const Tuning &Overrides;
  const DeviceModel &Device;
};

/// Each returns nothing on success, else the reason no plan fits (planFusion
/// locates it at the fusion).
std::optional<std::string> planLoop(const PlanInputs &In, KernelPlan &P);
/// A loop plan for a fusion whose hero's emitter refused it or was
/// overridden (\p Why, appended to "the loop emitter" in the plan's reason,
/// e.g. ", each reduce inline: ..."): the loop emitter computes every reduce
/// inline, as XLA's loop emitter does for the reduces of its loop fusions, when
/// an output element takes at most 65536 reduce steps (nested reduces multiply)
/// and all of them at most 2^32. Returns what to add to the refusal when the
/// loop emitter cannot take it either (the budget; empty for an output that is
/// not an array), nothing on success.
std::optional<std::string> planLoopInstead(const PlanInputs &In, KernelPlan &P,
                                           const std::string &Why);
std::optional<std::string> planTranspose(const PlanInputs &In, KernelPlan &P);
std::optional<std::string> planReduction(const PlanInputs &In, KernelPlan &P);
std::optional<std::string> planRowNormalization(const PlanInputs &In,
                                                KernelPlan &P);

std::optional<std::string>
planInPlaceDynamicUpdateSlice(const PlanInputs &In, KernelPlan &P);
std::optional<std::string> planConcatenate(const PlanInputs &In,
                                           KernelPlan &P);

/// The loop emitter's unroll (runs of P.Main.Vector elements per thread),
/// recorded as the choice "unroll": doubled (up to 8) until a thread has
/// 32 bytes of parameters in flight (16 when \p Saturated: full 16-byte
/// vectors from DRAM; \p MinBytes when not 0), \p RunBytes per run, while
/// \p Runs runs still give every SM a block; \p Unsaturated, when not
/// empty, says in the reason why the stream is not saturated. Example:
/// 262144 runs of 16 bytes in L2 on the H200: 2.
int64_t chooseLoopUnroll(const PlanInputs &In, KernelPlan &P, int64_t Runs,
                         int64_t RunBytes, bool Saturated,
                         const std::string &Unsaturated = "",
                         int64_t MinBytes = 0);

std::optional<std::string> planInputSlices(const PlanInputs &In,
                                           KernelPlan &P);
std::optional<std::string> planScatter(const PlanInputs &In, KernelPlan &P);
std::optional<std::string> planScan(const PlanInputs &In, KernelPlan &P);

/// Elements per vector access the maps prove for \p Access (a map from
/// \p TM's target's index to an index of an array of shape \p S) under
/// \p TM, for every value of its runtime variables; 1 when none is.
/// Example: a loop mapping of bf16[8,4096] in runs of 8 and the map
/// `(d0, d1){rt0} -> (d0 + rt0, d1)` into bf16[1024,4096]: 8.
int64_t provenAccessWidth(const ThreadMapping &TM, const IndexingMap &Access,
                          const Shape &S);

/// The thread mapping of a piecewise plan (concatenate, input slices) over
/// \p S in runs of \p V elements: IDXMAP_PIECE_THREADS threads per block
/// (128), each computing IDXMAP_PIECE_UNROLL runs (\p Unroll unless set)
/// whose loads are in flight together; finishPiecewise records both
/// choices.
/// Example: bf16[8192,1024] in runs of 8, unroll 4: 2048 blocks.
ThreadMapping pieceThreadMapping(const PlanInputs &In, const Shape &S,
                                 int64_t V, int64_t Unroll);

/// The runs each thread of a concatenate computes by default: 4 when the
/// fusion's bytes fit in L2 but do not stay there between launches and no
/// operand's edge cuts a run (\p Straddles), 1 otherwise.
/// Example: f32[4096, 4 x 256] concatenated (32 MiB) on an H100: 4.
int64_t concatUnroll(const PlanInputs &In, bool Straddles);

/// Completes a piecewise plan (concatenate, input slices) whose Main and
/// pieces (Source, Output, OutputMap, WholeRuns) are set: the store widths
/// the maps prove, the load widths (a parameter read by one piece through
/// one map, not in \p Excluded and not behind a piece whose runs straddle
/// its domain's edge), the launch (the blocks' choice says "one block per
/// N \p Unit"), the index width; P.Pieces and P.Loop are set.
void finishPiecewise(const PlanInputs &In, KernelPlan &P, PiecewisePlan PP,
                     const std::set<const HloInstruction *> &Excluded,
                     const std::string &Unit);

/// Records the width of the kernel's index arithmetic in \p P (Index32):
/// 32 bits when \p Largest (the elements of the largest array the kernel
/// addresses, or its thread count) is below 2^31 / 16 and \p MapsFit (the
/// plan's maps fit in 32-bit arithmetic, mapFitsInI32).
void chooseIndexWidth(KernelPlan &P, int64_t Largest, bool MapsFit = true);

/// Whether the kernel's IR goes through LLVM's instcombine (KernelPlan::
/// IrInstCombine, knob IDXMAP_IR_INSTCOMBINE): a scan skips it when every
/// instruction of the fusion and of the computations it calls has a 4- or
/// 8-byte type (or pred). There the emitted IR is already folded; without
/// instcombine the scans compiled in 5-25 % fewer instructions and ran as
/// fast or faster (H100, bench/RESULTS.md, thirty-second session: top-p
/// 10.19 -> 9.89 us, rows of 8 23.9 -> 23.7). Scans of 2-byte floats lost
/// up to 26 % (their compares and max through f32 extensions that
/// instcombine narrows), and so did the other emitters' kernels of 4- and
/// 8-byte types (thirty-third session: an input-slices split of f32 rows
/// of 1000 by 12 %, concatenates by 3-4 %, a transpose by 2 %): they keep
/// it. A launch of one block of at most a warp is compiled for compile
/// time: no instcombine, and its back-end level holds with libdevice too
/// (KernelPlan::LibdeviceAtPlanLevel); its time is its launch's (H100,
/// thirty-fifth session: two JAX corpus kernels of 9 and 15 threads
/// 1.50 -> 1.47 and 1.73 -> 1.70 us, 25-31 % fewer compile instructions).
void chooseInstCombine(const PlanInputs &In, KernelPlan &P);

/// KernelPlan::EvictLast of loop, transpose, reduction and row-normalization
/// plans: on for loop and transpose kernels whose fusion does not stay in
/// L2 and moves at most 1.2 x L2 (as concatenates), else off unless tuned.
void chooseEvictLast(const PlanInputs &In, KernelPlan &P);

/// Which values of \p C become functions of their index (KernelPlan's
/// Functions, at P.FunctionThreshold), with the choices' reasons when some
/// value is read more than once (SubgraphFunctions.cpp).
void planSubgraphFunctions(const HloComputation &C, KernelPlan &P);

/// One knob of a grid of plan settings and the values tried (besides
/// leaving it unset: the rules' choice).
struct Axis {
  const char *Knob;
  std::vector<int64_t> Values;
};

/// Every setting of \p Grid's knobs (each unset or one of its values) over
/// \p Overrides, those that set fewer knobs first, in odometer order (the
/// first knob fastest) among equals; the first is \p Overrides itself.
/// Example: knobs A {1, 2} and B {3} give {}, {A=1}, {A=2}, {B=3}, {A=1,
/// B=3}, {A=2, B=3}.
std::vector<Tuning> gridSettings(const std::vector<Axis> &Grid,
                                 const Tuning &Overrides);

/// `tuned(In.Overrides, Name, Default)`, recorded in \p P as a choice with
/// \p Reason, or with "tuning override" when the knob is set.
int64_t choose(const PlanInputs &In, KernelPlan &P, const char *Knob,
               const std::string &Name, int64_t Default,
               const std::string &Reason);

} // namespace plan
} // namespace idxmap

#endif
