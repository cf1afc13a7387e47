//===- codegen/runtime/CudaDriver.cpp - CUDA driver API via dlopen --------===//
//
// Part of idxmap. Loads libcuda.so.1 at run time and wraps the handful of
// driver calls idxmap needs. The library is never dlclose'd: the driver
// installs exit handlers of its own.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace idxmap;
using namespace idxmap::runtime;

namespace {

DriverError makeError(DriverErrorKind Kind, int Code, std::string Message) {
  return DriverError{Kind, Code, std::move(Message)};
}

/// Looks up \p Names in order and stores the first one found in \p Slot.
/// Returns false when none exists.
template <typename FnPtr>
bool resolve(void *Lib, FnPtr &Slot, std::initializer_list<const char *> Names,
             std::string &Missing) {
  for (const char *Name : Names)
    if (void *Sym = dlsym(Lib, Name)) {
      Slot = reinterpret_cast<FnPtr>(Sym);
      return true;
    }
  Missing = *Names.begin();
  return false;
}

/// Fills \p A from \p Lib; on a missing entry names it in \p Missing.
bool resolveAll(void *Lib, CudaDriver::Api &A, std::string &Missing) {
  return resolve(Lib, A.Init, {"cuInit"}, Missing) &&
         resolve(Lib, A.DriverGetVersion, {"cuDriverGetVersion"}, Missing) &&
         resolve(Lib, A.GetErrorName, {"cuGetErrorName"}, Missing) &&
         resolve(Lib, A.GetErrorString, {"cuGetErrorString"}, Missing) &&
         resolve(Lib, A.DeviceGetCount, {"cuDeviceGetCount"}, Missing) &&
         resolve(Lib, A.DeviceGet, {"cuDeviceGet"}, Missing) &&
         resolve(Lib, A.DeviceGetName, {"cuDeviceGetName"}, Missing) &&
         resolve(Lib, A.DeviceGetAttribute, {"cuDeviceGetAttribute"},
                 Missing) &&
         resolve(Lib, A.DeviceTotalMem, {"cuDeviceTotalMem_v2"}, Missing) &&
         resolve(Lib, A.DevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"},
                 Missing) &&
         resolve(Lib, A.DevicePrimaryCtxRelease,
                 {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
                 Missing) &&
         resolve(Lib, A.CtxSetCurrent, {"cuCtxSetCurrent"}, Missing) &&
         resolve(Lib, A.CtxSynchronize, {"cuCtxSynchronize"}, Missing) &&
         resolve(Lib, A.ModuleLoadDataEx, {"cuModuleLoadDataEx"}, Missing) &&
         resolve(Lib, A.ModuleUnload, {"cuModuleUnload"}, Missing) &&
         resolve(Lib, A.ModuleGetFunction, {"cuModuleGetFunction"}, Missing) &&
         resolve(Lib, A.FuncGetAttribute, {"cuFuncGetAttribute"}, Missing) &&
         resolve(Lib, A.FuncSetAttribute, {"cuFuncSetAttribute"}, Missing) &&
         resolve(Lib, A.MemAlloc, {"cuMemAlloc_v2"}, Missing) &&
         resolve(Lib, A.MemFree, {"cuMemFree_v2"}, Missing) &&
         resolve(Lib, A.MemcpyHtoD, {"cuMemcpyHtoD_v2"}, Missing) &&
         resolve(Lib, A.MemcpyDtoH, {"cuMemcpyDtoH_v2"}, Missing) &&
         resolve(Lib, A.MemsetD8, {"cuMemsetD8_v2"}, Missing) &&
         resolve(Lib, A.LaunchKernel, {"cuLaunchKernel"}, Missing) &&
         resolve(Lib, A.EventCreate, {"cuEventCreate"}, Missing) &&
         resolve(Lib, A.EventDestroy, {"cuEventDestroy_v2"}, Missing) &&
         resolve(Lib, A.EventRecord, {"cuEventRecord"}, Missing) &&
         resolve(Lib, A.EventSynchronize, {"cuEventSynchronize"}, Missing) &&
         resolve(Lib, A.EventElapsedTime,
                 {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, Missing);
}

/// The driver library to open (see CudaDriver::OpenOptions::LibraryPath).
std::string libraryPath(const std::string &Requested) {
  if (!Requested.empty())
    return Requested;
  return "libcuda.so.1";
}

/// The text after \p Directive on its line, trimmed ("8.5" for ".version").
std::string directiveValue(std::string_view Ptx, std::string_view Directive) {
  size_t Pos = 0;
  while ((Pos = Ptx.find(Directive, Pos)) != std::string_view::npos) {
    bool AtLineStart = Pos == 0 || Ptx[Pos - 1] == '\n' ||
                       Ptx[Pos - 1] == ' ' || Ptx[Pos - 1] == '\t';
    size_t After = Pos + Directive.size();
    if (AtLineStart && After < Ptx.size() &&
        (Ptx[After] == ' ' || Ptx[After] == '\t')) {
      size_t End = Ptx.find_first_of("\r\n", After);
      std::string_view Value =
          Ptx.substr(After, End == std::string_view::npos ? Ptx.size() - After
                                                          : End - After);
      size_t First = Value.find_first_not_of(" \t");
      size_t Last = Value.find_last_not_of(" \t");
      if (First == std::string_view::npos)
        return "?";
      Value = Value.substr(First, Last - First + 1);
      if (size_t Comment = Value.find("//"); Comment != std::string_view::npos)
        Value = Value.substr(0, Value.find_last_not_of(" \t", Comment - 1) + 1);
      return std::string(Value);
    }
    Pos = After;
  }
  return "?";
}

/// Keeps the first \p N bytes of a C string buffer up to its terminator.
std::string logText(const std::vector<char> &Buffer, size_t Reported) {
  size_t N = std::min(Reported, Buffer.size());
  std::string S(Buffer.data(), strnlen(Buffer.data(), N));
  while (!S.empty() && (S.back() == '\n' || S.back() == '\0'))
    S.pop_back();
  return S;
}

} // namespace

//===----------------------------------------------------------------------===//
// Free helpers
//===----------------------------------------------------------------------===//

std::string runtime::describePtxHeader(std::string_view Ptx) {
  return ".version " + directiveValue(Ptx, ".version") + ", .target " +
         directiveValue(Ptx, ".target");
}

std::string runtime::formatDriverVersion(int Version) {
  return std::to_string(Version / 1000) + "." +
         std::to_string((Version % 1000) / 10);
}

double runtime::median(std::vector<double> Values) {
  if (Values.empty())
    return 0;
  size_t Mid = Values.size() / 2;
  std::nth_element(Values.begin(), Values.begin() + Mid, Values.end());
  double Upper = Values[Mid];
  if (Values.size() % 2 == 1)
    return Upper;
  double Lower = *std::max_element(Values.begin(), Values.begin() + Mid);
  return (Lower + Upper) / 2;
}

//===----------------------------------------------------------------------===//
// CudaDriver
//===----------------------------------------------------------------------===//

namespace {

/// Names of the results idxmap is likely to meet, for drivers (the toolkit's
/// stub, a broken install) whose cuGetErrorName itself fails.
const char *knownResultName(int Code) {
  switch (Code) {
  case 1:
    return "CUDA_ERROR_INVALID_VALUE";
  case 2:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case 3:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case 34:
    return "CUDA_ERROR_STUB_LIBRARY";
  case 46:
    return "CUDA_ERROR_DEVICE_UNAVAILABLE";
  case 100:
    return "CUDA_ERROR_NO_DEVICE";
  case 200:
    return "CUDA_ERROR_INVALID_IMAGE";
  case 209:
    return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case 218:
    return "CUDA_ERROR_INVALID_PTX";
  case 221:
    return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND";
  case 222:
    return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case 304:
    return "CUDA_ERROR_OPERATING_SYSTEM";
  case 400:
    return "CUDA_ERROR_INVALID_HANDLE";
  case 500:
    return "CUDA_ERROR_NOT_FOUND";
  case 700:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case 701:
    return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case 719:
    return "CUDA_ERROR_LAUNCH_FAILED";
  case 803:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case 804:
    return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
  case 999:
    return "CUDA_ERROR_UNKNOWN";
  default:
    return nullptr;
  }
}

} // namespace

std::string CudaDriver::describeResult(int Code) const {
  const char *Name = nullptr;
  const char *Text = nullptr;
  if (Fns && Fns->GetErrorName(Code, &Name) != cu::Success)
    Name = nullptr;
  if (Fns && Fns->GetErrorString(Code, &Text) != cu::Success)
    Text = nullptr;
  if (!Name)
    Name = knownResultName(Code);
  std::string S = Name ? Name : "CUDA error";
  S += " (" + std::to_string(Code) + ")";
  if (Text)
    S += std::string(": ") + Text;
  return S;
}

DriverError CudaDriver::callError(const char *Call, int Code) const {
  return makeError(DriverErrorKind::CudaError, Code,
                   std::string(Call) + " failed: " + describeResult(Code));
}

DriverResult<std::unique_ptr<CudaDriver>> CudaDriver::open(OpenOptions Opts) {
  std::string Path = Opts.Backend ? std::string("the host simulator")
                                  : libraryPath(Opts.LibraryPath);
  std::unique_ptr<CudaDriver> D(new CudaDriver());
  D->Fns = std::make_unique<Api>();
  Api &A = *D->Fns;
  if (Opts.Backend) {
    A = *Opts.Backend;
  } else {
    void *Lib = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Lib) {
      const char *Why = dlerror();
      return makeError(DriverErrorKind::NoDriver, 0,
                       "no CUDA driver: cannot load " + Path + " (" +
                           (Why ? Why : "unknown reason") + ")");
    }
    std::string Missing;
    if (!resolveAll(Lib, A, Missing))
      return makeError(DriverErrorKind::NoDriver, 0,
                       "no CUDA driver: " + Path + " has no " + Missing +
                           " (driver too old, or not a CUDA driver)");
  }

  if (cu::Result R = A.Init(0); R != cu::Success) {
    if (R == cu::ErrorStubLibrary)
      return makeError(DriverErrorKind::NoDriver, R,
                       "no CUDA driver: " + Path +
                           " is the CUDA toolkit's stub library (" +
                           D->describeResult(R) + ")");
    return makeError(DriverErrorKind::NoDevice, R,
                     "no CUDA device: cuInit failed: " + D->describeResult(R));
  }
  if (A.DriverGetVersion(&D->Info.DriverVersion) != cu::Success)
    D->Info.DriverVersion = 0;
  int Count = 0;
  if (cu::Result R = A.DeviceGetCount(&Count); R != cu::Success)
    return makeError(DriverErrorKind::NoDevice, R,
                     "no CUDA device: " + D->describeResult(R));
  if (Opts.Device < 0 || Opts.Device >= Count)
    return makeError(DriverErrorKind::NoDevice, cu::ErrorNoDevice,
                     "no CUDA device " + std::to_string(Opts.Device) + " (" +
                         std::to_string(Count) + " found)");
  cu::Device Dev = 0;
  if (cu::Result R = A.DeviceGet(&Dev, Opts.Device); R != cu::Success)
    return D->callError("cuDeviceGet", R);
  D->Device = Dev;
  cu::Context Ctx = nullptr;
  if (cu::Result R = A.DevicePrimaryCtxRetain(&Ctx, Dev); R != cu::Success)
    return D->callError("cuDevicePrimaryCtxRetain", R);
  D->Context = Ctx;
  if (cu::Result R = A.CtxSetCurrent(Ctx); R != cu::Success)
    return D->callError("cuCtxSetCurrent", R);

  DeviceInfo &I = D->Info;
  I.Ordinal = Opts.Device;
  char Name[256] = {0};
  if (A.DeviceGetName(Name, sizeof(Name) - 1, Dev) == cu::Success)
    I.Name = Name;
  std::pair<int, int *> Attrs[] = {
      {cu::AttrComputeCapabilityMajor, &I.CcMajor},
      {cu::AttrComputeCapabilityMinor, &I.CcMinor},
      {cu::AttrMultiprocessorCount, &I.SmCount},
      {cu::AttrL2CacheSize, &I.L2CacheBytes},
      {cu::AttrMaxSharedMemoryPerBlockOptin, &I.MaxSharedPerBlockOptin},
      {cu::AttrMaxThreadsPerMultiprocessor, &I.MaxThreadsPerSm},
      {cu::AttrMemoryClockRate, &I.MemoryClockKHz},
      {cu::AttrGlobalMemoryBusWidth, &I.MemoryBusWidthBits},
  };
  for (auto &[Attr, Slot] : Attrs)
    if (cu::Result R = A.DeviceGetAttribute(Slot, Attr, Dev); R != cu::Success)
      return D->callError("cuDeviceGetAttribute", R);
  // For the device model: an attribute the driver lacks stays 0 (the
  // model keeps its preset's value).
  std::pair<int, int *> ModelAttrs[] = {
      {cu::AttrWarpSize, &I.WarpSize},
      {cu::AttrMaxThreadsPerBlock, &I.MaxThreadsPerBlock},
      {cu::AttrMaxBlocksPerMultiprocessor, &I.MaxBlocksPerSm},
      {cu::AttrMaxBlockDimX, &I.MaxBlock[0]},
      {cu::AttrMaxBlockDimX + 1, &I.MaxBlock[1]},
      {cu::AttrMaxBlockDimX + 2, &I.MaxBlock[2]},
      {cu::AttrMaxGridDimX, &I.MaxGrid[0]},
      {cu::AttrMaxGridDimX + 1, &I.MaxGrid[1]},
      {cu::AttrMaxGridDimX + 2, &I.MaxGrid[2]},
      {cu::AttrMaxSharedMemoryPerBlock, &I.MaxSharedPerBlock},
      {cu::AttrMaxSharedMemoryPerMultiprocessor, &I.MaxSharedPerSm},
      {cu::AttrMaxRegistersPerBlock, &I.RegistersPerBlock},
      {cu::AttrMaxRegistersPerMultiprocessor, &I.RegistersPerSm},
      {cu::AttrClockRate, &I.ClockKHz},
  };
  for (auto &[Attr, Slot] : ModelAttrs)
    if (A.DeviceGetAttribute(Slot, Attr, Dev) != cu::Success)
      *Slot = 0;
  size_t Total = 0;
  if (A.DeviceTotalMem(&Total, Dev) == cu::Success)
    I.TotalMemoryBytes = Total;
  return D;
}

DeviceModel runtime::deviceModelFromDriver(const DeviceInfo &I) {
  DeviceModel D = defaultDeviceModel(I.smName());
  D.Name = I.Name.empty() ? I.smName() : I.Name;
  // Attributes of 0 were not given: the preset's value stays.
  auto Set = [](int64_t &Field, int V) {
    if (V > 0)
      Field = V;
  };
  Set(D.SmCount, I.SmCount);
  Set(D.WarpSize, I.WarpSize);
  Set(D.MaxThreadsPerBlock, I.MaxThreadsPerBlock);
  Set(D.MaxThreadsPerSm, I.MaxThreadsPerSm);
  Set(D.MaxBlocksPerSm, I.MaxBlocksPerSm);
  for (int K = 0; K < 3; ++K) {
    Set(D.MaxGrid[K], I.MaxGrid[K]);
    Set(D.MaxBlock[K], I.MaxBlock[K]);
  }
  Set(D.StaticSharedBytesPerBlock, I.MaxSharedPerBlock);
  Set(D.SharedBytesPerBlock, I.MaxSharedPerBlockOptin);
  Set(D.SharedBytesPerSm, I.MaxSharedPerSm);
  Set(D.RegistersPerBlock, I.RegistersPerBlock);
  Set(D.RegistersPerSm, I.RegistersPerSm);
  Set(D.L2Bytes, I.L2CacheBytes);
  Set(D.SmClockKHz, I.ClockKHz);
  if (I.MemoryClockKHz > 0 && I.MemoryBusWidthBits > 0)
    D.DramBytesPerSecond =
        2.0 * I.MemoryClockKHz * 1000.0 * (I.MemoryBusWidthBits / 8.0);
  return D;
}

CudaDriver::~CudaDriver() {
  if (Fns && Context)
    Fns->DevicePrimaryCtxRelease(Device);
}

DriverResult<GpuModule> CudaDriver::loadPtx(std::string_view Ptx,
                                            bool Verbose) {
  // The JIT reads a NUL-terminated image.
  std::string Image(Ptx);
  std::vector<char> ErrorLog(64 * 1024, 0), InfoLog(64 * 1024, 0);
  int Options[] = {cu::JitErrorLogBuffer, cu::JitErrorLogBufferSizeBytes,
                   cu::JitInfoLogBuffer, cu::JitInfoLogBufferSizeBytes,
                   cu::JitLogVerbose};
  void *Values[] = {
      ErrorLog.data(),
      reinterpret_cast<void *>(static_cast<uintptr_t>(ErrorLog.size() - 1)),
      InfoLog.data(),
      reinterpret_cast<void *>(static_cast<uintptr_t>(InfoLog.size() - 1)),
      reinterpret_cast<void *>(static_cast<uintptr_t>(Verbose ? 1 : 0))};
  cu::Module Mod = nullptr;
  cu::Result R = Fns->ModuleLoadDataEx(&Mod, Image.c_str(), 5, Options, Values);
  // The size options now hold the log lengths actually written.
  size_t ErrorLen = static_cast<size_t>(reinterpret_cast<uintptr_t>(Values[1]));
  size_t InfoLen = static_cast<size_t>(reinterpret_cast<uintptr_t>(Values[3]));
  if (R != cu::Success) {
    std::string Log = logText(ErrorLog, ErrorLen);
    std::string Msg = "cuModuleLoadDataEx failed: " + describeResult(R);
    Msg += "\nJIT error log:";
    Msg += Log.empty() ? std::string(" (empty)") : "\n" + Log;
    Msg += "\nPTX: " + describePtxHeader(Ptx) + "; driver: CUDA " +
           formatDriverVersion(Info.DriverVersion) + " (" +
           std::to_string(Info.DriverVersion) + "); device: " + Info.Name +
           " (" + Info.smName() + ")";
    return makeError(DriverErrorKind::JitFailed, R, std::move(Msg));
  }
  return GpuModule(this, Mod, logText(InfoLog, InfoLen));
}

DriverResult<KernelAttributes> CudaDriver::getAttributes(const GpuKernel &K) {
  KernelAttributes Attrs;
  auto *F = static_cast<cu::Function>(K.handle());
  std::pair<int, int *> Queries[] = {
      {cu::FuncAttrNumRegs, &Attrs.NumRegisters},
      {cu::FuncAttrLocalSizeBytes, &Attrs.LocalBytes},
      {cu::FuncAttrSharedSizeBytes, &Attrs.StaticSharedBytes},
      {cu::FuncAttrMaxThreadsPerBlock, &Attrs.MaxThreadsPerBlock},
  };
  for (auto &[Attr, Slot] : Queries)
    if (cu::Result R = Fns->FuncGetAttribute(Slot, Attr, F); R != cu::Success)
      return callError("cuFuncGetAttribute", R);
  return Attrs;
}

DriverStatus CudaDriver::setMaxDynamicSharedBytes(const GpuKernel &K,
                                                  int Bytes) {
  cu::Result R =
      Fns->FuncSetAttribute(static_cast<cu::Function>(K.handle()),
                            cu::FuncAttrMaxDynamicSharedSizeBytes, Bytes);
  if (R != cu::Success)
    return callError("cuFuncSetAttribute", R);
  return {};
}

DriverResult<DeviceBuffer> CudaDriver::alloc(std::size_t Bytes) {
  cu::DevicePtr P = 0;
  // cuMemAlloc rejects 0 bytes; keep a valid (never dereferenced) address.
  // Whole 4-byte words, as the kernel contract asks (a scatter of 1-byte
  // elements updates the aligned word holding its element).
  if (cu::Result R = Fns->MemAlloc(&P, Bytes == 0 ? 4 : (Bytes + 3) / 4 * 4);
      R != cu::Success)
    return callError(
        ("cuMemAlloc(" + std::to_string(Bytes) + " bytes)").c_str(), R);
  return DeviceBuffer(this, P, Bytes);
}

DriverStatus CudaDriver::copyToDevice(const DeviceBuffer &Dst, const void *Src,
                                      std::size_t Bytes,
                                      std::size_t DstOffset) {
  assert(DstOffset + Bytes <= Dst.size() && "copy past the buffer's end");
  if (Bytes == 0)
    return {};
  if (cu::Result R = Fns->MemcpyHtoD(Dst.ptr() + DstOffset, Src, Bytes);
      R != cu::Success)
    return callError("cuMemcpyHtoD", R);
  return {};
}

DriverStatus CudaDriver::copyToHost(void *Dst, const DeviceBuffer &Src,
                                    std::size_t Bytes, std::size_t SrcOffset) {
  assert(SrcOffset + Bytes <= Src.size() && "copy past the buffer's end");
  if (Bytes == 0)
    return {};
  if (cu::Result R = Fns->MemcpyDtoH(Dst, Src.ptr() + SrcOffset, Bytes);
      R != cu::Success)
    return callError("cuMemcpyDtoH", R);
  return {};
}

DriverStatus CudaDriver::fill(const DeviceBuffer &Dst, std::uint8_t Value) {
  if (Dst.size() == 0)
    return {};
  if (cu::Result R = Fns->MemsetD8(Dst.ptr(), Value, Dst.size());
      R != cu::Success)
    return callError("cuMemsetD8", R);
  return {};
}

DriverStatus CudaDriver::launch(const GpuKernel &K, const LaunchDims &Dims,
                                void **Args) {
  cu::Result R = Fns->LaunchKernel(
      static_cast<cu::Function>(K.handle()), Dims.Grid[0], Dims.Grid[1],
      Dims.Grid[2], Dims.Block[0], Dims.Block[1], Dims.Block[2],
      Dims.DynamicSharedBytes, nullptr, Args, nullptr);
  if (R != cu::Success)
    return callError(("cuLaunchKernel(" + K.name() + ")").c_str(), R);
  return {};
}

DriverStatus CudaDriver::synchronize() {
  if (cu::Result R = Fns->CtxSynchronize(); R != cu::Success)
    return callError("cuCtxSynchronize", R);
  return {};
}

DriverResult<std::vector<double>> CudaDriver::timeLaunches(
    const std::function<DriverStatus(unsigned Rep)> &Launch, unsigned Warmup,
    unsigned Reps) {
  for (unsigned I = 0; I < Warmup; ++I)
    if (DriverStatus S = Launch(I); !S)
      return S.error();
  std::vector<cu::Event> Events(2 * size_t(Reps), nullptr);
  auto DestroyEvents = [&] {
    for (cu::Event E : Events)
      if (E)
        Fns->EventDestroy(E);
  };
  DriverResult<std::vector<double>> Result =
      [&]() -> DriverResult<std::vector<double>> {
    for (cu::Event &E : Events)
      if (cu::Result R = Fns->EventCreate(&E, 0); R != cu::Success)
        return callError("cuEventCreate", R);
    for (unsigned I = 0; I < Reps; ++I) {
      if (cu::Result R = Fns->EventRecord(Events[2 * I], nullptr);
          R != cu::Success)
        return callError("cuEventRecord", R);
      if (DriverStatus S = Launch(Warmup + I); !S)
        return S.error();
      if (cu::Result R = Fns->EventRecord(Events[2 * I + 1], nullptr);
          R != cu::Success)
        return callError("cuEventRecord", R);
    }
    std::vector<double> Micros;
    for (unsigned I = 0; I < Reps; ++I) {
      if (cu::Result R = Fns->EventSynchronize(Events[2 * I + 1]);
          R != cu::Success)
        return callError("cuEventSynchronize", R);
      float Ms = 0;
      if (cu::Result R =
              Fns->EventElapsedTime(&Ms, Events[2 * I], Events[2 * I + 1]);
          R != cu::Success)
        return callError("cuEventElapsedTime", R);
      Micros.push_back(double(Ms) * 1000.0);
    }
    return Micros;
  }();
  DestroyEvents();
  return Result;
}

//===----------------------------------------------------------------------===//
// GpuModule and DeviceBuffer
//===----------------------------------------------------------------------===//

GpuModule::GpuModule(GpuModule &&O) noexcept
    : Driver(O.Driver), Handle(O.Handle), InfoLog(std::move(O.InfoLog)) {
  O.Handle = nullptr;
}

GpuModule &GpuModule::operator=(GpuModule &&O) noexcept {
  if (this != &O) {
    if (Handle)
      Driver->Fns->ModuleUnload(static_cast<cu::Module>(Handle));
    Driver = O.Driver;
    Handle = O.Handle;
    InfoLog = std::move(O.InfoLog);
    O.Handle = nullptr;
  }
  return *this;
}

GpuModule::~GpuModule() {
  if (Handle)
    Driver->Fns->ModuleUnload(static_cast<cu::Module>(Handle));
}

DriverResult<GpuKernel> GpuModule::getKernel(const std::string &Name) const {
  cu::Function F = nullptr;
  cu::Result R = Driver->Fns->ModuleGetFunction(
      &F, static_cast<cu::Module>(Handle), Name.c_str());
  if (R == cu::ErrorNotFound)
    return makeError(DriverErrorKind::KernelNotFound, R,
                     "no kernel '" + Name + "' in the loaded PTX");
  if (R != cu::Success)
    return Driver->callError("cuModuleGetFunction", R);
  return GpuKernel(F, Name);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&O) noexcept
    : Driver(O.Driver), Ptr(O.Ptr), Size(O.Size) {
  O.Ptr = 0;
  O.Size = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&O) noexcept {
  if (this != &O) {
    reset();
    Driver = O.Driver;
    Ptr = O.Ptr;
    Size = O.Size;
    O.Ptr = 0;
    O.Size = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (Ptr)
    Driver->Fns->MemFree(Ptr);
  Ptr = 0;
  Size = 0;
}
