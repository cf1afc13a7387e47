//===- CmdAnalyze.cpp - `idxmap analyze`: fusion analysis report ----------===//
//
// Part of idxmap. Per fusion: hero, emitter kind and reason, the thread
// mapping, the maps from the output to every parameter, and the coalescing
// table.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Environment.h"
#include "JsonOutput.h"
#include "WholeModule.h"

#include "idxmap/Coalescing.h"
#include "idxmap/DeviceModel.h"
#include "idxmap/Emit.h"
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/KernelInfo.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Parse.h"
#include "idxmap/Partition.h"
#include "idxmap/Print.h"

#include <optional>
#include <sstream>

using namespace idxmap;
using namespace idxmap::cli;

static int runAnalyze(int Argc, char **Argv);

static const Command AnalyzeCommand = {
    "analyze", "hero, emitter, indexing and coalescing of each fusion",
    "For each fusion of an HLO module (or the one named by --fusion; the\n"
    "ENTRY computation when the module has no fusion): the hero of each\n"
    "root, the emitter kind with the reason, the emitter's thread mapping,\n"
    "the maps from the output to every fused parameter, and a coalescing\n"
    "table: memory sectors (32 B) and lines (128 B) one warp touches per\n"
    "access against the minimum, and the widest proven vector width.\n"
    "A fusion holding an instruction no emitter computes (dot, custom-call,\n"
    "collectives, a c64 or token value, ...) is listed as `skipped fusion\n"
    "'NAME': REASON`; exit 1 only when no fusion could be analyzed.\n"
    "--format=json prints the same facts as one document (see\n"
    "docs/cli-json.schema.json).",
    runAnalyze};
static CommandRegistration RegisterAnalyze(AnalyzeCommand);

/// What analyze plans with besides the rules: the tune cache (its file and
/// entries) and the overrides of the environment and --tune.
struct CacheInUse {
  std::string File;
  TuneCache Cache;
  Tuning Overrides;
};

/// The coalescing rows as JSON, one object per access (formatCoalescing's
/// columns).
static Json jsonCoalescing(const std::vector<AccessReport> &Rows) {
  Json J = Json::array();
  for (const AccessReport &R : Rows)
    J.push_back(Json{{"name", R.Name},
                     {"output", R.IsOutput},
                     {"element_bytes", R.ElementBytes},
                     {"vector_width", R.VectorWidth},
                     {"vector_reason", R.VectorReason},
                     {"sectors", R.Sectors},
                     {"min_sectors", R.MinSectors},
                     {"lines", R.Lines},
                     {"min_lines", R.MinLines},
                     {"coalesced", R.Coalesced},
                     {"uniform", R.Uniform},
                     {"coverage", R.Coverage},
                     {"undefined", R.Undefined}});
  return J;
}

static Json jsonPlan(const KernelPlan &Plan) {
  Json Choices = Json::array();
  for (const PlanChoice &C : Plan.Choices)
    Choices.push_back(
        Json{{"name", C.Name}, {"value", C.Value}, {"reason", C.Reason}});
  const CostEstimate &E = Plan.Cost;
  return Json{{"emitter", Plan.Emitter},
              {"grid", {Plan.Grid[0], Plan.Grid[1], Plan.Grid[2]}},
              {"block", {Plan.Block[0], Plan.Block[1], Plan.Block[2]}},
              {"shared_bytes", Plan.SharedBytes},
              {"choices", std::move(Choices)},
              {"estimate",
               {{"microseconds", E.Microseconds},
                {"memory_microseconds", E.MemoryMicroseconds},
                {"launch_microseconds", E.LaunchMicroseconds},
                {"bytes", E.Bytes},
                {"l2_resident", E.L2Resident},
                {"summary", E.Summary}}},
              {"text", printKernelPlan(Plan)}};
}

