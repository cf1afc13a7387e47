//===- codegen/sim/SimDriver.cpp - The driver API of the host simulator ---===//
//
// Part of idxmap. See idxmap/HostSimulator.h. The entry points of
// CudaDriver::Api, implemented over the process: modules are LLVM IR
// compiled by an ORC JIT (SimIr.h prepares it), launches run on the CPU
// (SimThreads.h), device memory is mapped between guard pages. The entry
// points are plain functions (the Api is a table of them), so their state
// is the one simulator a process may have open.
//
//===----------------------------------------------------------------------===//
#include "idxmap/HostSimulator.h"

#include "../runtime/CudaDriver.h"
#include "SimIr.h"
#include "SimThreads.h"

#include "idxmap/DeviceModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include <sys/mman.h>
#include <unistd.h>

extern "C" {
uint32_t __idxmap_sim_sreg(uint32_t Code);
void __idxmap_sim_barrier();
uint32_t __idxmap_sim_warp(uint32_t Op, uint32_t Mask, uint32_t A, uint32_t B,
                           uint32_t C);
void __idxmap_sim_shared(void *Ptr, uint32_t Bytes, uint32_t Kind);
void __idxmap_sim_poll(const void *Ptr, uint32_t Bytes);
uint32_t __idxmap_sim_async(uint32_t Op, void *A, const void *B, uint32_t N,
                            void *Bar);
}

using namespace idxmap;
using namespace idxmap::runtime;

