//===- OpIndexing.cpp - Output-to-input and input-to-output maps per op ---===//
//
// Part of idxmap. One function per op family; each builds the map from the
// op's semantics (see FORMATS.md and the table in ARCHITECTURE.md) and
// simplifies it. Reshape and bitcast keep size-1 dims (no point-dim
// replacement) so that their maps stay readable.
//
//===----------------------------------------------------------------------===//
#include "ContractionOps.h"
#include "IndexedOps.h"

#include "OpSupport.h"
#include "ScanOp.h"
#include "idxmap/Compose.h"
#include "idxmap/Delinearize.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace idxmap {

bool OperandMap::operator==(const OperandMap &O) const {
  if (!(Map == O.Map) || Bindings.size() != O.Bindings.size() ||
      !(ReplicaId == O.ReplicaId))
    return false;
  for (size_t I = 0; I < Bindings.size(); ++I)
    if (Bindings[I].Source != O.Bindings[I].Source ||
        !(Bindings[I].Map == O.Bindings[I].Map))
      return false;
  return true;
}

std::string InstructionIndexing::str(int64_t OnlyOperand) const {
  std::string Out;
  for (size_t K = 0; K < Operands.size(); ++K) {
    if (OnlyOperand >= 0 && int64_t(K) != OnlyOperand)
      continue;
    Out += "operand id = " + std::to_string(K) + "\n";
    for (const OperandMap &OM : Operands[K]) {
      if (OM.Map.isUndefined()) {
        Out += "unknown indexing\n";
        continue;
      }
      Out += printMap(OM.Map) + "\n";
      if (!OM.Bindings.empty())
        Out += "runtime variables:\n";
      for (size_t R = 0; R < OM.Bindings.size(); ++R)
        Out += "  rt" + std::to_string(R) + ": " +
               (OM.Bindings[R].Source
                    ? hlo::runtimeSourceName(*OM.Bindings[R].Source)
                    : std::string("?")) +
               "; " + printMap(OM.Bindings[R].Map) + "\n";
      if (!OM.ReplicaId.isUndefined())
        Out += "replica id:\n  " + printMap(OM.ReplicaId) + "\n";
    }
  }
  return Out;
}

