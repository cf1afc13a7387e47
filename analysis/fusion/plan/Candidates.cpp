//===- Candidates.cpp - Plans for an autotuner to measure -----------------===//
//
// Part of idxmap. The rules' plan and its variants over a grid of the
// knobs of its emitter, each planned by planFusion and estimated by the
// cost model. The grid starts from the values the suite's search measured
// (bench/suite/run_suite.py, SEARCH_GRID), crossed with each other.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include <algorithm>
#include <set>

namespace idxmap {
namespace plan {

std::vector<Tuning> gridSettings(const std::vector<Axis> &Grid,
                                 const Tuning &Overrides) {
  std::vector<std::pair<int, Tuning>> Settings;
  std::vector<size_t> Digit(Grid.size(), 0); // 0: unset, else Values[D-1]
  while (true) {
    Tuning T = Overrides;
    int Set = 0;
    for (size_t K = 0; K < Grid.size(); ++K)
      if (Digit[K]) {
        T.*(findTuningKnob(Grid[K].Knob)->Field) = Grid[K].Values[Digit[K] - 1];
        ++Set;
      }
    Settings.push_back({Set, T});
    size_t K = 0;
    for (; K < Grid.size(); ++K) {
      if (++Digit[K] <= Grid[K].Values.size())
        break;
      Digit[K] = 0;
    }
    if (K == Grid.size())
      break;
  }
  std::stable_sort(
      Settings.begin(), Settings.end(),
      [](const auto &X, const auto &Y) { return X.first < Y.first; });
  std::vector<Tuning> Out;
  for (auto &S : Settings)
    Out.push_back(std::move(S.second));
  return Out;
}

} // namespace plan

namespace {

using plan::Axis;

/// The knobs an emitter's plan reads, with the values worth measuring.
/// Values equal to the rules' choice give a plan already listed and are
/// dropped as duplicates.
std::vector<Axis> searchGrid(const std::string &Emitter) {
  if (Emitter == "row reduction")
    return {{"IDXMAP_RED_ROW_LANES", {64, 128, 256, 512, 1024}},
            {"IDXMAP_RED_ROW_UNROLL", {2, 4, 8, 16}},
            {"IDXMAP_RED_MINBLOCKS", {1, 2}},
            {"IDXMAP_RED_EVICT_FIRST", {0, 1}}};
  if (Emitter == "multi-row reduction")
    return {{"IDXMAP_RED_ROW_LANES", {2, 4, 8, 16, 32}},
            {"IDXMAP_RED_ROW_K", {1, 2, 4, 8}},
            {"IDXMAP_RED_ROW_THREADS", {128, 256, 512}},
            {"IDXMAP_RED_EVICT_FIRST", {0, 1}}};
  if (Emitter == "column reduction")
    return {{"IDXMAP_RED_COL_LANES", {8, 16, 32}},
            {"IDXMAP_RED_COL_WARPS", {4, 8, 16}},
            {"IDXMAP_RED_COL_UNROLL", {2, 4, 8}},
            {"IDXMAP_RED_COL_SPLIT", {64, 128, 256, 512}},
            {"IDXMAP_RED_EVICT_FIRST", {0, 1}}};
  if (Emitter == "full reduction")
    return {{"IDXMAP_RED_FULL_THREADS", {256, 512, 1024}},
            {"IDXMAP_RED_FULL_CHUNK", {0, 65536, 131072, 262144}},
            {"IDXMAP_RED_FULL_UNROLL", {2, 4, 8}},
            {"IDXMAP_RED_EVICT_FIRST", {0, 1}}};
  if (Emitter == "row normalization")
    return {{"IDXMAP_ROWNORM_ELEMENTS", {4, 8, 16, 32}},
            {"IDXMAP_ROWNORM_THREADS", {32, 64, 128, 256}},
            {"IDXMAP_RED_EVICT_FIRST", {0, 1}}};
  if (Emitter == "loop")
    return {{"IDXMAP_LOOP_UNROLL", {1, 2, 4, 8}}};
  if (Emitter == "transpose")
    return {{"IDXMAP_TR_WARPS", {2, 4, 8, 16}},
            {"IDXMAP_TR_RVEC", {1, 2, 4}},
            {"IDXMAP_TR_WVEC", {1, 2, 4}},
            {"IDXMAP_TR_SUBP", {1, 2, 4}},
            {"IDXMAP_TR_SUBM", {1, 2}}};
  if (Emitter == "scan")
    return {{"IDXMAP_SCAN_THREADS", {128, 256, 512}},
            {"IDXMAP_SCAN_ITEMS", {16, 32, 64}}};
  return {};
}

/// What makes two plans the same kernel: the emitter, the launch and the
/// value of every choice (not the reasons, which name overrides).
std::string planSignature(const KernelPlan &P) {
  std::string S = P.Emitter;
  for (int K = 0; K < 3; ++K)
    S += " " + std::to_string(P.Grid[K]) + "/" + std::to_string(P.Block[K]);
  S += " " + std::to_string(P.SharedBytes);
  for (const PlanChoice &C : P.Choices)
    S += " " + C.Name + "=" + std::to_string(C.Value);
  return S;
}

} // namespace

Expected<std::vector<PlanCandidate>>
planCandidates(Context &Ctx, const FusionAnalysis &A, const Tuning &Overrides,
               const DeviceModel &Device, const HloInstruction *Fusion,
               size_t MaxCandidates) {
  Expected<KernelPlan> Rules = planFusion(Ctx, A, Overrides, Device, Fusion);
  if (!Rules)
    return Rules.error();
  // A knob the caller set is not varied.
  std::vector<Axis> Grid;
  for (Axis &X : searchGrid(Rules->Emitter))
    if (!isTuned(Overrides, X.Knob))
      Grid.push_back(std::move(X));
  std::vector<PlanCandidate> Out;
  std::set<std::string> Seen = {planSignature(*Rules)};
  Out.push_back({Overrides, std::move(*Rules)});
  std::vector<Tuning> Settings = plan::gridSettings(Grid, Overrides);
  for (size_t I = 1; I < Settings.size(); ++I) {
    Expected<KernelPlan> P = planFusion(Ctx, A, Settings[I], Device, Fusion);
    if (!P || !Seen.insert(planSignature(*P)).second)
      continue;
    Out.push_back({std::move(Settings[I]), std::move(*P)});
  }
  std::stable_sort(Out.begin(), Out.end(),
                   [](const PlanCandidate &X, const PlanCandidate &Y) {
                     return X.Plan.Cost.Microseconds < Y.Plan.Cost.Microseconds;
                   });
  size_t Max = std::max<size_t>(MaxCandidates, 1);
  if (Out.size() > Max) {
    // The rules' plan is the one measured against: it stays.
    std::string RulesKnobs = printTuning(Overrides);
    auto IsRules = [&](const PlanCandidate &C) {
      return printTuning(C.Knobs) == RulesKnobs;
    };
    auto It = std::find_if(Out.begin(), Out.end(), IsRules);
    if (size_t(It - Out.begin()) >= Max)
      std::rotate(Out.begin() + (Max - 1), It, It + 1);
    Out.resize(Max);
  }
  return Out;
}

} // namespace idxmap
