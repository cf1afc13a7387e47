//===- DeviceModel.cpp - What a GPU allows a kernel -----------------------===//
//
// Part of idxmap. Presets of the SXM parts, from NVIDIA's data sheets and
// whitepapers, and the CUDA C++ Programming Guide's table "Technical
// Specifications per Compute Capability" (8.0 and 9.0: 2048 threads, 32
// blocks and 64K 32-bit registers per SM, 64K registers and 1024 threads
// per block, 255 registers per thread). A reader of device model files.
//
//===----------------------------------------------------------------------===//
#include "idxmap/DeviceModel.h"
#include "JsonReader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace idxmap {

/// H100 SXM5 and H200 SXM (the same GH100 configuration; NVIDIA H100
/// Tensor Core GPU Architecture whitepaper, H100/H200 data sheets): 132 SMs,
/// 228 KB of shared memory per SM of which 227 KB for one block, 50 MB of
/// L2, boost clock 1.98 GHz. DRAM: H100 80 GB HBM3 3.35 TB/s, H200 141 GB
/// HBM3e 4.8 TB/s.
static DeviceModel hopper(std::string Name, double DramBytesPerSecond) {
  DeviceModel D;
  D.Name = std::move(Name);
  D.SmCount = 132;
  D.SharedBytesPerBlock = 227 * 1024;
  D.SharedBytesPerSm = 228 * 1024;
  D.L2Bytes = 50 * 1024 * 1024;
  D.DramBytesPerSecond = DramBytesPerSecond;
  D.SmClockKHz = 1980000;
  return D;
}

/// A100 SXM4 80 GB (NVIDIA A100 Tensor Core GPU Architecture whitepaper,
/// A100 data sheet): 108 SMs, 164 KB of shared memory per SM of which
/// 163 KB for one block, 40 MB of L2, HBM2e at 2.039 TB/s, boost clock
/// 1.41 GHz.
static DeviceModel a100() {
  DeviceModel D;
  D.Name = "A100";
  D.SmCount = 108;
  D.SharedBytesPerBlock = 163 * 1024;
  D.SharedBytesPerSm = 164 * 1024;
  D.L2Bytes = 40 * 1024 * 1024;
  D.DramBytesPerSecond = 2.039e12;
  D.SmClockKHz = 1410000;
  return D;
}