namespace {

/// The array shape of output \p OutputId of \p I.
const Shape &outputShape(const HloInstruction &I, int64_t OutputId) {
  const Shape &S = I.shape();
  if (S.isTuple() && OutputId >= 0 &&
      OutputId < int64_t(S.TupleShapes.size()))
    return S.TupleShapes[OutputId];
  return S;
}

using hlo::dimVars;
using hlo::singleMap;
using hlo::undefinedFor;
using hlo::undefinedMap;

std::vector<Expr> dimExprs(Context &Ctx, unsigned N) {
  std::vector<Expr> Es;
  for (unsigned I = 0; I < N; ++I)
    Es.push_back(Ctx.dim(I));
  return Es;
}

OperandMap finish(IndexingMap M, bool PreservePointDims = false,
                  std::vector<RuntimeBinding> Bindings = {}) {
  SimplifyOptions O;
  O.ReplacePointDims = !PreservePointDims;
  simplify(M, O);
  return {std::move(M), std::move(Bindings)};
}

/// `(d...) -> ()` over \p Out: a scalar operand read by every output element.
OperandMap scalarMap(Context &Ctx, const Shape &Out) {
  return finish(IndexingMap(Ctx, dimVars(Out), {}, {}, {}));
}

OperandMap identityMap(Context &Ctx, const Shape &Out) {
  return finish(IndexingMap(Ctx, dimVars(Out), {}, {},
                            dimExprs(Ctx, Out.rank())));
}

/// Row-major linearization of \p Idx over \p Dims.
Expr linearize(Context &Ctx, const std::vector<Expr> &Idx,
               const std::vector<int64_t> &Dims) {
  Expr Lin = Ctx.constant(0);
  for (size_t I = 0; I < Dims.size(); ++I)
    Lin = Lin * Dims[I] + Idx[I];
  return Lin;
}

/// For a reshape from \p In dims to \p Out dims, the input index as
/// expressions of the output index \p OutIdx. Dims are grouped into minimal
/// runs with equal element counts so that each group is linearized and
/// delinearized on its own.
std::vector<Expr> reshapeIndex(Context &Ctx, const std::vector<int64_t> &In,
                               const std::vector<int64_t> &Out,
                               const std::vector<Expr> &OutIdx) {
  std::vector<Expr> Result(In.size(), Ctx.constant(0));
  int64_t InN = 1, OutN = 1;
  for (int64_t D : In)
    InN *= D;
  for (int64_t D : Out)
    OutN *= D;
  if (InN == 0 || OutN == 0)
    return Result; // No elements: the domain is empty anyway.
  size_t I = 0, J = 0;
  while (I < In.size() || J < Out.size()) {
    size_t SI = I, SJ = J;
    int64_t PIn = 1, POut = 1;
    if (I < In.size())
      PIn *= In[I++];
    if (J < Out.size())
      POut *= Out[J++];
    while (PIn != POut) {
      if (PIn < POut && I < In.size())
        PIn *= In[I++];
      else if (J < Out.size())
        POut *= Out[J++];
      else
        break;
    }
    std::vector<int64_t> GIn(In.begin() + SI, In.begin() + I);
    std::vector<int64_t> GOut(Out.begin() + SJ, Out.begin() + J);
    std::vector<Expr> GIdx(OutIdx.begin() + SJ, OutIdx.begin() + J);
    Expr Lin = linearize(Ctx, GIdx, GOut);
    std::vector<Expr> Parts = delinearize(Ctx, Lin, GIn);
    for (size_t K = 0; K < Parts.size(); ++K)
      Result[SI + K] = Parts[K];
  }
  return Result;
}

/// Major-to-minor order of a shape's layout.
std::vector<int64_t> majorToMinor(const Shape &S) {
  std::vector<int64_t> L = S.layoutOrDefault();
  std::reverse(L.begin(), L.end());
  return L;
}

//===----------------------------------------------------------------------===//
// Output-to-input, per op family
//===----------------------------------------------------------------------===//

InstructionIndexing elementwise(Context &Ctx, const HloInstruction &I) {
  InstructionIndexing R;
  for (const HloInstruction *Op : I.operands())
    R.Operands.push_back({Op->shape().isScalar() && I.shape().rank() > 0
                              ? scalarMap(Ctx, I.shape())
                              : identityMap(Ctx, I.shape())});
  return R;
}

InstructionIndexing broadcast(Context &Ctx, const HloInstruction &I) {
  std::vector<Expr> Res;
  for (int64_t D : I.dimensions())
    Res.push_back(Ctx.dim(D));
  return {{{finish(IndexingMap(Ctx, dimVars(I.shape()), {}, {}, Res))}}};
}

InstructionIndexing transpose(Context &Ctx, const HloInstruction &I) {
  const std::vector<int64_t> &Perm = I.dimensions();
  std::vector<Expr> Res(Perm.size());
  for (size_t O = 0; O < Perm.size(); ++O)
    Res[Perm[O]] = Ctx.dim(O);
  return {{{finish(IndexingMap(Ctx, dimVars(I.shape()), {}, {}, Res))}}};
}

InstructionIndexing reverse(Context &Ctx, const HloInstruction &I) {
  std::vector<Expr> Res = dimExprs(Ctx, I.shape().rank());
  for (int64_t D : I.dimensions())
    Res[D] = Ctx.constant(I.shape().Dims[D] - 1) - Ctx.dim(D);
  return {{{finish(IndexingMap(Ctx, dimVars(I.shape()), {}, {}, Res))}}};
}

InstructionIndexing slice(Context &Ctx, const HloInstruction &I) {
  std::vector<Expr> Res;
  for (int64_t D = 0; D < I.shape().rank(); ++D)
    Res.push_back(Ctx.dim(D) * I.sliceStrides()[D] + I.sliceStarts()[D]);
  return {{{finish(IndexingMap(Ctx, dimVars(I.shape()), {}, {}, Res))}}};
}

InstructionIndexing reshape(Context &Ctx, const HloInstruction &I) {
  const Shape &In = I.operand(0)->shape();
  std::vector<Expr> Res =
      reshapeIndex(Ctx, In.Dims, I.shape().Dims, dimExprs(Ctx, I.shape().rank()));
  return {{{finish(IndexingMap(Ctx, dimVars(I.shape()), {}, {}, Res),
                   /*PreservePointDims=*/true)}}};
}

/// A bitcast reinterprets the physical order: linearize the output index in
/// the output's layout, delinearize in the input's layout.
InstructionIndexing bitcast(Context &Ctx, const HloInstruction &I) {
  const Shape &In = I.operand(0)->shape();
  const Shape &Out = I.shape();
  if (In.isTuple() || Out.isTuple() || byteWidth(In.Type) != byteWidth(Out.Type))
    return undefinedFor(I);
  std::vector<int64_t> OutM2m = majorToMinor(Out), InM2m = majorToMinor(In);
  std::vector<int64_t> OutPhys, InPhys;
  std::vector<Expr> OutPhysIdx;
  for (int64_t D : OutM2m) {
    OutPhys.push_back(Out.Dims[D]);
    OutPhysIdx.push_back(Ctx.dim(D));
  }
  for (int64_t D : InM2m)
    InPhys.push_back(In.Dims[D]);
  std::vector<Expr> InPhysIdx = reshapeIndex(Ctx, InPhys, OutPhys, OutPhysIdx);
  std::vector<Expr> Res(In.rank());
  for (size_t K = 0; K < InM2m.size(); ++K)
    Res[InM2m[K]] = InPhysIdx[K];
  return {{{finish(IndexingMap(Ctx, dimVars(Out), {}, {}, Res),
                   /*PreservePointDims=*/true)}}};
}

InstructionIndexing concatenate(Context &Ctx, const HloInstruction &I) {
  InstructionIndexing R;
  int64_t C = I.dimensions().at(0), Offset = 0;
  for (const HloInstruction *Op : I.operands()) {
    int64_t Size = Op->shape().Dims[C];
    std::vector<Variable> Dims = dimVars(I.shape());
    Dims[C].Bound = {Offset, Offset + Size - 1};
    std::vector<Expr> Res = dimExprs(Ctx, I.shape().rank());
    Res[C] = Ctx.dim(C) - Offset;
    R.Operands.push_back({finish(IndexingMap(Ctx, Dims, {}, {}, Res))});
    Offset += Size;
  }
  return R;
}

InstructionIndexing pad(Context &Ctx, const HloInstruction &I) {
  const Shape &Out = I.shape();
  const Shape &In = I.operand(0)->shape();
  std::vector<Variable> Dims = dimVars(Out);
  std::vector<Expr> Res;
  std::vector<Constraint> Cs;
  for (int64_t D = 0; D < Out.rank(); ++D) {
    const PaddingDim &P = I.padding()[D];
    int64_t Step = P.Interior + 1;
    // Output position of the last input element: Lo + (n - 1) * Step.
    int64_t Last = P.Lo + (In.Dims[D] - 1) * Step;
    Dims[D].Bound = Dims[D].Bound.intersect({std::max<int64_t>(0, P.Lo), Last});
    Expr Shifted = Ctx.dim(D) - P.Lo;
    if (Step == 1) {
      Res.push_back(Shifted);
    } else {
      Res.push_back(Shifted.floorDiv(Step));
      Cs.push_back({Shifted % Step, {0, 0}});
    }
  }
  bool Empty = std::any_of(Dims.begin(), Dims.end(),
                           [](const Variable &V) { return V.Bound.isEmpty(); });
  IndexingMap M(Ctx, Dims, {}, {}, Res, Cs);
  InstructionIndexing R;
  // With interior padding, XLA's form: `(d0 - lo) floordiv s` where
  // `(d0 - lo) mod s in [0, 0]`, which simplify would rewrite.
  R.Operands.push_back({Cs.empty() || Empty ? finish(std::move(M))
                                            : OperandMap{std::move(M), {}}});
  R.Operands.push_back({scalarMap(Ctx, Out)});
  return R;
}

InstructionIndexing reduce(Context &Ctx, const HloInstruction &I,
                           int64_t OutputId) {
  int64_t N = I.operandCount() / 2;
  const Shape &In = I.operand(0)->shape();
  const Shape &Out = outputShape(I, OutputId);
  const std::vector<int64_t> &Red = I.dimensions();
  std::vector<Variable> Range;
  std::vector<Expr> Res;
  unsigned Kept = 0;
  for (int64_t D = 0; D < In.rank(); ++D) {
    if (std::find(Red.begin(), Red.end(), D) != Red.end()) {
      Res.push_back(Ctx.symbol(Range.size()));
      Range.push_back({"", {0, In.Dims[D] - 1}});
    } else {
      Res.push_back(Ctx.dim(Kept++));
    }
  }
  OperandMap InputMap = finish(IndexingMap(Ctx, dimVars(Out), Range, {}, Res));
  InstructionIndexing R;
  for (int64_t K = 0; K < N; ++K)
    R.Operands.push_back({InputMap});
  for (int64_t K = 0; K < N; ++K)
    R.Operands.push_back({scalarMap(Ctx, Out)});
  return R;
}

InstructionIndexing tuple(Context &Ctx, const HloInstruction &I,
                          int64_t OutputId) {
  InstructionIndexing R;
  for (int64_t K = 0; K < I.operandCount(); ++K) {
    const Shape &S = I.operand(K)->shape();
    if (K != OutputId)
      R.Operands.push_back({});
    else if (S.isTuple()) // One output id cannot name an element of it.
      R.Operands.push_back({undefinedMap()});
    else
      R.Operands.push_back({identityMap(Ctx, S)});
  }
  return R;
}

InstructionIndexing fusion(Context &Ctx, const HloInstruction &I,
                           int64_t OutputId) {
  const HloComputation *F = I.fusedComputation();
  if (!F)
    return undefinedFor(I);
  GroupedIndexing G = computeGroupedIndexing(Ctx, *F, nullptr, OutputId);
  InstructionIndexing R;
  for (int64_t K = 0; K < I.operandCount(); ++K) {
    auto It = K < F->parameterCount() ? G.find(F->parameter(K)) : G.end();
    R.Operands.push_back(It == G.end() ? std::vector<OperandMap>{}
                                       : It->second);
  }
  return R;
}

} // namespace

