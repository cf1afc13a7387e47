#!/usr/bin/env python3
"""Runs the broad suite (bench/suite/README.md) on the GPU machine: for each
fusion of gen.py's table, in one process, emits the PTX with idxmap, reads
idxmap's cost-model estimate, checks the kernel's output against torch's,
and times idxmap's kernels and every peer (XLA through JAX, torch.compile,
eager torch, CUB through CuPy) interleaved, by peers.py's method
(bench/kernel_timing.py). Prints one table and a summary line.

  python3 bench/suite/run_suite.py --idxmap BIN [--search K] [--only a,b]
      [--json F] [--groups N] [--peers LIST] [--dry-run]

--search K also times up to K variants per fusion emitted with `--tune`
settings (a small grid per emitter kind, variants whose PTX and launch are
the default's dropped) and reports the best and how far the default is
from it; --variants 'K=V;K=V,K2=V2' times those settings instead of the
grid. --dry-run imports nothing of CUDA: it emits every PTX (and the
variants) and prints the plan of work; it exits 1 when `idxmap analyze` or
`idxmap emit` fails on a fusion.

Inputs are fresh random data. A fusion that moves at most a quarter of L2
(gen.L2_RESIDENT_BYTES) is timed on one input, which stays in L2 between
launches, for idxmap and the peers alike; the others rotate through fresh
input copies that together exceed twice L2, so each call reads DRAM.
"""
import argparse, concurrent.futures, gc, hashlib, json, math, os, re, statistics, subprocess, sys
import tempfile, time, types, warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import gen  # noqa: E402
import kernel_timing  # noqa: E402

# --search: knob values per emitter kind (the sidecar's "emitter"), tried
# round-robin over the knobs so that a small K still varies each (a None
# knob: each value is a whole setting of several knobs). Names and ranges:
# `idxmap tuning` (docs/TUNING.md).
SEARCH_GRID = {
    "row reduction": [("IDXMAP_RED_ROW_LANES", [128, 256, 512, 1024, 64]),
                      ("IDXMAP_RED_ROW_UNROLL", [4, 16, 2]),
                      ("IDXMAP_RED_EVICT_FIRST", [0]),
                      ("IDXMAP_RED_MINBLOCKS", [2, 1])],
    "multi-row reduction": [("IDXMAP_RED_ROW_LANES", [4, 8, 16, 32, 2]),
                            ("IDXMAP_RED_ROW_K", [1, 2, 4, 8]),
                            ("IDXMAP_RED_ROW_THREADS", [128, 512]),
                            ("IDXMAP_RED_EVICT_FIRST", [0])],
    "column reduction": [("IDXMAP_RED_COL_LANES", [16, 8, 32]),
                         ("IDXMAP_RED_COL_WARPS", [8, 16, 4]),
                         ("IDXMAP_RED_COL_UNROLL", [8, 2]),
                         ("IDXMAP_RED_COL_SPLIT", [64, 128, 256, 1024]),
                         ("IDXMAP_RED_EVICT_FIRST", [0])],
    "full reduction": [("IDXMAP_RED_FULL_THREADS", [512, 1024, 256]),
                       ("IDXMAP_RED_FULL_CHUNK", [65536, 262144, 0]),
                       ("IDXMAP_RED_FULL_UNROLL", [8, 2]),
                       ("IDXMAP_RED_EVICT_FIRST", [0])],
    "row normalization": [("IDXMAP_ROWNORM_ELEMENTS", [16, 4, 32]),
                          ("IDXMAP_ROWNORM_THREADS", [32, 256, 128]),
                          ("IDXMAP_RED_EVICT_FIRST", [0])],
    "loop": [("IDXMAP_LOOP_UNROLL", [1, 2, 4, 8])],
    "concatenate": [("IDXMAP_PIECE_UNROLL", [1, 2, 4, 8]),
                    ("IDXMAP_PIECE_THREADS", [256, 512, 64]),
                    ("IDXMAP_PIECE_BY_OPERAND", [1]),
                    ("IDXMAP_PIECE_OVER_OUTPUT", [1]),
                    ("IDXMAP_PIECE_EVICT_LAST", [0])],
    "input slices": [("IDXMAP_PIECE_UNROLL", [1, 2, 4, 8]),
                     ("IDXMAP_PIECE_THREADS", [256, 512, 64])],
    "scan": [("IDXMAP_SCAN_ITEMS", [32, 16, 8]),
             ("IDXMAP_SCAN_THREADS", [128, 512]),
             ("IDXMAP_SCAN_SHARED_TILE", [0, 1])],
    "transpose": [("IDXMAP_TR_WARPS", [8, 2, 4, 16]),
                  ("IDXMAP_TR_SUBM", [1, 2, 4]),
                  ("IDXMAP_TR_SUBP", [2, 4, 1]),
                  (None, ["IDXMAP_TR_SUBM=1,IDXMAP_TR_WARPS=8",
                          "IDXMAP_TR_SUBM=2,IDXMAP_TR_WARPS=8"]),
                  ("IDXMAP_TR_RVEC", [1]),
                  ("IDXMAP_TR_WVEC", [1])],
}

