/*===- idxmap-c/Map.h - C API: indexing maps ----------------------*- C -*-===*\
|*                                                                            *|
|* Part of idxmap. Parse, print, simplify, compose and query indexing maps    *|
|* (the C++ API: idxmap/IndexingMap.h, Parse.h, Simplify.h, Compose.h,        *|
|* Domain.h, Exact.h).                                                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef IDXMAP_C_MAP_H
#define IDXMAP_C_MAP_H

#include "idxmap-c/Core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An indexing map, owned by the caller (idxmap_map_destroy). */
typedef struct idxmap_map idxmap_map;

/** A closed interval [lo, hi] of int64 values. */
typedef struct idxmap_interval {
  int64_t lo;
  int64_t hi;
} idxmap_interval;

/** How a map prints: XLA's syntax or MLIR's affine_map. */
typedef enum idxmap_map_format {
  IDXMAP_FORMAT_XLA = 0,
  IDXMAP_FORMAT_MLIR = 1,
} idxmap_map_format;

/** Parses one map in XLA or MLIR syntax (idxmap/Parse.h). Returns NULL and
 *  sets *error (`\<input\>:1:10: error: unknown identifier 'd1'` with the
 *  line and a caret) when it does not parse.
 *
 *  Example:
 *    idxmap_map *m = idxmap_map_parse(
 *        ctx, "(d0) -> (d0 mod 2), domain: d0 in [0, 3]", &err); */
IDXMAP_C_API idxmap_map *idxmap_map_parse(idxmap_context *ctx, const char *text,
                                          char **error);

/** Frees a map (NULL is ignored). */
IDXMAP_C_API void idxmap_map_destroy(idxmap_map *map);

/** A copy of \p map in the same context. */
IDXMAP_C_API idxmap_map *idxmap_map_clone(const idxmap_map *map);

/** The map's text (no trailing newline), freed with idxmap_string_free.
 *
 *  Example: "(d0) -> (d0 mod 2), domain: d0 in [0, 3]" for IDXMAP_FORMAT_XLA,
 *  "affine_map<(d0) -> (d0 mod 2)>" for IDXMAP_FORMAT_MLIR. */
IDXMAP_C_API char *idxmap_map_print(const idxmap_map *map,
                                    idxmap_map_format format);

/** Counts of dims, symbols (range then runtime variables) and results. */
IDXMAP_C_API unsigned idxmap_map_num_dims(const idxmap_map *map);
IDXMAP_C_API unsigned idxmap_map_num_symbols(const idxmap_map *map);
IDXMAP_C_API unsigned idxmap_map_num_results(const idxmap_map *map);

/** 1 for an UNDEFINED map (unknown indexing), else 0. */
IDXMAP_C_API int idxmap_map_is_undefined(const idxmap_map *map);

/** Simplifies \p map in place (idxmap/Simplify.h); with \p remove_unused,
 *  unused dims and symbols are removed afterwards. Returns 1 when the map
 *  changed, else 0.
 *
 *  Example: "(d0)[s0] -> ((d0 * 4 + s0) mod 4), domain: d0 in [0, 9],
 *  s0 in [0, 3]" becomes "(d0)[s0] -> (s0), domain: ...". */
IDXMAP_C_API int idxmap_map_simplify(idxmap_map *map, int remove_unused);

/** The map from first's domain to second's results (second after first;
 *  idxmap/Compose.h), not simplified. NULL and *error when the maps come
 *  from different contexts or first's results do not match second's dims.
 *
 *  Example: first "(d0) -> (d0 * 4), domain: d0 in [0, 7]", second
 *  "(d0) -> (d0 floordiv 2), domain: d0 in [0, 31]" compose to
 *  "(d0) -> ((d0 * 4) floordiv 2), domain: d0 in [0, 7]" (d0 * 2 once
 *  simplified). */
IDXMAP_C_API idxmap_map *idxmap_map_compose(const idxmap_map *first,
                                            const idxmap_map *second,
                                            char **error);

/** Emptiness of a map's domain: the fast check (0), which may answer
 *  IDXMAP_EMPTINESS_UNKNOWN, or isl's exact answer (1), which is unknown only
 *  past its budget. An UNDEFINED map is unknown. */
typedef enum idxmap_emptiness {
  IDXMAP_NON_EMPTY = 0,
  IDXMAP_EMPTY = 1,
  IDXMAP_EMPTINESS_UNKNOWN = 2,
} idxmap_emptiness;

/** Example: "(d0) -> (d0), domain: d0 in [0, 99], d0 mod 8 + 5 in [50, 54]"
 *  is IDXMAP_EMPTY. */
IDXMAP_C_API idxmap_emptiness idxmap_map_is_empty(const idxmap_map *map,
                                                  int exact);

/** Bounds of the expression \p expr (in the map's variable names) over the
 *  map's domain, in *out. As `idxmap bounds`: the map and the expression are
 *  simplified first (exact = 0; sound, maybe wider than the true range), or
 *  the exact minimum and maximum from isl (exact = 1). Returns IDXMAP_OK
 *  (an empty domain gives lo > hi), IDXMAP_UNKNOWN (exact past its budget)
 *  or IDXMAP_ERROR (the expression does not parse, or an UNDEFINED map).
 *
 *  Example: over "(d0)[s0] -> (d0), domain: d0 in [0, 15], s0 in [0, 3]",
 *  "d0 mod 4 + s0" gives [0, 6]. */
IDXMAP_C_API idxmap_status idxmap_map_expr_bounds(const idxmap_map *map,
                                                  const char *expr, int exact,
                                                  idxmap_interval *out,
                                                  char **error);

/** Bounds of result \p index of the map, as idxmap_map_expr_bounds.
 *
 *  Example: result 0 of "(d0) -> (d0 floordiv 4), domain: d0 in [0, 15]" is
 *  [0, 3]. */
IDXMAP_C_API idxmap_status idxmap_map_result_bounds(const idxmap_map *map,
                                                    unsigned index, int exact,
                                                    idxmap_interval *out,
                                                    char **error);

#ifdef __cplusplus
}
#endif

#endif /* IDXMAP_C_MAP_H */
