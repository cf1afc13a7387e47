//===- idxmap/KernelInfo.h - Launch metadata of emitted kernels -*- C++ -*-===//
//
// Part of idxmap. What a `.ptx` file's JSON sidecar says about each kernel:
// name, grid, block, shared memory and parameters in order. The runtime
// needs nothing else to launch a kernel. No LLVM here.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_KERNELINFO_H
#define IDXMAP_KERNELINFO_H

#include "idxmap/Diagnostics.h"
#include "idxmap/Hlo.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

/// One kernel parameter: a buffer of an array shape, read (input) or written
/// (output), in the order the kernel takes them.
struct KernelParam {
  std::string Name;
  bool IsOutput = false;
  Shape Type; ///< element type, dims and layout (minor-to-major)
  unsigned Align = 16;
};

/// Launch metadata of one kernel.
///
/// Example sidecar (`idxmap emit gelu.hlo -o gelu.ptx` writes `gelu.json`):
/// \code
///   {"kernels": [{"name": "fusion", "fusion": "fusion", "emitter": "loop",
///     "grid": [12288, 1, 1], "block": [128, 1, 1], "shared_bytes": 0,
///     "params": [{"name": "param", "role": "input", "type": "bf16",
///                 "shape": [6, 512, 4096], "layout": [2, 1, 0], "align": 16},
///                {"name": "multiply_0", "role": "output", ...}]}]}
/// \endcode
struct KernelInfo {
  std::string Name;
  std::string Fusion;
  std::string Emitter;
  unsigned Grid[3] = {1, 1, 1};
  unsigned Block[3] = {1, 1, 1};
  unsigned SharedBytes = 0;
  std::vector<KernelParam> Params;
  /// When nonzero, the kernel takes one more parameter after Params: a
  /// device buffer of this many bytes, zeroed before its first launch, that
  /// the kernel leaves zeroed again (partials of multi-block reductions and
  /// their arrival counters). Launches that may overlap (different
  /// streams) each need their own; launches in one stream may share one.
  /// In the sidecar: `"workspace_bytes": N` after "params" (absent when 0).
  uint64_t WorkspaceBytes = 0;
  /// The emitter's thread map of its main read, in XLA syntax:
  /// `(th_x, bl_x)[..., vec] -> (index of ThreadMapTarget)`, the last range
  /// variable being the vector lane; empty when the emitter records none
  /// (only the reduction emitter does). Not part of the sidecar; `idxmap
  /// analyze` shows it and checks its coalescing.
  std::string ThreadMap, ThreadMapTarget;
};

/// The sidecar JSON of \p Kernels (stable key order, one kernel per line).
/// \p HloPath, when given, records the HLO module the kernels came from
/// (`"hlo": "..."`), which `idxmap run out.ptx` uses for the reference.
std::string kernelsToJson(const std::vector<KernelInfo> &Kernels,
                          const std::string &HloPath = "");

/// Reads a sidecar back; errors point into \p Text (file name \p File).
/// The recorded HLO path goes to \p HloPath when non-null.
Expected<std::vector<KernelInfo>> kernelsFromJson(std::string_view Text,
                                                  const std::string &File,
                                                  std::string *HloPath = nullptr);

} // namespace idxmap

#endif // IDXMAP_KERNELINFO_H
