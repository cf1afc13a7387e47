//===- analysis/hlo/InterpretContraction.cpp - dot, conv, windows, map ----===//
//
// Part of idxmap. Reference evaluation of dot, convolution, reduce-window,
// select-and-scatter and map with XLA's HloEvaluator semantics, and two
// deliberate choices:
// - dot and convolution convert both operands to the result's element type
//   first (as XLA does), then accumulate float products in f64 and round
//   once (like the reduce fast path: the reference closest to the exact
//   sum; a kernel accumulating in f32 differs by rounding only). Integer
//   products and sums wrap in the result's width, as compiled XLA code
//   does (XLA's evaluator saturates a convolution's integer result; we do
//   not). pred: `or` of `and`s. EvaluateOptions::PerturbUlps scales the
//   rounded result once (not once per addition).
// - reduce-window and select-and-scatter skip window positions in the
//   padding and in the holes of the base dilation (the accumulators start
//   at the init values, so padding reads the init value), walking the
//   window row-major and applying the called computations element by
//   element in the element type, as XLA's evaluator does.
//
//===----------------------------------------------------------------------===//
#include "ContractionOps.h"
#include "ElementKernels.h"

#include <algorithm>
#include <limits>

namespace idxmap {
namespace hlo {

namespace {

std::vector<int64_t> stridesOf(const std::vector<int64_t> &Dims) {
  std::vector<int64_t> S(Dims.size(), 1);
  for (size_t D = Dims.size(); D-- > 1;)
    S[D - 1] = S[D] * Dims[D];
  return S;
}

/// Advances \p Idx over the box \p Dims row-major; false after the last.
bool next(std::vector<int64_t> &Idx, const std::vector<int64_t> &Dims) {
  for (size_t D = Idx.size(); D-- > 0;) {
    if (++Idx[D] < Dims[D])
      return true;
    Idx[D] = 0;
  }
  return false;
}

int64_t product(const std::vector<int64_t> &Dims) {
  int64_t P = 1;
  for (int64_t D : Dims)
    P *= D;
  return P;
}

/// The operand index that window position \p Pos of output index \p O
/// reads in one dimension, or -1 in the padding or a hole of the base
/// dilation.
int64_t windowSource(int64_t O, int64_t Pos, int64_t InSize,
                     const WindowDim &W) {
  int64_t U = O * W.Stride - W.PadLo + Pos * W.WindowDilation;
  if (U < 0 || U % W.BaseDilation != 0)
    return -1;
  int64_t I = U / W.BaseDilation;
  return I < InSize ? I : -1;
}

/// \p L converted to element type \p T (a copy only when it differs).
Literal converted(const Literal &L, PrimitiveType T) {
  if (L.elementType() == T)
    return L;
  Literal Out(Shape(T, L.shape().Dims));
  convertLoop(L.elementType(), T, L.data().data(), Out.data().data(),
              L.elementCount());
  return Out;
}

/// A multiply-accumulate in the arithmetic of one result type.
class Accumulator {
public:
  explicit Accumulator(PrimitiveType T)
      : Float(isFloatType(T)), Pred(T == PrimitiveType::Pred),
        Signed(isSignedIntType(T)), Bits(bitWidth(T)) {}

  void reset() { F = 0, U = 0; }
  void add(const Literal &A, int64_t IA, const Literal &B, int64_t IB) {
    if (Float)
      F += A.getDouble(IA) * B.getDouble(IB);
    else
      U += load(A, IA) * load(B, IB); // pred: counts the true products
  }
  void store(Literal &Out, int64_t I, double Scale) const {
    if (Float)
      Out.setDouble(I, F * Scale);
    else if (Pred)
      Out.setBits(I, U != 0);
    else
      Out.setBits(I, U); // the low bits: wrap-around
  }

private:
  /// The element as a two's-complement value (signed types sign-extended).
  uint64_t load(const Literal &L, int64_t I) const {
    uint64_t V = L.getBits(I);
    if (Signed && Bits < 64 && (V >> (Bits - 1)) & 1)
      V |= ~uint64_t(0) << Bits;
    return V;
  }

