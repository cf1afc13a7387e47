#!/usr/bin/env python3
"""The broad measurement suite (issue 16, "Measure on a broad suite"): one
table of fusions in the shapes real models have, each with its HLO fusion
module and the peers' equivalents.

  python3 bench/suite/gen.py [--out DIR] [--list]

writes DIR/NAME.hlo for every fusion (default: bench/suite/hlo next to this
file) and removes no other file; --list prints the README's table instead.

SUITE (a list of Fusion) is what run_suite.py imports. A Fusion holds its
HLO text, the parameters (name, type, shape, how to fill them) in parameter
order, and three peer functions written against module arguments so that
this file imports neither torch nor JAX:
  tf(T, *xs)  torch (T is the torch module); eager torch runs it as is, the
              runner torch.compile's it, and its eager result is the
              reference the idxmap kernel's output is checked against;
  jf(J, *xs)  JAX (J.jnp, J.lax, J.jax, J.nn); the runner jax.jit's it;
  cf(cp, *xs) CuPy (CUB for reductions), or None where CuPy has no
              equivalent (bf16, which CuPy lacks; non-reductions).
Each returns one array or a tuple in the order of the fusion's outputs.
"""
import argparse, math, os, sys

BYTES = {"f32": 4, "bf16": 2, "f16": 2, "s32": 4, "s8": 1}
# L2 of the H100/H200 (50 MiB). A fusion moving at most a quarter of it is
# timed on one input (it stays in L2 between launches, for every contender
# alike); the others rotate through input copies (run_suite.py).
L2_BYTES = 50 << 20
L2_RESIDENT_BYTES = L2_BYTES // 4


def shp(dt, shape):
    """An HLO shape with its row-major layout: f32[4,8]{1,0}."""
    if not shape:
        return f"{dt}[]"
    lay = ",".join(str(i) for i in reversed(range(len(shape))))
    return f"{dt}[{','.join(map(str, shape))}]{{{lay}}}"


def fmt(v):
    return repr(float(v)) if isinstance(v, float) else str(v)


class V:
    """A value of the fused computation being built; arithmetic operators
    emit the HLO instruction (a Python number is broadcast)."""

    def __init__(self, fn, name, dt, shape):
        self.fn, self.name, self.dt, self.shape = fn, name, dt, tuple(shape)

    def __str__(self):
        return self.name

    def _b(self, op, o, swap=False):
        if not isinstance(o, V):
            o = self.fn.full(self.dt, o, self.shape)
        a, b = (o, self) if swap else (self, o)
        return self.fn.op(a.dt, a.shape, f"{op}({a}, {b})")

    __add__ = lambda s, o: s._b("add", o)
    __radd__ = lambda s, o: s._b("add", o, True)
    __sub__ = lambda s, o: s._b("subtract", o)
    __rsub__ = lambda s, o: s._b("subtract", o, True)
    __mul__ = lambda s, o: s._b("multiply", o)
    __rmul__ = lambda s, o: s._b("multiply", o, True)
    __truediv__ = lambda s, o: s._b("divide", o)
    __rtruediv__ = lambda s, o: s._b("divide", o, True)


REDUCE_INIT = {
    ("add", "f32"): "0", ("add", "bf16"): "0", ("add", "f16"): "0",
    ("add", "s32"): "0", ("add", "s8"): "0",
    ("maximum", "f32"): "-inf", ("maximum", "bf16"): "-inf",
    ("maximum", "f16"): "-inf", ("maximum", "s32"): "-2147483648",
    ("maximum", "s8"): "-128",
    ("minimum", "f32"): "inf", ("minimum", "bf16"): "inf",
    ("minimum", "f16"): "inf", ("minimum", "s32"): "2147483647",
    ("minimum", "s8"): "127",
}


