/*===- idxmap-c/Emit.h - C API: HLO fusions to PTX ----------------*- C -*-===*\
|*                                                                            *|
|* Part of idxmap. Compile the fusions of an HLO module to one PTX module and *|
|* the JSON sidecar that describes its kernels (the C++ API:                  *|
|* idxmap/Emit.h, idxmap/KernelInfo.h). No GPU is needed.                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef IDXMAP_C_EMIT_H
#define IDXMAP_C_EMIT_H

#include "idxmap-c/Core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Emission options, owned by the caller (idxmap_emit_options_destroy).
 *  The defaults are those of `idxmap emit`: sm_90, PTX 8.5, the fast
 *  pipeline, approximate math, fusions no emitter takes left out. */
typedef struct idxmap_emit_options idxmap_emit_options;

/** New options with the defaults, or NULL when out of memory. */
IDXMAP_C_API idxmap_emit_options *idxmap_emit_options_create(void);

/** Frees options (NULL is ignored). */
IDXMAP_C_API void idxmap_emit_options_destroy(idxmap_emit_options *options);

/** The target GPU: "sm_80", "sm_90" or "sm_90a" (checked by idxmap_emit). */
IDXMAP_C_API void idxmap_emit_options_set_gpu(idxmap_emit_options *options,
                                              const char *gpu);

/** The PTX ISA version times ten (85: `.version 8.5`; 0: LLVM's oldest for
 *  the GPU). */
IDXMAP_C_API void
idxmap_emit_options_set_ptx_version(idxmap_emit_options *options,
                                    unsigned version);

/** 1: libdevice's tanh/exp/log (needs the CUDA toolkit's libdevice). */
IDXMAP_C_API void
idxmap_emit_options_set_precise_math(idxmap_emit_options *options, int precise);

/** Only the fusion named \p name (NULL or "": every fusion). */
IDXMAP_C_API void idxmap_emit_options_set_fusion(idxmap_emit_options *options,
                                                 const char *name);

/** 1 (the default): fusions no emitter takes are left out and listed
 *  (idxmap_emit_result_num_skipped); 0: the first one fails the call. */
IDXMAP_C_API void
idxmap_emit_options_set_skip_unsupported(idxmap_emit_options *options,
                                         int skip);

/** Appends an option for LLVM itself (e.g. "-time-passes"). None by
 *  default, and then LLVM's process-wide options are left alone, as a host
 *  that embeds LLVM needs; when some are given, the first emission parses
 *  them into LLVM's global options (once per process). */
IDXMAP_C_API void idxmap_emit_options_add_llvm_arg(idxmap_emit_options *options,
                                                   const char *arg);

/** The PTX and the sidecar of one module, owned by the caller
 *  (idxmap_emit_result_destroy). */
typedef struct idxmap_emit_result idxmap_emit_result;

/** Parses \p hlo_text and emits its fusions (\p options NULL: the defaults).
 *  \p hlo_path is recorded as "hlo" in the sidecar, made absolute (NULL: not
 *  recorded).
 *  NULL and *error when the module does not parse, an option is invalid, or
 *  no fusion could be emitted.
 *
 *  Example:
 *    idxmap_emit_result *r = idxmap_emit(text, "gelu.hlo", NULL, &err);
 *    fputs(idxmap_emit_result_ptx(r), f);  // .visible .entry fusion(...
 *    idxmap_emit_result_destroy(r); */
IDXMAP_C_API idxmap_emit_result *idxmap_emit(const char *hlo_text,
                                             const char *hlo_path,
                                             const idxmap_emit_options *options,
                                             char **error);

/** Frees a result (NULL is ignored). */
IDXMAP_C_API void idxmap_emit_result_destroy(idxmap_emit_result *result);

/** The PTX text (owned by the result). */
IDXMAP_C_API const char *
idxmap_emit_result_ptx(const idxmap_emit_result *result);

/** The JSON sidecar, as `idxmap emit -o out.ptx` writes to out.json: each
 *  kernel's name, grid, block, shared bytes and parameters (owned by the
 *  result). */
IDXMAP_C_API const char *
idxmap_emit_result_sidecar_json(const idxmap_emit_result *result);

/** The number of kernels in the PTX. */
IDXMAP_C_API size_t
idxmap_emit_result_num_kernels(const idxmap_emit_result *result);

/** The number of fusions left out, and the name and reason of each (owned by
 *  the result; NULL when \p i is out of range). */
IDXMAP_C_API size_t
idxmap_emit_result_num_skipped(const idxmap_emit_result *result);
IDXMAP_C_API const char *
idxmap_emit_result_skipped_name(const idxmap_emit_result *result, size_t i);
IDXMAP_C_API const char *
idxmap_emit_result_skipped_reason(const idxmap_emit_result *result, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* IDXMAP_C_EMIT_H */
