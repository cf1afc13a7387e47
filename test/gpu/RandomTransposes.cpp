//===- RandomTransposes.cpp - Random transpose fusions on the GPU ---------===//
//
// Part of idxmap. Generates seeded random transpose fusions as HLO text
// (ranks 2-4, permutations that move the minor dim, extents including odd
// and prime ones from 1 to 1021, f32/bf16/f16/s32, elementwise prologue and
// epilogue, sometimes a second operand in the output's order and a side
// output in the input's order), keeps those the analysis sends to the
// transpose emitter, emits each to PTX and runs it through the CUDA driver
// against the reference interpreter. Exit 0 when every kernel matches, 1 on
// a mismatch or an emission failure, 77 without a CUDA driver. Every third
// fusion is emitted with a random tiling (sub-tiles per block, warps,
// vector widths of the reads and writes). --dry-run
// needs no driver: it emits every fusion, checks the launch metadata and
// runs the interpreter on it; --print also prints each module.
//
//   random_transposes [--seed N] [--count N] [--max-elements N] [--dry-run]
//                     [--print] [-v]
//
//===----------------------------------------------------------------------===//

#include "idxmap/Emit.h"
#include "idxmap/Fusion.h"
#include "idxmap/Runner.h"
#include "support/GpuTestDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace idxmap;

namespace {

std::string shapeText(const std::string &Type, const std::vector<int64_t> &D) {
  std::string S = Type + "[";
  for (size_t K = 0; K < D.size(); ++K)
    S += (K ? "," : "") + std::to_string(D[K]);
  return S + "]";
}

/// One random transpose fusion module (text).
std::string generate(uint64_t Seed, int64_t MaxElements) {
  std::mt19937_64 Rng(Seed);
  auto Pick = [&](auto const &V) { return V[Rng() % V.size()]; };
  static const std::vector<int64_t> Big = {
      16, 17, 19, 23, 29, 31, 32,  33,  37,  48,  50,
      64, 65, 97, 127, 128, 131, 257, 509, 1021};
  static const std::vector<int64_t> Small = {1, 2, 3, 5, 7, 16, 17};
  static const std::vector<std::string> Types = {"f32", "bf16", "f16", "s32"};
  std::string Ty = Pick(Types);
  bool IsFloat = Ty != "s32";
  int64_t Rank = 2 + int64_t(Rng() % 3);
  std::vector<int64_t> Dims, Perm(Rank);
  do {
    Dims.clear();
    for (int64_t K = 0; K < Rank; ++K)
      Dims.push_back(K == Rank - 1 || Rng() % 2 ? Pick(Big) : Pick(Small));
  } while (std::accumulate(Dims.begin(), Dims.end(), int64_t(1),
                           std::multiplies<int64_t>()) > MaxElements);
  std::iota(Perm.begin(), Perm.end(), 0);
  do
    std::shuffle(Perm.begin(), Perm.end(), Rng);
  while (Perm.back() == Rank - 1);
  std::vector<int64_t> OutDims;
  for (int64_t P : Perm)
    OutDims.push_back(Dims[P]);
  std::string In = shapeText(Ty, Dims), Out = shapeText(Ty, OutDims);

  std::ostringstream B;
  int N = 0;
  auto Fresh = [&] { return "v" + std::to_string(N++); };
  // A random elementwise op on X (shape Sh); returns the new name.
  auto Unary = [&](const std::string &X, const std::string &Sh) {
    std::string V = Fresh();
    static const std::vector<std::string> FloatOps = {
        "negate", "abs", "exponential", "tanh", "sine", "square"};
    static const std::vector<std::string> IntOps = {"negate", "abs", "double",
                                                    "square"};
    std::string Op = IsFloat ? Pick(FloatOps) : Pick(IntOps);
    if (Op == "square")
      B << "  " << V << " = " << Sh << " multiply(" << X << ", " << X << ")\n";
    else if (Op == "double")
      B << "  " << V << " = " << Sh << " add(" << X << ", " << X << ")\n";
    else
      B << "  " << V << " = " << Sh << " " << Op << "(" << X << ")\n";
    return V;
  };
  bool SecondOperand = Rng() % 3 == 0, SideOutput = Rng() % 4 == 0;
  B << "HloModule random_transpose_" << Seed << "\n\nfused {\n";
  B << "  p0 = " << In << " parameter(0)\n";
  if (SecondOperand)
    B << "  p1 = " << Out << " parameter(1)\n";
  std::string X = "p0";
  for (int64_t K = Rng() % 3; K > 0; --K)
    X = Unary(X, In);
  std::string Pro = X;
  std::string T = Fresh();
  B << "  " << T << " = " << Out << " transpose(" << X << "), dimensions={";
  for (int64_t K = 0; K < Rank; ++K)
    B << (K ? "," : "") << Perm[K];
  B << "}\n";
  X = T;
  for (int64_t K = Rng() % 3; K > 0; --K)
    X = Unary(X, Out);
  if (SecondOperand) {
    std::string V = Fresh();
    B << "  " << V << " = " << Out << " add(" << X << ", p1)\n";
    X = V;
  }
  std::string RootType = Out;
  if (SideOutput) {
    std::string V = Fresh();
    B << "  ROOT " << V << " = (" << Out << ", " << In << ") tuple(" << X
      << ", " << Pro << ")\n";
    RootType = "(" + Out + ", " + In + ")";
  } else {
    // Make the last instruction the root.
    std::string S = B.str();
    size_t Pos = S.rfind("\n  ", S.size() - 2);
    S.insert(Pos + 3, "ROOT ");
    B.str(S);
    B.seekp(0, std::ios_base::end);
  }
  B << "}\n\nENTRY main {\n  a = " << In << " parameter(0)\n";
  if (SecondOperand)
    B << "  b = " << Out << " parameter(1)\n";
  B << "  ROOT fusion = " << RootType << " fusion(a"
    << (SecondOperand ? ", b" : "") << "), kind=kInput, calls=fused\n}\n";
  return B.str();
}

} // namespace

