"""What bench/peer_method.py and bench/suite/run_suite.py share: idxmap's
kernels launched through CuPy from the PTX and its JSON sidecar, and the
interleaved timing of contenders by peers.py's own method (a group is a
marker kernel, one call and five more; its time is the CUPTI duration,
through torch.profiler, of everything the device ran in the group divided by
the calls).

Imports nothing at module level beyond the standard library: the callers
import torch and CuPy (and pass them in) once CUDA is wanted, so that a dry
run needs neither (nor NumPy).
"""
import json, math, os, random, re, statistics, tempfile

# HLO element types to torch dtype names.
TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16",
                "s32": "int32", "s8": "int8", "u8": "uint8", "s64": "int64",
                "f64": "float64", "pred": "bool"}


def torch_dtype(torch, hlo_type):
    return getattr(torch, TORCH_DTYPES[hlo_type])


def sidecar(ptx):
    """The JSON sidecar `idxmap emit` writes next to PTX."""
    with open(os.path.splitext(ptx)[0] + ".json") as f:
        return json.load(f)


_MODULES = {}


def idxmap_launches(cp, torch, ptx, tensor_for):
    """The launches of every kernel of PTX, in order, as one callable.

    tensor_for(kernel, param) gives the torch tensor of each parameter of
    the sidecar (inputs and outputs alike; its data pointer is passed by
    value, since CuPy has no bfloat16 array type). Kernels that take a
    workspace (multi-block reductions) get their own, zeroed once: every
    launch leaves it zeroed, and launches of one stream may share it."""
    import numpy as np
    key = (ptx, os.path.getmtime(ptx))
    mod = _MODULES.get(key)
    if mod is None:  # loaded (JIT-compiled by the driver) once per file
        mod = _MODULES[key] = cp.RawModule(path=ptx)
    launches, keep = [], []
    for k in sidecar(ptx)["kernels"]:
        args = [np.uint64(tensor_for(k, p).data_ptr()) for p in k["params"]]
        # An in-place update writes its input's buffer (the sidecar's
        # "aliases"): the output is the input tensor.
        for a in k.get("aliases", []):
            args[a["output"]] = args[a["input"]]
        if k.get("workspace_bytes"):
            w = torch.zeros(k["workspace_bytes"], device="cuda", dtype=torch.uint8)
            keep.append(w)
            args.append(np.uint64(w.data_ptr()))
        fn = mod.get_function(k["name"])
        # A chained scan's tiles through shared memory take it dynamically
        # (the sidecar's dynamic_shared_bytes; past 48 KiB the function's
        # limit is raised first).
        dyn = int(k.get("dynamic_shared_bytes", 0))
        if dyn > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = dyn
        launches.append((fn, tuple(k["grid"]), tuple(k["block"]), tuple(args), dyn))

    def call():
        for f, g, b, args, dyn in launches:
            f(g, b, args, shared_mem=dyn)
    call.keep = keep  # the workspaces live as long as the call
    return call


_MARKS = {}


def mark(label):
    """Launches an empty kernel whose name labels the launches that follow
    (as peers.py's mark)."""
    import cupy as cp
    import torch
    name = "mark_" + re.sub(r"[^A-Za-z0-9_]", "_", label)
    k = _MARKS.get(name)
    if k is None:
        k = _MARKS[name] = cp.RawKernel('extern "C" __global__ void %s() {}' % name, name)
    torch.cuda.synchronize()
    k((1,), (1,), ())
    cp.cuda.Device().synchronize()


def time_groups(contenders, groups, mark, calls=6, activities=("kernel",),
                trace=None):
    """Times CONTENDERS (name -> (call, sync)) in GROUPS interleaved groups
    under torch.profiler, the contenders in a new order in each group (a
    seeded shuffle: a fixed cyclic order would give each contender the same
    predecessor every time, and with it the same L2 state). A group is
    mark(name__g), a call, a sync, CALLS - 1 more calls and a sync (as
    peers.py's t_events). Returns ({name: [us per call, one per
    group]}, {name: device activities per call}): the sum of the durations
    of the trace events of the categories ACTIVITIES ("kernel"; also
    "gpu_memcpy", "gpu_memset" for contenders that copy without a kernel)
    after the group's marker."""
    from torch.profiler import ProfilerActivity, profile
    names = list(contenders)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for g in range(groups):
            order = list(names)
            random.Random(g).shuffle(order)
            for c in order:
                call, sync = contenders[c]
                mark(f"{c}__{g}")
                call()
                sync()
                for _ in range(calls - 1):
                    call()
                sync()
        mark("end")
    trace = trace or os.path.join(tempfile.gettempdir(), "kernel_timing.trace.json")
    prof.export_chrome_trace(trace)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    ev = sorted((q for q in events if q.get("cat") in activities),
                key=lambda q: q["ts"])
    by_label, label = {}, None
    for q in ev:
        if q.get("cat") == "kernel" and q["name"].startswith("mark_"):
            label = q["name"][5:]
            by_label[label] = []
        elif label:
            by_label[label].append(q["dur"])
    # Marker names are sanitized; look the groups up the same way.
    key = lambda c, g: re.sub(r"[^A-Za-z0-9_]", "_", f"{c}__{g}")
    times = {c: [sum(by_label.get(key(c, g), [])) / calls for g in range(groups)]
             for c in names}
    per_call = {c: len(by_label.get(key(c, 0), [])) / calls for c in names}
    return times, per_call


def paired(a, b):
    """Mean of a - b over groups with its 95 % half-width, and the groups
    where a <= b."""
    d = [x - y for x, y in zip(a, b)]
    h = 1.96 * statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
    return statistics.mean(d), h, sum(x <= 0 for x in d)
