//===- codegen/ReducerCodegen.cpp - Called computations to IR -------------===//
//
// Part of idxmap. See ElementwiseCodegen.h: a reducer's or a called
// computation's body inlined at its operands' values, instruction by
// instruction as the interpreter evaluates it, and the checks of what can
// be inlined.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseCodegen.h"

#include "idxmap/Fusion.h"

#include <algorithm>
#include <cassert>
#include <cmath>

using namespace llvm;

namespace idxmap {
namespace codegen {

using PT = PrimitiveType;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {

int64_t leafCount(const Shape &S) {
  if (!S.isTuple())
    return 1;
  int64_t N = 0;
  for (const Shape &E : S.TupleShapes)
    N += leafCount(E);
  return N;
}

std::optional<std::string> checkComputation(const HloComputation &C) {
  for (const HloInstruction *I : C.instructions()) {
    switch (I->opcode()) {
    case HloOpcode::Parameter:
    case HloOpcode::Tuple:
    case HloOpcode::GetTupleElement:
      continue;
    case HloOpcode::Call:
    case HloOpcode::Fusion:
      if (auto Why = checkComputation(*I->toApply()))
        return Why;
      continue;
    default:
      break;
    }
    if (!I->shape().isScalar())
      return "instruction '" + I->name() + "' of '" + C.name() +
             "' is not a scalar";
    if (auto Why = checkElementwise(*I))
      return "instruction '" + I->name() + "' of '" + C.name() + "': " + *Why;
  }
  return std::nullopt;
}

/// Inlines \p C on \p Args (flattened leaves per parameter); returns the
/// root's leaves.
SmallVector<Value *, 2> inlineComputation(IRBuilderBase &B,
                                          const HloComputation &C,
                                          ArrayRef<Value *> Args,
                                          const MathOptions &M) {
  DenseMap<const HloInstruction *, SmallVector<Value *, 2>> Vals;
  // Parameters by number; each takes as many leaves as its shape has.
  {
    size_t Next = 0;
    for (const HloInstruction *P : C.parameters()) {
      int64_t N = leafCount(P->shape());
      assert(Next + size_t(N) <= Args.size() && "too few arguments");
      Vals[P].append(Args.begin() + Next, Args.begin() + Next + N);
      Next += size_t(N);
    }
    assert(Next == Args.size() && "too many arguments");
  }
  for (const HloInstruction *I : C.instructions()) {
    SmallVector<Value *, 2> &Out = Vals[I];
    switch (I->opcode()) {
    case HloOpcode::Parameter:
      continue;
    case HloOpcode::Tuple:
      for (const HloInstruction *O : I->operands())
        Out.append(Vals[O].begin(), Vals[O].end());
      continue;
    case HloOpcode::GetTupleElement: {
      const HloInstruction *O = I->operand(0);
      int64_t Offset = 0;
      for (int64_t K = 0; K < I->tupleIndex(); ++K)
        Offset += leafCount(O->shape().TupleShapes[size_t(K)]);
      int64_t N = leafCount(I->shape());
      const SmallVector<Value *, 2> &Src = Vals[O];
      Out.append(Src.begin() + Offset, Src.begin() + Offset + N);
      continue;
    }
    case HloOpcode::Call:
    case HloOpcode::Fusion: {
      SmallVector<Value *, 4> In;
      for (const HloInstruction *O : I->operands())
        In.append(Vals[O].begin(), Vals[O].end());
      Out = inlineComputation(B, *I->toApply(), In, M);
      continue;
    }
    default: {
      SmallVector<Value *, 3> In;
      for (const HloInstruction *O : I->operands()) {
        assert(Vals[O].size() == 1 && "elementwise operand is not a scalar");
        In.push_back(Vals[O][0]);
      }
      Out.push_back(emitElementwise(B, *I, In, M));
      continue;
    }
    }
  }
  return Vals[C.root()];
}

} // namespace

std::optional<std::string> checkReducer(const HloComputation &ToApply) {
  int64_t P = ToApply.parameterCount();
  if (P == 0 || P % 2 != 0)
    return "reducer '" + ToApply.name() + "' must take 2N parameters";
  for (const HloInstruction *Param : ToApply.parameters())
    if (!Param->shape().isScalar())
      return "reducer '" + ToApply.name() + "' has a non-scalar parameter";
  int64_t N = P / 2;
  const Shape &R = ToApply.root()->shape();
  if (N == 1 ? !R.isScalar() : leafCount(R) != N)
    return "reducer '" + ToApply.name() + "' must return " + std::to_string(N) +
           " scalar(s)";
  return checkComputation(ToApply);
}

SmallVector<Value *, 2> emitReduction(IRBuilderBase &B,
                                      const HloComputation &ToApply,
                                      ArrayRef<Value *> Accumulators,
                                      ArrayRef<Value *> Values,
                                      const MathOptions &M) {
  assert(!checkReducer(ToApply) && "unsupported reducer");
  assert(Accumulators.size() == Values.size() &&
         int64_t(2 * Values.size()) == ToApply.parameterCount() &&
         "a reducer takes N accumulators and N values");
  SmallVector<Value *, 4> Args(Accumulators.begin(), Accumulators.end());
  Args.append(Values.begin(), Values.end());
  return inlineComputation(B, ToApply, Args, M);
}

} // namespace codegen
} // namespace idxmap
