//===- PlanFusion.cpp - The emitter and its plan for a fusion -------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/CostModel.h"
#include "idxmap/Print.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace idxmap {
namespace plan {

int64_t choose(const PlanInputs &In, KernelPlan &P, const char *Knob,
               const std::string &Name, int64_t Default,
               const std::string &Reason) {
  int64_t V = tuned(In.Overrides, Knob, Default);
  P.choose(Name, V,
           isTuned(In.Overrides, Knob) ? std::string("tuning override ") + Knob
                                       : Reason);
  return V;
}

void chooseIndexWidth(KernelPlan &P, int64_t Largest, bool MapsFit) {
  // Byte offsets of 16-byte vectors of the largest array stay below 2^31.
  const int64_t Limit = (int64_t(1) << 31) / 16;
  P.Index32 = Largest < Limit && MapsFit;
  P.choose("index_bits", P.Index32 ? 32 : 64,
           Largest >= Limit
               ? std::to_string(Largest) + " elements: offsets need 64 bits"
           : !MapsFit
               ? "a subexpression of the maps passes 32 bits"
               : "every offset fits: at most " + std::to_string(Largest) +
                     " elements (32-bit below 2^27)");
}

/// The first instruction of \p C or of a computation it calls whose type
/// is neither a 4- nor an 8-byte one (nor pred), or null.
static const HloInstruction *
firstNarrowInstruction(const HloComputation &C,
                       std::set<const HloComputation *> &Seen) {
  if (!Seen.insert(&C).second)
    return nullptr;
  for (const HloInstruction *I : C.instructions()) {
    if (!I->shape().isTuple()) {
      const PrimitiveType T = I->shape().Type;
      const int64_t Bytes = byteWidth(T);
      if (T != PrimitiveType::Pred && Bytes != 4 && Bytes != 8)
        return I;
    }
    for (const HloComputation *Called : I->calledComputations())
      if (const HloInstruction *N = firstNarrowInstruction(*Called, Seen))
        return N;
  }
  return nullptr;
}

/// A launch of one block of at most a warp's threads.
static bool oneWarp(const PlanInputs &In, const KernelPlan &P) {
  return P.Grid[0] * P.Grid[1] * P.Grid[2] == 1 &&
         P.Block[0] * P.Block[1] * P.Block[2] <= In.Device.WarpSize;
}

void chooseInstCombine(const PlanInputs &In, KernelPlan &P) {
  if (oneWarp(In, P)) {
    P.IrInstCombine =
        choose(In, P, "IDXMAP_IR_INSTCOMBINE", "ir_instcombine", 0,
               "one block of at most a warp: the kernel's time is its "
               "launch's, so it is compiled for compile time") != 0;
    P.LibdeviceAtPlanLevel = true;
    return;
  }
  // A transpose block of 8 tiles (2-byte tiles: 2 along M, 4 along P) has
  // 64 guarded loads and stores per thread; instcombine took its compile
  // from 72 M to 106 M instructions (bf16[97,130,1031] {2,0,1}; about 7.5
  // M a millisecond on the CI VM: over issue 16's 10 ms). Its cost, on the
  // H100 (idxmap run --bench, two rounds, without against with): 24.1
  // against 24.0 us, bf16[48,1001,513] {0,2,1} 44.1 against 41.1 (7 %
  // slower), f16[3000,8191] 39.3 against 39.5.
  if (P.Transpose && P.Transpose->Tiling.subTiles() >= 8) {
    P.IrInstCombine =
        choose(In, P, "IDXMAP_IR_INSTCOMBINE", "ir_instcombine", 0,
               "a transpose of 8 tiles per block: compiled without "
               "instcombine, a third of its compile") != 0;
    return;
  }
  std::set<const HloComputation *> Seen;
  const HloInstruction *Narrow =
      firstNarrowInstruction(*In.A.Computation, Seen);
  const bool Scan = P.Kind == EmitterKind::Scan;
  std::string Why =
      Narrow ? "'" + Narrow->name() + "' is neither a 4- nor an 8-byte type"
      : Scan ? "every type is a 4- or 8-byte one: the emitted IR needs no "
               "instcombine"
             : "every type is a 4- or 8-byte one, but only scans ran as fast "
               "without instcombine (other kernels up to 12 % slower)";
  P.IrInstCombine = choose(In, P, "IDXMAP_IR_INSTCOMBINE", "ir_instcombine",
                           Scan && !Narrow ? 0 : 1, Why) != 0;
}

void chooseEvictLast(const PlanInputs &In, KernelPlan &P) {
  switch (P.Kind) {
  case EmitterKind::Loop:
  case EmitterKind::Transpose:
  case EmitterKind::RowReduction:
  case EmitterKind::MultiRowReduction:
  case EmitterKind::FullReduction:
  case EmitterKind::ColumnReduction:
    break;
  default:
    return;
  }
  // Loop and transpose kernels load with an L2 evict_last policy where the
  // fusion does not stay in L2 and moves at most 1.2 x L2, as the
  // concatenates do (ConcatenatePlan.cpp). Measured (CUPTI, evict_last /
  // plain): on the H200 14 loops and transposes of 15-69 MiB (idxmap run
  // --bench, three interleaved rounds) 0.976-1.000 (a pad 9.70 -> 9.47 us,
  // a tanh f32[2048,2048] 9.41 -> 9.22), never slower; on the H100 beside
  // the peers the suite's NHWC pad (25 MiB) 3 % and its NCHW -> NHWC
  // transpose 3-6 % faster, the loops of 96 MiB and more 1.5-2.5 % slower.
  // The reductions were slower with it on all 15 measured (5-15 %), so
  // they and the row normalizations take it only when tuned.
  // (A transpose or reduction planned as a loop has the loop's kind.)
  const bool LoopOrTranspose =
      P.Kind == EmitterKind::Loop || P.Kind == EmitterKind::Transpose;
  if (!LoopOrTranspose) {
    if (isTuned(In.Overrides, "IDXMAP_EVICT_LAST"))
      P.EvictLast =
          choose(In, P, "IDXMAP_EVICT_LAST", "evict_last", 0, "") != 0;
    return;
  }
  const bool InL2 = staysInL2(In.A, In.Device);
  const bool Fits = evictLastFits(In.A, In.Device);
  P.EvictLast =
      choose(In, P, "IDXMAP_EVICT_LAST", "evict_last", Fits ? 1 : 0,
             InL2 ? "the data stays in L2: plain loads"
             : !Fits
                 ? "more than 1.2 x L2 moved: plain loads (evict_last "
                   "measured up to 2.5 % slower there)"
                 : "loads with an L2 evict_last policy (level to 3 % "
                   "faster where at most 1.2 x L2 is moved, measured)") != 0;
}

} // namespace plan

