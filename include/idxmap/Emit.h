//===- idxmap/Emit.h - HLO fusions to PTX -----------------------*- C++ -*-===//
//
// Part of idxmap. The top of codegen: analyze each fusion of a module, run
// its emitter, and produce one PTX module with a kernel per fusion plus the
// launch metadata of each kernel.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_EMIT_H
#define IDXMAP_EMIT_H

#include "idxmap/Codegen.h"
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/KernelInfo.h"

#include <map>
#include <string>
#include <vector>

namespace idxmap {

struct EmitOptions {
  TargetOptions Target;
  /// Only the fusion with this name (all fusions when empty).
  std::string OnlyFusion;
  /// Also keep the optimized LLVM IR text.
  bool KeepLlvmIr = false;
  /// Stop after building the kernels' IR: Kernels filled (launch shapes,
  /// recorded thread maps), no IR pipeline, no PTX (for `idxmap analyze`).
  bool KernelsOnly = false;
  /// The emitters' tuning knobs, by the names of the environment variables
  /// that also set them (tuningKnobNames(); an entry here wins over the
  /// environment). Values are clamped to each knob's range. Example:
  /// `O.Tuning["IDXMAP_RED_ROW_LANES"] = 256;` gives row reductions 256
  /// threads per row. A name that is not a knob is an error of emitModule.
  std::map<std::string, int64_t> Tuning;
};

/// The names of the emitters' tuning knobs (sorted), documented at the top
/// of codegen/emitters/ReductionEmitter.cpp and RowNormalizationEmitter.cpp:
/// `IDXMAP_RED_COL_LANES`, ..., `IDXMAP_ROWNORM_EXACT_DIVIDE`.
const std::vector<std::string> &tuningKnobNames();

struct EmitResult {
  std::string Ptx;
  std::string LlvmIr;
  std::vector<KernelInfo> Kernels;
  /// Wall time of each phase in milliseconds: "analysis+IR" (fusion
  /// analysis and IR building) and "opt+PTX" (optimization and the NVPTX
  /// back end; absent with KernelsOnly).
  std::vector<std::pair<std::string, double>> PhaseMs;
};

/// Emits every fusion of \p M (a module without fusions is emitted as if its
/// ENTRY computation were one fusion named after it... not supported: an
/// error). Errors name the fusion and the reason (e.g. an emitter that does
/// not exist yet).
///
/// Example:
/// \code
///   auto M = parseHloModule(Text, "gelu.hlo");
///   auto R = emitModule(**M, EmitOptions{});
///   // R->Ptx holds `.visible .entry fusion(`, R->Kernels[0].Block[0] == 128
/// \endcode
Expected<EmitResult> emitModule(const HloModule &M, const EmitOptions &O);

/// The name of the emitter that emitModule uses for \p Fusion analyzed as
/// \p A: emitterKindName(A.Kind), except for row reductions whose results
/// are broadcast back along their rows and combined with the rows'
/// elements (softmax, layer norm), which the row-normalization emitter does
/// in one kernel.
///
/// Example: for `bench/hlo/softmax_f32_4096x4096.hlo`, A.Kind is
/// EmitterKind::RowReduction and the result is "row normalization"; for
/// `bench/hlo/rowsum_f32_8192x8192.hlo` it is "row reduction".
std::string codegenEmitterName(const HloInstruction &Fusion,
                               const FusionAnalysis &A);

/// The tolerance to compare a fusion's kernel output against the
/// interpreter with: the output type's default, widened for the approximate
/// math the kernel uses and for reductions accumulated in a different order
/// (documented in codegen/ElementwiseCodegen.h, toleranceFor).
Tolerance kernelTolerance(const HloInstruction &Fusion, bool PreciseMath);

} // namespace idxmap

#endif // IDXMAP_EMIT_H