# Largest |idxmap - torch| allowed, relative to the largest |torch|, by
# output type; integers are exact. For sums, relative to the largest sum of
# magnitudes (the sum of |x|), and for f32 tighter (TOLERANCE_SUM): an
# element left out of a long row would hide under 1e-4 of the sum. A sanity
# check: `idxmap run` checks the kernels against the interpreter.
TOLERANCE = {"f32": 1e-4, "f16": 4e-3, "bf16": 1.6e-2, "f64": 1e-9}
TOLERANCE_SUM = {"f32": 1e-5}
PEERS = ("torch_eager", "torch_compile", "xla_jax", "cub_cupy")
# Device work a contender may do without a kernel (a copy by the driver).
ACTIVITIES = ("kernel", "gpu_memcpy", "gpu_memset")
# --again's further timings of the default kernel: labels "idxmap again K",
# their outputs AGAIN_OFFSET * K bytes into an allocation of their own (an
# offset that moves both the 1 MiB and the 256-byte address bits).
AGAIN = "idxmap again"
AGAIN_OFFSET = (1 << 20) + 9 * 256


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idxmap", required=True, help="the idxmap binary")
    ap.add_argument("--search", type=int, default=0, metavar="K",
                    help="also time up to K --tune variants per fusion")
    ap.add_argument("--variants", metavar="TUNES",
                    help="';'-separated --tune settings to time beside the "
                         "default instead of --search's grid (each one a "
                         "variant; one that gives the default's kernel is "
                         "skipped)")
    ap.add_argument("--again", type=int, nargs="?", const=1, default=0, metavar="N",
                    help="also time the default kernel N more times (1 "
                         "without N), each on outputs of its own at another "
                         "offset (an A/A control: how far timings of one "
                         "kernel differ in this harness and with where its "
                         "buffers lie; never a variant or a peer)")
    ap.add_argument("--only", default="", help="comma-separated fusion names")
    ap.add_argument("--device", default="auto",
                    help="idxmap's device model for analyze and emit: a preset "
                         "(H100, H200, A100) or a JSON file; auto (the default) "
                         "takes the preset of the GPU nvidia-smi names, H200 "
                         "with --dry-run or for another GPU")
    ap.add_argument("--json", default="", help="write every figure to this file")
    ap.add_argument("--groups", type=int, default=10,
                    help="interleaved groups per contender (default 10)")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help=f"peers to time (default {','.join(PEERS)})")
    ap.add_argument("--hlo-dir", default=os.path.join(HERE, "hlo"))
    ap.add_argument("--work-dir", default="",
                    help="where the PTX goes (default: a temporary directory)")
    ap.add_argument("--dry-run", action="store_true",
                    help="no CUDA: emit the PTX and print the plan of work")
    a = ap.parse_args(argv)
    if a.groups < 2:
        ap.error("--groups must be at least 2")
    if a.variants and not a.search:
        a.search = len(a.variants.split(";"))
    a.peers = [p for p in a.peers.split(",") if p]
    bad = [p for p in a.peers if p not in PEERS]
    if bad:
        ap.error(f"unknown peer(s) {','.join(bad)}; known: {','.join(PEERS)}")
    if a.device == "auto":
        a.device = "H200" if a.dry_run else device_preset(gpu_name())
    return a


def gpu_name():
    """The first GPU's name as nvidia-smi gives it, or "" without one."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.splitlines()[0].strip() if r.returncode == 0 and r.stdout else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def device_preset(name):
    """idxmap's device preset for the GPU called NAME (H200 for another)."""
    for preset in ("H100", "H200", "A100"):
        if preset in name:
            return preset
    if name:
        print(f"note: no device preset for '{name}': planning for the H200", file=sys.stderr)
    return "H200"


# --- idxmap: PTX, variants, estimate (no CUDA) --------------------------------

