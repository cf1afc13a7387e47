#!/usr/bin/env python3
"""Dump the HLO of small JAX models for idxmap's parser corpus (test/corpus/jax).

usage: JAX_PLATFORMS=cuda python3 test/corpus/gen/dump_jax.py OUTDIR

For each model NAME it writes OUTDIR/NAME.hlo (unoptimized:
jax.jit(f).lower(*args).as_text(dialect="hlo")) and OUTDIR/NAME.opt.hlo
(optimized for the local device: jax.jit(f).lower(*args).compile().as_text()),
plus OUTDIR/versions.txt and OUTDIR/log.txt. Every model is tried on its own;
a failure is logged and the others still run. misc_ops, misc_elementwise and
misc_random are assembled from the components that lower and compile on their own.
"""
import os
import platform
import sys
import traceback

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

OUT = sys.argv[1] if len(sys.argv) > 1 else "corpus_out"
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "log.txt"), "w")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


RNG = np.random.default_rng(0)


def rnd(shape, dtype=jnp.float32, scale=1.0):
    return jnp.asarray(RNG.standard_normal(shape) * scale, dtype=dtype)


def hlo_text(lowered):
    try:
        return lowered.as_text(dialect="hlo")
    except Exception as e:  # older/newer API spellings
        log("  as_text(dialect='hlo') failed:", repr(e))
        return lowered.compiler_ir("hlo").as_hlo_text()


def dump(name, f, *args):
    try:
        lowered = jax.jit(f).lower(*args)
        txt = hlo_text(lowered)
        with open(os.path.join(OUT, name + ".hlo"), "w") as fh:
            fh.write(txt)
        compiled = lowered.compile()
        opt = compiled.as_text()
        with open(os.path.join(OUT, name + ".opt.hlo"), "w") as fh:
            fh.write(opt)
        log(f"{name}: ok, {len(txt)} / {len(opt)} bytes")
        return True
    except Exception:
        log(f"{name}: FAILED\n{traceback.format_exc()}")
        return False


# ---------------------------------------------------------------- transformer
B, T, D, H, F = 2, 12, 40, 4, 120  # odd-ish sizes; head dim 10
HD = D // H


def layernorm(x, g, b, eps=1e-5):
    x32 = x.astype(jnp.float32)
    m = x32.mean(-1, keepdims=True)
    v = jnp.square(x32 - m).mean(-1, keepdims=True)
    return ((x32 - m) * lax.rsqrt(v + eps) * g + b).astype(x.dtype)


def block(p, x):
    h = layernorm(x, p["ln1_g"], p["ln1_b"])
    q = (h @ p["wq"]).reshape(B, T, H, HD)
    k = (h @ p["wk"]).reshape(B, T, H, HD)
    v = (h @ p["wv"]).reshape(B, T, H, HD)
    s = jnp.einsum("bthd,bshd->bhts", q, k, preferred_element_type=jnp.float32)
    s = s / np.sqrt(HD).astype(np.float32)
    mask = jnp.tril(jnp.ones((T, T), bool))
    s = jnp.where(mask, s, -1e9)
    a = jax.nn.softmax(s, axis=-1).astype(x.dtype)
    o = jnp.einsum("bhts,bshd->bthd", a, v).reshape(B, T, D)
    x = x + o @ p["wo"]
    h2 = layernorm(x, p["ln2_g"], p["ln2_b"])
    m = jax.nn.gelu(h2 @ p["w1"] + p["b1"], approximate=True)
    return x + m @ p["w2"] + p["b2"]


def block_params(dtype):
    return {
        "ln1_g": jnp.ones((D,), jnp.float32), "ln1_b": jnp.zeros((D,), jnp.float32),
        "ln2_g": jnp.ones((D,), jnp.float32), "ln2_b": jnp.zeros((D,), jnp.float32),
        "wq": rnd((D, D), dtype, 0.1), "wk": rnd((D, D), dtype, 0.1),
        "wv": rnd((D, D), dtype, 0.1), "wo": rnd((D, D), dtype, 0.1),
        "w1": rnd((D, F), dtype, 0.1), "b1": jnp.zeros((F,), dtype),
        "w2": rnd((F, D), dtype, 0.1), "b2": jnp.zeros((D,), dtype),
    }


