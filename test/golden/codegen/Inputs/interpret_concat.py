"""Runs the kernel of a concatenate fusion in LLVM's interpreter (lli
-force-interpreter) over every thread of its grid and compares the output
with the concatenation computed here: a CPU oracle for the concatenate
emitter (up to 16 operands: each operand's runs, straddling or not) and for
the loop emitter's operand choice beyond (a table search and a switch).
Usage: interpret_concat.py IDXMAP LLI TMPDIR."""
import os, random, sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import lli_kernel

IDX, LLI, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(TMP, exist_ok=True)
def run(sizes, rows, seed, tune=(), dim=1):
    """Concatenates f32[rows, s] for s in SIZES along dim 1, or, with dim
    0, f32[s, rows] along dim 0 (each operand a block of the output)."""
    n = len(sizes)
    W = sum(sizes)
    shape = (lambda s: f"{rows},{s}") if dim == 1 else (lambda s: f"{s},{rows}")
    params = "".join(f"  p{i} = f32[{shape(s)}] parameter({i})\n" for i, s in enumerate(sizes))
    hlo = ("HloModule m\n\nf {\n" + params +
           f"  c = f32[{shape(W)}] concatenate(" + ", ".join(f"p{i}" for i in range(n)) + f"), dimensions={{{dim}}}\n" + f"  ROOT n = f32[{shape(W)}] negate(c)\n}}\n\n"
           "ENTRY main {\n" + params + f"  ROOT r = f32[{shape(W)}] fusion(" + ", ".join(f"p{i}" for i in range(n)) + "), kind=kLoop, calls=f\n}\n")
    path = os.path.join(TMP, "t.hlo")
    open(path, "w").write(hlo)
    K = lli_kernel.first_kernel(IDX, path, tune)
    ir = lli_kernel.kernel_ir(IDX, path, tune)
    vals = []
    glob = ""
    for i, s in enumerate(sizes):
        v = [float(1000 * i + j) for j in range(rows * s)]
        vals.append(v)
        glob += f"@P{i} = global [{rows*s} x float] [" + ", ".join(f"float {x:e}" for x in v) + "]\n"
    glob += f"@C = global [{rows*W} x float] zeroinitializer\n"
    glob += lli_kernel.harness("float")
    args = ", ".join(f"ptr @P{i}" for i in range(n))
    main = lli_kernel.grid_main(f"call void @r({args}, ptr @C)", K["grid"][0],
                                K["block"][0], "C", rows * W, "float")
    got = [float(x) for x in lli_kernel.run_lli(
        LLI, os.path.join(TMP, "t.ll"), glob + ir + "\n" + main)]
    exp = []
    if dim == 0:
        for i in range(n):
            exp += [-x for x in vals[i]]
    for r in range(rows if dim == 1 else 0):
        for i, s in enumerate(sizes):
            exp += [-x for x in vals[i][r * s:(r + 1) * s]]
    how = K["emitter"] if K["emitter"] != "loop" else \
        ("switch" if "switch" in ir else "tree")
    lli_kernel.report(f"{sizes} {rows} {how}{' dim 0' if dim == 0 else ''}"
                      f"{' ' + ' '.join(tune[1::2]) if tune else ''}",
                      got, exp)
random.seed(1)
for sizes, rows in [([8, 3, 8, 3, 8, 3], 4), ([1, 2, 3], 2), ([5] * 7, 3),
                    ([0, 4, 0, 9, 1, 7, 2, 0, 3], 2)] + \
        [([random.randint(0, 9) or 1 for _ in range(random.randint(2, 40))],
          random.randint(1, 4)) for _ in range(3)]:
    run(sizes, rows, 0)
# Several runs per thread (their loads first, then the stores), a ragged
# last block, and small blocks.
for sizes, rows, knobs in [([8, 3, 8, 3, 8, 3], 5, "IDXMAP_PIECE_UNROLL=4,IDXMAP_PIECE_THREADS=32"),
                           ([4, 12, 1], 7, "IDXMAP_PIECE_UNROLL=2,IDXMAP_PIECE_THREADS=32")]:
    run(sizes, rows, 0, ("--tune", knobs))
# Over the output instead (the loop emitter, each element picking its
# operand), with operands that straddle its vectors.
run([4, 12, 1], 7, 0, ("--tune", "IDXMAP_PIECE_OVER_OUTPUT=1"))
# Along dim 0: blocks that each walk one operand, in runs as wide as the
# operand's size and offset allow (4, then 1 after 3 x 5 elements).
BY = "IDXMAP_PIECE_BY_OPERAND=1"
run([3, 5, 2, 4], 5, 0, ("--tune", BY), dim=0)
# The largest operand in runs of 4 needs 16 threads, the next one 33.
run([64, 33], 1, 0, ("--tune", BY), dim=0)
run([2, 1, 3], 4, 0, ("--tune", BY + ",IDXMAP_PIECE_UNROLL=2,IDXMAP_PIECE_THREADS=32"), dim=0)
run([3, 5, 2, 4], 5, 0, dim=0)
