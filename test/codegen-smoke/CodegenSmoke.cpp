//===- test/codegen-smoke/CodegenSmoke.cpp - idxmap-codegen-smoke ---------===//
//
// Part of idxmap. A hidden test driver for the NVPTX foundations (not the
// user-facing `idxmap` CLI):
//
//   idxmap-codegen-smoke list
//   idxmap-codegen-smoke emit KERNEL [--emit=llvm|llvm-opt|ptx] [--gpu=sm_90]
//                        [--ptx-version=85] [--no-opt]
//   idxmap-codegen-smoke ptxas [--ptxas=PATH]
//   idxmap-codegen-smoke run [--bench] [--gpu=sm_XX]
//
// `emit` prints one smoke kernel (SmokeKernels.h) as built LLVM IR, as the IR
// the back end saw, or as PTX. `ptxas` assembles every kernel for sm_80,
// sm_90 and sm_90a with ptxas (exit 77 when ptxas is absent). `run` loads the
// kernels through the CUDA driver, launches them and checks every output
// element (exit 77 when there is no driver or GPU); `--bench` also times the
// 16-byte copy kernel. Exit codes: 0 pass, 1 failure, 2 usage, 77 skipped.
//
//===----------------------------------------------------------------------===//

#include "SmokeKernels.h"

#include "idxmap/Codegen.h"
#include "idxmap/Runtime.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

using namespace idxmap;
using namespace idxmap::codegen;

namespace {

constexpr int ExitOk = 0, ExitFail = 1, ExitUsage = 2, ExitSkip = 77;

int usage(const char *Why = nullptr) {
  if (Why)
    std::cerr << "idxmap-codegen-smoke: " << Why << "\n";
  std::cerr << "usage: idxmap-codegen-smoke list\n"
               "       idxmap-codegen-smoke emit KERNEL [--emit=llvm|llvm-opt|"
               "ptx] [--gpu=sm_90] [--ptx-version=85] [--no-opt]\n"
               "       idxmap-codegen-smoke ptxas [--ptxas=PATH]\n"
               "       idxmap-codegen-smoke run [--bench] [--gpu=sm_XX]\n";
  return ExitUsage;
}

bool startsWith(const std::string &S, const char *Prefix) {
  return S.rfind(Prefix, 0) == 0;
}

/// Builds kernel \p Name and returns its PTX (and, in \p IrOut when given,
/// the IR the back end saw).
Expected<std::string> emitKernel(const std::string &Name,
                                 const TargetOptions &Opts,
                                 std::string *IrOut = nullptr) {
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, Name);
  if (!M) {
    Diagnostic Unknown;
    Unknown.Message = "unknown kernel '" + Name + "'";
    return Unknown;
  }
  auto Ptx = emitPtx(*M, Opts);
  if (Ptx && IrOut) {
    llvm::raw_string_ostream OS(*IrOut);
    M->print(OS, nullptr);
  }
  return Ptx;
}

//===----------------------------------------------------------------------===//
// emit
//===----------------------------------------------------------------------===//

int runEmit(const std::vector<std::string> &Args) {
  std::string Kernel, What = "ptx";
  TargetOptions Opts;
  for (const std::string &A : Args) {
    if (startsWith(A, "--emit="))
      What = A.substr(7);
    else if (startsWith(A, "--gpu="))
      Opts.Gpu = A.substr(6);
    else if (startsWith(A, "--ptx-version="))
      Opts.PtxVersion = unsigned(std::strtoul(A.c_str() + 14, nullptr, 10));
    else if (A == "--no-opt")
      Opts.Optimize = false;
    else if (!startsWith(A, "-") && Kernel.empty())
      Kernel = A;
    else
      return usage(("unexpected argument '" + A + "'").c_str());
  }
  if (Kernel.empty())
    return usage("emit needs a kernel name (see `list`)");
  if (What != "llvm" && What != "llvm-opt" && What != "ptx")
    return usage("--emit takes llvm, llvm-opt or ptx");
  if (auto Err = validateTargetOptions(Opts)) {
    std::cerr << "idxmap-codegen-smoke: " << Err->Message << "\n";
    return ExitUsage;
  }

  if (What == "llvm") {
    llvm::LLVMContext Ctx;
    auto M = buildSmokeKernel(Ctx, Kernel);
    if (!M)
      return usage(("unknown kernel '" + Kernel + "'").c_str());
    auto TM = createNvptxTargetMachine(Opts);
    if (!TM) {
      std::cerr << TM.error().Message << "\n";
      return ExitFail;
    }
    configureModuleForTarget(*M, **TM);
    M->print(llvm::outs(), nullptr);
    return ExitOk;
  }
  std::string Ir;
  auto Ptx = emitKernel(Kernel, Opts, &Ir);
  if (!Ptx) {
    std::cerr << "idxmap-codegen-smoke: " << Ptx.error().Message << "\n";
    return ExitFail;
  }
  std::cout << (What == "ptx" ? *Ptx : Ir);
  return ExitOk;
}