class Fn:
    """Builds one fusion module: the reducers, the fused computation and an
    ENTRY computation holding one fusion instruction."""

    def __init__(self, name):
        self.name, self.lines, self.params, self.reducers = name, [], [], {}
        self.n = 0

    def param(self, name, dt, shape, init="randn"):
        self.lines.append(f"  {name} = {shp(dt, shape)} parameter({len(self.params)})")
        v = V(self, name, dt, shape)
        self.params.append((v, init))
        return v

    def op(self, dt, shape, expr):
        name = f"n{self.n}"
        self.n += 1
        self.lines.append(f"  {name} = {shp(dt, shape)} {expr}")
        return V(self, name, dt, shape)

    def const(self, dt, val):
        return self.op(dt, (), f"constant({fmt(val)})")

    def full(self, dt, val, shape):
        c = self.const(dt, val)
        return self.bcast(c, shape, []) if shape else c

    def bcast(self, x, shape, dims):
        return self.op(x.dt, shape,
                       f"broadcast({x}), dimensions={{{','.join(map(str, dims))}}}")

    def cvt(self, x, dt):
        return x if x.dt == dt else self.op(dt, x.shape, f"convert({x})")

    def un(self, op, x):
        return self.op(x.dt, x.shape, f"{op}({x})")

    def maximum(self, a, b):
        return a._b("maximum", b)

    def reducer(self, op, dt):
        name = f"{op}_{dt}"
        self.reducers[name] = (
            f"{name} {{\n  a = {dt}[] parameter(0)\n  b = {dt}[] parameter(1)\n"
            f"  ROOT c = {dt}[] {op}(a, b)\n}}\n")
        return name

    def reduce(self, x, op, dims):
        out = [s for i, s in enumerate(x.shape) if i not in dims]
        init = self.const(x.dt, REDUCE_INIT[(op, x.dt)])
        return self.op(x.dt, out,
                       f"reduce({x}, {init}), dimensions={{{','.join(map(str, dims))}}}, "
                       f"to_apply={self.reducer(op, x.dt)}")

    def text(self, roots, kind):
        body = list(self.lines)
        if len(roots) == 1:
            last = body[-1]
            assert last.startswith(f"  {roots[0]} = "), "the root must come last"
            body[-1] = "  ROOT " + last[2:]
            out = shp(roots[0].dt, roots[0].shape)
        else:
            out = "(" + ", ".join(shp(r.dt, r.shape) for r in roots) + ")"
            body.append(f"  ROOT t = {out} tuple({', '.join(map(str, roots))})")
        entry = [f"  arg{i} = {shp(v.dt, v.shape)} parameter({i})"
                 for i, (v, _) in enumerate(self.params)]
        args = ", ".join(f"arg{i}" for i in range(len(self.params)))
        entry.append(f"  ROOT fusion = {out} fusion({args}), kind={kind}, "
                     f"calls=fused_{self.name}")
        return (f"HloModule {self.name}\n\n" + "".join(
            r + "\n" for r in self.reducers.values()) +
            f"fused_{self.name} {{\n" + "\n".join(body) + "\n}\n\n" +
            "ENTRY main {\n" + "\n".join(entry) + "\n}\n")


class Fusion:
    """One fusion of the suite: its HLO module, parameters (name, type,
    shape, how run_suite.py fills it: randn, randint, square, lr), outputs
    and peer functions (the module docstring)."""

    def __init__(self, name, category, model, fn, roots, kind, tf, jf, cf=None,
                 note=""):
        self.name, self.category, self.model, self.note = name, category, model, note
        self.hlo = fn.text(roots, kind)
        self.ins = [(v.name, v.dt, v.shape, init) for v, init in fn.params]
        self.outs = [(r.dt, r.shape) for r in roots]
        self.tf, self.jf, self.cf = tf, jf, cf
        self.sum_like = False

    @property
    def in_bytes(self):
        return sum(math.prod(s) * BYTES[d] for _, d, s, _ in self.ins)

    @property
    def bytes(self):
        """Bytes read and written at least once (inputs + outputs)."""
        return self.in_bytes + sum(math.prod(s) * BYTES[d] for d, s in self.outs)

    @property
    def l2_resident(self):
        return self.bytes <= L2_RESIDENT_BYTES

    @property
    def shape_desc(self):
        return ", ".join(f"{d}{list(s)}" for _, d, s, _ in self.ins)


SUITE = []
# build(small=True) shrinks every dim through sd() (odd stays odd) so that
# check_peers.py can check the peers' functions against idxmap's
# interpreter on the CPU with the same table.
_SMALL = False


def sd(d):
    if not _SMALL or d <= 8:
        return d
    return (5 if d % 2 else 6) + 2 * (d % 3)


def ss(shape):
    return tuple(sd(d) for d in shape)


# Torch/JAX/CuPy names of the HLO types (the runner maps them to dtypes).
TDT = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "s32": "int32",
       "s8": "int8"}


def tdt(T, dt):
    return getattr(T, TDT[dt])


def jdt(J, dt):
    return getattr(J.jnp, TDT[dt])


# --- Reductions --------------------------------------------------------------

def reduction(name, model, op, dt, shape, dims, acc=None, out=None, note=""):
    """reduce(convert(x, acc), op, dims) converted to `out`: row (the minor
    dim), column (a major dim), middle and full reductions alike."""
    acc, out, shape = acc or dt, out or dt, ss(shape)
    f = Fn(name)
    x = f.param("x", dt, shape, "randint" if dt in ("s32", "s8") else "randn")
    r = f.cvt(f.reduce(f.cvt(x, acc), op, dims), out)
    dims_t = tuple(dims)
    full = len(dims) == len(shape)
    kind = ("full" if full else "row" if dims == [len(shape) - 1] else
            "column" if 0 in dims and len(shape) - 1 not in dims else "middle")

    def tf(T, x):
        d = dims_t if not full else tuple(range(len(shape)))
        if op == "add":
            # torch's sum of f16/bf16 accumulates in f32 and returns the input
            # type; integer sums need the accumulator type named (else int64).
            if dt in ("s8", "s32") or (acc != dt and out == acc):
                return T.sum(x, dim=d, dtype=tdt(T, acc)).to(tdt(T, out))
            return T.sum(x, dim=d).to(tdt(T, out))
        y = (T.amax if op == "maximum" else T.amin)(x, dim=d)
        return y.to(tdt(T, out))

    def jf(J, x):
        f = dict(add=J.jnp.sum, maximum=J.jnp.max, minimum=J.jnp.min)[op]
        return f(x.astype(jdt(J, acc)), axis=dims_t).astype(jdt(J, out))

    cf = None
    if dt != "bf16" and out != "bf16":
        def cf(cp, x):
            if op != "add":
                return dict(maximum=cp.max, minimum=cp.min)[op](x, axis=dims_t)
            if acc != dt and out == dt and dt not in ("s8", "s32"):
                return cp.sum(x, axis=dims_t)  # f16: accumulates in f32
            return cp.sum(x, axis=dims_t, dtype=TDT[acc]).astype(TDT[out], copy=False)
    fusion = Fusion(name, f"{kind} reduction", model, f, [r], "kInput", tf, jf, cf, note)
    fusion.sum_like = op == "add"  # checked against the sum of magnitudes
    SUITE.append(fusion)