/// `fusion 'NAME': WHY` at \p Fusion (else at the computation).
static Diagnostic planFailure(const FusionAnalysis &A,
                              const HloInstruction *Fusion,
                              const std::string &Why) {
  std::string Name = Fusion ? Fusion->name() : A.Computation->name();
  std::string Message = "fusion '" + Name + "': " + Why;
  const HloModule *M = A.Computation->parent();
  if (!M)
    return Diagnostic{{"", 0, 0}, std::move(Message), ""};
  return M->diagnose(Fusion ? Fusion->sourceOffset()
                            : A.Computation->sourceOffset(),
                     std::move(Message));
}

/// The rules' plan of \p A under \p Overrides, with its estimate.
static Expected<KernelPlan> planByRules(Context &Ctx, const FusionAnalysis &A,
                                        const Tuning &Overrides,
                                        const DeviceModel &Device,
                                        const HloInstruction *Fusion) {
  plan::PlanInputs In{Ctx, A, Overrides, Device};
  KernelPlan P;
  P.Kind = A.Kind;
  std::optional<std::string> Why;
  switch (A.Kind) {
  case EmitterKind::Loop:
    P.Emitter = "loop";
    Why = plan::planLoop(In, P);
    break;
  case EmitterKind::Concatenate:
    P.Emitter = "concatenate";
    Why = plan::planConcatenate(In, P);
    break;
  case EmitterKind::InputSlices:
    P.Emitter = "input slices";
    Why = plan::planInputSlices(In, P);
    break;
  case EmitterKind::Scatter:
    P.Emitter = "scatter";
    Why = plan::planScatter(In, P);
    break;
  case EmitterKind::Scan:
    P.Emitter = "scan";
    Why = plan::planScan(In, P);
    break;
  case EmitterKind::Transpose:
    P.Emitter = "transpose";
    Why = plan::planTranspose(In, P);
    break;
  case EmitterKind::InPlaceDynamicUpdateSlice:
    P.Emitter = "in-place dynamic-update-slice";
    Why = plan::planInPlaceDynamicUpdateSlice(In, P);
    break;
  case EmitterKind::RowReduction:
  case EmitterKind::MultiRowReduction:
  case EmitterKind::FullReduction:
  case EmitterKind::ColumnReduction:
    if (isRowNormalization(A)) {
      P.Emitter = "row normalization";
      Why = plan::planRowNormalization(In, P);
    } else {
      P.Emitter = "reduction"; // the refusal's name
      Why = plan::planReduction(In, P);
      if (!Why)
        P.Emitter = std::string(emitterKindName(A.Kind));
    }
    if (Why) {
      KernelPlan L;
      if (auto Still = plan::planLoopInstead(
              In, L,
              ", each reduce inline: " + P.Emitter + " emitter: " + *Why))
        *Why += *Still;
      else {
        P = std::move(L);
        Why.reset();
      }
    }
    break;
  }
  if (Why)
    return planFailure(A, Fusion, P.Emitter + " emitter: " + *Why);
  plan::chooseInstCombine(In, P);
  plan::chooseEvictLast(In, P);
  plan::planSubgraphFunctions(*A.Computation, P);
  if (auto Over = checkLaunch(Device, P.Grid, P.Block, P.SharedBytes))
    return planFailure(A, Fusion,
                       "the kernel's launch does not fit the device: " + *Over);
  P.Cost = estimateCost(Ctx, plannedAnalysis(A, P), P, Device);
  return P;
}

