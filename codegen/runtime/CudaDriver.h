//===- codegen/runtime/CudaDriver.h - The driver API we resolve -*- C++ -*-===//
//
// Part of idxmap. The few CUDA driver types, constants and entry points the
// runtime uses, declared here so that nothing needs cuda.h: the values are
// the driver API's stable ABI (cuda.h, CUDA 13.0). Entry points are looked up
// by their versioned symbol names (cuMemAlloc_v2, ...), which is what cuda.h
// maps the plain names to.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_RUNTIME_CUDADRIVER_H
#define IDXMAP_CODEGEN_RUNTIME_CUDADRIVER_H

#include "idxmap/Runtime.h"

#include <cstddef>

namespace idxmap {
namespace runtime {
namespace cu {

using Result = int; // CUresult
using Device = int; // CUdevice
using DevicePtr = unsigned long long;
using Context = struct CtxSt *;
using Module = struct ModSt *;
using Function = struct FuncSt *;
using Event = struct EventSt *;
using Stream = struct StreamSt *;

constexpr Result Success = 0;
constexpr Result ErrorNotInitialized = 3;
constexpr Result ErrorStubLibrary = 34;
constexpr Result ErrorNoDevice = 100;
constexpr Result ErrorNotFound = 500;

// CUjit_option
constexpr int JitInfoLogBuffer = 3;
constexpr int JitInfoLogBufferSizeBytes = 4;
constexpr int JitErrorLogBuffer = 5;
constexpr int JitErrorLogBufferSizeBytes = 6;
constexpr int JitLogVerbose = 12;

// CUdevice_attribute
constexpr int AttrMaxThreadsPerBlock = 1;
constexpr int AttrMaxBlockDimX = 2; // Y = 3, Z = 4
constexpr int AttrMaxGridDimX = 5;  // Y = 6, Z = 7
constexpr int AttrMaxSharedMemoryPerBlock = 8;
constexpr int AttrWarpSize = 10;
constexpr int AttrMaxRegistersPerBlock = 12;
constexpr int AttrClockRate = 13;
constexpr int AttrMultiprocessorCount = 16;
constexpr int AttrMemoryClockRate = 36;
constexpr int AttrGlobalMemoryBusWidth = 37;
constexpr int AttrL2CacheSize = 38;
constexpr int AttrMaxThreadsPerMultiprocessor = 39;
constexpr int AttrComputeCapabilityMajor = 75;
constexpr int AttrComputeCapabilityMinor = 76;
constexpr int AttrMaxSharedMemoryPerMultiprocessor = 81;
constexpr int AttrMaxRegistersPerMultiprocessor = 82;
constexpr int AttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int AttrMaxBlocksPerMultiprocessor = 106;

// CUfunction_attribute
constexpr int FuncAttrMaxThreadsPerBlock = 0;
constexpr int FuncAttrSharedSizeBytes = 1;
constexpr int FuncAttrLocalSizeBytes = 3;
constexpr int FuncAttrNumRegs = 4;
constexpr int FuncAttrMaxDynamicSharedSizeBytes = 8;

} // namespace cu

/// The driver entry points, filled by dlsym.
struct CudaDriver::Api {
  cu::Result (*Init)(unsigned Flags) = nullptr;
  cu::Result (*DriverGetVersion)(int *Version) = nullptr;
  cu::Result (*GetErrorName)(cu::Result, const char **) = nullptr;
  cu::Result (*GetErrorString)(cu::Result, const char **) = nullptr;
  cu::Result (*DeviceGetCount)(int *Count) = nullptr;
  cu::Result (*DeviceGet)(cu::Device *, int Ordinal) = nullptr;
  cu::Result (*DeviceGetName)(char *, int Len, cu::Device) = nullptr;
  cu::Result (*DeviceGetAttribute)(int *, int Attr, cu::Device) = nullptr;
  cu::Result (*DeviceTotalMem)(std::size_t *, cu::Device) = nullptr;
  cu::Result (*DevicePrimaryCtxRetain)(cu::Context *, cu::Device) = nullptr;
  cu::Result (*DevicePrimaryCtxRelease)(cu::Device) = nullptr;
  cu::Result (*CtxSetCurrent)(cu::Context) = nullptr;
  cu::Result (*CtxSynchronize)() = nullptr;
  cu::Result (*ModuleLoadDataEx)(cu::Module *, const void *Image,
                                 unsigned NumOptions, int *Options,
                                 void **OptionValues) = nullptr;
  cu::Result (*ModuleUnload)(cu::Module) = nullptr;
  cu::Result (*ModuleGetFunction)(cu::Function *, cu::Module,
                                  const char *Name) = nullptr;
  cu::Result (*FuncGetAttribute)(int *, int Attr, cu::Function) = nullptr;
  cu::Result (*FuncSetAttribute)(cu::Function, int Attr, int Value) = nullptr;
  cu::Result (*MemAlloc)(cu::DevicePtr *, std::size_t) = nullptr;
  cu::Result (*MemFree)(cu::DevicePtr) = nullptr;
  cu::Result (*MemcpyHtoD)(cu::DevicePtr, const void *, std::size_t) = nullptr;
  cu::Result (*MemcpyDtoH)(void *, cu::DevicePtr, std::size_t) = nullptr;
  cu::Result (*MemsetD8)(cu::DevicePtr, unsigned char, std::size_t) = nullptr;
  cu::Result (*LaunchKernel)(cu::Function, unsigned GX, unsigned GY,
                             unsigned GZ, unsigned BX, unsigned BY, unsigned BZ,
                             unsigned SharedBytes, cu::Stream, void **Params,
                             void **Extra) = nullptr;
  cu::Result (*EventCreate)(cu::Event *, unsigned Flags) = nullptr;
  cu::Result (*EventDestroy)(cu::Event) = nullptr;
  cu::Result (*EventRecord)(cu::Event, cu::Stream) = nullptr;
  cu::Result (*EventSynchronize)(cu::Event) = nullptr;
  cu::Result (*EventElapsedTime)(float *Ms, cu::Event, cu::Event) = nullptr;
};

} // namespace runtime
} // namespace idxmap

#endif // IDXMAP_CODEGEN_RUNTIME_CUDADRIVER_H
