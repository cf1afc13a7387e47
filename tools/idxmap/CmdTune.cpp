//===- CmdTune.cpp - `idxmap tune`: measure candidate plans, cache the best
//===//
//
// Part of idxmap. Per fusion: the candidate plans (planCandidates), each
// emitted, checked against the interpreter and timed as `idxmap run` does;
// the fastest one's knobs go into the tune cache, which emit, run and
// analyze read with --tune-cache (TuneCacheOption, below).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Environment.h"
#include "WholeModule.h"

#include "idxmap/Emit.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Runner.h"
#include "idxmap/TuneCache.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>

using namespace idxmap;
using namespace idxmap::cli;

//===----------------------------------------------------------------------===//
// --tune-cache of emit, run and analyze
//===----------------------------------------------------------------------===//

void TuneCacheOption::addTo(ArgParser &P) {
  P.option("--tune-cache", "FILE", &File,
           "plan each fusion that this cache (written by `idxmap tune`) "
           "holds for the device with its knobs, under --tune (default: "
           "$IDXMAP_TUNE_CACHE)");
}

/// Reads the cache at \p Path into \p Cache; a missing file is an empty
/// cache when \p MayBeMissing. Prints the error and returns false.
static bool readTuneCache(const std::string &Path, bool MayBeMissing,
                          TuneCache &Cache) {
  std::error_code Ignored;
  if (MayBeMissing && !std::filesystem::exists(Path, Ignored))
    return true;
  std::string Text;
  if (auto Err = readInput(Path, Text)) {
    printError(Path, *Err);
    return false;
  }
  Expected<TuneCache> C = TuneCache::fromJson(Text, Path);
  if (!C) {
    printDiagnostic(C.error());
    return false;
  }
  Cache = std::move(*C);
  return true;
}

bool TuneCacheOption::load(TuneCache &Cache) {
  bool FromEnvironment = File.empty();
  if (FromEnvironment)
    File = tuneCachePathFromEnvironment();
  if (File.empty())
    return true;
  return readTuneCache(File, FromEnvironment, Cache);
}

//===----------------------------------------------------------------------===//
// idxmap tune
//===----------------------------------------------------------------------===//

static int runTune(int Argc, char **Argv);

static const Command TuneCommand = {
    "tune", "time candidate kernel plans on the GPU, cache the fastest",
    "For each fusion of an HLO module (or --fusion NAME): the kernel plans\n"
    "of planCandidates (the rules' plan and variants of its emitter's\n"
    "knobs), the --top K with the lowest estimates, each emitted, checked\n"
    "against the interpreter and timed through the CUDA driver as `idxmap\n"
    "run --bench` does (a candidate that fails the check is reported and\n"
    "left out). The fastest candidate's knobs are written to the tune cache\n"
    "(--cache, else $IDXMAP_TUNE_CACHE), keyed by the fusion's fingerprint\n"
    "and the device, replacing an entry of the same key; `idxmap emit|run|\n"
    "analyze --tune-cache FILE` then plan with them. Prints a table per\n"
    "fusion: knobs, estimate, measured time, the one chosen. --dry-run\n"
    "prints the candidates and estimates without a GPU. Exit codes: 0 done,\n"
    "1 a rejected input or no candidate passing, 3 no CUDA driver or GPU\n"
    "(after printing the candidates), 2 usage.",
    runTune};
static CommandRegistration RegisterTune(TuneCommand);

