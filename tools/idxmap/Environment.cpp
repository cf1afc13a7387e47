//===- Environment.cpp - The tool's environment variables -----------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "Environment.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace idxmap {
namespace cli {

/// The variable's value, "" when unset.
static std::string env(const char *Name) {
  const char *V = std::getenv(Name);
  return V ? V : "";
}

void tuningFromEnvironment(Tuning &T) {
  for (const TuningKnobInfo &K : tuningTable()) {
    std::string V = env(K.Name);
    if (V.empty())
      continue;
    char *End = nullptr;
    long long X = std::strtoll(V.c_str(), &End, 10);
    // A debugging aid, as when the emitters read it: values below the
    // range are ignored, values above it clamped.
    if (End && *End == 0 && X >= K.Lo)
      T.*(K.Field) = std::min<int64_t>(X, K.Hi);
  }
}

std::optional<std::string> targetOptionsFromEnvironment(TargetOptions &T) {
  std::istringstream Args(env("IDXMAP_LLVM_ARGS"));
  for (std::string A; Args >> A;)
    T.LlvmArgs.push_back(A);
  T.FastPipeline = env("IDXMAP_FAST_PIPELINE");
  std::string Skip = env("IDXMAP_SKIP_PASSES");
  for (size_t Start = 0; Start < Skip.size();) {
    size_t Comma = std::min(Skip.find(',', Start), Skip.size());
    if (Comma > Start)
      T.SkipPasses.push_back(Skip.substr(Start, Comma - Start));
    Start = Comma + 1;
  }
  std::string Level = env("IDXMAP_BACKEND_OPT");
  if (!Level.empty()) {
    if (Level.size() != 1 || Level[0] < '0' || Level[0] > '3')
      return "IDXMAP_BACKEND_OPT: expected 0, 1, 2 or 3, got '" + Level + "'";
    T.BackEndOptLevel = Level[0] - '0';
  }
  return std::nullopt;
}

std::string tuneCachePathFromEnvironment() { return env("IDXMAP_TUNE_CACHE"); }

runtime::CudaDriver::OpenOptions driverOptionsFromEnvironment() {
  runtime::CudaDriver::OpenOptions O;
  O.LibraryPath = env("IDXMAP_LIBCUDA");
  return O;
}

runtime::CuptiTimer::LoadOptions cuptiOptionsFromEnvironment() {
  runtime::CuptiTimer::LoadOptions O;
  O.FirstPath = env("IDXMAP_CUPTI");
  O.Home = env("HOME");
  O.VirtualEnv = env("VIRTUAL_ENV");
  O.CondaPrefix = env("CONDA_PREFIX");
  return O;
}

} // namespace cli
} // namespace idxmap