int64_t residentBlocks(const DeviceModel &D, int64_t ThreadsPerBlock,
                       int64_t SharedBytes, int64_t Registers) {
  int64_t PerSm = ThreadsPerBlock > 0 ? D.MaxThreadsPerSm / ThreadsPerBlock : 0;
  PerSm = std::min(D.MaxBlocksPerSm, PerSm);
  if (SharedBytes > 0)
    PerSm = std::min(PerSm, D.SharedBytesPerSm / SharedBytes);
  if (Registers > 0 && ThreadsPerBlock > 0)
    PerSm = std::min(PerSm, D.RegistersPerSm / (Registers * ThreadsPerBlock));
  return D.SmCount * std::max<int64_t>(1, PerSm);
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

namespace {

/// The whole-number fields of a device model file, in file order.
struct IntField {
  const char *Key;
  int64_t DeviceModel::*Member;
  int64_t Lo, Hi;
};

const std::vector<IntField> &intFields() {
  constexpr int64_t G = int64_t(1) << 30;
  static const std::vector<IntField> Fields = {
      {"sm_count", &DeviceModel::SmCount, 1, 1 << 16},
      {"warp_size", &DeviceModel::WarpSize, 1, 1024},
      {"max_threads_per_block", &DeviceModel::MaxThreadsPerBlock, 1, 1 << 16},
      {"max_threads_per_sm", &DeviceModel::MaxThreadsPerSm, 1, 1 << 20},
      {"max_blocks_per_sm", &DeviceModel::MaxBlocksPerSm, 1, 1 << 16},
      {"registers_per_sm", &DeviceModel::RegistersPerSm, 1, G},
      {"registers_per_block", &DeviceModel::RegistersPerBlock, 1, G},
      {"static_shared_bytes_per_block", &DeviceModel::StaticSharedBytesPerBlock,
       0, G},
      {"shared_bytes_per_block", &DeviceModel::SharedBytesPerBlock, 0, G},
      {"shared_bytes_per_sm", &DeviceModel::SharedBytesPerSm, 0, G},
      {"l2_bytes", &DeviceModel::L2Bytes, 0, int64_t(1) << 40},
      {"sm_clock_khz", &DeviceModel::SmClockKHz, 0, int64_t(1) << 32},
      {"max_kernel_param_bytes", &DeviceModel::MaxKernelParamBytes, 0, G},
  };
  return Fields;
}

const char *const DimKeys[2] = {"max_grid", "max_block"};

std::string fieldList() {
  std::string L = "name, base";
  for (const IntField &F : intFields())
    L += std::string(", ") + F.Key;
  return L + ", max_grid, max_block, dram_bytes_per_second";
}

} // namespace

Expected<DeviceModel> deviceModelFromJson(std::string_view Text,
                                          const std::string &File) {
  JsonReader R(Text, File, /*AllowReals=*/true);
  auto Root = R.parse();
  if (!Root)
    return Root.error();
  auto Fail = [&](const JValue &At, const std::string &M) {
    return makeDiagnostic(Text, At.Offset, M, File);
  };
  if (Root->K != JValue::Obj)
    return Fail(*Root, "a device model is a JSON object");
  DeviceModel D;
  if (auto It = Root->O.find("base"); It != Root->O.end()) {
    std::optional<DeviceModel> Base;
    if (It->second.K == JValue::Str)
      Base = lookupDeviceModel(It->second.S);
    if (!Base)
      return Fail(It->second, "'base' must name a preset (A100, H100, H200)");
    D = *Base;
  }
  auto Name = Root->O.find("name");
  if (Name == Root->O.end())
    return Fail(*Root, "missing field 'name'");
  if (Name->second.K != JValue::Str || Name->second.S.empty())
    return Fail(Name->second, "'name' must be a non-empty string");
  D.Name = Name->second.S;
  for (const auto &[Key, V] : Root->O) {
    if (Key == "name" || Key == "base")
      continue;
    const std::vector<IntField> &Fs = intFields();
    auto F = std::find_if(Fs.begin(), Fs.end(),
                          [&](const IntField &F) { return Key == F.Key; });
    if (F != Fs.end()) {
      if (V.K != JValue::Int || V.I < F->Lo || V.I > F->Hi)
        return Fail(V, "'" + Key + "' must be a whole number from " +
                           std::to_string(F->Lo) + " to " +
                           std::to_string(F->Hi));
      D.*(F->Member) = V.I;
      continue;
    }
    if (Key == DimKeys[0] || Key == DimKeys[1]) {
      bool Ok = V.K == JValue::Arr && V.A.size() == 3;
      for (size_t I = 0; Ok && I < 3; ++I)
        Ok = V.A[I].K == JValue::Int && V.A[I].I >= 1 && V.A[I].I <= INT32_MAX;
      if (!Ok)
        return Fail(V, "'" + Key + "' must be 3 whole numbers from 1 to " +
                           std::to_string(INT32_MAX));
      int64_t *Dst = Key == DimKeys[0] ? D.MaxGrid : D.MaxBlock;
      for (int I = 0; I < 3; ++I)
        Dst[I] = V.A[I].I;
      continue;
    }
    if (Key == "dram_bytes_per_second") {
      double X = V.K == JValue::Int ? double(V.I) : V.R;
      if ((V.K != JValue::Int && V.K != JValue::Real) || !(X >= 0) || X > 1e16)
        return Fail(V, "'dram_bytes_per_second' must be a number from 0 "
                       "(unknown) to 1e16 (bytes per second, e.g. 3.35e12)");
      D.DramBytesPerSecond = X;
      continue;
    }
    return Fail(V, "unknown field '" + Key + "' (fields: " + fieldList() + ")");
  }
  return D;
}

std::string deviceModelToJson(const DeviceModel &D) {
  std::string S = "{\"name\": \"";
  for (char C : D.Name)
    S += C == '"' || C == '\\' ? std::string("\\") + C : std::string(1, C);
  S += "\"";
  for (const IntField &F : intFields())
    S += std::string(",\n \"") + F.Key + "\": " + std::to_string(D.*(F.Member));
  for (int I = 0; I < 2; ++I) {
    const int64_t *V = I == 0 ? D.MaxGrid : D.MaxBlock;
    S += std::string(",\n \"") + DimKeys[I] + "\": [" + std::to_string(V[0]) +
         ", " + std::to_string(V[1]) + ", " + std::to_string(V[2]) + "]";
  }
  char Bw[32];
  std::snprintf(Bw, sizeof(Bw), "%.6g", D.DramBytesPerSecond);
  std::string BwText = Bw;
  return S + ",\n \"dram_bytes_per_second\": " + BwText + "}\n";
}

std::optional<std::string> checkLaunch(const DeviceModel &D,
                                       const int64_t (&Grid)[3],
                                       const int64_t (&Block)[3],
                                       int64_t SharedBytes,
                                       int64_t DynamicSharedBytes) {
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
  if (SharedBytes + DynamicSharedBytes > D.SharedBytesPerBlock)
    return Over("shared memory per block", SharedBytes + DynamicSharedBytes,
                D.SharedBytesPerBlock);
  return std::nullopt;
}

} // namespace idxmap
