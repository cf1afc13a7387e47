//===- Emitters.h - Kernel emitters (private to codegen) --------*- C++ -*-===//
//
// Part of idxmap. One function per emitter kind; each adds one kernel for a
// fusion to the module and returns its launch metadata.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_EMITTERS_H
#define IDXMAP_CODEGEN_EMITTERS_H

#include "ElementwiseCodegen.h"

#include "idxmap/Diagnostics.h"
#include "idxmap/Fusion.h"
#include "idxmap/KernelInfo.h"
#include "idxmap/KernelPlan.h"

#include "llvm/IR/Module.h"

namespace idxmap {
namespace codegen {

/// The loop emitter: each thread computes a contiguous run of `Vector`
/// output elements (the widest run, up to 16 bytes, that divides the element
/// count); every parameter whose contiguity and alignment the maps prove is
/// loaded with vector loads of its proven width, others element by element;
/// outputs are stored as one vector per thread.
Expected<KernelInfo> emitLoopKernel(llvm::Module &M, const HloInstruction &F,
                                    const FusionAnalysis &A,
                                    const KernelPlan &Plan,
                                    Context &Ctx,
                                    const MathOptions &Math);

/// The transpose emitter: shared-memory tiles of the plan's tiling
/// (TransposePlan: 32 x 32 V tiles, warps, vector widths), coalesced reads
/// along the input's minor dim with the prologue computed at the hero
/// operand's index, one barrier, coalesced writes along the output's minor
/// dim with the epilogue. A fusion whose epilogue does not read the
/// transpose one-to-one is planned as a loop and never reaches it.
Expected<KernelInfo> emitTransposeKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &Plan,
                                         Context &Ctx,
                                         const MathOptions &Math);

/// The reduction emitters (row, multi-row, full and column; see
/// ReductionEmitter.cpp): one kernel per fusion whose hero is a reduce, with
/// elementwise prologues and epilogues fused.
Expected<KernelInfo> emitReductionKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &Plan,
                                         Context &Ctx,
                                         const MathOptions &Math);

/// The row normalization emitter: one kernel, each row read once into the
/// registers of a group of threads, every reduction of the row combined
/// with shuffles (and shared memory across warps), the roots computed from
/// the registers and stored once, as \p Plan (planFusion's, whose maps
/// live in \p Ctx) describes; the plan refuses rows that do not fit in one
/// block, the emitter reducers it cannot inline.
Expected<KernelInfo> emitRowNormalizationKernel(llvm::Module &M,
                                                const HloInstruction &F,
                                                const FusionAnalysis &A,
                                                const KernelPlan &Plan,
                                                Context &Ctx,
                                                const MathOptions &Math);

/// The concatenate and input-slices emitters (PiecewisePlan): threads over
/// one index space (the largest operand's, the sliced input's); each
/// piece's elements computed once and stored, through a concatenate's
/// elementwise epilogue, at their place in their output.
Expected<KernelInfo> emitPiecewiseKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &Plan, Context &Ctx,
                                         const MathOptions &Math);

/// The scatter emitter (ScatterPlan): a thread per update element, its
/// operand index from the scatter indices, a window that does not fit the
/// operand skipped, the element combined in place (store, atomic or a
/// compare-and-swap loop) into the buffer the output shares with the
/// operand.
Expected<KernelInfo> emitScatterKernel(llvm::Module &M,
                                       const HloInstruction &F,
                                       const FusionAnalysis &A,
                                       const KernelPlan &Plan, Context &Ctx,
                                       const MathOptions &Math);

/// The scan emitter (ScanPlan): a line per thread, scanned serially with
/// the carry in a register, every root stored at each element's index
/// through the prologue and epilogue.
Expected<KernelInfo> emitScanKernel(llvm::Module &M, const HloInstruction &F,
                                    const FusionAnalysis &A,
                                    const KernelPlan &Plan, Context &Ctx,
                                    const MathOptions &Math);

/// A kernel name from a fusion name: letters, digits and `_` only.
std::string kernelName(const std::string &FusionName);

} // namespace codegen
} // namespace idxmap

#endif