def run_tool(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(cmd, 127, "", str(e))


def emit(a, hlo, ptx, tune=None):
    cmd = [a.idxmap, "emit", hlo, "-o", ptx, "--device", a.device] + (
        ["--tune", tune] if tune else [])
    r = run_tool(cmd)
    if r.returncode != 0 or not os.path.exists(ptx):
        return (r.stderr or r.stdout).strip().splitlines()[-1:] or ["exit %d" % r.returncode]
    return None


def signature(ptx):
    """What a variant changes: the PTX text and each kernel's launch."""
    side = kernel_timing.sidecar(ptx)
    launch = [(k["grid"], k["block"],
               k.get("static_shared_bytes", k.get("shared_bytes")),
               k.get("dynamic_shared_bytes"),
               k.get("workspace_bytes"))
              for k in side["kernels"]]
    with open(ptx, "rb") as f:
        return hashlib.sha1(f.read() + repr(launch).encode()).hexdigest()


def candidates(emitter):
    """The --tune settings of EMITTER's grid, round-robin over its knobs."""
    grid, out = SEARCH_GRID.get(emitter, []), []
    for i in range(max((len(v) for _, v in grid), default=0)):
        out += [f"{k}={v[i]}" if k else v[i] for k, v in grid if i < len(v)]
    return out


def prepare(a, f, work):
    """Emits FUSION's PTX (and variants) and reads the estimate."""
    p = types.SimpleNamespace(fusion=f, hlo=os.path.join(a.hlo_dir, f.name + ".hlo"),
                              estimate=None, ptx=None, emitter="?", kernels=[],
                              variants=[], variant_estimates={},
                              notes=[f.note] if f.note else [], error=None)
    if not os.path.exists(p.hlo):
        p.hlo = os.path.join(work, f.name + ".hlo")
        with open(p.hlo, "w") as o:
            o.write(f.hlo)
        p.notes.append(f"{a.hlo_dir} has no {f.name}.hlo: emitted from gen.py's text")
    r = run_tool([a.idxmap, "analyze", p.hlo, "--device", a.device])
    m = re.search(r"estimate:\s*([0-9.]+) us", r.stdout or "")
    if m:
        p.estimate = float(m.group(1))
    m = re.search(r"^\s*plan:.*$", r.stdout or "", re.M)
    p.plan = m.group(0).strip() if m else None
    p.analyzed = r.returncode == 0
    if not p.analyzed:
        p.notes.append("analyze failed: " + " ".join((r.stderr or "").strip().splitlines()[-1:]))
    p.ptx = os.path.join(work, f.name + ".ptx")
    err = emit(a, p.hlo, p.ptx)
    if err:
        p.error = "emit failed: " + " ".join(err)
        return p
    side = kernel_timing.sidecar(p.ptx)
    p.kernels = side["kernels"]
    if not p.kernels:
        p.error = "emit wrote no kernel"
        return p
    p.emitter = " + ".join(sorted({k.get("emitter", "?") for k in p.kernels}))
    if a.search:
        seen = {signature(p.ptx)}
        tunes = (a.variants.split(";") if a.variants
                 else candidates(p.kernels[0].get("emitter", "?")))
        for i, tune in enumerate(tunes):
            if len(p.variants) >= a.search:
                break
            vptx = os.path.join(work, f"{f.name}.v{i}.ptx")
            err = emit(a, p.hlo, vptx, tune)
            if err:
                p.notes.append(f"variant {tune} not emitted: {' '.join(err)}")
                continue
            s = signature(vptx)
            if s not in seen:
                seen.add(s)
                p.variants.append((tune, vptx))
                r = run_tool([a.idxmap, "analyze", p.hlo, "--device", a.device,
                              "--tune", tune])
                m = re.search(r"estimate:\s*([0-9.]+) us", r.stdout or "")
                p.variant_estimates[tune] = float(m.group(1)) if m else None
    return p


def copies_for(f):
    """Input copies to rotate through: one when the fusion stays in L2,
    else enough to exceed twice L2 between two reads of one copy."""
    if f.l2_resident:
        return 1
    return min(64, max(1, math.ceil(2 * gen.L2_BYTES / max(f.in_bytes, 1))))


def working_set(f):
    """The inputs' copies and one set of outputs, in bytes."""
    return f.in_bytes * copies_for(f) + f.bytes - f.in_bytes


def peers_of(a, f):
    return [q for q in a.peers if q != "cub_cupy" or f.cf is not None]


def print_plan(a, preps):
    total = 0
    print(f"{'fusion':36s} {'bytes':>10s} {'copies':>6s} {'estimate':>9s}  "
          f"{'emitter':20s} {'launch':24s} peers / variants")
    for p in preps:
        f = p.fusion
        c = copies_for(f)
        total += working_set(f)
        est = f"{p.estimate:.2f}" if p.estimate is not None else "-"
        if p.error:
            print(f"{f.name:36s} {gen.human(f.bytes):>10s} {c:6d} {est:>9s}  ERROR {p.error}")
            continue
        launch = "; ".join(f"{k['grid'][0]}x{k['block'][0]}" +
                           (f" ws {k['workspace_bytes']}" if k.get("workspace_bytes") else "")
                           for k in p.kernels)
        print(f"{f.name:36s} {gen.human(f.bytes):>10s} {c:6d} {est:>9s}  {p.emitter:20s} "
              f"{launch:24s} {','.join(peers_of(a, f))}" +
              (f" / {len(p.variants)}: " + " ".join(t for t, _ in p.variants)
               if a.search else ""))
        for n in p.notes:
            print(f"  note: {n}")
    n_err = sum(1 for p in preps if p.error)
    print(f"{len(preps)} fusions, {len(preps) - n_err} emitted, "
          f"{sum(len(p.variants) for p in preps)} variants; "
          f"{sum(1 for p in preps if p.estimate is not None)} with an estimate; "
          f"largest working set {gen.human(max((working_set(p.fusion) for p in preps), default=0))}, "
          f"all of them {gen.human(total)}; "
          f"{a.groups} groups x {1 + len(a.peers)}+ contenders each")


# --- On the GPU ---------------------------------------------------------------

def gpu_modules():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import torch
    import cupy as cp
    import jax
    import jax.numpy as jnp
    from jax import lax
    try:
        from cupy._core import _accelerator
        _accelerator.set_reduction_accelerators(["cub"])
        _accelerator.set_routine_accelerators(["cub"])
    except Exception as e:  # CuPy's own kernels then
        print(f"note: CUB not enabled in CuPy: {e}", file=sys.stderr)
    # One compiled graph per fusion (and a reset between fusions): never the
    # eager fallback of a full recompile cache.
    for knob in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 1024)
    return types.SimpleNamespace(
        torch=torch, cp=cp, jax=jax,
        J=types.SimpleNamespace(jax=jax, jnp=jnp, lax=lax, nn=jax.nn))


