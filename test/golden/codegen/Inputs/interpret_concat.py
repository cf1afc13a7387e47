"""Runs the kernel of a concatenate fusion in LLVM's interpreter (lli
-force-interpreter) over every thread of its grid and compares the output
with the concatenation computed here: a CPU oracle for the concatenate
emitter (up to 16 operands: each operand's runs, straddling or not) and for
the loop emitter's operand choice beyond (a table search and a switch).
Usage: interpret_concat.py IDXMAP LLI TMPDIR."""
import json, os, re, subprocess, sys, random
IDX, LLI, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(TMP, exist_ok=True)
def run(sizes, rows, seed):
    n = len(sizes)
    W = sum(sizes)
    params = "".join(f"  p{i} = f32[{rows},{s}] parameter({i})\n" for i, s in enumerate(sizes))
    hlo = ("HloModule m\n\nf {\n" + params +
           f"  c = f32[{rows},{W}] concatenate(" + ", ".join(f"p{i}" for i in range(n)) + "), dimensions={1}\n" + f"  ROOT n = f32[{rows},{W}] negate(c)\n}}\n\n"
           "ENTRY main {\n" + params + f"  ROOT r = f32[{rows},{W}] fusion(" + ", ".join(f"p{i}" for i in range(n)) + "), kind=kLoop, calls=f\n}\n")
    open(os.path.join(TMP, "t.hlo"), "w").write(hlo)
    subprocess.run([IDX, "emit", os.path.join(TMP, "t.hlo"), "-o", os.path.join(TMP, "t.ptx")], check=True)
    K = json.load(open(os.path.join(TMP, "t.json")))["kernels"][0]
    ir = subprocess.run([IDX, "emit", os.path.join(TMP, "t.hlo"), "--emit=llvm"], check=True, capture_output=True, text=True).stdout
    ir = "\n".join(l for l in ir.splitlines() if not l.startswith("target ") and not l.startswith("source_filename") and not l.startswith("; ModuleID") and not l.startswith("declare") and "nvvm.annotations" not in l and not l.startswith("!1 ="))
    ir = re.sub(r"addrspacecast \(ptr addrspace\(1\) (@[^ ]+) to ptr\)", r"\1", ir)
    ir = ir.replace(" addrspace(1)", "")
    ir = ir.replace("ptx_kernel ", "").replace("@llvm.nvvm.read.ptx.sreg.tid.x()", "@tidx()").replace("@llvm.nvvm.read.ptx.sreg.ctaid.x()", "@ctax()")
    vals = []
    glob = ""
    for i, s in enumerate(sizes):
        v = [float(1000 * i + j) for j in range(rows * s)]
        vals.append(v)
        glob += f"@P{i} = global [{rows*s} x float] [" + ", ".join(f"float {x:e}" for x in v) + "]\n"
    glob += f"@C = global [{rows*W} x float] zeroinitializer\n@TID = global i32 0\n@CTA = global i32 0\n"
    glob += '@fmt = private constant [4 x i8] c"%g\\0A\\00"\ndeclare i32 @printf(ptr, ...)\n'
    glob += "define i32 @tidx() {\n  %v = load i32, ptr @TID\n  ret i32 %v\n}\ndefine i32 @ctax() {\n  %v = load i32, ptr @CTA\n  ret i32 %v\n}\n"
    args = ", ".join(f"ptr @P{i}" for i in range(n))
    G, T = K["grid"][0], K["block"][0]
    main = f"""define i32 @main() {{
entry:
  br label %outer
outer:
  %b = phi i32 [0, %entry], [%b1, %olatch]
  store i32 %b, ptr @CTA
  br label %inner
inner:
  %t = phi i32 [0, %outer], [%t1, %inner]
  store i32 %t, ptr @TID
  call void @r({args}, ptr @C)
  %t1 = add i32 %t, 1
  %tc = icmp ult i32 %t1, {T}
  br i1 %tc, label %inner, label %olatch
olatch:
  %b1 = add i32 %b, 1
  %bc = icmp ult i32 %b1, {G}
  br i1 %bc, label %outer, label %print
print:
  %i = phi i32 [0, %olatch], [%i1, %print]
  %p = getelementptr [{rows*W} x float], ptr @C, i32 0, i32 %i
  %x = load float, ptr %p
  %xd = fpext float %x to double
  call i32 (ptr, ...) @printf(ptr @fmt, double %xd)
  %i1 = add i32 %i, 1
  %ic = icmp ult i32 %i1, {rows*W}
  br i1 %ic, label %print, label %done
done:
  ret i32 0
}}
"""
    open(os.path.join(TMP, "t.ll"), "w").write(glob + ir + "\n" + main)
    out = subprocess.run([LLI, "-force-interpreter", os.path.join(TMP, "t.ll")], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr[:2000]); sys.exit(1)
    got = [float(x) for x in out.stdout.split()]
    exp = []
    for r in range(rows):
        for i, s in enumerate(sizes):
            exp += [-x for x in vals[i][r * s:(r + 1) * s]]
    ok = got == exp
    how = K["emitter"] if K["emitter"] != "loop" else \
        ("switch" if "switch" in ir else "tree")
    print(sizes, rows, how, "OK" if ok else "MISMATCH")
    if not ok:
        bad = [k for k in range(len(exp)) if got[k] != exp[k]][:5]
        print("first bad", bad, [got[k] for k in bad], [exp[k] for k in bad]); sys.exit(1)
random.seed(1)
for sizes, rows in [([8, 3, 8, 3, 8, 3], 4), ([1, 2, 3], 2), ([5] * 7, 3),
                    ([0, 4, 0, 9, 1, 7, 2, 0, 3], 2)] + \
        [([random.randint(0, 9) or 1 for _ in range(random.randint(2, 40))],
          random.randint(1, 4)) for _ in range(3)]:
    run(sizes, rows, 0)