namespace {

/// What every candidate is measured with.
struct TuneSetup {
  const HloModule *Module = nullptr;
  DeviceModel Device;
  std::string DeviceKey;
  Tuning Overrides;
  TargetOptions Target;
  size_t Top = 8;
  RunOptions Run;
  runtime::CudaDriver *Driver = nullptr;
};

/// One candidate's measurement: the median kernel time, or why it has none.
struct Measured {
  bool Ok = false;
  double Microseconds = 0;
  std::string Why;
};

/// \p C's knobs for the table: those it sets beyond the caller's overrides,
/// or "rules" for the rules' plan.
std::string knobsText(const PlanCandidate &C, const Tuning &Overrides) {
  std::string All = printTuning(C.Knobs);
  if (All == printTuning(Overrides))
    return "rules";
  Tuning Own;
  for (const TuningKnobInfo &K : tuningTable())
    if (!(Overrides.*(K.Field)) && (C.Knobs.*(K.Field)))
      Own.*(K.Field) = C.Knobs.*(K.Field);
  return printTuning(Own);
}

/// Emits fusion \p F with \p C's knobs and runs it against the interpreter
/// with timing.
Measured measure(const TuneSetup &S, const HloInstruction &F,
                 const PlanCandidate &C) {
  EmitOptions O;
  O.Target = S.Target;
  O.Device = S.Device;
  O.OnlyFusion = F.name();
  O.Tuning = C.Knobs;
  Expected<EmitResult> R = emitModule(*S.Module, O);
  if (!R)
    return {false, 0, "emit failed: " + R.error().Message};
  std::ostringstream Log;
  auto Runs = runKernels(*S.Driver, *S.Module, R->Ptx, R->Kernels, S.Run, Log);
  if (!Runs)
    return {false, 0, "run failed: " + Runs.error().Message};
  if (Runs->size() != 1)
    return {false, 0, "run failed: no kernel"};
  const KernelRunResult &K = Runs->front();
  if (!K.Ok) {
    std::string Why;
    for (const std::string &L : K.OutputReports)
      if (L.find("MISMATCH") != std::string::npos)
        Why = L;
    return {false, 0, "check failed: " + Why};
  }
  return {true, K.MedianUs, ""};
}

/// Today as YYYY-MM-DD (UTC).
std::string today() {
  std::time_t Now = std::time(nullptr);
  std::tm Utc{};
  gmtime_r(&Now, &Utc);
  char Buf[16];
  std::strftime(Buf, sizeof(Buf), "%Y-%m-%d", &Utc);
  return Buf;
}

/// What became of one fusion.
enum class Outcome { Planned, Tuned, NotPlanned, NonePassed };

/// Plans, prints and (with a driver) measures fusion \p F; the winner goes
/// into \p Cache.
Outcome tuneFusion(const TuneSetup &S, const HloInstruction &F,
                   TuneCache &Cache) {
  Context Ctx;
  FusionAnalysis A = analyzeFusion(F);
  auto Candidates = planCandidates(Ctx, A, S.Overrides, S.Device, &F, S.Top);
  if (!Candidates) {
    std::fflush(stdout);
    printSkippedFusion(F.name(), Candidates.error());
    return Outcome::NotPlanned;
  }
  std::string Fingerprint = fusionFingerprint(*F.fusedComputation());
  std::printf("fusion %s (%s, fingerprint %s): %zu candidates\n",
              F.name().c_str(), Candidates->front().Plan.Emitter.c_str(),
              Fingerprint.c_str(), Candidates->size());
  std::printf("  %3s  %11s  %11s  %s\n", "#", "estimate", "measured", "knobs");
  std::optional<size_t> Best, Rules;
  std::vector<Measured> Times(Candidates->size());
  for (size_t I = 0; I < Candidates->size(); ++I) {
    const PlanCandidate &C = (*Candidates)[I];
    std::string Knobs = knobsText(C, S.Overrides);
    if (Knobs == "rules")
      Rules = I;
    if (S.Driver)
      Times[I] = measure(S, F, C);
    char Est[32], Got[32] = "-";
    std::snprintf(Est, sizeof(Est), "%.2f us", C.Plan.Cost.Microseconds);
    if (Times[I].Ok)
      std::snprintf(Got, sizeof(Got), "%.2f us", Times[I].Microseconds);
    else if (S.Driver)
      std::snprintf(Got, sizeof(Got), "failed");
    std::printf("  %3zu  %11s  %11s  %s\n", I + 1, Est, Got, Knobs.c_str());
    if (!Times[I].Why.empty())
      std::printf("       %s\n", Times[I].Why.c_str());
    if (Times[I].Ok &&
        (!Best || Times[I].Microseconds < Times[*Best].Microseconds))
      Best = I;
  }
  if (!S.Driver)
    return Outcome::Planned;
  if (!Best) {
    std::printf("  chosen: none (no candidate passed the check)\n");
    return Outcome::NonePassed;
  }
  const PlanCandidate &Win = (*Candidates)[*Best];
  std::printf("  chosen: %zu (%s), %.2f us", *Best + 1,
              knobsText(Win, S.Overrides).c_str(), Times[*Best].Microseconds);
  if (Rules && Times[*Rules].Ok && Times[*Rules].Microseconds > 0)
    std::printf(
        ", %.1f %% below the rules' plan",
        100.0 * (1.0 - Times[*Best].Microseconds / Times[*Rules].Microseconds));
  std::printf("\n");
  TuneCacheEntry E;
  E.Fingerprint = Fingerprint;
  E.Device = S.DeviceKey;
  E.Knobs = Win.Knobs;
  E.Microseconds = Times[*Best].Microseconds;
  E.Date = today();
  E.Fusion = F.name();
  Cache.insert(std::move(E));
  return Outcome::Tuned;
}

/// The fusions to tune: every kernel fusion (or the one named), those no
/// emitter computes named and left out.
std::vector<const HloInstruction *> fusionsToTune(const HloModule &M,
                                                  const std::string &Only) {
  std::vector<const HloInstruction *> Out;
  for (const HloInstruction *F : kernelFusions(M)) {
    if (!Only.empty() && F->name() != Only)
      continue;
    if (auto U = findUnmodeledInstruction(*F->fusedComputation())) {
      printSkippedFusion(
          F->name(), M.diagnose(U->Instruction->sourceOffset(),
                                "fusion '" + F->name() + "': " + U->Reason));
      continue;
    }
    Out.push_back(F);
  }
  return Out;
}

} // namespace

