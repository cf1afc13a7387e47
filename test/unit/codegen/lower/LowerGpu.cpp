//===- LowerGpu.cpp - Elementwise kernels on the GPU ----------------------===//
//
// Part of idxmap. Runs every op/type kernel of LowerKernels (out[i] =
// op(in[i], ...)) through the CUDA driver on the special-value grid plus
// random inputs and compares each element with the reference interpreter:
// bit for bit (NaN payloads aside) for exactly lowered ops, within
// toleranceFor() for approximate and libdevice ones. Then sweeps the fast
// approximations (tanh, exp, log, logistic in f32) densely and prints their
// measured maximum errors next to the documented bounds.
//
// Usage: idxmap-lower-gpu [--filter=SUBSTR] [--random=N] [--sweep=N] [-v]
// Exit: 0 all pass, 1 a mismatch, 77 no CUDA driver or GPU (ctest: skipped).
//
//===----------------------------------------------------------------------===//

#include "ElementwiseCodegen.h"
#include "KernelBuilder.h"
#include "LowerKernels.h"

#include "idxmap/Codegen.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/Runtime.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace idxmap;
using namespace idxmap::codegen;
using namespace idxmap::codegen::lowertest;

namespace {

struct Options {
  std::string Filter;
  int64_t Random = 4096;
  int64_t Sweep = int64_t(1) << 22;
  bool Verbose = false;
};

struct Errors {
  double MaxAbs = 0, MaxRel = 0;
  int64_t Mismatches = 0, FirstBad = -1;
};

/// Element errors of \p Got against \p Want (floats); NaN matches NaN and
/// infinities must match exactly.
Errors measure(const Literal &Want, const Literal &Got, const Tolerance *Tol,
               bool Exact) {
  Errors E;
  for (int64_t K = 0, N = Want.elementCount(); K < N; ++K) {
    if (sameElement(Want, Got, K))
      continue;
    bool Bad = Exact;
    if (!Exact) {
      double W = Want.getDouble(K), G = Got.getDouble(K);
      if (std::isnan(W) || std::isnan(G) || std::isinf(W) || std::isinf(G)) {
        Bad = !(W == G);
      } else {
        double A = std::fabs(W - G);
        E.MaxAbs = std::max(E.MaxAbs, A);
        if (W != 0)
          E.MaxRel = std::max(E.MaxRel, A / std::fabs(W));
        Bad = Tol && A > Tol->Abs + Tol->Rel * std::fabs(W);
      }
    }
    if (Bad) {
      if (E.FirstBad < 0)
        E.FirstBad = K;
      ++E.Mismatches;
    }
  }
  return E;
}

class Runner {
public:
  Runner(runtime::CudaDriver &Drv, const Options &Opts) : Drv(Drv), Opts(Opts) {}

