# Helper of isl-format.txt: runs `idxmap equal --pointwise` on each pair of
# chunks of the XLA file and its isl translation. Usage:
#   equal-chunks.py IDXMAP XLA_FILE ISL_FILE WORKDIR
import os, subprocess, sys

idxmap, xla, isl, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)

def chunks(path):
    out, cur = [], []
    for line in open(path):
        if line.strip().startswith("// -----"):
            out.append("".join(cur)); cur = []
        else:
            cur.append(line)
    out.append("".join(cur))
    return [c for c in out if any(l.strip() and not l.strip().startswith("//") for l in c.splitlines())]

a, b = chunks(xla), chunks(isl)
assert len(a) == len(b), (len(a), len(b))
for i, (x, y) in enumerate(zip(a, b)):
    fa, fb = os.path.join(work, "%d.map" % i), os.path.join(work, "%d.isl" % i)
    open(fa, "w").write(x); open(fb, "w").write(y)
    r = subprocess.run([idxmap, "equal", "--pointwise", fa, fb], capture_output=True, text=True)
    sys.stdout.write(r.stdout + r.stderr)