static int runTune(int Argc, char **Argv) {
  std::string CachePath, DeviceName, TopText = "8", ItersText = "50",
                                     Gpu = "sm_90", Fusion, Tune,
                                     SeedText = "1";
  bool DryRun = false, Precise = false;
  HloInputOptions In;
  ArgParser P(TuneCommand);
  In.addTo(P);
  P.option("--top", "K", &TopText,
           "candidates measured per fusion, lowest estimates first (1 to "
           "64, default 8; the rules' plan is always among them)");
  P.option("--cache", "FILE", &CachePath,
           "the tune cache to update (default: $IDXMAP_TUNE_CACHE; neither: "
           "nothing is written)");
  P.option("--device", "NAME|FILE.json", &DeviceName,
           "the GPU model planned for and recorded in the cache: a preset "
           "(A100, H100, H200) or a JSON file (default: the driver's; with "
           "--dry-run, the preset of --gpu)");
  P.option("--iterations", "N", &ItersText,
           "timed launches per candidate (20 to 100000, default 50)");
  P.option("--fusion", "NAME", &Fusion, "only this fusion");
  P.listOption("--tune", "NAME=VALUE[,...]", &Tune,
               "knobs every candidate keeps (never varied), as `idxmap emit "
               "--tune`");
  P.option("--seed", "N", &SeedText, "seed of the random inputs");
  P.choice("--gpu", {"sm_80", "sm_90", "sm_90a"}, &Gpu, "target GPU");
  P.flag("--precise-math", &Precise, "libdevice math");
  P.flag("--dry-run", &DryRun,
         "print the candidates and their estimates; no GPU, no cache write");
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  TuneSetup S;
  auto Top = parseUnsigned(TopText, 1, 64);
  if (!Top)
    return P.usageError("--top needs an integer from 1 to 64");
  S.Top = size_t(*Top);
  auto Iters = parseUnsigned(ItersText, 20, 100000);
  if (!Iters)
    return P.usageError("--iterations needs an integer from 20 to 100000");
  auto Seed = parseUnsigned(SeedText, 0, UINT64_MAX);
  if (!Seed)
    return P.usageError("--seed needs an integer from 0 to " +
                        std::to_string(UINT64_MAX));
  // The environment first: --tune wins over it.
  tuningFromEnvironment(S.Overrides);
  if (!Tune.empty())
    if (auto Err = parseTuning(Tune, S.Overrides))
      return P.usageError(*Err);
  std::optional<DeviceModel> Chosen;
  if (!DeviceName.empty()) {
    auto D = readDeviceOption(DeviceName);
    if (!D) {
      if (D.error().Loc.File.empty())
        return P.usageError(D.error().Message);
      printDiagnostic(D.error());
      return ExitRejected;
    }
    Chosen = std::move(*D);
  }
  S.Target.Gpu = Gpu;
  S.Target.PreciseMath = Precise;
  if (auto Err = targetOptionsFromEnvironment(S.Target)) {
    printError(displayName(In.File), *Err);
    return ExitRejected;
  }
  // Each module (one, or one per chunk with --split-input-file) and the
  // fusions it has to tune; a module that fails to parse or has none is an
  // error, the others are still tuned.
  std::vector<std::unique_ptr<HloModule>> Modules;
  std::vector<std::vector<const HloInstruction *>> ModuleFusions;
  int InputCode = forEachChunk(
      In.File, In.Split,
      [&](const Chunk &C, const std::string &FileName, unsigned) -> int {
        // Blank lines before the chunk keep the whole file's line numbers.
        std::string Text(C.FirstLine - 1, '\n');
        Text += C.Text;
        auto M = parseHloModule(Text, FileName);
        if (!M) {
          printDiagnostic(M.error());
          return ExitRejected;
        }
        std::vector<const HloInstruction *> Fusions =
            fusionsToTune(**M, Fusion);
        if (Fusions.empty()) {
          printError(FileName,
                     Fusion.empty()
                         ? "the module has no fusion to tune"
                         : "no fusion named '" + Fusion + "' to tune");
          return ExitRejected;
        }
        Modules.push_back(std::move(*M));
        ModuleFusions.push_back(std::move(Fusions));
        return ExitOk;
      },
      nullptr, "expected an HLO module, found no input");
  if (Modules.empty())
    return ExitRejected;
  if (CachePath.empty())
    CachePath = tuneCachePathFromEnvironment();
  TuneCache Cache;
  if (!DryRun && !CachePath.empty() &&
      !readTuneCache(CachePath, /*MayBeMissing=*/true, Cache))
    return ExitRejected;

  // CUPTI attaches before the driver creates its context (as in `run`).
  std::optional<runtime::DriverResult<runtime::CuptiTimer *>> Cupti;
  std::optional<runtime::DriverResult<std::unique_ptr<runtime::CudaDriver>>>
      Drv;
  if (!DryRun) {
    Cupti.emplace(runtime::CuptiTimer::load(cuptiOptionsFromEnvironment()));
    Drv.emplace(runtime::CudaDriver::open(driverOptionsFromEnvironment()));
  }
  bool HaveDriver = Drv && *Drv;
  if (HaveDriver) {
    const runtime::DeviceInfo &D = (**Drv)->device();
    std::printf("device: %s (%s), %d SMs\n", D.Name.c_str(), D.smName().c_str(),
                D.SmCount);
    S.Driver = Drv->operator*().get();
    if (!Chosen)
      Chosen = runtime::deviceModelFromDriver(D);
    if (Cupti && *Cupti)
      S.Run.Cupti = **Cupti;
    std::printf("timer: %s\n", S.Run.Cupti ? "cupti" : "events");
  }
  S.Device = Chosen ? *Chosen : defaultDeviceModel(Gpu);
  S.DeviceKey = tuneDeviceKey(S.Device.Name);
  std::printf("planned for: %s (cache key %s)\n", S.Device.Name.c_str(),
              S.DeviceKey.c_str());
  S.Run.Seed = *Seed;
  S.Run.Reps = unsigned(*Iters);
  S.Run.Bench = true;
  S.Run.Check = true;
  S.Run.TolFor = kernelTolerances(Precise);

  // A fusion no plan fits is a warning, as in emit; one whose candidates
  // all fail, an error.
  bool AnyPlanned = false, AllPassed = true;
  for (size_t I = 0; I < Modules.size(); ++I) {
    S.Module = Modules[I].get();
    for (const HloInstruction *F : ModuleFusions[I]) {
      Outcome R = tuneFusion(S, *F, Cache);
      AnyPlanned |= R != Outcome::NotPlanned;
      AllPassed &= R != Outcome::NonePassed;
    }
  }
  if (S.Run.Cupti)
    S.Run.Cupti->stop();
  if (!AnyPlanned)
    return ExitRejected;
  if (DryRun)
    return InputCode;
  if (!HaveDriver) {
    // After the tables, in order when both streams go to one place.
    std::fflush(stdout);
    std::fprintf(stderr, "idxmap tune: cannot time the candidates: %s\n",
                 Drv->error().Message.c_str());
    return Drv->error().isUnavailable() ? ExitNoDevice : ExitRejected;
  }
  if (CachePath.empty()) {
    std::printf("no tune cache named (--cache or IDXMAP_TUNE_CACHE): "
                "nothing recorded\n");
  } else {
    OutputFile O;
    if (!O.open(CachePath))
      return ExitRejected;
    O << Cache.toJson();
    if (!O.close())
      return ExitRejected;
    std::printf("recorded in %s\n", CachePath.c_str());
  }
  return AllPassed ? InputCode : int(ExitRejected);
}
