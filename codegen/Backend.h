//===- Backend.h - The back end for a module already verified --*- C++ -*-===//
//
// Part of idxmap. Private to codegen: emitModule verifies its module whole
// (and drops the kernels that fail) before the back end runs, so the back
// end need not verify it again.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_BACKEND_H
#define IDXMAP_CODEGEN_BACKEND_H

#include "idxmap/Codegen.h"

namespace llvm {
class Function;
} // namespace llvm

namespace idxmap {
namespace codegen {

/// emitPtx(M, Opts, TM) for a module that llvm::verifyModule accepted:
/// the same steps, without verifying it again (on a 900-instruction scan
/// kernel, verifying costs about 1.5 M instructions, 2 % of its compile).
Expected<std::string> emitVerifiedPtx(llvm::Module &M,
                                      const TargetOptions &Opts,
                                      llvm::TargetMachine &TM);

/// The function attribute of a kernel whose plan skips instcombine
/// (KernelPlan::IrInstCombine); the fast pipeline leaves instcombine out of
/// a module only when every function it defines carries it.
inline constexpr const char *SkipInstCombineAttr = "idxmap-skip-instcombine";

/// The function attribute of a kernel whose plan keeps its back-end level
/// with libdevice (KernelPlan::LibdeviceAtPlanLevel); a module that links
/// libdevice runs the back end at the level its kernels asked for
/// (requestBackEndOptLevel) only when every kernel carries it, else at O3.
inline constexpr const char *LibdeviceAtPlanLevelAttr =
    "idxmap-libdevice-at-plan-level";

/// The NVPTX back end's optimization level for \p M after the IR pipeline
/// of \p Opts (\p Libdevice: the module links libdevice): the level the
/// emitters asked for (requestBackEndOptLevel) under the fast pipeline,
/// unless libdevice is linked and some kernel lacks
/// LibdeviceAtPlanLevelAttr; else 3. Opts.BackEndOptLevel >= 0 wins.
///
/// Example: a module of one reduction kernel (requestBackEndOptLevel(M, 0))
/// that calls `__nv_erff` gets 3, or 0 when its kernel carries the
/// attribute.
unsigned backEndOptLevel(const llvm::Module &M, const TargetOptions &Opts,
                         bool Libdevice);

/// For the tests of the verifier's net (no emitter is known to build
/// invalid IR, so nothing else reaches it): when set, emitModule calls it
/// with each kernel function right after the emitter built it, so that a
/// test can break one kernel and check that a whole module drops that
/// fusion alone. Per thread; null outside those tests.
///
/// Example: a hook that appends a block without a terminator to the
/// kernel named "b" makes `emitModule` with SkipUnsupported list fusion b
/// in EmitResult::Skipped ("the emitter built invalid LLVM IR") and emit
/// the others.
extern thread_local void (*AfterKernelBuilt)(llvm::Function &Kernel);

} // namespace codegen
} // namespace idxmap

#endif
