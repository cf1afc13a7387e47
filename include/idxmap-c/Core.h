/*===- idxmap-c/Core.h - C API: version, strings, contexts --------*- C -*-===*\
|*                                                                            *|
|* Part of idxmap. The C API's common ground: the version, the strings it     *|
|* returns, status codes and contexts. Every handle is opaque and owned by    *|
|* the caller, who frees it with its _destroy function; every string the API  *|
|* returns as `char *` is the caller's, freed with idxmap_string_free.        *|
|* Functions that can fail take a last `char **error`: on failure *error      *|
|* receives the message (the caller frees it), unless error is NULL.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef IDXMAP_C_CORE_H
#define IDXMAP_C_CORE_H

#include <stddef.h>
#include <stdint.h>

/* The library exports these functions and nothing else. */
#if defined(IDXMAP_C_BUILDING)
#define IDXMAP_C_API __attribute__((visibility("default")))
#else
#define IDXMAP_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The library's version, "MAJOR.MINOR.PATCH" (static storage: do not free).
 *  Compare with IDXMAP_VERSION_STRING of idxmap/Version.h to check that a
 *  program runs with the library it was built against.
 *
 *  Example: printf("%s\n", idxmap_version());   // 0.1.0 */
IDXMAP_C_API const char *idxmap_version(void);

/** Frees a string the API returned (NULL is ignored).
 *
 *  Example:
 *    char *err = NULL;
 *    if (!idxmap_map_parse(ctx, "(d0) -> (d1)", &err)) {
 *      fprintf(stderr, "%s", err);
 *      idxmap_string_free(err);
 *    } */
IDXMAP_C_API void idxmap_string_free(char *s);

/** The outcome of a query that may fail or not know. */
typedef enum idxmap_status {
  IDXMAP_OK = 0,      /**< answered */
  IDXMAP_ERROR = 1,   /**< bad input or arguments: see the error string */
  IDXMAP_UNKNOWN = 2, /**< could not be decided (e.g. an exact budget) */
} idxmap_status;

/** Owns the expressions of the maps made in it (idxmap::Context). One thread
 *  at a time may use a context and its maps; use one context per thread.
 *  Maps keep their context alive: destroying it while maps remain is safe,
 *  it is freed with the last of them. */
typedef struct idxmap_context idxmap_context;

/** A new context, or NULL when out of memory.
 *
 *  Example:
 *    idxmap_context *ctx = idxmap_context_create();
 *    ...
 *    idxmap_context_destroy(ctx); */
IDXMAP_C_API idxmap_context *idxmap_context_create(void);

/** Releases the caller's reference (NULL is ignored). */
IDXMAP_C_API void idxmap_context_destroy(idxmap_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* IDXMAP_C_CORE_H */
