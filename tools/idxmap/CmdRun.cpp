//===- CmdRun.cpp - `idxmap run`: check and time kernels on the GPU -------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Environment.h"
#include "WholeModule.h"

#include "idxmap/DeviceModel.h"
#include "idxmap/Emit.h"
#include "idxmap/HostSimulator.h"
#include "idxmap/Runner.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

using namespace idxmap;
using namespace idxmap::cli;

static int runRun(int Argc, char **Argv);

static const Command RunCommand = {
    "run", "run kernels on the GPU, check them against the interpreter",
    "Runs `FILE.hlo` (emitted first) or `FILE.ptx` (with FILE.json from\n"
    "`idxmap emit`; the HLO module comes from the sidecar or --hlo) through\n"
    "the CUDA driver (libcuda.so.1, loaded at run time): random inputs\n"
    "(--seed) or --input NAME=FILE (raw row-major bytes), outputs poisoned\n"
    "with 0xff, every output element compared with the reference\n"
    "interpreter (exact for integers, per-type tolerance for floats). With\n"
    "--bench the kernel is timed (warm-up, --reps repetitions >= 20,\n"
    "median; inputs that fit in L2 are rotated through copies) by --timer:\n"
    "`cupti` takes each launch's device duration from CUPTI's kernel\n"
    "records (as torch.profiler does; libcupti is loaded at run time from\n"
    "$IDXMAP_CUPTI, the loader's path, the CUDA toolkit or Python wheels),\n"
    "`events` brackets each launch with CUDA events (adds ~3 us of launch\n"
    "and event overhead to small kernels), `auto` (the default) is cupti\n"
    "when it loads and works, else events, with a note. The output says\n"
    "which (`timer: ...`); with --timer=cupti a CUPTI failure is an error\n"
    "that lists where libcupti was looked for.\n\n"
    "--output-dir DIR also runs the module's kernels once over the\n"
    "sidecar's buffer plan, in launch order, as a runtime (and\n"
    "examples/loader) does: each buffer no kernel writes (ENTRY\n"
    "parameters, results of ops outside the kernels) filled from --input\n"
    "NAME=FILE or randomly (--seed), intermediates passed from kernel to\n"
    "kernel, and writes every buffer to DIR/NAME.bin as raw little-endian\n"
    "row-major bytes: the inputs it used and what the kernels wrote (ENTRY\n"
    "results and intermediates). NAME is the sidecar buffer's name\n"
    "(KERNEL.PARAM for a kernel parameter outside the plan); DIR is\n"
    "created. Written buffers are not checked there (the per-kernel runs\n"
    "check). With --split-input-file, each `// -----` chunk of FILE is its\n"
    "own module: emitted and run on its own, its report after a `// -----`\n"
    "line, its files in DIR/chunkN/ (N from 0). Exit codes: 0 all outputs\n"
    "match, 1 a mismatch, a rejected input or (--timer=cupti) no CUPTI,\n"
    "2 usage, 3 no CUDA driver or GPU; with --split-input-file the worst\n"
    "(highest) code of the modules.\n\n"
    "--simulate runs the kernels on this CPU instead (no GPU or driver\n"
    "needed; HLO input only): each module is emitted as LLVM IR, compiled\n"
    "for the host, and every thread of each launch is run (blocks in\n"
    "order, or --resident N at once taking turns; a block's threads\n"
    "meeting at barriers and warp shuffles), each buffer between guard\n"
    "pages. It checks what the kernels compute, not how fast (no --bench)\n"
    "or whether they race in global memory.",
    runRun};
static CommandRegistration RegisterRun(RunCommand);

