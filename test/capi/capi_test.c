/* The C API from C: every entry point once, with its ownership rules
 * (run under ctest as capi.c; test/consumer builds it against an install).
 * Exits 0 when every check holds; prints the first failing one. */
#include "idxmap-c/idxmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int Failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++Failures;                                                              \
    }                                                                          \
  } while (0)

/* Checks that \p s equals \p want, then frees \p s. */
static void checkString(char *s, const char *want, int line) {
  if (!s || strcmp(s, want) != 0) {
    fprintf(stderr, "line %d: got '%s', want '%s'\n", line, s ? s : "(null)",
            want);
    ++Failures;
  }
  idxmap_string_free(s);
}
#define CHECK_STRING(s, want) checkString((s), (want), __LINE__)

static const char *Transpose = "HloModule m\n"
                               "ENTRY e {\n"
                               "  p = f32[4,8] parameter(0)\n"
                               "  ROOT t = f32[8,4] transpose(p), "
                               "dimensions={1,0}\n"
                               "}\n";

static const char *Gelu = "HloModule m\n"
                          "f {\n"
                          "  p = f32[1024] parameter(0)\n"
                          "  ROOT e = f32[1024] exponential(p)\n"
                          "}\n"
                          "ENTRY e {\n"
                          "  a = f32[1024] parameter(0)\n"
                          "  ROOT r = f32[1024] fusion(a), kind=kLoop, "
                          "calls=f\n"
                          "}\n";

