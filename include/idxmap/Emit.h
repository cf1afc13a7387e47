//===- idxmap/Emit.h - HLO fusions to PTX -----------------------*- C++ -*-===//
//
// Part of idxmap. The top of codegen: analyze each fusion of a module, run
// its emitter, and produce one PTX module with a kernel per fusion plus the
// launch metadata of each kernel. No LLVM types here: a program that only
// emits PTX links idxmap::codegen and includes no LLVM header.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_EMIT_H
#define IDXMAP_EMIT_H

#include "idxmap/DeviceModel.h"
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/KernelInfo.h"
#include "idxmap/Sidecar.h"
#include "idxmap/Target.h"
#include "idxmap/Tuning.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace idxmap {

struct EmitOptions {
  TargetOptions Target;
  /// Only the fusion with this name (all fusions when empty).
  std::string OnlyFusion;
  /// Also keep the optimized LLVM IR text.
  bool KeepLlvmIr = false;
  /// Stop before the NVPTX back end: EmitResult::LlvmIr holds the module
  /// after the IR pipeline, libdevice not linked (its `__nv_*` calls stay
  /// declarations), and Ptx stays empty. This is the image the host
  /// simulator loads (HostSimulator.h); the kernels and the sidecar are
  /// those of the PTX.
  /// Example: `O.HostIr = true; auto R = emitModule(M, O);
  /// Drv->loadPtx(R->LlvmIr);` with a simulated driver.
  bool HostIr = false;
  /// Stop after building the kernels' IR: Kernels filled (launch shapes,
  /// recorded thread maps), no IR pipeline, no PTX (for `idxmap analyze`).
  bool KernelsOnly = false;
  /// Overrides of the emitters' choices (Tuning.h; the library reads no
  /// environment). Example: `O.Tuning.RedRowLanes = 256;` gives row
  /// reductions 256 threads per row. A value outside its knob's range is an
  /// error of emitModule (validateTuning).
  idxmap::Tuning Tuning;
  /// Overrides of single fusions, by fusion name (a tune cache's knobs:
  /// cachedFusionTunings in TuneCache.h), layered under Tuning: a knob set
  /// in Tuning wins. Example: `O.FusionTuning["fusion.3"].RedRowUnroll =
  /// 16;` plans fusion.3 with 16 unrolled iterations unless
  /// `O.Tuning.RedRowUnroll` says otherwise. Checked as Tuning is.
  std::map<std::string, idxmap::Tuning> FusionTuning;
  /// The GPU whose limits kernels must fit (grid, block, shared memory,
  /// parameter bytes); defaultDeviceModel(Target.Gpu) when empty.
  std::optional<DeviceModel> Device;
  /// The emission budget: a fusion of more instructions is rejected before
  /// any analysis. Emission time is linear in the instructions, but LLVM's
  /// passes are slow on long kernels: an elementwise chain of 20,000
  /// instructions (4 elements per thread) takes 0.8 s CPU, 50,000 take
  /// 2.8 s (RelWithDebInfo, 2-core CI VM). 0: no limit.
  int64_t MaxFusionInstructions = 25000;
  /// Emit what can be emitted (a whole optimized module: fusions beside
  /// gemm custom-calls, loops and collectives, which are left alone): a
  /// fusion that fails for its own reasons (an op or type no emitter
  /// computes, a limit, an emitter's refusal) is left out of the PTX and
  /// recorded in EmitResult::Skipped with its diagnostic, instead of
  /// failing the module. Module-level failures (options, the back end)
  /// still fail. With OnlyFusion set, that fusion failing is an error.
  bool SkipUnsupported = false;
};

/// A fusion emitModule left out (EmitOptions::SkipUnsupported).
struct SkippedFusion {
  const HloInstruction *Fusion = nullptr;
  /// The error it would have been, at the instruction concerned; its
  /// message names the fusion (`fusion 'f': no emitter computes dot 'd'`).
  Diagnostic Why;
};

struct EmitResult {
  std::string Ptx;
  std::string LlvmIr;
  std::vector<KernelInfo> Kernels;
  /// With EmitOptions::SkipUnsupported: the fusions left out, in module
  /// order. When every fusion is left out, Kernels is empty and no PTX is
  /// built.
  std::vector<SkippedFusion> Skipped;
  /// Wall time of each phase in milliseconds: "analysis+IR" (fusion
  /// analysis and IR building) and "opt+PTX" (optimization and the NVPTX
  /// back end; absent with KernelsOnly).
  std::vector<std::pair<std::string, double>> PhaseMs;
};