def make_input(M, dt, shape, init):
    T = M.torch
    t = kernel_timing.torch_dtype(T, dt)
    if init == "lr":
        return T.full(shape, 1e-3, dtype=t, device="cuda")
    if init.startswith("index"):  # "indexN": valid indices into N rows
        return T.randint(0, int(init[5:]), shape, dtype=t, device="cuda")
    if init == "randint":
        lo, hi = (-128, 128) if dt == "s8" else (-1000, 1001)
        return T.randint(lo, hi, shape, dtype=t, device="cuda")
    x = T.randn(shape, dtype=T.float32, device="cuda")
    if init == "square":
        x = x * x
    return x.to(t)


def to_jax(M, x):
    """A JAX array of torch tensor X: shared through DLPack, else copied
    through the host."""
    try:
        return M.jax.dlpack.from_dlpack(x)
    except Exception:
        import numpy as np
        h = x.float().cpu().numpy() if x.dtype == M.torch.bfloat16 else x.cpu().numpy()
        return M.J.jnp.asarray(np.asarray(h)).astype(
            M.J.jnp.bfloat16 if x.dtype == M.torch.bfloat16 else h.dtype)


def rotate(fns):
    """One call after the other of FNS, a different one each time."""
    i = [0]

    def call():
        fns[i[0] % len(fns)]()
        i[0] += 1
    return call


