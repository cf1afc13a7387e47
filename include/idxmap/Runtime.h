//===- idxmap/Runtime.h - Running PTX through the CUDA driver ---*- C++ -*-===//
//
// Part of idxmap. The runtime loads PTX with the CUDA driver API, which it
// resolves at run time with dlopen("libcuda.so.1"): building idxmap needs no
// CUDA SDK, and a machine without a driver gets a clean "no CUDA driver"
// error (the CLI exits 3) instead of a loader failure. This header has no
// LLVM and no CUDA types.
//
// Example:
// \code
//   auto Drv = runtime::CudaDriver::open();
//   if (!Drv) { std::cerr << Drv.error().Message << "\n";
//               return Drv.error().isUnavailable() ? 3 : 1; }
//   auto Mod = (*Drv)->loadPtx(PtxText);      // JIT log in the error
//   auto K = Mod->getKernel("scale");
//   auto X = (*Drv)->alloc(N * 4);
//   ...
//   void *Args[] = {&XPtr, &YPtr, &N};
//   (*Drv)->launch(*K, {{Blocks, 1, 1}, {256, 1, 1}, 0}, Args);
// \endcode
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_RUNTIME_H
#define IDXMAP_RUNTIME_H

#include "idxmap/DeviceModel.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace idxmap {
namespace runtime {

/// What went wrong in a driver call.
enum class DriverErrorKind {
  /// libcuda.so.1 is missing, is the toolkit's stub, or lacks a needed entry.
  NoDriver,
  /// The driver loaded but cuInit or device selection failed (no GPU).
  NoDevice,
  /// cuModuleLoadDataEx rejected the PTX; the message holds the JIT log.
  JitFailed,
  /// A kernel name not present in a loaded module.
  KernelNotFound,
  /// Any other failing driver call (the message names the call).
  CudaError,
};

/// A driver failure: a kind, the CUresult (0 when none) and a message meant
/// for the user, e.g. `no CUDA driver: cannot load libcuda.so.1 (...)`.
struct DriverError {
  DriverErrorKind Kind = DriverErrorKind::CudaError;
  int Code = 0;
  std::string Message;

  /// True when no GPU can be used at all (the CLI exits 3).
  bool isUnavailable() const {
    return Kind == DriverErrorKind::NoDriver ||
           Kind == DriverErrorKind::NoDevice;
  }
};

/// Either a T or a DriverError (as idxmap::Expected holds a Diagnostic).
template <typename T> class DriverResult {
public:
  DriverResult(T V) : Storage(std::in_place_index<0>, std::move(V)) {}
  DriverResult(DriverError E) : Storage(std::in_place_index<1>, std::move(E)) {}

  explicit operator bool() const { return Storage.index() == 0; }
  T &operator*() { return std::get<0>(Storage); }
  const T &operator*() const { return std::get<0>(Storage); }
  T *operator->() { return &std::get<0>(Storage); }
  const T *operator->() const { return &std::get<0>(Storage); }
  const DriverError &error() const { return std::get<1>(Storage); }

private:
  std::variant<T, DriverError> Storage;
};

/// Success, or a DriverError.
template <> class DriverResult<void> {
public:
  DriverResult() = default;
  DriverResult(DriverError E) : Error(std::move(E)), Failed(true) {}

  explicit operator bool() const { return !Failed; }
  const DriverError &error() const {
    assert(Failed && "no error in a successful result");
    return Error;
  }

private:
  DriverError Error;
  bool Failed = false;
};
using DriverStatus = DriverResult<void>;

/// A device address (CUdeviceptr).
using DevicePtr = std::uint64_t;

/// What the runtime knows about the GPU it opened.
struct DeviceInfo {
  int Ordinal = 0;
  std::string Name;
  int CcMajor = 0, CcMinor = 0;
  int SmCount = 0;
  int L2CacheBytes = 0;
  int MaxSharedPerBlockOptin = 0;
  int MaxThreadsPerSm = 0;
  /// Peak memory clock (kHz) and bus width (bits), for a nominal bandwidth.
  int MemoryClockKHz = 0;
  int MemoryBusWidthBits = 0;
  /// The attributes deviceModelFromDriver reads besides the above; 0 where
  /// the driver did not answer.
  int WarpSize = 0, MaxThreadsPerBlock = 0, MaxBlocksPerSm = 0;
  int MaxBlock[3] = {0, 0, 0}, MaxGrid[3] = {0, 0, 0};
  int MaxSharedPerBlock = 0, MaxSharedPerSm = 0;
  int RegistersPerBlock = 0, RegistersPerSm = 0;
  /// Peak SM clock (kHz).
  int ClockKHz = 0;
  std::uint64_t TotalMemoryBytes = 0;
  /// cuDriverGetVersion, e.g. 13000 for CUDA 13.0.
  int DriverVersion = 0;