namespace {

constexpr cu::Result InvalidValue = 1, OutOfMemory = 2, InvalidImage = 200,
                     NotFound = 500, IllegalAddress = 700, LaunchFailed = 719;

struct SimFunction;

struct SimModule {
  std::unique_ptr<llvm::orc::LLJIT> Jit;
  sim::HostModuleInfo Info;
  /// Each shared array's address, bytes and whether it is the dynamic one.
  std::vector<std::tuple<void *, uint64_t, bool>> Shared;
  std::map<std::string, std::unique_ptr<SimFunction>> Functions;
};

struct SimFunction {
  SimModule *Module = nullptr;
  sim::KernelEntry Entry = nullptr;
};

struct Mapping {
  char *Map = nullptr;
  size_t Bytes = 0;
  /// The bytes asked for.
  size_t Asked = 0;
};

/// The simulator's state: the one open instance.
struct State {
  bool Open = false;
  std::map<cu::DevicePtr, Mapping> Memory;
  std::map<void *, std::unique_ptr<SimModule>> Modules;
  int LastCode = 0;
  std::string LastMessage;
  HostSimulatorOptions Options;
  /// Launches so far: each draws its blocks' order from its own seed.
  uint64_t Launches = 0;
};
State S;

cu::Result fail(cu::Result Code, std::string Message) {
  S.LastCode = Code;
  S.LastMessage = std::move(Message);
  return Code;
}

const DeviceModel &model() {
  static const DeviceModel D = defaultDeviceModel("sm_90");
  return D;
}

// --- device and context ----------------------------------------------------

cu::Result init(unsigned) { return cu::Success; }
cu::Result driverVersion(int *V) {
  *V = 0;
  return cu::Success;
}
/// No names of its own: CudaDriver::describeResult names the codes the
/// simulator returns (1, 2, 200, 500, 700, 719) when this fails.
cu::Result errorName(cu::Result, const char **) { return InvalidValue; }
cu::Result errorString(cu::Result Code, const char **Out) {
  if (Code != S.LastCode || S.LastMessage.empty())
    return InvalidValue;
  *Out = S.LastMessage.c_str();
  return cu::Success;
}
cu::Result deviceCount(int *N) {
  *N = 1;
  return cu::Success;
}
cu::Result deviceGet(cu::Device *D, int Ordinal) {
  if (Ordinal != 0)
    return InvalidValue;
  *D = 0;
  return cu::Success;
}
cu::Result deviceName(char *Name, int Len, cu::Device) {
  std::snprintf(Name, size_t(Len), "host simulator (sm_90 model)");
  return cu::Success;
}
cu::Result deviceAttribute(int *V, int Attr, cu::Device) {
  const DeviceModel &D = model();
  switch (Attr) {
  case cu::AttrComputeCapabilityMajor:
    *V = 9;
    break;
  case cu::AttrComputeCapabilityMinor:
    *V = 0;
    break;
  case cu::AttrMultiprocessorCount:
    *V = int(D.SmCount);
    break;
  case cu::AttrL2CacheSize:
    *V = int(D.L2Bytes);
    break;
  case cu::AttrMaxSharedMemoryPerBlockOptin:
    *V = int(D.SharedBytesPerBlock);
    break;
  case cu::AttrMaxThreadsPerMultiprocessor:
    *V = int(D.MaxThreadsPerSm);
    break;
  case cu::AttrWarpSize:
    *V = int(D.WarpSize);
    break;
  case cu::AttrMaxThreadsPerBlock:
    *V = int(D.MaxThreadsPerBlock);
    break;
  case cu::AttrMaxBlocksPerMultiprocessor:
    *V = int(D.MaxBlocksPerSm);
    break;
  case cu::AttrMaxSharedMemoryPerBlock:
    *V = int(D.StaticSharedBytesPerBlock);
    break;
  case cu::AttrMaxSharedMemoryPerMultiprocessor:
    *V = int(D.SharedBytesPerSm);
    break;
  case cu::AttrMaxRegistersPerBlock:
    *V = int(D.RegistersPerBlock);
    break;
  case cu::AttrMaxRegistersPerMultiprocessor:
    *V = int(D.RegistersPerSm);
    break;
  default:
    if (Attr >= cu::AttrMaxBlockDimX && Attr < cu::AttrMaxBlockDimX + 3)
      *V = int(D.MaxBlock[Attr - cu::AttrMaxBlockDimX]);
    else if (Attr >= cu::AttrMaxGridDimX && Attr < cu::AttrMaxGridDimX + 3)
      *V = int(D.MaxGrid[Attr - cu::AttrMaxGridDimX]);
    else
      *V = 0; // not modelled: the device model keeps its preset
  }
  return cu::Success;
}
cu::Result totalMem(std::size_t *Bytes, cu::Device) {
  *Bytes = std::size_t(16) << 30;
  return cu::Success;
}
cu::Result ctxRetain(cu::Context *C, cu::Device) {
  *C = reinterpret_cast<cu::Context>(&S);
  return cu::Success;
}
cu::Result ctxRelease(cu::Device) { return cu::Success; }
cu::Result ctxSetCurrent(cu::Context) { return cu::Success; }
cu::Result ctxSynchronize() { return cu::Success; }

// --- modules ---------------------------------------------------------------

/// Writes \p Message into the JIT error log option, as the driver does.
void logJitError(unsigned NumOptions, int *Options, void **Values,
                 const std::string &Message) {
  char *Log = nullptr;
  size_t Size = 0;
  int SizeIndex = -1;
  for (unsigned I = 0; I < NumOptions; ++I) {
    if (Options[I] == cu::JitErrorLogBuffer)
      Log = static_cast<char *>(Values[I]);
    if (Options[I] == cu::JitErrorLogBufferSizeBytes) {
      Size = size_t(reinterpret_cast<uintptr_t>(Values[I]));
      SizeIndex = int(I);
    }
  }
  if (!Log || !Size)
    return;
  size_t N = std::min(Size, Message.size());
  std::memcpy(Log, Message.data(), N);
  Log[std::min(N, Size - 1)] = 0;
  Values[SizeIndex] = reinterpret_cast<void *>(uintptr_t(N));
}

/// Compiles the IR text \p Image; an error message on failure.
std::string compile(const char *Image, SimModule &Out) {
  static std::once_flag Native;
  std::call_once(Native, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto Jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!Jtmb)
    return "no host target: " + llvm::toString(Jtmb.takeError());
  auto Jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*Jtmb).create();
  if (!Jit)
    return "cannot create the JIT: " + llvm::toString(Jit.takeError());
  llvm::orc::LLJIT &J = **Jit;
  const llvm::DataLayout &DL = J.getDataLayout();
  auto Process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      DL.getGlobalPrefix());
  if (!Process)
    return llvm::toString(Process.takeError());
  J.getMainJITDylib().addGenerator(std::move(*Process));
  llvm::orc::SymbolMap Runtime;
  auto Define = [&](const char *Name, void *Fn) {
    Runtime[J.mangleAndIntern(Name)] = {llvm::orc::ExecutorAddr::fromPtr(Fn),
                                        llvm::JITSymbolFlags::Exported};
  };
  Define(sim::SregFn, reinterpret_cast<void *>(&__idxmap_sim_sreg));
  Define(sim::BarrierFn, reinterpret_cast<void *>(&__idxmap_sim_barrier));
  Define(sim::WarpFn, reinterpret_cast<void *>(&__idxmap_sim_warp));
  Define(sim::SharedFn, reinterpret_cast<void *>(&__idxmap_sim_shared));
  Define(sim::PollFn, reinterpret_cast<void *>(&__idxmap_sim_poll));
  Define(sim::AsyncFn, reinterpret_cast<void *>(&__idxmap_sim_async));
  if (auto Err = J.getMainJITDylib().define(
          llvm::orc::absoluteSymbols(std::move(Runtime))))
    return llvm::toString(std::move(Err));

  auto Ctx = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic Diag;
  std::unique_ptr<llvm::Module> M =
      llvm::parseAssemblyString(Image, Diag, *Ctx);
  if (!M) {
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    Diag.print("kernel", OS);
    return "the image is not LLVM IR (the host simulator loads the IR of an "
           "emit with EmitOptions::HostIr, `idxmap run --simulate`, not "
           "PTX): " +
           Text.substr(0, 300);
  }
  std::string Error;
  if (!sim::prepareForHost(*M, DL, J.getTargetTriple().str(), Out.Info, Error))
    return Error;
  if (auto Err = J.addIRModule(
          llvm::orc::ThreadSafeModule(std::move(M), std::move(Ctx))))
    return llvm::toString(std::move(Err));
  for (const std::string &K : Out.Info.Kernels) {
    auto Addr = J.lookup(sim::entryName(K));
    if (!Addr)
      return "JIT compilation of kernel '" + K +
             "' failed: " + llvm::toString(Addr.takeError());
    auto F = std::make_unique<SimFunction>();
    F->Module = &Out;
    F->Entry = Addr->toPtr<sim::KernelEntry>();
    Out.Functions[K] = std::move(F);
  }
  for (const sim::SharedArray &A : Out.Info.Shared) {
    auto Addr = J.lookup(A.Name);
    if (!Addr)
      return llvm::toString(Addr.takeError());
    Out.Shared.emplace_back(Addr->toPtr<void *>(), A.Bytes, A.Dynamic);
  }
  Out.Jit = std::move(*Jit);
  return "";
}

