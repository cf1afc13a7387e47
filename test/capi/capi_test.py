#!/usr/bin/env python3
"""The C API from Python's ctypes (ctest: capi.python; test/consumer runs it
against an install). Usage: capi_test.py LIBIDXMAP_C_SO

Declares the signatures it uses, as a binding would, and checks parse,
print, simplify, compose, bounds, emptiness, HLO indexing and emission,
including that every string the library returns is freed with
idxmap_string_free."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])

c_char_pp = ctypes.POINTER(ctypes.c_void_p)  # char **error


class Interval(ctypes.Structure):
    _fields_ = [("lo", ctypes.c_int64), ("hi", ctypes.c_int64)]


def sig(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


vp = ctypes.c_void_p
sig("idxmap_version", ctypes.c_char_p)
sig("idxmap_string_free", None, vp)
sig("idxmap_context_create", vp)
sig("idxmap_context_destroy", None, vp)
sig("idxmap_map_parse", vp, vp, ctypes.c_char_p, c_char_pp)
sig("idxmap_map_destroy", None, vp)
sig("idxmap_map_print", vp, vp, ctypes.c_int)
sig("idxmap_map_simplify", ctypes.c_int, vp, ctypes.c_int)
sig("idxmap_map_compose", vp, vp, vp, c_char_pp)
sig("idxmap_map_is_empty", ctypes.c_int, vp, ctypes.c_int)
sig("idxmap_map_expr_bounds", ctypes.c_int, vp, ctypes.c_char_p, ctypes.c_int,
    ctypes.POINTER(Interval), c_char_pp)
sig("idxmap_map_result_bounds", ctypes.c_int, vp, ctypes.c_uint, ctypes.c_int,
    ctypes.POINTER(Interval), c_char_pp)
sig("idxmap_hlo_module_parse", vp, ctypes.c_char_p, ctypes.c_char_p, c_char_pp)
sig("idxmap_hlo_module_destroy", None, vp)
sig("idxmap_hlo_output_to_input_indexing", vp, vp, vp, ctypes.c_char_p,
    ctypes.c_int64, c_char_pp)
sig("idxmap_hlo_indexing_destroy", None, vp)
sig("idxmap_hlo_indexing_num_operands", ctypes.c_size_t, vp)
sig("idxmap_hlo_indexing_num_maps", ctypes.c_size_t, vp, ctypes.c_size_t)
sig("idxmap_hlo_indexing_map", vp, vp, ctypes.c_size_t, ctypes.c_size_t)
sig("idxmap_emit", vp, ctypes.c_char_p, ctypes.c_char_p, vp, c_char_pp)
sig("idxmap_emit_result_destroy", None, vp)
sig("idxmap_emit_result_ptx", ctypes.c_char_p, vp)
sig("idxmap_emit_result_sidecar_json", ctypes.c_char_p, vp)
sig("idxmap_emit_result_num_kernels", ctypes.c_size_t, vp)

OK, ERROR, UNKNOWN = 0, 1, 2
NON_EMPTY, EMPTY = 0, 1


def take(p):
    """The text of a returned `char *`, which is then freed."""
    assert p, "NULL string"
    s = ctypes.string_at(p).decode()
    lib.idxmap_string_free(p)
    return s


def call(f, *args):
    """Calls f with a last `char **error`; raises with the message."""
    err = ctypes.c_void_p()
    r = f(*args, ctypes.byref(err))
    if err.value:
        raise RuntimeError(take(err.value))
    return r


def parse(ctx, text):
    return call(lib.idxmap_map_parse, ctx, text.encode())


print("idxmap", lib.idxmap_version().decode())
ctx = lib.idxmap_context_create()
m = parse(ctx, "(d0)[s0] -> ((d0 * 4 + s0) mod 4), domain: d0 in [0, 9], "
               "s0 in [0, 3]")
assert lib.idxmap_map_simplify(m, 0) == 1
assert take(lib.idxmap_map_print(m, 0)) == \
    "(d0)[s0] -> (s0), domain: d0 in [0, 9], s0 in [0, 3]"
assert take(lib.idxmap_map_print(m, 1)) == "affine_map<(d0)[s0] -> (s0)>"

try:
    parse(ctx, "(d0) -> (d1)")
    raise AssertionError("expected a parse error")
except RuntimeError as e:
    assert "unknown identifier 'd1'" in str(e), e

first = parse(ctx, "(d0) -> (d0 * 4), domain: d0 in [0, 7]")
second = parse(ctx, "(d0) -> (d0 floordiv 2), domain: d0 in [0, 31]")
c = call(lib.idxmap_map_compose, first, second)
lib.idxmap_map_simplify(c, 0)
assert take(lib.idxmap_map_print(c, 0)) == \
    "(d0) -> (d0 * 2), domain: d0 in [0, 7]"

b = Interval()
assert call(lib.idxmap_map_expr_bounds, c, b"d0 mod 4", 0, ctypes.byref(b)) \
    == OK and (b.lo, b.hi) == (0, 3)
assert call(lib.idxmap_map_result_bounds, c, 0, 1, ctypes.byref(b)) == OK \
    and (b.lo, b.hi) == (0, 14)

e = parse(ctx, "(d0) -> (d0), domain: d0 in [0, 99], d0 mod 8 + 5 in [50, 54]")
assert lib.idxmap_map_is_empty(e, 0) == EMPTY
assert lib.idxmap_map_is_empty(c, 1) == NON_EMPTY

hlo = b"""HloModule m
ENTRY e {
  p = f32[4,8] parameter(0)
  ROOT t = f32[8,4] transpose(p), dimensions={1,0}
}
"""
mod = call(lib.idxmap_hlo_module_parse, hlo, b"t.hlo")
ix = call(lib.idxmap_hlo_output_to_input_indexing, ctx, mod, b"t", 0)
assert lib.idxmap_hlo_indexing_num_operands(ix) == 1
assert lib.idxmap_hlo_indexing_num_maps(ix, 0) == 1
im = lib.idxmap_hlo_indexing_map(ix, 0, 0)
assert take(lib.idxmap_map_print(im, 0)) == \
    "(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]"

fusion = b"""HloModule m
f {
  p = f32[1024] parameter(0)
  ROOT e = f32[1024] exponential(p)
}
ENTRY e {
  a = f32[1024] parameter(0)
  ROOT r = f32[1024] fusion(a), kind=kLoop, calls=f
}
"""
r = call(lib.idxmap_emit, fusion, b"exp.hlo", None)
assert b".visible .entry" in lib.idxmap_emit_result_ptx(r)
assert b'/exp.hlo"' in lib.idxmap_emit_result_sidecar_json(r)
assert lib.idxmap_emit_result_num_kernels(r) == 1
try:
    call(lib.idxmap_emit, hlo, b"t.hlo", None)
    raise AssertionError("expected an emit error")
except RuntimeError:
    pass

for h in (m, first, second, c, e, im):
    lib.idxmap_map_destroy(h)
lib.idxmap_emit_result_destroy(r)
lib.idxmap_hlo_indexing_destroy(ix)
lib.idxmap_hlo_module_destroy(mod)
lib.idxmap_context_destroy(ctx)
print("capi.python: all checks passed")
