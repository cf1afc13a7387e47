#!/usr/bin/env python3
"""Times idxmap's kernels and the peers (XLA through JAX, torch.compile, CUB
through CuPy) on the same input, interleaved in one process, by peers.py's own
method: a group is a marker kernel, one call and five more (as t_events), and
its time is the CUPTI duration (torch.profiler) of every kernel in the group
divided by 6. peers.py --profile takes one group per peer; this takes --groups
of each, rotating the order of the contenders from group to group, so that
each figure comes with its spread and the comparison is paired.

  python3 bench/peer_method.py --peers PEERS_PY [--groups N] [--json FILE]
      WORKLOAD=OUT.ptx [WORKLOAD=OUT.ptx ...]

WORKLOAD is peers.py's workload name; OUT.ptx comes from `idxmap emit` of the
same fusion, with OUT.json beside it. WORKLOAD=A.ptx,B.ptx,... times variants
too (an A/B of emitter settings against each other and the peers in one
run): the first is "idxmap", the others "idxmap_<file stem>". The idxmap
kernels read the tensor the peers read (where shape and type agree); the
first one's output is compared with torch's (a sanity check; `idxmap run`
is the real check against the interpreter, for variants too).

Prints, per workload and contender, the mean, median, min, max and standard
deviation of the group times (us), and idxmap's paired difference from each
peer: the mean over groups of (idxmap - peer) with a 95 % interval.
"""
import argparse, importlib.util, json, math, os, re, statistics, sys, tempfile
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_timing  # noqa: E402


def load_peers(path):
    """Imports peers.py for its workload list (it parses sys.argv on import)."""
    argv, sys.argv = sys.argv, [path]
    try:
        spec = importlib.util.spec_from_file_location("peers", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.argv = argv
    return mod


def idxmap_call(cp, torch, types, ptx, xs, outs):
    """A call of every kernel of the module emitted to PTX, in order. Inputs
    are the peers' tensors XS where shape and type agree (else random ones,
    appended to XS to keep them alive); outputs are appended to OUTS."""
    free_in = list(xs)

    def tensor_for(kernel, p):
        t, shape = types[p["type"]], p["shape"] or [1]
        if p["role"] != "input":
            x = torch.empty(shape, device="cuda", dtype=t)
            outs.append(x)
        elif free_in and free_in[0].dtype == t and \
                free_in[0].numel() == math.prod(shape):
            x = free_in.pop(0)
        else:
            x = (torch.randn(shape, device="cuda").to(t)
                 if t.is_floating_point else
                 torch.randint(-100, 100, shape, device="cuda", dtype=t))
            xs.append(x)
        return x
    return kernel_timing.idxmap_launches(cp, torch, ptx, tensor_for)


def main():
    # Library warnings (torch.compile, JAX) would interleave with the tables.
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", required=True, help="path to peers.py")
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--json", default="")
    ap.add_argument("pairs", nargs="+", metavar="WORKLOAD=PTX")
    a = ap.parse_args()
    peers = load_peers(a.peers)
    import cupy as cp
    import torch
    import jax
    import jax.numpy as jnp
    from cupy._core import _accelerator
    _accelerator.set_reduction_accelerators(["cub"])
    _accelerator.set_routine_accelerators(["cub"])
    types = {"f32": torch.float32, "bf16": torch.bfloat16,
             "f16": torch.float16, "s32": torch.int32}
    byname = {w["name"]: w for w in peers.workloads()}
    report = []
    for pair in a.pairs:
        name, ptxs = pair.split("=", 1)
        w = byname[name]
        xs = [torch.randn(s, dtype=torch.float32, device="cuda").to(
            dict(float32=torch.float32, bfloat16=torch.bfloat16)[d])
            for s, d in w["ins"]]
        contenders = {}  # name -> (call, sync)
        for n, ptx in enumerate(ptxs.split(",")):
            label = "idxmap" if n == 0 else \
                "idxmap_" + re.sub(r"[^A-Za-z0-9_]", "_",
                                   os.path.splitext(os.path.basename(ptx))[0])
            outs = []
            contenders[label] = (idxmap_call(cp, torch, types, ptx, xs, outs),
                                 torch.cuda.synchronize)
            if n == 0:
                first_outs = outs

        tc = torch.compile(w["tf"])
        contenders["torch_compile"] = (lambda: tc(*xs[:len(w["ins"])]),
                                       torch.cuda.synchronize)
        xj = jnp.asarray(np.asarray(xs[0].float().cpu())).astype(
            jnp.bfloat16 if xs[0].dtype == torch.bfloat16 else jnp.float32)
        jf = jax.jit(w["jf"])
        last = [None]

        def call_jax():
            last[0] = jf(xj)

        def sync_jax():
            last[0].block_until_ready()
            torch.cuda.synchronize()
        contenders["xla_jax"] = (call_jax, sync_jax)
        if w["cf"] is not None:
            xc = cp.asarray(xs[0].detach())
            stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)

            def call_cub():
                with stream:
                    w["cf"](cp, xc)
            contenders["cub_cupy"] = (call_cub, torch.cuda.synchronize)

        # Warm-up (compiles torch.compile and XLA), then the sanity check.
        for call, sync in contenders.values():
            call(); sync()
        ref = w["tf"](*xs[:len(w["ins"])]).float().reshape(-1)
        got = first_outs[-1].float().reshape(-1) if first_outs else None
        if got is not None and got.numel() == ref.numel():
            err = float((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
            print(f"{name}: max |idxmap - torch| / max |torch| = {err:.3g}")
        else:
            print(f"{name}: output not compared (shape differs from torch's)")

        names = list(contenders)
        times, kernels = kernel_timing.time_groups(
            contenders, a.groups, peers.mark,
            trace=os.path.join(tempfile.gettempdir(), "peer_method.trace.json"))
        wid = max(14, max(len(c) for c in names))
        print(f"{'workload':32s} {'contender':{wid}s} {'k/call':>6s} {'mean':>8s} "
              f"{'median':>8s} {'min':>8s} {'max':>8s} {'sd':>6s}")
        for c in names:
            t = times[c]
            print(f"{name:32s} {c:{wid}s} {kernels[c]:6.1f} {statistics.mean(t):8.2f} "
                  f"{statistics.median(t):8.2f} {min(t):8.2f} {max(t):8.2f} "
                  f"{statistics.stdev(t):6.2f}")
        diffs = {}
        for c in names:
            if c == "idxmap":
                continue
            m, h, wins = kernel_timing.paired(times["idxmap"], times[c])
            diffs[c] = dict(mean=m, half_width=h, idxmap_not_slower=wins)
            print(f"{name:32s} idxmap - {c:{wid}s} {m:+7.2f} us (95 % +-{h:.2f}), "
                  f"ratio of means {statistics.mean(times['idxmap']) / statistics.mean(times[c]):.3f}, "
                  f"idxmap <= {c} in {wins}/{a.groups} groups")
        report.append(dict(workload=name, times=times, kernels_per_call=kernels,
                           paired=diffs))
        del contenders, first_outs, xs, xj
        torch.cuda.empty_cache()
        if a.json:  # after every workload: a run cut short keeps what it has
            json.dump(report, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
