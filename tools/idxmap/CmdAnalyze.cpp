//===- CmdAnalyze.cpp - `idxmap analyze`: fusion analysis report ----------===//
//
// Part of idxmap. Per fusion: hero, emitter kind and reason, the thread
// mapping, the maps from the output to every parameter, and the coalescing
// table.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Environment.h"
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
    "'NAME': REASON`; exit 1 only when no fusion could be analyzed.",
    runAnalyze};
static CommandRegistration RegisterAnalyze(AnalyzeCommand);

/// What analyze plans with besides the rules: the tune cache (its file and
/// entries) and the overrides of the environment and --tune.
struct CacheInUse {
  std::string File;
  TuneCache Cache;
  Tuning Overrides;
};

static void report(OutputFile &O, const std::string &Title,
                   const HloModule *Module, const HloInstruction *Fusion,
                   const FusionAnalysis &A, const DeviceModel &Device,
                   const CacheInUse &Tuned) {
  O << Title << "\n";
  for (size_t K = 0; K < A.Roots.size(); ++K)
    O << "  root " << A.Roots[K]->name() << ": hero " << A.Heroes[K]->name()
      << " (" << opcodeName(A.Heroes[K]->opcode()) << ")\n";
  O << "  emitter: " << emitterKindName(A.Kind) << "\n";
  O << "  reason: " << A.Reason << "\n";
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
    O << "  tuned: from cache " << Tuned.File << " ("
      << (Knobs.empty() ? "the rules' plan" : Knobs) << ")\n";
  }
  const FusionAnalysis PlannedA = Plan ? plannedAnalysis(A, *Plan) : A;
  if (Plan) {
    std::string Text = printKernelPlan(*Plan);
    for (size_t Pos = 0; Pos < Text.size();) {
      size_t End = Text.find('\n', Pos);
      O << "  " << Text.substr(Pos, End - Pos) << "\n";
      Pos = End == std::string::npos ? Text.size() : End + 1;
    }
  } else {
    O << "  plan: none: " << Plan.error().Message << "\n";
  }
  ThreadMapping TM = Plan && !Plan->Main.Map.isUndefined()
                         ? Plan->Main
                         : heroThreadMapping(Ctx, A, Device);
  // The loop emitter launches more blocks than grid.x allows as a
  // grid-stride loop; show what it launches. The coalescing table counts
  // the mapping's warps (one per block iteration) from TM itself.
  ThreadMapping Shown = PlannedA.Kind == EmitterKind::Loop ||
                                PlannedA.Kind == EmitterKind::Concatenate
                            ? launchedThreadMapping(TM, Device.MaxGrid[0])
                            : TM;
  O << "  threads: " << Shown.ThreadsPerBlock << " x " << Shown.Blocks
    << " blocks";
  if (Shown.Iterations > 1)
    O << " x " << Shown.Iterations
      << " iterations (a grid-stride loop: grid.x is at most "
      << Device.MaxGrid[0] << ")";
  O << ", vector " << Shown.Vector << "\n";
  O << "  thread map (to " << (Shown.Target ? Shown.Target->name() : "?")
    << "): " << printMap(Shown.Map) << "\n";
  GroupedIndexing G = computeGroupedIndexing(Ctx, *A.Computation);
  O << "  output-to-parameter maps:\n";
  for (const HloInstruction *P : A.Computation->parameters()) {
    auto It = G.find(P);
    if (It == G.end() || It->second.empty()) {
      O << "    " << P->name() << ": not read\n";
      continue;
    }
    for (const OperandMap &M : It->second)
      O << "    " << P->name() << ": "
        << (M.Map.isUndefined() ? std::string("unknown indexing")
                                : printMap(M.Map))
        << "\n";
  }
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
  O << "  subgraphs:\n";
  std::string Listing = PC.str();
  for (size_t Pos = 0; Pos < Listing.size();) {
    size_t End = Listing.find('\n', Pos);
    O << "    " << Listing.substr(Pos, End - Pos) << "\n";
    Pos = End == std::string::npos ? Listing.size() : End + 1;
  }
  O << "  coalescing:\n"
    << formatCoalescing(analyzeCoalescing(Ctx, PlannedA, TM, true, Device));
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
  std::string File = "-", Fusion, DeviceName = "H100", Tune;
  OutputOptions Out;
  TuneCacheOption TuneCacheFile;
  ArgParser P(AnalyzeCommand);
  P.positional("FILE", &File, "HLO module, or - for stdin", true);
  P.option("--fusion", "NAME", &Fusion, "only this fusion instruction");
  P.option("--device", "NAME|FILE.json", &DeviceName,
           "the GPU the kernels are planned for: a preset (A100, H100, "
           "H200) or a JSON file (default: H100, emit's for sm_90)");
  P.option("--tune", "NAME=VALUE[,...]", &Tune,
           "set tuning knobs, as emit (wins over the environment)");
  TuneCacheFile.addTo(P);
  Out.addTo(P, /*AllowFormat=*/false);
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
  std::unique_ptr<HloModule> M = readHloModule(File);
  if (!M)
    return ExitRejected;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  std::vector<const HloInstruction *> Fusions = kernelFusions(*M);
  bool Found = false;
  int Analyzed = 0;
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
      O << skippedFusionLine(F->name(), Skipped.back().Message) << "\n";
      continue;
    }
    ++Analyzed;
    report(O,
           "fusion " + F->name() + " (calls " + F->fusedComputation()->name() +
               ")",
           M.get(), F, analyzeFusion(*F), *Device, Tuned);
  }
  if (!Fusion.empty() && !Found) {
    printError(displayName(File), "no fusion named '" + Fusion + "'");
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
      printDiagnostic(M->diagnose(Root->sourceOffset(),
                                  "the ENTRY computation has no outputs"));
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
      printDiagnostic(M->diagnose(R->sourceOffset(),
                                  "output '" + R->name() + "' is the tuple " +
                                      R->shape().str() +
                                      "; analyze needs array outputs"));
      return ExitRejected;
    }
    report(O, "computation " + M->entry()->name() + " (no fusion)", M.get(),
           nullptr, A, *Device, Tuned);
  }
  return O.close() ? ExitOk : ExitRejected;
}
