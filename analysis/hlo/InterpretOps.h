//===- analysis/hlo/InterpretOps.h - The interpreter's op families -*- C++ -*-//
//
// Part of idxmap. Private to analysis/hlo: the parts of the reference
// interpreter kept out of Interpreter.cpp, whose evaluator walks the
// computation and evaluates elementwise ops and reduce:
// - data movement (InterpretDataMovement.cpp): iota, broadcast, transpose,
//   slices, reverse, bitcast, pad, concatenate, each one strided copy;
// - control flow (InterpretControl.cpp): while, conditional, opt-barrier;
// - more elementwise ops (InterpretElementwise.cpp): erf, reduce-precision,
//   bitcast-convert.
// The verifier has no shape rules for the ops after `Call` in HloOpcode, so
// their evaluators check operands, attributes and called computations
// themselves and report a located `cannot evaluate 'NAME': ...` diagnostic
// instead of trusting them.
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

/// The type EvaluateOptions::Widen computes \p T in: f64 for f16, bf16 and
/// f32, else \p T.
PrimitiveType widenType(PrimitiveType T);

/// Row-major strides of \p Dims, in elements.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &Dims);

/// The data movement ops (InterpretDataMovement.cpp), each on its operands'
/// values, into a literal of shape \p OutShape (the HLO shape, widened under
/// EvaluateOptions::Widen).
using Ops = std::vector<const Literal *>;
Literal evalIota(const HloInstruction &I, const Shape &OutShape);
Literal evalBroadcast(const HloInstruction &I, const Literal &In,
                      const Shape &OutShape);
Literal evalTranspose(const HloInstruction &I, const Literal &In,
                      const Shape &OutShape);
Literal evalSlice(const HloInstruction &I, const Literal &In,
                  const Shape &OutShape);
Literal evalReverse(const HloInstruction &I, const Literal &In,
                    const Shape &OutShape);
/// A bitcast between layouts or between element types of one width is a
/// copy; between widths, the buffer's bytes when both layouts are
/// row-major. \p Widen: the values are widened (no bitcast between types).
Expected<Literal> evalBitcast(const HloInstruction &I, const Literal &In,
                              const Shape &Result, bool Widen);
/// Start indices clamped as XLA does, to keep the slice inside the operand.
Literal evalDynamicSlice(const HloInstruction &I, const Ops &In,
                         const Shape &OutShape);
Literal evalDynamicUpdateSlice(const HloInstruction &I, const Ops &In);
Literal evalPad(const HloInstruction &I, const Literal &In,
                const Literal &Value, const Shape &OutShape);
Literal evalConcatenate(const HloInstruction &I, const Ops &In,
                        const Shape &OutShape);

/// `cannot evaluate 'NAME': WHY` at \p I.
Diagnostic cannotEvaluate(const HloInstruction &I, const std::string &Why);

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_INTERPRETOPS_H
