//===- idxmap/DeviceModel.h - What a GPU allows a kernel -------*- C++ -*-===//
//
// Part of idxmap. The hardware limits and sizes of one GPU model that
// kernel emission checks launches against (grid, block, shared memory,
// parameter space), with presets for the GPUs idxmap targets. A plain
// struct: a caller may fill one from the CUDA driver's attributes. No LLVM
// here.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_DEVICEMODEL_H
#define IDXMAP_DEVICEMODEL_H

#include "idxmap/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

/// Limits and sizes of one GPU model. The defaults are those that every
/// GPU of compute capability 7.0 to 9.0 shares.
///
/// Example:
/// \code
///   DeviceModel D = *lookupDeviceModel("H200");
///   // D.SmCount == 132, D.MaxGrid[0] == 2147483647, D.MaxGrid[1] == 65535
/// \endcode
struct DeviceModel {
  std::string Name;
  int64_t SmCount = 1;
  int64_t WarpSize = 32;
  int64_t MaxThreadsPerBlock = 1024;
  int64_t MaxThreadsPerSm = 2048;
  /// gridDim.x, .y, .z limits.
  int64_t MaxGrid[3] = {2147483647, 65535, 65535};
  /// blockDim.x, .y, .z limits (their product is also at most
  /// MaxThreadsPerBlock).
  int64_t MaxBlock[3] = {1024, 1024, 64};
  /// Statically allocated shared memory one block may use (the emitters'
  /// shared arrays are all static).
  int64_t StaticSharedBytesPerBlock = 48 * 1024;
  /// Shared memory one block may use with the opt-in attribute (dynamic
  /// shared memory), and one SM has.
  int64_t SharedBytesPerBlock = 48 * 1024;
  int64_t SharedBytesPerSm = 48 * 1024;
  /// 32-bit registers of one SM, and the most one block may use.
  int64_t RegistersPerSm = 65536;
  int64_t RegistersPerBlock = 65536;
  /// Resident blocks one SM holds at most (with MaxThreadsPerSm,
  /// RegistersPerSm and SharedBytesPerSm, what bounds occupancy).
  int64_t MaxBlocksPerSm = 32;
  int64_t L2Bytes = 0;
  /// DRAM bandwidth in bytes per second.
  double DramBytesPerSecond = 0;
  /// The SMs' maximum (boost) clock in kHz; 0 when unknown.
  int64_t SmClockKHz = 0;
  /// Bytes of kernel parameters one launch may pass. 4,096 bytes is the
  /// limit of every driver and PTX version (CUDA 12.1+ drivers raise it to
  /// 32,764 bytes on sm_70+ for PTX 8.1+; idxmap keeps the portable one).
  int64_t MaxKernelParamBytes = 4096;
};

/// Blocks of \p ThreadsPerBlock threads resident at once on \p D (a wave):
/// SmCount x the fewest per SM that its threads and block slots allow, and,
/// when given, its shared memory (\p SharedBytes per block) and registers
/// (\p Registers per thread; otherwise the kernel's, known after ptxas);
/// at least one block per SM.
///
/// Example: on the H100 (132 SMs, 2048 threads per SM), 1056 blocks of 256
/// threads are one wave (132 x 8); with 66 KiB of shared memory per block
/// (228 KiB per SM) and 80 registers a thread, 396 (132 x 3).
int64_t residentBlocks(const DeviceModel &D, int64_t ThreadsPerBlock,
                       int64_t SharedBytes = 0, int64_t Registers = 0);

/// The preset named \p Name ("A100", "H100", "H200"; case-insensitive), or
/// nothing.
///
/// Example: `lookupDeviceModel("h100")->SharedBytesPerBlock == 232448`;
/// `lookupDeviceModel("V100")` is empty.
std::optional<DeviceModel> lookupDeviceModel(std::string_view Name);

/// The names lookupDeviceModel accepts, in order: {"A100", "H100", "H200"}.
std::vector<std::string> deviceModelNames();

/// Reads a device model from JSON: an object with "name" (a string) and any
/// of the fields below, the others keeping the defaults of "base" (a preset
/// name) or, without one, of DeviceModel{}:
///   sm_count, warp_size, max_threads_per_block, max_threads_per_sm,
///   max_blocks_per_sm, registers_per_sm, registers_per_block,
///   static_shared_bytes_per_block, shared_bytes_per_block,
///   shared_bytes_per_sm, l2_bytes, sm_clock_khz, max_kernel_param_bytes
///   (whole numbers), max_grid, max_block (3 whole numbers each),
///   dram_bytes_per_second (a number; 3.35e12).
/// An unknown field, a missing name, a value of the wrong type or out of
/// range is an error located in \p Text (file \p File, line and column).
///
/// Example:
/// \code
///   auto D = deviceModelFromJson(
///       R"({"name": "H100-PCIe", "base": "H100", "sm_count": 114,
///           "dram_bytes_per_second": 2.0e12})", "h100pcie.json");
///   // D->SmCount == 114, D->L2Bytes == 50 MiB (from the H100 preset)
/// \endcode
Expected<DeviceModel> deviceModelFromJson(std::string_view Text,
                                          const std::string &File);

/// Every field of \p D as the JSON deviceModelFromJson reads (one field
/// per line, in the order listed there).
std::string deviceModelToJson(const DeviceModel &D);

/// The preset that emission assumes for a target GPU when the caller names
/// no device: "A100" for sm_80, "H100" for sm_90 and sm_90a (H200 has the
/// same launch limits), "H100" for anything else.
///
/// Example: `defaultDeviceModel("sm_80").SmCount == 108`.
DeviceModel defaultDeviceModel(std::string_view Gpu);

/// Checks a launch shape against \p D: each grid and block dimension at
/// least 1 and within its limit, the block's threads within
/// MaxThreadsPerBlock, \p SharedBytes (static) within
/// StaticSharedBytesPerBlock and with \p DynamicSharedBytes within
/// SharedBytesPerBlock. Returns nothing when it fits, else the reason.
///
/// Example: `checkLaunch(H100, {int64_t(1) << 31, 1, 1}, {128, 1, 1}, 0)` is
/// "grid.x = 2147483648 exceeds the H100 limit 2147483647".
std::optional<std::string> checkLaunch(const DeviceModel &D,
                                       const int64_t (&Grid)[3],
                                       const int64_t (&Block)[3],
                                       int64_t SharedBytes,
                                       int64_t DynamicSharedBytes = 0);

} // namespace idxmap

#endif // IDXMAP_DEVICEMODEL_H
