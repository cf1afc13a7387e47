//===- RandomRowNormalizations.cpp - Random softmax-like fusions ---------===//
//
// Part of idxmap. Generates seeded random row normalizations (reductions
// whose results are broadcast back along the rows: the row normalization
// emitter's fusions) as HLO text and checks every kernel against the
// reference interpreter on the GPU (fresh random inputs in [-2, 2), outputs
// poisoned, kernelTolerance). A fusion is
//   - softmax (max, exp(x - max), sum, divide; the sum's init sometimes 1:
//     "quiet" softmax), log-softmax, layer norm (mean, variance of x - mean,
//     scale and shift by per-column parameters), RMS norm, min-max scaling
//     (min and max in one level), or an s32 `x - max + min`;
//   - over rows of 2 .. 12289 elements (odd, prime and power-of-two lengths)
//     shaped [rows, n], [a, b, n], [rows, n1, n2] (two reduced dims),
//     [n, rows]{0,1} (rows along dim 0) or [n] (one row);
//   - in f32, bf16 or f16, computed in the input type or converted to f32
//     and back (as XLA does), sometimes with the per-row max or sum as a
//     second output;
//   - emitted with libdevice math (odd seeds) or the fast forms (even).
//
// Exit 0 when every kernel matches, 1 otherwise, 77 without a CUDA driver
// (ctest skips). --dry-run needs no driver: it generates, emits (every
// fusion must take the row normalization emitter), checks the launch
// metadata and the PTX with ptxas when --ptxas names one, and runs the
// interpreter.
//
//   random_row_normalizations [--seed N] [--count N] [--max-elements N]
//                             [--dry-run] [--ptxas PATH] [--print] [-v]
//
//===----------------------------------------------------------------------===//

#include "idxmap/Emit.h"
#include "idxmap/Fusion.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/Runner.h"
#include "support/GpuTestDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace idxmap;

namespace {

enum class Pattern { Softmax, LogSoftmax, LayerNorm, RmsNorm, MinMax, IntMax };

const char *patternName(Pattern P) {
  switch (P) {
  case Pattern::Softmax:
    return "softmax";
  case Pattern::LogSoftmax:
    return "log-softmax";
  case Pattern::LayerNorm:
    return "layer-norm";
  case Pattern::RmsNorm:
    return "rms-norm";
  case Pattern::MinMax:
    return "min-max";
  case Pattern::IntMax:
    return "s32 x-max+min";
  }
  return "?";
}

struct Case {
  std::string Text;
  std::string Summary;
};

/// Builds one module: shapes, then the computation line by line.
class Generator {
public:
  Generator(uint64_t Seed, int64_t MaxElements)
      : R(Seed), MaxElements(MaxElements) {}
  Case run();

private:
  uint64_t below(uint64_t N) { return N ? R() % N : 0; }
  bool chance(unsigned Percent) { return below(100) < Percent; }
  template <typename T> T pick(const std::vector<T> &V) {
    return V[below(V.size())];
  }
  static std::string list(const std::vector<int64_t> &V) {
    std::string S = "{";
    for (size_t K = 0; K < V.size(); ++K)
      S += (K ? "," : "") + std::to_string(V[K]);
    return S + "}";
  }
  static std::string shape(const std::string &Ty,
                           const std::vector<int64_t> &D) {
    std::string S = Ty + "[";
    for (size_t K = 0; K < D.size(); ++K)
      S += (K ? "," : "") + std::to_string(D[K]);
    return S + "]";
  }
  std::string in(const std::string &Ty) const {
    return shape(Ty, Dims) + (Layout.empty() ? "" : list(Layout));
  }
  std::string kept(const std::string &Ty) const { return shape(Ty, Kept); }
  std::string red(const std::string &Ty) const { return shape(Ty, RedShape); }
  std::string emit(const std::string &Shape, const std::string &Rhs) {
    std::string V = "v" + std::to_string(Lines.size());
    Lines.push_back(V + " = " + Shape + " " + Rhs);
    return V;
  }
  std::string scalar(const std::string &Ty, const std::string &Value) {
    return emit(Ty + "[]", "constant(" + Value + ")");
  }
  /// reduce(X) with reducer Op of type Ty and init value Init.
  std::string reduce(const std::string &X, const std::string &Ty,
                     const std::string &Op, const std::string &Init) {
    std::string Name = Op + "_" + Ty;
    Reducers[Name] = Name + " {\n  a = " + Ty + "[] parameter(0)\n  b = " + Ty +
                     "[] parameter(1)\n  ROOT r = " + Ty + "[] " + Op +
                     "(a, b)\n}\n";
    std::string I = scalar(Ty, Init);
    return emit(kept(Ty), "reduce(" + X + ", " + I + "), dimensions=" +
                              list(Reduced) + ", to_apply=" + Name);
  }
  /// A per-row value broadcast back to the input's shape.
  std::string back(const std::string &V, const std::string &Ty) {
    return emit(in(Ty), "broadcast(" + V + "), dimensions=" + list(KeptIdx));
  }
  std::string rowSplat(const std::string &Ty, const std::string &Value) {
    return emit(kept(Ty),
                "broadcast(" + scalar(Ty, Value) + "), dimensions={}");
  }