//===----------------------------------------------------------------------===//
// ptxas
//===----------------------------------------------------------------------===//

/// Runs `ptxas -arch=Gpu -v File -o /dev/null`; returns its exit status and
/// output.
int runPtxas(const std::string &Ptxas, const std::string &Gpu,
             const std::string &File, std::string &Output) {
  std::string Cmd =
      "'" + Ptxas + "' -arch=" + Gpu + " -v '" + File + "' -o /dev/null 2>&1";
  FILE *P = popen(Cmd.c_str(), "r");
  if (!P)
    return -1;
  char Buf[4096];
  size_t N;
  while ((N = fread(Buf, 1, sizeof(Buf), P)) > 0)
    Output.append(Buf, N);
  int Status = pclose(P);
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
}

int runPtxasCheck(const std::vector<std::string> &Args) {
  std::string Ptxas;
  for (const std::string &A : Args) {
    if (startsWith(A, "--ptxas="))
      Ptxas = A.substr(8);
    else
      return usage(("unexpected argument '" + A + "'").c_str());
  }
  if (Ptxas.empty()) {
    const char *Env = std::getenv("PTXAS");
    Ptxas = Env && *Env ? Env : "/usr/local/cuda/bin/ptxas";
  }
  if (access(Ptxas.c_str(), X_OK) != 0) {
    std::cout << "SKIP: no ptxas at " << Ptxas << "\n";
    return ExitSkip;
  }
  char Dir[] = "/tmp/idxmap-smoke-XXXXXX";
  if (!mkdtemp(Dir)) {
    std::perror("mkdtemp");
    return ExitFail;
  }
  int Failures = 0, Checked = 0;
  for (const char *Gpu : {"sm_80", "sm_90", "sm_90a"}) {
    for (const std::string &Kernel : smokeKernelNames()) {
      TargetOptions Opts;
      Opts.Gpu = Gpu;
      auto Ptx = emitKernel(Kernel, Opts);
      if (!Ptx) {
        if (Kernel == "tanh_precise_f32" &&
            access(Opts.LibdevicePath.c_str(), R_OK) != 0) {
          std::cout << "skip " << Kernel << ": no libdevice\n";
          continue;
        }
        std::cout << "FAIL " << Kernel << " " << Gpu << ": "
                  << Ptx.error().Message << "\n";
        ++Failures;
        continue;
      }
      std::string File = std::string(Dir) + "/" + Kernel + "." + Gpu + ".ptx";
      std::ofstream(File) << *Ptx;
      std::string Output;
      int Rc = runPtxas(Ptxas, Gpu, File, Output);
      ++Checked;
      // Keep ptxas's resource line: "Used N registers, ...".
      std::string Usage;
      if (size_t P = Output.find("Used "); P != std::string::npos)
        Usage = Output.substr(P, Output.find('\n', P) - P);
      std::cout << (Rc == 0 ? "ok   " : "FAIL ") << Kernel << " " << Gpu << ": "
                << Usage << "\n";
      if (Rc != 0) {
        std::cout << Output;
        ++Failures;
      } else if (Output.find("spill") != std::string::npos &&
                 Output.find(" 0 bytes spill stores") == std::string::npos) {
        std::cout << "FAIL " << Kernel << " spills:\n" << Output;
        ++Failures;
      }
      std::remove(File.c_str());
    }
  }
  rmdir(Dir);
  std::cout << Checked << " PTX files assembled, " << Failures << " failures\n";
  return Failures == 0 && Checked > 0 ? ExitOk : ExitFail;
}

