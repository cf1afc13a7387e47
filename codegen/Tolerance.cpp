//===- codegen/Tolerance.cpp - GPU against interpreter tolerances ---------===//
//
// Part of idxmap. See ElementwiseCodegen.h: the tolerance a kernel's
// output is compared with against the interpreter's, from the ops that
// compute it (approximate math, reduction and scan orders).
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
// Tolerances
//===----------------------------------------------------------------------===//

namespace {

Tolerance merge(Tolerance A, Tolerance B) {
  return {std::max(A.Abs, B.Abs), std::max(A.Rel, B.Rel)};
}

Tolerance forShape(const Shape &S) {
  if (!S.isTuple())
    return isArrayType(S.Type) ? Tolerance::forType(S.Type) : Tolerance{};
  Tolerance T{};
  for (const Shape &E : S.TupleShapes)
    T = merge(T, forShape(E));
  return T;
}

/// The extra error of a float add reduction over n elements whose terms
/// each go through at most d roundings: (d + 1) u sum |x|, with |x| <= 1;
/// d is at least ceil(log2 n), a tree's depth.
Tolerance reduceTolerance(const HloInstruction &I, int64_t RoundingDepth) {
  const HloComputation *F = I.toApply();
  if (!F || F->root()->opcode() != HloOpcode::Add)
    return {};
  PT T = F->root()->shape().Type;
  if (!isFloatType(T))
    return {};
  const Shape &In = I.operand(0)->shape();
  double N = 1;
  for (int64_t D : I.dimensions())
    N *= double(In.Dims[size_t(D)]);
  double Depth =
      std::max(std::ceil(std::log2(std::max(N, 1.0))), double(RoundingDepth)) +
      1;
  double Abs = Depth * unitRoundoff(T) * N;
  return {Abs, 0};
}

/// The extra error of a float add or multiply scan whose lines the warp
/// scan associates differently from the interpreter's step-by-step order:
/// a chunk's 5 shuffle levels, then a carry per chunk of 32, each rounding
/// once: (n / 32 + 6) u sum |x| with |x| <= 1 for an add, that many
/// roundings relative for a multiply. u is f32's for f16 and bf16, which
/// the kernel accumulates in f32 (ScanPlan::Accumulate32) and the runner's
/// reference in f64 (EvaluateOptions::WideScans), each output rounded once
/// (the type's own tolerance).
Tolerance scanTolerance(const HloInstruction &I) {
  std::optional<ScanInfo> S = classifyScan(I);
  if (!S || !isFloatType(S->Type) ||
      (S->Combiner != HloOpcode::Add && S->Combiner != HloOpcode::Multiply))
    return {};
  double N = double(S->Length);
  const bool Wide =
      S->Type == PrimitiveType::F16 || S->Type == PrimitiveType::BF16;
  const double U = unitRoundoff(Wide ? PrimitiveType::F32 : S->Type);
  double Roundings = std::floor(N / 32) + 6;
  if (S->Combiner == HloOpcode::Multiply)
    return {0, Roundings * U};
  return {Roundings * U * N, 0};
}

bool isApproximate(const HloInstruction &I, const MathOptions &M) {
  return !M.Precise && I.shape().Type == PT::F32 &&
         (I.opcode() == HloOpcode::Tanh ||
          (I.opcode() == HloOpcode::Divide && !M.ExactDivide) ||
          I.opcode() == HloOpcode::Sqrt || I.opcode() == HloOpcode::Rsqrt);
}

} // namespace

Tolerance toleranceFor(const HloInstruction &I, const MathOptions &M,
                       int64_t RoundingDepth) {
  Tolerance T = forShape(I.shape());
  // tanh.approx.f32: about 10x its measured error; div.full.f32 and
  // sqrt.approx.f32 (2 ulp and 1 ulp): within f32's own tolerance.
  if (isApproximate(I, M) && I.opcode() == HloOpcode::Tanh)
    T = merge(T, {2e-5, 1e-4});
  if (I.opcode() == HloOpcode::Reduce)
    T = merge(T, reduceTolerance(I, RoundingDepth));
  if (I.opcode() == HloOpcode::Fusion || I.opcode() == HloOpcode::Call) {
    for (const HloComputation *C : I.calledComputations())
      for (const HloInstruction *J : C->instructions()) {
        if (isApproximate(*J, M)) {
          Tolerance Own = toleranceFor(*J, M);
          T = merge(T, {4 * Own.Rel, 4 * Own.Rel});
        } else if (J->opcode() == HloOpcode::Scan ||
                   J->opcode() == HloOpcode::ReduceWindow) {
          T = merge(T, scanTolerance(*J));
        } else if (J->opcode() == HloOpcode::Reduce ||
                   J->opcode() == HloOpcode::Fusion ||
                   J->opcode() == HloOpcode::Call) {
          T = merge(T, toleranceFor(*J, M, RoundingDepth));
        }
      }
  }
  return T;
}

} // namespace codegen
} // namespace idxmap
