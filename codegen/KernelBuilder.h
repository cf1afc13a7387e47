//===- codegen/KernelBuilder.h - NVPTX kernel IR helpers --------*- C++ -*-===//
//
// Part of idxmap. Small, target-specific IR building blocks that every
// emitter uses: kernel functions with the right calling convention, launch
// bounds and parameter attributes; special registers; warp shuffles;
// barriers; shared memory; fast approximate math. Each helper is the one
// place that knows how LLVM 19 spells its construct (GPU.md lists the
// differences in LLVM 21+: launch bounds as function attributes,
// `llvm.nvvm.barrier0` replaced).
//
// Example (y = 2 * x, 4 floats per thread):
// \code
//   llvm::Function *F = createKernel(M, "scale", {
//       {"x", KernelParamRole::Input}, {"y", KernelParamRole::Output}});
//   setLaunchBounds(*F, {256, /*Exact=*/false});
//   llvm::IRBuilder<> B(&F->getEntryBlock());
//   llvm::Value *Tid = emitThreadId(B, GpuDim::X, 256);
//   ... // <4 x float> loads through F->getArg(0) become ld.global.nc.v4.f32
// \endcode
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_KERNELBUILDER_H
#define IDXMAP_CODEGEN_KERNELBUILDER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/IRBuilder.h"

#include <cstdint>
#include <string>

namespace llvm {
class Function;
class GlobalVariable;
class Module;
class Type;
class Value;
} // namespace llvm

namespace idxmap {
namespace codegen {

/// NVPTX address spaces used by idxmap.
enum NvptxAddrSpace : unsigned {
  GenericAddrSpace = 0,
  GlobalAddrSpace = 1,
  SharedAddrSpace = 3,
};

/// How a kernel parameter is used; decides its IR attributes.
enum class KernelParamRole {
  /// Read-only buffer: `ptr addrspace(1) noalias readonly align A`, so that
  /// loads through it may use the non-coherent cache (`ld.global.nc`).
  Input,
  /// Write-only buffer: `ptr addrspace(1) noalias writeonly align A`.
  Output,
  /// Buffer read and written by the kernel: `ptr addrspace(1) noalias align A`.
  InOut,
  /// A scalar passed by value (e.g. an i64 element count).
  Scalar,
};

/// One kernel parameter. Buffers are global pointers whose alignment the
/// runtime guarantees (cuMemAlloc returns 256-byte aligned memory).
struct KernelParamSpec {
  std::string Name;
  KernelParamRole Role = KernelParamRole::Input;
  /// Alignment in bytes promised for a buffer parameter.
  unsigned Align = 16;
  /// Type of a Scalar parameter (ignored for buffers); null means i64.
  llvm::Type *ScalarType = nullptr;
};

/// Creates `define ptx_kernel void @Name(...)` in \p M with one parameter per
/// spec (named, with the attributes of its role) and an empty entry block.
/// The module should already be configured for the target
/// (configureModuleForTarget), though nothing here depends on it.
llvm::Function *createKernel(llvm::Module &M, llvm::StringRef Name,
                             llvm::ArrayRef<KernelParamSpec> Params);

/// True when \p F is a kernel entry (the ptx_kernel calling convention).
bool isKernel(const llvm::Function &F);

/// Launch bounds of a kernel (x dimension; y and z are 1).
struct LaunchBounds {
  /// Threads per block; 0 leaves the bound unset.
  unsigned MaxThreadsX = 0;
  /// Every launch uses exactly MaxThreadsX threads (`.reqntid` instead of
  /// `.maxntid`): lets ptxas and LLVM use the exact block size.
  bool Exact = false;
  /// Blocks that must fit on one SM at a time (`.minnctapersm`); 0: unset.
  unsigned MinBlocksPerSm = 0;
};

/// Attaches launch bounds to kernel \p F. LLVM 19 reads them from
/// `!nvvm.annotations` (`maxntidx`, `reqntidx`, `minctasm`); this is the only
/// function that writes them.
void setLaunchBounds(llvm::Function &F, const LaunchBounds &Bounds);

/// The launch bounds recorded on \p F (all zero when none).
LaunchBounds getLaunchBounds(const llvm::Function &F);

/// A dimension of the thread/block index space.
enum class GpuDim { X, Y, Z };

/// `%tid.<d>`. When \p BlockSize is non-zero, the result carries
/// `!range [0, BlockSize)` so later passes know it is small and non-negative.
llvm::Value *emitThreadId(llvm::IRBuilderBase &B, GpuDim D,
                          unsigned BlockSize = 0);
/// `%ctaid.<d>`; \p GridSize as for emitThreadId.
llvm::Value *emitBlockId(llvm::IRBuilderBase &B, GpuDim D,
                         unsigned GridSize = 0);
/// `%ntid.<d>` (threads per block).
llvm::Value *emitBlockDim(llvm::IRBuilderBase &B, GpuDim D);
/// `%nctaid.<d>` (blocks per grid).
llvm::Value *emitGridDim(llvm::IRBuilderBase &B, GpuDim D);
/// `%laneid`, in [0, 32).
llvm::Value *emitLaneId(llvm::IRBuilderBase &B);

/// The warp size on every NVIDIA GPU idxmap targets.
inline constexpr unsigned WarpSize = 32;

/// `shfl.sync.bfly.b32`: the value of lane `laneid ^ LaneMask`. \p Width is
/// the size of the independent lane groups (a power of two ≤ 32; the clamp
/// operand packs `((32 - Width) << 8) | 31`). Any value of 8 to 64 bits
/// (integer, float, half, bfloat, pointer-free vectors) is shuffled, wider
/// values as several 32-bit words. \p MemberMask names the participating lanes.
llvm::Value *emitShuffleXor(llvm::IRBuilderBase &B, llvm::Value *V,
                            unsigned LaneMask, unsigned Width = WarpSize,
                            uint32_t MemberMask = 0xffffffffu);

/// `bar.sync 0`: every thread of the block waits; shared-memory writes before
/// it are visible to all threads after it.
void emitBarrier(llvm::IRBuilderBase &B);

/// A block-shared array `[Count x Elem]` in address space 3 (`.shared`),
/// internal, uninitialized, aligned to \p Align bytes.
llvm::GlobalVariable *createSharedArray(llvm::Module &M, llvm::Type *Elem,
                                        uint64_t Count, llvm::StringRef Name,
                                        unsigned Align = 16);

/// `tanh.approx.f32` (inline asm; LLVM 19 cannot select `llvm.tanh` with
/// `afn`). Max error about 2^-11 (PTX ISA; the GPU smoke test measures it
/// against std::tanh). Accepts f32 or a vector of f32 (per element).
llvm::Value *emitTanhApprox(llvm::IRBuilderBase &B, llvm::Value *X);

/// 2^x with `ex2.approx.ftz.f32` (max relative error 2^-22 for normal
/// results; subnormal inputs and results flush to zero). f32 or vector.
llvm::Value *emitExp2Approx(llvm::IRBuilderBase &B, llvm::Value *X);

/// e^x as ex2.approx(x · log2 e). The rounding of the product adds a relative
/// error of about |x · log2 e| · 2^-24 · ln 2 (≈ 1e-6 at |x| = 20).
llvm::Value *emitExpApprox(llvm::IRBuilderBase &B, llvm::Value *X);

} // namespace codegen
} // namespace idxmap

#endif // IDXMAP_CODEGEN_KERNELBUILDER_H