int64_t numOutputs(const HloInstruction &I) {
  const Shape &S = I.shape();
  return S.isTuple() ? int64_t(S.TupleShapes.size()) : 1;
}

InstructionIndexing computeOutputToInputIndexing(Context &Ctx,
                                                 const HloInstruction &I,
                                                 int64_t OutputId) {
  HloOpcode Op = I.opcode();
  if (OutputId < 0 || OutputId >= numOutputs(I))
    return undefinedFor(I);
  if (isElementwise(Op) || Op == HloOpcode::Copy)
    return elementwise(Ctx, I);
  switch (Op) {
  case HloOpcode::Parameter:
  case HloOpcode::Constant:
  case HloOpcode::Iota:
    return {};
  case HloOpcode::Broadcast:
    return broadcast(Ctx, I);
  case HloOpcode::Transpose:
    return transpose(Ctx, I);
  case HloOpcode::Reverse:
    return reverse(Ctx, I);
  case HloOpcode::Slice:
    return slice(Ctx, I);
  case HloOpcode::Reshape:
    return reshape(Ctx, I);
  case HloOpcode::Bitcast:
    return bitcast(Ctx, I);
  case HloOpcode::Concatenate:
    return concatenate(Ctx, I);
  case HloOpcode::Pad:
    return pad(Ctx, I);
  case HloOpcode::Reduce:
    return reduce(Ctx, I, OutputId);
  case HloOpcode::DynamicSlice:
  case HloOpcode::DynamicUpdateSlice:
  case HloOpcode::Gather:
  case HloOpcode::Scatter:
  case HloOpcode::Sort:
  case HloOpcode::AllGather:
  case HloOpcode::AllReduce:
  case HloOpcode::CollectivePermute:
    return hlo::indexedOutputToInput(Ctx, I, OutputId);
  case HloOpcode::Scan:
    return hlo::scanOutputToInput(Ctx, I, OutputId);
  case HloOpcode::Tuple:
    return tuple(Ctx, I, OutputId);
  case HloOpcode::GetTupleElement:
    if (I.shape().isTuple())
      return undefinedFor(I);
    return {{{identityMap(Ctx, I.shape())}}};
  case HloOpcode::Fusion:
  case HloOpcode::Call:
    return fusion(Ctx, I, OutputId);
  default:
    // dot, convolution, reduce-window, map, erf, acos, complex, ...
    if (hlo::isContractionIndexed(Op))
      return hlo::contractionOutputToInput(Ctx, I, OutputId);
    return undefinedFor(I);
  }
}

