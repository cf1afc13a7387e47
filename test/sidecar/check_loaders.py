#!/usr/bin/env python3
"""Runs the worked loaders of examples/loader on emitted modules: a chain of
two kernels through an intermediate, a whole module of three kernels beside
a custom call, a reduction that takes a workspace. Each loader must launch
every kernel and write every output; given two loaders, their outputs (the
byte sums of every written buffer) must be the same.

With --run, `idxmap run m.ptx --output-dir RUN` first runs the same .ptx over
its buffer plan (random inputs, --seed) and writes every buffer; each loader
then takes those inputs (--inputs RUN) and writes what its kernels wrote
(--output-dir), which must equal idxmap run's files byte for byte (float
buffers: within 1e-5 relative where the bytes differ, as a reduction's
atomics may add in another order; the difference is printed).

With --no-check after --run, idxmap run does not compare its per-kernel runs
with the interpreter (for a fake driver, test/sidecar/fake_libcuda.c, whose
kernels compute no HLO).

usage: check_loaders.py IDXMAP [--run [--no-check]] HLO... -- LOADER [-- LOADER]
  (LOADER: a command, e.g. `python3 loader.py`; the .ptx is appended)
Exit 77 when idxmap run or a loader finds no CUDA driver or GPU.
"""
import json
import math
import os
import shlex
import struct
import subprocess
import sys
import tempfile

FLOAT_FORMATS = {"f32": "f", "f64": "d", "f16": "e"}


def floats(data, type_):
    if type_ == "bf16":
        return [struct.unpack("<f", b"\0\0" + data[i:i + 2])[0]
                for i in range(0, len(data), 2)]
    f = FLOAT_FORMATS[type_]
    return list(struct.unpack("<%d%s" % (len(data) // struct.calcsize(f), f),
                              data))


def same_buffer(name, type_, want, got):
    """None when got matches want (idxmap run's bytes), else the reason."""
    if want == got:
        return None
    if len(want) != len(got):
        return "%s: %d bytes, idxmap run wrote %d" % (name, len(got), len(want))
    if type_ not in FLOAT_FORMATS and type_ != "bf16":
        diff = sum(a != b for a, b in zip(want, got))
        return "%s: %d bytes differ (%s)" % (name, diff, type_)
    worst = 0.0
    for a, b in zip(floats(want, type_), floats(got, type_)):
        if math.isnan(a) or math.isnan(b):
            if math.isnan(a) != math.isnan(b):
                return "%s: NaN in only one of them" % name
            continue
        err = abs(a - b) / max(abs(a), 1e-6)
        worst = max(worst, err)
    print("note: %s differs in its bytes from idxmap run's, max relative "
          "difference %.3g" % (name, worst))
    return None if worst <= 1e-5 else (
        "%s: max relative difference %.3g" % (name, worst))


def main():
    args = sys.argv[1:]
    idxmap = args[0]
    against_run = len(args) > 1 and args[1] == "--run"
    run_args = []
    if against_run:
        del args[1]
        if len(args) > 1 and args[1] == "--no-check":
            run_args.append(args.pop(1))
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
            run_dir = os.path.join(tmp, "run%d" % i)
            extra = []
            if against_run:
                r = subprocess.run([idxmap, "run", ptx, "--output-dir",
                                    run_dir] + run_args, capture_output=True,
                                   text=True)
                print("$ idxmap run %s --output-dir\n%s%s" % (
                    os.path.basename(hlo), r.stdout, r.stderr), end="")
                if r.returncode == 3:
                    return 77
                if r.returncode:
                    return 1
                extra = ["--inputs", run_dir]
            with open(ptx[:-4] + ".json") as f:
                side = json.load(f)
            written = set(p["buffer"] for k in side["kernels"]
                          for p in k["params"]
                          if p["role"] == "output" and "buffer" in p)
            outputs = []
            for j, loader in enumerate(loaders):
                out_dir = os.path.join(tmp, "loader%d.%d" % (i, j))
                os.mkdir(out_dir)
                cmd = loader + [ptx] + extra
                if against_run:
                    cmd += ["--output-dir", out_dir]
                r = subprocess.run(cmd, capture_output=True, text=True)
                print("$ %s %s\n%s%s" % (" ".join(loader),
                                         os.path.basename(hlo), r.stdout,
                                         r.stderr), end="")
                if r.returncode == 77:
                    return 77
                if r.returncode or "NOT WRITTEN" in r.stdout:
                    return 1
                outputs.append(r.stdout)
                if not against_run:
                    continue
                compared = 0
                for b in (side["buffers"][n] for n in sorted(written)):
                    name = b["name"] + ".bin"
                    with open(os.path.join(run_dir, name), "rb") as f:
                        want = f.read()
                    with open(os.path.join(out_dir, name), "rb") as f:
                        got = f.read()
                    why = same_buffer(b["name"], b["type"], want, got)
                    if why:
                        print("error: %s and idxmap run disagree on %s: %s" %
                              (" ".join(loader), hlo, why))
                        return 1
                    compared += 1
                if compared == 0:
                    print("error: %s: no buffer written by a kernel" % hlo)
                    return 1
                print("%s: %d written buffers match idxmap run's" % (
                    os.path.basename(hlo), compared))
            if any(o != outputs[0] for o in outputs):
                print("error: the loaders disagree on %s" % hlo)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