  /// Emits, loads and runs \p Cases under \p Math; returns the failures.
  int runGroup(const std::vector<const OpCase *> &Cases,
               const MathOptions &Math) {
    llvm::LLVMContext LC;
    llvm::Module M("ops", LC);
    for (const OpCase *C : Cases)
      addOpKernel(M, *C, Math);
    idxmap::TargetOptions T;
    T.Gpu = Drv.device().smName() == "sm_90" ? "sm_90" : "sm_80";
    T.PreciseMath = Math.Precise;
    auto Ptx = emitPtx(M, T);
    if (!Ptx) {
      std::printf("FAIL emit: %s\n", Ptx.error().str().c_str());
      return int(Cases.size());
    }
    auto Mod = Drv.loadPtx(*Ptx);
    if (!Mod) {
      std::printf("FAIL load: %s\n", Mod.error().Message.c_str());
      return int(Cases.size());
    }
    int Failures = 0;
    for (const OpCase *C : Cases)
      Failures += !runCase(*Mod, *C, Math);
    return Failures;
  }

private:
  bool runCase(runtime::GpuModule &Mod, const OpCase &C,
               const MathOptions &Math) {
    const char *Mode = Math.Precise ? "precise" : "fast";
    int64_t N = C.Root->shape().numElements();
    std::vector<Literal> In = testInputs(C, N, /*Seed=*/5);
    auto Want = evaluate(*C.Module->entry(), In);
    if (!Want) {
      std::printf("FAIL %-28s %-7s interpreter: %s\n", C.Name.c_str(), Mode,
                  Want.error().str().c_str());
      return false;
    }
    auto K = Mod.getKernel(kernelName(C));
    if (!K) {
      std::printf("FAIL %-28s %-7s %s\n", C.Name.c_str(), Mode,
                  K.error().Message.c_str());
      return false;
    }
    std::vector<runtime::DeviceBuffer> Bufs;
    std::vector<runtime::DevicePtr> Ptrs;
    for (const Literal &L : In) {
      auto Buf = Drv.alloc(L.data().size());
      if (!Buf || !Drv.copyToDevice(*Buf, L.data().data(), L.data().size()))
        return report(C, Mode, "alloc/copy failed");
      Ptrs.push_back(Buf->ptr());
      Bufs.push_back(std::move(*Buf));
    }
    Literal Got(Shape(C.OutType, {N}));
    auto Out = Drv.alloc(Got.data().size());
    if (!Out || !Drv.fill(*Out, 0xff))
      return report(C, Mode, "alloc/fill failed");
    Ptrs.push_back(Out->ptr());
    int64_t Count = N;
    std::vector<void *> Args;
    for (runtime::DevicePtr &P : Ptrs)
      Args.push_back(&P);
    Args.push_back(&Count);
    runtime::LaunchDims Dims;
    Dims.Grid[0] = unsigned((N + BlockSize - 1) / BlockSize);
    Dims.Block[0] = BlockSize;
    if (auto S = Drv.launch(*K, Dims, Args.data()); !S)
      return report(C, Mode, S.error().Message);
    if (auto S = Drv.synchronize(); !S)
      return report(C, Mode, S.error().Message);
    if (!Drv.copyToHost(Got.data().data(), *Out, Got.data().size()))
      return report(C, Mode, "copy back failed");

    bool Exact = isExact(*C.Root, Math);
    Tolerance Tol = toleranceFor(*C.Root, Math);
    Errors E = measure((*Want)[0], Got, &Tol, Exact);
    bool Ok = E.Mismatches == 0;
    if (!Ok || Opts.Verbose || !Exact) {
      std::printf("%s %-28s %-7s %-6s", Ok ? "ok  " : "FAIL", C.Name.c_str(),
                  Mode, Exact ? "exact" : "tol");
      if (!Exact)
        std::printf(" max abs %.3g rel %.3g (tol abs %.3g rel %.3g)", E.MaxAbs,
                    E.MaxRel, Tol.Abs, Tol.Rel);
      if (!Ok) {
        std::string Args;
        for (const Literal &L : In)
          Args += L.elementString(E.FirstBad) + " ";
        std::printf(" %lld bad; first [%lld] (%s): want %s got %s",
                    (long long)E.Mismatches, (long long)E.FirstBad,
                    Args.c_str(), (*Want)[0].elementString(E.FirstBad).c_str(),
                    Got.elementString(E.FirstBad).c_str());
      }
      std::printf("\n");
    }
    return Ok;
  }

  bool report(const OpCase &C, const char *Mode, const std::string &Why) {
    std::printf("FAIL %-28s %-7s %s\n", C.Name.c_str(), Mode, Why.c_str());
    return false;
  }