def as_tuple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def compare(M, outs, out_types, refs, scales):
    """(ok, worst relative error, message) of idxmap's outputs against
    torch's; ok is None when they cannot be compared."""
    T = M.torch
    if len(outs) != len(refs):
        return None, None, f"{len(outs)} outputs, torch has {len(refs)}"
    worst, msgs = 0.0, []
    for i, (o, r, ty, s) in enumerate(zip(outs, refs, out_types, scales)):
        if o.numel() != r.numel():
            return None, None, f"output {i}: {o.numel()} elements, torch's {r.numel()}"
        o, r = o.reshape(-1), r.reshape(-1)
        if not o.dtype.is_floating_point:
            bad = int((o.long() != r.long()).sum())
            if bad:
                msgs.append(f"output {i} ({ty}): {bad} of {o.numel()} elements differ")
                worst = math.inf
            continue
        tol = TOLERANCE.get(ty, 1e-2)
        if s is not None:
            tol = TOLERANCE_SUM.get(ty, tol)
        ref_max = float((s if s is not None else r).float().abs().max()) if r.numel() else 0.0
        d = (o.float() - r.float()).abs()
        err = float(d.max()) / max(ref_max, 1e-30) if d.numel() else 0.0
        if not math.isfinite(err) or not bool(T.isfinite(o.float()).eq(
                T.isfinite(r.float())).all()):
            err = math.inf
        worst = max(worst, err)
        if err > tol:
            msgs.append(f"output {i} ({ty}): max |idxmap - torch| / max |torch| = "
                        f"{err:.3g} > {tol:g}")
    return not msgs, worst, "; ".join(msgs)


def stats(t):
    med = statistics.median(t)
    q = statistics.quantiles(t, n=4) if len(t) > 1 else [med, med, med]
    return dict(median=med, mean=statistics.mean(t), min=min(t), max=max(t),
                iqr_pct=100 * (q[2] - q[0]) / med if med > 0 else float("nan"))


def idxmap_contenders(M, p, xs, again=0):
    """The default kernel and the variants, each with its launches for every
    input copy and its own outputs (as each peer has its own: a contender
    that wrote the same buffer just before would find its lines in L2, and
    one that follows a peer pays for writing back the peer's). Returns
    ({label: (launch per copy, tune)}, {label: outputs}, {label: their HLO
    types})."""
    T, f = M.torch, p.fusion
    outs, out_types = {}, {}

    def tensor_for(label, c, off):
        byname = {n: x for (n, _, _, _), x in zip(f.ins, xs[c])}
        mine = outs.setdefault(label, {})
        types = out_types.setdefault(label, [])

        def get(k, prm):
            if prm["role"] == "input":
                if prm["name"] not in byname:
                    raise KeyError(f"the sidecar's parameter {prm['name']!r} is not an "
                                   f"input of gen.py's {f.name}")
                return byname[prm["name"]]
            key = (k["name"], prm["name"])
            if key not in mine:
                dt = kernel_timing.torch_dtype(T, prm["type"])
                shape = prm["shape"] or [1]
                if off:
                    n = math.prod(shape) * T.empty(0, dtype=dt).element_size()
                    raw = T.empty(off + n, device="cuda", dtype=T.uint8)
                    mine[key] = raw[off:].view(dt).view(shape)
                else:
                    mine[key] = T.empty(shape, device="cuda", dtype=dt)
                types.append(prm["type"])
            return mine[key]
        return get

    kernels = {}
    for label, ptx, tune, off in [("idxmap", p.ptx, None, 0)] + [
            (f"{AGAIN} {k}", p.ptx, None, AGAIN_OFFSET * k) for k in range(1, again + 1)] + [
            (f"idxmap[{t}]", v, t, 0) for t, v in p.variants]:
        kernels[label] = ([kernel_timing.idxmap_launches(M.cp, T, ptx, tensor_for(label, c, off))
                           for c in range(len(xs))], tune)
    return kernels, {k: list(v.values()) for k, v in outs.items()}, out_types


def check_idxmap(M, f, xs, kernels, outs, out_types):
    """Each kernel's outputs (poisoned first) against eager torch on copy 0:
    {label: dict(ok, rel_err, message)}."""
    T = M.torch
    refs = as_tuple(f.tf(T, *xs[0]))
    scales = [None] * len(refs)
    if f.sum_like and all(x.dtype.is_floating_point for x in xs[0]):
        scales = list(as_tuple(f.tf(T, *[x.abs() for x in xs[0]])))
    checks = {}
    for label, (launches, _) in kernels.items():
        for o in outs[label]:
            o.view(T.uint8).fill_(255)  # a kernel must write every element
        T.cuda.synchronize()
        launches[0]()
        T.cuda.synchronize()
        ok, err, msg = compare(M, outs[label], out_types[label], refs, scales)
        checks[label] = dict(ok=ok, rel_err=err, message=msg)
    return checks


