//===- idxmap/Sidecar.h - The kernel contract of a .ptx file ----*- C++ -*-===//
//
// Part of idxmap. The JSON sidecar next to an emitted `.ptx` (`out.json` for
// `out.ptx`): target, PTX version, each kernel's launch metadata, and the
// buffer plan that wires a module's kernels to its ENTRY parameters, results
// and intermediates. docs/SIDECAR.md describes the format and
// docs/sidecar.schema.json is its JSON Schema. No LLVM here.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_SIDECAR_H
#define IDXMAP_SIDECAR_H

#include "idxmap/Diagnostics.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelInfo.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

/// One device buffer of a module: what a kernel parameter is in terms of the
/// ENTRY computation.
struct SidecarBuffer {
  enum class Kind {
    Parameter,   ///< ENTRY parameter number Index
    Result,      ///< ENTRY result, tuple element Index (-1: not a tuple)
    Intermediate ///< written by one kernel (or op) and read by others
  };
  Kind BufferKind = Kind::Intermediate;
  /// The ENTRY instruction (the parameter's name, the producing fusion's, or
  /// `NAME.N` for element N of a multi-output fusion).
  std::string Name;
  int64_t Index = -1;
  Shape Type;
  uint64_t Bytes = 0;
};

/// A whole sidecar.
///
/// Example (`idxmap emit gelu.hlo -o out/gelu.ptx` writes `out/gelu.json`):
/// \code
///   {"schema_version": 1, "target": "sm_90", "ptx_version": "8.5",
///    "hlo": "../gelu.hlo",
///    "kernels": [{"name": "fusion", ..., "params": [{..., "buffer": 0},
///                 {..., "buffer": 1}], "workspace_bytes": 0, "aliases": []}],
///    "launch_order": ["fusion"],
///    "buffers": [{"kind": "parameter", "name": "p", "index": 0, ...,
///                 "bytes": 25165824},
///                {"kind": "result", "name": "fusion", "index": -1, ...}]}
/// \endcode
struct Sidecar {
  /// The version this library writes; it reads this one and the unversioned
  /// sidecars before it (one `shared_bytes`, read as static).
  static constexpr int CurrentSchemaVersion = 1;
  int SchemaVersion = CurrentSchemaVersion;
  /// `sm_90`; empty when unknown (old sidecars).
  std::string Target;
  /// The PTX ISA version of the `.version` line, `8.5`; empty when unknown.
  std::string PtxVersion;
  /// The HLO module, as recorded: absolute, or relative to the sidecar's
  /// directory (resolveSidecarHlo turns it into a path to open).
  std::string Hlo;
  std::vector<KernelInfo> Kernels;
  /// Kernel names in the order to launch them (ENTRY's order, producers
  /// before consumers). Empty when unknown: then Kernels' order.
  std::vector<std::string> LaunchOrder;
  std::vector<SidecarBuffer> Buffers;
};

/// The sidecar's JSON (stable key order, one kernel and one buffer per line),
/// written with nlohmann::json: any string, a path with tabs or quotes
/// included, is escaped.
///
/// Example:
/// \code
///   Sidecar S;
///   S.Target = "sm_90";
///   S.Hlo = "dir\twith tab/m.hlo";
///   sidecarToJson(S); // {"schema_version": 1,\n "target": "sm_90", ...
///                     //  "hlo": "dir\twith tab/m.hlo", ..., "kernels": []...
/// \endcode
std::string sidecarToJson(const Sidecar &S);

/// Reads a sidecar back; errors point into \p Text (file name \p File) at
/// the offending value. Example: a kernel whose "align" is 12 gives
/// `m.json:3:210: error: 'align' must be a power of two from 1 to 4096`.
Expected<Sidecar> sidecarFromJson(std::string_view Text,
                                  const std::string &File);

/// Fills \p S's Buffers, each parameter's Buffer and LaunchOrder from
/// \p M's ENTRY computation, matching kernels to ENTRY fusions by name.
/// Example: for `ENTRY { p = parameter(0); a = fusion(p); ROOT b =
/// fusion(a) }` with kernels a and b, the buffers are parameter p (a's
/// input), intermediate a (a's output, b's input) and result b.
void planBuffers(const HloModule &M, Sidecar &S);

/// What to record as "hlo" for the module at \p HloPath in the sidecar at
/// \p SidecarPath: the path relative to the sidecar's directory when they
/// share a directory below the root, else (or with no \p SidecarPath)
/// absolute; empty for stdin ("-" or "").
/// Example: ("m.hlo", "out/m.json") gives "../m.hlo" (from the same working
/// directory).
std::string sidecarHloPath(const std::string &HloPath,
                           const std::string &SidecarPath);

/// The path to open for a sidecar's recorded "hlo" \p Recorded, read from
/// \p SidecarPath: absolute paths as they are, relative ones against the
/// sidecar's directory. Example: ("../m.hlo", "out/m.json") gives
/// "out/../m.hlo".
std::string resolveSidecarHlo(const std::string &Recorded,
                              const std::string &SidecarPath);

/// `out.ptx` -> `out.json` (any other name gets `.json` appended).
std::string sidecarPathFor(const std::string &PtxPath);

} // namespace idxmap

#endif // IDXMAP_SIDECAR_H
