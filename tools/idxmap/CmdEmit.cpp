//===- CmdEmit.cpp - `idxmap emit`: HLO fusions to PTX --------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Environment.h"
#include "WholeModule.h"

#include "idxmap/Emit.h"

#include <algorithm>
#include <chrono>
#include <ctime>

using namespace idxmap;
using namespace idxmap::cli;

static int runEmit(int Argc, char **Argv);

static const Command EmitCommand = {
    "emit", "compile the fusions of an HLO module to PTX",
    "Writes one kernel per fusion into a .ptx file (or LLVM IR with\n"
    "--emit=llvm; a fusion no emitter takes is left out with a warning\n"
    "naming it and why, and the command fails only when none is left or\n"
    "the --fusion asked for cannot be emitted) and, next to a .ptx output,\n"
    "a JSON sidecar (out.json for out.ptx; --sidecar FILE names it, and\n"
    "writes one with -o - or --emit=llvm too): target, PTX version, each\n"
    "kernel's name, grid, block, shared memory and workspace bytes and\n"
    "parameters in order (role, element type, shape, layout, alignment,\n"
    "buffer), the launch order and the buffer plan (which ENTRY parameter,\n"
    "result or intermediate each buffer is). docs/SIDECAR.md describes it.\n"
    "--time prints the compile time to stderr; with --repeat N the module\n"
    "is compiled N more times in the same process and --time also prints\n"
    "the median of those (the steady state of a compiler that links the\n"
    "library: code paged in, one-time initialization done).",
    runEmit};
static CommandRegistration RegisterEmit(EmitCommand);