def peer_contenders(a, M, f, xs):
    """{peer: (call, sync)}, each call on the next input copy."""
    T, cp, n = M.torch, M.cp, len(xs)
    peers, out = peers_of(a, f), {}
    if "torch_eager" in peers:
        out["torch_eager"] = (rotate([lambda c=c: f.tf(T, *xs[c]) for c in range(n)]),
                              T.cuda.synchronize)
    if "torch_compile" in peers:
        reset_dynamo(M)
        tc = T.compile(lambda *v: f.tf(T, *v), dynamic=False)
        out["torch_compile"] = (rotate([lambda c=c: tc(*xs[c]) for c in range(n)]),
                                T.cuda.synchronize)
    if "xla_jax" in peers:
        xj = [[to_jax(M, x) for x in xc] for xc in xs]
        jf = M.jax.jit(lambda *v: f.jf(M.J, *v))
        last = [None]

        def call_jax(c):
            last[0] = jf(*xj[c])

        def sync_jax():
            if last[0] is not None:
                M.jax.block_until_ready(last[0])
            T.cuda.synchronize()
        out["xla_jax"] = (rotate([lambda c=c: call_jax(c) for c in range(n)]), sync_jax)
    if "cub_cupy" in peers:
        xc = [[cp.asarray(x) for x in c] for c in xs]
        stream = cp.cuda.ExternalStream(T.cuda.current_stream().cuda_stream)

        def call_cub(c):
            with stream:
                f.cf(cp, *xc[c])
        out["cub_cupy"] = (rotate([lambda c=c: call_cub(c) for c in range(n)]),
                           T.cuda.synchronize)
    return out


def warm_up(M, f, contenders, ncopies, rec):
    """Calls every contender on every copy (torch.compile and XLA compile
    here); one that fails is named in the notes and left out."""
    for name in list(contenders):
        call, sync = contenders[name]
        s = time.time()
        try:
            for _ in range(max(2, ncopies)):
                call()
            sync()
        except Exception as e:
            first = str(e).splitlines()[0][:200] if str(e) else ""
            msg = f"{name} failed: {type(e).__name__}: {first}"
            rec["notes"].append(msg)
            print(f"  {f.name}: {msg}", file=sys.stderr)
            del contenders[name]
            M.torch.cuda.synchronize()
        rec["warmup_s"][name] = time.time() - s


def summarize(rec, times, per_call, checks, kernels, p):
    """idxmap's median, the best peer's and their ratio; with variants, the
    best of them and the default's distance from it."""
    for name in times:
        rec["contenders"][name] = dict(times=times[name], activities_per_call=per_call[name],
                                       **stats(times[name]))
    valid = {n: r for n, r in rec["contenders"].items()
             if r["activities_per_call"] > 0 and r["median"] > 0}
    for n in sorted(set(rec["contenders"]) - set(valid)):
        rec["notes"].append(f"{n}: no device activity recorded")
    peer_recs = {n: r for n, r in valid.items() if n not in kernels}
    if peer_recs:
        best = min(peer_recs, key=lambda n: peer_recs[n]["median"])
        rec["best_peer"], rec["best_peer_us"] = best, peer_recs[best]["median"]
    if "idxmap" in valid:
        rec["idxmap_us"] = valid["idxmap"]["median"]
        if peer_recs:
            rec["ratio"] = rec["idxmap_us"] / rec["best_peer_us"]
            rec["paired_ratio"] = statistics.median(
                x / y for x, y in zip(times["idxmap"], times[rec["best_peer"]]) if y > 0)
    agains = [n for n in valid if n.startswith(AGAIN)]
    if agains and "idxmap" in valid:
        rec["again_over_default"] = [valid[n]["median"] / valid["idxmap"]["median"]
                                     for n in sorted(agains)]
    if len([n for n in kernels if not n.startswith(AGAIN)]) > 1:
        cand = {n: r for n, r in valid.items() if n in kernels and
                not n.startswith(AGAIN) and checks[n]["ok"] is not False}
        if cand:
            bv = min(cand, key=lambda n: cand[n]["median"])
            rec["best_variant"] = kernels[bv][1] or "default"
            rec["best_variant_us"] = cand[bv]["median"]
            if "idxmap_us" in rec:
                rec["default_over_best"] = rec["idxmap_us"] / rec["best_variant_us"]
        for label, (_, tune) in kernels.items():
            if tune:
                rec["variants"][tune] = dict(check=checks[label],
                                             estimate_us=p.variant_estimates.get(tune))
                if label in valid:
                    rec["variants"][tune]["median"] = valid[label]["median"]
        # The cost model's pick among the timed plans (ties keep the
        # default), and how far it is from the best of them.
        est = {n: (p.estimate if not kernels[n][1] else p.variant_estimates.get(kernels[n][1]))
               for n in cand}
        if cand and all(e is not None for e in est.values()):
            pick = min(cand, key=lambda n: (est[n], bool(kernels[n][1])))
            rec["model_pick"] = kernels[pick][1] or "default"
            rec["model_pick_over_best"] = cand[pick]["median"] / rec["best_variant_us"]


