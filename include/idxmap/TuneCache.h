//===- idxmap/TuneCache.h - Measured knobs per fusion and device -*- C++
//-*-===//
//
// Part of idxmap. What `idxmap tune` found fastest for a fusion on a GPU,
// for `emit`, `run` and `analyze` to plan with: entries keyed by the
// fusion's fingerprint (a hash of its fused computation, independent of
// names) and the device, each holding the winning Tuning knobs and, for
// people reading the file, the measured time, the date and the fusion's
// name. Kept as JSON (docs/TUNING.md). No LLVM here; no file I/O either:
// the caller reads and writes the text.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TUNECACHE_H
#define IDXMAP_TUNECACHE_H

#include "idxmap/Diagnostics.h"
#include "idxmap/Hlo.h"
#include "idxmap/Tuning.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

/// \p C printed canonically, the text fusionFingerprint hashes: the
/// printer's form of each instruction (shapes with layouts, opcodes, typed
/// and kept attributes) with every instruction named by its position
/// (`%3`), every called computation by its order of first call (`c1`; \p C
/// is `c0`, the called ones follow it), and no `metadata` attribute.
///
/// Example: `ROOT r = f32[8]{0} reduce(p, z), dimensions={1}, to_apply=add`
/// as the third instruction of its computation is
/// `ROOT %2 = f32[8]{0} reduce(%0, %1), dimensions={1}, to_apply=c1`.
std::string canonicalComputationText(const HloComputation &C);

/// The fingerprint of fused computation \p C: FNV-1a 64 of
/// canonicalComputationText(C), as 16 lowercase hex digits. Renaming
/// instructions or computations, or changing metadata, keeps it; any
/// change of a shape, layout, opcode, operand, attribute or called
/// computation changes it.
///
/// Example: `fusionFingerprint(*F->fusedComputation())` is
/// "3f0c7a19e2b45d86" for one fusion, the same after `s/fusion.1/f/`.
std::string fusionFingerprint(const HloComputation &C);

/// The device part of a cache key for the GPU named \p Name: without a
/// leading "NVIDIA ", and a preset's name (A100, H100, H200) when the first
/// word is one, so that the driver's name and `--device` agree; otherwise
/// the name as given.
///
/// Example: "NVIDIA H200" and "h200" give "H200"; "NVIDIA H100 PCIe" gives
/// "H100"; "RTX 6000 Ada" stays.
std::string tuneDeviceKey(std::string_view Name);

/// One measured fusion.
struct TuneCacheEntry {
  /// fusionFingerprint of the fused computation.
  std::string Fingerprint;
  /// tuneDeviceKey of the GPU it was measured on.
  std::string Device;
  /// The knobs of the fastest plan (none set: the rules' plan won).
  Tuning Knobs;
  /// For people: the measured kernel time, the date (YYYY-MM-DD) and the
  /// fusion's name when it was tuned. Not part of the key.
  double Microseconds = 0;
  std::string Date;
  std::string Fusion;
};

/// The cache: at most one entry per (fingerprint, device).
///
/// Example:
/// \code
///   TuneCache Cache;
///   TuneCacheEntry E;
///   E.Fingerprint = fusionFingerprint(*F->fusedComputation());
///   E.Device = "H200";
///   E.Knobs.RedRowLanes = 256;
///   Cache.insert(E);
///   std::string Text = Cache.toJson();
///   Expected<TuneCache> Back = TuneCache::fromJson(Text, "tune.json");
///   // Back->find(E.Fingerprint, "NVIDIA H200")->Knobs.RedRowLanes == 256
/// \endcode
class TuneCache {
public:
  /// The entry for \p Fingerprint on \p Device (any name tuneDeviceKey
  /// maps to the entry's), or null.
  const TuneCacheEntry *find(std::string_view Fingerprint,
                             std::string_view Device) const;
  /// Adds \p E (its Device normalized by tuneDeviceKey), replacing the
  /// entry of the same key.
  void insert(TuneCacheEntry E);
  /// Every entry, sorted by fingerprint, then device.
  const std::vector<TuneCacheEntry> &entries() const { return Entries; }

  /// The JSON text, deterministic (entries sorted, keys in a fixed order,
  /// one entry per line):
  /// \code
  ///   {"version": 1, "entries": [
  ///     {"fingerprint": "3f0c7a19e2b45d86", "device": "H200",
  ///      "knobs": {"IDXMAP_RED_ROW_LANES": 256}, "microseconds": 12.300,
  ///      "date": "2026-12-01", "fusion": "fusion.3"}]}
  /// \endcode
  std::string toJson() const;

  /// Reads toJson's format. "version" (1) and "entries" are required, and
  /// in each entry "fingerprint" (16 hex digits), "device" (a non-empty
  /// string) and "knobs" (an object of knob names from tuningTable() to
  /// whole numbers in their range); "microseconds", "date" and "fusion" are
  /// optional. An unknown key, a value of the wrong type, a bad knob or two
  /// entries of one key is an error located in \p Text (`FILE:LINE:COL:
  /// error: ...`).
  static Expected<TuneCache> fromJson(std::string_view Text,
                                      const std::string &File);

private:
  std::vector<TuneCacheEntry> Entries;
};

/// The cached knobs of every fusion of \p M that \p Cache holds for \p
/// Device, by fusion name (the form EmitOptions::FusionTuning takes).
///
/// Example: for a module whose fusion `fusion.3` was tuned on the H200,
/// `cachedFusionTunings(Cache, M, "H200")` is {{"fusion.3", Knobs}}.
std::map<std::string, Tuning> cachedFusionTunings(const TuneCache &Cache,
                                                  const HloModule &M,
                                                  std::string_view Device);

} // namespace idxmap

#endif // IDXMAP_TUNECACHE_H
