//===- idxmap/Codegen.h - NVPTX target and PTX emission ---------*- C++ -*-===//
//
// Part of idxmap. The codegen layer turns kernel plans into LLVM IR and the IR
// into PTX text for the NVPTX back end of LLVM 19. This header holds the
// target half: which GPU and PTX version, the O3 pipeline, and PTX emission.
//
// Unlike the analysis headers, codegen headers may include LLVM: only code
// that links `idxmap::codegen` (and therefore LLVM) sees them.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_H
#define IDXMAP_CODEGEN_H

#include "idxmap/Diagnostics.h"

#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

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
  /// XLA's --xla_backend_extra_options (IDXMAP_LLVM_ARGS, split at blanks).
  /// They are LLVM's process-wide options: the first
  /// createNvptxTargetMachine call with any parses them (later ones are
  /// ignored), and emitPtx then instruments the IR passes. A host that
  /// embeds LLVM for its own use leaves this empty.
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
std::optional<Diagnostic> validateTargetOptions(const TargetOptions &Opts);

/// Makes the NVPTX target machine for \p Opts (registers the NVPTX target on
/// first use; thread-safe).
Expected<std::unique_ptr<llvm::TargetMachine>>
createNvptxTargetMachine(const TargetOptions &Opts);

/// Sets \p M's triple and data layout to those of \p TM. Builders call this
/// before creating functions so that the data layout guides IR decisions.
void configureModuleForTarget(llvm::Module &M, const llvm::TargetMachine &TM);

/// Links the libdevice functions \p M calls (`__nv_*`) from Opts.LibdevicePath,
/// internalizes them and sets `nvvm-reflect-ftz` to 0 so NVVMReflect picks the
/// IEEE paths. Does nothing when \p M calls no `__nv_*` function. Fails when
/// the file is missing or unreadable.
std::optional<Diagnostic> linkLibdevice(llvm::Module &M,
                                        const TargetOptions &Opts);

/// Runs the IR pipeline \p P on \p M (PassBuilder with the NVPTX target's
/// own callbacks for O3). \p M must already be configured for \p TM. Of
/// \p Opts only the experiments are read: FastPipeline replaces the fast
/// pipeline (an error when it does not parse), LlvmArgs turn on pass
/// instrumentation.
std::optional<Diagnostic>
optimizeModule(llvm::Module &M, llvm::TargetMachine &TM,
               TargetOptions::Pipeline P = TargetOptions::Pipeline::O3,
               const TargetOptions &Opts = TargetOptions());

/// The module flag that holds the NVPTX back end's optimization level.
inline constexpr const char *BackEndOptFlag = "idxmap.backend-opt";

/// Asks for back-end optimization level \p Level (0 to 3, as
/// llvm::CodeGenOptLevel) for \p M; the module gets the highest level any
/// kernel asked for. emitPtx uses it after the fast IR pipeline; a module
/// that asks for nothing, or runs the O3 pipeline, gets 3. Level 0 skips
/// LLVM's loop strength reduction, code-generation preparation and DAG
/// combining, which ptxas redoes anyway: the emitters ask for it where the
/// kernels measured the same on the GPU (loop, reduction and row
/// normalization kernels), and for 3 where LLVM's work shows (transposes,
/// several rows per warp).
///
/// Example:
/// \code
///   requestBackEndOptLevel(M, 0); // a reduction kernel
///   requestBackEndOptLevel(M, 3); // and a transpose: the module gets 3
/// \endcode
void requestBackEndOptLevel(llvm::Module &M, unsigned Level);

/// Verifies \p M, configures it for the target, links libdevice when needed,
/// runs O3 (unless Opts.Optimize is false) and returns the PTX text. The
/// back end runs at the level of requestBackEndOptLevel, or at
/// Opts.BackEndOptLevel when that is set.
/// \p M is modified in place (optimized), so `--emit=llvm` after this prints
/// what the back end saw.
///
/// Example:
/// \code
///   llvm::LLVMContext LC;
///   llvm::Module M("k", LC);
///   ... build a ptx_kernel function ...
///   auto Ptx = emitPtx(M, TargetOptions{});
///   // *Ptx starts with "//\n// Generated by LLVM NVPTX Back-End" and holds
///   // ".version 8.5" and ".target sm_90".
/// \endcode
Expected<std::string> emitPtx(llvm::Module &M, const TargetOptions &Opts);

/// As above with a target machine the caller already made for \p Opts
/// (createNvptxTargetMachine), so a compile creates it once.
Expected<std::string> emitPtx(llvm::Module &M, const TargetOptions &Opts,
                              llvm::TargetMachine &TM);

} // namespace idxmap

#endif // IDXMAP_CODEGEN_H
