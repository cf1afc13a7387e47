//===- idxmap/KernelInfo.h - Launch metadata of emitted kernels -*- C++ -*-===//
//
// Part of idxmap. What a `.ptx` file's JSON sidecar says about each kernel:
// name, grid, block, shared memory and parameters in order. The runtime
// needs nothing else to launch a kernel. The sidecar itself (its JSON, the
// buffer plan of a whole module) is idxmap/Sidecar.h. No LLVM here.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_KERNELINFO_H
#define IDXMAP_KERNELINFO_H

#include "idxmap/Hlo.h"

#include <cstdint>
#include <string>
#include <vector>

namespace idxmap {

/// One kernel parameter: a buffer of an array shape, read (input) or written
/// (output), in the order the kernel takes them.
struct KernelParam {
  std::string Name;
  bool IsOutput = false;
  Shape Type; ///< element type, dims and layout (minor-to-major)
  unsigned Align = 16;
  /// The module-level buffer this parameter is (an index into
  /// Sidecar::Buffers: an ENTRY parameter, result or intermediate), or -1
  /// when unknown (the fusion is not called from ENTRY).
  int Buffer = -1;
};

/// An in-place update: the kernel writes only part of output parameter
/// Output and never reads input parameter Input, so Output's buffer must
/// hold Input's bytes when it starts: the same buffer, or a copy of it
/// (docs/SIDECAR.md). Indices count inputs and outputs in KernelInfo::Params
/// order. Example: the in-place dynamic-update-slice kernel of
/// `ROOT d = dynamic-update-slice(p0, p1, p2, c0)` with three parameters
/// has {Output 3, Input 0}.
struct KernelAlias {
  unsigned Output = 0;
  unsigned Input = 0;
};

/// Launch metadata of one kernel.
///
/// Example kernel of a sidecar (`idxmap emit gelu.hlo -o gelu.ptx` writes
/// `gelu.json`; docs/SIDECAR.md has the whole file):
/// \code
///   {"name": "fusion", "fusion": "fusion", "emitter": "loop",
///    "grid": [12288, 1, 1], "block": [128, 1, 1], "static_shared_bytes": 0,
///    "dynamic_shared_bytes": 0,
///    "params": [{"name": "param", "role": "input", "type": "bf16",
///                "shape": [6, 512, 4096], "layout": [2, 1, 0], "align": 16,
///                "buffer": 0},
///               {"name": "multiply_0", "role": "output", ...}],
///    "workspace_bytes": 0, "aliases": []}
/// \endcode
struct KernelInfo {
  std::string Name;
  std::string Fusion;
  std::string Emitter;
  unsigned Grid[3] = {1, 1, 1};
  unsigned Block[3] = {1, 1, 1};
  /// Static shared memory (`.shared` arrays in the PTX), for launch checks.
  unsigned SharedBytes = 0;
  /// Dynamic shared memory to pass at launch (cuLaunchKernel's
  /// sharedMemBytes). The emitters declare all shared memory statically
  /// today, so this is 0.
  unsigned DynamicSharedBytes = 0;
  std::vector<KernelParam> Params;
  /// When nonzero, the kernel takes one more parameter after Params: a
  /// device buffer of this many bytes, zeroed before its first launch, that
  /// the kernel leaves zeroed again (partials of multi-block reductions and
  /// their arrival counters). Launches that may overlap (different
  /// streams) each need their own; launches in one stream may share one.
  /// In the sidecar: `"workspace_bytes": N` after "params".
  uint64_t WorkspaceBytes = 0;
  std::vector<KernelAlias> Aliases;
  /// A reduction kernel's longest chain of float roundings from an input
  /// term to an output, in the order the kernel combines them (serial steps
  /// of a thread, shuffles, partials of warps and blocks); 0 when the
  /// kernel records none. kernelTolerance widens its add-reduction bound to
  /// it: a thread that sums 1000 steps in series can drift further from
  /// the interpreter's pairwise sum than a tree of depth log2 n. In the
  /// sidecar: `"rounding_depth": N` when nonzero.
  int64_t RoundingDepth = 0;
  /// The emitter's thread map of its main read, in XLA syntax:
  /// `(th_x, bl_x)[..., vec] -> (index of ThreadMapTarget)`, the last range
  /// variable being the vector lane; empty when the emitter records none
  /// (only the reduction emitter does). Not part of the sidecar; `idxmap
  /// analyze` shows it and checks its coalescing.
  std::string ThreadMap, ThreadMapTarget;
};

} // namespace idxmap

#endif // IDXMAP_KERNELINFO_H