cu::Result moduleLoad(cu::Module *Mod, const void *Image, unsigned NumOptions,
                      int *Options, void **Values) {
  auto M = std::make_unique<SimModule>();
  std::string Error = compile(static_cast<const char *>(Image), *M);
  if (!Error.empty()) {
    logJitError(NumOptions, Options, Values, Error);
    return fail(InvalidImage, Error);
  }
  // No info log.
  for (unsigned I = 0; I < NumOptions; ++I)
    if (Options[I] == cu::JitInfoLogBufferSizeBytes)
      Values[I] = nullptr;
  *Mod = reinterpret_cast<cu::Module>(M.get());
  S.Modules[M.get()] = std::move(M);
  return cu::Success;
}
cu::Result moduleUnload(cu::Module Mod) {
  return S.Modules.erase(Mod) ? cu::Success : InvalidValue;
}
cu::Result moduleFunction(cu::Function *F, cu::Module Mod, const char *Name) {
  auto It = S.Modules.find(Mod);
  if (It == S.Modules.end())
    return InvalidValue;
  auto Fn = It->second->Functions.find(Name);
  if (Fn == It->second->Functions.end())
    return NotFound;
  *F = reinterpret_cast<cu::Function>(Fn->second.get());
  return cu::Success;
}
cu::Result funcAttribute(int *V, int Attr, cu::Function F) {
  auto *Fn = reinterpret_cast<SimFunction *>(F);
  switch (Attr) {
  case cu::FuncAttrSharedSizeBytes:
    *V = int(Fn->Module->Info.StaticSharedBytes);
    break;
  case cu::FuncAttrMaxThreadsPerBlock:
    *V = int(model().MaxThreadsPerBlock);
    break;
  default:
    *V = 0;
  }
  return cu::Success;
}
cu::Result funcSetAttribute(cu::Function, int, int) { return cu::Success; }

