//===- analysis/hlo/ContractionOps.h - dot, convolution, windows -*- C++
//-*-===//
//
// Part of idxmap. Private to analysis/hlo: the shape rules, indexing maps and
// reference evaluation of dot, convolution, reduce-window,
// select-and-scatter and map (HloVerifierWindow.cpp,
// OpIndexingContraction.cpp, InterpretContraction.cpp). The shared
// dispatchers (HloVerifier.cpp, OpIndexing.cpp, Interpreter.cpp) call these.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_CONTRACTIONOPS_H
#define IDXMAP_ANALYSIS_HLO_CONTRACTIONOPS_H

#include "idxmap/HloIndexing.h"
#include "idxmap/HloInterpreter.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace idxmap {
namespace hlo {

//===----------------------------------------------------------------------===//
// Shape rules (XLA's ShapeInference)
//===----------------------------------------------------------------------===//

/// Each returns a message such as `dot: lhs_contracting_dims {1} and
/// rhs_contracting_dims {0} have sizes 4 and 5`, or nullopt if \p I is
/// valid. \p Attrs holds the attribute names the text gave.
using AttrSet = std::unordered_set<std::string>;
std::optional<std::string> verifyDot(const HloInstruction &I,
                                     const AttrSet &Attrs);
std::optional<std::string> verifyConvolution(const HloInstruction &I,
                                             const AttrSet &Attrs);
std::optional<std::string> verifyReduceWindow(const HloInstruction &I,
                                              const AttrSet &Attrs);
std::optional<std::string> verifySelectAndScatter(const HloInstruction &I,
                                                  const AttrSet &Attrs);
std::optional<std::string> verifyMap(const HloInstruction &I,
                                     const AttrSet &Attrs);

/// The size of one windowed dimension of \p Base elements (XLA's
/// InferWindowOutputShape): the base dilated and padded, then the number of
/// dilated-window positions at the stride. nullopt on int64 overflow or a
/// negative padded size.
/// Example: base 13, size 3, stride 2, pad 1_1 gives 7.
std::optional<int64_t> windowOutputSize(int64_t Base, const WindowDim &W);

//===----------------------------------------------------------------------===//
// Indexing maps
//===----------------------------------------------------------------------===//

/// True for the ops this file indexes: dot, convolution, reduce-window, map,
/// and the elementwise-indexed ops after Call (erf, acos, complex, ...).
bool isContractionIndexed(HloOpcode Op);
/// Output-to-input maps of those ops (XLA's text; undefined maps when \p I
/// is not of a supported form).
InstructionIndexing contractionOutputToInput(Context &Ctx,
                                             const HloInstruction &I,
                                             int64_t OutputId);
/// Input-to-output maps where XLA has them (map and the elementwise-indexed
/// ops: the identity); undefined for dot, convolution and reduce-window,
/// as in XLA.
InstructionIndexing contractionInputToOutput(Context &Ctx,
                                             const HloInstruction &I,
                                             int64_t InputId);

//===----------------------------------------------------------------------===//
// Reference evaluation
//===----------------------------------------------------------------------===//

/// What the evaluator lends these ops: its options, the literal shape of the
/// result (widened under EvaluateOptions::Widen), a way to run a called
/// computation on scalar literals (counted against the budgets like any
/// run), and the factor EvaluateOptions::PerturbUlps puts on a rounded
/// result (1 when none).
struct ContractionEnv {
  const EvaluateOptions &Opts;
  Shape OutShape;
  std::function<Expected<Literal>(const HloComputation &,
                                  const std::vector<const Literal *> &)>
      Apply;
  double Scale = 1;
};

/// The op of the 2-byte float prefix sum or product \p I computes, folded
/// in f64 under EvaluateOptions::WideScans (Add or Multiply): a prefix
/// reduce-window (\p ScanWindow) of one f16 or bf16 array whose to_apply
/// adds or multiplies its two scalar parameters, or a scan op of one input
/// and one carry whose body returns `x op c` (either order) as both.
/// nullopt when the option is off or \p I is anything else.
std::optional<HloOpcode> wideScanOp(const HloInstruction &I,
                                    const EvaluateOptions &O, bool ScanWindow);

/// True for the ops evalContraction evaluates.
bool isContractionEvaluated(HloOpcode Op);
/// Evaluates dot, convolution, reduce-window, select-and-scatter or map on
/// its operand values \p In.
Expected<Literal> evalContraction(const HloInstruction &I,
                                  const std::vector<const Literal *> &In,
                                  const ContractionEnv &Env);
/// The element results \p I computes, counted for EvaluateOptions::MaxWork:
/// every multiply-add of a dot or convolution, every window element a
/// reduce-window or select-and-scatter visits times its computations'
/// instruction counts, every element of a map times its computation's.
/// Saturates at INT64_MAX.
int64_t contractionWork(const HloInstruction &I);

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_CONTRACTIONOPS_H