def measure(a, M, p, work):
    """Checks and times one prepared fusion; returns its result record."""
    T, f = M.torch, p.fusion
    t0 = time.time()
    ncopies = copies_for(f)
    rec = dict(name=f.name, category=f.category, bytes=f.bytes, l2_resident=f.l2_resident,
               copies=ncopies, estimate_us=p.estimate, plan=p.plan, emitter=p.emitter,
               launch=[dict(kernel=k["name"], grid=k["grid"], block=k["block"],
                            workspace_bytes=k.get("workspace_bytes", 0)) for k in p.kernels],
               notes=list(p.notes), contenders={}, variants={}, warmup_s={})
    xs = [[make_input(M, dt, shape, init) for _, dt, shape, init in f.ins]
          for _ in range(ncopies)]
    T.cuda.synchronize()
    kernels, outs, out_types = idxmap_contenders(M, p, xs, a.again)
    checks = check_idxmap(M, f, xs, kernels, outs, out_types)
    rec["check"] = checks["idxmap"]
    # A wrong variant is not a candidate; the default is timed all the same
    # (the table shows MISMATCH in place of its time).
    contenders = {label: (rotate(launches), T.cuda.synchronize)
                  for label, (launches, _) in kernels.items()
                  if label == "idxmap" or checks[label]["ok"] is not False}
    contenders.update(peer_contenders(a, M, f, xs))
    warm_up(M, f, contenders, ncopies, rec)
    times, per_call = kernel_timing.time_groups(
        contenders, a.groups, kernel_timing.mark, activities=ACTIVITIES,
        trace=os.path.join(work, "suite.trace.json"))
    summarize(rec, times, per_call, checks, kernels, p)
    rec["seconds"] = time.time() - t0
    return rec


def reset_dynamo(M):
    try:
        M.torch._dynamo.reset()
    except Exception:  # a torch without it: the compiled graphs just stay
        pass


def cleanup(M):
    gc.collect()  # the fusion's closures hold its tensors
    reset_dynamo(M)
    M.torch.cuda.synchronize()
    M.torch.cuda.empty_cache()
    M.cp.get_default_memory_pool().free_all_blocks()


# --- Report -------------------------------------------------------------------

def fmt_us(v):
    return f"{v:.2f}" if isinstance(v, (int, float)) and v is not None else "-"


def report(a, recs):
    search = a.search > 0
    head = (f"{'fusion':36s} {'bytes':>10s} {'est_us':>8s} {'idxmap_us':>10s} {'iqr%':>5s} "
            f"{'best peer':14s} {'peer_us':>9s} {'iqr%':>5s} {'ratio':>6s}")
    if search:
        head += f"  {'best variant':34s} {'var_us':>9s} {'dflt/best':>9s}"
    lines = [head]
    for r in recs:
        c = r.get("contenders", {})
        if r.get("error"):
            lines.append(f"{r['name']:36s} {gen.human(r['bytes']):>10s} ERROR {r['error']}")
            continue
        mism = r.get("check", {}).get("ok") is False
        im = "MISMATCH" if mism else fmt_us(r.get("idxmap_us"))
        iiqr = f"{c['idxmap']['iqr_pct']:.1f}" if "idxmap" in c and not mism else "-"
        bp = r.get("best_peer", "-")
        piqr = f"{c[bp]['iqr_pct']:.1f}" if bp in c else "-"
        ratio = f"{r['ratio']:.3f}" if "ratio" in r and not mism else "-"
        line = (f"{r['name']:36s} {gen.human(r['bytes']):>10s} {fmt_us(r.get('estimate_us')):>8s} "
                f"{im:>10s} {iiqr:>5s} {bp:14s} {fmt_us(r.get('best_peer_us')):>9s} "
                f"{piqr:>5s} {ratio:>6s}")
        if search:
            dob = r.get("default_over_best")
            line += (f"  {r.get('best_variant', '-')[:34]:34s} "
                     f"{fmt_us(r.get('best_variant_us')):>9s} "
                     f"{(f'{dob:.3f}' if dob else '-'):>9s}")
        lines.append(line)
    print("\n".join(lines))
    for r in recs:
        if r.get("check", {}).get("ok") is False:
            print(f"MISMATCH {r['name']}: {r['check']['message']}")
        for t, v in (r.get("variants") or {}).items():
            if v and v.get("check", {}).get("ok") is False:
                print(f"MISMATCH {r['name']} [{t}]: {v['check']['message']}")
    timed = [r for r in recs if "ratio" in r and r.get("check", {}).get("ok") is not False]
    summary = (f"summary: {len(timed)} of {len(recs)} fusions compared with a peer: "
               f"{sum(r['ratio'] <= 1.00 for r in timed)} <= 1.00, "
               f"{sum(r['ratio'] <= 1.03 for r in timed)} <= 1.03")
    if timed:
        w = max(timed, key=lambda r: r["ratio"])
        summary += f", worst {w['ratio']:.3f} ({w['name']})"
    summary += (f"; {sum(1 for r in recs if r.get('check', {}).get('ok') is False)} mismatches, "
                f"{sum(1 for r in recs if r.get('error'))} errors")
    if search:
        s = [r for r in recs if "default_over_best" in r]
        summary += (f"; search: default within 3 % of the best variant on "
                    f"{sum(r['default_over_best'] <= 1.03 for r in s)} of {len(s)}")
        m = [r for r in recs if "model_pick_over_best" in r]
        summary += (f", the cost model's pick (lowest estimate) on "
                    f"{sum(r['model_pick_over_best'] <= 1.03 for r in m)} of {len(m)}")
    # The spread of each fusion's timings of the default kernel: the
    # slowest over the fastest of them, minus one.
    aa = [(max(r["again_over_default"] + [1]) / min(r["again_over_default"] + [1]) - 1) * 100
          for r in recs if "again_over_default" in r]
    if aa:
        summary += (f"; A/A (the default timed {a.again + 1} times): median spread "
                    f"{statistics.median(aa):.1f} %, at most {max(aa):.1f} %")
    print(summary)


