//===- codegen/runtime/Cupti.cpp - Kernel times from CUPTI activity -------===//
//
// Part of idxmap. Loads libcupti at run time (as CudaDriver.cpp loads
// libcuda), collects the kernel activity records CUPTI delivers through its
// buffer callbacks, and turns them into per-launch device durations. The
// constants and the record layout are documented in Cupti.h.
//
// CUPTI calls the buffer callbacks from its own worker thread as well as
// from cuptiActivityFlushAll, possibly while the process exits: the collector
// they write to is guarded by a mutex and never destroyed, and neither is
// the library (never dlclose'd once CUPTI was called).
//
//===----------------------------------------------------------------------===//

#include "Cupti.h"

#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>

using namespace idxmap;
using namespace idxmap::runtime;
using namespace idxmap::runtime::cupti;

//===----------------------------------------------------------------------===//
// Search list
//===----------------------------------------------------------------------===//

SearchInputs SearchInputs::from(const CuptiTimer::LoadOptions &Opts) {
  SearchInputs In;
  In.EnvPath = Opts.FirstPath;
  In.Home = Opts.Home;
  In.VirtualEnv = Opts.VirtualEnv;
  In.CondaPrefix = Opts.CondaPrefix;
  return In;
}

std::vector<std::string> cupti::searchPatterns(const SearchInputs &In) {
  std::vector<std::string> P;
  if (!In.EnvPath.empty())
    P.push_back(In.EnvPath);
  // The dynamic loader's search (LD_LIBRARY_PATH, ld.so.cache, /usr/lib).
  P.push_back("libcupti.so");
  P.push_back("libcupti.so.13");
  P.push_back("libcupti.so.12");
  // CUDA toolkits: the default symlink, then versioned installs.
  for (const char *Root : {"/usr/local/cuda", "/usr/local/cuda-*"})
    for (const char *Dir :
         {"/extras/CUPTI/lib64/", "/lib64/", "/targets/x86_64-linux/lib/"})
      P.push_back(std::string(Root) + Dir + "libcupti.so*");
  // Python wheels: CUDA 13's nvidia-cuda-cupti puts the library in
  // nvidia/cu13/lib, CUDA 12's nvidia-cuda-cupti-cu12 in
  // nvidia/cuda_cupti/lib; some torch builds carry their own in torch/lib.
  std::vector<std::string> SitePackages = {
      "/usr/lib/python3*/site-packages",
      "/usr/lib/python3*/dist-packages",
      "/usr/local/lib/python3*/dist-packages",
      "/usr/local/lib/python3*/site-packages",
  };
  if (!In.Home.empty())
    SitePackages.push_back(In.Home + "/.local/lib/python3*/site-packages");
  if (!In.VirtualEnv.empty())
    SitePackages.push_back(In.VirtualEnv + "/lib/python3*/site-packages");
  if (!In.CondaPrefix.empty())
    SitePackages.push_back(In.CondaPrefix + "/lib/python3*/site-packages");
  SitePackages.push_back("/opt/conda/lib/python3*/site-packages");
  for (const std::string &Site : SitePackages)
    for (const char *Dir :
         {"/nvidia/cu13/lib/", "/nvidia/cuda_cupti/lib/", "/torch/lib/"})
      P.push_back(Site + Dir + "libcupti.so*");
  if (!In.CondaPrefix.empty())
    P.push_back(In.CondaPrefix + "/lib/libcupti.so*");
  P.push_back("/opt/conda/lib/libcupti.so*");
  return P;
}

namespace {

/// The files \p Pattern names: its glob matches (sorted), or the pattern
/// itself when it has no wildcard. Files already in \p Seen (by real path)
/// are left out.
std::vector<std::string> expandPattern(const std::string &Pattern,
                                       std::set<std::string> &Seen) {
  std::vector<std::string> Files;
  if (Pattern.find_first_of("*?[") == std::string::npos) {
    Files.push_back(Pattern);
  } else {
    glob_t G;
    std::memset(&G, 0, sizeof G);
    if (glob(Pattern.c_str(), 0, nullptr, &G) == 0)
      for (size_t I = 0; I < G.gl_pathc; ++I)
        Files.push_back(G.gl_pathv[I]);
    globfree(&G);
  }
  std::vector<std::string> Out;
  for (const std::string &F : Files) {
    std::string Key = F;
    if (F.find('/') != std::string::npos) {
      char Real[PATH_MAX];
      if (realpath(F.c_str(), Real))
        Key = Real;
    }
    if (Seen.insert(Key).second)
      Out.push_back(F);
  }
  return Out;
}

} // namespace

