//===- test/codegen-smoke/SmokeKernels.h - Hand-built kernels ---*- C++ -*-===//
//
// Part of idxmap. A few kernels built directly with KernelBuilder, with no
// fusion analysis: they exercise the NVPTX foundations (16-byte read-only
// loads, shuffles, shared memory and barriers, approximate and libdevice
// math) for the smoke tool, the codegen unit tests and the golden tests.
//
// Kernels (every one takes buffers in order, then `i64 n`, the element count):
//   scale_f32(x, y, n)          y = 2 * x; 4 floats per thread through
//                               <4 x float> loads, scalar tail; 256 threads.
//   block_sum_f32(x, y, n)      y[b] = sum of x[256 b .. 256 b + 255] (< n):
//                               shfl.sync.bfly per warp, one .shared slot per
//                               warp, bar.sync, a width-8 shuffle in warp 0.
//   approx_f32(x, t, e, n)      t = tanh.approx(x), e = ex2.approx(x log2 e),
//                               4 floats per thread (n a multiple of 4).
//   tanh_precise_f32(x, y, n)   y = __nv_tanhf(x) from libdevice.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_CODEGEN_SMOKE_SMOKEKERNELS_H
#define IDXMAP_TEST_CODEGEN_SMOKE_SMOKEKERNELS_H

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <memory>
#include <string>
#include <vector>

namespace idxmap {
namespace codegen {

/// Threads per block of every smoke kernel.
inline constexpr unsigned SmokeBlockSize = 256;

/// Names of the smoke kernels, in a fixed order.
const std::vector<std::string> &smokeKernelNames();

/// A module holding kernel \p Name (one of smokeKernelNames()), or null for an
/// unknown name. The module is verified, not yet optimized.
std::unique_ptr<llvm::Module> buildSmokeKernel(llvm::LLVMContext &Ctx,
                                               const std::string &Name);

} // namespace codegen
} // namespace idxmap

#endif // IDXMAP_TEST_CODEGEN_SMOKE_SMOKEKERNELS_H