int main(int Argc, char **Argv) {
  testing::GpuTestFlags Flags;
  Flags.MaxElements = 1 << 18;
  Flags.TakesPtxas = false;
  Flags.PrintMeansDryRun = true; // a dry run that prints each module
  if (auto Exit =
          testing::parseGpuTestArgs(Argc, Argv, "random_transposes", Flags))
    return *Exit;
  auto Drv = testing::openTestDriver(Flags);
  if (auto Exit = testing::skipWithoutDriver(Drv, Flags.DryRun))
    return *Exit;
  unsigned Run = 0, Failed = 0, Skipped = 0;
  uint64_t Elements = 0;
  std::map<std::string, unsigned> Types;
  for (uint64_t S = Flags.Seed;
       Run < Flags.Count && S < Flags.Seed + 100 * uint64_t(Flags.Count); ++S) {
    std::string Text = generate(S, S % 2 ? 4096 : Flags.MaxElements);
    auto M = parseHloModule(Text, "random-transpose-" + std::to_string(S));
    if (!M) {
      std::printf("FAIL seed %llu: generated module does not parse:\n%s\n%s\n",
                  (unsigned long long)S, M.error().str().c_str(),
                  Text.c_str());
      ++Failed;
      continue;
    }
    const HloInstruction *Fusion = (*M)->fusions().front();
    if (analyzeFusion(*Fusion).Kind != EmitterKind::Transpose) {
      ++Skipped;
      continue;
    }
    ++Run;
    // libdevice math: random chains of transcendental ops amplify the
    // approximations' errors (sin(exp(exp(x))) in bf16); this test checks
    // the emitter's logic, the approximations are measured on their own
    // (test/unit/codegen/lower/LowerGpu.cpp).
    EmitOptions EO;
    EO.HostIr = Flags.Simulate;
    EO.Target.PreciseMath = true;
    // Every third fusion takes a random tiling (sub-tiles, warps, vectors),
    // so that tilings the plan does not choose by default run too.
    if (S % 3 == 2) {
      std::mt19937_64 K(S * 0x9e3779b97f4a7c15ULL);
      EO.Tuning.TrSubP = int64_t(1) << (K() % 3);
      EO.Tuning.TrSubM = int64_t(1) << (K() % 2);
      EO.Tuning.TrWarps = int64_t(2) << (K() % 3);
      // Vector tiles of every element size (the plan rounds a width down
      // to one the extents allow; 0 leaves the plan's choice).
      EO.Tuning.TrWriteVec = int64_t(K() % 4);
      EO.Tuning.TrReadVec = int64_t(K() % 3);
    }
    const std::string Knobs = printTuning(EO.Tuning);
    auto R = emitModule(**M, EO);
    if (!R) {
      std::printf("FAIL seed %llu (%s): emit: %s\n%s\n",
                  (unsigned long long)S, Knobs.c_str(),
                  R.error().str().c_str(), Text.c_str());
      ++Failed;
      continue;
    }
    ++Types[std::string(primitiveTypeName(Fusion->operand(0)->shape().Type))];
    for (const HloInstruction *P : Fusion->operands())
      Elements += P->shape().numElements();
    if (Flags.DryRun) {
      if (Flags.Print)
        std::printf("seed %llu: %s emitter\n%s", (unsigned long long)S,
                    R->Kernels.front().Emitter.c_str(), Text.c_str());
      // The reference must evaluate the fusion too (the runner's inputs).
      const HloComputation &C = *Fusion->fusedComputation();
      std::vector<Literal> Args;
      for (int64_t I = 0; I < C.parameterCount(); ++I) {
        Literal L(Shape(C.parameter(I)->shape().Type,
                        C.parameter(I)->shape().Dims));
        L.fillRandom(S * 1000003 + uint64_t(I), -2.0, 2.0);
        Args.push_back(std::move(L));
      }
      auto Ev = evaluate(C, Args);
      if (!Ev || R->Kernels.size() != 1 ||
          R->Kernels.front().Params.size() !=
              size_t(C.parameterCount()) + Ev->size()) {
        std::printf("FAIL seed %llu: %s\n%s\n", (unsigned long long)S,
                    Ev ? "kernel parameters do not match the fusion"
                       : Ev.error().str().c_str(),
                    Text.c_str());
        ++Failed;
      }
      continue;
    }
    RunOptions RO;
    RO.Seed = S;
    RO.Tol = kernelTolerance(*Fusion, /*PreciseMath=*/true);
    std::ostringstream Log;
    auto Res = runKernels(**Drv, **M, Flags.Simulate ? R->LlvmIr : R->Ptx,
                          R->Kernels, RO, Log);
    if (!Res) {
      std::printf("FAIL seed %llu (%s): run: %s\n%s\n",
                  (unsigned long long)S, Knobs.c_str(),
                  Res.error().Message.c_str(), Text.c_str());
      ++Failed;
      continue;
    }
    for (const KernelRunResult &K : *Res) {
      if (!K.Ok) {
        std::printf("FAIL seed %llu (%s):\n", (unsigned long long)S,
                    Knobs.c_str());
        for (const std::string &L : K.OutputReports)
          std::printf("  %s\n", L.c_str());
        std::printf("%s\n", Text.c_str());
        ++Failed;
      } else if (Flags.Verbose) {
        for (const std::string &L : K.OutputReports)
          std::printf("ok seed %llu %s\n", (unsigned long long)S, L.c_str());
      }
    }
  }
  std::string TypeList;
  for (const auto &[T, N] : Types)
    TypeList += (TypeList.empty() ? "" : ", ") + std::to_string(N) + " " + T;
  if (Flags.DryRun) {
    std::printf("%u transpose fusions emitted (dry run; %s; %u other fusions "
                "skipped, %llu input elements), %u failed\n",
                Run, TypeList.c_str(), Skipped, (unsigned long long)Elements,
                Failed);
    return Failed || Run < Flags.Count ? 1 : 0;
  }
  std::printf("%u random transpose fusions run on %s (%s; %u other fusions "
              "skipped, %llu input elements), %u failed\n",
              Run, (*Drv)->device().Name.c_str(), TypeList.c_str(), Skipped,
              (unsigned long long)Elements, Failed);
  if (Run < Flags.Count) {
    std::printf("FAIL: only %u transpose fusions generated\n", Run);
    return 1;
  }
  return Failed ? 1 : 0;
}