  /// `sm_90` for compute capability 9.0.
  std::string smName() const {
    return "sm_" + std::to_string(CcMajor) + std::to_string(CcMinor);
  }
};

/// The device model of the GPU \p I describes, for emission on it (`idxmap
/// run`): its SMs, limits, shared memory, registers, L2, clock, and a DRAM
/// bandwidth of 2 transfers per memory clock over the bus width (HBM is
/// double data rate). Named after the device (I.Name); attributes the
/// driver did not give keep the defaults of the preset for the compute
/// capability (defaultDeviceModel of I.smName()).
///
/// Example: on an H100 SXM the driver reports 132 SMs, a 2,619 MHz memory
/// clock and a 5,120-bit bus, so `deviceModelFromDriver(Drv->device())`
/// has SmCount 132 and DramBytesPerSecond 2 x 2.619e9 x 640 = 3.35e12.
DeviceModel deviceModelFromDriver(const DeviceInfo &I);

/// Grid, block and dynamic shared memory of one launch.
struct LaunchDims {
  unsigned Grid[3] = {1, 1, 1};
  unsigned Block[3] = {1, 1, 1};
  unsigned DynamicSharedBytes = 0;
};

/// Resource usage of a loaded kernel, from cuFuncGetAttribute.
struct KernelAttributes {
  int NumRegisters = 0;
  int LocalBytes = 0;        ///< spills and stack per thread
  int StaticSharedBytes = 0; ///< `.shared` variables
  int MaxThreadsPerBlock = 0;
};

class CudaDriver;
class GpuModule;

/// A kernel entry of a loaded module; valid while its GpuModule lives.
class GpuKernel {
public:
  const std::string &name() const { return Name; }
  void *handle() const { return Handle; }

private:
  friend class GpuModule;
  GpuKernel(void *Handle, std::string Name)
      : Handle(Handle), Name(std::move(Name)) {}
  void *Handle;
  std::string Name;
};

/// A loaded PTX module (CUmodule); unloaded on destruction. Move-only.
class GpuModule {
public:
  GpuModule(GpuModule &&O) noexcept;
  GpuModule &operator=(GpuModule &&O) noexcept;
  GpuModule(const GpuModule &) = delete;
  GpuModule &operator=(const GpuModule &) = delete;
  ~GpuModule();

  /// The kernel called \p Name (a `.entry`).
  DriverResult<GpuKernel> getKernel(const std::string &Name) const;
  /// The JIT's info log (ptxas register/spill lines when verbose).
  const std::string &infoLog() const { return InfoLog; }

private:
  friend class CudaDriver;
  GpuModule(CudaDriver *Driver, void *Handle, std::string InfoLog)
      : Driver(Driver), Handle(Handle), InfoLog(std::move(InfoLog)) {}
  CudaDriver *Driver = nullptr;
  void *Handle = nullptr;
  std::string InfoLog;
};

/// Device memory (cuMemAlloc, 256-byte aligned); freed on destruction.
/// Move-only.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&O) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&O) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  DevicePtr ptr() const { return Ptr; }
  std::size_t size() const { return Size; }

private:
  friend class CudaDriver;
  DeviceBuffer(CudaDriver *Driver, DevicePtr Ptr, std::size_t Size)
      : Driver(Driver), Ptr(Ptr), Size(Size) {}
  void reset();
  CudaDriver *Driver = nullptr;
  DevicePtr Ptr = 0;
  std::size_t Size = 0;
};