std::vector<std::string>
cupti::expandSearchPatterns(const std::vector<std::string> &Patterns,
                            std::vector<std::string> *Unmatched) {
  std::set<std::string> Seen;
  std::vector<std::string> Out;
  for (const std::string &P : Patterns) {
    bool IsGlob = P.find_first_of("*?[") != std::string::npos;
    std::vector<std::string> Files = expandPattern(P, Seen);
    if (IsGlob && Files.empty() && Unmatched)
      Unmatched->push_back(P);
    Out.insert(Out.end(), Files.begin(), Files.end());
  }
  return Out;
}

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

RecordClass cupti::decodeKernelRecord(const void *Record, KernelRecord &Out) {
  const auto *Bytes = static_cast<const unsigned char *>(Record);
  std::uint32_t Kind = 0;
  std::memcpy(&Kind, Bytes + KernelKindOffset, sizeof Kind);
  if (Kind != ActivityKindKernel && Kind != ActivityKindConcurrentKernel)
    return RecordClass::NotKernel;
  std::uint64_t Start = 0, End = 0;
  std::memcpy(&Start, Bytes + KernelStartOffset, sizeof Start);
  std::memcpy(&End, Bytes + KernelEndOffset, sizeof End);
  if (End <= Start)
    return RecordClass::NoTimestamps;
  const char *Name = nullptr;
  std::memcpy(&Name, Bytes + KernelNameOffset, sizeof Name);
  Out.Kind = Kind;
  Out.Start = Start;
  Out.End = End;
  Out.Name = Name ? std::string(Name, strnlen(Name, 4096)) : std::string();
  return RecordClass::Kernel;
}

void cupti::scanBuffer(std::uint8_t *Buffer, std::size_t ValidBytes,
                       NextRecordFn Next, BufferScan &Out) {
  if (!Buffer || ValidBytes == 0)
    return;
  void *Record = nullptr;
  // Every record takes at least 8 bytes: a bound against a looping iterator.
  for (std::size_t Steps = 0; Steps <= ValidBytes / BufferAlignment; ++Steps) {
    Result R = Next(Buffer, ValidBytes, &Record);
    if (R != Success) {
      if (R != ErrorMaxLimitReached)
        Out.Stop = R;
      return;
    }
    KernelRecord K;
    switch (decodeKernelRecord(Record, K)) {
    case RecordClass::Kernel:
      Out.Kernels.push_back(std::move(K));
      break;
    case RecordClass::NotKernel:
      ++Out.OtherRecords;
      break;
    case RecordClass::NoTimestamps:
      ++Out.InvalidKernelRecords;
      break;
    }
  }
}

std::vector<double> cupti::timedDurations(std::vector<KernelRecord> Records,
                                          const std::string &KernelName,
                                          unsigned Reps, std::string &Failure) {
  std::vector<KernelRecord> Mine;
  std::size_t Others = 0;
  std::string OtherName;
  for (KernelRecord &R : Records) {
    if (R.Name.empty() || R.Name == KernelName) {
      Mine.push_back(std::move(R));
    } else {
      ++Others;
      OtherName = R.Name;
    }
  }
  if (Mine.size() < Reps) {
    Failure = "CUPTI delivered " + std::to_string(Mine.size()) +
              " record(s) of kernel '" + KernelName + "' for " +
              std::to_string(Reps) + " timed launches";
    if (Others)
      Failure += " (and " + std::to_string(Others) +
                 " of other kernels, e.g. '" + OtherName + "')";
    return {};
  }
  std::stable_sort(Mine.begin(), Mine.end(),
                   [](const KernelRecord &A, const KernelRecord &B) {
                     return A.Start < B.Start;
                   });
  std::vector<double> Micros;
  for (std::size_t I = Mine.size() - Reps; I < Mine.size(); ++I)
    Micros.push_back(Mine[I].micros());
  return Micros;
}

//===----------------------------------------------------------------------===//
// Buffer callbacks
//===----------------------------------------------------------------------===//

