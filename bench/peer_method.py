#!/usr/bin/env python3
"""Times a kernel emitted by `idxmap emit` the way `shared/bench/peers.py --profile`
times the peers, in the same kind of process: inputs from torch.randn, the kernel
loaded with CuPy (cuModuleLoad of the PTX), groups of one call plus 5 timed calls
(CUDA events, as t_events) after a marker kernel, CUPTI kernel durations through
torch.profiler, the mean of each group's 6 launches (what peers.py prints), plus
100 back-to-back launches for the median `idxmap run --bench` reports.

  python3 bench/peer_method.py OUT.ptx [--groups N]   (OUT.json beside it)

Prints the largest output difference from the same sum in torch when the kernel
is a single f32 row or full sum (a sanity check; `idxmap run` is the real check).
"""
import argparse, json, os, statistics, tempfile

import cupy as cp
import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

TYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
         "s32": torch.int32}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ptx")
    ap.add_argument("--groups", type=int, default=5)
    a = ap.parse_args()
    side = json.load(open(os.path.splitext(a.ptx)[0] + ".json"))
    mod = cp.RawModule(path=a.ptx)
    for k in side["kernels"]:
        args, keep = [], []
        for p in k["params"]:
            t = TYPES[p["type"]]
            shape = p["shape"] or [1]
            if p["role"] == "input":
                x = (torch.randn(shape, device="cuda").to(t) if t.is_floating_point
                     else torch.randint(-100, 100, shape, device="cuda", dtype=t))
            else:
                x = torch.empty(shape, device="cuda", dtype=t)
            keep.append(x)
            # Pointers by value: CuPy has no bfloat16 array type.
            args.append(np.uint64(x.data_ptr()))
        f = mod.get_function(k["name"])
        grid, block = tuple(k["grid"]), tuple(k["block"])
        launch = lambda: f(grid, block, tuple(args))
        launch()
        cp.cuda.Device().synchronize()
        marks = {}

        def mark(n):
            if n not in marks:
                marks[n] = cp.RawKernel('extern "C" __global__ void mark_%s() {}' % n,
                                        "mark_" + n)
            torch.cuda.synchronize()
            marks[n]((1,), (1,), ())
            cp.cuda.Device().synchronize()

        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for g in range(a.groups):
                mark("six%d" % g)
                launch()
                torch.cuda.synchronize()
                s.record()
                for _ in range(5):
                    launch()
                e.record()
                torch.cuda.synchronize()
            mark("hundred")
            for _ in range(100):
                launch()
            torch.cuda.synchronize()
        trace = os.path.join(tempfile.gettempdir(), "peer_method.trace.json")
        prof.export_chrome_trace(trace)
        ev = sorted((q for q in json.load(open(trace))["traceEvents"]
                     if q.get("cat") == "kernel"), key=lambda q: q["ts"])
        groups, label = {}, None
        for q in ev:
            if q["name"].startswith("mark_"):
                label = q["name"][5:]
                groups[label] = []
            elif label and q["name"] == k["name"]:
                groups[label].append(q["dur"])
        means = [statistics.mean(d) for g, d in groups.items() if g.startswith("six")]
        h = groups.get("hundred", [0])
        print(f"{k['name']}: peers' method (mean of 6 launches), {len(means)} groups: "
              f"{' '.join(f'{m:.2f}' for m in means)}; mean of groups "
              f"{statistics.mean(means):.2f} us")
        print(f"{k['name']}: 100 back-to-back: median {statistics.median(h):.2f}, "
              f"mean {statistics.mean(h):.2f}, min {min(h):.2f}, max {max(h):.2f} us")
        if (len(keep) == 2 and keep[0].dtype == torch.float32 and
                keep[1].dtype == torch.float32):
            x, y = keep
            ref = x.sum(-1) if y.numel() == x.shape[0] else x.sum().reshape(y.shape)
            print(f"{k['name']}: max |out - torch sum| = "
                  f"{float((y.reshape(ref.shape) - ref).abs().max()):.3g}")


if __name__ == "__main__":
    main()
