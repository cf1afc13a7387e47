/*===- idxmap-c/idxmap.h - The whole C API ------------------------*- C -*-===*\
|*                                                                            *|
|* Part of idxmap. Includes every header of the C API (docs/C_API.md):        *|
|* link libidxmap-c.so (CMake: idxmap::c; pkg-config: idxmap-c), nothing      *|
|* else.                                                                      *|
|*                                                                            *|
|* Example:                                                                   *|
|*   #include "idxmap-c/idxmap.h"                                             *|
|*   idxmap_context *ctx = idxmap_context_create();                           *|
|*   idxmap_map *m = idxmap_map_parse(ctx, "(d0) -> (d0 mod 4), domain: "     *|
|*                                    "d0 in [0, 3]", NULL);                  *|
|*   idxmap_map_simplify(m, 0);                                               *|
|*   char *s = idxmap_map_print(m, IDXMAP_FORMAT_XLA); // (d0) -> (d0), ...   *|
|*   idxmap_string_free(s);                                                   *|
|*   idxmap_map_destroy(m);                                                   *|
|*   idxmap_context_destroy(ctx);                                             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef IDXMAP_C_IDXMAP_H
#define IDXMAP_C_IDXMAP_H

#include "idxmap-c/Core.h"
#include "idxmap-c/Emit.h"
#include "idxmap-c/Hlo.h"
#include "idxmap-c/Map.h"

#endif /* IDXMAP_C_IDXMAP_H */
