//===- OpIndexingIndexed.cpp - Maps of gather, scatter, sort, collectives -===//
//
// Part of idxmap. Data-dependent reads become runtime variables bound to the
// HLO value that holds the index (XLA's HLORTVar), folded where the value is
// known: a scalar constant becomes its value clamped as the op clamps it, an
// iota becomes its index expression when that stays in the feasible range,
// a clamp with constant bounds narrows the variable (and folds a known
// operand). Reads that depend on data in a way a runtime variable cannot
// name (which update element lands on an output element of scatter) are
// range variables over everything that may be read: sound, not exact.
//
//===----------------------------------------------------------------------===//
#include "IndexedOps.h"
#include "OpSupport.h"

#include "idxmap/HloScatter.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include <algorithm>

namespace idxmap {
namespace hlo {

namespace {

/// Simplified, unused range variables removed; a map with runtime variables
/// is kept as built, as XLA keeps it (its printed form is XLA's, point dims
/// and all, and the bindings stay in step with its variables).
OperandMap finish(IndexingMap M, std::vector<RuntimeBinding> Bindings = {}) {
  if (Bindings.empty()) {
    simplify(M);
    M.removeUnusedSymbols();
  }
  return {std::move(M), std::move(Bindings)};
}

OperandMap scalarMap(Context &Ctx, const Shape &Out) {
  return finish(IndexingMap(Ctx, dimVars(Out), {}, {}, {}));
}

OperandMap identityMap(Context &Ctx, const Shape &Out) {
  return finish(IndexingMap::identity(Ctx, Out.Dims));
}

const Shape &outputShape(const HloInstruction &I, int64_t OutputId) {
  const Shape &S = I.shape();
  if (S.isTuple() && OutputId >= 0 && OutputId < int64_t(S.TupleShapes.size()))
    return S.TupleShapes[size_t(OutputId)];
  return S;
}

bool contains(const std::vector<int64_t> &V, int64_t X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

int64_t position(const std::vector<int64_t> &V, int64_t X) {
  auto It = std::find(V.begin(), V.end(), X);
  return It == V.end() ? -1 : int64_t(It - V.begin());
}

int64_t clampTo(int64_t V, Interval I) {
  return std::min(std::max(V, I.Lo), I.Hi);
}

/// A scalar integer constant's value.
std::optional<int64_t> scalarConstant(const HloInstruction &I) {
  if (I.opcode() != HloOpcode::Constant || I.literalElided() ||
      !I.shape().isScalar() || !isIntegralType(I.shape().Type))
    return std::nullopt;
  return I.literal().getInt(0);
}

//===----------------------------------------------------------------------===//
// Runtime variables
//===----------------------------------------------------------------------===//

/// Builds a map's runtime variables one at a time, folding the known ones.
class RuntimeVars {
public:
  RuntimeVars(Context &Ctx, const Shape &Out) : Ctx(Ctx), Out(Out) {}

  /// The expression of a value read from \p Source at \p Index (results in
  /// the output's dims), which the op clamps to \p Feasible: the folded
  /// value, or a new runtime variable (bound to Source) that has Feasible
  /// as its range.
  Expr add(const HloInstruction *Source, std::vector<Expr> Index,
           Interval Feasible) {
    IndexingMap Binding(Ctx, dimVars(Out), {}, {}, std::move(Index));
    if (std::optional<Expr> E = fold(*Source, Binding, {Feasible}))
      return *E;
    // A clamp with constant bounds narrows what the op sees.
    Interval Range = Feasible;
    const HloInstruction *S = Source;
    while (S->opcode() == HloOpcode::Clamp) {
      std::optional<int64_t> Lo = scalarConstant(*S->operand(0));
      std::optional<int64_t> Hi = scalarConstant(*S->operand(2));
      if (!Lo || !Hi || *Lo > *Hi)
        break;
      // The image of [Lo, Hi] under the outer clamp.
      Range = {clampTo(std::max(*Lo, Range.Lo), Range),
               clampTo(std::min(*Hi, Range.Hi), Range)};
      S = S->operand(1);
    }
    Vars.push_back({"", Range});
    Bindings.push_back({Source, std::move(Binding)});
    return Ctx.symbol(unsigned(Vars.size() - 1));
  }

  std::vector<Variable> Vars;
  std::vector<RuntimeBinding> Bindings;

private:
  /// \p Clamps are applied innermost last: the value the op sees is
  /// clamp(...clamp(v, Clamps.back())..., Clamps.front()).
  std::optional<Expr> fold(const HloInstruction &S, const IndexingMap &Binding,
                           std::vector<Interval> Clamps) {
    if (S.opcode() == HloOpcode::Constant && !S.literalElided() &&
        isIntegralType(S.shape().Type)) {
      std::vector<int64_t> Idx;
      for (Expr R : Binding.results()) {
        if (!R.isConstant())
          return std::nullopt;
        Idx.push_back(R.value());
      }
      if (int64_t(Idx.size()) != S.shape().rank())
        return std::nullopt;
      for (size_t D = 0; D < Idx.size(); ++D)
        if (Idx[D] < 0 || Idx[D] >= S.shape().Dims[D])
          return std::nullopt;
      int64_t V = S.literal().getInt(S.literal().linearIndex(Idx));
      for (auto It = Clamps.rbegin(); It != Clamps.rend(); ++It)
        V = clampTo(V, *It);
      return Ctx.constant(V);
    }
    if (S.opcode() == HloOpcode::Iota) {
      int64_t D = S.iotaDimension();
      if (D < 0 || D >= int64_t(Binding.numResults()))
        return std::nullopt;
      Expr E = Binding.result(unsigned(D));
      // Folds only where no clamp changes the value.
      Interval R = RangeEvaluator(Binding).range(E);
      for (const Interval &C : Clamps)
        if (!C.contains(R.Lo) || !C.contains(R.Hi))
          return std::nullopt;
      return E;
    }
    if (S.opcode() == HloOpcode::Clamp && S.operand(0)->shape().isScalar() &&
        S.operand(2)->shape().isScalar()) {
      std::optional<int64_t> Lo = scalarConstant(*S.operand(0));
      std::optional<int64_t> Hi = scalarConstant(*S.operand(2));
      if (!Lo || !Hi || *Lo > *Hi)
        return std::nullopt;
      Clamps.push_back({*Lo, *Hi});
      return fold(*S.operand(1), Binding, std::move(Clamps));
    }
    return std::nullopt;
  }

  Context &Ctx;
  const Shape &Out;
};

//===----------------------------------------------------------------------===//
// Output-to-input
//===----------------------------------------------------------------------===//

InstructionIndexing dynamicSlice(Context &Ctx, const HloInstruction &I) {
  const Shape &In = I.operand(0)->shape();
  const Shape &Out = I.shape();
  RuntimeVars Rt(Ctx, Out);
  std::vector<Expr> Res;
  for (int64_t D = 0; D < Out.rank(); ++D)
    Res.push_back(Ctx.dim(unsigned(D)) +
                  Rt.add(I.operand(1 + D), {}, {0, In.Dims[D] - Out.Dims[D]}));
  InstructionIndexing R;
  R.Operands.push_back(
      {finish(IndexingMap(Ctx, dimVars(Out), {}, Rt.Vars, Res), Rt.Bindings)});
  for (int64_t K = 1; K < I.operandCount(); ++K)
    R.Operands.push_back({scalarMap(Ctx, Out)});
  return R;
}

InstructionIndexing dynamicUpdateSlice(Context &Ctx, const HloInstruction &I) {
  const Shape &Out = I.shape();
  const Shape &Upd = I.operand(1)->shape();
  RuntimeVars Rt(Ctx, Out);
  std::vector<Expr> Res;
  std::vector<Constraint> Cs;
  for (int64_t D = 0; D < Out.rank(); ++D) {
    Expr E = Ctx.dim(unsigned(D)) -
             Rt.add(I.operand(2 + D), {}, {0, Out.Dims[D] - Upd.Dims[D]});
    Res.push_back(E);
    // Only output elements inside the update window read the update.
    Cs.push_back({E, {0, Upd.Dims[D] - 1}});
  }
  InstructionIndexing R;
  R.Operands.push_back({identityMap(Ctx, Out)});
  R.Operands.push_back({finish(
      IndexingMap(Ctx, dimVars(Out), {}, Rt.Vars, Res, Cs), Rt.Bindings)});
  for (int64_t K = 2; K < I.operandCount(); ++K)
    R.Operands.push_back({scalarMap(Ctx, Out)});
  return R;
}

/// Gather in XLA's general form; for the canonical form of XLA's gather
/// simplifier (indices [N, k], index_vector_dim 1, offset dims trailing) it
/// is XLA's map: `(d0, ...){rt...} -> (d_off + rt, ...)`.
InstructionIndexing gather(Context &Ctx, const HloInstruction &I) {
  const GatherDimensions &G = I.gatherDimensions();
  const Shape &Op = I.operand(0)->shape();
  const Shape &Idx = I.operand(1)->shape();
  const Shape &Out = I.shape();
  const std::vector<int64_t> &Sizes = I.gatherSliceSizes();
  int64_t Ivd = G.IndexVectorDim;
  // Output batch dims (not offset dims), in order, walk the indices dims
  // other than index_vector_dim.
  std::vector<int64_t> BatchOut;
  for (int64_t D = 0; D < Out.rank(); ++D)
    if (!contains(G.OffsetDims, D))
      BatchOut.push_back(D);
  auto IndicesIndex = [&](std::optional<Expr> AtIvd) {
    std::vector<Expr> Res;
    size_t B = 0;
    for (int64_t D = 0; D < Idx.rank(); ++D)
      Res.push_back(D == Ivd ? *AtIvd : Ctx.dim(unsigned(BatchOut[B++])));
    return Res;
  };
  // The indices dim (other than Ivd) that output batch dim K walks.
  auto BatchDimOfIndicesDim = [&](int64_t IdxDim) {
    return BatchOut[size_t(IdxDim - (Ivd < IdxDim ? 1 : 0))];
  };

  RuntimeVars Rt(Ctx, Out);
  std::vector<Expr> Res;
  size_t NextOffset = 0;
  for (int64_t D = 0; D < Op.rank(); ++D) {
    Expr E = Ctx.constant(0);
    int64_t Batch = position(G.OperandBatchingDims, D);
    if (Batch >= 0)
      E = Ctx.dim(unsigned(
          BatchDimOfIndicesDim(G.StartIndicesBatchingDims[size_t(Batch)])));
    else if (!contains(G.CollapsedSliceDims, D))
      E = Ctx.dim(unsigned(G.OffsetDims[NextOffset++]));
    int64_t J = position(G.StartIndexMap, D);
    if (J >= 0)
      E = E + Rt.add(I.operand(1), IndicesIndex(Ctx.constant(J)),
                     {0, Op.Dims[D] - Sizes[D]});
    Res.push_back(E);
  }
  InstructionIndexing R;
  R.Operands.push_back(
      {finish(IndexingMap(Ctx, dimVars(Out), {}, Rt.Vars, Res), Rt.Bindings)});
  std::vector<Variable> Range;
  std::optional<Expr> AtIvd;
  if (Ivd < Idx.rank()) {
    Range.push_back({"", {0, Idx.Dims[Ivd] - 1}});
    AtIvd = Ctx.symbol(0);
  }
  R.Operands.push_back(
      {finish(IndexingMap(Ctx, dimVars(Out), Range, {}, IndicesIndex(AtIvd)))});
  return R;
}

/// Scatter: output element o reads every operand at o (to_apply combines
/// them) and, data-dependently, the indices and the updates. An update
/// window dim whose operand dim has no start index (start 0) is read at o's
/// coordinate; every other updates and indices dim is a range variable.
InstructionIndexing scatter(Context &Ctx, const HloInstruction &I,
                            int64_t OutputId) {
  const ScatterDimensions &S = I.scatterDimensions();
  int64_t N = (I.operandCount() - 1) / 2;
  const Shape &Out = outputShape(I, OutputId);
  const Shape &Idx = I.operand(N)->shape();
  InstructionIndexing R;
  for (int64_t K = 0; K < N; ++K)
    R.Operands.push_back({identityMap(Ctx, Out)});
  std::vector<Variable> Range;
  std::vector<Expr> Res;
  for (int64_t D = 0; D < Idx.rank(); ++D) {
    Res.push_back(Ctx.symbol(unsigned(Range.size())));
    Range.push_back({"", {0, Idx.Dims[D] - 1}});
  }
  R.Operands.push_back(
      {finish(IndexingMap(Ctx, dimVars(Out), Range, {}, Res))});
  // Operand dims that update window dims walk, in order.
  std::vector<int64_t> WindowOperandDims;
  for (int64_t D = 0; D < Out.rank(); ++D)
    if (isOperandWindowDim(S, D))
      WindowOperandDims.push_back(D);
  const Shape &Upd = I.operand(N + 1)->shape();
  Range.clear();
  Res.clear();
  std::vector<Constraint> Cs;
  for (int64_t U = 0; U < Upd.rank(); ++U) {
    int64_t W = position(S.UpdateWindowDims, U);
    int64_t D = W >= 0 && W < int64_t(WindowOperandDims.size())
                    ? WindowOperandDims[size_t(W)]
                    : -1;
    if (D >= 0 && !isScatteredOperandDim(S, D)) {
      Expr E = Ctx.dim(unsigned(D));
      Res.push_back(E);
      Cs.push_back({E, {0, Upd.Dims[U] - 1}});
      continue;
    }
    Res.push_back(Ctx.symbol(unsigned(Range.size())));
    Range.push_back({"", {0, Upd.Dims[U] - 1}});
  }
  OperandMap UpdMap = finish(IndexingMap(Ctx, dimVars(Out), Range, {}, Res));
  for (const Constraint &C : Cs)
    UpdMap.Map.addConstraint(C.E, C.I);
  simplify(UpdMap.Map);
  UpdMap.Map.removeUnusedSymbols();
  for (int64_t K = 0; K < N; ++K)
    R.Operands.push_back({UpdMap});
  return R;
}

/// Sort: an output element depends on its whole row (along the sort dim) of
/// every operand: the comparator reads the keys, the permutation moves the
/// values.
InstructionIndexing sort(Context &Ctx, const HloInstruction &I,
                         int64_t OutputId) {
  const Shape &Out = outputShape(I, OutputId);
  int64_t SortDim = I.dimensions().at(0);
  std::vector<Expr> Res;
  for (int64_t D = 0; D < Out.rank(); ++D)
    Res.push_back(D == SortDim ? Ctx.symbol(0) : Ctx.dim(unsigned(D)));
  OperandMap M = finish(IndexingMap(
      Ctx, dimVars(Out), {{"", {0, Out.Dims[size_t(SortDim)] - 1}}}, {}, Res));
  InstructionIndexing R;
  for (int64_t K = 0; K < I.operandCount(); ++K)
    R.Operands.push_back({M});
  return R;
}

/// All-gather, as XLA maps it: output element o of the gathered dim g reads
/// the operand at `o_g mod n` on replica `o_g floordiv n` (the replica id
/// map), n the operand's extent. The tuple form gathers operand k into
/// output k.
InstructionIndexing allGather(Context &Ctx, const HloInstruction &I,
                              int64_t OutputId) {
  InstructionIndexing R;
  int64_t G = I.dimensions().at(0);
  for (int64_t K = 0; K < I.operandCount(); ++K) {
    if (I.shape().isTuple() && K != OutputId) {
      R.Operands.push_back({});
      continue;
    }
    const Shape &Out = outputShape(I, K);
    int64_t N = I.operand(K)->shape().Dims[size_t(G)];
    std::vector<Expr> Res;
    for (int64_t D = 0; D < Out.rank(); ++D)
      Res.push_back(D == G ? Ctx.dim(unsigned(D)) % N : Ctx.dim(unsigned(D)));
    OperandMap M = finish(IndexingMap(Ctx, dimVars(Out), {}, {}, Res));
    M.ReplicaId = IndexingMap(Ctx, dimVars(Out), {}, {},
                              {Ctx.dim(unsigned(G)).floorDiv(N)});
    simplify(M.ReplicaId);
    R.Operands.push_back({std::move(M)});
  }
  return R;
}

/// Ops whose output k reads operand k at the same index on one device
/// (all-reduce combines the replicas' elements at one index;
/// collective-permute moves whole buffers).
InstructionIndexing perOperandIdentity(Context &Ctx, const HloInstruction &I,
                                       int64_t OutputId) {
  InstructionIndexing R;
  for (int64_t K = 0; K < I.operandCount(); ++K) {
    const Shape &S = I.operand(K)->shape();
    if ((I.shape().isTuple() && K != OutputId) || !S.isArray())
      R.Operands.push_back({});
    else
      R.Operands.push_back({identityMap(Ctx, S)});
  }
  return R;
}

} // namespace

std::string runtimeSourceName(const HloInstruction &I) {
  if (I.opcode() == HloOpcode::Parameter)
    return "parameter(" + std::to_string(I.parameterNumber()) + ")";
  if (I.opcode() == HloOpcode::Constant && I.shape().isScalar() &&
      !I.literalElided())
    return "constant(" + I.literal().elementString(0) + ")";
  return I.name();
}

InstructionIndexing indexedOutputToInput(Context &Ctx, const HloInstruction &I,
                                         int64_t OutputId) {
  switch (I.opcode()) {
  case HloOpcode::DynamicSlice:
    return dynamicSlice(Ctx, I);
  case HloOpcode::DynamicUpdateSlice:
    return dynamicUpdateSlice(Ctx, I);
  case HloOpcode::Gather:
    return gather(Ctx, I);
  case HloOpcode::Scatter:
    return scatter(Ctx, I, OutputId);
  case HloOpcode::Sort:
    return sort(Ctx, I, OutputId);
  case HloOpcode::AllGather:
    return allGather(Ctx, I, OutputId);
  case HloOpcode::AllReduce:
  case HloOpcode::CollectivePermute:
    return perOperandIdentity(Ctx, I, OutputId);
  default:
    return undefinedFor(I);
  }
}

InstructionIndexing indexedInputToOutput(Context &Ctx, const HloInstruction &I,
                                         int64_t InputId) {
  InstructionIndexing R;
  const Shape &In = I.operand(InputId)->shape();
  switch (I.opcode()) {
  case HloOpcode::DynamicUpdateSlice: {
    // The update's element u lands at u + start, each start clamped as the
    // op clamps it (the runtime variables of the output-to-update map, now
    // bound over the update's index space). Where the operand's elements go
    // depends on whether the window covers them, which no map says.
    if (InputId != 1)
      break;
    const Shape &Out = I.shape();
    RuntimeVars Rt(Ctx, In);
    std::vector<Expr> Res;
    for (int64_t D = 0; D < Out.rank(); ++D)
      Res.push_back(Ctx.dim(unsigned(D)) +
                    Rt.add(I.operand(2 + D), {},
                           {0, Out.Dims[size_t(D)] - In.Dims[size_t(D)]}));
    R.Operands.push_back(
        {finish(IndexingMap(Ctx, dimVars(In), {}, Rt.Vars, Res), Rt.Bindings)});
    return R;
  }
  case HloOpcode::Sort: {
    int64_t SortDim = I.dimensions().at(0);
    std::vector<Expr> Res;
    for (int64_t D = 0; D < In.rank(); ++D)
      Res.push_back(D == SortDim ? Ctx.symbol(0) : Ctx.dim(unsigned(D)));
    R.Operands.push_back({finish(
        IndexingMap(Ctx, dimVars(In), {{"", {0, In.Dims[size_t(SortDim)] - 1}}},
                    {}, Res))});
    return R;
  }
  case HloOpcode::AllGather: {
    // One device: every replica position of the group holds this element.
    int64_t G = I.dimensions().at(0);
    const Shape &Out = outputShape(I, InputId);
    int64_t N = In.Dims[size_t(G)];
    int64_t Copies = N > 0 ? Out.Dims[size_t(G)] / N : 0;
    std::vector<Expr> Res;
    for (int64_t D = 0; D < In.rank(); ++D)
      Res.push_back(D == G ? Ctx.dim(unsigned(D)) + Ctx.symbol(0) * N
                           : Ctx.dim(unsigned(D)));
    R.Operands.push_back({finish(
        IndexingMap(Ctx, dimVars(In), {{"", {0, Copies - 1}}}, {}, Res))});
    return R;
  }
  case HloOpcode::AllReduce:
  case HloOpcode::CollectivePermute:
    if (In.isArray()) {
      R.Operands.push_back({identityMap(Ctx, In)});
      return R;
    }
    break;
  default:
    break;
  }
  R.Operands.push_back({OperandMap{IndexingMap::undefined(), {}}});
  return R;
}

} // namespace hlo
} // namespace idxmap
