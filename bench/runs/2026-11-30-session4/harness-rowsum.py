# Our row-sum kernel timed by peers.py's own method: marker kernel, one call,
# 5 timed calls, CUPTI kernel durations through torch.profiler, averaged.
# (The script of the 15:10 UTC run, verbatim; bench/peer_method.py generalizes it.)
import json, sys, statistics, torch, cupy as cp
from torch.profiler import profile, ProfilerActivity
ptx, grid, block = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
x = torch.randn((8192, 8192), dtype=torch.float32, device="cuda")
out = torch.empty(8192, dtype=torch.float32, device="cuda")
xc, oc = cp.asarray(x), cp.asarray(out)
f = cp.RawModule(path=ptx).get_function("fusion")
def launch(): f((grid, 1, 1), (block, 1, 1), (xc, oc))
launch(); cp.cuda.Device().synchronize()
print("max abs err vs torch.sum:", float((out - x.sum(-1)).abs().max()))
marks = {}
def mark(n):
    k = marks.get(n) or marks.setdefault(n, cp.RawKernel('extern "C" __global__ void mark_%s() {}' % n, "mark_" + n))
    torch.cuda.synchronize(); k((1,), (1,), ()); cp.cuda.Device().synchronize()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for r in range(5):
        mark("six%d" % r); launch(); torch.cuda.synchronize()
        s.record()
        for _ in range(5): launch()
        e.record(); torch.cuda.synchronize()
    mark("hundred"); launch(); torch.cuda.synchronize()
    for _ in range(100): launch()
    torch.cuda.synchronize()
prof.export_chrome_trace("/tmp/h.json")
ev = sorted((q for q in json.load(open("/tmp/h.json"))["traceEvents"] if q.get("cat") == "kernel"), key=lambda q: q["ts"])
groups, label = {}, None
for q in ev:
    if q["name"].startswith("mark_"): label = q["name"][5:]; groups[label] = []; continue
    if label: groups[label].append(q["dur"])
for k, d in groups.items():
    print(f"{k:8s} n={len(d):3d} mean {statistics.mean(d):.2f} median {statistics.median(d):.2f} min {min(d):.2f} max {max(d):.2f} first {d[0]:.2f}")
