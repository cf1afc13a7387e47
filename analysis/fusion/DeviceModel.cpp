//===- DeviceModel.cpp - What a GPU allows a kernel -----------------------===//
//
// Part of idxmap. Presets from NVIDIA's data sheets and the CUDA C++
// programming guide's table of compute-capability limits (SXM parts).
//
//===----------------------------------------------------------------------===//
#include "idxmap/DeviceModel.h"

#include <cctype>

namespace idxmap {

static DeviceModel hopper(std::string Name, double DramBytesPerSecond) {
  DeviceModel D;
  D.Name = std::move(Name);
  D.SmCount = 132;
  D.SharedBytesPerBlock = 227 * 1024;
  D.SharedBytesPerSm = 228 * 1024;
  D.L2Bytes = 50 * 1024 * 1024;
  D.DramBytesPerSecond = DramBytesPerSecond;
  return D;
}

static DeviceModel a100() {
  DeviceModel D;
  D.Name = "A100";
  D.SmCount = 108;
  D.SharedBytesPerBlock = 163 * 1024;
  D.SharedBytesPerSm = 164 * 1024;
  D.L2Bytes = 40 * 1024 * 1024;
  D.DramBytesPerSecond = 2.039e12; // A100-SXM4-80GB
  return D;
}

std::optional<DeviceModel> lookupDeviceModel(std::string_view Name) {
  std::string Upper;
  for (char C : Name)
    Upper += char(std::toupper(static_cast<unsigned char>(C)));
  if (Upper == "A100")
    return a100();
  if (Upper == "H100")
    return hopper("H100", 3.35e12);
  if (Upper == "H200")
    return hopper("H200", 4.8e12);
  return std::nullopt;
}

std::vector<std::string> deviceModelNames() { return {"A100", "H100", "H200"}; }

DeviceModel defaultDeviceModel(std::string_view Gpu) {
  return *lookupDeviceModel(Gpu == "sm_80" ? "A100" : "H100");
}

std::optional<std::string> checkLaunch(const DeviceModel &D,
                                       const int64_t (&Grid)[3],
                                       const int64_t (&Block)[3],
                                       int64_t SharedBytes) {
  static const char *Axis[3] = {"x", "y", "z"};
  auto Over = [&](const std::string &What, int64_t V, int64_t Limit) {
    return What + " = " + std::to_string(V) + " exceeds the " + D.Name +
           " limit " + std::to_string(Limit);
  };
  int64_t Threads = 1;
  for (int I = 0; I < 3; ++I) {
    if (Grid[I] < 1 || Block[I] < 1)
      return std::string("a launch dimension is below 1");
    if (Grid[I] > D.MaxGrid[I])
      return Over(std::string("grid.") + Axis[I], Grid[I], D.MaxGrid[I]);
    if (Block[I] > D.MaxBlock[I])
      return Over(std::string("block.") + Axis[I], Block[I], D.MaxBlock[I]);
    Threads *= Block[I]; // each factor is at most 1024: no overflow
  }
  if (Threads > D.MaxThreadsPerBlock)
    return Over("threads per block", Threads, D.MaxThreadsPerBlock);
  if (SharedBytes > D.StaticSharedBytesPerBlock)
    return Over("static shared memory per block", SharedBytes,
                D.StaticSharedBytesPerBlock);
  return std::nullopt;
}

} // namespace idxmap
