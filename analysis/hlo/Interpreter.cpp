//===- analysis/hlo/Interpreter.cpp - Reference HLO interpreter -----------===//
//
// Part of idxmap. Evaluates computations on row-major host Literals, op by op,
// with XLA's HloEvaluator semantics (see idxmap/HloInterpreter.h). Data
// movement ops are strided copies (InterpretDataMovement.cpp); elementwise ops
// run the loops of ElementKernels; reduce runs its to_apply computation per
// element, through a compiled scalar program when the computation is scalar
// (the common case).
//
//===----------------------------------------------------------------------===//
#include "ContractionOps.h"
#include "ElementKernels.h"
#include "IndexedOps.h"
#include "InterpretOps.h"
#include "ScanOp.h"
#include "idxmap/HloInterpreter.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

namespace idxmap {

using namespace hlo;

PrimitiveType hlo::widenType(PrimitiveType T) {
  return T == PrimitiveType::F32 || T == PrimitiveType::BF16 ||
                 T == PrimitiveType::F16
             ? PrimitiveType::F64
             : T;
}

namespace {

//===----------------------------------------------------------------------===//
// Strided copies
//===----------------------------------------------------------------------===//

/// The unit roundoff that EvaluateOptions::PerturbUlps scales: \p T's for
/// every float type, f64's too (an f64 fusion evaluated widened is the
/// reference itself, so the perturbed runs are its only measure of how
/// much an order of rounding can move a result), else 0.
double perturbedRoundoff(PrimitiveType T) {
  return isFloatType(T) ? unitRoundoff(T) : 0;
}

/// Whether \p Op's float result is rounded (not an exact op such as
/// negate, abs, select or a copy).
bool roundsResult(HloOpcode Op) {
  return Op != HloOpcode::Negate && Op != HloOpcode::Abs &&
         Op != HloOpcode::Select && Op != HloOpcode::Clamp &&
         Op != HloOpcode::Copy && Op != HloOpcode::Reshape &&
         Op != HloOpcode::Bitcast && Op != HloOpcode::Broadcast &&
         Op != HloOpcode::Parameter && Op != HloOpcode::Constant &&
         Op != HloOpcode::Maximum && Op != HloOpcode::Minimum;
}

/// EvaluateOptions::PerturbUlps' relative change k u of a result of \p Op
/// of HLO type \p T (u its unit roundoff), 0 when it is not perturbed
/// (exact ops, integer types, no perturbation asked for).
double perturbation(HloOpcode Op, PrimitiveType T, const EvaluateOptions &O) {
  if (!O.Widen || !O.PerturbUlps || !roundsResult(Op))
    return 0;
  return O.PerturbUlps * perturbedRoundoff(T);
}

Shape arrayShape(const Shape &S, bool Widen = false) {
  if (S.isTuple()) {
    std::vector<Shape> E;
    for (const Shape &T : S.TupleShapes)
      E.push_back(arrayShape(T, Widen));
    return Shape::tuple(std::move(E));
  }
  return Shape(Widen ? widenType(S.Type) : S.Type, S.Dims);
}

/// \p L with f16, bf16 and f32 elements converted to f64 (exactly).
Literal widenLiteral(const Literal &L) {
  if (L.isTuple()) {
    std::vector<Literal> E;
    for (const Literal &X : L.elements())
      E.push_back(widenLiteral(X));
    return Literal::tuple(std::move(E));
  }
  PrimitiveType T = L.elementType();
  if (widenType(T) == T)
    return L;
  Literal Out(Shape(PrimitiveType::F64, L.shape().Dims));
  convertLoop(T, PrimitiveType::F64, L.data().data(), Out.data().data(),
              L.elementCount());
  return Out;
}

//===----------------------------------------------------------------------===//
// Scalar programs
//===----------------------------------------------------------------------===//

/// A scalar computation (every value rank 0, the root possibly a tuple of
/// them) compiled to register steps, for reduce's to_apply.
struct ScalarProgram {
  struct Step {
    HloOpcode Op;
    PrimitiveType Type;        ///< result type
    PrimitiveType OperandType; ///< type of operand 0 (convert, compare)
    int Out;
    int A = -1, B = -1, C = -1;
    /// Factor on the f64 result (EvaluateOptions::PerturbUlps), 1 if none.
    double Scale = 1;
    ComparisonDirection Dir = ComparisonDirection::EQ;
    ComparisonType CT = ComparisonType::Default;
  };
  std::vector<uint64_t> Regs;
  std::vector<Step> Steps;
  std::vector<int> ParamRegs;
  std::vector<int> OutRegs;

