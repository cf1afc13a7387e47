//===- capi/Handles.h - What the C API's handles hold -----------*- C++ -*-===//
//
// Part of idxmap. The opaque structs of include/idxmap-c/ and the helpers
// every entry point uses: strings handed to C, errors, and a guard that
// turns a C++ exception (out of memory) into an error instead of letting it
// cross the C boundary.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CAPI_HANDLES_H
#define IDXMAP_CAPI_HANDLES_H

#include "idxmap-c/idxmap.h"

#include "idxmap/Context.h"
#include "idxmap/Emit.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/IndexingMap.h"

#include <exception>
#include <memory>
#include <string>
#include <vector>

// Maps and indexing results share their context, so that the order in which
// a garbage-collected binding (Python) frees handles does not matter.
struct idxmap_context {
  std::shared_ptr<idxmap::Context> Ctx;
};

struct idxmap_map {
  std::shared_ptr<idxmap::Context> Ctx;
  idxmap::IndexingMap Map;
};

struct idxmap_hlo_module {
  std::shared_ptr<idxmap::HloModule> Module;
};

struct idxmap_hlo_indexing {
  std::shared_ptr<idxmap::Context> Ctx;
  // The maps' runtime bindings point into the module.
  std::shared_ptr<idxmap::HloModule> Module;
  idxmap::InstructionIndexing Indexing;
};

struct idxmap_emit_options {
  idxmap::EmitOptions Options;
};

struct idxmap_emit_result {
  std::string Ptx;
  std::string SidecarJson;
  size_t NumKernels = 0;
  std::vector<std::string> SkippedNames;
  std::vector<std::string> SkippedReasons;
};

namespace idxmap {
namespace capi {

/// A copy of \p S that C frees with idxmap_string_free (NULL when out of
/// memory).
char *copyString(const std::string &S);

/// Stores a copy of \p Message in \p *Error when Error is not NULL.
void setError(char **Error, const std::string &Message);

/// Runs \p F, whose result is returned; an exception becomes \p Failed and
/// the error "idxmap: internal error: WHAT".
template <typename T, typename Fn> T guarded(char **Error, T Failed, Fn &&F) {
  try {
    return F();
  } catch (const std::exception &E) {
    setError(Error, std::string("idxmap: internal error: ") + E.what());
  } catch (...) {
    setError(Error, "idxmap: internal error");
  }
  return Failed;
}

} // namespace capi
} // namespace idxmap

#endif // IDXMAP_CAPI_HANDLES_H
