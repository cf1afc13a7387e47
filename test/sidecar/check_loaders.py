#!/usr/bin/env python3
"""Runs the worked loaders of examples/loader on emitted modules: a chain of
two kernels through an intermediate, a whole module of three kernels beside
a custom call, a reduction that takes a workspace. Each loader must launch
every kernel and write every output; given two loaders, their outputs (the
byte sums of every written buffer) must be the same.

usage: check_loaders.py IDXMAP HLO... -- LOADER [-- LOADER]
  (LOADER: a command, e.g. `python3 loader.py`; the .ptx is appended)
Exit 77 when a loader finds no CUDA driver or GPU.
"""
import os
import shlex
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    idxmap = args[0]
    cut = args.index("--")
    modules, rest = args[1:cut], args[cut + 1:]
    loaders = [shlex.split(x) for x in " ".join(rest).split(" -- ")]
    with tempfile.TemporaryDirectory(prefix="idxmap-loaders-") as tmp:
        for i, hlo in enumerate(modules):
            ptx = os.path.join(tmp, "m%d.ptx" % i)
            r = subprocess.run([idxmap, "emit", hlo, "-o", ptx],
                               capture_output=True, text=True)
            if r.returncode:
                print("idxmap emit %s failed:\n%s" % (hlo, r.stderr))
                return 1
            outputs = []
            for loader in loaders:
                r = subprocess.run(loader + [ptx], capture_output=True,
                                   text=True)
                print("$ %s %s\n%s%s" % (" ".join(loader),
                                         os.path.basename(hlo), r.stdout,
                                         r.stderr), end="")
                if r.returncode == 77:
                    return 77
                if r.returncode or "NOT WRITTEN" in r.stdout:
                    return 1
                outputs.append(r.stdout)
            if any(o != outputs[0] for o in outputs):
                print("error: the loaders disagree on %s" % hlo)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