static int runEmit(int Argc, char **Argv) {
  std::string EmitKind = "ptx", Gpu = "sm_90", Fusion, PtxVer, Opt = "fast";
  bool Precise = false, Time = false;
  std::string Repeat = "0", Tune, MaxInstructions, Device, SidecarFile;
  OutputOptions Out;
  TuneCacheOption TuneCacheFile;
  HloInputOptions In;
  ArgParser P(EmitCommand);
  In.addTo(P);
  P.choice("--emit", {"ptx", "llvm", "host-llvm"}, &EmitKind,
           "what to write (host-llvm: the IR `idxmap run --simulate` runs, "
           "before the NVPTX back end and libdevice)");
  P.choice("--gpu", {"sm_80", "sm_90", "sm_90a"}, &Gpu, "target GPU");
  P.option("--ptx-version", "N", &PtxVer, "PTX ISA version x10 (default 85)");
  P.option("--fusion", "NAME", &Fusion, "only this fusion");
  P.flag("--precise-math", &Precise,
         "libdevice tanh/exp/log and exact f32 divide/sqrt instead of the "
         "approximate instructions");
  P.choice("--opt", {"fast", "O3"}, &Opt,
           "IR pipeline: fast (the emitters' cleanup) or LLVM's O3");
  P.flag("--time", &Time, "print the compile time to stderr");
  P.option("--repeat", "N", &Repeat,
           "compile N more times and time those too (with --time)");
  P.listOption("--tune", "NAME=VALUE[,...]", &Tune,
               "set tuning knobs (`idxmap tuning` lists them; repeatable; "
               "wins over the environment)");
  P.option("--device", "NAME|FILE.json", &Device,
           "the GPU's model whose limits kernels must fit: a preset (A100, "
           "H100, H200) or a JSON file (default: the preset of --gpu, "
           "A100 for sm_80, else H100)");
  TuneCacheFile.addTo(P);
  P.option("--sidecar", "FILE", &SidecarFile,
           "write the JSON sidecar to FILE (default: next to a .ptx output, "
           "out.json for out.ptx; none for -o - or --emit=llvm)");
  P.option("--max-fusion-instructions", "N", &MaxInstructions,
           "reject fusions of more than N instructions (default 25000; 0: "
           "no limit)");
  Out.addTo(P, /*AllowFormat=*/false);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  EmitOptions O;
  O.Target.Gpu = Gpu;
  O.Target.PreciseMath = Precise;
  // The environment first: --tune wins over it.
  tuningFromEnvironment(O.Tuning);
  std::optional<std::string> EnvError = targetOptionsFromEnvironment(O.Target);
  O.Target.OptPipeline =
      Opt == "O3" ? TargetOptions::Pipeline::O3 : TargetOptions::Pipeline::Fast;
  if (!PtxVer.empty()) {
    auto V = parseUnsigned(PtxVer, 0, MaxPtxVersion);
    if (!V)
      return P.usageError("--ptx-version needs a whole number from 0 (LLVM's "
                          "default) to " +
                          std::to_string(MaxPtxVersion) + ", got '" + PtxVer +
                          "'");
    O.Target.PtxVersion = unsigned(*V);
  }
  auto RepeatCount = parseUnsigned(Repeat, 0, 10000);
  if (!RepeatCount)
    return P.usageError("--repeat needs an integer from 0 to 10000");
  int Repeats = int(*RepeatCount);
  if (!Tune.empty())
    if (auto Err = parseTuning(Tune, O.Tuning))
      return P.usageError(*Err);
  if (!MaxInstructions.empty()) {
    auto N = parseUnsigned(MaxInstructions, 0, INT64_MAX);
    if (!N)
      return P.usageError("--max-fusion-instructions needs a whole number, "
                          "got '" +
                          MaxInstructions + "'");
    O.MaxFusionInstructions = int64_t(*N);
  }
  if (!Device.empty()) {
    auto D = readDeviceOption(Device);
    if (!D) {
      if (D.error().Loc.File.empty())
        return P.usageError(D.error().Message);
      printDiagnostic(D.error());
      return ExitRejected;
    }
    O.Device = std::move(*D);
  }
  // Option errors are usage errors (exit 2), not errors in the input.
  if (auto Err = validateTuning(O.Tuning))
    return P.usageError("--tune: " + *Err);
  if (auto Err = validateTargetOptions(O.Target))
    return P.usageError(Err->Message);
  if (In.Split && !SidecarFile.empty())
    return P.usageError("--sidecar describes one module: it cannot be used "
                        "with --split-input-file");
  if (EnvError) {
    printError(displayName(In.File), *EnvError);
    return ExitRejected;
  }
  TuneCache Cache;
  if (!TuneCacheFile.load(Cache))
    return ExitRejected;
  O.OnlyFusion = Fusion;
  O.KeepLlvmIr = EmitKind == "llvm";
  O.HostIr = EmitKind == "host-llvm";
  // A whole module: emit the fusions that can be, name the others.
  O.SkipUnsupported = true;
  OutputFile OF;
  if (!OF.open(Out))
    return ExitRejected;
  // Without splitting, the module and its result, for the sidecar.
  std::unique_ptr<HloModule> Kept;
  std::optional<EmitResult> KeptResult;
  auto EmitChunk = [&](const Chunk &C, const std::string &FileName,
                       unsigned) -> int {
    // Blank lines before the chunk keep the whole file's line numbers.
    std::string Text(C.FirstLine - 1, '\n');
    Text += C.Text;
    auto T0 = std::chrono::steady_clock::now();
    std::clock_t C0 = std::clock();
    auto M = parseHloModule(Text, FileName);
    if (!M) {
      printDiagnostic(M.error());
      return ExitRejected;
    }
    EmitOptions MO = O;
    MO.FusionTuning = cachedFusionTunings(
        Cache, **M, O.Device ? O.Device->Name : defaultDeviceModel(Gpu).Name);
    std::optional<EmitResult> R = emitWholeModule(**M, MO, FileName);
    if (!R)
      return ExitRejected;
    auto T1 = std::chrono::steady_clock::now();
    std::clock_t C1 = std::clock();
    if (Time) {
      // CPU time next to wall time: on a loaded machine the wall clock
      // measures the neighbours too.
      std::fprintf(stderr, "emit: %.2f ms in all (parse included), %.2f ms CPU",
                   std::chrono::duration<double, std::milli>(T1 - T0).count(),
                   1000.0 * double(C1 - C0) / CLOCKS_PER_SEC);
      for (auto &[Phase, Ms] : R->PhaseMs)
        std::fprintf(stderr, "; %s %.2f ms", Phase.c_str(), Ms);
      std::fprintf(stderr, "\n");
    }
    if (Repeats > 0) {
      // Parsing included, as in the first compile.
      std::vector<double> Wall, Cpu;
      for (int I = 0; I < Repeats; ++I) {
        auto T2 = std::chrono::steady_clock::now();
        std::clock_t C2 = std::clock();
        auto M2 = parseHloModule(Text, FileName);
        if (M2)
          (void)emitModule(**M2, MO);
        Wall.push_back(std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - T2)
                           .count());
        Cpu.push_back(1000.0 * double(std::clock() - C2) / CLOCKS_PER_SEC);
      }
      std::sort(Wall.begin(), Wall.end());
      std::sort(Cpu.begin(), Cpu.end());
      if (Time)
        std::fprintf(stderr,
                     "repeat: %d more compiles, median %.2f ms, %.2f ms CPU\n",
                     Repeats, Wall[Wall.size() / 2], Cpu[Cpu.size() / 2]);
    }
    OF << (EmitKind == "ptx" ? R->Ptx : R->LlvmIr);
    if (!In.Split) {
      Kept = std::move(*M);
      KeptResult = std::move(R);
      O.FusionTuning = MO.FusionTuning;
    }
    return ExitOk;
  };
  int Code = forEachChunk(In.File, In.Split, EmitChunk, &OF,
                          "expected an HLO module, found no input");
  Code = closeHloOutput(In, OF, Code);
  if (Code != ExitOk || In.Split)
    return Code;
  if (SidecarFile.empty() && EmitKind == "ptx" && Out.File != "-")
    SidecarFile = sidecarPathFor(Out.File);
  if (!SidecarFile.empty()) {
    OutputFile J;
    if (!J.open(SidecarFile))
      return ExitRejected;
    J << sidecarToJson(sidecarOf(*Kept, *KeptResult, O, In.File, SidecarFile));
    if (!J.close())
      return ExitRejected;
  }
  return ExitOk;
}
