//===- codegen/sim/SimIr.h - Kernel IR made runnable on the host -*- C++
//-*-===//
//
// Part of idxmap. The host simulator runs the emitters' LLVM IR (emitted
// with EmitOptions::HostIr) on the CPU. This turns that NVPTX module into
// one the host's JIT compiles: the GPU's special registers, barriers, warp
// shuffles and votes become calls into the simulator's runtime
// (SimThreads.h), the inline PTX the emitters write becomes the IR of what
// it does, libdevice calls become the C math library's, shared memory
// becomes globals the simulator poisons per block, and each kernel gets an
// entry that takes the driver's `void **` argument array.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_SIM_SIMIR_H
#define IDXMAP_CODEGEN_SIM_SIMIR_H

#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Module.h"

#include <cstdint>
#include <string>
#include <vector>

namespace idxmap {
namespace sim {

/// The runtime functions the rewritten IR calls (SimThreads.h defines them).
inline constexpr const char *SregFn = "__idxmap_sim_sreg";
inline constexpr const char *BarrierFn = "__idxmap_sim_barrier";
inline constexpr const char *WarpFn = "__idxmap_sim_warp";
inline constexpr const char *SharedFn = "__idxmap_sim_shared";
/// Called with the address and size of each load of inline PTX (`ld.`:
/// a flag, a descriptor or a partial another block or thread publishes)
/// before it: a thread that keeps reading one value there gives the CPU to
/// the others of its block, and a block where nothing else can change it
/// is a deadlock instead of a hang.
inline constexpr const char *PollFn = "__idxmap_sim_poll";

/// `__idxmap_sim_async(op, a, b, n, bar)`: the asynchronous operations of
/// inline PTX (AsyncOp), which the simulator completes at once.
inline constexpr const char *AsyncFn = "__idxmap_sim_async";

/// What __idxmap_sim_async does:
/// - MbarInit: `mbarrier.init` of the barrier at a, n arrivals a phase;
/// - MbarArrive: `mbarrier.arrive` at a, after `expect_tx` of n bytes when
///   n > 0;
/// - MbarTest: `mbarrier.try_wait.parity` at a: 1 when the phase of parity
///   n has completed (a thread that keeps testing in vain gives the CPU to
///   the others, as at a poll);
/// - BulkToShared: `cp.async.bulk` of n bytes from b to a, its bytes then
///   completed on the barrier bar;
/// - BulkToGlobal: the same copy with no barrier (a bulk store).
enum class AsyncOp : uint32_t {
  MbarInit,
  MbarArrive,
  MbarTest,
  BulkToShared,
  BulkToGlobal
};

/// What a shared-memory access does, for __idxmap_sim_shared(ptr, bytes,
/// kind), which the rewritten IR calls before each one (the race check).
enum class SharedAccess : uint32_t { Read, Write, Atomic };

/// The special registers __idxmap_sim_sreg reads, by code.
enum class Sreg : uint32_t {
  TidX,
  TidY,
  TidZ,
  NtidX,
  NtidY,
  NtidZ,
  CtaidX,
  CtaidY,
  CtaidZ,
  NctaidX,
  NctaidY,
  NctaidZ,
  LaneId,
  WarpSize
};

/// The warp operations of __idxmap_sim_warp(Op, Mask, A, B, C).
enum class WarpOp : uint32_t {
  ShflIdx,
  ShflUp,
  ShflDown,
  ShflBfly,
  Ballot,
  All,
  Any
};

/// A shared-memory array of the module, by the name it has after
/// prepareForHost (external, so the simulator can find and poison it).
struct SharedArray {
  std::string Name;
  uint64_t Bytes = 0;
  /// The array standing for dynamic shared memory (DynamicSharedBytes).
  bool Dynamic = false;
};

/// What prepareForHost found and made.
struct HostModuleInfo {
  /// Each kernel's name; its entry is `<name>.simentry(ptr args)`.
  std::vector<std::string> Kernels;
  std::vector<SharedArray> Shared;
  /// Bytes of the statically sized shared arrays (the kernels' static
  /// shared memory, as cuFuncGetAttribute reports it).
  uint64_t StaticSharedBytes = 0;
  /// True when some kernel may wait at a barrier or a warp collective: the
  /// threads of a block then run as fibers; else one after another.
  bool Collectives = false;
};

/// The bytes of the array that stands for dynamic shared memory (the
/// `extern .shared` declaration): a launch may ask for at most this many.
inline constexpr uint64_t DynamicSharedBytes = 256 * 1024;

/// The entry of kernel \p Kernel.
inline std::string entryName(const std::string &Kernel) {
  return Kernel + ".simentry";
}

/// Rewrites \p M (an NVPTX module of the emitters) for a host whose data
/// layout is \p DL and target triple \p Triple. Fails with a message naming
/// the first intrinsic or inline PTX the simulator does not model.
///
/// Example: a kernel calling `@llvm.nvvm.read.ptx.sreg.tid.x()` then calls
/// `@__idxmap_sim_sreg(i32 0)`; `asm "div.full.f32 $0, $1, $2;"` becomes
/// an `fdiv float`.
bool prepareForHost(llvm::Module &M, const llvm::DataLayout &DL,
                    const std::string &Triple, HostModuleInfo &Info,
                    std::string &Error);

} // namespace sim
} // namespace idxmap

#endif // IDXMAP_CODEGEN_SIM_SIMIR_H