// --- memory ----------------------------------------------------------------

size_t roundUp(size_t X, size_t To) { return (X + To - 1) / To * To; }

/// Maps \p Bytes between two inaccessible pages, 256-byte aligned, its end
/// (rounded up to 256) against the upper guard page.
cu::Result memAlloc(cu::DevicePtr *P, std::size_t Bytes) {
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  size_t Pages = roundUp(Bytes, Page);
  size_t Total = Pages + 2 * Page;
  void *Map = mmap(nullptr, Total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Map == MAP_FAILED)
    return fail(OutOfMemory, "cannot map " + std::to_string(Bytes) + " bytes");
  char *Base = static_cast<char *>(Map);
  mprotect(Base, Page, PROT_NONE);
  mprotect(Base + Page + Pages, Page, PROT_NONE);
  char *Data = Base + Page + (Pages - roundUp(Bytes, 256));
  *P = cu::DevicePtr(reinterpret_cast<uintptr_t>(Data));
  S.Memory[*P] = {Base, Total, Bytes};
  return cu::Success;
}
cu::Result memFree(cu::DevicePtr P) {
  auto It = S.Memory.find(P);
  if (It == S.Memory.end())
    return InvalidValue;
  munmap(It->second.Map, It->second.Bytes);
  S.Memory.erase(It);
  return cu::Success;
}
void *hostPtr(cu::DevicePtr P) { return reinterpret_cast<void *>(P); }
cu::Result copyToDevice(cu::DevicePtr Dst, const void *Src, std::size_t N) {
  std::memcpy(hostPtr(Dst), Src, N);
  return cu::Success;
}
cu::Result copyToHost(void *Dst, cu::DevicePtr Src, std::size_t N) {
  std::memcpy(Dst, hostPtr(Src), N);
  return cu::Success;
}
cu::Result memset8(cu::DevicePtr Dst, unsigned char V, std::size_t N) {
  std::memset(hostPtr(Dst), V, N);
  return cu::Success;
}

// --- launches and events ---------------------------------------------------

/// Where \p Addr lies relative to the buffer nearest to it.
std::string describeAddress(uintptr_t Addr) {
  std::string Where = "address 0x" + llvm::utohexstr(Addr);
  const std::pair<const cu::DevicePtr, Mapping> *Best = nullptr;
  uint64_t BestDistance = UINT64_MAX;
  for (const auto &E : S.Memory) {
    uint64_t Start = E.first, End = E.first + E.second.Asked;
    uint64_t D = Addr < Start ? Start - Addr : Addr >= End ? Addr - End + 1 : 0;
    if (D < BestDistance) {
      BestDistance = D;
      Best = &E;
    }
  }
  if (!Best || BestDistance > (uint64_t(1) << 20))
    return Where + ", outside every buffer";
  uint64_t Start = Best->first, Size = Best->second.Asked;
  if (Addr < Start)
    return Where + ", " + std::to_string(Start - Addr) +
           " bytes before a buffer of " + std::to_string(Size) + " bytes";
  if (Addr >= Start + Size)
    return Where + ", " + std::to_string(Addr - Start - Size) +
           " bytes past the end of a buffer of " + std::to_string(Size) +
           " bytes";
  return Where + ", byte " + std::to_string(Addr - Start) + " of a buffer of " +
         std::to_string(Size) + " bytes";
}

cu::Result launch(cu::Function F, unsigned GX, unsigned GY, unsigned GZ,
                  unsigned BX, unsigned BY, unsigned BZ, unsigned SharedBytes,
                  cu::Stream, void **Params, void **) {
  auto *Fn = reinterpret_cast<SimFunction *>(F);
  if (SharedBytes > sim::DynamicSharedBytes)
    return fail(InvalidValue, "the launch asks for " +
                                  std::to_string(SharedBytes) +
                                  " bytes of dynamic shared memory");
  sim::GridLaunch L;
  L.Entry = Fn->Entry;
  L.Args = Params;
  L.Grid[0] = GX, L.Grid[1] = GY, L.Grid[2] = GZ;
  L.Block[0] = BX, L.Block[1] = BY, L.Block[2] = BZ;
  L.Collectives = Fn->Module->Info.Collectives;
  for (auto &[Ptr, Bytes, Dynamic] : Fn->Module->Shared)
    L.Shared.push_back({Ptr, Dynamic ? uint64_t(SharedBytes) : Bytes});
  L.DescribeAddress = describeAddress;
  L.Resident = S.Options.ResidentBlocks;
  L.Seed = S.Options.Seed + S.Launches++;
  std::string Error = sim::runGrid(L);
  if (Error.empty())
    return cu::Success;
  return fail(Error.rfind("invalid memory access", 0) == 0 ? IllegalAddress
                                                           : LaunchFailed,
              Error);
}

