//===- capi/Core.cpp - C API: version, strings, contexts ------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "Handles.h"

#include "idxmap/Version.h"

#include <cstdlib>
#include <cstring>

using namespace idxmap;

char *capi::copyString(const std::string &S) {
  char *R = static_cast<char *>(std::malloc(S.size() + 1));
  if (R)
    std::memcpy(R, S.c_str(), S.size() + 1);
  return R;
}

void capi::setError(char **Error, const std::string &Message) {
  if (Error)
    *Error = copyString(Message);
}

const char *idxmap_version(void) { return IDXMAP_VERSION_STRING; }

void idxmap_string_free(char *S) { std::free(S); }

idxmap_context *idxmap_context_create(void) {
  return capi::guarded<idxmap_context *>(nullptr, nullptr, [] {
    return new idxmap_context{std::make_shared<Context>()};
  });
}

void idxmap_context_destroy(idxmap_context *Ctx) { delete Ctx; }