def transformer_train_step(master, opt, x, y, lr):
    # f32 master weights, bf16 compute (matrices), AdamW.
    def loss_fn(mp):
        p = {k: (v.astype(jnp.bfloat16) if v.ndim == 2 else v) for k, v in mp.items()}
        out = block(p, x).astype(jnp.float32)
        return jnp.mean(jnp.square(out - y))

    loss, g = jax.value_and_grad(loss_fn)(master)
    step = opt["step"] + 1
    b1, b2, eps, wd = 0.9, 0.999, 1e-8, 0.01
    t = step.astype(jnp.float32)
    new_p, new_m, new_v = {}, {}, {}
    for k in master:
        m = b1 * opt["m"][k] + (1 - b1) * g[k]
        v = b2 * opt["v"][k] + (1 - b2) * jnp.square(g[k])
        mh = m / (1 - b1 ** t)
        vh = v / (1 - b2 ** t)
        new_p[k] = master[k] - lr * (mh / (jnp.sqrt(vh) + eps) + wd * master[k])
        new_m[k], new_v[k] = m, v
    gnorm = jnp.sqrt(sum(jnp.sum(jnp.square(v)) for v in jax.tree_util.tree_leaves(g)))
    return loss, gnorm, new_p, {"step": step, "m": new_m, "v": new_v}


# ---------------------------------------------------------------- CNN
DN = ("NHWC", "HWIO", "NHWC")