  runtime::CudaDriver &Drv;
  const Options &Opts;
};

/// Dense sweep of one f32 approximation: a one-op module over \p Values.
int sweep(runtime::CudaDriver &Drv, const char *Op, std::vector<float> Values,
          double DocRel, double DocAbs) {
  int64_t N = int64_t(Values.size());
  std::string Text = "HloModule s\nENTRY e {\n  p0 = f32[" + std::to_string(N) +
                     "] parameter(0)\n  ROOT r = f32[" + std::to_string(N) +
                     "] " + Op + "(p0)\n}\n";
  auto M = parseHloModule(Text, "sweep.hlo");
  if (!M) {
    std::printf("FAIL sweep %s: %s\n", Op, M.error().str().c_str());
    return 1;
  }
  OpCase C;
  C.Name = std::string("sweep.") + Op;
  C.Root = (*M)->entry()->root();
  C.InTypes = {PrimitiveType::F32};
  C.OutType = PrimitiveType::F32;
  C.Module = std::move(*M);
  Literal In(Shape(PrimitiveType::F32, {N}));
  std::memcpy(In.data().data(), Values.data(), size_t(N) * 4);
  auto Want = evaluate(*C.Module->entry(), {In});
  llvm::LLVMContext LC;
  llvm::Module Mod("sweep", LC);
  addOpKernel(Mod, C, MathOptions{});
  auto Ptx = emitPtx(Mod, idxmap::TargetOptions());
  if (!Want || !Ptx)
    return 1;
  auto G = Drv.loadPtx(*Ptx);
  if (!G)
    return 1;
  auto K = G->getKernel(kernelName(C));
  auto A = Drv.alloc(size_t(N) * 4), B = Drv.alloc(size_t(N) * 4);
  if (!K || !A || !B || !Drv.copyToDevice(*A, In.data().data(), size_t(N) * 4))
    return 1;
  runtime::DevicePtr PA = A->ptr(), PB = B->ptr();
  int64_t Count = N;
  void *Args[] = {&PA, &PB, &Count};
  runtime::LaunchDims Dims;
  Dims.Grid[0] = unsigned((N + BlockSize - 1) / BlockSize);
  Dims.Block[0] = BlockSize;
  Literal Got(Shape(PrimitiveType::F32, {N}));
  if (!Drv.launch(*K, Dims, Args) || !Drv.synchronize() ||
      !Drv.copyToHost(Got.data().data(), *B, size_t(N) * 4))
    return 1;
  Tolerance Tol = toleranceFor(*C.Root, MathOptions{});
  Errors E = measure((*Want)[0], Got, &Tol, false);
  // Relative error where |want| >= 2^-126 (normal results), reported apart.
  double RelNormal = 0;
  double WorstX = 0;
  for (int64_t I = 0; I < N; ++I) {
    double W = (*Want)[0].getDouble(I), Gv = Got.getDouble(I);
    if (std::isfinite(W) && std::fabs(W) >= 1.1754943508222875e-38) {
      double R = std::fabs(W - Gv) / std::fabs(W);
      if (R > RelNormal) {
        RelNormal = R;
        WorstX = Values[size_t(I)];
      }
    }
  }
  std::printf("%s sweep %-10s %lld points: max abs %.3g, max rel (normal) "
              "%.3g at x = %.9g; documented rel %.3g abs %.3g; tol abs %.3g "
              "rel %.3g; %lld outside tol\n",
              E.Mismatches ? "FAIL" : "ok  ", Op, (long long)N, E.MaxAbs,
              RelNormal, WorstX, DocRel, DocAbs, Tol.Abs, Tol.Rel,
              (long long)E.Mismatches);
  return E.Mismatches ? 1 : 0;
}

/// GELU (the fusion of test/examples/gelu.hlo) over \p T[N], inlined per
/// element: checks toleranceFor() of a fusion that holds a fast tanh.
std::string geluText(const std::string &T, int64_t N) {
  std::string A = T + "[" + std::to_string(N) + "]";
  return "HloModule g\n"
         "gelu {\n"
         "  param = " + A + " parameter(0)\n"
         "  constant_0 = " + T + "[] constant(0.5)\n"
         "  bcast_0 = " + A + " broadcast(constant_0), dimensions={}\n"
         "  constant_1 = " + T + "[] constant(1)\n"
         "  bcast_1 = " + A + " broadcast(constant_1), dimensions={}\n"
         "  constant_2 = " + T + "[] constant(0.79785)\n"
         "  bcast_2 = " + A + " broadcast(constant_2), dimensions={}\n"
         "  constant_3 = " + T + "[] constant(0.044708)\n"
         "  bcast_3 = " + A + " broadcast(constant_3), dimensions={}\n"
         "  square = " + A + " multiply(param, param)\n"
         "  cube = " + A + " multiply(square, param)\n"
         "  multiply_3 = " + A + " multiply(cube, bcast_3)\n"
         "  add_1 = " + A + " add(param, multiply_3)\n"
         "  multiply_2 = " + A + " multiply(add_1, bcast_2)\n"
         "  tanh_0 = " + A + " tanh(multiply_2)\n"
         "  add_0 = " + A + " add(tanh_0, bcast_1)\n"
         "  multiply_1 = " + A + " multiply(add_0, bcast_0)\n"
         "  ROOT multiply_0 = " + A + " multiply(param, multiply_1)\n"
         "}\n"
         "ENTRY main {\n"
         "  p = " + A + " parameter(0)\n"
         "  ROOT fusion = " + A + " fusion(p), kind=kLoop, calls=gelu\n"
         "}\n";
}

/// Runs a loop fusion whose instructions are all elementwise (plus scalar
/// constants and broadcasts of scalars) with one thread per element.
int runElementwiseFusion(runtime::CudaDriver &Drv, const std::string &Name,
                         const std::string &Text, double Lo, double Hi,
                         const MathOptions &Math) {
  auto M = parseHloModule(Text, Name + ".hlo");
  if (!M) {
    std::printf("FAIL %s: %s\n", Name.c_str(), M.error().str().c_str());
    return 1;
  }
  const HloInstruction *Fusion = (*M)->entry()->root();
  const HloComputation *C = Fusion->fusedComputation();
  int64_t N = Fusion->shape().numElements();
  PrimitiveType OT = Fusion->shape().Type;
  llvm::LLVMContext LC;
  llvm::Module Mod("fusion", LC);
  std::vector<KernelParamSpec> Specs;
  for (int64_t P = 0; P < C->parameterCount(); ++P)
    Specs.push_back({"p" + std::to_string(P), KernelParamRole::Input, 16,
                     nullptr});
  Specs.push_back({"out", KernelParamRole::Output, 16, nullptr});
  Specs.push_back({"n", KernelParamRole::Scalar, 0, nullptr});
  llvm::Function *F = createKernel(Mod, "fusion", Specs);
  llvm::IRBuilder<> B(&F->getEntryBlock());
  llvm::Value *I = B.CreateAdd(
      B.CreateMul(B.CreateZExt(emitBlockId(B, GpuDim::X), B.getInt64Ty()),
                  B.getInt64(BlockSize)),
      B.CreateZExt(emitThreadId(B, GpuDim::X, BlockSize), B.getInt64Ty()));
  llvm::BasicBlock *Body = llvm::BasicBlock::Create(LC, "body", F);
  llvm::BasicBlock *Exit = llvm::BasicBlock::Create(LC, "exit", F);
  B.CreateCondBr(B.CreateICmpSLT(I, F->getArg(unsigned(C->parameterCount() + 1))),
                 Body, Exit);
  B.SetInsertPoint(Body);
  std::map<const HloInstruction *, llvm::Value *> Vals;
  for (const HloInstruction *Ins : C->instructions()) {
    PrimitiveType T = Ins->shape().Type;
    if (Ins->opcode() == HloOpcode::Parameter) {
      llvm::Type *ST = storageType(LC, T);
      llvm::Value *P = B.CreateInBoundsGEP(
          ST, F->getArg(unsigned(Ins->parameterNumber())), I);
      Vals[Ins] = loadConvert(B, B.CreateLoad(ST, P), T);
      continue;
    }
    if (Ins->opcode() == HloOpcode::Broadcast &&
        !Ins->operand(0)->shape().isScalar()) {
      std::printf("FAIL %s: broadcast of a non-scalar\n", Name.c_str());
      return 1;
    }
    std::vector<llvm::Value *> Ops;
    for (const HloInstruction *O : Ins->operands())
      Ops.push_back(Vals[O]);
    Vals[Ins] = emitElementwise(B, *Ins, Ops, Math);
  }
  llvm::Type *OST = storageType(LC, OT);
  B.CreateStore(storeConvert(B, Vals[C->root()], OT),
                B.CreateInBoundsGEP(OST, F->getArg(unsigned(C->parameterCount())), I));
  B.CreateBr(Exit);
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
  idxmap::TargetOptions TO;
  TO.PreciseMath = Math.Precise;
  auto Ptx = emitPtx(Mod, TO);
  if (!Ptx) {
    std::printf("FAIL %s: %s\n", Name.c_str(), Ptx.error().str().c_str());
    return 1;
  }
  auto G = Drv.loadPtx(*Ptx);
  if (!G) {
    std::printf("FAIL %s: %s\n", Name.c_str(), G.error().Message.c_str());
    return 1;
  }
  auto K = G->getKernel("fusion");
  std::vector<Literal> In;
  std::vector<runtime::DeviceBuffer> Bufs;
  std::vector<runtime::DevicePtr> Ptrs;
  for (int64_t P = 0; P < C->parameterCount(); ++P) {
    Literal L(Fusion->operand(P)->shape());
    L.fillRandom(uint64_t(P) + 17, Lo, Hi);
    auto Buf = Drv.alloc(L.data().size());
    if (!Buf || !Drv.copyToDevice(*Buf, L.data().data(), L.data().size()))
      return 1;
    Ptrs.push_back(Buf->ptr());
    Bufs.push_back(std::move(*Buf));
    In.push_back(std::move(L));
  }
  auto Want = evaluate(*(*M)->entry(), In);
  Literal Got(Shape(OT, {N}));
  auto Out = Drv.alloc(Got.data().size());
  if (!K || !Want || !Out || !Drv.fill(*Out, 0xff))
    return 1;
  Ptrs.push_back(Out->ptr());
  int64_t Count = N;
  std::vector<void *> Args;
  for (runtime::DevicePtr &P : Ptrs)
    Args.push_back(&P);
  Args.push_back(&Count);
  runtime::LaunchDims Dims;
  Dims.Grid[0] = unsigned((N + BlockSize - 1) / BlockSize);
  Dims.Block[0] = BlockSize;
  if (!Drv.launch(*K, Dims, Args.data()) || !Drv.synchronize() ||
      !Drv.copyToHost(Got.data().data(), *Out, Got.data().size()))
    return 1;
  Tolerance Tol = toleranceFor(*Fusion, Math);
  Errors E = measure((*Want)[0], Got, &Tol, false);
  int64_t Exact = 0;
  for (int64_t K2 = 0; K2 < N; ++K2)
    Exact += sameElement((*Want)[0], Got, K2);
  std::printf("%s fusion %-22s %-7s x in [%g, %g]: max abs %.3g rel %.3g, "
              "%.2f%% bit-exact (tol abs %.3g rel %.3g), %lld outside tol\n",
              E.Mismatches ? "FAIL" : "ok  ", Name.c_str(),
              Math.Precise ? "precise" : "fast", Lo, Hi, E.MaxAbs, E.MaxRel,
              100.0 * double(Exact) / double(N), Tol.Abs, Tol.Rel,
              (long long)E.Mismatches);
  return E.Mismatches ? 1 : 0;
}

std::vector<float> linspace(double Lo, double Hi, int64_t N) {
  std::vector<float> V;
  V.resize(static_cast<size_t>(N));
  for (int64_t I = 0; I < N; ++I)
    V[size_t(I)] = float(Lo + (Hi - Lo) * double(I) / double(N - 1));
  return V;
}

std::vector<float> logspace(double Lo, double Hi, int64_t N) {
  std::vector<float> V;
  V.resize(static_cast<size_t>(N));
  for (int64_t I = 0; I < N; ++I)
    V[size_t(I)] = float(std::exp(std::log(Lo) + (std::log(Hi) - std::log(Lo)) *
                                                   double(I) / double(N - 1)));
  return V;
}

} // namespace