//===----------------------------------------------------------------------===//
// run
//===----------------------------------------------------------------------===//

using runtime::CudaDriver;
using runtime::DeviceBuffer;
using runtime::DriverStatus;
using runtime::GpuModule;
using runtime::LaunchDims;

/// Collects failures of the GPU checks and prints them.
struct Checker {
  int Failures = 0;
  bool ok(bool Cond, const std::string &What) {
    std::cout << (Cond ? "  ok   " : "  FAIL ") << What << "\n";
    if (!Cond)
      ++Failures;
    return Cond;
  }
  template <typename T>
  bool ok(const runtime::DriverResult<T> &R, const std::string &What) {
    if (R)
      return true;
    std::cout << "  FAIL " << What << ": " << R.error().Message << "\n";
    ++Failures;
    return false;
  }
};

struct GpuSession {
  CudaDriver &Drv;
  TargetOptions Target;
  Checker &C;

  /// Emits, loads and returns kernel \p Name's module; prints its resources.
  std::optional<GpuModule> load(const std::string &Name) {
    auto Ptx = emitKernel(Name, Target);
    if (!Ptx) {
      C.ok(false, Name + ": emit: " + Ptx.error().Message);
      return std::nullopt;
    }
    auto Mod = Drv.loadPtx(*Ptx, /*Verbose=*/true);
    if (!C.ok(Mod, Name + ": load"))
      return std::nullopt;
    auto K = Mod->getKernel(Name);
    if (!C.ok(K, Name + ": getKernel"))
      return std::nullopt;
    if (auto A = Drv.getAttributes(*K); C.ok(A, Name + ": attributes"))
      std::cout << "  " << Name << ": " << A->NumRegisters << " registers, "
                << A->LocalBytes << " local bytes, " << A->StaticSharedBytes
                << " shared bytes\n";
    return std::move(*Mod);
  }

  std::optional<DeviceBuffer> upload(const std::vector<float> &Host) {
    auto Buf = Drv.alloc(Host.size() * sizeof(float));
    if (!C.ok(Buf, "alloc") ||
        !C.ok(Drv.copyToDevice(*Buf, Host.data(), Buf->size()), "upload"))
      return std::nullopt;
    return std::move(*Buf);
  }

  /// A poisoned (all bits set: NaN) output buffer of \p N floats.
  std::optional<DeviceBuffer> output(size_t N) {
    auto Buf = Drv.alloc(N * sizeof(float));
    if (!C.ok(Buf, "alloc") || !C.ok(Drv.fill(*Buf, 0xff), "poison"))
      return std::nullopt;
    return std::move(*Buf);
  }

  std::vector<float> download(const DeviceBuffer &Buf) {
    std::vector<float> Host(Buf.size() / sizeof(float));
    C.ok(Drv.copyToHost(Host.data(), Buf, Buf.size()), "download");
    return Host;
  }

  DriverStatus launch(const GpuModule &Mod, const std::string &Name,
                      unsigned Blocks, std::vector<void *> Args) {
    auto K = Mod.getKernel(Name);
    if (!K)
      return K.error();
    LaunchDims Dims;
    Dims.Grid[0] = Blocks;
    Dims.Block[0] = SmokeBlockSize;
    if (DriverStatus S = Drv.launch(*K, Dims, Args.data()); !S)
      return S;
    return Drv.synchronize();
  }
};

unsigned blocksFor(uint64_t Threads) {
  return unsigned((Threads + SmokeBlockSize - 1) / SmokeBlockSize);
}