namespace {

/// A knob whose value the cost model chooses: its plan choice's name and
/// the values compared.
struct ModelAxis {
  const char *Knob;
  const char *Choice;
  std::vector<int64_t> Values;
};

/// The knobs the cost model chooses per emitter, where its ranking was
/// checked against measurements (bench/RESULTS.md, eleventh session: on the
/// suite's column reductions the lowest estimate among these was the
/// fastest measured plan or within 2 % of it, 8 lanes for bn stats
/// f32[100352,64] 8.82 us against 11.71 with the rules' 16, 16 warps for a
/// column max s32[1000,4099] 5.47 against 7.14; the model's ranking of row
/// reductions' lanes and of transposes' tilings is not good enough yet).
std::vector<ModelAxis> modelAxes(const std::string &Emitter) {
  if (Emitter == "column reduction")
    return {{"IDXMAP_RED_COL_LANES", "col_lanes", {8, 16, 32}},
            {"IDXMAP_RED_COL_WARPS", "warps", {8, 16}}};
  return {};
}

/// How much lower than the rules' plan's an estimate must be to replace
/// it: a near tie keeps the rules' choices, which were measured.
constexpr double ModelMargin = 0.97;

/// Whether the model may pick \p P. Not a column reduction whose warps read
/// each row in pieces of less than 64 bytes: the model charges the sectors
/// of an array read whole once, but pieces that small straddle sectors that
/// other tiles read again (column max s32[1000,4099] with 8 lanes of one
/// element: estimated 5.10 us, measured 6.88 against 5.59 with 16).
bool modelMayChoose(const KernelPlan &P) {
  if (!P.Reduction || P.Reduction->Mode != ReductionMode::Column ||
      !P.Main.Target || !P.Main.Target->shape().isArray())
    return true;
  return P.Reduction->ColLanes * P.Reduction->Vector *
             byteWidth(P.Main.Target->shape().Type) >=
         64;
}

} // namespace