/// The CUDA driver API, loaded at run time, with the primary context of one
/// device current on the calling thread. Buffers and modules must be
/// destroyed before their CudaDriver. Not thread-safe.
class CudaDriver {
public:
  /// The driver's entry points (codegen/runtime/CudaDriver.h).
  struct Api;

  struct OpenOptions {
    int Device = 0;
    /// The driver library; empty means `libcuda.so.1` from the loader's
    /// search path. (The library reads no environment: the `idxmap` tool
    /// passes `$IDXMAP_LIBCUDA` here.)
    std::string LibraryPath;
    /// An in-process implementation of the entry points to use instead of
    /// a driver library (the host simulator: openHostSimulator in
    /// HostSimulator.h); LibraryPath is then not read.
    const Api *Backend = nullptr;
  };

  /// Loads the driver, initializes it, retains device \p Opts.Device's
  /// primary context and makes it current. Errors: NoDriver (no library, the
  /// stub library, or an entry point missing), NoDevice (cuInit failed, or
  /// no such device), CudaError.
  static DriverResult<std::unique_ptr<CudaDriver>> open(OpenOptions Opts);
  static DriverResult<std::unique_ptr<CudaDriver>> open() {
    return open(OpenOptions());
  }

  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  const DeviceInfo &device() const { return Info; }

  /// JIT-compiles \p Ptx for this device. On failure (JitFailed) the message
  /// holds the JIT error log, the PTX `.version`/`.target`, the driver
  /// version and the device. \p Verbose asks ptxas for its resource report in
  /// infoLog().
  DriverResult<GpuModule> loadPtx(std::string_view Ptx, bool Verbose = false);

  DriverResult<KernelAttributes> getAttributes(const GpuKernel &K);
  /// Allows \p Bytes of dynamic shared memory (needed above 48 KiB).
  DriverStatus setMaxDynamicSharedBytes(const GpuKernel &K, int Bytes);

  DriverResult<DeviceBuffer> alloc(std::size_t Bytes);
  DriverStatus copyToDevice(const DeviceBuffer &Dst, const void *Src,
                            std::size_t Bytes, std::size_t DstOffset = 0);
  DriverStatus copyToHost(void *Dst, const DeviceBuffer &Src, std::size_t Bytes,
                          std::size_t SrcOffset = 0);
  /// Sets every byte of \p Dst to \p Value (e.g. 0xff to poison outputs).
  DriverStatus fill(const DeviceBuffer &Dst, std::uint8_t Value);

  /// Launches \p K on the default stream. \p Args holds one pointer per
  /// kernel parameter, pointing at the parameter's value (a DevicePtr for a
  /// buffer, an int64_t for an i64 scalar, ...).
  DriverStatus launch(const GpuKernel &K, const LaunchDims &Dims, void **Args);
  /// Waits for all work on the device; reports asynchronous launch errors.
  DriverStatus synchronize();

  /// Times \p Launch with CUDA events: \p Warmup untimed calls, then \p Reps
  /// timed ones, each between its own pair of events (so the caller may
  /// rotate inputs by the repetition index). Returns one time per repetition
  /// in microseconds, in order.
  DriverResult<std::vector<double>>
  timeLaunches(const std::function<DriverStatus(unsigned Rep)> &Launch,
               unsigned Warmup, unsigned Reps);

  /// The message of CUresult \p Code: `CUDA_ERROR_INVALID_PTX (218): a PTX
  /// JIT compilation failed`.
  std::string describeResult(int Code) const;

private:
  friend class DeviceBuffer;
  friend class GpuModule;
  CudaDriver() = default;
  DriverError callError(const char *Call, int Code) const;

  std::unique_ptr<Api> Fns;
  void *Context = nullptr;
  int Device = 0;
  DeviceInfo Info;
};

