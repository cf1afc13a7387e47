//===- ScatterPlan.cpp - Combining updates in place -----------------------===//
//
// Part of idxmap. The scatter emitter's plan (XLA's scatter fusion): a
// thread per update element combines it into the operand's buffer, which
// the output shares (the sidecar's aliases). The combiner decides the
// atomic: a plain store for an overwrite, one atomic add, max or min where
// the hardware has it for the element type, else a compare-and-swap loop.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/HloInterpreter.h"

#include <algorithm>

namespace idxmap {
namespace plan {
namespace {

/// The opcode of \p C's root when it combines its two parameters with one
/// binary op (either order), else Parameter when it returns parameter 1
/// (an overwrite), else Call (anything else).
HloOpcode combinerOp(const HloComputation &C) {
  const HloInstruction *R = C.root();
  if (!R || C.parameterCount() != 2)
    return HloOpcode::Call;
  if (R == C.parameter(1))
    return HloOpcode::Parameter;
  if (R->operandCount() == 2 &&
      ((R->operand(0) == C.parameter(0) && R->operand(1) == C.parameter(1)) ||
       (R->operand(0) == C.parameter(1) && R->operand(1) == C.parameter(0))))
    return R->opcode();
  return HloOpcode::Call;
}

} // namespace

std::optional<std::string> planScatter(const PlanInputs &In, KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const HloInstruction *S = A.Roots.front();
  const HloInstruction *Updates = S->operand(2);
  const PrimitiveType T = S->shape().Type;
  ScatterPlan SP;
  SP.UpdatedParam = A.UpdatedParams.front();
  // The combine: what the combiner computes and what the element type
  // has atomics for (4- and 8-byte adds of floats and integers, 4- and
  // 8-byte integer max and min; a 1- or 2-byte element shares its word).
  const HloOpcode Op = combinerOp(*S->toApply());
  const int64_t Bytes = byteWidth(T);
  const bool Word = Bytes == 4 || Bytes == 8;
  std::string Why;
  if (Op == HloOpcode::Parameter) {
    SP.Combine = ScatterCombine::Store;
    Why = "the combiner returns the update: a store (with duplicate "
          "indices one of them wins, as XLA leaves unspecified)";
  } else if (Op == HloOpcode::Add && Word && T != PrimitiveType::Pred) {
    SP.Combine = ScatterCombine::AtomicAdd;
    Why = "the combiner adds: one atomic add per element";
  } else if ((Op == HloOpcode::Maximum || Op == HloOpcode::Minimum) && Word &&
             isIntegralType(T)) {
    SP.Combine = Op == HloOpcode::Maximum ? ScatterCombine::AtomicMax
                                          : ScatterCombine::AtomicMin;
    Why = "an integer max or min: one atomic per element";
  } else {
    SP.Combine = ScatterCombine::CompareAndSwap;
    Why = "no atomic computes this combiner on " +
          std::string(primitiveTypeName(T)) +
          ": a compare-and-swap loop on the element's word";
  }
  P.choose("combine", int64_t(SP.Combine), Why);
  // One thread per update element, in the updates' physical order.
  P.Main = loopThreadMapping(In.Ctx, Updates->shape(), 1, 128);
  P.Main.Target = Updates;
  const ThreadMapping &TM = P.Main;
  P.choose("threads", TM.ThreadsPerBlock, "threads per block");
  GridStride GS = gridStride(TM.Blocks, In.Device.MaxGrid[0]);
  P.choose("blocks", GS.Grid,
           GS.Iterations > 1
               ? "grid.x limit: " + std::to_string(GS.Iterations) +
                     " blocks of the mapping per block (grid stride)"
               : "one block per " + std::to_string(TM.ThreadsPerBlock) +
                     " update elements");
  int64_t MaxElements = std::max(Updates->shape().numElements(),
                                 S->shape().numElements());
  for (const HloInstruction *Pm : C.parameters())
    MaxElements = std::max(MaxElements, Pm->shape().numElements());
  chooseIndexWidth(P, MaxElements);
  P.Loop = LoopPlan{true, std::vector<int64_t>(C.parameters().size(), 1)};
  P.Scatter = SP;
  P.BackEndOptLevel = 0;
  P.Grid[0] = GS.Grid;
  P.Block[0] = TM.ThreadsPerBlock;
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
