//===- analysis/hlo/OpIndexingContraction.cpp - dot, conv, window maps ----===//
//
// Part of idxmap. Output-to-input maps of dot, convolution, reduce-window and
// map, and the identity maps of the elementwise-indexed ops after Call (erf,
// acos, complex, ...), built as XLA's indexing_analysis builds them so that
// the printed text matches XLA's:
// - dot: batch and free dims from the output dims, one range variable per
//   contracting pair (in the order of the contracting lists);
// - windows (reduce-window, the spatial dims of a convolution): window
//   position w of output index o reads the padded, base-dilated input at
//   `o * stride + w * window_dilation`; positions in the padding are cut by
//   a constraint on that expression, holes of the base dilation by a `mod`
//   constraint (XLA composes the window map with a pad map; the constraints
//   are the pad map's domain);
// - convolution: range variables for the window positions, then the input
//   feature within the group, then (batch_group_count > 1) the batch group.
//   Like XLA, the batch group is a free range variable: a sound
//   over-approximation (the exact group is the output feature divided by
//   output_features / batch_group_count).
//
//===----------------------------------------------------------------------===//
#include "ContractionOps.h"
#include "OpSupport.h"
#include "idxmap/Simplify.h"

#include <algorithm>

namespace idxmap {
namespace hlo {

namespace {

/// Simplifies and drops the range variables that no longer matter (XLA's
/// Simplify + RemoveUnusedSymbols): a window of size 1 leaves none. XLA's
/// simplifier folds a variable of one value inside an expression (`d0 + s0`
/// becomes `s0` when d0 is in [0, 0]) but leaves a result that is the
/// variable alone (a convolution's batch `d0`, a dot's contracting `s0`);
/// ours folds both, so bare variables are put back.
OperandMap finish(IndexingMap M) {
  std::vector<Expr> Built = M.results();
  simplify(M);
  std::vector<Expr> Res = M.results();
  for (size_t K = 0; K < Res.size() && K < Built.size(); ++K)
    if (Built[K].isVariable() && Res[K].isConstant() && !M.isKnownEmpty() &&
        M.bound(Built[K]) == Interval(Res[K].value(), Res[K].value()))
      Res[K] = Built[K];
  M.setResults(Res);
  M.removeUnusedSymbols();
  OperandMap R;
  R.Map = std::move(M);
  return R;
}

OperandMap scalarMap(Context &Ctx, const Shape &Out) {
  return finish(IndexingMap(Ctx, dimVars(Out), {}, {}, {}));
}

/// One windowed dimension: the input index read at output index \p D and
/// window position \p S, with the constraints that keep it off the padding
/// and the holes of the base dilation (appended to \p Cs).
Expr windowIndex(Expr D, Expr S, int64_t InSize, const WindowDim &W,
                 std::vector<Constraint> &Cs) {
  Expr E = D * W.Stride + S * W.WindowDilation;
  // The padded, dilated input has Padded elements; real ones sit at
  // PadLo + i * BaseDilation, i in [0, InSize - 1].
  int64_t Dilated = InSize > 0 ? (InSize - 1) * W.BaseDilation + 1 : 0;
  int64_t Padded = W.PadLo + Dilated + W.PadHi;
  Cs.push_back({E,
                {std::max<int64_t>(0, W.PadLo),
                 std::min(Padded - 1, Padded - 1 - W.PadHi)}});
  Expr Shifted = E - W.PadLo;
  if (W.BaseDilation == 1)
    return Shifted;
  Cs.push_back({Shifted % W.BaseDilation, {0, 0}});
  return Shifted.floorDiv(W.BaseDilation);
}

IndexingMap makeMap(Context &Ctx, const Shape &Out, std::vector<Variable> Syms,
                    std::vector<Expr> Res,
                    const std::vector<Constraint> &Cs = {}) {
  // Constraints go in one at a time so that a constraint on a bare variable
  // narrows its bound (as IndexingMap::addConstraint does).
  IndexingMap M(Ctx, dimVars(Out), std::move(Syms), {}, std::move(Res));
  for (const Constraint &C : Cs)
    M.addConstraint(C.E, C.I);
  return M;
}

InstructionIndexing dot(Context &Ctx, const HloInstruction &I) {
  const Shape &L = I.operand(0)->shape(), &R = I.operand(1)->shape();
  const DotDimensions &DD = I.dotDimensions();
  std::vector<Expr> LRes(size_t(L.rank())), RRes(size_t(R.rank()));
  unsigned OutDim = 0;
  for (size_t K = 0; K < DD.LhsBatch.size(); ++K, ++OutDim) {
    LRes[size_t(DD.LhsBatch[K])] = Ctx.dim(OutDim);
    RRes[size_t(DD.RhsBatch[K])] = Ctx.dim(OutDim);
  }
  std::vector<Variable> Syms;
  for (size_t K = 0; K < DD.LhsContracting.size(); ++K) {
    LRes[size_t(DD.LhsContracting[K])] = Ctx.symbol(unsigned(K));
    RRes[size_t(DD.RhsContracting[K])] = Ctx.symbol(unsigned(K));
    Syms.push_back({"", {0, L.Dims[size_t(DD.LhsContracting[K])] - 1}});
  }
  // What is neither batch nor contracting is free, in operand order.
  for (Expr &E : LRes)
    if (!E)
      E = Ctx.dim(OutDim++);
  for (Expr &E : RRes)
    if (!E)
      E = Ctx.dim(OutDim++);
  InstructionIndexing Res;
  Res.Operands.push_back({finish(makeMap(Ctx, I.shape(), Syms, LRes))});
  Res.Operands.push_back({finish(makeMap(Ctx, I.shape(), Syms, RRes))});
  return Res;
}

InstructionIndexing reduceWindow(Context &Ctx, const HloInstruction &I,
                                 int64_t OutputId) {
  int64_t N = I.operandCount() / 2;
  const Shape &In = I.operand(0)->shape();
  const Shape &Out =
      I.shape().isTuple() ? I.shape().TupleShapes[size_t(OutputId)] : I.shape();
  std::vector<Variable> Syms;
  std::vector<Expr> Res;
  std::vector<Constraint> Cs;
  for (int64_t D = 0; D < In.rank(); ++D) {
    const WindowDim &W = I.window()[size_t(D)];
    Res.push_back(windowIndex(Ctx.dim(unsigned(D)), Ctx.symbol(unsigned(D)),
                              In.Dims[size_t(D)], W, Cs));
    Syms.push_back({"", {0, W.Size - 1}});
  }
  OperandMap InputMap = finish(makeMap(Ctx, Out, Syms, Res, Cs));
  InstructionIndexing R;
  for (int64_t K = 0; K < N; ++K)
    R.Operands.push_back({InputMap});
  for (int64_t K = 0; K < N; ++K)
    R.Operands.push_back({scalarMap(Ctx, Out)});
  return R;
}

OperandMap convolutionInput(Context &Ctx, const HloInstruction &I) {
  const Shape &In = I.operand(0)->shape(), &K = I.operand(1)->shape();
  const Shape &Out = I.shape();
  const ConvolutionDimensions &CD = I.convolutionDimensions();
  size_t NS = CD.InputSpatial.size();
  std::vector<Expr> Res(size_t(In.rank()));
  std::vector<Variable> Syms;
  std::vector<Constraint> Cs;
  for (size_t S = 0; S < NS; ++S) {
    const WindowDim &W = I.window()[S];
    Res[size_t(CD.InputSpatial[S])] = windowIndex(
        Ctx.dim(unsigned(CD.OutputSpatial[S])), Ctx.symbol(unsigned(S)),
        In.Dims[size_t(CD.InputSpatial[S])], W, Cs);
    Syms.push_back({"", {0, W.Size - 1}});
  }
  // The input feature within the output feature's group.
  int64_t GroupIn = K.Dims[size_t(CD.KernelInputFeature)];
  Expr Feature = Ctx.symbol(unsigned(Syms.size()));
  Syms.push_back({"", {0, GroupIn - 1}});
  if (I.featureGroupCount() > 1) {
    // No output features: no output elements, any divisor will do.
    int64_t GroupOut = std::max<int64_t>(
        Out.Dims[size_t(CD.OutputFeature)] / I.featureGroupCount(), 1);
    Feature = Ctx.dim(unsigned(CD.OutputFeature)).floorDiv(GroupOut) * GroupIn +
              Feature;
  }
  Res[size_t(CD.InputFeature)] = Feature;
  Expr Batch = Ctx.dim(unsigned(CD.OutputBatch));
  if (I.batchGroupCount() > 1) {
    Batch =
        Ctx.symbol(unsigned(Syms.size())) * Out.Dims[size_t(CD.OutputBatch)] +
        Batch;
    Syms.push_back({"", {0, I.batchGroupCount() - 1}});
  }
  Res[size_t(CD.InputBatch)] = Batch;
  return finish(makeMap(Ctx, Out, Syms, Res, Cs));
}

OperandMap convolutionKernel(Context &Ctx, const HloInstruction &I) {
  const Shape &K = I.operand(1)->shape();
  const ConvolutionDimensions &CD = I.convolutionDimensions();
  std::vector<Expr> Res(size_t(K.rank()));
  std::vector<Variable> Syms;
  // Every window position reads its kernel element (rhs_reversal only
  // renames them, so the set is the same, as XLA's map has it).
  for (size_t S = 0; S < CD.KernelSpatial.size(); ++S) {
    Res[size_t(CD.KernelSpatial[S])] = Ctx.symbol(unsigned(S));
    Syms.push_back({"", {0, K.Dims[size_t(CD.KernelSpatial[S])] - 1}});
  }
  Res[size_t(CD.KernelOutputFeature)] = Ctx.dim(unsigned(CD.OutputFeature));
  Res[size_t(CD.KernelInputFeature)] = Ctx.symbol(unsigned(Syms.size()));
  Syms.push_back({"", {0, K.Dims[size_t(CD.KernelInputFeature)] - 1}});
  return finish(makeMap(Ctx, I.shape(), Syms, Res));
}

/// The identity per operand (a scalar operand of a non-scalar result: the
/// scalar map), when every operand has the result's dims or is a scalar;
/// else unknown (an op after Call that the verifier does not check).
InstructionIndexing identityIndexing(Context &Ctx, const HloInstruction &I) {
  const Shape &Out = I.shape();
  if (!Out.isArray())
    return undefinedFor(I);
  InstructionIndexing R;
  for (const HloInstruction *Op : I.operands()) {
    const Shape &S = Op->shape();
    if (S.isArray() && S.isScalar() && Out.rank() > 0) {
      R.Operands.push_back({scalarMap(Ctx, Out)});
      continue;
    }
    if (!S.isArray() || S.Dims != Out.Dims)
      return undefinedFor(I);
    std::vector<Expr> Res;
    for (int64_t D = 0; D < Out.rank(); ++D)
      Res.push_back(Ctx.dim(unsigned(D)));
    R.Operands.push_back({finish(makeMap(Ctx, Out, {}, Res))});
  }
  return R;
}

} // namespace

bool isContractionIndexed(HloOpcode Op) {
  return Op == HloOpcode::Dot || Op == HloOpcode::Convolution ||
         Op == HloOpcode::ReduceWindow || Op == HloOpcode::Map ||
         (Op > HloOpcode::Call && hasElementwiseIndexing(Op));
}

InstructionIndexing contractionOutputToInput(Context &Ctx,
                                             const HloInstruction &I,
                                             int64_t OutputId) {
  switch (I.opcode()) {
  case HloOpcode::Dot:
    if (I.operandCount() != 2)
      return undefinedFor(I);
    return dot(Ctx, I);
  case HloOpcode::Convolution: {
    if (I.operandCount() != 2)
      return undefinedFor(I);
    InstructionIndexing R;
    R.Operands.push_back({convolutionInput(Ctx, I)});
    R.Operands.push_back({convolutionKernel(Ctx, I)});
    return R;
  }
  case HloOpcode::ReduceWindow:
    return reduceWindow(Ctx, I, OutputId);
  default:
    if (!isContractionIndexed(I.opcode()))
      return undefinedFor(I);
    return identityIndexing(Ctx, I);
  }
}

InstructionIndexing contractionInputToOutput(Context &Ctx,
                                             const HloInstruction &I,
                                             int64_t InputId) {
  HloOpcode Op = I.opcode();
  bool Identity = Op == HloOpcode::Map ||
                  (Op > HloOpcode::Call && hasElementwiseIndexing(Op));
  if (!Identity || InputId < 0 || InputId >= I.operandCount())
    return singleMap(undefinedMap());
  // Reuse the output-to-input check (operands match the result or are
  // scalars): the identity is its own inverse.
  InstructionIndexing Fwd = identityIndexing(Ctx, I);
  const Shape &In = I.operand(InputId)->shape();
  const Shape &Out = I.shape();
  if (Fwd.Operands[size_t(InputId)][0].Map.isUndefined())
    return singleMap(undefinedMap());
  if (In.isScalar() && Out.rank() > 0) {
    // A scalar feeds every output element.
    std::vector<Expr> Res;
    for (int64_t D = 0; D < Out.rank(); ++D)
      Res.push_back(Ctx.symbol(unsigned(D)));
    IndexingMap M(Ctx, {}, dimVars(Out), {}, Res);
    return singleMap(finish(M));
  }
  return singleMap(Fwd.Operands[size_t(InputId)][0]);
}

} // namespace hlo
} // namespace idxmap