  std::mt19937_64 R;
  int64_t MaxElements;
  std::vector<int64_t> Dims, Layout, Reduced, Kept, KeptIdx, RedShape, RedIdx;
  std::vector<std::pair<std::string, std::string>> Params;
  std::vector<std::string> Lines;
  std::map<std::string, std::string> Reducers;
};

Case Generator::run() {
  Case Out;
  // Row length and count.
  int64_t Len = pick<int64_t>({2,    3,    7,    8,    24,   31,   32,
                               97,   128,  255,  300,  768,  1000, 1001,
                               1024, 2048, 4096, 4099, 8192, 12289});
  int64_t MaxRows = std::max<int64_t>(1, MaxElements / Len);
  int64_t Rows = std::min<int64_t>(
      MaxRows, pick<int64_t>({1, 2, 5, 37, 128, 333, 1000, 4096, 20000}));
  unsigned Form = unsigned(below(5));
  if (Form == 0) { // [rows, n]
    Dims = {Rows, Len};
    Reduced = {1};
  } else if (Form == 1) { // [a, b, n]
    int64_t A = pick<int64_t>({1, 2, 3, 5});
    Dims = {A, std::max<int64_t>(1, Rows / A), Len};
    Reduced = {2};
  } else if (Form == 2) { // [rows, n1, n2], both reduced
    int64_t N1 = pick<int64_t>({2, 3, 4, 8});
    Dims = {Rows, N1, std::max<int64_t>(1, Len / N1)};
    Reduced = {1, 2};
  } else if (Form == 3) { // [n, rows]{0,1}: rows along dim 0
    Dims = {Len, Rows};
    Layout = {0, 1};
    Reduced = {0};
  } else { // one row
    Dims = {Len};
    Reduced = {0};
  }
  for (int64_t D = 0; D < int64_t(Dims.size()); ++D) {
    if (std::find(Reduced.begin(), Reduced.end(), D) == Reduced.end()) {
      Kept.push_back(Dims[D]);
      KeptIdx.push_back(D);
    } else {
      RedShape.push_back(Dims[D]);
      RedIdx.push_back(D);
    }
  }
  Pattern P = pick<Pattern>(
      {Pattern::Softmax, Pattern::Softmax, Pattern::LogSoftmax,
       Pattern::LayerNorm, Pattern::RmsNorm, Pattern::MinMax, Pattern::IntMax});
  std::string Ty = P == Pattern::IntMax
                       ? "s32"
                       : pick<std::string>({"f32", "f32", "bf16", "f16"});
  bool Up = Ty != "f32" && Ty != "s32" && chance(70);
  std::string Ct = Up ? "f32" : Ty; // compute type
  Params.push_back({"x", in(Ty)});
  std::string X = "x";
  if (Up)
    X = emit(in(Ct), "convert(x)");
  std::string Y, Side, SideTy = Ct;
  int64_t RowLen = 1;
  for (int64_t D : RedShape)
    RowLen *= D;
  switch (P) {
  case Pattern::Softmax:
  case Pattern::LogSoftmax: {
    std::string Mx = reduce(X, Ct, "maximum", "-inf");
    std::string Sh = emit(in(Ct), "subtract(" + X + ", " + back(Mx, Ct) + ")");
    std::string E = emit(in(Ct), "exponential(" + Sh + ")");
    bool Quiet = P == Pattern::Softmax && chance(25);
    std::string Sum = reduce(E, Ct, "add", Quiet ? "1" : "0");
    if (P == Pattern::Softmax) {
      Y = emit(in(Ct), "divide(" + E + ", " + back(Sum, Ct) + ")");
    } else {
      std::string L = emit(kept(Ct), "log(" + Sum + ")");
      Y = emit(in(Ct), "subtract(" + Sh + ", " + back(L, Ct) + ")");
    }
    Side = chance(30) ? (chance(50) ? Mx : Sum) : "";
    break;
  }
  case Pattern::LayerNorm:
  case Pattern::RmsNorm: {
    std::string NB = rowSplat(Ct, std::to_string(RowLen));
    std::string D = X;
    if (P == Pattern::LayerNorm) {
      std::string Sum = reduce(X, Ct, "add", "0");
      std::string Mean = emit(kept(Ct), "divide(" + Sum + ", " + NB + ")");
      D = emit(in(Ct), "subtract(" + X + ", " + back(Mean, Ct) + ")");
      Side = chance(30) ? Mean : "";
    }
    std::string Sq = emit(in(Ct), "multiply(" + D + ", " + D + ")");
    std::string Ss = reduce(Sq, Ct, "add", "0");
    std::string Var = emit(kept(Ct), "divide(" + Ss + ", " + NB + ")");
    std::string Ve =
        emit(kept(Ct), "add(" + Var + ", " + rowSplat(Ct, "0.001") + ")");
    std::string Inv = emit(kept(Ct), "rsqrt(" + Ve + ")");
    Y = emit(in(Ct), "multiply(" + D + ", " + back(Inv, Ct) + ")");
    if (chance(60)) {
      // Per-column scale and shift, broadcast over the rows.
      Params.push_back({"gamma", red(Ct)});
      Params.push_back({"beta", red(Ct)});
      std::string G =
          emit(in(Ct), "broadcast(gamma), dimensions=" + list(RedIdx));
      std::string Bt =
          emit(in(Ct), "broadcast(beta), dimensions=" + list(RedIdx));
      Y = emit(in(Ct), "multiply(" + Y + ", " + G + ")");
      Y = emit(in(Ct), "add(" + Y + ", " + Bt + ")");
    }
    break;
  }
  case Pattern::MinMax: {
    std::string Mn = reduce(X, Ct, "minimum", "inf");
    std::string Mx = reduce(X, Ct, "maximum", "-inf");
    std::string Rg = emit(kept(Ct), "subtract(" + Mx + ", " + Mn + ")");
    std::string Dn =
        emit(kept(Ct), "add(" + Rg + ", " + rowSplat(Ct, "1") + ")");
    std::string Sh = emit(in(Ct), "subtract(" + X + ", " + back(Mn, Ct) + ")");
    Y = emit(in(Ct), "divide(" + Sh + ", " + back(Dn, Ct) + ")");
    Side = chance(30) ? Rg : "";
    break;
  }
  case Pattern::IntMax: {
    std::string Mx = reduce(X, Ct, "maximum", "-2147483648");
    std::string Mn = reduce(X, Ct, "minimum", "2147483647");
    std::string T = emit(kept(Ct), "subtract(" + Mn + ", " + Mx + ")");
    Y = emit(in(Ct), "add(" + X + ", " + back(T, Ct) + ")");
    Side = chance(30) ? Mx : "";
    break;
  }
  }
  std::string OutTy = Ty;
  if (Up)
    Y = emit(in(Ty), "convert(" + Y + ")");
  // The root.
  std::string RootShape = in(OutTy);
  std::string Root = Y;
  if (!Side.empty()) {
    RootShape = "(" + in(OutTy) + ", " + kept(SideTy) + ")";
    Root = emit(RootShape, "tuple(" + Y + ", " + Side + ")");
  }
  std::ostringstream S;
  S << "HloModule random_row_normalization\n\n";
  for (const auto &[Name, Text] : Reducers)
    S << Text << "\n";
  S << "fused {\n";
  for (size_t K = 0; K < Params.size(); ++K)
    S << "  " << Params[K].first << " = " << Params[K].second << " parameter("
      << K << ")\n";
  for (size_t K = 0; K < Lines.size(); ++K)
    S << "  " << (Lines[K].rfind(Root + " =", 0) == 0 ? "ROOT " : "")
      << Lines[K] << "\n";
  S << "}\n\nENTRY main {\n";
  std::string Args;
  for (size_t K = 0; K < Params.size(); ++K) {
    S << "  a" << K << " = " << Params[K].second << " parameter(" << K << ")\n";
    Args += (K ? ", a" : "a") + std::to_string(K);
  }
  S << "  ROOT fusion = " << RootShape << " fusion(" << Args
    << "), kind=kInput, calls=fused\n}\n";
  Out.Text = S.str();
  Out.Summary = std::string(patternName(P)) + " " + Ty + (Up ? "->f32" : "") +
                " " + in(Ty) + " dims=" + list(Reduced) +
                (Side.empty() ? "" : " +row output");
  return Out;
}

/// Runs ptxas on \p Ptx; empty when it accepts it.
std::string runPtxas(const std::string &Ptxas, const std::string &Ptx,
                     uint64_t Seed) {
  std::string Base = "/tmp/random_row_norm_" + std::to_string(Seed) + "_" +
                     std::to_string(uint64_t(std::rand()));
  {
    std::ofstream F(Base + ".ptx");
    F << Ptx;
  }
  std::string Cmd = Ptxas + " -arch=sm_90 -o " + Base + ".cubin " + Base +
                    ".ptx > " + Base + ".log 2>&1";
  std::string Log;
  if (std::system(Cmd.c_str()) != 0) {
    std::ifstream L(Base + ".log");
    std::stringstream SS;
    SS << L.rdbuf();
    Log = "ptxas failed: " + SS.str();
  }
  std::remove((Base + ".ptx").c_str());
  std::remove((Base + ".cubin").c_str());
  std::remove((Base + ".log").c_str());
  return Log;
}

} // namespace