int main(int argc, char **argv) {
  Options Opts;
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    if (A.rfind("--filter=", 0) == 0)
      Opts.Filter = A.substr(9);
    else if (A.rfind("--random=", 0) == 0)
      Opts.Random = std::stoll(A.substr(9));
    else if (A.rfind("--sweep=", 0) == 0)
      Opts.Sweep = std::stoll(A.substr(8));
    else if (A == "-v")
      Opts.Verbose = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--filter=SUBSTR] [--random=N] [--sweep=N] [-v]\n",
                   argv[0]);
      return 2;
    }
  }
  auto Drv = runtime::CudaDriver::open();
  if (!Drv) {
    std::printf("skipped: %s\n", Drv.error().Message.c_str());
    return Drv.error().isUnavailable() ? 77 : 1;
  }
  const runtime::DeviceInfo &D = (*Drv)->device();
  std::printf("device: %s (%s), driver %s\n", D.Name.c_str(),
              D.smName().c_str(),
              runtime::formatDriverVersion(D.DriverVersion).c_str());

  // The largest grid is 33 x 33 float specials.
  int64_t N = 33 * 33 + Opts.Random;
  std::vector<OpCase> Cases = allOpCases(N);
  int Failures = 0, Run = 0;
  Runner R(**Drv, Opts);
  for (bool Precise : {false, true}) {
    MathOptions Math{Precise};
    std::vector<const OpCase *> Group;
    auto Flush = [&] {
      if (!Group.empty())
        Failures += R.runGroup(Group, Math);
      Run += int(Group.size());
      Group.clear();
    };
    for (const OpCase &C : Cases) {
      if (!Opts.Filter.empty() && C.Name.find(Opts.Filter) == std::string::npos)
        continue;
      // Precise math changes only the libdevice-backed transcendentals.
      if (Precise && !needsLibdevice(*C.Root, Math))
        continue;
      Group.push_back(&C);
      if (Group.size() == 48)
        Flush();
    }
    Flush();
  }
  std::printf("%d of %d op/type kernels match the interpreter\n",
              Run - Failures, Run);

  if (Opts.Filter.empty() && Opts.Sweep > 0) {
    int64_t S = Opts.Sweep;
    // PTX ISA bounds: tanh.approx.f32 rel 2^-10.987; ex2.approx.ftz 2^-22
    // plus the argument rounding (< 5.3e-6); lg2.approx abs 2^-22.
    Failures += sweep(**Drv, "tanh", linspace(-10, 10, S), std::ldexp(1, -11), 0);
    Failures += sweep(**Drv, "tanh", logspace(1e-30, 1, S), std::ldexp(1, -11), 0);
    Failures += sweep(**Drv, "exponential", linspace(-87, 88, S), 5.3e-6, 0);
    Failures += sweep(**Drv, "exponential", linspace(-1, 1, S), 2.4e-7, 0);
    Failures += sweep(**Drv, "log", logspace(1e-37, 1e37, S), 3e-7, 1.7e-7);
    Failures += sweep(**Drv, "log", linspace(0.5, 2, S), 3e-7, 1.7e-7);
    Failures += sweep(**Drv, "logistic", linspace(-30, 30, S), 5.3e-6, 0);
    for (const char *T : {"f32", "bf16", "f16"})
      for (bool Precise : {false, true})
        for (double Range : {1.0, 6.0})
          Failures += runElementwiseFusion(
              **Drv, std::string("gelu.") + T, geluText(T, int64_t(1) << 20),
              -Range, Range, MathOptions{Precise});
  }
  return Failures == 0 ? 0 : 1;
}