/// Emits every fusion of \p M (a module without fusions is an error).
/// Errors about the input point at the instruction they are about and name
/// the fusion and the reason (an emitter that does not exist yet, a launch
/// over the device's limits, more kernel parameter bytes than
/// DeviceModel::MaxKernelParamBytes); errors about the options (a bad
/// tuning knob or target) have no location (file "", line 0). A fusion
/// whose loop needs more blocks than grid.x allows gets a grid-stride loop;
/// other emitters reject it. Emission is iterative: a chain of 100,000
/// instructions does not deepen the stack.
///
/// Example:
/// \code
///   auto M = parseHloModule(Text, "gelu.hlo");
///   auto R = emitModule(**M, EmitOptions{});
///   // R->Ptx holds `.visible .entry fusion(`, R->Kernels[0].Block[0] == 128
/// \endcode
Expected<EmitResult> emitModule(const HloModule &M, const EmitOptions &O);

/// The sidecar of \p R, which emitModule made from \p M with \p O: its
/// target, the PTX version of R's `.version` line, the kernels, the buffer
/// plan and launch order (planBuffers), and "hlo" = \p HloPath as seen
/// from the sidecar file \p SidecarPath (sidecarHloPath; none when
/// \p HloPath is empty or "-").
///
/// Example:
/// \code
///   auto R = emitModule(**M, O);
///   std::string Json =
///       sidecarToJson(sidecarOf(**M, *R, O, "gelu.hlo", "out/gelu.json"));
///   // "target": "sm_90", "ptx_version": "8.5", "hlo": "../gelu.hlo"
/// \endcode
Sidecar sidecarOf(const HloModule &M, const EmitResult &R, const EmitOptions &O,
                  const std::string &HloPath = "",
                  const std::string &SidecarPath = "");

/// True if the fusion emitters compute \p Op inside a fusion (for the
/// element types interpreterSupportsUnary/Binary accept): the data
/// movement, elementwise and reduce ops (erf, acos ... sinh through
/// libdevice, reduce-precision), constants, iota, tuples, gather,
/// reduce-window; scan and scatter as the heroes of their emitters. Calls,
/// nested fusions and the other ops after Call in HloOpcode (dot, sort,
/// ...) are left: a fusion containing one is named and skipped.
/// Example: `emittersCompute(HloOpcode::Transpose)`,
/// `!emittersCompute(HloOpcode::Dot)`.
bool emittersCompute(HloOpcode Op);

/// The tolerance to compare a fusion's kernel output against the
/// interpreter with: the output type's default, widened for the approximate
/// math the kernel uses and for reductions accumulated in a different order
/// (documented in codegen/ElementwiseCodegen.h, toleranceFor), whose
/// longest chain of roundings is \p RoundingDepth (KernelInfo::
/// RoundingDepth; 0: a tree order).
///
/// Example: a sum of f32[2000] whose kernel adds 2000 terms in series is
/// compared with abs (2000 + 1) * 2^-24 * 2000 instead of (11 + 1) * 2^-24
/// * 2000:
/// \code
///   for (const KernelInfo &K : R->Kernels)
///     Tolerance T = kernelTolerance(*M->entry()->findInstruction(K.Fusion),
///                                   /*PreciseMath=*/false, K.RoundingDepth);
/// \endcode
Tolerance kernelTolerance(const HloInstruction &Fusion, bool PreciseMath,
                          int64_t RoundingDepth = 0);

/// RunOptions::TolFor for kernels this library emitted: kernelTolerance of
/// each kernel's fusion with the kernel's RoundingDepth.
///
/// Example: `RunOptions RO; RO.TolFor = kernelTolerances(/*PreciseMath=*/
/// false);` then runKernels(...) compares every kernel within its own
/// tolerance.
std::function<Tolerance(const HloInstruction &Fusion, const KernelInfo &Kernel)>
kernelTolerances(bool PreciseMath);

} // namespace idxmap

#endif // IDXMAP_EMIT_H
