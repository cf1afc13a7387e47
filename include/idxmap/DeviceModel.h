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
  int64_t RegistersPerSm = 65536;
  int64_t L2Bytes = 0;
  /// DRAM bandwidth in bytes per second.
  double DramBytesPerSecond = 0;
  /// Bytes of kernel parameters one launch may pass. 4,096 bytes is the
  /// limit of every driver and PTX version (CUDA 12.1+ drivers raise it to
  /// 32,764 bytes on sm_70+ for PTX 8.1+; idxmap keeps the portable one).
  int64_t MaxKernelParamBytes = 4096;
};

/// The preset named \p Name ("A100", "H100", "H200"; case-insensitive), or
/// nothing.
///
/// Example: `lookupDeviceModel("h100")->SharedBytesPerBlock == 232448`;
/// `lookupDeviceModel("V100")` is empty.
std::optional<DeviceModel> lookupDeviceModel(std::string_view Name);

/// The names lookupDeviceModel accepts, in order: {"A100", "H100", "H200"}.
std::vector<std::string> deviceModelNames();

/// The preset that emission assumes for a target GPU when the caller names
/// no device: "A100" for sm_80, "H100" for sm_90 and sm_90a (H200 has the
/// same launch limits), "H100" for anything else.
///
/// Example: `defaultDeviceModel("sm_80").SmCount == 108`.
DeviceModel defaultDeviceModel(std::string_view Gpu);

/// Checks a launch shape against \p D: each grid and block dimension at
/// least 1 and within its limit, the block's threads within
/// MaxThreadsPerBlock, \p SharedBytes (static) within
/// StaticSharedBytesPerBlock. Returns
/// nothing when it fits, else the reason.
///
/// Example: `checkLaunch(H100, {int64_t(1) << 31, 1, 1}, {128, 1, 1}, 0)` is
/// "grid.x = 2147483648 exceeds the H100 limit 2147483647".
std::optional<std::string> checkLaunch(const DeviceModel &D,
                                       const int64_t (&Grid)[3],
                                       const int64_t (&Block)[3],
                                       int64_t SharedBytes);

} // namespace idxmap

#endif // IDXMAP_DEVICEMODEL_H
