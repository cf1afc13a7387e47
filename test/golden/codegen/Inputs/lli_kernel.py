"""What the interpret_*.py oracles share: an emitted kernel made runnable
by LLVM's interpreter (lli -force-interpreter), a main that calls it for
every thread of its grid, one thread at a time, then prints the output
buffer, and the comparison with the output computed in Python."""
import json, os, re, subprocess, sys


def first_kernel(idx, hlo_path, extra=()):
    """Emits the PTX of `hlo_path` next to it and returns the sidecar's
    first kernel (its name, grid and block)."""
    stem = os.path.splitext(hlo_path)[0]
    subprocess.run([idx, "emit", hlo_path, "-o", stem + ".ptx", *extra],
                   check=True)
    return json.load(open(stem + ".json"))["kernels"][0]


def kernel_ir(idx, hlo_path, extra=()):
    """The module's LLVM IR less what lli does not take: the target, the
    declarations and the NVVM annotations, address space 1 (the
    interpreter has one) and the kernel calling convention; the thread
    and block ids are read through @tidx() and @ctax() (harness())."""
    ir = subprocess.run([idx, "emit", hlo_path, "--emit=llvm", *extra], check=True,
                        capture_output=True, text=True).stdout
    keep = []
    for l in ir.splitlines():
        if l.startswith(("target ", "source_filename", "; ModuleID",
                         "declare", "!1 =")) or "nvvm.annotations" in l:
            continue
        keep.append(l)
    ir = "\n".join(keep)
    ir = re.sub(r"addrspacecast \(ptr addrspace\(1\) (@[^ ]+) to ptr\)",
                r"\1", ir)
    ir = ir.replace(" addrspace(1)", "").replace("ptx_kernel ", "")
    ir = ir.replace("@llvm.nvvm.read.ptx.sreg.tid.x()", "@tidx()")
    ir = ir.replace("@llvm.nvvm.read.ptx.sreg.ctaid.x()", "@ctax()")
    return ir


# printf's format and the lines that print element %x of %p, per element
# type.
_PRINT = {
    "float": ("%g", "  %x = load float, ptr %p\n"
                    "  %xd = fpext float %x to double\n"
                    "  call i32 (ptr, ...) @printf(ptr @fmt, double %xd)\n"),
    "i32": ("%d", "  %x = load i32, ptr %p\n"
                  "  call i32 (ptr, ...) @printf(ptr @fmt, i32 %x)\n"),
}


def harness(elem):
    """The globals main() needs: the thread and block ids the kernel reads
    (@TID, @CTA through @tidx(), @ctax()) and printf with a format for
    `elem` ("float" or "i32")."""
    fmt = _PRINT[elem][0]
    return ("@TID = global i32 0\n@CTA = global i32 0\n"
            f'@fmt = private constant [4 x i8] c"{fmt}\\0A\\00"\n'
            "declare i32 @printf(ptr, ...)\n"
            "define i32 @tidx() {\n  %v = load i32, ptr @TID\n  ret i32 %v\n}\n"
            "define i32 @ctax() {\n  %v = load i32, ptr @CTA\n  ret i32 %v\n}\n")


def grid_main(call, grid, block, out, total, elem):
    """main(): `call` (the kernel's call instruction) for each of `block`
    threads of each of `grid` blocks, then a line per element of the
    global `out`, `total` elements of type `elem`."""
    return f"""define i32 @main() {{
entry:
  br label %outer
outer:
  %b = phi i32 [0, %entry], [%b1, %olatch]
  store i32 %b, ptr @CTA
  br label %inner
inner:
  %t = phi i32 [0, %outer], [%t1, %inner]
  store i32 %t, ptr @TID
  {call}
  %t1 = add i32 %t, 1
  %tc = icmp ult i32 %t1, {block}
  br i1 %tc, label %inner, label %olatch
olatch:
  %b1 = add i32 %b, 1
  %bc = icmp ult i32 %b1, {grid}
  br i1 %bc, label %outer, label %print
print:
  %i = phi i32 [0, %olatch], [%i1, %print]
  %p = getelementptr [{total} x {elem}], ptr @{out}, i32 0, i32 %i
{_PRINT[elem][1]}  %i1 = add i32 %i, 1
  %ic = icmp ult i32 %i1, {total}
  br i1 %ic, label %print, label %done
done:
  ret i32 0
}}
"""


def run_lli(lli, ll_path, text):
    """Writes `text` to `ll_path`, runs it in lli's interpreter and returns
    the printed values as strings; exits with lli's error on a failure."""
    open(ll_path, "w").write(text)
    out = subprocess.run([lli, "-force-interpreter", ll_path],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr[:2000])
        sys.exit(1)
    return out.stdout.split()


def report(label, got, exp):
    """Prints `label` with OK or MISMATCH; on a mismatch the first bad
    elements too, and exits."""
    print(label, "OK" if got == exp else "MISMATCH")
    if got != exp:
        bad = [k for k in range(len(exp)) if got[k] != exp[k]][:5]
        print("first bad", bad, [got[k] for k in bad], [exp[k] for k in bad])
        sys.exit(1)