  bool Float, Pred, Signed;
  int Bits;
  double F = 0;
  uint64_t U = 0;
};

Expected<Literal> evalDot(const HloInstruction &I,
                          const std::vector<const Literal *> &In,
                          const ContractionEnv &Env) {
  PrimitiveType T = Env.OutShape.Type;
  Literal L = converted(*In[0], T), R = converted(*In[1], T);
  const DotDimensions &DD = I.dotDimensions();
  std::vector<int64_t> LS = stridesOf(L.shape().Dims),
                       RS = stridesOf(R.shape().Dims);
  // Output dim -> (lhs stride, rhs stride); contracting pair -> strides.
  std::vector<int64_t> OutL, OutR, CDims, CL, CR;
  for (size_t K = 0; K < DD.LhsBatch.size(); ++K) {
    OutL.push_back(LS[size_t(DD.LhsBatch[K])]);
    OutR.push_back(RS[size_t(DD.RhsBatch[K])]);
  }
  auto Free = [](const Shape &S, const std::vector<int64_t> &A,
                 const std::vector<int64_t> &B, int64_t D) {
    return std::find(A.begin(), A.end(), D) == A.end() &&
           std::find(B.begin(), B.end(), D) == B.end() && D < S.rank();
  };
  for (int64_t D = 0; D < L.shape().rank(); ++D)
    if (Free(L.shape(), DD.LhsBatch, DD.LhsContracting, D))
      OutL.push_back(LS[size_t(D)]), OutR.push_back(0);
  for (int64_t D = 0; D < R.shape().rank(); ++D)
    if (Free(R.shape(), DD.RhsBatch, DD.RhsContracting, D))
      OutL.push_back(0), OutR.push_back(RS[size_t(D)]);
  for (size_t K = 0; K < DD.LhsContracting.size(); ++K) {
    CDims.push_back(L.shape().Dims[size_t(DD.LhsContracting[K])]);
    CL.push_back(LS[size_t(DD.LhsContracting[K])]);
    CR.push_back(RS[size_t(DD.RhsContracting[K])]);
  }
  Literal Out(Env.OutShape);
  const std::vector<int64_t> &ODims = Env.OutShape.Dims;
  int64_t NOut = Out.elementCount(), NC = product(CDims);
  std::vector<int64_t> Idx(ODims.size(), 0), CIdx(CDims.size(), 0);
  Accumulator Acc(T);
  for (int64_t O = 0; O < NOut; ++O, next(Idx, ODims)) {
    int64_t LB = 0, RB = 0;
    for (size_t D = 0; D < Idx.size(); ++D)
      LB += Idx[D] * OutL[D], RB += Idx[D] * OutR[D];
    Acc.reset();
    std::fill(CIdx.begin(), CIdx.end(), 0);
    for (int64_t C = 0; C < NC; ++C, next(CIdx, CDims)) {
      int64_t LO = LB, RO = RB;
      for (size_t K = 0; K < CIdx.size(); ++K)
        LO += CIdx[K] * CL[K], RO += CIdx[K] * CR[K];
      Acc.add(L, LO, R, RO);
    }
    Acc.store(Out, O, Env.Scale);
  }
  return Out;
}

Expected<Literal> evalConvolution(const HloInstruction &I,
                                  const std::vector<const Literal *> &In,
                                  const ContractionEnv &Env) {
  PrimitiveType T = Env.OutShape.Type;
  Literal L = converted(*In[0], T), K = converted(*In[1], T);
  const ConvolutionDimensions &CD = I.convolutionDimensions();
  const std::vector<int64_t> &LD = L.shape().Dims, &KD = K.shape().Dims;
  std::vector<int64_t> LS = stridesOf(LD), KS = stridesOf(KD);
  const std::vector<int64_t> &ODims = Env.OutShape.Dims;
  size_t NS = CD.InputSpatial.size();
  std::vector<int64_t> WDims;
  for (const WindowDim &W : I.window())
    WDims.push_back(W.Size);
  int64_t OutF = ODims[size_t(CD.OutputFeature)];
  int64_t GroupIn = KD[size_t(CD.KernelInputFeature)];
  int64_t FeatGroup = OutF / I.featureGroupCount();
  int64_t BatchGroup = OutF / I.batchGroupCount();
  int64_t GroupBatch = LD[size_t(CD.InputBatch)] / I.batchGroupCount();
  Literal Out(Env.OutShape);
  int64_t NOut = Out.elementCount(), NW = product(WDims);
  std::vector<int64_t> Idx(ODims.size(), 0), W(NS, 0);
  Accumulator Acc(T);
  for (int64_t O = 0; O < NOut; ++O, next(Idx, ODims)) {
    int64_t OF = Idx[size_t(CD.OutputFeature)];
    // XLA's groups: the output feature picks the input features (feature
    // groups) or the slice of the input batch (batch groups).
    int64_t LBase =
        (Idx[size_t(CD.OutputBatch)] + (OF / BatchGroup) * GroupBatch) *
            LS[size_t(CD.InputBatch)] +
        (OF / FeatGroup) * GroupIn * LS[size_t(CD.InputFeature)];
    int64_t KBase = OF * KS[size_t(CD.KernelOutputFeature)];
    Acc.reset();
    std::fill(W.begin(), W.end(), 0);
    for (int64_t P = 0; P < NW; ++P, next(W, WDims)) {
      int64_t LO = LBase, KO = KBase;
      bool Inside = true;
      for (size_t S = 0; S < NS && Inside; ++S) {
        const WindowDim &WD = I.window()[S];
        int64_t Src = windowSource(Idx[size_t(CD.OutputSpatial[S])], W[S],
                                   LD[size_t(CD.InputSpatial[S])], WD);
        Inside = Src >= 0;
        LO += Src * LS[size_t(CD.InputSpatial[S])];
        KO += (WD.Reversal ? WD.Size - 1 - W[S] : W[S]) *
              KS[size_t(CD.KernelSpatial[S])];
      }
      if (!Inside)
        continue;
      for (int64_t F = 0; F < GroupIn; ++F)
        Acc.add(L, LO + F * LS[size_t(CD.InputFeature)], K,
                KO + F * KS[size_t(CD.KernelInputFeature)]);
    }
    Acc.store(Out, O, Env.Scale);
  }
  return Out;
}

/// A rank-0 literal of \p T holding element \p I of \p L (same type).
Literal element(const Literal &L, int64_t I) {
  Literal S(Shape(L.elementType(), {}));
  S.setBits(0, L.getBits(I));
  return S;
}

/// For output index \p Idx of a window over \p InDims, the row-major offset
/// of window position \p W in the operand, or -1 (padding or a hole).
int64_t windowOffset(const std::vector<int64_t> &Idx,
                     const std::vector<int64_t> &W,
                     const std::vector<int64_t> &InDims,
                     const std::vector<int64_t> &InStr,
                     const std::vector<WindowDim> &Window) {
  int64_t Off = 0;
  for (size_t D = 0; D < Idx.size(); ++D) {
    int64_t Src = windowSource(Idx[D], W[D], InDims[D], Window[D]);
    if (Src < 0)
      return -1;
    Off += Src * InStr[D];
  }
  return Off;
}

/// The dim along which \p I's window is a whole-dim prefix (padded low
/// by size - 1; \p Reverse: a suffix, padded high) of its arrays, every
/// other dim a window of 1: a scan (lax.cummax, cumsum, a running max with
/// its index); -1 otherwise.
int64_t prefixWindowDim(const HloInstruction &I,
                        const std::vector<int64_t> &InDims, bool &Reverse) {
  if (I.operandCount() % 2 != 0 || I.window().size() != InDims.size())
    return -1;
  int64_t Dim = -1;
  for (size_t D = 0; D < InDims.size(); ++D) {
    const WindowDim &W = I.window()[D];
    if (W.Stride != 1 || W.WindowDilation != 1 || W.BaseDilation != 1 ||
        W.Reversal)
      return -1;
    if (W.Size == 1 && W.PadLo == 0 && W.PadHi == 0)
      continue;
    const bool Low = W.PadLo == W.Size - 1 && W.PadHi == 0;
    const bool High = W.PadHi == W.Size - 1 && W.PadLo == 0;
    if (Dim >= 0 || W.Size != InDims[D] || !(Low || High))
      return -1;
    Dim = int64_t(D);
    Reverse = High;
  }
  return Dim;
}

/// A prefix window's reduce-window as a running fold along \p Dim, in
/// O(elements): each output combines the one before it (the next, for a
/// suffix) with its element, for every array of a variadic window at
/// once. A prefix folds in the window's order, as the general evaluation
/// does; a suffix folds from the line's end (an order XLA does not
/// specify either).
Expected<Literal> evalScanWindow(const HloInstruction &I,
                                 const std::vector<const Literal *> &In,
                                 const ContractionEnv &Env, int64_t Dim,
                                 bool Reverse) {
  const size_t N = In.size() / 2;
  const std::vector<int64_t> &Dims = In[0]->shape().Dims;
  std::vector<int64_t> Str = stridesOf(Dims);
  const int64_t Len = Dims[size_t(Dim)], Step = Str[size_t(Dim)];
  std::vector<Literal> Outs;
  for (size_t K = 0; K < N; ++K)
    Outs.emplace_back(Shape(In[N + K]->elementType(), Dims));
  const int64_t Total = product(Dims);
  if (std::optional<HloOpcode> Op = wideScanOp(I, Env.Opts, true)) {
    const bool Add = *Op == HloOpcode::Add;
    for (int64_t Base = 0; Base < Total; ++Base) {
      if ((Base / Step) % Len != 0)
        continue;
      double Acc = In[1]->getDouble(0);
      for (int64_t P = 0; P < Len; ++P) {
        const int64_t Off = Base + (Reverse ? Len - 1 - P : P) * Step;
        const double X = In[0]->getDouble(Off);
        Acc = Add ? Acc + X : Acc * X;
        Outs[0].setDouble(Off, Acc);
      }
    }
    return std::move(Outs[0]);
  }
  std::vector<Literal> Args(2 * N);
  std::vector<const Literal *> Ptrs;
  for (Literal &A : Args)
    Ptrs.push_back(&A);
  for (int64_t Base = 0; Base < Total; ++Base) {
    if ((Base / Step) % Len != 0)
      continue; // not the first element of its line
    for (size_t K = 0; K < N; ++K)
      Args[K] = *In[N + K];
    for (int64_t P = 0; P < Len; ++P) {
      const int64_t Off = Base + (Reverse ? Len - 1 - P : P) * Step;
      for (size_t K = 0; K < N; ++K)
        Args[N + K] = element(*In[K], Off);
      Expected<Literal> R = Env.Apply(*I.toApply(), Ptrs);
      if (!R)
        return R.error();
      for (size_t K = 0; K < N; ++K) {
        Args[K] = N == 1 ? std::move(*R) : std::move(R->elements()[K]);
        Outs[K].setBits(Off, Args[K].getBits(0));
      }
    }
  }
  if (N == 1)
    return std::move(Outs[0]);
  return Literal::tuple(std::move(Outs));
}

Expected<Literal> evalReduceWindow(const HloInstruction &I,
                                   const std::vector<const Literal *> &In,
                                   const ContractionEnv &Env) {
  bool Reverse = false;
  if (int64_t Dim = prefixWindowDim(I, In[0]->shape().Dims, Reverse);
      Dim >= 0 && (In.size() > 2 || !Env.OutShape.isTuple()))
    return evalScanWindow(I, In, Env, Dim, Reverse);
  size_t N = In.size() / 2;
  const std::vector<int64_t> &InDims = In[0]->shape().Dims;
  std::vector<int64_t> InStr = stridesOf(InDims), WDims;
  for (const WindowDim &W : I.window())
    WDims.push_back(W.Size);
  const Shape &First =
      Env.OutShape.isTuple() ? Env.OutShape.TupleShapes[0] : Env.OutShape;
  std::vector<Literal> Outs;
  for (size_t K = 0; K < N; ++K)
    Outs.emplace_back(Shape(In[N + K]->elementType(), First.Dims));
  std::vector<Literal> Args(2 * N);
  std::vector<const Literal *> Ptrs;
  for (Literal &A : Args)
    Ptrs.push_back(&A);
  int64_t NOut = product(First.Dims), NW = product(WDims);
  std::vector<int64_t> Idx(First.Dims.size(), 0), W(WDims.size(), 0);
  for (int64_t O = 0; O < NOut; ++O, next(Idx, First.Dims)) {
    for (size_t K = 0; K < N; ++K)
      Args[K] = *In[N + K];
    std::fill(W.begin(), W.end(), 0);
    for (int64_t P = 0; P < NW; ++P, next(W, WDims)) {
      int64_t Off = windowOffset(Idx, W, InDims, InStr, I.window());
      if (Off < 0)
        continue;
      for (size_t K = 0; K < N; ++K)
        Args[N + K] = element(*In[K], Off);
      Expected<Literal> R = Env.Apply(*I.toApply(), Ptrs);
      if (!R)
        return R.error();
      for (size_t K = 0; K < N; ++K)
        Args[K] = N == 1 ? std::move(*R) : std::move(R->elements()[K]);
    }
    for (size_t K = 0; K < N; ++K)
      Outs[K].setBits(O, Args[K].getBits(0));
  }
  if (N == 1)
    return std::move(Outs[0]);
  return Literal::tuple(std::move(Outs));
}

Expected<Literal> evalSelectAndScatter(const HloInstruction &I,
                                       const std::vector<const Literal *> &In,
                                       const ContractionEnv &Env) {
  const Literal &Op = *In[0], &Src = *In[1];
  const HloComputation &Select = *I.calledComputation("select");
  const HloComputation &Scatter = *I.calledComputation("scatter");
  Literal Out(Env.OutShape);
  for (int64_t K = 0, N = Out.elementCount(); K < N; ++K)
    Out.setBits(K, In[2]->getBits(0));
  const std::vector<int64_t> &InDims = Op.shape().Dims;
  const std::vector<int64_t> &SDims = Src.shape().Dims;
  std::vector<int64_t> InStr = stridesOf(InDims), WDims;
  for (const WindowDim &W : I.window())
    WDims.push_back(W.Size);
  int64_t NSrc = Src.elementCount(), NW = product(WDims);
  std::vector<int64_t> Idx(SDims.size(), 0), W(WDims.size(), 0);
  Literal Best, Cur;
  for (int64_t S = 0; S < NSrc; ++S, next(Idx, SDims)) {
    // The first element of the window that `select` keeps against every
    // later one (select(best, cur) false: cur wins).
    int64_t BestOff = -1;
    std::fill(W.begin(), W.end(), 0);
    for (int64_t P = 0; P < NW; ++P, next(W, WDims)) {
      int64_t Off = windowOffset(Idx, W, InDims, InStr, I.window());
      if (Off < 0)
        continue;
      if (BestOff < 0) {
        BestOff = Off;
        Best = element(Op, Off);
        continue;
      }
      Cur = element(Op, Off);
      Expected<Literal> Keep = Env.Apply(Select, {&Best, &Cur});
      if (!Keep)
        return Keep.error();
      if (Keep->getBits(0) == 0) {
        BestOff = Off;
        Best = std::move(Cur);
      }
    }
    if (BestOff < 0)
      continue; // the window lies in the padding
    Literal Acc = element(Out, BestOff), Value = element(Src, S);
    Expected<Literal> R = Env.Apply(Scatter, {&Acc, &Value});
    if (!R)
      return R.error();
    Out.setBits(BestOff, R->getBits(0));
  }
  return Out;
}

Expected<Literal> evalMap(const HloInstruction &I,
                          const std::vector<const Literal *> &In,
                          const ContractionEnv &Env) {
  Literal Out(Env.OutShape);
  std::vector<Literal> Args(In.size());
  std::vector<const Literal *> Ptrs;
  for (Literal &A : Args)
    Ptrs.push_back(&A);
  for (int64_t E = 0, N = Out.elementCount(); E < N; ++E) {
    for (size_t K = 0; K < In.size(); ++K)
      Args[K] = element(*In[K], E);
    Expected<Literal> R = Env.Apply(*I.toApply(), Ptrs);
    if (!R)
      return R.error();
    Out.setBits(E, R->getBits(0));
  }
  return Out;
}

/// A * B and A + B, saturating at INT64_MAX (both non-negative).
int64_t satMul(int64_t A, int64_t B) {
  int64_t R;
  return __builtin_mul_overflow(A, B, &R) ? std::numeric_limits<int64_t>::max()
                                          : R;
}
int64_t satAdd(int64_t A, int64_t B) {
  int64_t R;
  return __builtin_add_overflow(A, B, &R) ? std::numeric_limits<int64_t>::max()
                                          : R;
}

int64_t windowElements(const HloInstruction &I) {
  int64_t N = 1;
  for (const WindowDim &W : I.window())
    N = satMul(N, W.Size);
  return N;
}

} // namespace

std::optional<HloOpcode> wideScanOp(const HloInstruction &I,
                                    const EvaluateOptions &O,
                                    bool ScanWindow) {
  if (!O.WideScans || I.operandCount() != 2)
    return std::nullopt;
  const PrimitiveType T = I.operand(0)->shape().Type;
  if (T != PrimitiveType::F16 && T != PrimitiveType::BF16)
    return std::nullopt;
  const HloComputation *F = I.toApply();
  if (!F || F->parameterCount() != 2)
    return std::nullopt;
  // The combined value: the window's root, or the scan body's output,
  // which must also be its carry.
  const HloInstruction *V = F->root();
  if (!ScanWindow) {
    if (V->opcode() != HloOpcode::Tuple || V->operandCount() != 2 ||
        V->operand(0) != V->operand(1))
      return std::nullopt;
    V = V->operand(0);
  }
  const HloOpcode Op = V->opcode();
  if ((Op != HloOpcode::Add && Op != HloOpcode::Multiply) ||
      V->shape().Type != T)
    return std::nullopt;
  const HloInstruction *A = V->operand(0), *B = V->operand(1);
  if (A->opcode() != HloOpcode::Parameter ||
      B->opcode() != HloOpcode::Parameter || A == B)
    return std::nullopt;
  return Op;
}

bool isContractionEvaluated(HloOpcode Op) {
  return Op == HloOpcode::Dot || Op == HloOpcode::Convolution ||
         Op == HloOpcode::ReduceWindow || Op == HloOpcode::SelectAndScatter ||
         Op == HloOpcode::Map;
}

Expected<Literal> evalContraction(const HloInstruction &I,
                                  const std::vector<const Literal *> &In,
                                  const ContractionEnv &Env) {
  switch (I.opcode()) {
  case HloOpcode::Dot:
    return evalDot(I, In, Env);
  case HloOpcode::Convolution:
    return evalConvolution(I, In, Env);
  case HloOpcode::ReduceWindow:
    return evalReduceWindow(I, In, Env);
  case HloOpcode::SelectAndScatter:
    return evalSelectAndScatter(I, In, Env);
  default:
    return evalMap(I, In, Env);
  }
}

int64_t contractionWork(const HloInstruction &I) {
  const Shape &S = I.shape().isTuple() && !I.shape().TupleShapes.empty()
                       ? I.shape().TupleShapes[0]
                       : I.shape();
  int64_t Out = std::max<int64_t>(S.numElements(), 1);
  auto Count = [](const HloComputation *C) {
    return C ? C->instructionCount() : int64_t(1);
  };
  switch (I.opcode()) {
  case HloOpcode::Dot: {
    int64_t C = 1;
    for (int64_t D : I.dotDimensions().LhsContracting)
      C = satMul(C, I.operand(0)->shape().Dims[size_t(D)]);
    return satMul(Out, C);
  }
  case HloOpcode::Convolution: {
    const Shape &K = I.operand(1)->shape();
    int64_t GroupIn =
        K.Dims[size_t(I.convolutionDimensions().KernelInputFeature)];
    return satMul(satMul(Out, windowElements(I)), GroupIn);
  }
  case HloOpcode::ReduceWindow: {
    // A prefix window runs as a fold (evalScanWindow): one application of
    // the computation per element, not one per window element.
    bool Reverse = false;
    if (prefixWindowDim(I, I.operand(0)->shape().Dims, Reverse) >= 0 &&
        (I.operandCount() > 2 || !I.shape().isTuple()))
      return satMul(Out, Count(I.toApply()));
    return satMul(satMul(Out, windowElements(I)), Count(I.toApply()));
  }
  case HloOpcode::SelectAndScatter: {
    int64_t Src = std::max<int64_t>(I.operand(1)->shape().numElements(), 1);
    int64_t Sel = satMul(satMul(Src, windowElements(I)),
                         Count(I.calledComputation("select")));
    int64_t Sc = satMul(Src, Count(I.calledComputation("scatter")));
    return satAdd(satAdd(Sel, Sc), Out);
  }
  case HloOpcode::Map:
    return satMul(Out, Count(I.toApply()));
  default:
    return Out;
  }
}

} // namespace hlo
} // namespace idxmap
