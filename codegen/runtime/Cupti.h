//===- codegen/runtime/Cupti.h - The CUPTI activity ABI we use --*- C++ -*-===//
//
// Part of idxmap. The few CUPTI constants, entry points and activity-record
// offsets that CuptiTimer (idxmap/Runtime.h) needs, declared here so that
// nothing needs cupti.h, plus the pieces of the timer that are testable
// without a GPU: the library search list, the decoding of a kernel record,
// the scan of an activity buffer and the choice of the timed records.
//
// Sources of the constants (checked by compiling offsetof/sizeof probes
// against the CUDA 13.0 toolkit's headers, CUPTI_API_VERSION 130001):
//  - cupti_result.h: CUPTI_SUCCESS = 0, CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
//    CUPTI_ERROR_INVALID_KIND = 21.
//  - cupti_activity.h, enum CUpti_ActivityKind (4 bytes):
//    CUPTI_ACTIVITY_KIND_KERNEL = 3,
//    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10;
//    enum CUpti_ActivityFlag: CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1 << 0.
//  - Kernel records: cupti_activity.h (CUpti_ActivityKernel10, emitted by
//    CUPTI 13.0) and cupti_activity_deprecated.h (CUpti_ActivityKernel4..9;
//    CUDA 12.x emits Kernel9). All are `PACKED_ALIGNMENT` structs
//    (packed, 8-byte aligned) and share one prefix:
//        offset   0  CUpti_ActivityKind kind   (uint32)
//        offset  16  uint64_t start            (ns)
//        offset  24  uint64_t end              (ns)
//        offset  40  uint32_t deviceId
//        offset  92  uint32_t correlationId
//        offset 104  const char *name          (LP64)
//    sizeof: Kernel4 144, Kernel5 160, Kernel6 168, Kernel7 176, Kernel8 200,
//    Kernel9 208, Kernel10 216. Later versions (Kernel11 of CUPTI 13.2,
//    Kernel12/13 of 13.4/13.5, per NVIDIA's CUPTI API reference) list the
//    same leading members and append new ones; their headers were not at
//    hand, so the lead's GPU run is what confirms them there.
//  - Entry points, C functions looked up by their unversioned names (as
//    declared in CUDA 13.0's cupti_activity.h, cupti_result.h and
//    cupti_version.h; exported by libcupti.so.13):
//    cuptiActivityRegisterCallbacks, cuptiActivityEnable,
//    cuptiActivityDisable, cuptiActivityFlushAll, cuptiActivityGetNextRecord,
//    cuptiGetResultString, and optionally cuptiGetVersion.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_RUNTIME_CUPTI_H
#define IDXMAP_CODEGEN_RUNTIME_CUPTI_H

