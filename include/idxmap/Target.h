//===- idxmap/Target.h - The NVPTX target options ---------------*- C++ -*-===//
//
// Part of idxmap. Which GPU and PTX version codegen targets, and how it
// optimizes: the options of emitModule (Emit.h) and of the LLVM-facing API
// (Codegen.h). No LLVM here, so a program that only emits PTX needs no LLVM
// headers.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TARGET_H
#define IDXMAP_TARGET_H

#include "idxmap/Diagnostics.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

/// The target triple of every module idxmap emits.
inline constexpr const char *NvptxTriple = "nvptx64-nvidia-cuda";

/// The newest PTX ISA version LLVM 19's NVPTX back end can emit (`+ptx85`).
/// Driver 580 (CUDA 13.0) accepts PTX up to 9.0, so every version LLVM 19
/// writes loads there.
inline constexpr unsigned MaxPtxVersion = 85;

/// Where and how PTX is produced.
///
/// Example:
/// \code
///   TargetOptions T;              // sm_90, PTX 8.5, fast approximate math
///   T.Gpu = "sm_80";
///   if (auto Err = validateTargetOptions(T)) report(Err->str());
/// \endcode
struct TargetOptions {
  /// `sm_80`, `sm_90` or `sm_90a`.
  std::string Gpu = "sm_90";
  /// PTX ISA version times ten (85 = `.version 8.5`); 0 lets LLVM pick the
  /// oldest version the GPU allows (7.8 for sm_90). Must not exceed
  /// MaxPtxVersion and must be at least minPtxVersion(Gpu).
  unsigned PtxVersion = MaxPtxVersion;
  /// Elementwise codegen computes tanh/exp/... with libdevice (linked by
  /// emitPtx from LibdevicePath) instead of `tanh.approx.f32`/`ex2.approx`.
  bool PreciseMath = false;
  /// libdevice bitcode; used only when the module calls `__nv_*` functions.
  std::string LibdevicePath = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  /// Optimize the IR before instruction selection (see OptPipeline).
  bool Optimize = true;
  /// Which IR pipeline runs when Optimize is set. `Fast` (the default) is a
  /// short function pipeline sized for the emitters' straight-line kernels:
  /// SROA, early CSE, one instruction-combining round, CFG simplification,
  /// LICM and a second CSE (a module with subgraph functions, which the
  /// emitters write for values read at several indices, first runs
  /// instcombine, early CSE and LLVM's inliner); the NVPTX back end then
  /// adds its own
  /// address-space inference, straight-line strength reduction and
  /// load/store vectorizer. `O3` is LLVM's default O3 module pipeline; it
  /// is always used when libdevice is linked (its functions must be inlined).
  enum class Pipeline { Fast, O3 } OptPipeline = Pipeline::Fast;

  // Experiments. The library reads no environment: the `idxmap` tool fills
  // these from the environment variables named in each comment.

  /// Options for LLVM itself (`-time-passes`, `-print-before=sroa`), as
  /// XLA's --xla_backend_extra_options; empty by default, and then LLVM's
  /// process-wide options are never touched, so a host that embeds LLVM for
  /// its own use keeps its settings. When not empty, the first
  /// createNvptxTargetMachine call parses them into LLVM's global options
  /// (once per process: later lists are ignored) and emitPtx instruments the
  /// IR passes. The `idxmap` tool fills this from IDXMAP_LLVM_ARGS.
  ///
  /// Example: `T.LlvmArgs = {"-time-passes"};` prints LLVM's pass timings
  /// to stderr at exit.
  std::vector<std::string> LlvmArgs;
  /// Replaces the fast pipeline when not empty (`opt -passes` syntax;
  /// IDXMAP_FAST_PIPELINE). One that does not parse is an error of emitPtx.
  std::string FastPipeline;
  /// More back-end passes to skip after the fast pipeline, by LLVM pass
  /// name (IDXMAP_SKIP_PASSES, comma-separated).
  std::vector<std::string> SkipPasses;
  /// The NVPTX back end's optimization level, 0 to 3, in place of the one
  /// the emitters asked for (requestBackEndOptLevel); -1: theirs
  /// (IDXMAP_BACKEND_OPT).
  int BackEndOptLevel = -1;
};

/// The oldest PTX version (times ten) that can target \p Gpu, or 0 when the
/// GPU is not one idxmap supports: sm_80 → 70, sm_90 → 78, sm_90a → 80.
unsigned minPtxVersion(std::string_view Gpu);

/// Checks the GPU name, the PTX version and the back-end optimization
/// level (-1 to 3). Returns nothing when valid, else
/// a diagnostic naming the accepted values (no location: file "", line 0;
/// the options are not the input).
///
/// Example: with `T.Gpu = "sm_70"`, validateTargetOptions(T)->Message names
/// sm_80, sm_90 and sm_90a.
std::optional<Diagnostic> validateTargetOptions(const TargetOptions &Opts);

} // namespace idxmap

#endif // IDXMAP_TARGET_H
