//===- Environment.h - The tool's environment variables ---------*- C++ -*-===//
//
// Part of idxmap. The libraries read no environment variables; the tool
// reads them here, in one place, and fills the libraries' options. Each
// variable keeps the meaning it had when the libraries read it (tools/CLI.md
// lists them).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TOOLS_ENVIRONMENT_H
#define IDXMAP_TOOLS_ENVIRONMENT_H

#include "idxmap/Runtime.h"
#include "idxmap/Target.h"
#include "idxmap/Tuning.h"

#include <optional>
#include <string>

namespace idxmap {
namespace cli {

/// Sets each knob of \p T (tuningTable()) whose environment variable (the
/// knob's name) holds a whole number at or above the knob's low end, to
/// that number clamped to its high end; unset, empty, malformed or lower
/// values leave the knob unset. Called before `--tune` is parsed, which
/// wins.
///
/// Example: with IDXMAP_RED_ROW_LANES=5000 in the environment,
/// `T.RedRowLanes == 1024`; with IDXMAP_RED_COL_SPLIT=0, unset.
void tuningFromEnvironment(Tuning &T);

/// Sets the experiments of \p T: LlvmArgs from IDXMAP_LLVM_ARGS (split at
/// blanks), FastPipeline from IDXMAP_FAST_PIPELINE, SkipPasses from
/// IDXMAP_SKIP_PASSES (comma-separated), BackEndOptLevel from
/// IDXMAP_BACKEND_OPT. Returns the error for an IDXMAP_BACKEND_OPT other
/// than 0, 1, 2 or 3 (an error of the run, exit 1, as when the library
/// read it): "IDXMAP_BACKEND_OPT: expected 0, 1, 2 or 3, got '7'".
std::optional<std::string> targetOptionsFromEnvironment(TargetOptions &T);

/// The tune cache of IDXMAP_TUNE_CACHE (empty when unset): the default of
/// `--tune-cache` for emit, run and analyze.
std::string tuneCachePathFromEnvironment();

/// The driver library of IDXMAP_LIBCUDA (empty when unset: libcuda.so.1).
runtime::CudaDriver::OpenOptions driverOptionsFromEnvironment();

/// Where CUPTI is looked for: IDXMAP_CUPTI first, then under HOME,
/// VIRTUAL_ENV and CONDA_PREFIX among the others.
runtime::CuptiTimer::LoadOptions cuptiOptionsFromEnvironment();

} // namespace cli
} // namespace idxmap

#endif // IDXMAP_TOOLS_ENVIRONMENT_H