/// Kernel times from CUPTI's activity records: the device's own start and end
/// timestamps of every launch, as torch.profiler (and so the peers' figures
/// in bench/) reports them, without the ~3 us floor of a CUDA event pair.
/// libcupti is loaded at run time (no CUDA SDK at build time); where it is
/// looked for is cuptiSearchPatterns() in codegen/runtime/Cupti.h. CUPTI
/// takes one activity client per process, so the timer is process-wide and
/// never destroyed (CUPTI may still deliver buffers while the process exits).
///
/// Example:
/// \code
///   auto T = runtime::CuptiTimer::load();      // before CudaDriver::open
///   auto Drv = runtime::CudaDriver::open();
///   ...
///   auto R = (*T)->timeLaunches(**Drv, Launch, 5, 50, "fusion_kernel");
///   if (!R) ...                    // a driver call failed
///   else if (!R->Failure.empty())  // CUPTI gave no usable records
/// \endcode
class CuptiTimer {
public:
  struct LoadOptions {
    /// The library; empty means the search list (cupti::searchPatterns in
    /// codegen/runtime/Cupti.h), built from the fields below.
    std::string LibraryPath;
    /// Tried first by the search list. The library reads no environment:
    /// the `idxmap` tool passes `$IDXMAP_CUPTI` here, and `$HOME`,
    /// `$VIRTUAL_ENV`, `$CONDA_PREFIX` below.
    std::string FirstPath;
    /// Roots the search list looks under for Python installs (empty ones
    /// are left out).
    std::string Home, VirtualEnv, CondaPrefix;
  };

  /// Loads libcupti, registers the activity buffer callbacks and enables
  /// kernel records; best called before the CUDA context is created. Once a
  /// library was found (and CUPTI called), later calls return the same timer
  /// or the same error. Errors: NoDriver when no library was found (the
  /// message lists every place tried, one per line, each with why it was not
  /// used); CudaError when CUPTI refused (e.g. no driver, or another CUPTI
  /// client such as a profiler is attached).
  static DriverResult<CuptiTimer *> load(const LoadOptions &Opts);
  static DriverResult<CuptiTimer *> load() { return load(LoadOptions()); }

  /// The library file that was loaded.
  const std::string &libraryPath() const { return Path; }
  /// cuptiGetVersion (CUPTI_API_VERSION of the library), 0 when unknown.
  unsigned apiVersion() const { return Version; }
  /// The places tried before the library loaded (one line each).
  const std::vector<std::string> &searchLog() const { return Log; }

  struct Timing {
    /// One device duration per repetition (microseconds), in launch order.
    std::vector<double> Micros;
    /// Why CUPTI gave no usable times (empty on success): the caller falls
    /// back to CudaDriver::timeLaunches.
    std::string Failure;
  };

  /// Like CudaDriver::timeLaunches: \p Warmup untimed calls of \p Launch,
  /// then \p Reps timed ones (repetition index Warmup + I), but the times are
  /// those of the kernel records named \p KernelName. A failing driver call
  /// is an error; a CUPTI failure is reported in Timing::Failure and leaves
  /// the activity disabled (so that the fallback is not perturbed).
  DriverResult<Timing>
  timeLaunches(CudaDriver &Driver,
               const std::function<DriverStatus(unsigned Rep)> &Launch,
               unsigned Warmup, unsigned Reps, const std::string &KernelName);

  /// Flushes and disables the activity records (idempotent).
  void stop();

  struct Api;

private:
  CuptiTimer() = default;
  ~CuptiTimer() = default; // process-wide: never destroyed
  std::string enable();

  Api *Fns = nullptr;
  std::string Path;
  unsigned Version = 0;
  std::vector<std::string> Log;
  bool Enabled = false;
  int EnabledKind = 0;
};

/// The `.version` and `.target` directives of a PTX text, as
/// `.version 8.5, .target sm_90` (`?` for a missing one).
std::string describePtxHeader(std::string_view Ptx);

/// 13000 → `13.0`, 12080 → `12.8`.
std::string formatDriverVersion(int Version);

/// The median of \p Values (the mean of the middle two for an even count);
/// 0 for none.
double median(std::vector<double> Values);

} // namespace runtime
} // namespace idxmap

#endif // IDXMAP_RUNTIME_H