/// Reports one fusion (\p Fusion null: the ENTRY computation) as text on
/// \p O, or, when \p J is given, as the fusion's object in \p J and nothing
/// on \p O.
static void report(OutputFile &O, Json *J, const std::string &Title,
                   const HloModule *Module, const HloInstruction *Fusion,
                   const FusionAnalysis &A, const DeviceModel &Device,
                   const CacheInUse &Tuned) {
  // With JSON the text goes to a stream nobody reads: the two outputs stay
  // one code path, so they cannot disagree.
  std::ostringstream Discard;
  std::ostream &T = J ? Discard : O.os();
  T << Title << "\n";
  if (J) {
    (*J)["fusion"] = Fusion ? Json(Fusion->name()) : Json(nullptr);
    (*J)["computation"] = A.Computation->name();
    Json Roots = Json::array();
    for (size_t K = 0; K < A.Roots.size(); ++K)
      Roots.push_back(Json{{"root", A.Roots[K]->name()},
                           {"hero", A.Heroes[K]->name()},
                           {"opcode", opcodeName(A.Heroes[K]->opcode())}});
    (*J)["roots"] = std::move(Roots);
    (*J)["emitter"] = emitterKindName(A.Kind);
    (*J)["reason"] = A.Reason;
  }
  for (size_t K = 0; K < A.Roots.size(); ++K)
    T << "  root " << A.Roots[K]->name() << ": hero " << A.Heroes[K]->name()
      << " (" << opcodeName(A.Heroes[K]->opcode()) << ")\n";
  T << "  emitter: " << emitterKindName(A.Kind) << "\n";
  T << "  reason: " << A.Reason << "\n";
  // The kernel's plan, as emit would make it (no IR is built).
  Context Ctx;
  Tuning Overrides = Tuned.Overrides;
  // As emit: a cached fusion's knobs under the environment's and --tune's.
  const TuneCacheEntry *Cached =
      Fusion ? Tuned.Cache.find(fusionFingerprint(*Fusion->fusedComputation()),
                                Device.Name)
             : nullptr;
  if (Cached)
    Overrides = overlayTuning(Cached->Knobs, Overrides);
  Expected<KernelPlan> Plan = planFusion(Ctx, A, Overrides, Device, Fusion);
  if (Cached) {
    std::string Knobs = printTuning(Cached->Knobs);
    T << "  tuned: from cache " << Tuned.File << " ("
      << (Knobs.empty() ? "the rules' plan" : Knobs) << ")\n";
    if (J)
      (*J)["tuned"] = Json{{"cache", Tuned.File}, {"knobs", Knobs}};
  }
  if (J) {
    (*J)["plan"] = Plan ? jsonPlan(*Plan) : Json(nullptr);
    if (!Plan)
      (*J)["plan_error"] = Plan.error().Message;
  }
  const FusionAnalysis PlannedA = Plan ? plannedAnalysis(A, *Plan) : A;
  if (Plan) {
    std::string Text = printKernelPlan(*Plan);
    for (size_t Pos = 0; Pos < Text.size();) {
      size_t End = Text.find('\n', Pos);
      T << "  " << Text.substr(Pos, End - Pos) << "\n";
      Pos = End == std::string::npos ? Text.size() : End + 1;
    }
  } else {
    T << "  plan: none: " << Plan.error().Message << "\n";
  }
  ThreadMapping TM = Plan && !Plan->Main.Map.isUndefined()
                         ? Plan->Main
                         : heroThreadMapping(Ctx, A, Device);
  // The loop emitter launches more blocks than grid.x allows as a
  // grid-stride loop; show what it launches. The coalescing table counts
  // the mapping's warps (one per block iteration) from TM itself.
  ThreadMapping Shown = PlannedA.Kind == EmitterKind::Loop ||
                                PlannedA.Kind == EmitterKind::Concatenate ||
                                PlannedA.Kind ==
                                    EmitterKind::InPlaceDynamicUpdateSlice ||
                                PlannedA.Kind == EmitterKind::InputSlices
                            ? launchedThreadMapping(TM, Device.MaxGrid[0])
                            : TM;
  T << "  threads: " << Shown.ThreadsPerBlock << " x " << Shown.Blocks
    << " blocks";
  if (Shown.Iterations > 1)
    T << " x " << Shown.Iterations
      << " iterations (a grid-stride loop: grid.x is at most "
      << Device.MaxGrid[0] << ")";
  T << ", vector " << Shown.Vector << "\n";
  T << "  thread map (to " << (Shown.Target ? Shown.Target->name() : "?")
    << "): " << printMap(Shown.Map) << "\n";
  if (J)
    (*J)["threads"] =
        Json{{"threads_per_block", Shown.ThreadsPerBlock},
             {"blocks", Shown.Blocks},
             {"iterations", Shown.Iterations},
             {"max_grid_x", Device.MaxGrid[0]},
             {"vector", Shown.Vector},
             {"target", Shown.Target ? Json(Shown.Target->name()) : Json()},
             {"map", printMap(Shown.Map)}};
  Json Params = Json::array();
  GroupedIndexing G = computeGroupedIndexing(Ctx, *A.Computation);
  T << "  output-to-parameter maps:\n";
  for (const HloInstruction *P : A.Computation->parameters()) {
    auto It = G.find(P);
    // "maps": [] is a parameter not read; null a map of unknown indexing.
    Json Maps = Json::array();
    if (It == G.end() || It->second.empty())
      T << "    " << P->name() << ": not read\n";
    else
      for (const OperandMap &M : It->second) {
        T << "    " << P->name() << ": "
          << (M.Map.isUndefined() ? std::string("unknown indexing")
                                  : printMap(M.Map))
          << "\n";
        Maps.push_back(M.Map.isUndefined() ? Json() : Json(printMap(M.Map)));
      }
    Params.push_back(Json{{"parameter", P->name()}, {"maps", std::move(Maps)}});
  }
  if (J)
    (*J)["output_to_parameter"] = std::move(Params);
  // Subgraphs: heroes (and, for reductions and transposes, their operands,
  // which the emitter reads with its own indexing) root their own.
  PartitionOptions PO;
  for (const HloInstruction *H : A.Heroes)
    if (H->opcode() == HloOpcode::Reduce ||
        H->opcode() == HloOpcode::Transpose) {
      PO.ForcedRoots.push_back(H);
      for (const HloInstruction *Op : H->operands())
        if (Op->opcode() != HloOpcode::Parameter)
          PO.ForcedRoots.push_back(Op);
    }
  PartitionedComputation PC = partitionComputation(Ctx, *A.Computation, PO);
  if (J)
    (*J)["partition"] = jsonPartition(PC);
  T << "  subgraphs:\n";
  std::string Listing = PC.str();
  for (size_t Pos = 0; Pos < Listing.size();) {
    size_t End = Listing.find('\n', Pos);
    T << "    " << Listing.substr(Pos, End - Pos) << "\n";
    Pos = End == std::string::npos ? Listing.size() : End + 1;
  }
  std::vector<AccessReport> Rows =
      analyzeCoalescing(Ctx, PlannedA, TM, true, Device);
  T << "  coalescing:\n" << formatCoalescing(Rows);
  if (J)
    (*J)["coalescing"] = jsonCoalescing(Rows);
}