static void testMaps(void) {
  char *err = NULL;
  idxmap_context *ctx = idxmap_context_create();
  CHECK(ctx != NULL);

  idxmap_map *m = idxmap_map_parse(
      ctx,
      "(d0)[s0] -> ((d0 * 4 + s0) mod 4), domain: d0 in [0, 9], "
      "s0 in [0, 3]",
      &err);
  CHECK(m && !err);
  CHECK(idxmap_map_num_dims(m) == 1 && idxmap_map_num_symbols(m) == 1 &&
        idxmap_map_num_results(m) == 1 && !idxmap_map_is_undefined(m));
  CHECK(idxmap_map_simplify(m, 0) == 1);
  CHECK_STRING(idxmap_map_print(m, IDXMAP_FORMAT_XLA),
               "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 3]");
  CHECK(idxmap_map_simplify(m, 1) == 1); /* d0 is unused */
  CHECK_STRING(idxmap_map_print(m, IDXMAP_FORMAT_MLIR),
               "affine_map<()[s0] -> (s0)>");

  /* A parse error: the message has the location and a caret. */
  idxmap_map *bad = idxmap_map_parse(ctx, "(d0) -> (d1)", &err);
  CHECK(bad == NULL && err != NULL);
  CHECK(err && strstr(err, "unknown identifier 'd1'") != NULL);
  idxmap_string_free(err);
  err = NULL;
  CHECK(idxmap_map_parse(ctx, "(d0) -> (", NULL) == NULL); /* no error out */

  /* compose, then simplify. */
  idxmap_map *first =
      idxmap_map_parse(ctx, "(d0) -> (d0 * 4), domain: d0 in [0, 7]", NULL);
  idxmap_map *second = idxmap_map_parse(
      ctx, "(d0) -> (d0 floordiv 2), domain: d0 in [0, 31]", NULL);
  idxmap_map *c = idxmap_map_compose(first, second, &err);
  CHECK(c && !err);
  idxmap_map_simplify(c, 0);
  CHECK_STRING(idxmap_map_print(c, IDXMAP_FORMAT_XLA),
               "(d0) -> (d0 * 2), domain: d0 in [0, 7]");
  CHECK(idxmap_map_compose(first, m, &err) == NULL); /* 1 result, 0 dims */
  CHECK(err && strstr(err, "1 results, the second 0 dims"));
  idxmap_string_free(err);
  err = NULL;

  /* Maps of another context do not mix. */
  idxmap_context *other = idxmap_context_create();
  idxmap_map *o =
      idxmap_map_parse(other, "(d0) -> (d0), domain: d0 in [0, 3]", NULL);
  CHECK(idxmap_map_compose(first, o, &err) == NULL && err);
  idxmap_string_free(err);
  err = NULL;
  /* The context goes first: the map keeps it alive. */
  idxmap_context_destroy(other);
  CHECK_STRING(idxmap_map_print(o, IDXMAP_FORMAT_XLA),
               "(d0) -> (d0), domain: d0 in [0, 3]");
  idxmap_map_destroy(o);

  /* Bounds of an expression and of a result. */
  idxmap_interval b;
  idxmap_map *r = idxmap_map_parse(
      ctx, "(d0)[s0] -> (d0 floordiv 4), domain: d0 in [0, 15], s0 in [0, 3]",
      NULL);
  CHECK(idxmap_map_expr_bounds(r, "d0 mod 4 + s0", 0, &b, &err) == IDXMAP_OK);
  CHECK(b.lo == 0 && b.hi == 6);
  CHECK(idxmap_map_result_bounds(r, 0, 0, &b, &err) == IDXMAP_OK);
  CHECK(b.lo == 0 && b.hi == 3);
  CHECK(idxmap_map_result_bounds(r, 0, 1, &b, &err) == IDXMAP_OK);
  CHECK(b.lo == 0 && b.hi == 3);
  CHECK(idxmap_map_result_bounds(r, 1, 0, &b, &err) == IDXMAP_ERROR && err);
  idxmap_string_free(err);
  err = NULL;
  CHECK(idxmap_map_expr_bounds(r, "d0 + x", 0, &b, &err) == IDXMAP_ERROR);
  CHECK(err && strstr(err, "<expr>:1:6: error"));
  idxmap_string_free(err);
  err = NULL;

  /* Emptiness, fast and exact. */
  idxmap_map *e = idxmap_map_parse(
      ctx, "(d0) -> (d0), domain: d0 in [0, 99], d0 mod 8 + 5 in [50, 54]",
      NULL);
  CHECK(idxmap_map_is_empty(e, 0) == IDXMAP_EMPTY);
  CHECK(idxmap_map_is_empty(e, 1) == IDXMAP_EMPTY);
  CHECK(idxmap_map_is_empty(r, 0) == IDXMAP_NON_EMPTY);
  CHECK(idxmap_map_is_empty(r, 1) == IDXMAP_NON_EMPTY);
  idxmap_map *e2 = idxmap_map_clone(e);
  idxmap_map_simplify(e2, 0);
  CHECK_STRING(idxmap_map_print(e2, IDXMAP_FORMAT_XLA), "KNOWN EMPTY");
  CHECK(idxmap_map_expr_bounds(e2, "d0", 0, &b, NULL) == IDXMAP_OK &&
        b.lo > b.hi);

  idxmap_map *maps[] = {m, first, second, c, r, e, e2};
  for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); ++i)
    idxmap_map_destroy(maps[i]);
  idxmap_map_destroy(NULL);
  idxmap_context_destroy(ctx);
}