static int runRun(int Argc, char **Argv) {
  std::string File, Gpu = "sm_90", HloFile, SeedText = "1", RepsText = "50",
                    Inputs, Fusion, TolText, Timer = "auto", Tune, SidecarFile,
                    ResidentText = "1";
  std::string OutputDir;
  bool Bench = false, Precise = false, NoCheck = false, NoRotate = false,
       Strict = false, Split = false, Simulate = false;
  TuneCacheOption TuneCacheFile;
  ArgParser P(RunCommand);
  P.positional("FILE", &File, "an HLO module or a .ptx file");
  P.flag("--split-input-file", &Split,
         "treat '// -----' lines as separators between HLO modules");
  addVerifyFlag(P);
  P.option("--output-dir", "DIR", &OutputDir,
           "also run the module's buffer plan once and write every buffer "
           "(inputs used, outputs written) to DIR/NAME.bin, raw row-major "
           "bytes");
  P.option("--hlo", "FILE", &HloFile,
           "the HLO module of a .ptx file (default: the sidecar's \"hlo\", "
           "relative to the sidecar's directory)");
  P.option("--sidecar", "FILE", &SidecarFile,
           "the sidecar of a .ptx file (default: out.json for out.ptx)");
  P.option("--seed", "N", &SeedText, "seed of the random inputs");
  P.option("--input", "NAME=FILE[,NAME=FILE]", &Inputs,
           "read inputs from raw row-major files: NAME a fusion parameter "
           "(the per-kernel runs) or a sidecar buffer (--output-dir's run)");
  P.option("--fusion", "NAME", &Fusion, "only this fusion (HLO input)");
  P.listOption("--tune", "NAME=VALUE[,...]", &Tune,
               "emitter tuning knobs, as `idxmap emit --tune` (HLO input)");
  TuneCacheFile.addTo(P);
  P.option("--tolerance", "ABS,REL", &TolText, "float tolerance override");
  P.choice("--gpu", {"sm_80", "sm_90", "sm_90a"}, &Gpu, "target GPU");
  P.flag("--precise-math", &Precise, "libdevice math (HLO input)");
  P.flag("--bench", &Bench, "time the kernels (see --timer)");
  P.flag("--simulate", &Simulate,
         "run on this CPU (the host simulator) instead of a GPU");
  P.option("--resident", "N", &ResidentText,
           "with --simulate: N blocks in flight at once, taking turns in an "
           "order drawn from --seed, so that a block meets others half done "
           "(default 1: one after another)");
  P.choice("--timer", {"auto", "cupti", "events"}, &Timer,
           "with --bench: CUPTI kernel records, CUDA events, or CUPTI when "
           "it loads");
  P.option("--reps", "N", &RepsText, "timed repetitions (>= 20)");
  P.flag("--no-check", &NoCheck, "skip the comparison with the interpreter");
  P.flag("--strict", &Strict,
         "no extra slack where the reference itself is sensitive to "
         "rounding (see the output's \"rounding sensitivity\" count)");
  P.flag("--no-rotate", &NoRotate,
         "time on one copy of the inputs even when they fit in L2 (for "
         "workloads that are small by nature)");
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  if (Simulate && Bench)
    return P.usageError("--simulate checks kernels; it cannot time them "
                        "(--bench)");
  // The environment first: --tune wins over it.
  Tuning Tuning;
  tuningFromEnvironment(Tuning);
  if (!Tune.empty())
    if (auto Err = parseTuning(Tune, Tuning))
      return P.usageError(*Err);
  RunOptions RO;
  auto Seed = parseUnsigned(SeedText, 0, UINT64_MAX);
  if (!Seed)
    return P.usageError("--seed needs an integer from 0 to " +
                        std::to_string(UINT64_MAX));
  auto Reps = parseUnsigned(RepsText, 20, 1000000);
  if (!Reps)
    return P.usageError("--reps needs an integer from 20 to 1000000");
  RO.Seed = *Seed;
  RO.Reps = unsigned(*Reps);
  const unsigned MaxResident = HostSimulatorOptions::MaxResidentBlocks;
  auto Resident = parseUnsigned(ResidentText, 1, MaxResident);
  if (!Resident)
    return P.usageError("--resident needs an integer from 1 to " +
                        std::to_string(MaxResident));
  if (*Resident > 1 && !Simulate)
    return P.usageError("--resident is for --simulate");
  HostSimulatorOptions SimOptions;
  SimOptions.ResidentBlocks = unsigned(*Resident);
  SimOptions.Seed = *Seed;
  try {
    if (!TolText.empty()) {
      size_t Comma = TolText.find(',');
      Tolerance T;
      T.Abs = std::stod(TolText.substr(0, Comma));
      T.Rel =
          Comma == std::string::npos ? 0 : std::stod(TolText.substr(Comma + 1));
      RO.Tol = T;
    }
  } catch (...) {
    return P.usageError("--tolerance needs numbers");
  }
  for (size_t Pos = 0; !Inputs.empty() && Pos < Inputs.size();) {
    size_t End = Inputs.find(',', Pos);
    std::string Item = Inputs.substr(Pos, End - Pos);
    size_t Eq = Item.find('=');
    if (Eq == std::string::npos)
      return P.usageError("--input needs NAME=FILE");
    RO.InputFiles.push_back({Item.substr(0, Eq), Item.substr(Eq + 1)});
    Pos = End == std::string::npos ? Inputs.size() : End + 1;
  }
  RO.Bench = Bench;
  RO.RotateInputs = !NoRotate;
  RO.TolFor = kernelTolerances(Precise);
  RO.Check = !NoCheck;
  RO.RoundingSlack = !Strict;

  bool IsPtx = File.size() > 4 && File.compare(File.size() - 4, 4, ".ptx") == 0;
  if (Simulate && IsPtx)
    return P.usageError("--simulate runs the kernels' LLVM IR: give the HLO "
                        "module, not a .ptx file");
  if (Split && IsPtx)
    return P.usageError("--split-input-file splits HLO modules; a .ptx file "
                        "is one module");
  PlanRunOptions PlanOpts;
  PlanOpts.Seed = RO.Seed;
  PlanOpts.Lo = RO.Lo;
  PlanOpts.Hi = RO.Hi;
  PlanOpts.InputFiles = RO.InputFiles;

  std::string Ptx;
  Sidecar S;
  if (IsPtx) {
    if (auto Err = readInput(File, Ptx)) {
      printError(File, *Err);
      return ExitRejected;
    }
    std::string Json;
    std::string JsonPath =
        SidecarFile.empty() ? sidecarPathFor(File) : SidecarFile;
    if (auto Err = readInput(JsonPath, Json)) {
      printError(JsonPath, *Err);
      return ExitRejected;
    }
    auto Read = sidecarFromJson(Json, JsonPath);
    if (!Read) {
      printDiagnostic(Read.error());
      return ExitRejected;
    }
    S = std::move(*Read);
    // A sidecar written by hand or by another tool: launches the device
    // model of --gpu cannot take are refused before the driver sees them.
    DeviceModel D = defaultDeviceModel(Gpu);
    for (const KernelInfo &KI : S.Kernels)
      if (auto Why = checkLaunch(D, {KI.Grid[0], KI.Grid[1], KI.Grid[2]},
                                 {KI.Block[0], KI.Block[1], KI.Block[2]},
                                 KI.SharedBytes + KI.DynamicSharedBytes)) {
        printError(JsonPath, "kernel '" + KI.Name + "': " + *Why);
        return ExitRejected;
      }
    if (HloFile.empty())
      HloFile = resolveSidecarHlo(S.Hlo, JsonPath);
    if (HloFile.empty()) {
      printError(JsonPath, "no HLO module recorded: pass --hlo FILE");
      return ExitRejected;
    }
  } else {
    HloFile = File;
  }

  // The driver (and CUPTI, attached before the driver creates the context)
  // are opened for the first module that parses: a module that does not
  // parse is reported first, and without a driver exit 3 follows.
  std::optional<runtime::DriverResult<runtime::CuptiTimer *>> Cupti;
  std::unique_ptr<runtime::CudaDriver> Drv;
  std::optional<int> DriverCode;
  auto OpenDriver = [&]() -> int {
    if (DriverCode)
      return *DriverCode;
    DriverCode = ExitOk;
    if (Bench && Timer != "events")
      Cupti.emplace(runtime::CuptiTimer::load(cuptiOptionsFromEnvironment()));
    auto Opened =
        Simulate ? openHostSimulator(SimOptions)
                 : runtime::CudaDriver::open(driverOptionsFromEnvironment());
    if (!Opened) {
      std::fprintf(stderr, "idxmap run: %s\n", Opened.error().Message.c_str());
      DriverCode = Opened.error().isUnavailable() ? int(ExitNoDevice)
                                                  : int(ExitRejected);
      return *DriverCode;
    }
    Drv = std::move(*Opened);
    const runtime::DeviceInfo &D = Drv->device();
    std::printf("device: %s (%s), %d SMs, driver CUDA %s\n", D.Name.c_str(),
                D.smName().c_str(), D.SmCount,
                runtime::formatDriverVersion(D.DriverVersion).c_str());
    if (Cupti && *Cupti) {
      RO.Cupti = **Cupti;
      RO.RequireCupti = Timer == "cupti";
      std::printf("timer: cupti (%s, CUPTI API version %u)\n",
                  RO.Cupti->libraryPath().c_str(), RO.Cupti->apiVersion());
    } else if (Cupti) {
      const std::string &Why = Cupti->error().Message;
      if (Timer == "cupti") {
        std::fprintf(stderr, "idxmap run: --timer=cupti: %s\n", Why.c_str());
        DriverCode = ExitRejected;
        return *DriverCode;
      }
      size_t Eol = Why.find('\n');
      std::printf("timer: events (%s%s)\n", Why.substr(0, Eol).c_str(),
                  Eol == std::string::npos
                      ? ""
                      : "; --timer=cupti lists the places tried");
    } else if (Bench) {
      std::printf("timer: events\n");
    }
    return ExitOk;
  };

  // Emits (HLO input), runs and checks one module; with --output-dir runs
  // its buffer plan into \p Dir.
  auto RunModule = [&](const HloModule &M, const std::string &Dir) -> int {
    if (int Code = OpenDriver())
      return Code;
    // HLO input is emitted for the GPU the driver opened: its model (SMs,
    // limits, L2, bandwidth) from the driver's attributes.
    if (!IsPtx) {
      EmitOptions O;
      O.Device = runtime::deviceModelFromDriver(Drv->device());
      O.Target.Gpu = Gpu;
      O.Target.PreciseMath = Precise;
      if (auto Err = targetOptionsFromEnvironment(O.Target)) {
        printError(displayName(HloFile), *Err);
        return ExitRejected;
      }
      O.OnlyFusion = Fusion;
      O.Tuning = Tuning;
      TuneCache Cache;
      if (!TuneCacheFile.load(Cache))
        return ExitRejected;
      O.FusionTuning = cachedFusionTunings(Cache, M, O.Device->Name);
      // A whole module: run the fusions that can be emitted, name the
      // others (as `emit` does).
      O.SkipUnsupported = true;
      O.HostIr = Simulate;
      std::optional<EmitResult> R = emitWholeModule(M, O, displayName(HloFile));
      if (!R)
        return ExitRejected;
      S = sidecarOf(M, *R, O);
      Ptx = std::move(Simulate ? R->LlvmIr : R->Ptx);
    }
    // In the sidecar's launch order (producers first); kernels it does not
    // list (called from a loop body) after those, in the file's order.
    std::vector<KernelInfo> Kernels = S.Kernels;
    auto Rank = [&](const KernelInfo &K) {
      return size_t(
          std::find(S.LaunchOrder.begin(), S.LaunchOrder.end(), K.Name) -
          S.LaunchOrder.begin());
    };
    std::stable_sort(Kernels.begin(), Kernels.end(),
                     [&](const KernelInfo &A, const KernelInfo &B) {
                       return Rank(A) < Rank(B);
                     });
    auto Results = runKernels(*Drv, M, Ptx, Kernels, RO, std::cout);
    if (!Results) {
      std::fprintf(stderr, "idxmap run: %s\n", Results.error().Message.c_str());
      return Results.error().isUnavailable() ? ExitNoDevice : ExitRejected;
    }
    bool AllOk = true;
    for (const KernelRunResult &R : *Results) {
      std::printf("kernel %s:\n", R.Name.c_str());
      for (const std::string &L : R.OutputReports)
        std::printf("  %s\n", L.c_str());
      if (Bench)
        std::printf("  time: median %.2f us (mean %.2f, min %.2f, max %.2f, %u "
                    "reps, %u input copies), %.1f MB moved, %.1f GB/s\n",
                    R.MedianUs, R.MeanUs, R.MinUs, R.MaxUs, RO.Reps, R.Copies,
                    R.Bytes / 1e6, R.GBps);
      if (Bench)
        std::printf("  timer: %s\n", R.Timer.c_str());
      AllOk &= R.Ok;
    }
    if (!Dir.empty()) {
      auto Buffers = runBufferPlan(*Drv, Ptx, S, PlanOpts);
      if (!Buffers) {
        std::fprintf(stderr, "idxmap run: buffer plan: %s\n",
                     Buffers.error().Message.c_str());
        return Buffers.error().isUnavailable() ? ExitNoDevice : ExitRejected;
      }
      std::error_code EC;
      std::filesystem::create_directories(Dir, EC);
      if (EC) {
        printError("idxmap", "cannot create '" + Dir + "': " + EC.message());
        return ExitRejected;
      }
      unsigned Written = 0;
      for (const PlanBufferBytes &B : *Buffers) {
        OutputFile F;
        if (!F.open(Dir + "/" + B.Name + ".bin"))
          return ExitRejected;
        F.os().write(reinterpret_cast<const char *>(B.RowMajor.data()),
                     std::streamsize(B.RowMajor.size()));
        if (!F.close())
          return ExitRejected;
        Written += B.Written;
      }
      std::printf("buffer plan: %zu buffers in %s (%u written by the "
                  "kernels)\n",
                  Buffers->size(), Dir.c_str(), Written);
    }
    return AllOk ? ExitOk : ExitRejected;
  };

  if (!Split) {
    std::string HloText;
    if (auto Err = readInput(HloFile, HloText)) {
      printError(HloFile, *Err);
      return ExitRejected;
    }
    auto M = parseHloModule(HloText, displayName(HloFile));
    if (!M) {
      printDiagnostic(M.error());
      return ExitRejected;
    }
    int Code = RunModule(**M, OutputDir);
    if (RO.Cupti)
      RO.Cupti->stop();
    return Code;
  }
  HloInputOptions In;
  In.File = File;
  In.Split = true;
  // The reports go to stdout (printf and std::cout share it); a `// -----`
  // line before each module's but the first, also after one that failed.
  OutputFile StdOut;
  StdOut.open("-");
  int Code = forEachHloModule(
      In,
      [&](HloModule &M, const Chunk &C) -> int {
        // Without a driver the other modules are still parsed (their
        // errors reported), not run.
        if (DriverCode && *DriverCode != ExitOk)
          return *DriverCode;
        return RunModule(M, OutputDir.empty() ? ""
                                              : OutputDir + "/chunk" +
                                                    std::to_string(C.Index));
      },
      &StdOut);
  // CUPTI's records stay enabled until every module was timed.
  if (RO.Cupti)
    RO.Cupti->stop();
  return StdOut.close() ? Code : int(ExitRejected);
}
