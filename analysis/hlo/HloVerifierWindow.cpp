//===- analysis/hlo/HloVerifierWindow.cpp - Shape rules of windowed ops ---===//
//
// Part of idxmap. XLA's shape inference for dot, convolution, reduce-window,
// select-and-scatter and map: everything the indexing maps and the
// interpreter index with, so that a malformed instruction is a located
// parse error rather than an out-of-range read later. Element types of dot
// and convolution results are not checked (XLA's preferred_element_type
// lets them differ from the operands').
//
//===----------------------------------------------------------------------===//
#include "ContractionOps.h"
#include "OpSupport.h"

#include <algorithm>

namespace idxmap {
namespace hlo {

namespace {

using Problem = std::optional<std::string>;

/// Builds `opcode: message` problems for one instruction.
struct Checker {
  const HloInstruction &I;
  const AttrSet &Attrs;

  Problem fail(const std::string &M) const {
    return std::string(opcodeName(I.opcode())) + ": " + M;
  }
  Problem needAttr(const char *Key) const {
    if (!Attrs.count(Key))
      return fail(std::string("missing attribute '") + Key + "'");
    return std::nullopt;
  }
  Problem needOperands(int64_t N) const {
    if (I.operandCount() != N)
      return fail("expected " + std::to_string(N) + " operands, got " +
                  std::to_string(I.operandCount()));
    return std::nullopt;
  }
  Problem needArrayOperands() const {
    for (int64_t K = 0; K < I.operandCount(); ++K)
      if (!I.operand(K)->shape().isArray())
        return fail("operand " + std::to_string(K) + " must be an array, not " +
                    I.operand(K)->shape().str());
    return std::nullopt;
  }
  /// \p Dims distinct and in [0, Rank).
  Problem validDims(const std::vector<int64_t> &Dims, int64_t Rank,
                    const std::string &What) const {
    std::vector<bool> Seen(size_t(std::max<int64_t>(Rank, 0)), false);
    for (int64_t D : Dims) {
      if (D < 0 || D >= Rank)
        return fail(What + " " + dimList(Dims) + " out of range for rank " +
                    std::to_string(Rank));
      if (Seen[size_t(D)])
        return fail(What + " " + dimList(Dims) + " repeats dimension " +
                    std::to_string(D));
      Seen[size_t(D)] = true;
    }
    return std::nullopt;
  }
  Problem resultIs(const Shape &Want) const {
    if (!I.shape().compatible(Want))
      return fail("result shape is " + I.shape().str() + ", expected " +
                  Want.str());
    return std::nullopt;
  }
  /// Result dims \p Dims with any element type (dot, convolution).
  Problem resultDimsAre(const std::vector<int64_t> &Dims) const {
    if (!I.shape().isArray() || I.shape().Dims != Dims)
      return fail("result shape is " + I.shape().str() +
                  ", expected dimensions " + dimList(Dims));
    return std::nullopt;
  }
  /// The window's output dims over \p Base, one window entry per dim.
  Problem windowed(const std::vector<int64_t> &Base,
                   const std::vector<WindowDim> &Window,
                   std::vector<int64_t> &Out) const;
  /// \p C takes \p Types as scalars, in order.
  Problem scalarParams(const HloComputation &C,
                       const std::vector<PrimitiveType> &Types) const;
};

Problem Checker::windowed(const std::vector<int64_t> &Base,
                          const std::vector<WindowDim> &Window,
                          std::vector<int64_t> &Out) const {
  if (Window.size() != Base.size())
    return fail("window has " + std::to_string(Window.size()) +
                " dimensions, expected " + std::to_string(Base.size()));
  Out.clear();
  for (size_t D = 0; D < Base.size(); ++D) {
    std::optional<int64_t> N = windowOutputSize(Base[D], Window[D]);
    if (!N)
      return fail("window dimension " + std::to_string(D) +
                  " overflows or pads dimension of size " +
                  std::to_string(Base[D]) + " to a negative size");
    Out.push_back(*N);
  }
  return std::nullopt;
}

Problem Checker::scalarParams(const HloComputation &C,
                              const std::vector<PrimitiveType> &Types) const {
  if (C.parameterCount() != int64_t(Types.size()))
    return fail("computation '" + C.name() + "' has " +
                std::to_string(C.parameterCount()) + " parameters, expected " +
                std::to_string(Types.size()));
  for (size_t K = 0; K < Types.size(); ++K) {
    const Shape &P = C.parameter(int64_t(K))->shape();
    if (!P.isScalar() || P.Type != Types[K])
      return fail("parameter " + std::to_string(K) + " of '" + C.name() +
                  "' is " + P.str() + ", expected " +
                  std::string(primitiveTypeName(Types[K])) + "[]");
  }
  return std::nullopt;
}

/// Checks a reducer of \p N inputs (reduce-window's to_apply): 2N scalar
/// parameters typed like the init values, a root of N such scalars.
/// \p Outs gets the root's element types.
Problem checkReducer(const Checker &Ck, const HloComputation &C, int64_t N,
                     std::vector<PrimitiveType> &Outs) {
  const HloInstruction &I = Ck.I;
  std::vector<PrimitiveType> Inits;
  for (int64_t K = 0; K < N; ++K)
    Inits.push_back(I.operand(N + K)->shape().Type);
  std::vector<PrimitiveType> Params = Inits;
  for (int64_t K = 0; K < N; ++K)
    Params.push_back(I.operand(K)->shape().Type);
  if (Problem P = Ck.scalarParams(C, Params))
    return P;
  const Shape &Root = C.root()->shape();
  Outs = Inits;
  if (N == 1 && Root.isScalar() && Root.Type == Inits[0])
    return std::nullopt;
  bool Ok = N > 1 && Root.isTuple() && int64_t(Root.TupleShapes.size()) == N;
  for (int64_t K = 0; Ok && K < N; ++K)
    Ok = Root.TupleShapes[size_t(K)].isScalar() &&
         Root.TupleShapes[size_t(K)].Type == Inits[size_t(K)];
  if (!Ok)
    return Ck.fail("'" + C.name() + "' must return " +
                   (N == 1 ? "a scalar" : "a tuple of scalars") +
                   " of the init values' types, not " + Root.str());
  return std::nullopt;
}

} // namespace

std::optional<int64_t> windowOutputSize(int64_t Base, const WindowDim &W) {
  // XLA's DilatedBound and StridedBound.
  int64_t Dilated = 0, Padded, Window;
  if (Base > 0 && (__builtin_mul_overflow(Base - 1, W.BaseDilation, &Dilated) ||
                   __builtin_add_overflow(Dilated, 1, &Dilated)))
    return std::nullopt;
  if (__builtin_add_overflow(Dilated, W.PadLo, &Padded) ||
      __builtin_add_overflow(Padded, W.PadHi, &Padded) || Padded < 0)
    return std::nullopt;
  if (__builtin_mul_overflow(W.Size - 1, W.WindowDilation, &Window) ||
      __builtin_add_overflow(Window, 1, &Window))
    return std::nullopt;
  if (W.Size < 1 || W.Stride < 1)
    return std::nullopt;
  if (Window > Padded)
    return 0;
  return (Padded - Window) / W.Stride + 1;
}

std::optional<std::string> verifyDot(const HloInstruction &I,
                                     const AttrSet &Attrs) {
  Checker Ck{I, Attrs};
  if (Problem P = Ck.needOperands(2))
    return P;
  if (Problem P = Ck.needArrayOperands())
    return P;
  const Shape &L = I.operand(0)->shape(), &R = I.operand(1)->shape();
  const DotDimensions &DD = I.dotDimensions();
  if (DD.LhsBatch.size() != DD.RhsBatch.size())
    return Ck.fail("lhs_batch_dims " + dimList(DD.LhsBatch) +
                   " and rhs_batch_dims " + dimList(DD.RhsBatch) +
                   " differ in length");
  if (DD.LhsContracting.size() != DD.RhsContracting.size())
    return Ck.fail("lhs_contracting_dims " + dimList(DD.LhsContracting) +
                   " and rhs_contracting_dims " + dimList(DD.RhsContracting) +
                   " differ in length");
  // Batch and contracting dims of one side together must be distinct.
  std::vector<int64_t> LUsed = DD.LhsBatch, RUsed = DD.RhsBatch;
  LUsed.insert(LUsed.end(), DD.LhsContracting.begin(), DD.LhsContracting.end());
  RUsed.insert(RUsed.end(), DD.RhsContracting.begin(), DD.RhsContracting.end());
  if (Problem P = Ck.validDims(LUsed, L.rank(),
                               "lhs batch and contracting "
                               "dims"))
    return P;
  if (Problem P = Ck.validDims(RUsed, R.rank(),
                               "rhs batch and contracting "
                               "dims"))
    return P;
  auto SameSizes = [&](const std::vector<int64_t> &A,
                       const std::vector<int64_t> &B,
                       const char *What) -> Problem {
    for (size_t K = 0; K < A.size(); ++K)
      if (L.Dims[size_t(A[K])] != R.Dims[size_t(B[K])])
        return Ck.fail(std::string(What) + " pair " + std::to_string(K) +
                       " has sizes " + std::to_string(L.Dims[size_t(A[K])]) +
                       " and " + std::to_string(R.Dims[size_t(B[K])]));
    return std::nullopt;
  };
  if (Problem P = SameSizes(DD.LhsBatch, DD.RhsBatch, "batch dimension"))
    return P;
  if (Problem P = SameSizes(DD.LhsContracting, DD.RhsContracting,
                            "contracting "
                            "dimension"))
    return P;
  // Batch dims, then lhs free dims, then rhs free dims.
  std::vector<int64_t> Dims;
  for (int64_t D : DD.LhsBatch)
    Dims.push_back(L.Dims[size_t(D)]);
  for (int64_t D = 0; D < L.rank(); ++D)
    if (std::find(LUsed.begin(), LUsed.end(), D) == LUsed.end())
      Dims.push_back(L.Dims[size_t(D)]);
  for (int64_t D = 0; D < R.rank(); ++D)
    if (std::find(RUsed.begin(), RUsed.end(), D) == RUsed.end())
      Dims.push_back(R.Dims[size_t(D)]);
  return Ck.resultDimsAre(Dims);
}

namespace {

/// Group counts against the input and kernel (XLA's InferConvolveShape).
Problem checkConvGroups(const Checker &Ck, const Shape &In, const Shape &K) {
  const HloInstruction &I = Ck.I;
  const ConvolutionDimensions &CD = I.convolutionDimensions();
  int64_t F = I.featureGroupCount(), B = I.batchGroupCount();
  if (F < 1 || B < 1)
    return Ck.fail("feature_group_count and batch_group_count must be "
                   "positive, got " +
                   std::to_string(F) + " and " + std::to_string(B));
  if (F > 1 && B > 1)
    return Ck.fail("feature_group_count and batch_group_count cannot both "
                   "exceed 1");
  int64_t InFeat = In.Dims[size_t(CD.InputFeature)];
  int64_t InBatch = In.Dims[size_t(CD.InputBatch)];
  int64_t KIn = K.Dims[size_t(CD.KernelInputFeature)];
  int64_t KOut = K.Dims[size_t(CD.KernelOutputFeature)];
  if (InFeat % F != 0 || InFeat / F != KIn)
    return Ck.fail("input feature dimension (" + std::to_string(InFeat) +
                   ") divided by feature_group_count (" + std::to_string(F) +
                   ") must equal the kernel input feature dimension (" +
                   std::to_string(KIn) + ")");
  if (KOut % F != 0)
    return Ck.fail("kernel output feature dimension (" + std::to_string(KOut) +
                   ") is not a multiple of feature_group_count (" +
                   std::to_string(F) + ")");
  if (InBatch % B != 0 || KOut % B != 0)
    return Ck.fail(
        "input batch (" + std::to_string(InBatch) +
        ") and kernel output feature dimension (" + std::to_string(KOut) +
        ") must be multiples of batch_group_count (" + std::to_string(B) + ")");
  return std::nullopt;
}

} // namespace

std::optional<std::string> verifyConvolution(const HloInstruction &I,
                                             const AttrSet &Attrs) {
  Checker Ck{I, Attrs};
  if (Problem P = Ck.needAttr("dim_labels"))
    return P;
  if (Problem P = Ck.needOperands(2))
    return P;
  if (Problem P = Ck.needArrayOperands())
    return P;
  const Shape &In = I.operand(0)->shape(), &K = I.operand(1)->shape();
  const ConvolutionDimensions &CD = I.convolutionDimensions();
  int64_t Rank = int64_t(CD.InputSpatial.size()) + 2;
  if (In.rank() != Rank || K.rank() != Rank || !I.shape().isArray() ||
      I.shape().rank() != Rank)
    return Ck.fail("dim_labels " + CD.str() + " name " + std::to_string(Rank) +
                   " dimensions; the input is " + In.str() + ", the kernel " +
                   K.str() + ", the result " + I.shape().str());
  if (Problem P = checkConvGroups(Ck, In, K))
    return P;
  std::vector<int64_t> Base;
  for (size_t S = 0; S < CD.InputSpatial.size(); ++S) {
    Base.push_back(In.Dims[size_t(CD.InputSpatial[S])]);
    int64_t KSize = K.Dims[size_t(CD.KernelSpatial[S])];
    if (S < I.window().size() && I.window()[S].Size != KSize)
      return Ck.fail("window size " + std::to_string(I.window()[S].Size) +
                     " of spatial dimension " + std::to_string(S) +
                     " differs from the kernel's " + std::to_string(KSize));
  }
  std::vector<int64_t> Spatial;
  if (Problem P = Ck.windowed(Base, I.window(), Spatial))
    return P;
  std::vector<int64_t> Dims(size_t(Rank), 0);
  Dims[size_t(CD.OutputBatch)] =
      In.Dims[size_t(CD.InputBatch)] / I.batchGroupCount();
  Dims[size_t(CD.OutputFeature)] = K.Dims[size_t(CD.KernelOutputFeature)];
  for (size_t S = 0; S < Spatial.size(); ++S)
    Dims[size_t(CD.OutputSpatial[S])] = Spatial[S];
  return Ck.resultDimsAre(Dims);
}

std::optional<std::string> verifyReduceWindow(const HloInstruction &I,
                                              const AttrSet &Attrs) {
  Checker Ck{I, Attrs};
  if (Problem P = Ck.needAttr("to_apply"))
    return P;
  int64_t Count = I.operandCount();
  if (Count < 2 || Count % 2)
    return Ck.fail("expected inputs followed by as many init values, got " +
                   std::to_string(Count) + " operands");
  if (Problem P = Ck.needArrayOperands())
    return P;
  int64_t N = Count / 2;
  const Shape &In0 = I.operand(0)->shape();
  for (int64_t K = 1; K < N; ++K)
    if (!I.operand(K)->shape().sameDims(In0))
      return Ck.fail("input " + std::to_string(K) + " is " +
                     I.operand(K)->shape().str() +
                     ", expected the dimensions of " + In0.str());
  for (int64_t K = 0; K < N; ++K)
    if (!I.operand(N + K)->shape().isScalar())
      return Ck.fail("init value " + std::to_string(K) +
                     " must be a scalar, not " +
                     I.operand(N + K)->shape().str());
  if (I.calledComputations().size() != 1)
    return Ck.fail("expected exactly one called computation");
  std::vector<PrimitiveType> Types;
  if (Problem P = checkReducer(Ck, *I.toApply(), N, Types))
    return P;
  std::vector<int64_t> Dims;
  if (Problem P = Ck.windowed(In0.Dims, I.window(), Dims))
    return P;
  if (N == 1)
    return Ck.resultIs(Shape(Types[0], Dims));
  std::vector<Shape> Outs;
  for (PrimitiveType T : Types)
    Outs.push_back(Shape(T, Dims));
  return Ck.resultIs(Shape::tuple(Outs));
}

std::optional<std::string> verifySelectAndScatter(const HloInstruction &I,
                                                  const AttrSet &Attrs) {
  Checker Ck{I, Attrs};
  for (const char *Key : {"select", "scatter", "window"})
    if (Problem P = Ck.needAttr(Key))
      return P;
  if (Problem P = Ck.needOperands(3))
    return P;
  if (Problem P = Ck.needArrayOperands())
    return P;
  const Shape &Op = I.operand(0)->shape(), &Src = I.operand(1)->shape(),
              &Init = I.operand(2)->shape();
  if (!Init.isScalar() || Init.Type != Op.Type)
    return Ck.fail("init value must be a " +
                   std::string(primitiveTypeName(Op.Type)) + " scalar, not " +
                   Init.str());
  if (Src.Type != Op.Type)
    return Ck.fail("source " + Src.str() + " and operand " + Op.str() +
                   " differ in element type");
  const HloComputation *Sel = I.calledComputation("select");
  const HloComputation *Sc = I.calledComputation("scatter");
  if (!Sel || !Sc || I.calledComputations().size() != 2)
    return Ck.fail("expected one select and one scatter computation");
  if (Problem P = Ck.scalarParams(*Sel, {Op.Type, Op.Type}))
    return P;
  const Shape &SelRoot = Sel->root()->shape();
  if (!SelRoot.isScalar() || SelRoot.Type != PrimitiveType::Pred)
    return Ck.fail("'" + Sel->name() + "' must return pred[], not " +
                   SelRoot.str());
  if (Problem P = Ck.scalarParams(*Sc, {Op.Type, Op.Type}))
    return P;
  const Shape &ScRoot = Sc->root()->shape();
  if (!ScRoot.isScalar() || ScRoot.Type != Op.Type)
    return Ck.fail("'" + Sc->name() + "' must return " +
                   std::string(primitiveTypeName(Op.Type)) + "[], not " +
                   ScRoot.str());
  std::vector<int64_t> Dims;
  if (Problem P = Ck.windowed(Op.Dims, I.window(), Dims))
    return P;
  if (Src.Dims != Dims)
    return Ck.fail("source is " + Src.str() + ", the window over " + Op.str() +
                   " has dimensions " + dimList(Dims));
  return Ck.resultIs(Op);
}

std::optional<std::string> verifyMap(const HloInstruction &I,
                                     const AttrSet &Attrs) {
  Checker Ck{I, Attrs};
  if (Problem P = Ck.needAttr("to_apply"))
    return P;
  if (I.operandCount() < 1)
    return Ck.fail("expected at least one operand");
  if (Problem P = Ck.needArrayOperands())
    return P;
  const Shape &In0 = I.operand(0)->shape();
  std::vector<PrimitiveType> Types;
  for (int64_t K = 0; K < I.operandCount(); ++K) {
    if (!I.operand(K)->shape().sameDims(In0))
      return Ck.fail("operand " + std::to_string(K) + " is " +
                     I.operand(K)->shape().str() +
                     ", expected the dimensions of " + In0.str());
    Types.push_back(I.operand(K)->shape().Type);
  }
  // XLA's map applies to every dimension: `dimensions` lists them in order.
  std::vector<int64_t> All(size_t(In0.rank()));
  for (size_t D = 0; D < All.size(); ++D)
    All[D] = int64_t(D);
  if (Attrs.count("dimensions") && I.dimensions() != All)
    return Ck.fail("dimensions " + dimList(I.dimensions()) + " must be " +
                   dimList(All));
  if (I.calledComputations().size() != 1)
    return Ck.fail("expected exactly one called computation");
  const HloComputation &C = *I.toApply();
  if (Problem P = Ck.scalarParams(C, Types))
    return P;
  const Shape &Root = C.root()->shape();
  if (!Root.isScalar())
    return Ck.fail("'" + C.name() + "' must return a scalar, not " +
                   Root.str());
  return Ck.resultIs(Shape(Root.Type, In0.Dims));
}

} // namespace hlo
} // namespace idxmap