void checkScale(GpuSession &S, std::mt19937 &Rng) {
  std::cout << "scale_f32 (16-byte loads, scalar tail):\n";
  auto Mod = S.load("scale_f32");
  if (!Mod)
    return;
  for (int64_t N : {int64_t(1) << 22, (int64_t(1) << 22) + 3, int64_t(5)}) {
    std::uniform_real_distribution<float> Dist(-1000, 1000);
    std::vector<float> X(N);
    for (float &V : X)
      V = Dist(Rng);
    auto DX = S.upload(X);
    auto DY = S.output(N);
    if (!DX || !DY)
      return;
    uint64_t XP = DX->ptr(), YP = DY->ptr();
    if (!S.C.ok(
            S.launch(*Mod, "scale_f32", blocksFor((N + 3) / 4), {&XP, &YP, &N}),
            "launch"))
      return;
    std::vector<float> Y = S.download(*DY);
    int64_t Bad = 0, First = -1;
    for (int64_t I = 0; I < N; ++I)
      if (Y[I] != 2 * X[I] && Bad++ == 0)
        First = I;
    S.C.ok(Bad == 0, "n=" + std::to_string(N) + ": " + std::to_string(Bad) +
                         " mismatches" +
                         (Bad ? " (first at " + std::to_string(First) + ")"
                              : std::string()));
  }
}

void checkBlockSum(GpuSession &S, std::mt19937 &Rng) {
  std::cout << "block_sum_f32 (shfl.sync.bfly, .shared, bar.sync):\n";
  auto Mod = S.load("block_sum_f32");
  if (!Mod)
    return;
  // Small integers: every partial sum is exact, so the check is exact too.
  int64_t N = int64_t(SmokeBlockSize) * 4096 + 77;
  std::uniform_int_distribution<int> Dist(-8, 8);
  std::vector<float> X(N);
  for (float &V : X)
    V = float(Dist(Rng));
  unsigned Blocks = blocksFor(N);
  auto DX = S.upload(X);
  auto DY = S.output(Blocks);
  if (!DX || !DY)
    return;
  uint64_t XP = DX->ptr(), YP = DY->ptr();
  if (!S.C.ok(S.launch(*Mod, "block_sum_f32", Blocks, {&XP, &YP, &N}),
              "launch"))
    return;
  std::vector<float> Y = S.download(*DY);
  unsigned Bad = 0;
  for (unsigned B = 0; B < Blocks; ++B) {
    double Want = 0;
    for (int64_t I = int64_t(B) * SmokeBlockSize;
         I < std::min<int64_t>(N, int64_t(B + 1) * SmokeBlockSize); ++I)
      Want += X[I];
    if (Y[B] != float(Want) && Bad++ < 3)
      std::cout << "    block " << B << ": got " << Y[B] << ", want " << Want
                << "\n";
  }
  S.C.ok(Bad == 0, std::to_string(Blocks) + " block sums, " +
                       std::to_string(Bad) + " wrong");
}

void checkApprox(GpuSession &S, std::mt19937 &Rng) {
  std::cout << "approx_f32 (tanh.approx.f32, ex2.approx.ftz.f32):\n";
  auto Mod = S.load("approx_f32");
  if (!Mod)
    return;
  int64_t N = int64_t(1) << 20;
  std::uniform_real_distribution<float> Dist(-10, 10);
  std::vector<float> X(N);
  for (float &V : X)
    V = Dist(Rng);
  auto DX = S.upload(X);
  auto DT = S.output(N), DE = S.output(N);
  if (!DX || !DT || !DE)
    return;
  uint64_t XP = DX->ptr(), TP = DT->ptr(), EP = DE->ptr();
  if (!S.C.ok(
          S.launch(*Mod, "approx_f32", blocksFor(N / 4), {&XP, &TP, &EP, &N}),
          "launch"))
    return;
  std::vector<float> T = S.download(*DT), E = S.download(*DE);
  double MaxTanhAbs = 0, MaxExpRel = 0;
  for (int64_t I = 0; I < N; ++I) {
    double Tanh = std::tanh(double(X[I])), Exp = std::exp(double(X[I]));
    MaxTanhAbs = std::max(MaxTanhAbs, std::fabs(T[I] - Tanh));
    MaxExpRel = std::max(MaxExpRel, std::fabs(E[I] - Exp) / Exp);
    if (std::isnan(T[I]) || std::isnan(E[I]))
      MaxTanhAbs = MaxExpRel = INFINITY;
  }
  char Buf[160];
  std::snprintf(Buf, sizeof(Buf),
                "tanh max abs error %.3g (2^%.2f; bound 2^-10)", MaxTanhAbs,
                std::log2(MaxTanhAbs));
  S.C.ok(MaxTanhAbs <= std::ldexp(1.0, -10), Buf);
  std::snprintf(Buf, sizeof(Buf),
                "exp max rel error %.3g (2^%.2f; bound 2^-18) on [-10, 10]",
                MaxExpRel, std::log2(MaxExpRel));
  S.C.ok(MaxExpRel <= std::ldexp(1.0, -18), Buf);
}

