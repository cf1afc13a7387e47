#!/usr/bin/env python3
"""Times prefix scans (issue 18) beside the peers, by peers.py's method
(bench/kernel_timing.py: CUPTI kernel time of groups of 6 calls, the
contenders interleaved and rotated): idxmap's kernel from the HLO JAX
writes (the scan op of jnp.cumsum, the prefix reduce-window of
lax.cummax), torch eager (its 1-D cumsum calls CUB's DeviceScan),
torch.compile, XLA through JAX and CuPy's cumsum.

  python3 bench/scan_peers.py --idxmap BIN [--groups N] [--only NAME]
                              [--tune NAME=VALUE[,...]] [--dry-run]

Workloads (the issue's five): cumsum of f32[2^28]; cumsum along the rows
of f32[16384,4096] and of f32[262144,128]; cumsum along dim 0 of
f32[4096,16384]; cummax along the rows of f32[16384,4096]. Prints per
contender the mean, median, min and max of the group times (us), its
kernels per call, and the fraction of the copy limit (2 x the bytes at
4.27 TB/s, the H200's device-to-device copy rate) the median reaches.
--dry-run only writes the HLO and emits it (no GPU, no peers).
"""
import argparse, os, statistics, subprocess, sys, tempfile, warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_timing  # noqa: E402

COPY_TBPS = 4.27

# jnp.cumsum as JAX writes it before optimization: the scan op, its body
# returning the sum as output and carry.
CUMSUM_HLO = """HloModule {name}

body {{
  x = f32[{slice}] parameter(0)
  c = f32[{slice}] parameter(1)
  s = f32[{slice}] add(x, c)
  ROOT t = (f32[{slice}], f32[{slice}]) tuple(s, s)
}}

fused {{
  p0 = f32[{dims}]{{{layout}}} parameter(0)
  zero = f32[] constant(0)
  z = f32[{slice}] broadcast(zero), dimensions={{}}
  s = (f32[{dims}]{{{layout}}}, f32[{slice}]) scan(p0, z), dimensions={{{dim}}}, num_carries=1, is_associative=true, to_apply=body
  ROOT g = f32[{dims}]{{{layout}}} get-tuple-element(s), index=0
}}

ENTRY main {{
  x = f32[{dims}]{{{layout}}} parameter(0)
  ROOT f = f32[{dims}]{{{layout}}} fusion(x), kind=kInput, calls=fused
}}
"""

# lax.cummax: a reduce-window over the whole scanned dim, padded low.
CUMMAX_HLO = """HloModule {name}

max {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}}

fused {{
  p0 = f32[{dims}]{{{layout}}} parameter(0)
  ninf = f32[] constant(-inf)
  ROOT w = f32[{dims}]{{{layout}}} reduce-window(p0, ninf), window={{size={sizes} pad={pads}}}, to_apply=max
}}

ENTRY main {{
  x = f32[{dims}]{{{layout}}} parameter(0)
  ROOT f = f32[{dims}]{{{layout}}} fusion(x), kind=kInput, calls=fused
}}
"""

# name, shape, scanned dim, combiner
WORKLOADS = [
    ("cumsum_f32_268435456", (1 << 28,), 0, "sum"),
    ("cumsum_rows_f32_16384x4096", (16384, 4096), 1, "sum"),
    ("cumsum_cols_f32_4096x16384", (4096, 16384), 0, "sum"),
    ("cumsum_rows_f32_262144x128", (262144, 128), 1, "sum"),
    ("cummax_rows_f32_16384x4096", (16384, 4096), 1, "max"),
]


def hlo_text(name, shape, dim, kind):
    rank = len(shape)
    f = dict(name=name, dims=",".join(map(str, shape)),
             layout=",".join(str(d) for d in reversed(range(rank))), dim=dim,
             slice=",".join(str(n) for k, n in enumerate(shape) if k != dim))
    if kind == "sum":
        return CUMSUM_HLO.format(**f)
    f["sizes"] = "x".join(str(n if k == dim else 1) for k, n in enumerate(shape))
    f["pads"] = "x".join(f"{n - 1}_0" if k == dim else "0_0"
                         for k, n in enumerate(shape))
    return CUMMAX_HLO.format(**f)


