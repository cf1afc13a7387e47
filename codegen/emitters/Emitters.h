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
                                    const MathOptions &Math);

/// A kernel name from a fusion name: letters, digits and `_` only.
std::string kernelName(const std::string &FusionName);

} // namespace codegen
} // namespace idxmap

#endif