Expected<KernelPlan> planFusion(Context &Ctx, const FusionAnalysis &A,
                                const Tuning &Overrides,
                                const DeviceModel &Device,
                                const HloInstruction *Fusion) {
  // The planners, the coalescing analysis and the cost model compose the
  // same maps several times for every candidate: composed once.
  GroupedIndexingMemo Memo(Ctx);
  Expected<KernelPlan> Rules = planByRules(Ctx, A, Overrides, Device, Fusion);
  if (!Rules)
    return Rules;
  // Every setting of the model's knobs the caller left unset: the lowest
  // estimate wins by the margin.
  std::vector<ModelAxis> Axes;
  for (ModelAxis &X : modelAxes(Rules->Emitter))
    if (!isTuned(Overrides, X.Knob))
      Axes.push_back(std::move(X));
  if (Axes.empty())
    return Rules;
  std::vector<plan::Axis> Grid;
  for (const ModelAxis &X : Axes)
    Grid.push_back({X.Knob, X.Values});
  std::optional<KernelPlan> Best;
  for (const Tuning &T : plan::gridSettings(Grid, Overrides)) {
    // Only the settings of every knob: one left unset is the rules' value,
    // which a value of the grid already gives.
    if (!std::all_of(Axes.begin(), Axes.end(), [&](const ModelAxis &X) {
          return isTuned(T, X.Knob);
        }))
      continue;
    Expected<KernelPlan> P = planByRules(Ctx, A, T, Device, Fusion);
    if (P && P->Cost.Microseconds > 0 && modelMayChoose(*P) &&
        (!Best || P->Cost.Microseconds < Best->Cost.Microseconds))
      Best = std::move(*P);
  }
  if (!Best || Rules->Cost.Microseconds <= 0 ||
      Best->Cost.Microseconds >= ModelMargin * Rules->Cost.Microseconds)
    return Rules;
  // The model's choices say so, with both estimates.
  std::ostringstream Why;
  Why.precision(3);
  Why << "the cost model's pick: " << Best->Cost.Microseconds
      << " us against " << Rules->Cost.Microseconds << " for the rules' plan";
  for (const ModelAxis &X : Axes)
    for (PlanChoice &C : Best->Choices)
      if (C.Name == X.Choice)
        for (const PlanChoice &R : Rules->Choices)
          if (R.Name == X.Choice)
            C.Reason = R.Value == C.Value
                           ? R.Reason
                           : Why.str() + " (" + std::to_string(R.Value) +
                                 ": " + R.Reason + ")";
  return std::move(*Best);
}

std::string printKernelPlan(const KernelPlan &P) {
  std::ostringstream OS;
  OS << "plan: " << P.Emitter << ", grid [" << P.Grid[0] << ", " << P.Grid[1]
     << ", " << P.Grid[2] << "], block [" << P.Block[0] << ", " << P.Block[1]
     << ", " << P.Block[2] << "]";
  if (P.SharedBytes)
    OS << ", " << P.SharedBytes << " shared bytes";
  OS << "\n";
  size_t Width = 0;
  for (const PlanChoice &C : P.Choices)
    Width = std::max(Width, C.Name.size() + 3 + std::to_string(C.Value).size());
  for (const PlanChoice &C : P.Choices) {
    std::string NV = C.Name + " = " + std::to_string(C.Value);
    OS << "  " << NV << std::string(Width - NV.size() + 2, ' ') << C.Reason
       << "\n";
  }
  if (P.Cost.Microseconds > 0)
    OS << "  estimate: " << P.Cost.Microseconds << " us (" << P.Cost.Summary
       << ")\n";
  return OS.str();
}

} // namespace idxmap
