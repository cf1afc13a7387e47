//===- analysis/hlo/ScanOp.cpp - Shape rule, maps, evaluation of scan -----===//
//
// Part of idxmap. XLA's `scan` op (ScanOp.h describes its operands and
// results). The indexing is exact when the body works line by line (every
// value of the body is a slice-shaped or scalar elementwise value, as in
// JAX's cumsum, cumprod and cummax bodies): output element i of a line reads
// elements 0..i of that line (i..n-1 for a reverse scan), a range variable
// with a constraint. A body that mixes lines (a reduce, a transpose inside)
// gets the sound over-approximation: every element of the positions
// 0..i of every line.
//
//===----------------------------------------------------------------------===//
#include "ScanOp.h"
#include "OpSupport.h"

#include "idxmap/Simplify.h"

#include <charconv>
#include <limits>

namespace idxmap {
namespace hlo {

namespace {

using Problem = std::optional<std::string>;

Problem fail(const std::string &M) { return "scan: " + M; }

std::vector<int64_t> without(const std::vector<int64_t> &Dims, int64_t D) {
  std::vector<int64_t> Out;
  for (size_t K = 0; K < Dims.size(); ++K)
    if (int64_t(K) != D)
      Out.push_back(Dims[K]);
  return Out;
}

std::optional<int64_t> intAttr(const HloInstruction &I, std::string_view Key) {
  auto V = I.attribute(Key);
  if (!V)
    return std::nullopt;
  int64_t N = 0;
  auto [Ptr, Ec] = std::from_chars(V->data(), V->data() + V->size(), N);
  if (Ec != std::errc() || Ptr != V->data() + V->size())
    return std::nullopt;
  return N;
}

/// The body's root as a list of array shapes (a tuple's elements, or the
/// one array).
std::vector<Shape> rootShapes(const HloComputation &Body) {
  const Shape &R = Body.root()->shape();
  if (R.isTuple())
    return R.TupleShapes;
  return {R};
}

/// The result as a list of array shapes.
std::vector<Shape> resultShapes(const HloInstruction &I) {
  if (I.shape().isTuple())
    return I.shape().TupleShapes;
  return {I.shape()};
}

/// Whether every value of \p Body is computed line by line: parameters,
/// scalar constants, broadcasts of scalars, elementwise ops and a tuple
/// root, each of \p Slice's dims or scalar. Then element j of an output
/// slice reads element j of each parameter slice (or a scalar) only.
bool isLinewise(const HloComputation &Body, const std::vector<int64_t> &Slice) {
  for (const HloInstruction *B : Body.instructions()) {
    const Shape &S = B->shape();
    if (B->opcode() == HloOpcode::Tuple && B == Body.root())
      continue;
    if (!S.isArray() || (!S.isScalar() && S.Dims != Slice))
      return false;
    HloOpcode Op = B->opcode();
    if (Op == HloOpcode::Parameter || Op == HloOpcode::Constant)
      continue;
    if (Op == HloOpcode::Broadcast && B->operand(0)->shape().isScalar())
      continue;
    if (!isElementwise(Op) && Op != HloOpcode::Copy)
      return false;
    for (const HloInstruction *X : B->operands())
      if (!X->shape().isScalar() && X->shape().Dims != S.Dims)
        return false;
  }
  return true;
}

/// Copies element \p From of \p Src to element \p To of \p Dst (by bits
/// when the types agree, else through a double or an integer).
void copyElement(const Literal &Src, int64_t From, Literal &Dst, int64_t To) {
  if (Src.elementType() == Dst.elementType())
    Dst.setBits(To, Src.getBits(From));
  else if (isFloatType(Dst.elementType()) || isFloatType(Src.elementType()))
    Dst.setDouble(To, Src.getDouble(From));
  else
    Dst.setInt(To, Src.getInt(From));
}

} // namespace

ScanLayout scanLayout(const HloInstruction &I) {
  ScanLayout L;
  L.Dim = I.dimensions().empty() ? 0 : I.dimensions().front();
  L.Carries = intAttr(I, "num_carries").value_or(0);
  L.Inputs = I.operandCount() - L.Carries;
  L.Outputs = int64_t(resultShapes(I).size()) - L.Carries;
  auto R = I.attribute("is_reverse");
  L.Reverse = R && *R == "true";
  return L;
}

std::optional<std::string> verifyScan(const HloInstruction &I,
                                      const AttrSet &Attrs) {
  for (const char *Key : {"dimensions", "num_carries", "to_apply"})
    if (!Attrs.count(Key))
      return fail(std::string("missing attribute '") + Key + "'");
  for (const char *Key : {"is_reverse", "is_associative"}) {
    auto V = I.attribute(Key);
    if (V && *V != "true" && *V != "false")
      return fail(std::string(Key) + " must be true or false, not '" +
                  std::string(*V) + "'");
  }
  std::optional<int64_t> C = intAttr(I, "num_carries");
  if (!C || *C < 0 || *C >= I.operandCount())
    return fail("num_carries must be an integer in [0, " +
                std::to_string(I.operandCount() - 1) +
                "] (at least one input), not '" +
                std::string(I.attribute("num_carries").value_or("")) + "'");
  if (I.dimensions().size() != 1)
    return fail("dimensions must name one dimension, not " +
                dimList(I.dimensions()));
  for (int64_t K = 0; K < I.operandCount(); ++K)
    if (!I.operand(K)->shape().isArray())
      return fail("operand " + std::to_string(K) + " must be an array, not " +
                  I.operand(K)->shape().str());
  ScanLayout L = scanLayout(I);
  const Shape &In0 = I.operand(0)->shape();
  if (L.Dim < 0 || L.Dim >= In0.rank())
    return fail("dimension " + std::to_string(L.Dim) +
                " out of range for rank " + std::to_string(In0.rank()));
  for (int64_t K = 1; K < L.Inputs; ++K)
    if (!I.operand(K)->shape().sameDims(In0))
      return fail("input " + std::to_string(K) + " is " +
                  I.operand(K)->shape().str() +
                  ", expected the dimensions of " + In0.str());
  if (I.calledComputations().size() != 1)
    return fail("expected exactly one called computation");
  const HloComputation &Body = *I.toApply();
  std::vector<int64_t> Slice = without(In0.Dims, L.Dim);
  if (Body.parameterCount() != L.Inputs + L.Carries)
    return fail("computation '" + Body.name() + "' has " +
                std::to_string(Body.parameterCount()) +
                " parameters, expected " +
                std::to_string(L.Inputs + L.Carries) +
                " (the inputs' slices, then the carries)");
  for (int64_t K = 0; K < Body.parameterCount(); ++K) {
    const Shape &Op = I.operand(K)->shape();
    Shape Want = K < L.Inputs ? Shape(Op.Type, Slice) : Op;
    const Shape &P = Body.parameter(K)->shape();
    if (!P.isArray() || P.Type != Want.Type || P.Dims != Want.Dims)
      return fail("parameter " + std::to_string(K) + " of '" + Body.name() +
                  "' is " + P.str() + ", expected " + Want.str());
  }
  std::vector<Shape> Roots = rootShapes(Body), Results = resultShapes(I);
  if (Body.root()->shape().isTuple() != I.shape().isTuple() ||
      Roots.size() != Results.size() || L.Outputs < 0)
    return fail("'" + Body.name() + "' returns " + Body.root()->shape().str() +
                " but the result is " + I.shape().str() +
                " (the outputs then " + std::to_string(L.Carries) +
                " carries, alike)");
  for (size_t K = 0; K < Roots.size(); ++K) {
    bool IsCarry = int64_t(K) >= L.Outputs;
    const Shape &R = Roots[K];
    Shape WantRoot = IsCarry
                         ? I.operand(L.Inputs + int64_t(K) - L.Outputs)->shape()
                         : Shape(R.Type, Slice);
    if (!R.isArray() || R.Type != WantRoot.Type || R.Dims != WantRoot.Dims)
      return fail("element " + std::to_string(K) + " of what '" + Body.name() +
                  "' returns is " + R.str() + ", expected " + WantRoot.str());
    Shape WantResult = IsCarry ? WantRoot : Shape(R.Type, In0.Dims);
    if (!Results[K].isArray() || Results[K].Type != WantResult.Type ||
        Results[K].Dims != WantResult.Dims)
      return fail("result " + std::to_string(K) + " is " + Results[K].str() +
                  ", expected " + WantResult.str());
  }
  return std::nullopt;
}

InstructionIndexing scanOutputToInput(Context &Ctx, const HloInstruction &I,
                                      int64_t OutputId) {
  ScanLayout L = scanLayout(I);
  std::vector<Shape> Results = resultShapes(I);
  if (OutputId < 0 || OutputId >= int64_t(Results.size()))
    return undefinedFor(I);
  const Shape &Out = Results[size_t(OutputId)];
  const Shape &In0 = I.operand(0)->shape();
  int64_t N = In0.Dims[size_t(L.Dim)];
  std::vector<int64_t> Slice = without(In0.Dims, L.Dim);
  bool IsCarry = OutputId >= L.Outputs;
  bool Linewise = isLinewise(*I.toApply(), Slice);

  // The index of the output's line in the slice (the output's dims without
  // the scanned one, or a carry's own dims).
  std::vector<Expr> Line;
  for (int64_t D = 0; D < Out.rank(); ++D)
    if (IsCarry || D != L.Dim)
      Line.push_back(Ctx.dim(unsigned(D)));

  // Inputs: the line (every line when the body mixes them) at positions
  // s0 up to the output's (from it, reversed); the whole scanned dim for a
  // final carry.
  auto InputMap = [&]() -> OperandMap {
    std::vector<Variable> Syms{{"", {0, N - 1}}};
    std::vector<Expr> Res;
    size_t J = 0;
    for (int64_t D = 0; D < In0.rank(); ++D) {
      if (D == L.Dim) {
        Res.push_back(Ctx.symbol(0));
      } else if (Linewise) {
        Res.push_back(Line[J++]);
      } else {
        Res.push_back(Ctx.symbol(unsigned(Syms.size())));
        Syms.push_back({"", {0, In0.Dims[size_t(D)] - 1}});
      }
    }
    IndexingMap M(Ctx, dimVars(Out), std::move(Syms), {}, std::move(Res));
    if (!IsCarry) {
      Expr Pos = Ctx.dim(unsigned(L.Dim)), S = Ctx.symbol(0);
      M.addConstraint(L.Reverse ? S - Pos : Pos - S, {0, N - 1});
    }
    SimplifyOptions O;
    simplify(M, O);
    return {std::move(M), {}};
  };
  // Inits: the line's carry (a scalar carry: itself), or all of it.
  auto InitMap = [&](const Shape &Init) -> OperandMap {
    std::vector<Variable> Syms;
    std::vector<Expr> Res;
    if (Linewise && !Init.isScalar() && Init.Dims.size() == Line.size()) {
      Res = Line;
    } else {
      for (int64_t D : Init.Dims) {
        Res.push_back(Ctx.symbol(unsigned(Syms.size())));
        Syms.push_back({"", {0, D - 1}});
      }
    }
    IndexingMap M(Ctx, dimVars(Out), std::move(Syms), {}, std::move(Res));
    SimplifyOptions O;
    simplify(M, O);
    return {std::move(M), {}};
  };
  InstructionIndexing R;
  for (int64_t K = 0; K < L.Inputs; ++K)
    R.Operands.push_back({InputMap()});
  for (int64_t K = 0; K < L.Carries; ++K)
    R.Operands.push_back({InitMap(I.operand(L.Inputs + K)->shape())});
  return R;
}

Expected<Literal> evalScan(const HloInstruction &I,
                           const std::vector<const Literal *> &In,
                           const ContractionEnv &Env) {
  ScanLayout L = scanLayout(I);
  const std::vector<int64_t> &Dims = In[0]->shape().Dims;
  int64_t N = Dims[size_t(L.Dim)];
  // Element (outer, pos, inner) of an input sits at (outer * N + pos) *
  // Inner + inner; its slice element at outer * Inner + inner.
  int64_t Inner = 1, Outer = 1;
  for (int64_t D = 0; D < int64_t(Dims.size()); ++D) {
    if (D < L.Dim)
      Outer *= Dims[size_t(D)];
    else if (D > L.Dim)
      Inner *= Dims[size_t(D)];
  }
  std::vector<int64_t> Slice = without(Dims, L.Dim);

  std::vector<Shape> OutShapes = Env.OutShape.isTuple()
                                     ? Env.OutShape.TupleShapes
                                     : std::vector<Shape>{Env.OutShape};
  std::vector<Literal> Outs;
  for (int64_t K = 0; K < L.Outputs; ++K)
    Outs.emplace_back(OutShapes[size_t(K)]);
  if (std::optional<HloOpcode> Op = wideScanOp(I, Env.Opts, false);
      Op && L.Inputs == 1 && L.Carries == 1 && L.Outputs == 1) {
    // Each line folded in f64 from its carry, each output and the final
    // carry rounded once (EvaluateOptions::WideScans).
    const bool Add = *Op == HloOpcode::Add;
    Literal Final(OutShapes[1]);
    for (int64_t O = 0; O < Outer; ++O)
      for (int64_t E = 0; E < Inner; ++E) {
        double Acc = In[1]->getDouble(O * Inner + E);
        for (int64_t Step = 0; Step < N; ++Step) {
          const int64_t Off =
              (O * N + (L.Reverse ? N - 1 - Step : Step)) * Inner + E;
          const double X = In[0]->getDouble(Off);
          Acc = Add ? Acc + X : Acc * X;
          Outs[0].setDouble(Off, Acc);
        }
        Final.setDouble(O * Inner + E, Acc);
      }
    Outs.push_back(std::move(Final));
    if (!Env.OutShape.isTuple())
      return std::move(Outs.front());
    return Literal::tuple(std::move(Outs));
  }
  // Args: the input slices, then the carries (the inits at first).
  std::vector<Literal> Args;
  for (int64_t K = 0; K < L.Inputs; ++K)
    Args.emplace_back(Shape(In[size_t(K)]->elementType(), Slice));
  for (int64_t K = 0; K < L.Carries; ++K)
    Args.push_back(*In[size_t(L.Inputs + K)]);
  std::vector<const Literal *> Ptrs;
  for (Literal &A : Args)
    Ptrs.push_back(&A);

  for (int64_t Step = 0; Step < N; ++Step) {
    int64_t Pos = L.Reverse ? N - 1 - Step : Step;
    for (int64_t K = 0; K < L.Inputs; ++K)
      for (int64_t O = 0; O < Outer; ++O)
        for (int64_t E = 0; E < Inner; ++E)
          copyElement(*In[size_t(K)], (O * N + Pos) * Inner + E,
                      Args[size_t(K)], O * Inner + E);
    Expected<Literal> R = Env.Apply(*I.toApply(), Ptrs);
    if (!R)
      return R.error();
    std::vector<Literal> Parts;
    if (R->isTuple())
      Parts = std::move(R->elements());
    else
      Parts.push_back(std::move(*R));
    for (int64_t K = 0; K < L.Outputs; ++K)
      for (int64_t O = 0; O < Outer; ++O)
        for (int64_t E = 0; E < Inner; ++E)
          copyElement(Parts[size_t(K)], O * Inner + E, Outs[size_t(K)],
                      (O * N + Pos) * Inner + E);
    for (int64_t K = 0; K < L.Carries; ++K)
      Args[size_t(L.Inputs + K)] = std::move(Parts[size_t(L.Outputs + K)]);
  }
  for (int64_t K = 0; K < L.Carries; ++K) {
    Literal Final(OutShapes[size_t(L.Outputs + K)]);
    const Literal &Carry = Args[size_t(L.Inputs + K)];
    for (int64_t E = 0, NE = Final.elementCount(); E < NE; ++E)
      copyElement(Carry, E, Final, E);
    Outs.push_back(std::move(Final));
  }
  if (!Env.OutShape.isTuple())
    return std::move(Outs.front());
  return Literal::tuple(std::move(Outs));
}

int64_t scanWork(const HloInstruction &I) {
  int64_t Elems = std::max<int64_t>(I.operand(0)->shape().numElements(), 1);
  int64_t Body = I.toApply() ? I.toApply()->instructionCount() : 1, W;
  if (__builtin_mul_overflow(Elems, Body, &W))
    return std::numeric_limits<int64_t>::max();
  return W;
}

} // namespace hlo
} // namespace idxmap