namespace {

/// Activity buffer size: ~9,700 kernel records of 216 bytes.
constexpr std::size_t BufferBytes = 2u << 20;
static_assert(BufferBytes % BufferAlignment == 0, "aligned_alloc size");

/// What the callbacks collected since the last take(). Never destroyed.
struct Collector {
  std::mutex M;
  NextRecordFn Next = nullptr;
  BufferScan Scan;
  std::size_t DroppedBuffers = 0;
};
Collector *TheCollector = nullptr;

void requestBuffer(std::uint8_t **Buffer, std::size_t *Size,
                   std::size_t *MaxNumRecords) {
  void *P = std::aligned_alloc(BufferAlignment, BufferBytes);
  *Buffer = static_cast<std::uint8_t *>(P);
  *Size = P ? BufferBytes : 0;
  *MaxNumRecords = 0;
}

void completeBuffer(void *, std::uint32_t, std::uint8_t *Buffer, std::size_t,
                    std::size_t ValidSize) {
  if (Collector *C = TheCollector) {
    try {
      BufferScan S;
      scanBuffer(Buffer, ValidSize, C->Next, S);
      std::lock_guard<std::mutex> Lock(C->M);
      C->Scan.Kernels.insert(C->Scan.Kernels.end(),
                             std::make_move_iterator(S.Kernels.begin()),
                             std::make_move_iterator(S.Kernels.end()));
      C->Scan.OtherRecords += S.OtherRecords;
      C->Scan.InvalidKernelRecords += S.InvalidKernelRecords;
      if (S.Stop != Success)
        C->Scan.Stop = S.Stop;
    } catch (...) {
      // Out of memory in CUPTI's thread: lose this buffer's records (the
      // timer then reports too few records) rather than unwind into CUPTI.
      std::lock_guard<std::mutex> Lock(C->M);
      ++C->DroppedBuffers;
    }
  }
  std::free(Buffer);
}

/// Takes what was collected, leaving the collector empty.
BufferScan takeCollected(std::size_t *DroppedBuffers = nullptr) {
  BufferScan Out;
  if (!TheCollector)
    return Out;
  std::lock_guard<std::mutex> Lock(TheCollector->M);
  std::swap(Out, TheCollector->Scan);
  if (DroppedBuffers)
    *DroppedBuffers = TheCollector->DroppedBuffers;
  TheCollector->DroppedBuffers = 0;
  return Out;
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

template <typename FnPtr>
bool resolve(void *Lib, FnPtr &Slot, const char *Name, std::string &Missing) {
  if (void *Sym = dlsym(Lib, Name)) {
    Slot = reinterpret_cast<FnPtr>(Sym);
    return true;
  }
  Missing = Name;
  return false;
}

bool resolveAll(void *Lib, CuptiTimer::Api &A, std::string &Missing) {
  bool Ok =
      resolve(Lib, A.ActivityRegisterCallbacks,
              "cuptiActivityRegisterCallbacks", Missing) &&
      resolve(Lib, A.ActivityEnable, "cuptiActivityEnable", Missing) &&
      resolve(Lib, A.ActivityDisable, "cuptiActivityDisable", Missing) &&
      resolve(Lib, A.ActivityFlushAll, "cuptiActivityFlushAll", Missing) &&
      resolve(Lib, A.ActivityGetNextRecord, "cuptiActivityGetNextRecord",
              Missing) &&
      resolve(Lib, A.GetResultString, "cuptiGetResultString", Missing);
  if (Ok) {
    std::string Ignored;
    resolve(Lib, A.GetVersion, "cuptiGetVersion", Ignored);
  }
  return Ok;
}

std::string describe(const CuptiTimer::Api &A, Result R) {
  const char *Text = nullptr;
  if (A.GetResultString && A.GetResultString(R, &Text) != Success)
    Text = nullptr;
  std::string S = Text ? Text : "CUPTI error";
  return S + " (" + std::to_string(R) + ")";
}

const char *kindName(std::uint32_t Kind) {
  return Kind == ActivityKindConcurrentKernel ? "CONCURRENT_KERNEL" : "KERNEL";
}

DriverError notFound(const std::vector<std::string> &Log) {
  std::string Msg = "CUPTI not found: set IDXMAP_CUPTI to the path of "
                    "libcupti.so\ntried:";
  for (const std::string &L : Log)
    Msg += "\n  " + L;
  return DriverError{DriverErrorKind::NoDriver, 0, std::move(Msg)};
}

} // namespace

std::string CuptiTimer::enable() {
  std::string Why;
  for (std::uint32_t Kind :
       {ActivityKindConcurrentKernel, ActivityKindKernel}) {
    Result R = Fns->ActivityEnable(Kind);
    if (R == Success) {
      Enabled = true;
      EnabledKind = int(Kind);
      return "";
    }
    if (!Why.empty())
      Why += "; ";
    Why += std::string("cuptiActivityEnable(") + kindName(Kind) +
           ") failed: " + describe(*Fns, R);
  }
  return Why;
}

void CuptiTimer::stop() {
  if (!Enabled)
    return;
  Fns->ActivityDisable(std::uint32_t(EnabledKind));
  Fns->ActivityFlushAll(ActivityFlagFlushForced);
  Enabled = false;
  takeCollected();
}

DriverResult<CuptiTimer *> CuptiTimer::load(const LoadOptions &Opts) {
  // Set once a library was chosen and called: CUPTI cannot be unloaded or
  // registered twice, so every later call gets the same answer.
  static std::optional<DriverResult<CuptiTimer *>> Once;
  if (Once)
    return *Once;

  bool Called = false;
  auto Load = [&]() -> DriverResult<CuptiTimer *> {
    std::vector<std::string> Patterns;
    if (!Opts.LibraryPath.empty())
      Patterns.push_back(Opts.LibraryPath);
    else
      Patterns = searchPatterns(SearchInputs::from(Opts));

    std::vector<std::string> Log;
    std::set<std::string> Seen;
    void *Lib = nullptr;
    Api A;
    std::string Loaded;
    for (const std::string &P : Patterns) {
      std::vector<std::string> Files = expandPattern(P, Seen);
      if (Files.empty() && P.find_first_of("*?[") != std::string::npos)
        Log.push_back(P + ": no match");
      for (const std::string &F : Files) {
        dlerror();
        void *L = dlopen(F.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!L) {
          const char *Why = dlerror();
          Log.push_back(F + ": " + (Why ? Why : "cannot load"));
          continue;
        }
        std::string Missing;
        Api Try;
        if (!resolveAll(L, Try, Missing)) {
          Log.push_back(F + ": loads, but has no " + Missing);
          dlclose(L); // nothing of it was called
          continue;
        }
        Lib = L;
        A = Try;
        Loaded = F;
        break;
      }
      if (Lib)
        break;
    }
    if (!Lib)
      return notFound(Log);

    // The file the loader actually picked (for a bare soname).
    Dl_info Info;
    if (dladdr(reinterpret_cast<void *>(A.ActivityEnable), &Info) &&
        Info.dli_fname && *Info.dli_fname)
      Loaded = Info.dli_fname;

    // The timer lives for the process once it works; on a failure below
    // it and its function table are freed.
    auto Free = [](CuptiTimer *P) { delete P; };
    std::unique_ptr<CuptiTimer, decltype(Free)> Owned(new CuptiTimer(), Free);
    auto Fns = std::make_unique<Api>(A);
    CuptiTimer *T = Owned.get();
    T->Fns = Fns.get();
    T->Path = Loaded;
    T->Log = std::move(Log);
    std::uint32_t Version = 0;
    if (A.GetVersion && A.GetVersion(&Version) == Success)
      T->Version = Version;

    Called = true;
    TheCollector = new Collector();
    TheCollector->Next = A.ActivityGetNextRecord;
    if (Result R = A.ActivityRegisterCallbacks(requestBuffer, completeBuffer);
        R != Success)
      return DriverError{DriverErrorKind::CudaError, R,
                         Loaded + ": cuptiActivityRegisterCallbacks failed: " +
                             describe(A, R)};
    if (std::string Why = T->enable(); !Why.empty())
      return DriverError{DriverErrorKind::CudaError, 0, Loaded + ": " + Why};
    Fns.release();
    return Owned.release();
  };
  DriverResult<CuptiTimer *> Got = Load();
  if (Called)
    Once.emplace(Got);
  return Got;
}

DriverResult<CuptiTimer::Timing> CuptiTimer::timeLaunches(
    CudaDriver &Driver, const std::function<DriverStatus(unsigned Rep)> &Launch,
    unsigned Warmup, unsigned Reps, const std::string &KernelName) {
  Timing T;
  auto Fail = [&](std::string Why) {
    stop();
    T.Failure = std::move(Why);
    return T;
  };
  if (!Enabled)
    if (std::string Why = enable(); !Why.empty())
      return Fail(std::move(Why));

  // Deliver and drop whatever came before (module load, the checked launch).
  if (DriverStatus S = Driver.synchronize(); !S)
    return S.error();
  if (Result R = Fns->ActivityFlushAll(ActivityFlagFlushForced); R != Success)
    return Fail("cuptiActivityFlushAll failed: " + describe(*Fns, R));
  takeCollected();

  for (unsigned I = 0; I < Warmup + Reps; ++I)
    if (DriverStatus S = Launch(I); !S)
      return S.error();
  if (DriverStatus S = Driver.synchronize(); !S)
    return S.error();
  if (Result R = Fns->ActivityFlushAll(ActivityFlagFlushForced); R != Success)
    return Fail("cuptiActivityFlushAll failed: " + describe(*Fns, R));

  std::size_t DroppedBuffers = 0;
  BufferScan Got = takeCollected(&DroppedBuffers);
  std::string Failure;
  T.Micros = timedDurations(std::move(Got.Kernels), KernelName, Reps, Failure);
  if (!Failure.empty()) {
    if (Got.InvalidKernelRecords)
      Failure += ", " + std::to_string(Got.InvalidKernelRecords) +
                 " kernel record(s) without timestamps";
    if (Got.Stop != Success)
      Failure += ", a buffer scan stopped at " + describe(*Fns, Got.Stop);
    if (DroppedBuffers)
      Failure += ", " + std::to_string(DroppedBuffers) + " buffer(s) lost";
    return Fail(std::move(Failure));
  }
  return T;
}