//===----------------------------------------------------------------------===//
// Input-to-output
//===----------------------------------------------------------------------===//

InstructionIndexing computeInputToOutputIndexing(Context &Ctx,
                                                 const HloInstruction &I,
                                                 int64_t InputId) {
  if (InputId < 0 || InputId >= I.operandCount())
    return singleMap(undefinedMap());
  const Shape &In = I.operand(InputId)->shape();
  const Shape &Out = I.shape().isTuple() ? outputShape(I, 0) : I.shape();
  HloOpcode Op = I.opcode();
  if (isElementwise(Op) || Op == HloOpcode::Copy) {
    if (In.isScalar() && Out.rank() > 0) {
      // A scalar feeds every output element.
      std::vector<Variable> Range = dimVars(Out);
      return singleMap(finish(IndexingMap(Ctx, {}, Range, {},
                                    [&] {
                                      std::vector<Expr> R;
                                      for (unsigned K = 0; K < Range.size(); ++K)
                                        R.push_back(Ctx.symbol(K));
                                      return R;
                                    }())));
    }
    return singleMap(identityMap(Ctx, In));
  }
  switch (Op) {
  case HloOpcode::Broadcast: {
    std::vector<Expr> Res(Out.rank());
    std::vector<Variable> Range;
    const std::vector<int64_t> &Dims = I.dimensions();
    for (int64_t D = 0; D < Out.rank(); ++D) {
      auto It = std::find(Dims.begin(), Dims.end(), D);
      if (It != Dims.end()) {
        Res[D] = Ctx.dim(It - Dims.begin());
      } else {
        Res[D] = Ctx.symbol(Range.size());
        Range.push_back({"", {0, Out.Dims[D] - 1}});
      }
    }
    return singleMap(finish(IndexingMap(Ctx, dimVars(In), Range, {}, Res)));
  }
  case HloOpcode::Transpose: {
    const std::vector<int64_t> &Perm = I.dimensions();
    std::vector<Expr> Res;
    for (int64_t P : Perm)
      Res.push_back(Ctx.dim(P));
    return singleMap(finish(IndexingMap(Ctx, dimVars(In), {}, {}, Res)));
  }
  case HloOpcode::Reverse: {
    std::vector<Expr> Res = dimExprs(Ctx, In.rank());
    for (int64_t D : I.dimensions())
      Res[D] = Ctx.constant(In.Dims[D] - 1) - Ctx.dim(D);
    return singleMap(finish(IndexingMap(Ctx, dimVars(In), {}, {}, Res)));
  }
  case HloOpcode::Reshape: {
    std::vector<Expr> Res =
        reshapeIndex(Ctx, Out.Dims, In.Dims, dimExprs(Ctx, In.rank()));
    return singleMap(finish(IndexingMap(Ctx, dimVars(In), {}, {}, Res), true));
  }
  case HloOpcode::Bitcast: {
    if (In.isTuple() || Out.isTuple() || byteWidth(In.Type) != byteWidth(Out.Type))
      return singleMap(undefinedMap());
    std::vector<int64_t> InM2m = majorToMinor(In), OutM2m = majorToMinor(Out);
    std::vector<int64_t> InPhys, OutPhys;
    std::vector<Expr> InPhysIdx;
    for (int64_t D : InM2m) {
      InPhys.push_back(In.Dims[D]);
      InPhysIdx.push_back(Ctx.dim(D));
    }
    for (int64_t D : OutM2m)
      OutPhys.push_back(Out.Dims[D]);
    std::vector<Expr> OutPhysIdx = reshapeIndex(Ctx, OutPhys, InPhys, InPhysIdx);
    std::vector<Expr> Res(Out.rank());
    for (size_t K = 0; K < OutM2m.size(); ++K)
      Res[OutM2m[K]] = OutPhysIdx[K];
    return singleMap(finish(IndexingMap(Ctx, dimVars(In), {}, {}, Res), true));
  }
  case HloOpcode::Slice: {
    std::vector<Variable> Dims = dimVars(In);
    std::vector<Expr> Res;
    std::vector<Constraint> Cs;
    for (int64_t D = 0; D < In.rank(); ++D) {
      int64_t Start = I.sliceStarts()[D], Stride = I.sliceStrides()[D];
      int64_t Last = Start + (Out.Dims[D] - 1) * Stride;
      Dims[D].Bound = Dims[D].Bound.intersect({Start, Last});
      Expr Shifted = Ctx.dim(D) - Start;
      Res.push_back(Stride == 1 ? Shifted : Shifted.floorDiv(Stride));
      if (Stride != 1)
        Cs.push_back({Shifted % Stride, {0, 0}});
    }
    return singleMap(finish(IndexingMap(Ctx, Dims, {}, {}, Res, Cs)));
  }
  case HloOpcode::Concatenate: {
    int64_t C = I.dimensions().at(0), Offset = 0;
    for (int64_t K = 0; K < InputId; ++K)
      Offset += I.operand(K)->shape().Dims[C];
    std::vector<Expr> Res = dimExprs(Ctx, In.rank());
    Res[C] = Ctx.dim(C) + Offset;
    return singleMap(finish(IndexingMap(Ctx, dimVars(In), {}, {}, Res)));
  }
  case HloOpcode::Reduce: {
    int64_t N = I.operandCount() / 2;
    std::vector<Expr> Res;
    if (InputId < N) {
      const std::vector<int64_t> &Red = I.dimensions();
      for (int64_t D = 0; D < In.rank(); ++D)
        if (std::find(Red.begin(), Red.end(), D) == Red.end())
          Res.push_back(Ctx.dim(D));
      return singleMap(finish(IndexingMap(Ctx, dimVars(In), {}, {}, Res)));
    }
    // An init value feeds every output element.
    std::vector<Variable> Range = dimVars(Out);
    for (unsigned K = 0; K < Range.size(); ++K)
      Res.push_back(Ctx.symbol(K));
    return singleMap(finish(IndexingMap(Ctx, {}, Range, {}, Res)));
  }
  case HloOpcode::Pad: {
    if (InputId != 0)
      return singleMap(undefinedMap());
    std::vector<Expr> Res;
    std::vector<Constraint> Cs;
    for (int64_t D = 0; D < In.rank(); ++D) {
      const PaddingDim &P = I.padding()[D];
      Expr E = Ctx.dim(D) * (P.Interior + 1) + P.Lo;
      Res.push_back(E);
      // Negative padding cuts input elements off.
      Cs.push_back({E, {0, Out.Dims[D] - 1}});
    }
    return singleMap(finish(IndexingMap(Ctx, dimVars(In), {}, {}, Res, Cs)));
  }
  case HloOpcode::Sort:
  case HloOpcode::AllGather:
  case HloOpcode::AllReduce:
  case HloOpcode::CollectivePermute:
  case HloOpcode::DynamicUpdateSlice:
    return hlo::indexedInputToOutput(Ctx, I, InputId);
  default:
    // map, erf, acos, complex, ...: the identity (none for dot,
    // convolution and reduce-window, as in XLA).
    if (hlo::isContractionIndexed(Op))
      return hlo::contractionInputToOutput(Ctx, I, InputId);
    return singleMap(undefinedMap());
  }
}

