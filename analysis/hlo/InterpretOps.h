//===- analysis/hlo/InterpretOps.h - Ops evaluated outside the core -*- C++ -*-===//
//
// Part of idxmap. Private to analysis/hlo: the ops after `Call` in HloOpcode
// that the reference interpreter evaluates, kept out of Interpreter.cpp so
// that its evaluator stays one concept (data movement, elementwise, reduce):
// - control flow (InterpretControl.cpp): while, conditional, opt-barrier;
// - more elementwise ops (InterpretElementwise.cpp): erf, reduce-precision,
//   bitcast-convert.
// The verifier has no shape rules for these ops, so each evaluator checks
// its operands, attributes and called computations itself and reports a
// located `cannot evaluate 'NAME': ...` diagnostic instead of trusting them.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_INTERPRETOPS_H
#define IDXMAP_ANALYSIS_HLO_INTERPRETOPS_H

#include "idxmap/Diagnostics.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace idxmap {
namespace hlo {

/// What the control-flow ops need from the evaluator that runs them.
struct ControlHooks {
  /// Runs a computation on arguments (one per parameter, already checked
  /// against the parameters' shapes) in the evaluator, under its budgets.
  std::function<Expected<Literal>(const HloComputation &,
                                  const std::vector<const Literal *> &)>
      Run;
  /// The evaluator's count of element results (EvaluateOptions::MaxWork).
  /// Every loop iteration adds one, so that a loop whose body and condition
  /// compute nothing (`ROOT p = parameter(0)`, `ROOT t = constant(true)`)
  /// still stops at the budget.
  int64_t *Work = nullptr;
  int64_t MaxWork = std::numeric_limits<int64_t>::max();
};

/// while, conditional, opt-barrier.
bool isControlOp(HloOpcode Op);
/// Evaluates the control-flow op \p I on its operands' values \p In.
Expected<Literal> evalControl(const HloInstruction &I,
                              const std::vector<const Literal *> &In,
                              const ControlHooks &Hooks);

/// erf, reduce-precision, bitcast-convert.
bool isMoreElementwiseOp(HloOpcode Op);
/// Evaluates the elementwise op \p I on \p In (widened values under
/// EvaluateOptions::Widen).
Expected<Literal> evalMoreElementwise(const HloInstruction &I,
                                      const std::vector<const Literal *> &In,
                                      const EvaluateOptions &Opts);

/// `cannot evaluate 'NAME': WHY` at \p I.
Diagnostic cannotEvaluate(const HloInstruction &I, const std::string &Why);

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_INTERPRETOPS_H