# --- Prefix scans ------------------------------------------------------------

def scan(name, model, op, dt, shape, dim, reverse=False, acc=None, init="randn"):
    """A prefix scan of x (converted to `acc`) along `dim`, as lax.cumsum
    and lax.cummax write it: a reduce-window over the whole dim, padded low
    (high when `reverse`: a suffix scan), converted back to `dt`."""
    acc, shape = acc or dt, ss(shape)
    f = Fn(name)
    x = f.param("x", dt, shape, init)
    n = shape[dim]
    size = "x".join(str(n if i == dim else 1) for i in range(len(shape)))
    pads = "x".join(((f"0_{n - 1}" if reverse else f"{n - 1}_0") if i == dim else "0_0")
                    for i in range(len(shape)))
    xa = f.cvt(x, acc)
    zero = f.const(acc, REDUCE_INIT[(op, acc)])
    y = f.cvt(f.op(acc, shape, f"reduce-window({xa}, {zero}), window={{size={size} "
                                f"pad={pads}}}, to_apply={f.reducer(op, acc)}"), dt)

    def tf(T, x):
        xs = T.flip(x, [dim]) if reverse else x
        if op == "add":
            y = T.cumsum(xs, dim, dtype=tdt(T, acc)).to(tdt(T, dt))
        else:
            y = (T.cummax if op == "maximum" else T.cummin)(xs, dim).values
        return T.flip(y, [dim]) if reverse else y

    def jf(J, x):
        g = dict(add=J.lax.cumsum, maximum=J.lax.cummax, minimum=J.lax.cummin)[op]
        return g(x.astype(jdt(J, acc)), axis=dim, reverse=reverse).astype(jdt(J, dt))

    cf = None
    if op == "add" and not reverse and acc == dt and dt in ("f32", "s32"):
        def cf(cp, x):  # CUB's scan (int32 stays int32, as in the HLO)
            return cp.cumsum(x, axis=dim, dtype=x.dtype)
    fusion = Fusion(name, "scan", model, f, [y], "kInput", tf, jf, cf)
    fusion.sum_like = op == "add"  # checked against the scan of magnitudes
    SUITE.append(fusion)


# --- Norms (bf16 in and out, f32 inside) -------------------------------------

def layernorm(name, model, dt, rows, n, eps=1e-5):
    rows, n = sd(rows), sd(n)
    f = Fn(name)
    x = f.param("x", dt, (rows, n))
    g = f.param("gamma", dt, (n,))
    b = f.param("beta", dt, (n,))
    xf = f.cvt(x, "f32")
    mean = f.reduce(xf, "add", [1]) * (1.0 / n)
    d = xf - f.bcast(mean, (rows, n), [0])
    var = f.reduce(d * d, "add", [1]) * (1.0 / n)
    inv = f.un("rsqrt", var + eps)
    y = d * f.bcast(inv, (rows, n), [0]) * f.bcast(f.cvt(g, "f32"), (rows, n), [1]) \
        + f.bcast(f.cvt(b, "f32"), (rows, n), [1])
    y = f.cvt(y, dt)

    def tf(T, x, g, b):
        return T.nn.functional.layer_norm(x, (n,), g, b, eps)

    def jf(J, x, g, b):
        xf = x.astype(J.jnp.float32)
        m = xf.mean(-1, keepdims=True)
        d = xf - m
        v = (d * d).mean(-1, keepdims=True)
        return (d * J.lax.rsqrt(v + eps) * g.astype(J.jnp.float32) +
                b.astype(J.jnp.float32)).astype(x.dtype)
    SUITE.append(Fusion(name, "layer norm", model, f, [y], "kInput", tf, jf))


def rmsnorm(name, model, dt, rows, n, eps=1e-6):
    rows, n = sd(rows), sd(n)
    f = Fn(name)
    x = f.param("x", dt, (rows, n))
    w = f.param("weight", dt, (n,))
    xf = f.cvt(x, "f32")
    ms = f.reduce(xf * xf, "add", [1]) * (1.0 / n)
    inv = f.un("rsqrt", ms + eps)
    y = f.cvt(xf * f.bcast(inv, (rows, n), [0]) * f.bcast(f.cvt(w, "f32"), (rows, n), [1]),
              dt)

    def tf(T, x, w):
        xf = x.float()
        return (xf * T.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)

    def jf(J, x, w):
        xf = x.astype(J.jnp.float32)
        return (xf * J.lax.rsqrt((xf * xf).mean(-1, keepdims=True) + eps) *
                w.astype(J.jnp.float32)).astype(x.dtype)
    SUITE.append(Fusion(name, "RMS norm", model, f, [y], "kInput", tf, jf))