def write_json(a, recs, extra):
    if a.json:
        with open(a.json, "w") as o:
            json.dump(dict(extra, fusions=recs), o, indent=1, default=str)


def main(argv=None):
    warnings.filterwarnings("ignore")
    a = parse_args(argv)
    suite = gen.by_name()
    if a.only:
        names = [n for n in a.only.split(",") if n]
        unknown = [n for n in names if n not in suite]
        if unknown:
            sys.exit(f"unknown fusion(s): {', '.join(unknown)} (gen.py --list names them)")
        fusions = [suite[n] for n in names]
    else:
        fusions = list(gen.SUITE)
    if not os.access(a.idxmap, os.X_OK):
        sys.exit(f"not an executable: {a.idxmap}")
    work = a.work_dir or tempfile.mkdtemp(prefix="idxmap-suite-")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    # idxmap runs as a subprocess per emit: a few at a time.
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as ex:
        preps = list(ex.map(lambda f: prepare(a, f, work), fusions))
    print(f"emitted {len(preps)} fusions in {time.time() - t0:.1f} s into {work}",
          file=sys.stderr)
    if a.dry_run:
        print_plan(a, preps)
        # The ctest bench.suite checks with this that idxmap takes every file.
        return 1 if any(p.error or not p.analyzed for p in preps) else 0
    M = gpu_modules()
    extra = dict(device=M.torch.cuda.get_device_name(), device_model=a.device,
                 groups=a.groups, search=a.search,
                 idxmap=a.idxmap, versions=dict(torch=M.torch.__version__,
                                                jax=M.jax.__version__, cupy=M.cp.__version__))
    recs = []
    for p in preps:
        f = p.fusion
        if p.error:
            recs.append(dict(name=f.name, bytes=f.bytes, error=p.error, notes=p.notes))
            continue
        try:
            rec = measure(a, M, p, work)
        except Exception as e:
            rec = dict(name=f.name, bytes=f.bytes, notes=p.notes,
                       error=f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
        print(f"[{time.time() - t0:6.1f} s] {f.name}: " +
              (rec.get("error") or f"idxmap {fmt_us(rec.get('idxmap_us'))} us, "
               f"{rec.get('best_peer', '-')} {fmt_us(rec.get('best_peer_us'))} us "
               f"({rec.get('seconds', 0):.1f} s)"), file=sys.stderr, flush=True)
        recs.append(rec)
        cleanup(M)
        write_json(a, recs, extra)  # a run cut short keeps what it has
    report(a, recs)
    print(f"total {time.time() - t0:.0f} s", file=sys.stderr)
    write_json(a, recs, dict(extra, seconds=time.time() - t0))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
