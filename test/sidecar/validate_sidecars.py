#!/usr/bin/env python3
"""Emits HLO modules with `idxmap emit` and validates each sidecar against
docs/sidecar.schema.json (python3-jsonschema, no network), plus what a schema
cannot say: buffer indices in range, sizes that match shapes, launch_order
naming kernels, "hlo" resolving from the sidecar's directory. Also a path
with a tab and quotes (the JSON must parse with Python's strict json), and
sidecars on -o - and --emit=llvm through --sidecar.

usage: validate_sidecars.py IDXMAP SCHEMA HLO...
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    sys.exit("error: python3-jsonschema is needed (apt-get install "
             "python3-jsonschema; tools/deps.sh installs it)")

WIDTH = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
         "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8,
         "c64": 8, "c128": 16}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def validate(path, validator):
    with open(path) as f:
        side = json.load(f)
    errors = sorted(validator.iter_errors(side), key=str)
    check(not errors, "%s: %s" % (path, "; ".join(
        "%s: %s" % ("/".join(map(str, e.absolute_path)), e.message)
        for e in errors[:5])))
    names = [k["name"] for k in side["kernels"]]
    check(set(side["launch_order"]) <= set(names),
          "%s: launch_order names a missing kernel" % path)
    for b in side["buffers"]:
        w = WIDTH.get(b["type"])
        if w:
            check(b["bytes"] == w * math.prod(b["shape"]),
                  "%s: buffer %s has the wrong size" % (path, b["name"]))
        check(sorted(b["layout"]) == list(range(len(b["shape"]))),
              "%s: buffer %s layout" % (path, b["name"]))
        # Parameters have a number; results a tuple index or -1 (the
        # result is not a tuple); intermediates -1.
        check(b["index"] >= 0 if b["kind"] == "parameter" else
              b["kind"] == "result" or b["index"] == -1,
              "%s: buffer %s index" % (path, b["name"]))
    for k in side["kernels"]:
        for p in k["params"]:
            if "buffer" in p:
                b = side["buffers"][p["buffer"]]
                check(b["shape"] == p["shape"] and b["type"] == p["type"],
                      "%s: %s.%s and its buffer differ" % (path, k["name"],
                                                          p["name"]))
        for a in k["aliases"]:
            check(max(a["output"], a["input"]) < len(k["params"]),
                  "%s: alias out of range" % path)
    if "hlo" in side:
        hlo = os.path.join(os.path.dirname(path), side["hlo"])
        check(os.path.isfile(hlo), "%s: hlo %s not found" % (path, hlo))
    return side


def emit(idxmap, args, cwd=None):
    r = subprocess.run([idxmap, "emit"] + args, cwd=cwd, capture_output=True,
                       text=True)
    check(r.returncode == 0, "idxmap emit %s: exit %d\n%s" % (
        " ".join(args), r.returncode, r.stderr))
    return r


def main():
    idxmap, schema_path, modules = (os.path.abspath(sys.argv[1]),
                                    sys.argv[2], sys.argv[3:])
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    tmp = tempfile.mkdtemp(prefix="idxmap-sidecar-")
    try:
        multi = 0
        for i, hlo in enumerate(modules):
            out = os.path.join(tmp, "m%d" % i, "k.ptx")
            os.makedirs(os.path.dirname(out))
            emit(idxmap, [hlo, "-o", out])
            side = validate(os.path.join(os.path.dirname(out), "k.json"),
                            validator)
            multi += len(side["kernels"]) > 1
        check(multi > 0, "no module of several kernels was validated")
        # The schema is not vacuous: a sidecar without its target, or with
        # an unknown role, is refused.
        for drop in (lambda d: d.pop("target"),
                     lambda d: d["kernels"][0]["params"][0].update(role="x")):
            bad = json.loads(json.dumps(side))
            drop(bad)
            check(not validator.is_valid(bad), "schema accepted a bad sidecar")

        # A directory with a tab and quotes in its name, the HLO beside the
        # sidecar: "hlo" is recorded relative to it, escaped.
        odd = os.path.join(tmp, 'tab\there "quoted" \\ dir')
        os.makedirs(odd)
        shutil.copy(modules[0], os.path.join(odd, "m.hlo"))
        emit(idxmap, [os.path.join(odd, "m.hlo"), "-o",
                      os.path.join(odd, "m.ptx")])
        side = validate(os.path.join(odd, "m.json"), validator)
        check(side["hlo"] == "m.hlo", "hlo recorded as %r" % side["hlo"])
        # From another directory, through a relative path with the tab.
        os.makedirs(os.path.join(tmp, "out"))
        emit(idxmap, [os.path.join(os.path.basename(odd), "m.hlo"), "-o",
                      "out/m.ptx"], cwd=tmp)
        side = validate(os.path.join(tmp, "out", "m.json"), validator)
        check(side["hlo"] == os.path.join("..", os.path.basename(odd),
                                          "m.hlo"),
              "hlo recorded as %r" % side["hlo"])

        # No .ptx file: --sidecar names the sidecar.
        r = emit(idxmap, [modules[0], "-o", "-", "--sidecar",
                          os.path.join(tmp, "stdout.json")])
        check(".entry" in r.stdout, "no PTX on stdout")
        validate(os.path.join(tmp, "stdout.json"), validator)
        emit(idxmap, [modules[0], "--emit=llvm", "-o",
                      os.path.join(tmp, "k.ll"), "--sidecar",
                      os.path.join(tmp, "llvm.json")])
        validate(os.path.join(tmp, "llvm.json"), validator)
    except AssertionError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d modules: sidecars valid" % len(modules))
    return 0


if __name__ == "__main__":
    sys.exit(main())