void checkTanhPrecise(GpuSession &S, std::mt19937 &Rng) {
  std::cout << "tanh_precise_f32 (libdevice __nv_tanhf):\n";
  TargetOptions Probe;
  if (access(Probe.LibdevicePath.c_str(), R_OK) != 0) {
    std::cout << "  skip: no libdevice at " << Probe.LibdevicePath << "\n";
    return;
  }
  auto Mod = S.load("tanh_precise_f32");
  if (!Mod)
    return;
  int64_t N = (int64_t(1) << 20) + 1;
  std::uniform_real_distribution<float> Dist(-10, 10);
  std::vector<float> X(N);
  for (float &V : X)
    V = Dist(Rng);
  auto DX = S.upload(X);
  auto DY = S.output(N);
  if (!DX || !DY)
    return;
  uint64_t XP = DX->ptr(), YP = DY->ptr();
  if (!S.C.ok(S.launch(*Mod, "tanh_precise_f32", blocksFor(N), {&XP, &YP, &N}),
              "launch"))
    return;
  std::vector<float> Y = S.download(*DY);
  double MaxUlp = 0;
  for (int64_t I = 0; I < N; ++I) {
    double Want = std::tanh(double(X[I]));
    float WantF = float(Want);
    double Ulp =
        std::fabs(double(std::nextafter(WantF, INFINITY)) - double(WantF));
    double Err = std::isnan(Y[I]) ? INFINITY : std::fabs(Y[I] - Want) / Ulp;
    MaxUlp = std::max(MaxUlp, Err);
  }
  char Buf[96];
  std::snprintf(Buf, sizeof(Buf), "max error %.2f ulp (bound 2)", MaxUlp);
  S.C.ok(MaxUlp <= 2.0, Buf);
}

void checkJitErrors(GpuSession &S) {
  std::cout << "JIT error reporting:\n";
  const char *Bad = ".version 8.5\n.target sm_90\n.address_size 64\n"
                    ".visible .entry broken()\n{\n  bogus.instruction;\n"
                    "  ret;\n}\n";
  auto Mod = S.Drv.loadPtx(Bad);
  if (S.C.ok(!Mod, "invalid PTX is rejected")) {
    const std::string &Msg = Mod.error().Message;
    std::cout << "    " << Msg << "\n";
    S.C.ok(Mod.error().Kind == runtime::DriverErrorKind::JitFailed,
           "kind is JitFailed");
    S.C.ok(Msg.find(".version 8.5, .target sm_90") != std::string::npos,
           "message names .version/.target");
    S.C.ok(Msg.find("driver: CUDA ") != std::string::npos,
           "message names the driver version");
    S.C.ok(Msg.find("(empty)") == std::string::npos &&
               Msg.find("bogus") != std::string::npos,
           "message holds the JIT log");
  }
  const char *TooNew = ".version 99.0\n.target sm_90\n.address_size 64\n";
  auto Mod2 = S.Drv.loadPtx(TooNew);
  if (S.C.ok(!Mod2, "PTX .version 99.0 is rejected"))
    std::cout << "    " << Mod2.error().Message << "\n";
  if (auto Good = S.load("scale_f32")) {
    auto K = Good->getKernel("no_such_kernel");
    S.C.ok(!K && K.error().Kind == runtime::DriverErrorKind::KernelNotFound,
           "unknown kernel name is KernelNotFound");
  }
}