def softmax(name, model, dt, shape, scale=None, mask=False):
    """softmax over the minor dim, in f32; optionally of x * scale + mask
    (an attention mask [S, S] broadcast over batch and heads)."""
    shape = ss(shape)
    f = Fn(name)
    r = len(shape)
    x = f.param("x", dt, shape)
    m = f.param("mask", dt, shape[-2:]) if mask else None
    xf = f.cvt(x, "f32")
    if scale is not None:
        xf = xf * scale
    if mask:
        xf = xf + f.bcast(f.cvt(m, "f32"), shape, [r - 2, r - 1])
    keep = list(range(r - 1))
    mx = f.reduce(xf, "maximum", [r - 1])
    e = f.un("exponential", xf - f.bcast(mx, shape, keep))
    s = f.reduce(e, "add", [r - 1])
    y = f.cvt(e / f.bcast(s, shape, keep), dt)

    def tf(T, x, *m):
        xf = x.float()
        if scale is not None:
            xf = xf * scale
        if m:
            xf = xf + m[0].float()
        return T.softmax(xf, dim=-1).to(x.dtype)

    def jf(J, x, *m):
        xf = x.astype(J.jnp.float32)
        if scale is not None:
            xf = xf * scale
        if m:
            xf = xf + m[0].astype(J.jnp.float32)
        return J.nn.softmax(xf, axis=-1).astype(x.dtype)
    SUITE.append(Fusion(name, "softmax", model, f, [y], "kInput", tf, jf))


# --- Transposes: every permutation of rank 3, odd sizes ----------------------

def transpose(name, model, dt, shape, perm):
    shape = ss(shape)
    f = Fn(name)
    x = f.param("x", dt, shape)
    y = f.op(dt, [shape[p] for p in perm],
             f"transpose({x}), dimensions={{{','.join(map(str, perm))}}}")
    pt = tuple(perm)
    SUITE.append(Fusion(name, "transpose", model, f, [y], "kInput",
                        lambda T, x: x.permute(pt).contiguous(),
                        lambda J, x: J.jnp.transpose(x, pt)))


# --- Data movement: pad, slice, concatenate, reverse --------------------------

def pad(name, model, dt, shape, lo_hi):
    shape, lo_hi = ss(shape), [(sd(lo), sd(hi)) for lo, hi in lo_hi]
    f = Fn(name)
    x = f.param("x", dt, shape)
    zero = f.const(dt, 0)
    out = [s + lo + hi for s, (lo, hi) in zip(shape, lo_hi)]
    y = f.op(dt, out, f"pad({x}, {zero}), padding=" +
             "x".join(f"{lo}_{hi}" for lo, hi in lo_hi))
    tpad = tuple(v for lo, hi in reversed(lo_hi) for v in (lo, hi))
    SUITE.append(Fusion(name, "pad", model, f, [y], "kLoop",
                        lambda T, x: T.nn.functional.pad(x, tpad),
                        lambda J, x: J.jnp.pad(x, lo_hi)))