def main():
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--idxmap", required=True)
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--only", default="")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--tune", default="",
                    help="knob overrides for idxmap emit (NAME=VALUE[,...])")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    ptxs = {}
    for name, shape, dim, kind in WORKLOADS:
        if a.only and name not in a.only.split(","):
            continue
        hlo = os.path.join(tmp, name + ".hlo")
        with open(hlo, "w") as f:
            f.write(hlo_text(name, shape, dim, kind))
        ptx = os.path.join(tmp, name + ".ptx")
        r = subprocess.run([a.idxmap, "emit", hlo, "-o", ptx] +
                           (["--tune", a.tune] if a.tune else []))
        ptxs[name] = ptx if r.returncode == 0 else None
        print(f"{name}: idxmap emit {'ok' if ptxs[name] else 'failed'} ({hlo})")
    if a.dry_run:
        return 0 if all(ptxs.values()) else 1
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    os.environ["CUPY_ACCELERATORS"] = "cub"
    import cupy as cp
    import numpy as np
    import torch
    import jax
    import jax.numpy as jnp
    for name, shape, dim, kind in WORKLOADS:
        if name not in ptxs:
            continue
        x = torch.randn(shape, device="cuda")
        out = torch.empty_like(x)
        if kind == "sum":
            def tf(x, dim=dim):
                return torch.cumsum(x, dim)

            def jf(x, dim=dim):
                return jnp.cumsum(x, axis=dim)

            def cf(c, dim=dim):
                return cp.cumsum(c, axis=dim)
        else:
            def tf(x, dim=dim):
                return torch.cummax(x, dim).values

            def jf(x, dim=dim):
                return jax.lax.cummax(x, axis=dim)
            cf = None
        tc = torch.compile(tf)
        xj = jnp.asarray(np.asarray(x.cpu()))
        jj = jax.jit(jf)
        contenders = {}
        err = None
        if ptxs[name]:
            ins = [x, out]
            call_idxmap = kernel_timing.idxmap_launches(
                cp, torch, ptxs[name],
                lambda k, q: ins[0] if q["role"] == "input" else ins[1])
            contenders["idxmap"] = (call_idxmap, torch.cuda.synchronize)
            # Sanity: idxmap against torch eager (f32 sums in another order
            # differ by rounding: relative to the running magnitude).
            call_idxmap()
            torch.cuda.synchronize()
            ref = tf(x)
            err = float(((out - ref).abs() /
                         (ref.abs() + shape[dim] ** 0.5)).max())

        def call_jax():
            state[0] = jj(xj)

        def sync_jax():
            state[0].block_until_ready()
            torch.cuda.synchronize()
        state = [jj(xj)]
        contenders["torch_eager"] = (lambda: tf(x), torch.cuda.synchronize)
        contenders["torch_compile"] = (lambda: tc(x), torch.cuda.synchronize)
        contenders["xla_jax"] = (call_jax, sync_jax)
        if cf:
            xc = cp.asarray(x)

            def sync_cp():
                cp.cuda.Device().synchronize()
                torch.cuda.synchronize()
            contenders["cupy"] = (lambda: cf(xc), sync_cp)
        for c, s in contenders.values():
            c(); s()
        times, per_call = kernel_timing.time_groups(
            contenders, a.groups, kernel_timing.mark,
            activities=("kernel", "gpu_memcpy", "gpu_memset"))
        nbytes = 2 * x.numel() * 4
        limit = nbytes / (COPY_TBPS * 1e6)
        print(f"{name}: copy limit {limit:.1f} us ({nbytes} bytes); "
              f"idxmap max relative error vs torch: "
              f"{'n/a' if err is None else f'{err:.3g}'}")
        print(f"{'contender':14s} {'k/call':>6s} {'mean':>9s} {'median':>9s} "
              f"{'min':>9s} {'max':>9s} {'x limit':>8s}")
        for c, t in times.items():
            med = statistics.median(t)
            print(f"{c:14s} {per_call[c]:6.1f} {statistics.mean(t):9.2f} "
                  f"{med:9.2f} {min(t):9.2f} {max(t):9.2f} "
                  f"{med / limit:8.2f}")
        del x, out, xj, state
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