void benchScale(GpuSession &S) {
  std::cout << "bench scale_f32 (read + write, 16-byte accesses):\n";
  auto Mod = S.load("scale_f32");
  if (!Mod)
    return;
  auto K = Mod->getKernel("scale_f32");
  if (!S.C.ok(K, "getKernel"))
    return;
  int64_t N = int64_t(1) << 28; // 1 GiB in, 1 GiB out: far above L2
  auto DX = S.Drv.alloc(N * 4), DY = S.Drv.alloc(N * 4);
  if (!S.C.ok(DX, "alloc") || !S.C.ok(DY, "alloc") ||
      !S.C.ok(S.Drv.fill(*DX, 0x3f), "fill"))
    return;
  uint64_t XP = DX->ptr(), YP = DY->ptr();
  void *Args[] = {&XP, &YP, &N};
  LaunchDims Dims;
  Dims.Grid[0] = blocksFor(N / 4);
  Dims.Block[0] = SmokeBlockSize;
  auto Times = S.Drv.timeLaunches(
      [&](unsigned) { return S.Drv.launch(*K, Dims, Args); }, 5, 30);
  if (!S.C.ok(Times, "timing"))
    return;
  double Us = runtime::median(*Times);
  double Bytes = double(N) * 8;
  std::printf("  n=2^28 f32: median %.1f us over %zu reps, %.2f TB/s\n", Us,
              Times->size(), Bytes / (Us * 1e-6) / 1e12);
}

int runGpu(const std::vector<std::string> &Args) {
  bool Bench = false;
  std::string Gpu;
  for (const std::string &A : Args) {
    if (A == "--bench")
      Bench = true;
    else if (startsWith(A, "--gpu="))
      Gpu = A.substr(6);
    else
      return usage(("unexpected argument '" + A + "'").c_str());
  }
  auto Drv = CudaDriver::open();
  if (!Drv) {
    std::cout << "SKIP: " << Drv.error().Message << "\n";
    return Drv.error().isUnavailable() ? ExitSkip : ExitFail;
  }
  const runtime::DeviceInfo &D = (*Drv)->device();
  if (Gpu.empty())
    Gpu = D.CcMajor >= 9 ? "sm_90" : "sm_80";
  std::printf("device %d: %s (%s), %d SMs, L2 %d KiB, %.1f GiB, driver CUDA "
              "%s; emitting for %s\n",
              D.Ordinal, D.Name.c_str(), D.smName().c_str(), D.SmCount,
              D.L2CacheBytes / 1024, double(D.TotalMemoryBytes) / (1 << 30),
              runtime::formatDriverVersion(D.DriverVersion).c_str(),
              Gpu.c_str());
  Checker C;
  TargetOptions Target;
  Target.Gpu = Gpu;
  GpuSession S{**Drv, Target, C};
  std::mt19937 Rng(12345);
  checkScale(S, Rng);
  checkBlockSum(S, Rng);
  checkApprox(S, Rng);
  checkTanhPrecise(S, Rng);
  checkJitErrors(S);
  if (Bench)
    benchScale(S);
  std::cout << (C.Failures == 0 ? "PASS" : "FAIL") << " (" << C.Failures
            << " failures)\n";
  return C.Failures == 0 ? ExitOk : ExitFail;
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2)
    return usage();
  std::string Cmd = Argv[1];
  std::vector<std::string> Args(Argv + 2, Argv + Argc);
  if (Cmd == "list") {
    for (const std::string &Name : smokeKernelNames())
      std::cout << Name << "\n";
    return ExitOk;
  }
  if (Cmd == "emit")
    return runEmit(Args);
  if (Cmd == "ptxas")
    return runPtxasCheck(Args);
  if (Cmd == "run")
    return runGpu(Args);
  if (Cmd == "--help" || Cmd == "-h") {
    usage();
    return ExitOk;
  }
  return usage(("unknown command '" + Cmd + "'").c_str());
}