static void testHlo(void) {
  char *err = NULL;
  idxmap_context *ctx = idxmap_context_create();
  idxmap_hlo_module *mod = idxmap_hlo_module_parse(Transpose, "t.hlo", &err);
  CHECK(mod && !err);
  char *text = idxmap_hlo_module_print(mod);
  CHECK(text && strstr(text, "transpose(p)"));
  idxmap_string_free(text);

  idxmap_hlo_indexing *ix =
      idxmap_hlo_output_to_input_indexing(ctx, mod, NULL, 0, &err);
  CHECK(ix && !err);
  CHECK(idxmap_hlo_indexing_num_operands(ix) == 1);
  CHECK(idxmap_hlo_indexing_num_maps(ix, 0) == 1);
  CHECK(idxmap_hlo_indexing_num_maps(ix, 1) == 0);
  CHECK(idxmap_hlo_indexing_map(ix, 0, 1) == NULL);
  idxmap_map *m = idxmap_hlo_indexing_map(ix, 0, 0);
  CHECK_STRING(idxmap_map_print(m, IDXMAP_FORMAT_XLA),
               "(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]");
  CHECK_STRING(idxmap_hlo_indexing_print(ix),
               "operand id = 0\n"
               "(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]\n");
  /* The module and context may go before the results made from them. */
  idxmap_hlo_module_destroy(mod);
  idxmap_context_destroy(ctx);
  CHECK(idxmap_map_is_empty(m, 0) == IDXMAP_NON_EMPTY);
  idxmap_map_destroy(m);
  idxmap_hlo_indexing_destroy(ix);

  ctx = idxmap_context_create();
  mod = idxmap_hlo_module_parse(Transpose, NULL, NULL);
  CHECK(idxmap_hlo_output_to_input_indexing(ctx, mod, "nope", 0, &err) == NULL);
  CHECK(err && strstr(err, "no instruction named 'nope'"));
  idxmap_string_free(err);
  err = NULL;
  CHECK(idxmap_hlo_output_to_input_indexing(ctx, mod, "t", 1, &err) == NULL);
  CHECK(err && strstr(err, "output 1 is out of range"));
  idxmap_string_free(err);
  err = NULL;
  idxmap_hlo_module_destroy(mod);

  CHECK(idxmap_hlo_module_parse("HloModule m\nENTRY e {", "bad.hlo", &err) ==
        NULL);
  CHECK(err && strstr(err, "bad.hlo:"));
  idxmap_string_free(err);
  idxmap_context_destroy(ctx);
}

static void testEmit(void) {
  char *err = NULL;
  idxmap_emit_result *r = idxmap_emit(Gelu, "gelu.hlo", NULL, &err);
  CHECK(r && !err);
  if (r) {
    CHECK(strstr(idxmap_emit_result_ptx(r), ".visible .entry"));
    CHECK(strstr(idxmap_emit_result_ptx(r), ".target sm_90"));
    CHECK(strstr(idxmap_emit_result_sidecar_json(r), "\"hlo\": \"/"));
    CHECK(strstr(idxmap_emit_result_sidecar_json(r), "/gelu.hlo\""));
    CHECK(strstr(idxmap_emit_result_sidecar_json(r), "\"kernels\""));
    CHECK(idxmap_emit_result_num_kernels(r) == 1);
    CHECK(idxmap_emit_result_num_skipped(r) == 0);
    CHECK(idxmap_emit_result_skipped_name(r, 0) == NULL);
  }
  idxmap_emit_result_destroy(r);

  idxmap_emit_options *o = idxmap_emit_options_create();
  idxmap_emit_options_set_gpu(o, "sm_80");
  idxmap_emit_options_set_ptx_version(o, 78);
  idxmap_emit_options_set_fusion(o, "r");
  r = idxmap_emit(Gelu, NULL, o, &err);
  CHECK(r && !err);
  if (r) {
    CHECK(strstr(idxmap_emit_result_ptx(r), ".target sm_80"));
    CHECK(strstr(idxmap_emit_result_ptx(r), ".version 7.8"));
    CHECK(!strstr(idxmap_emit_result_sidecar_json(r), "\"hlo\""));
  }
  idxmap_emit_result_destroy(r);

  /* An option error and an input error. */
  idxmap_emit_options_set_gpu(o, "sm_70");
  CHECK(idxmap_emit(Gelu, NULL, o, &err) == NULL);
  CHECK(err && strstr(err, "unsupported GPU 'sm_70'"));
  idxmap_string_free(err);
  err = NULL;
  idxmap_emit_options_destroy(o);
  CHECK(idxmap_emit(Transpose, "t.hlo", NULL, &err) == NULL);
  CHECK(err != NULL); /* no fusion */
  idxmap_string_free(err);
}

int main(void) {
  printf("idxmap %s\n", idxmap_version());
  testMaps();
  testHlo();
  testEmit();
  if (Failures) {
    fprintf(stderr, "%d checks failed\n", Failures);
    return 1;
  }
  printf("capi: all checks passed\n");
  return 0;
}