def slice_(name, model, dt, shape, ranges):
    """ranges: (start, limit, stride) per dim."""
    ranges = [(a * sd(d) // d, b * sd(d) // d, s) for (a, b, s), d in zip(ranges, shape)]
    shape = ss(shape)
    f = Fn(name)
    x = f.param("x", dt, shape)
    out = [len(range(a, b, s)) for a, b, s in ranges]
    y = f.op(dt, out, "slice(%s), slice={%s}" % (x, ", ".join(
        f"[{a}:{b}:{s}]" if s != 1 else f"[{a}:{b}]" for a, b, s in ranges)))
    sl = tuple(slice(a, b, s) for a, b, s in ranges)
    SUITE.append(Fusion(name, "slice", model, f, [y], "kLoop",
                        lambda T, x: x[sl].contiguous(), lambda J, x: x[sl]))


def split(name, model, dt, shape, widths):
    """Slices side by side along the minor dim, one output each (XLA's
    input-slices fusion: the input read once)."""
    shape = ss(shape)
    f = Fn(name)
    x = f.param("x", dt, shape)
    ys, sls, a = [], [], 0
    for w in widths:
        out = list(shape[:-1]) + [w]
        ranges = [f"[0:{d}]" for d in shape[:-1]] + [f"[{a}:{a + w}]"]
        ys.append(f.op(dt, out, f"slice({x}), slice={{{', '.join(ranges)}}}"))
        sls.append((a, a + w))
        a += w
    SUITE.append(Fusion(name, "slice", model, f, ys, "kInput",
                        lambda T, x: tuple(x[..., a:b].contiguous() for a, b in sls),
                        lambda J, x: tuple(x[..., a:b] for a, b in sls),
                        note="input-slices emitter"))


def concat(name, model, dt, shapes, dim):
    shapes = [ss(s) for s in shapes]
    f = Fn(name)
    xs = [f.param(f"x{i}", dt, s) for i, s in enumerate(shapes)]
    out = list(shapes[0])
    out[dim] = sum(s[dim] for s in shapes)
    y = f.op(dt, out, f"concatenate({', '.join(map(str, xs))}), dimensions={{{dim}}}")
    SUITE.append(Fusion(name, "concatenate", model, f, [y], "kLoop",
                        lambda T, *x: T.cat(x, dim=dim),
                        lambda J, *x: J.jnp.concatenate(x, axis=dim),
                        note="concatenate emitter"))


def embedding(name, model, dt, rows, width, n):
    """Rows of a table picked by indices: XLA's canonical gather."""
    f = Fn(name)
    table = f.param("table", dt, (rows, width))
    idx = f.param("idx", "s32", (n, 1), init=f"index{rows}")
    y = f.op(dt, (n, width),
             f"gather({table}, {idx}), offset_dims={{1}}, "
             f"collapsed_slice_dims={{0}}, start_index_map={{0}}, "
             f"index_vector_dim=1, slice_sizes={{1,{width}}}")
    SUITE.append(Fusion(name, "gather", model, f, [y], "kLoop",
                        lambda T, t, i: t[i[:, 0].long()],
                        lambda J, t, i: J.jnp.take(t, i[:, 0], axis=0),
                        note="loop emitter (gather)"))


def reverse(name, model, dt, shape, dims):
    shape = ss(shape)
    f = Fn(name)
    x = f.param("x", dt, shape)
    y = f.op(dt, shape, f"reverse({x}), dimensions={{{','.join(map(str, dims))}}}")
    dt_ = tuple(dims)
    SUITE.append(Fusion(name, "reverse", model, f, [y], "kLoop",
                        lambda T, x: T.flip(x, dt_), lambda J, x: J.jnp.flip(x, dt_)))


# --- Broadcast epilogues ------------------------------------------------------

def gelu_tanh(x):
    return x * 0.5 * (1.0 + x.fn.un("tanh", 0.7978845608028654 * (x + 0.044715 * x * x * x)))


def bias_gelu(name, model, dt, rows, n):
    rows, n = sd(rows), sd(n)
    f = Fn(name)
    x = f.param("x", dt, (rows, n))
    b = f.param("bias", dt, (n,))
    y = f.cvt(gelu_tanh(f.cvt(x, "f32") + f.bcast(f.cvt(b, "f32"), (rows, n), [1])), dt)
    SUITE.append(Fusion(
        name, "bias + gelu", model, f, [y], "kLoop",
        lambda T, x, b: T.nn.functional.gelu(x + b, approximate="tanh"),
        lambda J, x, b: J.nn.gelu(x.astype(J.jnp.float32) + b.astype(J.jnp.float32),
                                  approximate=True).astype(x.dtype)))


def residual_add(name, model, dt, rows, n):
    rows, n = sd(rows), sd(n)
    f = Fn(name)
    x = f.param("x", dt, (rows, n))
    r = f.param("residual", dt, (rows, n))
    b = f.param("bias", dt, (n,))
    y = f.cvt(f.cvt(x, "f32") + f.bcast(f.cvt(b, "f32"), (rows, n), [1]) + f.cvt(r, "f32"),
              dt)
    SUITE.append(Fusion(
        name, "residual add", model, f, [y], "kLoop",
        lambda T, x, r, b: x + b + r,
        lambda J, x, r, b: (x.astype(J.jnp.float32) + b.astype(J.jnp.float32) +
                            r.astype(J.jnp.float32)).astype(x.dtype)))


def bn_relu(name, model, dt, shape):
    """Inference batch norm folded to scale and shift per channel (NHWC),
    then relu."""
    shape = ss(shape)
    f = Fn(name)
    c = shape[-1]
    x = f.param("x", dt, shape)
    s = f.param("scale", dt, (c,))
    t = f.param("shift", dt, (c,))
    last = [len(shape) - 1]
    y = f.maximum(x * f.bcast(s, shape, last) + f.bcast(t, shape, last), 0.0)
    SUITE.append(Fusion(
        name, "scale + shift + relu", model, f, [y], "kLoop",
        lambda T, x, s, t: T.relu(x * s + t),
        lambda J, x, s, t: J.jnp.maximum(x * s + t, 0)))


def swiglu(name, model, dt, rows, n):
    rows, n = sd(rows), sd(n)
    f = Fn(name)
    a = f.param("gate", dt, (rows, n))
    b = f.param("up", dt, (rows, n))
    af = f.cvt(a, "f32")
    y = f.cvt(af * f.un("logistic", af) * f.cvt(b, "f32"), dt)
    SUITE.append(Fusion(
        name, "silu * up", model, f, [y], "kLoop",
        lambda T, a, b: T.nn.functional.silu(a) * b,
        lambda J, a, b: (J.nn.silu(a.astype(J.jnp.float32)) * b.astype(J.jnp.float32)).astype(a.dtype)))


# --- Optimizer steps ----------------------------------------------------------

B1, B2, EPS, STEP = 0.9, 0.999, 1e-8, 10


def adam(name, model, n_params, shape, grad_dt="f32", wd=0.0):
    """Adam(W) on n_params parameters of one shape in one loop fusion: per
    parameter p, g, m, v in; p', m', v' out. The learning rate is a scalar
    parameter (a schedule's), the bias corrections constants of the step."""
    shape = ss(shape)
    f = Fn(name)
    c1, c2 = 1 / (1 - B1 ** STEP), 1 / (1 - B2 ** STEP)
    lr = f.param("lr", "f32", (), init="lr")
    groups = []
    for k in range(n_params):
        groups.append((f.param(f"p{k}", "f32", shape),
                       f.param(f"g{k}", grad_dt, shape),
                       f.param(f"m{k}", "f32", shape),
                       f.param(f"v{k}", "f32", shape, init="square")))
    roots = []
    for p, g, m, v in groups:
        gf = f.cvt(g, "f32")
        m2 = B1 * m + (1 - B1) * gf
        v2 = B2 * v + (1 - B2) * gf * gf
        upd = (m2 * c1) / (f.un("sqrt", v2 * c2) + EPS)
        if wd:
            upd = upd + wd * p
        p2 = p - f.bcast(lr, shape, []) * upd
        roots += [p2, m2, v2]

    def tf(T, lr, *xs):
        out = []
        for k in range(n_params):
            p, g, m, v = xs[4 * k:4 * k + 4]
            g = g.float()
            m2 = B1 * m + (1 - B1) * g
            v2 = B2 * v + (1 - B2) * g * g
            upd = (m2 * c1) / (T.sqrt(v2 * c2) + EPS)
            if wd:
                upd = upd + wd * p
            out += [p - lr * upd, m2, v2]
        return tuple(out)

    def jf(J, lr, *xs):
        out = []
        for k in range(n_params):
            p, g, m, v = xs[4 * k:4 * k + 4]
            g = g.astype(J.jnp.float32)
            m2 = B1 * m + (1 - B1) * g
            v2 = B2 * v + (1 - B2) * g * g
            upd = (m2 * c1) / (J.jnp.sqrt(v2 * c2) + EPS)
            if wd:
                upd = upd + wd * p
            out += [p - lr * upd, m2, v2]
        return tuple(out)
    SUITE.append(Fusion(name, "Adam step", model, f, roots, "kLoop", tf, jf))


def sgd_momentum(name, model, shape):
    """SGD with momentum on an f32 master weight, writing the bf16 copy the
    next forward pass reads."""
    shape = ss(shape)
    f = Fn(name)
    p = f.param("p", "f32", shape)
    g = f.param("g", "bf16", shape)
    buf = f.param("buf", "f32", shape)
    b2 = 0.9 * buf + f.cvt(g, "f32")
    p2 = p - 0.01 * b2

    def tf(T, p, g, buf):
        b2 = 0.9 * buf + g.float()
        p2 = p - 0.01 * b2
        return p2, b2, p2.bfloat16()

    def jf(J, p, g, buf):
        b2 = 0.9 * buf + g.astype(J.jnp.float32)
        p2 = p - 0.01 * b2
        return p2, b2, p2.astype(J.jnp.bfloat16)
    SUITE.append(Fusion(name, "SGD step", model, f, [p2, b2, f.cvt(p2, "bf16")], "kLoop",
                        tf, jf))



def _table():
    """The suite: one call per fusion."""
    # Row reductions: every type, rows of 1 to 65536 elements.
    reduction("rowsum_f32_1048576x1", "degenerate (keepdims)", "add", "f32", (1048576, 1), [1],
              note="rows of 1")
    reduction("rowsum_f32_65536x7", "recommender", "add", "f32", (65536, 7), [1])
    reduction("rowmin_f16_131072x24", "detection", "minimum", "f16", (131072, 24), [1])
    reduction("rowmax_s8_32768x77", "quantized", "maximum", "s8", (32768, 77), [1])
    reduction("rowsum_bf16_f32acc_8x65536", "loss", "add", "bf16", (8, 65536), [1],
              acc="f32", out="f32")
    reduction("rowsum_f16_8192x1000", "classifier", "add", "f16", (8192, 1000), [1],
              acc="f32")
    reduction("rowmax_s32_16384x333", "int features", "maximum", "s32", (16384, 333), [1])
    reduction("rowsum_s8_s32acc_65536x1024", "quantized", "add", "s8", (65536, 1024), [1],
              acc="s32", out="s32")
    reduction("rowsum_s32_4096x4097", "int features", "add", "s32", (4096, 4097), [1])
    reduction("rowsum_f32_64x65536", "long rows", "add", "f32", (64, 65536), [1])
    reduction("rowmax_bf16_1000x50257", "LM logits", "maximum", "bf16", (1000, 50257), [1])
    reduction("rowsum_bf16_f32acc_2048x3000", "transformer", "add", "bf16", (2048, 3000), [1],
              acc="f32", out="bf16")
    reduction("rowsum_f32_262144x1024", "1 GiB", "add", "f32", (262144, 1024), [1])
    # Full reductions.
    reduction("fullsum_f32_1000000", "loss", "add", "f32", (1000000,), [0])
    reduction("fullsum_bf16_f32acc_33554431", "grad norm", "add", "bf16", (33554431,), [0],
              acc="f32", out="f32")
    reduction("fullmax_s32_268435456", "1 GiB", "maximum", "s32", (268435456,), [0])
    # Column and middle-dim reductions.
    reduction("colsum_f32_4096x1000", "bias grad", "add", "f32", (4096, 1000), [0])
    reduction("colsum_bf16_f32acc_32768x768", "bias grad", "add", "bf16", (32768, 768), [0],
              acc="f32", out="f32")
    reduction("colsum_f16_100x50000", "embedding grad", "add", "f16", (100, 50000), [0],
              acc="f32")
    reduction("colmax_s32_1000x4099", "int features", "maximum", "s32", (1000, 4099), [0])
    reduction("colsum_f32_16384x16384", "1 GiB", "add", "f32", (16384, 16384), [0])
    reduction("bnstats_f32_32x56x56x64", "CNN batch norm", "add", "f32", (32, 56, 56, 64),
              [0, 1, 2])
    reduction("midsum_f32_64x1024x96", "transformer", "add", "f32", (64, 1024, 96), [1])
    reduction("midmax_f32_128x77x512", "text encoder", "maximum", "f32", (128, 77, 512), [1])
    reduction("avgpool_bf16_f32acc_32x56x56x256", "CNN global pool", "add", "bf16",
              (32, 56, 56, 256), [1, 2], acc="f32", out="f32")
    reduction("embbag_f32_65536x26x128", "recommender (1 GiB)", "add", "f32",
              (65536, 26, 128), [1])
    layernorm("layernorm_bf16_8192x768", "BERT-base", "bf16", 8192, 768)
    layernorm("layernorm_bf16_32768x4096", "LLM (256 MiB)", "bf16", 32768, 4096)
    layernorm("layernorm_f32_4096x1023", "odd rows", "f32", 4096, 1023)
    rmsnorm("rmsnorm_bf16_2048x5120", "LLM decode", "bf16", 2048, 5120)
    rmsnorm("rmsnorm_bf16_16384x4096", "LLM", "bf16", 16384, 4096)
    softmax("softmax_bf16_4096x1000", "classifier", "bf16", (4096, 1000))
    softmax("softmax_bf16_256x50257", "LM vocab", "bf16", (256, 50257))
    softmax("attn_softmax_bf16_32x16x512x512", "attention (256 MiB)", "bf16",
            (32, 16, 512, 512), scale=0.125, mask=True)
    transpose("transpose_f32_1023x2049", "2-D", "f32", (1023, 2049), [1, 0])
    transpose("transpose_s8_4095x4097", "quantized weights", "s8", (4095, 4097), [1, 0])
    transpose("transpose021_bf16_48x1001x513", "attention K^T", "bf16", (48, 1001, 513), [0, 2, 1])
    transpose("transpose102_f32_257x511x63", "heads <-> seq", "f32", (257, 511, 63), [1, 0, 2])
    transpose("transpose120_f16_129x300x301", "3-D", "f16", (129, 300, 301), [1, 2, 0])
    transpose("transpose201_bf16_97x130x1031", "3-D", "bf16", (97, 130, 1031), [2, 0, 1])
    transpose("transpose210_f32_65x257x511", "3-D", "f32", (65, 257, 511), [2, 1, 0])
    transpose("nchw_to_nhwc_bf16_32x64x56x56", "CNN layout", "bf16", (32, 64, 56, 56),
              [0, 2, 3, 1])
    transpose("nhwc_to_nchw_f32_8x56x56x96", "CNN layout", "f32", (8, 56, 56, 96), [0, 3, 1, 2])
    transpose("transpose_f32_16384x16385", "1 GiB", "f32", (16384, 16385), [1, 0])
    pad("pad_nhwc_bf16_32x56x56x64", "CNN SAME conv", "bf16", (32, 56, 56, 64),
        [(0, 0), (1, 1), (1, 1), (0, 0)])
    pad("pad_align_f32_1000x1000", "alignment", "f32", (1000, 1000), [(0, 24), (0, 24)])
    slice_("slice_qkv_bf16_8192x3072", "attention q of qkv", "bf16", (8192, 3072),
           [(0, 8192, 1), (1024, 2048, 1)])
    slice_("slice_stride2_f32_64x1024x1024", "strided (256 MiB)", "f32", (64, 1024, 1024),
           [(0, 64, 1), (0, 1024, 2), (0, 1024, 1)])
    split("split_qkv_bf16_8192x3072", "attention qkv split", "bf16", (8192, 3072),
          [1024, 1024, 1024])
    split("split_odd_f32_4096x1000", "uneven split", "f32", (4096, 1000), [333, 333, 334])
    split("split_heads_f32_4096x1024", "heads split", "f32", (4096, 1024), [256] * 4)
    concat("concat_qkv_bf16_3x4096x1024", "attention qkv", "bf16", [(4096, 1024)] * 3, 1)
    concat("concat_rows_f32_1000x513_24x513", "batch padding", "f32", [(1000, 513), (24, 513)], 0)
    concat("concat_features_f32_8x16384x64", "recommender", "f32", [(16384, 64)] * 8, 1)
    concat("concat_widths_bf16_8192x1024_512_256", "three widths", "bf16",
           [(8192, 1024), (8192, 512), (8192, 256)], 1)
    concat("concat_widths_f32_4096x128_256_33", "three odd widths", "f32",
           [(4096, 128), (4096, 256), (4096, 33)], 1)
    concat("concat_kv_f16_2x8192x2048", "KV cache append (dim 0)", "f16",
           [(8192, 2048), (8192, 2048)], 0)
    concat("concat_channels_bf16_32x56x56_64_128", "DenseNet channels", "bf16",
           [(32, 56, 56, 64), (32, 56, 56, 128)], 3)
    concat("concat_small_s8_1000x77_33_1", "odd byte widths (L2)", "s8",
           [(1000, 77), (1000, 33), (1000, 1)], 1)
    concat("concat_heads_f32_4x4096x256", "attention heads", "f32", [(4096, 256)] * 4, 1)
    concat("concat_gates_f16_16384x512_512_1024", "gate blocks", "f16",
           [(16384, 512), (16384, 512), (16384, 1024)], 1)
    concat("concat_layers_bf16_3x4096x2048", "layer stack (dim 0)", "bf16",
           [(4096, 2048)] * 3, 0)
    concat("concat_pair_f32_8192x1024_1024", "residual pair", "f32",
           [(8192, 1024), (8192, 1024)], 1)
    concat("concat_pair_f32_2048x1024_1024", "residual pair (16 MiB)", "f32",
           [(2048, 1024), (2048, 1024)], 1)
    concat("concat_kv_bf16_2x4096x2048", "KV cache append (32 MiB)", "bf16",
           [(4096, 2048), (4096, 2048)], 0)
    concat("concat_odd_f16_8192x100_200_300", "odd f16 widths", "f16",
           [(8192, 100), (8192, 200), (8192, 300)], 1)
    concat("concat_misaligned_bf16_32768x127_129", "misaligned bf16 rows", "bf16",
           [(32768, 127), (32768, 129)], 1)
    concat("concat_misaligned_s8_65536x77_33_1", "odd byte widths (DRAM)", "s8",
           [(65536, 77), (65536, 33), (65536, 1)], 1)
    embedding("embedding_bf16_32768x4096_16384", "token embedding", "bf16",
              32768, 4096, 16384)
    embedding("embedding_f32_50257x768_4096", "GPT-2 embedding", "f32",
              50257, 768, 4096)
    reverse("reverse_f32_4096x4097", "flip", "f32", (4096, 4097), [1])
    reverse("reverse_bf16_256x1024x1024", "1 GiB (seq flip)", "bf16", (256, 1024, 1024), [0])
    bias_gelu("bias_gelu_bf16_2048x1000", "MLP (small)", "bf16", 2048, 1000)
    bias_gelu("bias_gelu_bf16_65536x4096", "MLP (512 MiB in)", "bf16", 65536, 4096)
    residual_add("residual_bias_bf16_16384x1024", "transformer", "bf16", 16384, 1024)
    bn_relu("bn_relu_f16_64x28x28x512", "CNN (ResNet)", "f16", (64, 28, 28, 512))
    swiglu("swiglu_bf16_8192x11008", "LLaMA MLP", "bf16", 8192, 11008)
    adam("adam_f32_262144", "small layer", 1, (262144,))
    adam("adam_2params_f32_4096x1024", "two params, one fusion", 2, (4096, 1024))
    adam("adamw_bf16grad_16777216", "mixed precision (448 MiB)", 1, (16777216,), grad_dt="bf16",
         wd=0.01)
    sgd_momentum("sgd_momentum_f32_4096x4096", "mixed precision", (4096, 4096))
    scan("cumsum_topp_f32_32x50257", "top-p sampling (vocab)", "add", "f32", (32, 50257), 1)
    scan("cumsum_positions_s32_64x4096", "position ids from a 0/1 mask", "add", "s32",
         (64, 4096), 1, init="index2")
    scan("cumsum_bf16_f32acc_8x131072", "long rows, f32 inside", "add", "bf16", (8, 131072), 1,
         acc="f32")
    scan("cummax_rev_f32_4096x1024", "suffix max", "maximum", "f32", (4096, 1024), 1,
         reverse=True)
    scan("cumsum_dim0_f32_2048x4096", "over time steps", "add", "f32", (2048, 4096), 0)
    scan("cumsum_1d_f32_16777216", "stream compaction offsets (64 MiB)", "add", "f32",
         (16777216,), 0)
    scan("cumsum_rows_f32_1048576x8", "offsets per group", "add", "f32", (1048576, 8), 1)


def build(small=False):
    """The fusions of the table; with SMALL, every dim shrunk (sd())."""
    global SUITE, _SMALL
    saved = SUITE, _SMALL
    SUITE, _SMALL = [], small
    try:
        _table()
        return SUITE
    finally:
        SUITE, _SMALL = saved


SUITE = build()


def by_name():
    return {f.name: f for f in SUITE}


def human(b):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return f"{b / k:.1f} {unit}"
    return f"{b} B"


def table():
    rows = ["| name | inputs | category | model | bytes | L2-resident |",
            "|---|---|---|---|---|---|"]
    for f in SUITE:
        rows.append(f"| `{f.name}` | {f.shape_desc} | {f.category} | {f.model} | "
                    f"{human(f.bytes)} | {'yes' if f.l2_resident else 'no'} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "hlo"))
    ap.add_argument("--list", action="store_true", help="print the README table")
    a = ap.parse_args()
    names = [f.name for f in SUITE]
    assert len(names) == len(set(names)), "duplicate fusion names"
    if a.list:
        print(table())
        return
    os.makedirs(a.out, exist_ok=True)
    for f in SUITE:
        with open(os.path.join(a.out, f.name + ".hlo"), "w") as o:
            o.write(f.hlo)
    print(f"{len(SUITE)} fusions written to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