  uint8_t *reg(int R) { return reinterpret_cast<uint8_t *>(&Regs[size_t(R)]); }

  void run() {
    for (const Step &S : Steps) {
      uint8_t *O = reg(S.Out);
      if (isUnaryElementwise(S.Op)) {
        unaryLoop(S.Op, S.OperandType, reg(S.A), O, 1);
      } else if (isBinaryElementwise(S.Op)) {
        binaryLoop(S.Op, S.Type, reg(S.A), 0, reg(S.B), 0, O, 1);
      } else {
        switch (S.Op) {
        case HloOpcode::Compare:
          compareLoop(S.Dir, S.CT, S.OperandType, reg(S.A), 0, reg(S.B), 0, O,
                      1);
          break;
        case HloOpcode::Convert:
          convertLoop(S.OperandType, S.Type, reg(S.A), O, 1);
          break;
        case HloOpcode::Select:
          selectLoop(byteWidth(S.Type), reg(S.A), 0, reg(S.B), reg(S.C), O, 1);
          break;
        case HloOpcode::Clamp:
          clampLoop(S.Type, reg(S.A), 0, reg(S.B), reg(S.C), 0, O, 1);
          break;
        default: // copy, reshape, bitcast, broadcast of a scalar
          Regs[size_t(S.Out)] = Regs[size_t(S.A)];
          break;
        }
      }
      if (S.Scale != 1) {
        double V;
        std::memcpy(&V, O, sizeof V);
        V *= S.Scale;
        std::memcpy(O, &V, sizeof V);
      }
    }
  }

  /// Compiles \p C, or returns nullptr if it is not a scalar computation.
  static std::unique_ptr<ScalarProgram> compile(const HloComputation &C,
                                                const EvaluateOptions &O) {
    const bool Widen = O.Widen;
    auto Ty = [&](PrimitiveType T) { return Widen ? widenType(T) : T; };
    auto P = std::make_unique<ScalarProgram>();
    P->Regs.assign(size_t(C.instructionCount()), 0);
    for (const HloInstruction *I : C.instructions()) {
      const Shape &S = I->shape();
      if (I->isRoot() && I->opcode() == HloOpcode::Tuple) {
        for (const HloInstruction *O : I->operands())
          P->OutRegs.push_back(int(O->index()));
        continue;
      }
      if (!S.isScalar())
        return nullptr;
      int Out = int(I->index());
      HloOpcode Op = I->opcode();
      if (Op == HloOpcode::Parameter)
        continue;
      if (Op == HloOpcode::Constant) {
        if (I->literalElided())
          return nullptr;
        convertLoop(S.Type, Ty(S.Type), I->literal().data().data(), P->reg(Out),
                    1);
        continue;
      }
      Step St{Op, Ty(S.Type), PrimitiveType::Invalid, Out};
      auto Arg = [&](int64_t K) {
        return K < I->operandCount() ? int(I->operand(K)->index()) : -1;
      };
      if (I->operandCount() > 0)
        St.OperandType = Ty(I->operand(0)->shape().Type);
      St.A = Arg(0);
      St.B = Arg(1);
      St.C = Arg(2);
      bool Ok = isUnaryElementwise(Op) || isBinaryElementwise(Op) ||
                Op == HloOpcode::Compare || Op == HloOpcode::Convert ||
                Op == HloOpcode::Select || Op == HloOpcode::Clamp ||
                Op == HloOpcode::Copy || Op == HloOpcode::Reshape ||
                Op == HloOpcode::Broadcast ||
                (Op == HloOpcode::Bitcast &&
                 (Widen ? St.OperandType == St.Type
                        : byteWidth(St.OperandType) == byteWidth(S.Type)));
      if (!Ok)
        return nullptr;
      if (Op == HloOpcode::Compare) {
        St.Dir = I->comparisonDirection();
        St.CT = I->comparisonType();
      }
      St.Scale = 1 + perturbation(Op, S.Type, O);
      P->Steps.push_back(St);
    }
    if (P->OutRegs.empty())
      P->OutRegs.push_back(int(C.root()->index()));
    for (const HloInstruction *Param : C.parameters())
      P->ParamRegs.push_back(int(Param->index()));
    return P;
  }
};

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

/// The first leaf type of \p S that is not a compute type.
PrimitiveType firstNonComputeType(const Shape &S) {
  if (!S.isTuple())
    return S.Type;
  for (const Shape &E : S.TupleShapes)
    if (!hasOnlyComputeTypes(E))
      return firstNonComputeType(E);
  return PrimitiveType::Invalid;
}

/// The opcodes eval() has a case for.
bool canEvaluate(HloOpcode Op) {
  return Op <= HloOpcode::Call || isControlOp(Op) ||
         isMoreElementwiseOp(Op) || isContractionEvaluated(Op) ||
         hlo::canEvaluateIndexedOp(Op) || Op == HloOpcode::Scan;
}

} // namespace

bool interpreterEvaluates(HloOpcode Op) { return canEvaluate(Op); }

namespace {

class Evaluator {
public:
  explicit Evaluator(const EvaluateOptions &O) : Opts(O) {}