#include "idxmap/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace idxmap {
namespace runtime {
namespace cupti {

using Result = int; // CUptiResult

constexpr Result Success = 0;
constexpr Result ErrorMaxLimitReached = 12;
constexpr Result ErrorInvalidKind = 21;

// CUpti_ActivityKind
constexpr std::uint32_t ActivityKindKernel = 3;
constexpr std::uint32_t ActivityKindConcurrentKernel = 10;
// CUpti_ActivityFlag
constexpr std::uint32_t ActivityFlagFlushForced = 1u << 0;

// The shared prefix of CUpti_ActivityKernel4..10 (see the banner).
constexpr std::size_t KernelKindOffset = 0;
constexpr std::size_t KernelStartOffset = 16;
constexpr std::size_t KernelEndOffset = 24;
constexpr std::size_t KernelNameOffset = 104;
/// Bytes of a kernel record that decodeKernelRecord reads.
constexpr std::size_t KernelPrefixBytes = KernelNameOffset + sizeof(void *);
/// Activity buffers must be 8-byte aligned (ACTIVITY_RECORD_ALIGNMENT).
constexpr std::size_t BufferAlignment = 8;

using BufferRequestFn = void (*)(std::uint8_t **Buffer, std::size_t *Size,
                                 std::size_t *MaxNumRecords);
using BufferCompleteFn = void (*)(void *Context, std::uint32_t StreamId,
                                  std::uint8_t *Buffer, std::size_t Size,
                                  std::size_t ValidSize);
/// cuptiActivityGetNextRecord: \p Record is the previous record (nullptr for
/// the first) and receives the next one.
using NextRecordFn = Result (*)(std::uint8_t *Buffer, std::size_t ValidBytes,
                                void **Record);

} // namespace cupti

/// The CUPTI entry points, filled by dlsym.
struct CuptiTimer::Api {
  cupti::Result (*ActivityRegisterCallbacks)(cupti::BufferRequestFn,
                                             cupti::BufferCompleteFn) = nullptr;
  cupti::Result (*ActivityEnable)(std::uint32_t Kind) = nullptr;
  cupti::Result (*ActivityDisable)(std::uint32_t Kind) = nullptr;
  cupti::Result (*ActivityFlushAll)(std::uint32_t Flag) = nullptr;
  cupti::NextRecordFn ActivityGetNextRecord = nullptr;
  cupti::Result (*GetResultString)(cupti::Result, const char **) = nullptr;
  /// Optional (nullptr when the library lacks it).
  cupti::Result (*GetVersion)(std::uint32_t *Version) = nullptr;
};

namespace cupti {

/// Where libcupti is looked for, in order. Entries are file paths, glob
/// patterns (`*` in them; expanded by expandSearchPatterns) or bare sonames
/// (no `/`; resolved by the dynamic loader's own search).
struct SearchInputs {
  std::string EnvPath;     ///< LoadOptions::FirstPath ($IDXMAP_CUPTI)
  std::string Home;        ///< $HOME
  std::string VirtualEnv;  ///< $VIRTUAL_ENV
  std::string CondaPrefix; ///< $CONDA_PREFIX
  /// The caller's (the library reads no environment).
  static SearchInputs from(const CuptiTimer::LoadOptions &Opts);
};
std::vector<std::string> searchPatterns(const SearchInputs &In);

/// Expands the glob patterns of \p Patterns (sorted matches; a pattern with
/// no match disappears, and is reported in \p Unmatched when given), keeps
/// the others as they are, and drops later duplicates of the same file.
std::vector<std::string>
expandSearchPatterns(const std::vector<std::string> &Patterns,
                     std::vector<std::string> *Unmatched = nullptr);

/// One kernel record's fields.
struct KernelRecord {
  std::uint32_t Kind = 0;
  std::uint64_t Start = 0, End = 0; ///< ns
  std::string Name;                 ///< empty when the record has none
  double micros() const { return double(End - Start) / 1000.0; }
};

/// What one record is.
enum class RecordClass {
  Kernel,       ///< a kernel record with valid timestamps
  NotKernel,    ///< another activity kind
  NoTimestamps, ///< a kernel record with end <= start (0, 0: not collected)
};

/// Decodes the record at \p Record (which holds at least KernelPrefixBytes
/// bytes when its kind is a kernel kind). Fills \p Out for Kernel.
RecordClass decodeKernelRecord(const void *Record, KernelRecord &Out);

/// The records of one activity buffer.
struct BufferScan {
  std::vector<KernelRecord> Kernels;
  std::size_t OtherRecords = 0;
  std::size_t InvalidKernelRecords = 0;
  /// The result that ended the scan when it is not MaxLimitReached (e.g.
  /// InvalidKind for an incomplete record); Success otherwise.
  Result Stop = Success;
};
/// Appends the records of \p Buffer (\p ValidBytes of it) to \p Out, walking
/// them with \p Next.
void scanBuffer(std::uint8_t *Buffer, std::size_t ValidBytes, NextRecordFn Next,
                BufferScan &Out);

/// The durations (us) of the \p Reps timed launches among \p Records: the
/// records named \p KernelName (or unnamed), ordered by start, last \p Reps
/// of them (the warm-up launches come first). When there are fewer, sets
/// \p Failure and returns nothing.
std::vector<double> timedDurations(std::vector<KernelRecord> Records,
                                   const std::string &KernelName, unsigned Reps,
                                   std::string &Failure);

} // namespace cupti
} // namespace runtime
} // namespace idxmap

#endif // IDXMAP_CODEGEN_RUNTIME_CUPTI_H
