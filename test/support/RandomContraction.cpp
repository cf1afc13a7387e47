//===- support/RandomContraction.cpp - Random dot/conv/window ops ---------===//
//
// Part of idxmap. See RandomContraction.h. Shapes stay small (every operand
// and the result at most 96 elements) so that the perturbation checks and
// the enumeration of the maps' domains stay cheap.
//
//===----------------------------------------------------------------------===//
#include "support/RandomContraction.h"

#include <algorithm>
#include <sstream>

namespace idxmap::testing {

namespace {

constexpr int64_t MaxElements = 96;

/// SplitMix64: the same sequence on every platform.
class Rng {
public:
  explicit Rng(uint64_t Seed) : State(Seed) {}
  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ULL);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebULL;
    return Z ^ (Z >> 31);
  }
  /// Uniform in [Lo, Hi].
  int64_t range(int64_t Lo, int64_t Hi) {
    return Lo + int64_t(next() % uint64_t(Hi - Lo + 1));
  }
  bool chance(int Num, int Den) { return range(1, Den) <= Num; }
  /// A random permutation of 0..N-1.
  std::vector<int64_t> perm(size_t N) {
    std::vector<int64_t> P(N);
    for (size_t K = 0; K < N; ++K)
      P[K] = int64_t(K);
    for (size_t K = N; K > 1; --K)
      std::swap(P[K - 1], P[size_t(range(0, int64_t(K) - 1))]);
    return P;
  }

private:
  uint64_t State;
};

std::string dims(const std::vector<int64_t> &D) {
  std::string S;
  for (size_t K = 0; K < D.size(); ++K)
    S += (K ? "," : "") + std::to_string(D[K]);
  return S;
}

std::string shape(const char *T, const std::vector<int64_t> &D) {
  return std::string(T) + "[" + dims(D) + "]";
}

int64_t count(const std::vector<int64_t> &D) {
  int64_t N = 1;
  for (int64_t X : D)
    N *= X;
  return N;
}

/// An instance under construction: parameters, the root line, the
/// computations it calls.
struct Instance {
  std::vector<std::string> Params; ///< shapes
  std::string RootShape, RootText, Callees;
  std::vector<std::vector<bool>> Exact;
  HloOpcode Op = HloOpcode::Dot;

  std::string param(const std::string &Shape) {
    Params.push_back(Shape);
    return "p" + std::to_string(Params.size() - 1);
  }
  RandomFusion finish() const;
};

RandomFusion Instance::finish() const {
  std::ostringstream OS;
  OS << "HloModule m\n\n" << Callees << "fused_computation {\n";
  for (size_t K = 0; K < Params.size(); ++K)
    OS << "  p" << K << " = " << Params[K] << " parameter(" << K << ")\n";
  OS << "  ROOT r = " << RootShape << " " << RootText << "\n}\n\nENTRY e {\n";
  std::string Args;
  for (size_t K = 0; K < Params.size(); ++K) {
    OS << "  a" << K << " = " << Params[K] << " parameter(" << K << ")\n";
    Args += (K ? ", a" : "a") + std::to_string(K);
  }
  OS << "  ROOT f = " << RootShape << " fusion(" << Args
     << "), kind=kLoop, calls=fused_computation\n}\n";
  RandomFusion F;
  F.Text = OS.str();
  F.NumOutputs = unsigned(Exact.size());
  F.NumParams = unsigned(Params.size());
  F.Exact = Exact;
  F.Ops = {Op};
  return F;
}

/// Dims in [1, 4] per entry of \p N, or empty if over the element cap.
std::vector<int64_t> extents(Rng &R, size_t N) {
  std::vector<int64_t> D;
  for (size_t K = 0; K < N; ++K)
    D.push_back(R.range(1, 4));
  return D;
}

bool dot(Rng &R, Instance &In) {
  size_t NB = size_t(R.range(0, 1)), NC = size_t(R.range(0, 2)),
         NL = size_t(R.range(0, 2)), NR = size_t(R.range(0, 2));
  std::vector<int64_t> B = extents(R, NB), C = extents(R, NC),
                       L = extents(R, NL), Rf = extents(R, NR);
  // Each operand's dims in a random order: batch, contracting, free.
  auto Layout = [&](const std::vector<int64_t> &Free, std::vector<int64_t> &Sh,
                    std::vector<int64_t> &BDims, std::vector<int64_t> &CDims) {
    std::vector<int64_t> P = R.perm(NB + NC + Free.size());
    Sh.assign(P.size(), 0);
    for (size_t K = 0; K < NB; ++K)
      BDims.push_back(P[K]), Sh[size_t(P[K])] = B[K];
    for (size_t K = 0; K < NC; ++K)
      CDims.push_back(P[NB + K]), Sh[size_t(P[NB + K])] = C[K];
    // Free dims keep their relative order (the output lists them so).
    std::vector<int64_t> FreePos(P.begin() + long(NB + NC), P.end());
    std::sort(FreePos.begin(), FreePos.end());
    for (size_t K = 0; K < Free.size(); ++K)
      Sh[size_t(FreePos[K])] = Free[K];
  };
  std::vector<int64_t> LS, RS, LB, LC, RB, RC;
  Layout(L, LS, LB, LC);
  Layout(Rf, RS, RB, RC);
  std::vector<int64_t> Out = B;
  Out.insert(Out.end(), L.begin(), L.end());
  Out.insert(Out.end(), Rf.begin(), Rf.end());
  if (count(LS) > MaxElements || count(RS) > MaxElements ||
      count(Out) > MaxElements)
    return false;
  bool Float = R.chance(3, 4);
  const char *T = Float ? "f32" : "s32";
  std::string A = In.param(shape(T, LS)), Bp = In.param(shape(T, RS));
  In.RootShape = shape(T, Out);
  In.RootText = "dot(" + A + ", " + Bp + "), lhs_batch_dims={" + dims(LB) +
                "}, rhs_batch_dims={" + dims(RB) + "}, lhs_contracting_dims={" +
                dims(LC) + "}, rhs_contracting_dims={" + dims(RC) + "}";
  In.Exact = {{Float, Float}};
  return true;
}

