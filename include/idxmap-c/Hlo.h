/*===- idxmap-c/Hlo.h - C API: HLO modules and their indexing -----*- C -*-===*\
|*                                                                            *|
|* Part of idxmap. Parse an HLO module and ask for the indexing maps of an    *|
|* instruction's output to its operands (the C++ API: idxmap/Hlo.h,           *|
|* idxmap/HloIndexing.h).                                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef IDXMAP_C_HLO_H
#define IDXMAP_C_HLO_H

#include "idxmap-c/Core.h"
#include "idxmap-c/Map.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A parsed HLO module, owned by the caller (idxmap_hlo_module_destroy).
 *  Indexing results keep it alive. */
typedef struct idxmap_hlo_module idxmap_hlo_module;

/** Parses HLO text (XLA's syntax; idxmap/Hlo.h). \p file_name names the
 *  input in diagnostics (NULL: "<input>"). NULL and *error on failure.
 *
 *  Example:
 *    idxmap_hlo_module *m = idxmap_hlo_module_parse(
 *        "HloModule m\nENTRY e {\n  p = f32[4,8] parameter(0)\n"
 *        "  ROOT t = f32[8,4] transpose(p), dimensions={1,0}\n}\n",
 *        "t.hlo", &err); */
IDXMAP_C_API idxmap_hlo_module *
idxmap_hlo_module_parse(const char *text, const char *file_name, char **error);

/** Frees a module (NULL is ignored). */
IDXMAP_C_API void idxmap_hlo_module_destroy(idxmap_hlo_module *module);

/** The module in canonical HLO text, freed with idxmap_string_free. */
IDXMAP_C_API char *idxmap_hlo_module_print(const idxmap_hlo_module *module);

/** The output-to-input indexing of one instruction: for each operand, a set
 *  of maps (usually one; none when the operand is not read; one UNDEFINED
 *  map when unknown). Owned by the caller (idxmap_hlo_indexing_destroy). */
typedef struct idxmap_hlo_indexing idxmap_hlo_indexing;

/** The maps from output \p output_id of the instruction named \p instruction
 *  (in any computation; NULL: the ENTRY root) to each of its operands, made
 *  in \p ctx. NULL and *error when there is no such instruction or output.
 *
 *  Example: for the transpose above, operand 0's one map is
 *  "(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]". */
IDXMAP_C_API idxmap_hlo_indexing *idxmap_hlo_output_to_input_indexing(
    idxmap_context *ctx, const idxmap_hlo_module *module,
    const char *instruction, int64_t output_id, char **error);

/** Frees an indexing result (NULL is ignored). */
IDXMAP_C_API void idxmap_hlo_indexing_destroy(idxmap_hlo_indexing *indexing);

/** The instruction's operand count. */
IDXMAP_C_API size_t
idxmap_hlo_indexing_num_operands(const idxmap_hlo_indexing *indexing);

/** The number of maps of operand \p operand (0 when out of range). */
IDXMAP_C_API size_t idxmap_hlo_indexing_num_maps(
    const idxmap_hlo_indexing *indexing, size_t operand);

/** A new map (the caller's: idxmap_map_destroy): map \p k of operand
 *  \p operand, or NULL when either is out of range. */
IDXMAP_C_API idxmap_map *
idxmap_hlo_indexing_map(const idxmap_hlo_indexing *indexing, size_t operand,
                        size_t k);

/** XLA's text of the whole indexing (`operand id = N` blocks, runtime
 *  variables' sources), as `idxmap indexing` prints it; freed with
 *  idxmap_string_free. */
IDXMAP_C_API char *
idxmap_hlo_indexing_print(const idxmap_hlo_indexing *indexing);

#ifdef __cplusplus
}
#endif

#endif /* IDXMAP_C_HLO_H */
