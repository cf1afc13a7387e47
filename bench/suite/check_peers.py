#!/usr/bin/env python3
"""Checks, on the CPU, that gen.py's torch functions compute what the HLO
of their fusion computes: the torch function is the reference run_suite.py
holds idxmap's kernels to, so a torch function that differs from the HLO
would report a correct kernel as a MISMATCH (or hide a wrong one).

Each fusion of the table, with every dim shrunk (gen.build(small=True)), is
evaluated by idxmap's interpreter (`idxmap hlo --evaluate`) on its
pseudo-random arguments; the same arguments go through the torch function,
and the results are compared as run_suite.py compares a kernel's.

  python3 bench/suite/check_peers.py IDXMAP [--only a,b]

Needs torch (a CPU build is enough), no GPU; JAX and CuPy are not checked.
"""
import argparse, math, os, re, subprocess, sys, tempfile, types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402
import run_suite  # noqa: E402

LINE = re.compile(r"^(arg|result) (\d+): (\w+)\[([0-9,]*)\] \{(.*)\}$")


def evaluate(idxmap, f, tmp):
    """The interpreter's arguments and results: [(type, shape, values)]."""
    path = os.path.join(tmp, f.name + ".hlo")
    with open(path, "w") as o:
        o.write(f.hlo)
    # Non-negative arguments where the fusion takes a square root of one.
    rng = "0.01,1" if any(init == "square" for *_, init in f.ins) else "-1,1"
    r = subprocess.run([idxmap, "hlo", path, "--evaluate", "--max-elements", "1000000",
                        "--range", rng], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    args, results = [], []
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if m:
            kind, _, ty, dims, vals = m.groups()
            shape = [int(d) for d in dims.split(",") if d]
            v = [float(x) for x in vals.split(",")] if vals.strip() else []
            (args if kind == "arg" else results).append((ty, shape, v))
    return args, results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("idxmap")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    import torch
    M = types.SimpleNamespace(torch=torch)
    only = set(filter(None, a.only.split(",")))
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in gen.build(small=True):
            if only and f.name not in only:
                continue
            try:
                args, results = evaluate(a.idxmap, f, tmp)
                xs = [torch.tensor(v, dtype=torch.float64).reshape(s).to(
                      getattr(torch, gen.TDT[ty])) for ty, s, v in args]
                try:
                    refs = run_suite.as_tuple(f.tf(torch, *xs))
                except RuntimeError as e:
                    # CPU builds lack some f16 kernels (relu): f16 goes
                    # through f32 there, within f16's tolerance.
                    if "Half" not in str(e):
                        raise
                    xs = [x.float() if x.dtype == torch.float16 else x for x in xs]
                    refs = run_suite.as_tuple(f.tf(torch, *xs))
                scales = [None] * len(refs)
                if f.sum_like and all(x.dtype.is_floating_point for x in xs):
                    scales = list(run_suite.as_tuple(f.tf(torch, *[x.abs() for x in xs])))
                outs = [torch.tensor(v, dtype=torch.float64).reshape(s).to(
                        getattr(torch, gen.TDT[ty])) for ty, s, v in results]
                ok, err, msg = run_suite.compare(M, outs, [ty for ty, _, _ in results],
                                                 refs, scales)
            except Exception as e:  # a torch function that fails is a finding too
                ok, err, msg = False, math.inf, f"{type(e).__name__}: {e}"
            if not ok:
                bad += 1
            print(f"{'ok  ' if ok else 'FAIL'} {f.name:36s} {f.shape_desc:40s} "
                  f"{'' if err is None else f'{err:.2g}'} {msg}")
    print(f"{bad} of the torch functions differ from their HLO" if bad else
          "every torch function computes its HLO")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