using Clock = std::chrono::steady_clock;
cu::Result eventCreate(cu::Event *E, unsigned) {
  *E = reinterpret_cast<cu::Event>(new Clock::time_point(Clock::now()));
  return cu::Success;
}
cu::Result eventDestroy(cu::Event E) {
  delete reinterpret_cast<Clock::time_point *>(E);
  return cu::Success;
}
cu::Result eventRecord(cu::Event E, cu::Stream) {
  *reinterpret_cast<Clock::time_point *>(E) = Clock::now();
  return cu::Success;
}
cu::Result eventSynchronize(cu::Event) { return cu::Success; }
cu::Result eventElapsed(float *Ms, cu::Event A, cu::Event B) {
  *Ms = std::chrono::duration<float, std::milli>(
            *reinterpret_cast<Clock::time_point *>(B) -
            *reinterpret_cast<Clock::time_point *>(A))
            .count();
  return cu::Success;
}

CudaDriver::Api simulatorApi() {
  CudaDriver::Api A;
  A.Init = init;
  A.DriverGetVersion = driverVersion;
  A.GetErrorName = errorName;
  A.GetErrorString = errorString;
  A.DeviceGetCount = deviceCount;
  A.DeviceGet = deviceGet;
  A.DeviceGetName = deviceName;
  A.DeviceGetAttribute = deviceAttribute;
  A.DeviceTotalMem = totalMem;
  A.DevicePrimaryCtxRetain = ctxRetain;
  A.DevicePrimaryCtxRelease = [](cu::Device D) {
    // The driver releases its context last: the simulator closes with it.
    for (auto &[P, M] : S.Memory)
      munmap(M.Map, M.Bytes);
    S.Memory.clear();
    S.Modules.clear();
    S.Open = false;
    return ctxRelease(D);
  };
  A.CtxSetCurrent = ctxSetCurrent;
  A.CtxSynchronize = ctxSynchronize;
  A.ModuleLoadDataEx = moduleLoad;
  A.ModuleUnload = moduleUnload;
  A.ModuleGetFunction = moduleFunction;
  A.FuncGetAttribute = funcAttribute;
  A.FuncSetAttribute = funcSetAttribute;
  A.MemAlloc = memAlloc;
  A.MemFree = memFree;
  A.MemcpyHtoD = copyToDevice;
  A.MemcpyDtoH = copyToHost;
  A.MemsetD8 = memset8;
  A.LaunchKernel = launch;
  A.EventCreate = eventCreate;
  A.EventDestroy = eventDestroy;
  A.EventRecord = eventRecord;
  A.EventSynchronize = eventSynchronize;
  A.EventElapsedTime = eventElapsed;
  return A;
}

} // namespace

DriverResult<std::unique_ptr<CudaDriver>>
idxmap::openHostSimulator(const HostSimulatorOptions &Options) {
  if (Options.ResidentBlocks == 0 ||
      Options.ResidentBlocks > HostSimulatorOptions::MaxResidentBlocks)
    return DriverError{
        DriverErrorKind::NoDevice, 0,
        "the host simulator keeps 1 to " +
            std::to_string(HostSimulatorOptions::MaxResidentBlocks) +
            " blocks in flight, not " + std::to_string(Options.ResidentBlocks)};
  if (S.Open)
    return DriverError{DriverErrorKind::NoDevice, 0,
                       "the host simulator is already open in this process"};
  static const CudaDriver::Api Api = simulatorApi();
  CudaDriver::OpenOptions O;
  O.Backend = &Api;
  auto D = CudaDriver::open(O);
  if (D) {
    S.Open = true;
    S.Options = Options;
    S.Launches = 0;
  }
  return D;
}
