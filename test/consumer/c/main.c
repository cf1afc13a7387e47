/* Simplifies a map and emits a fusion through the installed C API. */
#include "idxmap-c/idxmap.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  char *err = NULL;
  idxmap_context *ctx = idxmap_context_create();
  idxmap_map *m = idxmap_map_parse(
      ctx, "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 7]", &err);
  if (!m) {
    fprintf(stderr, "%s", err);
    idxmap_string_free(err);
    return 1;
  }
  idxmap_map_simplify(m, 0);
  char *text = idxmap_map_print(m, IDXMAP_FORMAT_XLA);
  printf("idxmap %s\n%s\n", idxmap_version(), text);
  idxmap_string_free(text);
  idxmap_map_destroy(m);
  idxmap_context_destroy(ctx);

  idxmap_emit_result *r =
      idxmap_emit("HloModule m\n"
                  "f {\n  p = f32[256] parameter(0)\n"
                  "  ROOT n = f32[256] negate(p)\n}\n"
                  "ENTRY e {\n  a = f32[256] parameter(0)\n"
                  "  ROOT r = f32[256] fusion(a), kind=kLoop, calls=f\n}\n",
                  "neg.hlo", NULL, &err);
  if (!r) {
    fprintf(stderr, "%s", err);
    idxmap_string_free(err);
    return 1;
  }
  printf("kernels: %zu, ptx: %s\n", idxmap_emit_result_num_kernels(r),
         strstr(idxmap_emit_result_ptx(r), ".entry r(") ? "has r" : "no r");
  idxmap_emit_result_destroy(r);
  return 0;
}