/// A window over \p N elements with at least one output position;
/// \p Reversal allowed for convolutions.
bool window(Rng &R, int64_t N, bool Reversal, WindowDim &W, int64_t &Out) {
  W.Size = R.range(1, 3);
  W.Stride = R.range(1, 2);
  W.PadLo = R.chance(1, 3) ? R.range(-1, 2) : 0;
  W.PadHi = R.chance(1, 3) ? R.range(-1, 2) : 0;
  W.BaseDilation = R.chance(1, 4) ? 2 : 1;
  W.WindowDilation = R.chance(1, 4) ? 2 : 1;
  W.Reversal = Reversal && R.chance(1, 4);
  int64_t Padded = W.PadLo + (N - 1) * W.BaseDilation + 1 + W.PadHi;
  int64_t Dilated = (W.Size - 1) * W.WindowDilation + 1;
  if (Padded < Dilated)
    return false;
  Out = (Padded - Dilated) / W.Stride + 1;
  return true;
}

std::string windowText(const std::vector<WindowDim> &Ws) {
  if (Ws.empty())
    return "{}";
  std::string Size, Stride, Pad, Lhs, Rhs, Rev;
  for (size_t K = 0; K < Ws.size(); ++K) {
    std::string X = K ? "x" : "";
    Size += X + std::to_string(Ws[K].Size);
    Stride += X + std::to_string(Ws[K].Stride);
    Pad += X + std::to_string(Ws[K].PadLo) + "_" + std::to_string(Ws[K].PadHi);
    Lhs += X + std::to_string(Ws[K].BaseDilation);
    Rhs += X + std::to_string(Ws[K].WindowDilation);
    Rev += X + std::to_string(int(Ws[K].Reversal));
  }
  return "{size=" + Size + " stride=" + Stride + " pad=" + Pad +
         " lhs_dilate=" + Lhs + " rhs_dilate=" + Rhs + " rhs_reversal=" + Rev +
         "}";
}

/// True if every window position of every output lies on a real element
/// (no padding, no hole): then every kernel element is read by every
/// output.
bool windowAlwaysInside(const WindowDim &W) {
  return W.PadLo <= 0 && W.PadHi <= 0 && W.BaseDilation == 1;
}

/// dim_labels text for one operand: \p Perm[k] is the position of role k
/// (first the two letters, then spatial 0, 1, ...).
std::string labels(const std::vector<int64_t> &Perm, char A, char B) {
  std::string S(Perm.size(), '?');
  S[size_t(Perm[0])] = A;
  S[size_t(Perm[1])] = B;
  for (size_t K = 2; K < Perm.size(); ++K)
    S[size_t(Perm[K])] = char('0' + K - 2);
  return S;
}