def cnn_block(p, x):
    y = lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=DN)
    mu = y.mean((0, 1, 2), keepdims=True)
    var = jnp.square(y - mu).mean((0, 1, 2), keepdims=True)
    y = (y - mu) * lax.rsqrt(var + 1e-5) * p["g1"] + p["b1"]
    y = jax.nn.relu(y)
    y2 = lax.conv_general_dilated(y.astype(jnp.bfloat16), p["c2"], (2, 2), "SAME",
                                  dimension_numbers=DN,
                                  preferred_element_type=jnp.float32)
    y2 = jax.nn.relu(y2)
    mp = lax.reduce_window(y2, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    ap = lax.reduce_window(y2, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID") / 4.0
    dw = lax.conv_general_dilated(ap, p["dw"], (1, 1), ((1, 1), (2, 0)),
                                  dimension_numbers=DN,
                                  feature_group_count=ap.shape[-1],
                                  rhs_dilation=(1, 2))
    feat = jnp.concatenate([mp.mean((1, 2)), dw.max((1, 2))], axis=-1)
    return feat @ p["fc"]


def cnn_params():
    C1, C2 = 6, 10
    return {
        "c1": rnd((3, 3, 3, C1), jnp.float32, 0.3),
        "g1": jnp.ones((C1,), jnp.float32), "b1": jnp.zeros((C1,), jnp.float32),
        "c2": rnd((3, 3, C1, C2), jnp.bfloat16, 0.3),
        "dw": rnd((3, 3, 1, C2), jnp.float32, 0.3),
        "fc": rnd((2 * C2, 5), jnp.float32, 0.3),
    }


def cnn_train_step(p, x, labels):
    def loss_fn(p, x):
        logits = cnn_block(p, x)
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    loss, (gp, gx) = jax.value_and_grad(loss_fn, argnums=(0, 1))(p, x)
    newp = jax.tree_util.tree_map(lambda w, g: (w - 0.01 * g.astype(w.dtype)).astype(w.dtype), p, gp)
    return loss, newp, gx


# ---------------------------------------------------------------- control flow
def scan_rnn(p, xs, h0, idx, n):
    def cell(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["b"])
        return h, h

    h, hs = lax.scan(cell, h0, xs)
    y = lax.cond(h.sum() > 0, lambda h: h * 2.0, lambda h: jnp.sin(h), h)
    z = lax.fori_loop(0, 5, lambda i, c: c * 0.5 + i.astype(jnp.float32), y)
    z2 = lax.fori_loop(0, n, lambda i, c: c + jnp.cos(c), z)  # dynamic trip count
    w = lax.switch(idx, [lambda a: a + 1.0, lambda a: a * a, lambda a: jnp.exp(-a)], z2)

    def wcond(c):
        return (c[0] < 10) & (jnp.max(jnp.abs(c[1])) < 100.0)

    def wbody(c):
        return c[0] + 1, c[1] * 1.5 + 0.1

    cnt, ww = lax.while_loop(wcond, wbody, (jnp.int32(0), w))
    rev = lax.scan(lambda c, x: (c + x.sum(), c), 0.0, xs, reverse=True, unroll=2)
    return hs, ww, cnt, rev


# ---------------------------------------------------------------- gather/scatter
def gather_scatter(x, idx, idx2, upd, emb, tok, tidx):
    a = x[idx]                         # row gather
    b = x[:, idx2]                     # column gather
    c = x[idx, 2:5]                    # gather + slice
    d = x[idx[:, None], idx2[None, :]] # 2-D advanced indexing
    s1 = x.at[idx].add(upd)
    s2 = x.at[idx].set(upd)
    s3 = x.at[idx].max(upd)
    s4 = x.at[idx, 1].mul(2.0, mode="drop")
    t = jnp.take_along_axis(x, tidx, axis=1)
    e = emb[tok]                       # embedding lookup, bf16 table
    f = jnp.take(x, idx2, axis=1, mode="clip")
    g = jnp.take(x, idx, axis=0, mode="fill", fill_value=-1.0)
    h = jnp.zeros((5,), jnp.float32).at[tok.reshape(-1) % 5].add(1.0)  # histogram
    return a, b, c, d, s1, s2, s3, s4, t, e, f, g, h


# ---------------------------------------------------------------- sort/topk
def sort_topk(x, xi, y):
    s = jnp.sort(x, axis=-1)
    s0 = jnp.sort(x, axis=0, descending=True)
    a = jnp.argsort(x, axis=-1)
    a2 = jnp.argsort(xi, stable=True)
    tv, ti = lax.top_k(x, 3)
    cs = jnp.cumsum(x, axis=1)
    cp = jnp.cumprod(y, axis=0)
    cm = lax.cummax(x, axis=1)
    ls = lax.sort((x[0], xi.astype(jnp.float32)), num_keys=1)
    med = jnp.median(x, axis=1)
    am = jnp.argmax(x, axis=1)
    return s, s0, a, a2, tv, ti, cs, cp, cm, ls, med, am


# ---------------------------------------------------------------- misc
def _shard_map():
    sm = getattr(jax, "shard_map", None)
    if sm is None:
        from jax.experimental.shard_map import shard_map as sm
    return sm


def make_collectives():
    from jax.sharding import Mesh, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    sm = _shard_map()

    def body(a):
        s = lax.psum(a, "x")
        g = lax.all_gather(a, "x", axis=0, tiled=True)
        m = lax.pmax(a, "x")
        pp = lax.ppermute(a, "x", perm=[(0, 0)])
        rs = lax.psum_scatter(a, "x", scatter_dimension=0, tiled=True)
        at = lax.all_to_all(a, "x", 0, 0, tiled=True)
        i = lax.axis_index("x")
        return s + m + pp + rs + at + i.astype(a.dtype), g

    f = sm(body, mesh=mesh, in_specs=P("x"), out_specs=(P("x"), P("x")))
    return f


def misc_components():
    key = jax.random.key(0)
    spd = rnd((5, 5))
    comps = {}
    comps["fft"] = (lambda x: (jnp.fft.fft(x.astype(jnp.complex64)),
                               jnp.fft.irfft(jnp.fft.rfft(x, axis=-1), n=x.shape[-1]),
                               jnp.fft.fft2(x + 0j)), (rnd((3, 8)),))
    comps["cholesky"] = (lambda a: jnp.linalg.cholesky(a @ a.T + 5.0 * jnp.eye(5)), (spd,))
    comps["triangular_solve"] = (
        lambda a, b: jax.scipy.linalg.solve_triangular(jnp.tril(a) + 4.0 * jnp.eye(5), b, lower=True),
        (spd, rnd((5, 3))))
    comps["threefry"] = (lambda k: (jax.random.normal(k, (4, 7)), jax.random.randint(k, (9,), 0, 10),
                                    jax.random.bernoulli(jax.random.fold_in(k, 3), 0.3, (6,))), (key,))
    comps["rng_bit_generator"] = (lambda k: lax.rng_bit_generator(k, (3, 5), dtype=jnp.uint32),
                                  (jnp.arange(4, dtype=jnp.uint32),))
    comps["reduce_precision"] = (lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10), (rnd((7,)),))
    comps["bitcast_convert"] = (lambda x: (lax.bitcast_convert_type(x, jnp.int32),
                                           lax.bitcast_convert_type(x, jnp.uint8),
                                           lax.bitcast_convert_type(x.astype(jnp.bfloat16), jnp.int16)), (rnd((3, 4)),))
    comps["einsum_batch"] = (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (rnd((3, 4, 5)), rnd((3, 5, 6))))
    comps["einsum_multi"] = (lambda a, b: jnp.einsum("bhqd,bkhd->bhqk", a, b.astype(jnp.bfloat16),
                                                     preferred_element_type=jnp.float32),
                             (rnd((2, 3, 4, 5), jnp.bfloat16), rnd((2, 6, 3, 5))))
    comps["dynamic_slice"] = (lambda x, i, j: (lax.dynamic_slice(x, (i, j), (2, 3)),
                                               lax.dynamic_update_slice(x, jnp.ones((2, 3)), (j, i)),
                                               lax.dynamic_index_in_dim(x, i, axis=1)),
                              (rnd((6, 7)), jnp.int32(2), jnp.int32(1)))
    comps["pad"] = (lambda x: (lax.pad(x, 0.0, [(-1, 2, 1), (1, -2, 0)]),
                               jnp.pad(x, ((1, 2), (0, 3)), mode="reflect"),
                               jnp.pad(x, 2, mode="edge")), (rnd((5, 6)),))
    comps["iota"] = (lambda x: (lax.broadcasted_iota(jnp.int32, (3, 4), 1) + x.astype(jnp.int32),
                                jnp.arange(7, dtype=jnp.float32) * 0.5, jnp.eye(4, k=1)), (rnd((3, 4)),))
    comps["complex"] = (lambda a, b: (lambda z: (z * jnp.conj(z), jnp.abs(z), jnp.angle(z), jnp.exp(z),
                                                 z.real + z.imag, lax.complex(a, b) / (z + 1)))(a + 1j * b),
                        (rnd((4,)), rnd((4,))))
    comps["erf"] = (lambda x: (jax.scipy.special.erf(x), lax.erf_inv(jnp.tanh(x)), jax.scipy.special.erfc(x),
                               lax.lgamma(jnp.abs(x) + 1), lax.digamma(jnp.abs(x) + 1)), (rnd((9,)),))
    comps["optimization_barrier"] = (lambda x, y: lax.optimization_barrier((x * 2, y + 1)), (rnd((3,)), rnd((2, 2))))
    comps["elementwise"] = (lambda x, i: (lax.clamp(-0.5, x, 0.5), jnp.round(x), jnp.floor(x), jnp.ceil(x),
                                          jnp.sign(x), jnp.arctan2(x, x + 1), jnp.expm1(x), jnp.log1p(jnp.abs(x)),
                                          jnp.isfinite(x), jnp.cbrt(x), jnp.nextafter(x, 0.0), x ** 3,
                                          jnp.remainder(x, 0.7), jnp.tan(x), lax.logistic(x),
                                          lax.population_count(i), lax.clz(i), i << 2, i >> 1,
                                          lax.shift_right_logical(i, 3), i & 6, i | 1, i ^ 5, ~i,
                                          i // 3, i % 3, jnp.maximum(i, 2), jnp.flip(x, 0), x.T,
                                          jnp.all(x > 0, axis=1), jnp.any(x < 0), x.astype(jnp.float16),
                                          x.astype(jnp.int8), x.astype(jnp.float8_e4m3fn),
                                          jnp.concatenate([x, x], 1), jnp.tile(x[:1], (2, 1)),
                                          jnp.expand_dims(x, 0).reshape(2, -1), x[::2, 1:5:2]),
                            (rnd((4, 6)), jnp.arange(24, dtype=jnp.int32).reshape(4, 6) - 7))
    comps["collectives"] = (make_collectives(), (rnd((4, 3)),))
    return comps


MISC_ELEMENTWISE = ["erf", "elementwise"]
MISC_RANDOM = ["threefry", "rng_bit_generator"]


def build_misc(comps, group):
    ok = {}
    for name in group:
        fn, args = comps[name]
        try:
            jax.jit(fn).lower(*args).compile()
            ok[name] = (fn, args)
            log(f"  misc component {name}: ok")
        except Exception:
            log(f"  misc component {name}: FAILED\n{traceback.format_exc()}")
    names = list(ok)
    flat_args, spans = [], []
    for n in names:
        a = ok[n][1]
        spans.append((len(flat_args), len(a)))
        flat_args.extend(a)

    def misc(*xs):
        return tuple(ok[n][0](*xs[s:s + k]) for n, (s, k) in zip(names, spans))

    return misc, flat_args, names


def main():
    dev = jax.devices()
    import jaxlib
    with open(os.path.join(OUT, "versions.txt"), "w") as fh:
        fh.write(f"jax {jax.__version__}\njaxlib {jaxlib.__version__}\n")
        fh.write(f"python {platform.python_version()}\n")
        fh.write(f"devices {[str(d) for d in dev]} kind {dev[0].device_kind}\n")
        fh.write(f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')}\n")
    log("devices", dev)

    pb = block_params(jnp.bfloat16)
    xb = rnd((B, T, D), jnp.bfloat16)
    dump("transformer_block", block, pb, xb)

    master = jax.tree_util.tree_map(lambda v: v.astype(jnp.float32), pb)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, master)
    opt = {"step": jnp.int32(0), "m": zeros, "v": zeros}
    dump("transformer_train_step", transformer_train_step, master, opt, xb,
         rnd((B, T, D)), jnp.float32(1e-3))

    cp = cnn_params()
    xc = rnd((2, 15, 15, 3))
    dump("cnn_block", cnn_block, cp, xc)
    dump("cnn_train_step", cnn_train_step, cp, xc, jnp.array([1, 3], jnp.int32))

    rp = {"wx": rnd((5, 6), scale=0.3), "wh": rnd((6, 6), scale=0.3), "b": jnp.zeros((6,))}
    dump("scan_rnn", scan_rnn, rp, rnd((7, 3, 5)), jnp.zeros((3, 6)), jnp.int32(1), jnp.int32(3))

    xg = rnd((9, 7))
    dump("gather_scatter", gather_scatter, xg, jnp.array([0, 4, 4, 8], jnp.int32),
         jnp.array([6, 1, 2], jnp.int32), rnd((4, 7)), rnd((11, 16), jnp.bfloat16),
         jnp.array([[1, 10, 3], [0, 0, 7]], jnp.int32),
         jnp.asarray(RNG.integers(0, 7, (9, 3)), jnp.int32))

    dump("sort_topk", sort_topk, rnd((5, 13)), jnp.asarray(RNG.integers(0, 4, (13,)), jnp.int32),
         rnd((4, 3)) * 0.5 + 1.0)

    # Three modules, so that each optimized dump stays below ~300 KB.
    comps = misc_components()
    groups = {"misc_ops": [n for n in comps if n not in MISC_ELEMENTWISE + MISC_RANDOM],
              "misc_elementwise": MISC_ELEMENTWISE,
              "misc_random": MISC_RANDOM}
    with open(os.path.join(OUT, "misc_components.txt"), "w") as fh:
        for model, group in groups.items():
            misc, margs, names = build_misc(comps, group)
            log(f"{model} components:", ", ".join(names))
            fh.write(f"{model}: {' '.join(names)}\n")
            dump(model, misc, *margs)


if __name__ == "__main__":
    main()