/// The first output of \p A that the thread mappings and the coalescing
/// table cannot model: a tuple-valued root other than a variadic reduce
/// (a nested tuple, a call's tuple). The verifier keeps these out of
/// fusions; an ENTRY computation may have them.
static const HloInstruction *unsupportedRoot(const FusionAnalysis &A) {
  for (const HloInstruction *R : A.Roots)
    if (R->shape().isTuple() && R->opcode() != HloOpcode::Reduce)
      return R;
  return nullptr;
}

static int runAnalyze(int Argc, char **Argv) {
  std::string Fusion, DeviceName = "H100", Tune;
  OutputOptions Out;
  TuneCacheOption TuneCacheFile;
  HloInputOptions In;
  ArgParser P(AnalyzeCommand);
  In.addTo(P);
  P.option("--fusion", "NAME", &Fusion, "only this fusion instruction");
  P.option("--device", "NAME|FILE.json", &DeviceName,
           "the GPU the kernels are planned for: a preset (A100, H100, "
           "H200) or a JSON file (default: H100, emit's for sm_90)");
  P.listOption("--tune", "NAME=VALUE[,...]", &Tune,
               "set tuning knobs, as emit (wins over the environment)");
  TuneCacheFile.addTo(P);
  Out.addTo(P, /*AllowFormat=*/false);
  FormatOption Format;
  Format.addTo(P);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  CacheInUse Tuned;
  tuningFromEnvironment(Tuned.Overrides);
  if (!Tune.empty())
    if (auto Err = parseTuning(Tune, Tuned.Overrides))
      return P.usageError(*Err);
  if (auto Err = validateTuning(Tuned.Overrides))
    return P.usageError("--tune: " + *Err);
  if (!TuneCacheFile.load(Tuned.Cache))
    return ExitRejected;
  Tuned.File = TuneCacheFile.File;
  auto Device = readDeviceOption(DeviceName);
  if (!Device) {
    if (Device.error().Loc.File.empty())
      return P.usageError(Device.error().Message);
    printDiagnostic(Device.error());
    return ExitRejected;
  }
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  JsonDocuments Docs("analyze", In.Split);
  int Code = forEachHloModule(
      In,
      [&](HloModule &ChunkModule, const Chunk &C) -> int {
        HloModule *M = &ChunkModule;
        std::vector<const HloInstruction *> Fusions = kernelFusions(*M);
        bool Found = false;
        int Analyzed = 0;
        Json Doc = jsonDocument("analyze");
        Doc["device"] = Device->Name;
        Json Reports = Json::array(), SkippedJson = Json::array();
        // The next fusion's object, or null for text.
        auto NextReport = [&]() -> Json * {
          if (!Format.json())
            return nullptr;
          Reports.push_back(Json::object());
          return &Reports.back();
        };
        std::vector<Diagnostic> Skipped;
        for (const HloInstruction *F : Fusions) {
          if (!Fusion.empty() && F->name() != Fusion)
            continue;
          Found = true;
          // A whole optimized module holds fusions no emitter computes (a
          // Triton gemm's dot, complex values): named, not analyzed.
          if (auto U = findUnmodeledInstruction(*F->fusedComputation())) {
            Skipped.push_back(
                M->diagnose(U->Instruction->sourceOffset(),
                            "fusion '" + F->name() + "': " + U->Reason));
            if (Format.json())
              SkippedJson.push_back(Json{{"fusion", F->name()},
                                         {"reason", Skipped.back().Message}});
            else
              O << skippedFusionLine(F->name(), Skipped.back().Message) << "\n";
            continue;
          }
          ++Analyzed;
          report(O, NextReport(),
                 "fusion " + F->name() + " (calls " +
                     F->fusedComputation()->name() + ")",
                 M, F, analyzeFusion(*F), *Device, Tuned);
        }
        if (!Fusion.empty() && !Found) {
          printError(displayName(In.File), "no fusion named '" + Fusion + "'");
          return ExitRejected;
        }
        if (Found && Analyzed == 0) {
          // Nothing analyzed: each fusion's reason is an error.
          for (const Diagnostic &D : Skipped)
            printDiagnostic(D);
          return ExitRejected;
        }
        if (Fusions.empty()) {
          const HloComputation &Entry = *M->entry();
          const HloInstruction *Root = Entry.root();
          if (Root->opcode() == HloOpcode::Tuple && Root->operandCount() == 0) {
            printDiagnostic(M->diagnose(
                Root->sourceOffset(), "the ENTRY computation has no outputs"));
            return ExitRejected;
          }
          // A module before fusion (dots, loops, custom-calls) is not a kernel.
          if (auto U = findUnmodeledInstruction(Entry)) {
            printDiagnostic(M->diagnose(
                U->Instruction->sourceOffset(),
                "the module has no fusion and its ENTRY computation is not one "
                "kernel: " +
                    U->Reason));
            return ExitRejected;
          }
          FusionAnalysis A = analyzeComputation(Entry);
          if (const HloInstruction *R = unsupportedRoot(A)) {
            printDiagnostic(M->diagnose(
                R->sourceOffset(), "output '" + R->name() + "' is the tuple " +
                                       R->shape().str() +
                                       "; analyze needs array outputs"));
            return ExitRejected;
          }
          report(O, NextReport(),
                 "computation " + M->entry()->name() + " (no fusion)", M,
                 nullptr, A, *Device, Tuned);
        }
        if (Format.json()) {
          Doc["fusions"] = std::move(Reports);
          Doc["skipped"] = std::move(SkippedJson);
          Docs.add(C, std::move(Doc));
        }
        return ExitOk;
      },
      Format.json() ? nullptr : &O);
  Docs.print(O);
  return closeHloOutput(In, O, Code);
}