int main(int Argc, char **Argv) {
  testing::GpuTestFlags Flags;
  Flags.Count = 100;
  Flags.MaxElements = int64_t(1) << 20;
  Flags.MinMaxElements = 16;
  if (auto Exit = testing::parseGpuTestArgs(Argc, Argv,
                                            "random_row_normalizations", Flags))
    return *Exit;
  auto Drv = testing::openTestDriver(Flags);
  if (auto Exit = testing::skipWithoutDriver(Drv, Flags.DryRun))
    return *Exit;
  if (!Flags.DryRun)
    std::printf("device: %s\n", (*Drv)->device().Name.c_str());

  unsigned Checked = 0, Failed = 0;
  for (uint64_t S = Flags.Seed; S < Flags.Seed + Flags.Count; ++S) {
    Case C = Generator(S, Flags.MaxElements).run();
    auto Fail = [&](const std::string &Why) {
      std::printf("FAIL seed %llu (%s): %s\n%s\n", (unsigned long long)S,
                  C.Summary.c_str(), Why.c_str(), C.Text.c_str());
      ++Failed;
    };
    auto M = parseHloModule(C.Text, "random-row-norm-" + std::to_string(S));
    if (!M) {
      Fail("generated module does not parse: " + M.error().str());
      continue;
    }
    if (Flags.Print)
      std::printf("seed %llu: %s\n%s\n", (unsigned long long)S,
                  C.Summary.c_str(), C.Text.c_str());
    const HloInstruction *Fusion = (*M)->fusions().front();
    // Odd seeds with libdevice math (exact division), even ones with the
    // fast forms (approximate exp, division by a row value as a
    // multiplication by its reciprocal).
    bool Precise = S % 2 == 1;
    EmitOptions EO;
    EO.HostIr = Flags.Simulate;
    EO.Target.PreciseMath = Precise;
    auto R = emitModule(**M, EO);
    if (!R) {
      Fail("emit: " + R.error().Message);
      continue;
    }
    const KernelInfo &K = R->Kernels.front();
    if (R->Kernels.size() != 1 || K.Emitter != "row normalization") {
      Fail("expected one row normalization kernel, got the " + K.Emitter +
           " emitter");
      continue;
    }
    if (K.Block[0] == 0 || K.Block[0] > 1024 || K.Grid[0] == 0 ||
        K.SharedBytes > 48 * 1024) {
      Fail("bad launch: grid " + std::to_string(K.Grid[0]) + ", block " +
           std::to_string(K.Block[0]));
      continue;
    }
    if (!Flags.Ptxas.empty())
      if (std::string Bad = runPtxas(Flags.Ptxas, R->Ptx, S); !Bad.empty()) {
        Fail(Bad);
        continue;
      }
    if (Flags.DryRun) {
      const HloComputation &FC = *Fusion->fusedComputation();
      std::vector<Literal> Args;
      for (int64_t I = 0; I < FC.parameterCount(); ++I) {
        Literal L(Shape(FC.parameter(I)->shape().Type,
                        FC.parameter(I)->shape().Dims));
        L.fillRandom(S * 1000003 + uint64_t(I), -2.0, 2.0);
        Args.push_back(std::move(L));
      }
      if (auto Ev = evaluate(FC, Args); !Ev) {
        Fail("interpreter: " + Ev.error().str());
        continue;
      }
      ++Checked;
      if (Flags.Verbose)
        std::printf("ok seed %llu %s: grid %u block %u\n",
                    (unsigned long long)S, C.Summary.c_str(), K.Grid[0],
                    K.Block[0]);
      continue;
    }
    RunOptions RO;
    RO.Seed = S;
    RO.Tol = kernelTolerance(*Fusion, Precise);
    std::ostringstream Log;
    auto Res = runKernels(**Drv, **M, Flags.Simulate ? R->LlvmIr : R->Ptx,
                          R->Kernels, RO, Log);
    if (!Res) {
      Fail("run: " + Res.error().Message);
      continue;
    }
    bool Ok = true;
    std::string Reports;
    for (const KernelRunResult &KR : *Res) {
      Ok &= KR.Ok;
      for (const std::string &L : KR.OutputReports)
        Reports += "\n  " + L;
    }
    if (!Ok) {
      Fail("mismatch (reproduce: save the module and `idxmap run FILE --seed " +
           std::to_string(S) + (Precise ? " --precise-math`):" : "`):") +
           Reports);
      continue;
    }
    ++Checked;
    if (Flags.Verbose)
      std::printf("ok seed %llu %s:%s\n", (unsigned long long)S,
                  C.Summary.c_str(), Reports.c_str());
  }
  std::printf("random_row_normalizations: %u %s, %u failed (of %u)\n", Checked,
              Flags.DryRun ? "checked (dry run)" : "match", Failed,
              Flags.Count);
  return Failed ? 1 : 0;
}
