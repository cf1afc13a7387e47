//===- capi/Emit.cpp - C API: HLO fusions to PTX --------------------------===//
//
// Part of idxmap. What `idxmap emit -o out.ptx` writes, without the files.
//
//===----------------------------------------------------------------------===//
#include "Handles.h"

#include "idxmap/KernelInfo.h"

using namespace idxmap;
using capi::guarded;
using capi::setError;

idxmap_emit_options *idxmap_emit_options_create(void) {
  return guarded<idxmap_emit_options *>(nullptr, nullptr, [] {
    auto *O = new idxmap_emit_options;
    // As `idxmap emit`: a whole optimized module emits what it can.
    O->Options.SkipUnsupported = true;
    return O;
  });
}

void idxmap_emit_options_destroy(idxmap_emit_options *Options) {
  delete Options;
}

void idxmap_emit_options_set_gpu(idxmap_emit_options *Options,
                                 const char *Gpu) {
  if (Options && Gpu)
    Options->Options.Target.Gpu = Gpu;
}

void idxmap_emit_options_set_ptx_version(idxmap_emit_options *Options,
                                         unsigned Version) {
  if (Options)
    Options->Options.Target.PtxVersion = Version;
}

void idxmap_emit_options_set_precise_math(idxmap_emit_options *Options,
                                          int Precise) {
  if (Options)
    Options->Options.Target.PreciseMath = Precise != 0;
}

void idxmap_emit_options_set_fusion(idxmap_emit_options *Options,
                                    const char *Name) {
  if (Options)
    Options->Options.OnlyFusion = Name ? Name : "";
}

void idxmap_emit_options_set_skip_unsupported(idxmap_emit_options *Options,
                                              int Skip) {
  if (Options)
    Options->Options.SkipUnsupported = Skip != 0;
}

void idxmap_emit_options_add_llvm_arg(idxmap_emit_options *Options,
                                      const char *Arg) {
  if (Options && Arg)
    Options->Options.Target.LlvmArgs.push_back(Arg);
}

idxmap_emit_result *idxmap_emit(const char *HloText, const char *HloPath,
                                const idxmap_emit_options *Options,
                                char **Error) {
  if (!HloText) {
    setError(Error, "idxmap_emit: NULL HLO text");
    return nullptr;
  }
  return guarded<idxmap_emit_result *>(
      Error, nullptr, [&]() -> idxmap_emit_result * {
        std::string Name = HloPath && *HloPath ? HloPath : "<input>";
        auto M = parseHloModule(HloText, Name);
        if (!M) {
          setError(Error, M.error().str());
          return nullptr;
        }
        EmitOptions Defaults;
        Defaults.SkipUnsupported = true;
        auto R = emitModule(**M, Options ? Options->Options : Defaults);
        if (!R) {
          setError(Error, R.error().Loc.File.empty()
                              ? Name + ": error: " + R.error().Message
                              : R.error().str());
          return nullptr;
        }
        if (R->Kernels.empty()) {
          // Nothing emitted: every fusion's reason is the error.
          std::string Why;
          for (const SkippedFusion &S : R->Skipped)
            Why += S.Why.str();
          setError(Error,
                   Why.empty() ? Name + ": error: no kernel emitted" : Why);
          return nullptr;
        }
        auto *Result = new idxmap_emit_result;
        Result->Ptx = std::move(R->Ptx);
        // No sidecar file yet: "hlo" is recorded absolute.
        Result->SidecarJson = sidecarToJson(
            sidecarOf(**M, *R, Options ? Options->Options : Defaults,
                      HloPath ? HloPath : ""));
        Result->NumKernels = R->Kernels.size();
        for (const SkippedFusion &S : R->Skipped) {
          Result->SkippedNames.push_back(S.Fusion->name());
          Result->SkippedReasons.push_back(S.Why.Message);
        }
        return Result;
      });
}

void idxmap_emit_result_destroy(idxmap_emit_result *Result) { delete Result; }

const char *idxmap_emit_result_ptx(const idxmap_emit_result *Result) {
  return Result ? Result->Ptx.c_str() : nullptr;
}

const char *idxmap_emit_result_sidecar_json(const idxmap_emit_result *Result) {
  return Result ? Result->SidecarJson.c_str() : nullptr;
}

size_t idxmap_emit_result_num_kernels(const idxmap_emit_result *Result) {
  return Result ? Result->NumKernels : 0;
}

size_t idxmap_emit_result_num_skipped(const idxmap_emit_result *Result) {
  return Result ? Result->SkippedNames.size() : 0;
}

const char *idxmap_emit_result_skipped_name(const idxmap_emit_result *Result,
                                            size_t I) {
  if (!Result || I >= Result->SkippedNames.size())
    return nullptr;
  return Result->SkippedNames[I].c_str();
}

const char *idxmap_emit_result_skipped_reason(const idxmap_emit_result *Result,
                                              size_t I) {
  if (!Result || I >= Result->SkippedReasons.size())
    return nullptr;
  return Result->SkippedReasons[I].c_str();
}
