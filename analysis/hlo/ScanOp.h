//===- analysis/hlo/ScanOp.h - The scan op's rules --------------*- C++ -*-===//
//
// Part of idxmap. Private to analysis/hlo: the shape rule, indexing maps and
// reference evaluation of XLA's `scan` op (ScanOp.cpp), which the shared
// dispatchers (HloVerifier.cpp, OpIndexing.cpp, Interpreter.cpp) call.
//
// `(f32[5,7], f32[5]) scan(x, init), dimensions={1}, num_carries=1,
// is_reverse=false, is_associative=true, to_apply=body`: the operands are
// N inputs then C inits (C = num_carries); the body takes the inputs' slices
// at one position of the scanned dimension (that dimension deleted) and the
// C carries, and returns O output slices then the C new carries (a tuple,
// or one array when O + C == 1). The result is the O outputs, of the
// inputs' dims, then the C final carries (XLA's ScanExpander: step i reads
// position i, or n-1-i when is_reverse=true).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_SCANOP_H
#define IDXMAP_ANALYSIS_HLO_SCANOP_H

#include "ContractionOps.h"

namespace idxmap {
namespace hlo {

/// The counts and attributes of a verified scan.
struct ScanLayout {
  int64_t Dim = 0;
  int64_t Inputs = 0, Carries = 0, Outputs = 0;
  bool Reverse = false;
};
/// The layout of \p I (a verified `scan`).
ScanLayout scanLayout(const HloInstruction &I);

/// `scan: ...` problems, or nullopt when \p I is valid.
std::optional<std::string> verifyScan(const HloInstruction &I,
                                      const AttrSet &Attrs);
/// Output-to-input maps of output \p OutputId.
InstructionIndexing scanOutputToInput(Context &Ctx, const HloInstruction &I,
                                      int64_t OutputId);
/// The scan run step by step, its body applied to whole slices.
Expected<Literal> evalScan(const HloInstruction &I,
                           const std::vector<const Literal *> &In,
                           const ContractionEnv &Env);
/// Element results for EvaluateOptions::MaxWork: the inputs' elements times
/// the body's instruction count (saturating).
int64_t scanWork(const HloInstruction &I);

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_SCANOP_H