  /// The literal shape of a value of HLO shape \p S (widened with
  /// EvaluateOptions::Widen).
  Shape out(const Shape &S) const { return arrayShape(S, Opts.Widen); }

  Expected<Literal> run(const HloComputation &C,
                        const std::vector<const Literal *> &Args);

private:
  /// Why \p I cannot be evaluated (an opcode or element type the
  /// interpreter has no semantics for), or nullopt.
  std::optional<Diagnostic> unsupported(const HloInstruction &I);
  static Diagnostic diag(const HloInstruction &I, std::string Message) {
    return I.parent()->parent()->diagnose(I.sourceOffset(),
                                          std::move(Message));
  }

  Expected<Literal> eval(const HloInstruction &I, const Ops &In);
  Literal evalElementwise(const HloInstruction &I, const Ops &In);
  Expected<Literal> evalReduce(const HloInstruction &I, const Ops &In);
  ScalarProgram *scalarProgram(const HloComputation &C);

  EvaluateOptions Opts;
  std::unordered_map<const HloComputation *, std::unique_ptr<ScalarProgram>>
      Programs;
  /// Bytes of the values alive in every run() frame (EvaluateOptions::
  /// MaxBytes).
  int64_t LiveBytes = 0;
  /// Element results computed so far (EvaluateOptions::MaxWork).
  int64_t Work = 0;
};

std::optional<Diagnostic> Evaluator::unsupported(const HloInstruction &I) {
  if (!hasOnlyComputeTypes(I.shape())) {
    PrimitiveType T = firstNonComputeType(I.shape());
    return diag(I, "cannot evaluate '" + I.name() + "': the interpreter has "
                   "no " + std::string(primitiveTypeName(T)) + " values");
  }
  if (!canEvaluate(I.opcode())) {
    std::string Op = I.asyncSpelling().empty()
                         ? std::string(opcodeName(I.opcode()))
                         : I.asyncSpelling();
    return diag(I, "cannot evaluate '" + I.name() + "': the interpreter "
                   "does not evaluate " + Op);
  }
  return std::nullopt;
}

Expected<Literal> Evaluator::run(const HloComputation &C,
                                 const std::vector<const Literal *> &Args) {
  const auto &Instrs = C.instructions();
  size_t N = Instrs.size();
  std::vector<Literal> Values(N);
  std::vector<const Literal *> Ptr(N, nullptr);
  // The last instruction that reads each value, so that buffers can be
  // released early.
  std::vector<int64_t> LastUse(N, -1);
  for (const HloInstruction *I : Instrs)
    for (const HloInstruction *O : I->operands())
      LastUse[size_t(O->index())] = I->index();

  // Every value of this frame is released or moved out on return.
  int64_t FrameBytes = 0;
  struct Release {
    int64_t &Live, &Frame;
    ~Release() { Live -= Frame; }
  } ReleaseFrame{LiveBytes, FrameBytes};
  auto Hold = [&](const HloInstruction &I) -> std::optional<Diagnostic> {
    // A call's work is its computation's (counted as it runs).
    int64_t Cost = 0;
    if (I.opcode() == HloOpcode::Reduce) {
      if (__builtin_mul_overflow(I.operand(0)->shape().numElements(),
                                 I.operandCount() / 2, &Cost) ||
          __builtin_mul_overflow(Cost, I.toApply()->instructionCount(), &Cost))
        Cost = std::numeric_limits<int64_t>::max();
    } else if (isContractionEvaluated(I.opcode())) {
      Cost = contractionWork(I);
    } else if (I.opcode() == HloOpcode::Scan) {
      Cost = scanWork(I);
    } else if (I.opcode() != HloOpcode::Call && I.opcode() != HloOpcode::Fusion)
      Cost = std::max<int64_t>(I.shape().numElements(), 1);
    if (Cost > Opts.MaxWork - Work)
      return diag(I, "evaluating '" + I.name() + "' would exceed " +
                         std::to_string(Opts.MaxWork) +
                         " element results (EvaluateOptions::MaxWork)");
    Work += Cost;
    int64_t Need = out(I.shape()).byteSize();
    if (Need > Opts.MaxBytes - LiveBytes)
      return diag(I, "evaluating '" + I.name() + "' needs " +
                         std::to_string(Need) + " bytes, " +
                         std::to_string(LiveBytes) + " are in use (limit " +
                         std::to_string(Opts.MaxBytes) + ")");
    LiveBytes += Need;
    FrameBytes += Need;
    return std::nullopt;
  };
  auto Drop = [&](size_t J) {
    int64_t Bytes = Values[J].shape().byteSize();
    LiveBytes -= Bytes;
    FrameBytes -= Bytes;
    Values[J] = Literal();
  };

  Ops In;
  for (const HloInstruction *I : Instrs) {
    size_t K = size_t(I->index());
    if (std::optional<Diagnostic> D = unsupported(*I))
      return *D;
    if (I->opcode() == HloOpcode::Parameter) {
      Ptr[K] = Args[size_t(I->parameterNumber())];
      continue;
    }
    if (I->opcode() == HloOpcode::Constant) {
      if (I->literalElided())
        return diag(*I, "cannot evaluate a constant whose value is elided "
                        "('{...}')");
      if (Opts.Widen) {
        if (std::optional<Diagnostic> D = Hold(*I))
          return *D;
        Values[K] = widenLiteral(I->literal());
        Ptr[K] = &Values[K];
      } else {
        Ptr[K] = &I->literal();
      }
      continue;
    }
    In.clear();
    for (const HloInstruction *O : I->operands())
      In.push_back(Ptr[size_t(O->index())]);
    // Counted before eval allocates it (a call's result is counted in its
    // frame too, while both exist).
    if (std::optional<Diagnostic> D = Hold(*I))
      return *D;
    Expected<Literal> V = eval(*I, In);
    if (!V)
      return V.error();
    Values[K] = std::move(*V);
    Ptr[K] = &Values[K];
    for (const HloInstruction *O : I->operands()) {
      size_t J = size_t(O->index());
      if (LastUse[J] == I->index() && O != C.root() && Ptr[J] == &Values[J])
        Drop(J);
    }
  }
  size_t R = size_t(C.root()->index());
  if (Ptr[R] == &Values[R])
    return std::move(Values[R]);
  return *Ptr[R]; // a parameter or constant root: copy
}

Expected<Literal> Evaluator::eval(const HloInstruction &I, const Ops &In) {
  // The op families of the other Interpret*.cpp files, each named by its
  // own predicate (canEvaluate asks the same ones).
  HloOpcode Op = I.opcode();
  auto Run = [this](const HloComputation &C, const Ops &A) { return run(C, A); };
  if (hlo::canEvaluateIndexedOp(Op))
    return hlo::evalIndexedOp(I, In, out(I.shape()), Run);
  if (isControlOp(Op))
    return evalControl(I, In, {Run, &Work, Opts.MaxWork});
  if (isMoreElementwiseOp(Op))
    return evalMoreElementwise(I, In, Opts);
  if (isContractionEvaluated(Op))
    return evalContraction(
        I, In,
        {Opts, out(I.shape()), Run,
         1 + perturbation(Op, I.shape().Type, Opts)});
  if (Op == HloOpcode::Scan)
    return evalScan(I, In, {Opts, out(I.shape()), Run, 1});
  switch (Op) {
  case HloOpcode::Iota:
    return evalIota(I, out(I.shape()));
  case HloOpcode::Broadcast:
    return evalBroadcast(I, *In[0], out(I.shape()));
  case HloOpcode::Reshape:
  case HloOpcode::Copy: {
    Literal Out(out(I.shape()));
    Out.data() = In[0]->data();
    return Out;
  }
  case HloOpcode::Bitcast:
    return evalBitcast(I, *In[0], out(I.shape()), Opts.Widen);
  case HloOpcode::Transpose:
    return evalTranspose(I, *In[0], out(I.shape()));
  case HloOpcode::Slice:
    return evalSlice(I, *In[0], out(I.shape()));
  case HloOpcode::DynamicSlice:
    return evalDynamicSlice(I, In, out(I.shape()));
  case HloOpcode::DynamicUpdateSlice:
    return evalDynamicUpdateSlice(I, In);
  case HloOpcode::Pad:
    return evalPad(I, *In[0], *In[1], out(I.shape()));
  case HloOpcode::Reverse:
    return evalReverse(I, *In[0], out(I.shape()));
  case HloOpcode::Concatenate:
    return evalConcatenate(I, In, out(I.shape()));
  case HloOpcode::Reduce:
    return evalReduce(I, In);
  case HloOpcode::Tuple: {
    std::vector<Literal> Elements;
    for (const Literal *L : In)
      Elements.push_back(*L);
    return Literal::tuple(std::move(Elements));
  }
  case HloOpcode::GetTupleElement:
    return In[0]->elements()[size_t(I.tupleIndex())];
  case HloOpcode::Fusion:
  case HloOpcode::Call:
    return run(*I.toApply(), In);
  case HloOpcode::Parameter:
  case HloOpcode::Constant:
    assert(false && "handled by run()");
    return Literal();
  default:
    // canEvaluate and the cases above must agree; a gap is a diagnostic,
    // not a wrong kernel.
    if (!isElementwise(I.opcode()))
      return diag(I, "cannot evaluate '" + I.name() + "': no evaluation of " +
                         std::string(opcodeName(I.opcode())));
    return evalElementwise(I, In);
  }
}

Literal Evaluator::evalElementwise(const HloInstruction &I, const Ops &In) {
  Literal Out(out(I.shape()));
  int64_t N = Out.elementCount();
  uint8_t *O = Out.data().data();
  auto D = [&](size_t K) { return In[K]->data().data(); };
  auto Stride = [&](size_t K) {
    return In[K]->shape().isScalar() && N != 1 ? int64_t(0) : int64_t(1);
  };
  HloOpcode Op = I.opcode();
  if (isUnaryElementwise(Op)) {
    unaryLoop(Op, In[0]->elementType(), D(0), O, N);
  } else if (isBinaryElementwise(Op)) {
    binaryLoop(Op, Out.elementType(), D(0), 1, D(1), 1, O, N);
  } else if (Op == HloOpcode::Compare) {
    compareLoop(I.comparisonDirection(), I.comparisonType(),
                In[0]->elementType(), D(0), 1, D(1), 1, O, N);
  } else if (Op == HloOpcode::Convert) {
    convertLoop(In[0]->elementType(), Out.elementType(), D(0), O, N);
  } else if (Op == HloOpcode::Select) {
    selectLoop(byteWidth(Out.elementType()), D(0), Stride(0), D(1), D(2), O,
               N);
  } else {
    assert(Op == HloOpcode::Clamp);
    clampLoop(Out.elementType(), D(0), Stride(0), D(1), D(2), Stride(2), O, N);
  }
  if (double Uncertain = perturbation(Op, I.shape().Type, Opts)) {
    double F = 1 + Uncertain;
    for (int64_t K = 0; K < N; ++K) {
      // sin and cos of an argument whose own rounding (k u |x|) spans a
      // radian or more: any value in [-1, 1]; the +k and -k runs take the
      // two ends, so the slack spans the whole range.
      if ((Op == HloOpcode::Sin || Op == HloOpcode::Cos) &&
          std::fabs(In[0]->getDouble(K) * Uncertain) >= 1) {
        Out.setDouble(K, Opts.PerturbUlps > 0 ? 1 : -1);
        continue;
      }
      Out.setDouble(K, Out.getDouble(K) * F);
    }
  }
  return Out;
}

ScalarProgram *Evaluator::scalarProgram(const HloComputation &C) {
  auto It = Programs.find(&C);
  if (It == Programs.end())
    It = Programs.emplace(&C, ScalarProgram::compile(C, Opts)).first;
  return It->second.get();
}

Expected<Literal> Evaluator::evalReduce(const HloInstruction &I,
                                        const Ops &In) {
  size_t N = In.size() / 2;
  const HloComputation &F = *I.toApply();
  const Shape &InShape = I.operand(0)->shape();
  const std::vector<int64_t> &InDims = InShape.Dims;
  std::vector<int64_t> InStr = rowMajorStrides(InDims);
  std::vector<bool> Reduced(InDims.size(), false);
  for (int64_t D : I.dimensions())
    Reduced[size_t(D)] = true;

  // Output element -> base offset in the inputs.
  std::vector<int64_t> KeptDims, KeptStr;
  for (size_t D = 0; D < InDims.size(); ++D)
    if (!Reduced[D]) {
      KeptDims.push_back(InDims[D]);
      KeptStr.push_back(InStr[D]);
    }
  // Reduced dimensions in the operand layout's minor-to-major order: the
  // first one varies fastest (XLA's ShapeUtil::ForEachIndex order).
  std::vector<int64_t> RedDims, RedStr;
  for (int64_t D : InShape.layoutOrDefault())
    if (Reduced[size_t(D)]) {
      RedDims.push_back(InDims[size_t(D)]);
      RedStr.push_back(InStr[size_t(D)]);
    }
  int64_t RedCount = 1;
  for (int64_t D : RedDims)
    RedCount *= D;

  std::vector<Literal> Results;
  for (size_t K = 0; K < N; ++K)
    Results.emplace_back(Shape(In[N + K]->elementType(), KeptDims));
  int64_t OutCount = Results[0].elementCount();

  // Walks the reduced index space from Base, calling Visit(offset).
  std::vector<int64_t> Idx(RedDims.size());
  auto Walk = [&](int64_t Base, auto &&Visit) {
    if (RedCount == 0)
      return;
    std::fill(Idx.begin(), Idx.end(), 0);
    int64_t Off = Base;
    for (int64_t Step = 0; Step < RedCount; ++Step) {
      Visit(Off);
      for (size_t D = 0; D < RedDims.size(); ++D) {
        Off += RedStr[D];
        if (++Idx[D] < RedDims[D])
          break;
        Off -= RedStr[D] * RedDims[D];
        Idx[D] = 0;
      }
    }
  };
  auto BaseOf = [&](int64_t Linear) {
    int64_t Base = 0;
    for (size_t D = KeptDims.size(); D-- > 0;) {
      Base += (Linear % KeptDims[D]) * KeptStr[D];
      Linear /= KeptDims[D];
    }
    return Base;
  };

  // XLA's fast path: a float sum accumulated in double, in chunks of 512.
  PrimitiveType AccType = In[N]->elementType();
  if (Opts.FastReduceAdd && N == 1 && isFloatType(AccType) && isScalarAdd(F)) {
    PrimitiveType T = In[0]->elementType();
    int64_t W = byteWidth(T);
    const uint8_t *Src = In[0]->data().data();
    for (int64_t O = 0; O < OutCount; ++O) {
      double Acc = In[1]->getDouble(0), Part = 0;
      int Count = 0;
      Walk(BaseOf(O), [&](int64_t Off) {
        double V;
        convertOne(T, PrimitiveType::F64, Src + Off * W,
                   reinterpret_cast<uint8_t *>(&V));
        Part += V;
        if (++Count == 512) {
          Acc += Part;
          Part = 0;
          Count = 0;
        }
      });
      if (Count > 0)
        Acc += Part;
      Results[0].setDouble(O, Acc);
    }
    return std::move(Results[0]);
  }

  if (ScalarProgram *P = scalarProgram(F)) {
    std::vector<int64_t> W(N);
    for (size_t K = 0; K < N; ++K)
      W[K] = byteWidth(In[K]->elementType());
    for (int64_t O = 0; O < OutCount; ++O) {
      // Accumulators start at the init values.
      for (size_t K = 0; K < N; ++K) {
        uint64_t Bits = In[N + K]->getBits(0);
        P->Regs[size_t(P->ParamRegs[K])] = Bits;
      }
      Walk(BaseOf(O), [&](int64_t Off) {
        for (size_t K = 0; K < N; ++K) {
          uint64_t Bits = 0;
          std::memcpy(&Bits, In[K]->data().data() + Off * W[K], size_t(W[K]));
          P->Regs[size_t(P->ParamRegs[N + K])] = Bits;
        }
        P->run();
        // The outputs become the accumulators; read them all first since an
        // output register may be a parameter register.
        uint64_t New[16];
        std::vector<uint64_t> Many;
        uint64_t *Tmp = New;
        if (N > 16) {
          Many.resize(N);
          Tmp = Many.data();
        }
        for (size_t K = 0; K < N; ++K)
          Tmp[K] = P->Regs[size_t(P->OutRegs[K])];
        for (size_t K = 0; K < N; ++K)
          P->Regs[size_t(P->ParamRegs[K])] = Tmp[K];
      });
      for (size_t K = 0; K < N; ++K)
        Results[K].setBits(O, P->Regs[size_t(P->ParamRegs[K])]);
    }
  } else {
    // General path: evaluate to_apply on rank-0 literals, one step at a time.
    std::vector<Literal> Args(2 * N);
    std::vector<const Literal *> ArgPtrs(2 * N);
    for (size_t K = 0; K < 2 * N; ++K) {
      Args[K] = Literal(Shape(In[K < N ? N + K : K - N]->elementType(), {}));
      ArgPtrs[K] = &Args[K];
    }
    for (int64_t O = 0; O < OutCount; ++O) {
      for (size_t K = 0; K < N; ++K)
        Args[K].setBits(0, In[N + K]->getBits(0));
      std::optional<Diagnostic> Failure;
      Walk(BaseOf(O), [&](int64_t Off) {
        if (Failure)
          return;
        for (size_t K = 0; K < N; ++K) {
          uint64_t Bits = 0;
          int64_t WK = byteWidth(In[K]->elementType());
          std::memcpy(&Bits, In[K]->data().data() + Off * WK, size_t(WK));
          Args[N + K].setBits(0, Bits);
        }
        Expected<Literal> R = run(F, ArgPtrs);
        if (!R) {
          Failure = R.error();
          return;
        }
        for (size_t K = 0; K < N; ++K)
          Args[K].setBits(0, (N == 1 ? *R : R->elements()[K]).getBits(0));
      });
      if (Failure)
        return *Failure;
      for (size_t K = 0; K < N; ++K)
        Results[K].setBits(O, Args[K].getBits(0));
    }
  }
  if (N == 1)
    return std::move(Results[0]);
  return Literal::tuple(std::move(Results));
}

void flatten(Literal &&L, std::vector<Literal> &Out) {
  if (!L.isTuple()) {
    Out.push_back(std::move(L));
    return;
  }
  for (Literal &E : L.elements())
    flatten(std::move(E), Out);
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

Expected<Literal> evaluateToLiteral(const HloComputation &C,
                                    const std::vector<Literal> &Args,
                                    const EvaluateOptions &Options) {
  const HloModule &M = *C.parent();
  if (int64_t(Args.size()) != C.parameterCount())
    return M.diagnose(C.sourceOffset(),
                      "computation '" + C.name() + "' takes " +
                          std::to_string(C.parameterCount()) +
                          " arguments, got " + std::to_string(Args.size()));
  std::vector<const Literal *> Ptrs;
  for (int64_t K = 0; K < C.parameterCount(); ++K) {
    const HloInstruction *P = C.parameter(K);
    if (!Args[size_t(K)].shape().compatible(P->shape()))
      return M.diagnose(P->sourceOffset(),
                        "argument " + std::to_string(K) + " is " +
                            Args[size_t(K)].shape().str() + ", parameter '" +
                            P->name() + "' is " + P->shape().str());
    Ptrs.push_back(&Args[size_t(K)]);
  }
  std::vector<Literal> Wide;
  if (Options.Widen) {
    for (const Literal *A : Ptrs)
      Wide.push_back(widenLiteral(*A));
    for (size_t K = 0; K < Wide.size(); ++K)
      Ptrs[K] = &Wide[K];
  }
  Evaluator E(Options);
  return E.run(C, Ptrs);
}

bool isScalarAdd(const HloComputation &C) {
  const HloInstruction *R = C.root();
  if (R->opcode() != HloOpcode::Add || C.parameterCount() != 2)
    return false;
  const HloInstruction *A = R->operand(0), *B = R->operand(1);
  return A->opcode() == HloOpcode::Parameter &&
         B->opcode() == HloOpcode::Parameter && A->shape().isScalar() &&
         B->shape().isScalar() && A != B;
}

Expected<std::vector<Literal>>
roundingSlack(const HloComputation &C, const std::vector<Literal> &Args,
              const std::vector<Literal> &Reference,
              const EvaluateOptions &Options) {
  std::vector<Literal> W[3];
  for (int K = 0; K < 3; ++K) {
    EvaluateOptions O = Options;
    O.Widen = true;
    O.PerturbUlps = K == 0 ? 0 : K == 1 ? 4 : -4;
    auto R = evaluate(C, Args, O);
    if (!R)
      return R.error();
    if (R->size() != Reference.size())
      return C.parent()->diagnose(C.sourceOffset(),
                                  "roundingSlack: the reference has " +
                                      std::to_string(Reference.size()) +
                                      " outputs, the computation " +
                                      std::to_string(R->size()));
    W[K] = std::move(*R);
  }
  std::vector<Literal> Out;
  for (size_t O = 0; O < Reference.size(); ++O) {
    const Literal &E = Reference[O];
    Literal S(Shape(PrimitiveType::F64, E.shape().Dims));
    bool Float =
        isFloatType(E.elementType()) && W[0][O].shape().Dims == E.shape().Dims;
    for (int64_t K = 0, N = S.elementCount(); Float && K < N; ++K) {
      double EV = E.getDouble(K), W0 = W[0][O].getDouble(K),
             Spread = std::fabs(W[1][O].getDouble(K) - W[2][O].getDouble(K));
      double V = Spread + 2 * std::fabs(EV - W0);
      S.setDouble(K, std::isfinite(V) ? V : 0);
    }
    Out.push_back(std::move(S));
  }
  return Out;
}

Expected<std::vector<Literal>> evaluate(const HloComputation &C,
                                        const std::vector<Literal> &Args,
                                        const EvaluateOptions &Options) {
  Expected<Literal> R = evaluateToLiteral(C, Args, Options);
  if (!R)
    return R.error();
  std::vector<Literal> Out;
  flatten(std::move(*R), Out);
  return Out;
}

} // namespace idxmap