bool convolution(Rng &R, Instance &In) {
  size_t NS = size_t(R.range(0, 2));
  int64_t FG = 1, BG = 1;
  int Mode = int(R.range(0, 2)); // plain, feature groups, batch groups
  if (Mode == 1)
    FG = R.range(2, 3);
  if (Mode == 2)
    BG = R.range(2, 3);
  int64_t OutBatch = R.range(1, 2), GroupIn = R.range(1, 2);
  int64_t OutF = R.range(1, 2) * FG * BG;
  std::vector<int64_t> InSp, KSp, OutSp;
  std::vector<WindowDim> Ws(NS);
  bool KernelExact = BG == 1;
  for (size_t S = 0; S < NS; ++S) {
    int64_t N = R.range(1, 5), O;
    if (!window(R, N, /*Reversal=*/true, Ws[S], O))
      return false;
    InSp.push_back(N);
    KSp.push_back(Ws[S].Size);
    OutSp.push_back(O);
    KernelExact = KernelExact && windowAlwaysInside(Ws[S]);
  }
  // Role order: batch/feature (input, output), input/output feature
  // (kernel), then the spatial dims; each operand's dims are permuted.
  std::vector<int64_t> PI = R.perm(NS + 2), PK = R.perm(NS + 2),
                       PO = R.perm(NS + 2);
  std::vector<int64_t> IS(NS + 2), KS(NS + 2), OS(NS + 2);
  IS[size_t(PI[0])] = OutBatch * BG, IS[size_t(PI[1])] = GroupIn * FG;
  KS[size_t(PK[0])] = GroupIn, KS[size_t(PK[1])] = OutF;
  OS[size_t(PO[0])] = OutBatch, OS[size_t(PO[1])] = OutF;
  for (size_t S = 0; S < NS; ++S) {
    IS[size_t(PI[S + 2])] = InSp[S];
    KS[size_t(PK[S + 2])] = KSp[S];
    OS[size_t(PO[S + 2])] = OutSp[S];
  }
  if (count(IS) > MaxElements || count(KS) > MaxElements ||
      count(OS) > MaxElements)
    return false;
  std::string A = In.param(shape("f32", IS)), K = In.param(shape("f32", KS));
  In.RootShape = shape("f32", OS);
  In.RootText = "convolution(" + A + ", " + K + "), window=" + windowText(Ws) +
                ", dim_labels=" + labels(PI, 'b', 'f') + "_" +
                labels(PK, 'i', 'o') + "->" + labels(PO, 'b', 'f');
  if (FG > 1)
    In.RootText += ", feature_group_count=" + std::to_string(FG);
  if (BG > 1)
    In.RootText += ", batch_group_count=" + std::to_string(BG);
  // XLA's batch-group map names every group: the input is inexact then.
  In.Exact = {{BG == 1, KernelExact}};
  return true;
}

const char *Reducers = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}

add2 {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = f32[] add(a1, b1)
  ROOT t = (f32[], f32[]) tuple(s0, s1)
}

neg {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}

add3 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  s = f32[] add(a, b)
  ROOT t = f32[] add(s, c)
}

)";

bool reduceWindow(Rng &R, Instance &In) {
  size_t Rank = size_t(R.range(0, 3));
  int64_t N = R.chance(1, 4) ? 2 : 1;
  std::vector<int64_t> Dims, Out;
  std::vector<WindowDim> Ws(Rank);
  for (size_t D = 0; D < Rank; ++D) {
    int64_t E = R.range(1, 5), O;
    if (!window(R, E, /*Reversal=*/false, Ws[D], O))
      return false;
    Dims.push_back(E);
    Out.push_back(O);
  }
  if (count(Dims) > MaxElements || count(Out) > MaxElements)
    return false;
  bool Add = N == 2 || R.chance(2, 3);
  std::string Args;
  for (int64_t K = 0; K < N; ++K)
    Args += (K ? ", " : "") + In.param(shape("f32", Dims));
  for (int64_t K = 0; K < N; ++K)
    Args += ", " + In.param("f32[]");
  In.Callees = Reducers;
  In.RootShape = N == 1
                     ? shape("f32", Out)
                     : "(" + shape("f32", Out) + ", " + shape("f32", Out) + ")";
  In.RootText = "reduce-window(" + Args + "), window=" + windowText(Ws) +
                ", to_apply=" +
                (N == 2 ? "add2"
                 : Add  ? "add"
                        : "max");
  // Output k reads input k and init k (sums: exactly); XLA's map gives
  // every input to every output.
  for (int64_t O = 0; O < N; ++O) {
    std::vector<bool> E(size_t(2 * N), false);
    E[size_t(O)] = E[size_t(N + O)] = Add;
    In.Exact.push_back(E);
  }
  return true;
}

bool map(Rng &R, Instance &In) {
  int64_t N = R.range(1, 3);
  std::vector<int64_t> Dims = extents(R, size_t(R.range(0, 3)));
  std::string Args;
  for (int64_t K = 0; K < N; ++K)
    Args += (K ? ", " : "") + In.param(shape("f32", Dims));
  std::vector<int64_t> All(Dims.size());
  for (size_t D = 0; D < All.size(); ++D)
    All[D] = int64_t(D);
  In.Callees = Reducers;
  In.RootShape = shape("f32", Dims);
  In.RootText = "map(" + Args + "), dimensions={" + dims(All) + "}, to_apply=" +
                (N == 1   ? "neg"
                 : N == 2 ? "add"
                          : "add3");
  In.Exact = {std::vector<bool>(size_t(N), true)};
  return true;
}

} // namespace

const std::vector<HloOpcode> &contractionSingleOps() {
  static const std::vector<HloOpcode> Ops = {
      HloOpcode::Dot, HloOpcode::Convolution, HloOpcode::ReduceWindow,
      HloOpcode::Map};
  return Ops;
}

RandomFusion generateContractionFusion(uint64_t Seed, HloOpcode Op) {
  Rng R(Seed);
  for (int Try = 0; Try < 1000; ++Try) {
    Instance In;
    In.Op = Op;
    bool Ok = Op == HloOpcode::Dot            ? dot(R, In)
              : Op == HloOpcode::Convolution  ? convolution(R, In)
              : Op == HloOpcode::ReduceWindow ? reduceWindow(R, In)
              : Op == HloOpcode::Map          ? map(R, In)
                                              : false;
    if (Ok)
      return In.finish();
  }
  return {};
}

} // namespace idxmap::testing