// The two predicates follow the dispatch switches above: an op listed
// there is listed here (OpSupportTest checks them against every
// instruction of the corpus modules).
bool hasOutputToInputIndexing(HloOpcode Op) {
  if (isElementwise(Op) || hlo::isContractionIndexed(Op))
    return true;
  switch (Op) {
  case HloOpcode::Parameter:
  case HloOpcode::Constant:
  case HloOpcode::Iota:
  case HloOpcode::Copy:
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reverse:
  case HloOpcode::Slice:
  case HloOpcode::Reshape:
  case HloOpcode::Bitcast:
  case HloOpcode::Concatenate:
  case HloOpcode::Pad:
  case HloOpcode::Reduce:
  case HloOpcode::DynamicSlice:
  case HloOpcode::DynamicUpdateSlice:
  case HloOpcode::Gather:
  case HloOpcode::Scatter:
  case HloOpcode::Sort:
  case HloOpcode::AllGather:
  case HloOpcode::AllReduce:
  case HloOpcode::CollectivePermute:
  case HloOpcode::Scan:
  case HloOpcode::Tuple:
  case HloOpcode::GetTupleElement:
  case HloOpcode::Fusion:
  case HloOpcode::Call:
    return true;
  default:
    return false;
  }
}

bool hasInputToOutputIndexing(HloOpcode Op) {
  if (isElementwise(Op))
    return true;
  switch (Op) {
  case HloOpcode::Copy:
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reverse:
  case HloOpcode::Reshape:
  case HloOpcode::Bitcast:
  case HloOpcode::Slice:
  case HloOpcode::Concatenate:
  case HloOpcode::Reduce:
  case HloOpcode::Pad:
  case HloOpcode::Sort:
  case HloOpcode::AllGather:
  case HloOpcode::AllReduce:
  case HloOpcode::CollectivePermute:
  case HloOpcode::DynamicUpdateSlice:
    return true;
  default:
    // map and the elementwise ops after Call; not dot, convolution,
    // reduce-window.
    return hlo::isContractionIndexed(Op) && Op != HloOpcode::Dot &&
           Op != HloOpcode::Convolution && Op != HloOpcode::ReduceWindow;
  }
}

IndexingMap linearizedPhysicalMap(Context &Ctx, const Shape &S) {
  std::vector<int64_t> M2m = S.layoutOrDefault();
  Expr Lin = Ctx.constant(0);
  int64_t Stride = 1;
  for (int64_t D : M2m) {
    Lin = Lin + Ctx.dim(D) * Stride;
    Stride *= S.Dims[D];
  }
  IndexingMap M(Ctx, dimVars(S), {}, {}, {Lin});
  return M;
}

} // namespace idxmap
