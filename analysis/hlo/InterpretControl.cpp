//===- analysis/hlo/InterpretControl.cpp - while, conditional, opt-barrier -===//
//
// Part of idxmap. Control flow for the reference interpreter, with the
// semantics of XLA's HloEvaluator:
// - while: the condition runs on the loop state; while it returns true the
//   body's result becomes the new state. Each iteration counts one element
//   result against EvaluateOptions::MaxWork, so that an endless loop stops
//   with a diagnostic at the while even when its body computes nothing.
// - conditional: a pred selector picks true_computation (or branch 0) when
//   true, else false_computation (branch 1); an s32 selector picks
//   branch_computations[i], and an index outside [0, N) the last branch, as
//   XLA does. Only the chosen branch runs, on its own operand.
// - opt-barrier: the identity (it only orders scheduling in XLA).
//
// The verifier has no shape rules for these ops (they come after Call in
// HloOpcode), so the shapes of operands and called computations are checked
// here, before anything runs.
//
//===----------------------------------------------------------------------===//
#include "InterpretOps.h"

#include <optional>
#include <string>

namespace idxmap {
namespace hlo {

Diagnostic cannotEvaluate(const HloInstruction &I, const std::string &Why) {
  return I.parent()->parent()->diagnose(
      I.sourceOffset(), "cannot evaluate '" + I.name() + "': " + Why);
}

namespace {

/// Checks that \p C (the computation of role \p Role, e.g. `body`) exists,
/// takes one parameter of each of \p Params' shapes and returns \p Result.
std::optional<Diagnostic> checkCallee(const HloInstruction &I,
                                      const HloComputation *C,
                                      const std::string &Role,
                                      const std::vector<Shape> &Params,
                                      const Shape &Result) {
  if (!C)
    return cannotEvaluate(I, "it has no " + Role + " computation");
  std::string Named = Role + " '" + C->name() + "'";
  if (C->parameterCount() != int64_t(Params.size()))
    return cannotEvaluate(I, Named + " takes " +
                                 std::to_string(C->parameterCount()) +
                                 " parameters, expected " +
                                 std::to_string(Params.size()));
  for (size_t K = 0; K < Params.size(); ++K) {
    const Shape &P = C->parameter(int64_t(K))->shape();
    if (!P.compatible(Params[K]))
      return cannotEvaluate(I, "parameter " + std::to_string(K) + " of " +
                                   Named + " is " + P.str() + ", expected " +
                                   Params[K].str());
  }
  const Shape &R = C->root()->shape();
  if (!R.compatible(Result))
    return cannotEvaluate(I, Named + " returns " + R.str() + ", expected " +
                                 Result.str());
  return std::nullopt;
}

std::optional<Diagnostic> checkOperandCount(const HloInstruction &I,
                                            int64_t Want) {
  if (I.operandCount() == Want)
    return std::nullopt;
  return cannotEvaluate(I, std::string(opcodeName(I.opcode())) + " takes " +
                               std::to_string(Want) + " operand" +
                               (Want == 1 ? "" : "s") + ", not " +
                               std::to_string(I.operandCount()));
}

Expected<Literal> evalWhile(const HloInstruction &I,
                            const std::vector<const Literal *> &In,
                            const ControlHooks &H) {
  if (std::optional<Diagnostic> D = checkOperandCount(I, 1))
    return *D;
  const Shape &State = I.operand(0)->shape();
  if (!I.shape().compatible(State))
    return cannotEvaluate(I, "the result is " + I.shape().str() +
                                 " but the loop state is " + State.str());
  const HloComputation *Cond = I.calledComputation("condition");
  const HloComputation *Body = I.calledComputation("body");
  if (std::optional<Diagnostic> D = checkCallee(
          I, Cond, "condition", {State}, Shape(PrimitiveType::Pred, {})))
    return *D;
  if (std::optional<Diagnostic> D = checkCallee(I, Body, "body", {State},
                                                State))
    return *D;

  Literal Value = *In[0];
  for (int64_t Iteration = 0;; ++Iteration) {
    if (*H.Work >= H.MaxWork)
      return I.parent()->parent()->diagnose(
          I.sourceOffset(),
          "evaluating '" + I.name() + "' would exceed " +
              std::to_string(H.MaxWork) +
              " element results (EvaluateOptions::MaxWork) in iteration " +
              std::to_string(Iteration));
    ++*H.Work;
    Expected<Literal> Go = H.Run(*Cond, {&Value});
    if (!Go)
      return Go.error();
    if (Go->getBits(0) == 0)
      return Value;
    Expected<Literal> Next = H.Run(*Body, {&Value});
    if (!Next)
      return Next.error();
    Value = std::move(*Next);
  }
}

/// The branches of a conditional: true_computation and false_computation
/// (XLA's branches 0 and 1), else branch_computations.
std::vector<const HloComputation *> branches(const HloInstruction &I) {
  if (I.calledComputation("true_computation") ||
      I.calledComputation("false_computation"))
    return {I.calledComputation("true_computation"),
            I.calledComputation("false_computation")};
  return I.calledComputations("branch_computations");
}

Expected<Literal> evalConditional(const HloInstruction &I,
                                  const std::vector<const Literal *> &In,
                                  const ControlHooks &H) {
  std::vector<const HloComputation *> Branches = branches(I);
  int64_t N = int64_t(Branches.size());
  if (N == 0)
    return cannotEvaluate(I, "it has no branch computations");
  if (std::optional<Diagnostic> D = checkOperandCount(I, N + 1))
    return *D;
  const Shape &Selector = I.operand(0)->shape();
  bool IsPred = Selector.compatible(Shape(PrimitiveType::Pred, {}));
  if (!IsPred && !Selector.compatible(Shape(PrimitiveType::S32, {})))
    return cannotEvaluate(I, "the branch selector is " + Selector.str() +
                                 ", expected pred[] or s32[]");
  if (IsPred && N != 2)
    return cannotEvaluate(I, "a pred selector needs 2 branches, not " +
                                 std::to_string(N));
  for (int64_t K = 0; K < N; ++K) {
    std::string Role = IsPred ? (K == 0 ? "true_computation"
                                        : "false_computation")
                              : "branch " + std::to_string(K);
    if (std::optional<Diagnostic> D =
            checkCallee(I, Branches[size_t(K)], Role,
                        {I.operand(K + 1)->shape()}, I.shape()))
      return *D;
  }
  int64_t Taken;
  if (IsPred) {
    Taken = In[0]->getBits(0) ? 0 : 1;
  } else {
    Taken = In[0]->getInt(0);
    if (Taken < 0 || Taken >= N)
      Taken = N - 1;
  }
  return H.Run(*Branches[size_t(Taken)], {In[size_t(Taken + 1)]});
}

} // namespace

bool isControlOp(HloOpcode Op) {
  return Op == HloOpcode::While || Op == HloOpcode::Conditional ||
         Op == HloOpcode::OptimizationBarrier;
}

Expected<Literal> evalControl(const HloInstruction &I,
                              const std::vector<const Literal *> &In,
                              const ControlHooks &Hooks) {
  switch (I.opcode()) {
  case HloOpcode::While:
    return evalWhile(I, In, Hooks);
  case HloOpcode::Conditional:
    return evalConditional(I, In, Hooks);
  case HloOpcode::OptimizationBarrier:
    if (std::optional<Diagnostic> D = checkOperandCount(I, 1))
      return *D;
    if (!I.shape().compatible(I.operand(0)->shape()))
      return cannotEvaluate(I, "the result is " + I.shape().str() +
                                   " but the operand is " +
                                   I.operand(0)->shape().str());
    return *In[0];
  default:
    return cannotEvaluate(I, "not a control-flow op");
  }
}

} // namespace hlo
} // namespace idxmap
