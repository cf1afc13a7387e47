"""Runs the kernel of a scatter fusion in LLVM's interpreter (lli
-force-interpreter) over every thread of its grid and compares the operand
it updated in place with the scatter computed here: a CPU oracle for the
scatter emitter's runs (vector > 1), segments of sorted indices (a last
thread's steps past the last update, windows that do not fit) and unique
indices, on s32 rows (add and max: atomics the interpreter executes).
Usage: interpret_scatter.py IDXMAP LLI TMPDIR."""
import os, random, re, subprocess, sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import lli_kernel

IDX, LLI, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(TMP, exist_ok=True)


def kernel_ir(hlo_path):
    # The interpreter cannot run the inline PTX of the loads' cache hint.
    ir = lli_kernel.kernel_ir(IDX, hlo_path,
                              ("--tune", "IDXMAP_SCATTER_EVICT_FIRST=0"))
    ir = ir.replace("@llvm.smax.i32(", "@smax32(")
    # lli's interpreter has no atomics; it runs one thread at a time, so a
    # load, the op and a store are the same.
    count = [0]

    def plain(m):
        res, op, ptr, val = m.groups()
        count[0] += 1
        t = f"%at{count[0]}"
        new = {"add": f"{t}.n = add i32 {t}.o, {val}",
               "max": f"{t}.c = icmp sgt i32 {t}.o, {val}\n  "
                      f"{t}.n = select i1 {t}.c, i32 {t}.o, i32 {val}",
               "min": f"{t}.c = icmp slt i32 {t}.o, {val}\n  "
                      f"{t}.n = select i1 {t}.c, i32 {t}.o, i32 {val}"}[op]
        return (f"{t}.o = load i32, ptr {ptr}, align 4\n  {new}\n  "
                f"store i32 {t}.n, ptr {ptr}, align 4\n  "
                f"{res} = add i32 {t}.o, 0")
    return re.sub(r"(%[\w.]+) = atomicrmw (add|max|min) ptr (%[\w.]+), "
                  r"i32 (%[\w.]+) monotonic, align 4", plain, ir)


def array(name, vals):
    return (f"@{name} = global [{max(len(vals), 1)} x i32] [" +
            ", ".join(f"i32 {v}" for v in (vals or [0])) + "]\n")


def run(rows, width, idx, comb, attr, seed):
    rnd = random.Random(seed)
    n = len(idx)
    op = [rnd.randint(-50, 50) for _ in range(rows * width)]
    upd = [rnd.randint(-50, 50) for _ in range(n * width)]
    hlo = (f"HloModule m\n\nc {{\n  a = s32[] parameter(0)\n  b = s32[] "
           f"parameter(1)\n  ROOT r = s32[] {comb}(a, b)\n}}\n\nf {{\n"
           f"  p0 = s32[{rows},{width}] parameter(0)\n"
           f"  p1 = s32[{n},1] parameter(1)\n"
           f"  p2 = s32[{n},{width}] parameter(2)\n"
           f"  ROOT s = s32[{rows},{width}] scatter(p0, p1, p2), "
           "update_window_dims={1}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
           f"to_apply=c{attr}\n}}\n\nENTRY main {{\n"
           f"  a = s32[{rows},{width}] parameter(0)\n"
           f"  b = s32[{n},1] parameter(1)\n"
           f"  u = s32[{n},{width}] parameter(2)\n"
           f"  ROOT r = s32[{rows},{width}] fusion(a, b, u), kind=kInput, "
           "calls=f\n}\n")
    path = os.path.join(TMP, "s.hlo")
    open(path, "w").write(hlo)
    analyzed = subprocess.run([IDX, "analyze", path], check=True,
                              capture_output=True, text=True).stdout
    plan = {k: int(v) for k, v in
            re.findall(r"^\s+(vector|segment|combine) = (\d+)", analyzed, re.M)}
    K = lli_kernel.first_kernel(IDX, path)
    glob = array("P0", op) + array("P1", idx) + array("P2", upd)
    glob += array("S", op)  # the output starts as the operand (the alias)
    glob += lli_kernel.harness("i32")
    # Intrinsics the interpreter lacks.
    glob += ("define i32 @smax32(i32 %a, i32 %b) {\n  %c = icmp sgt i32 %a, %b\n"
             "  %r = select i1 %c, i32 %a, i32 %b\n  ret i32 %r\n}\n")
    total = rows * width
    main = lli_kernel.grid_main(
        f"call void @{K['name']}(ptr @P0, ptr @P1, ptr @P2, ptr @S)",
        K["grid"][0], K["block"][0], "S", total, "i32")
    got = [int(x) for x in lli_kernel.run_lli(
        LLI, os.path.join(TMP, "s.ll"), glob + kernel_ir(path) + "\n" + main)]
    exp = list(op)
    for k, r in enumerate(idx):
        if not 0 <= r < rows:
            continue  # the window does not fit: skipped
        for j in range(width):
            a, b = exp[r * width + j], upd[k * width + j]
            exp[r * width + j] = a + b if comb == "add" else max(a, b)
    lli_kernel.report(f"rows={rows} width={width} updates={n} {comb}{attr}: "
                      f"vector {plan.get('vector')} segment "
                      f"{plan.get('segment')}", got, exp)


def sorted_indices(n, rep, shift):
    return [k // rep + shift for k in range(n)]


SORTED = ", indices_are_sorted=true"
# Sorted, runs of 4 equal indices, the first ones out of bounds; 22
# updates in segments of 2 (an even count), then 55 (odd: the last
# thread's second step is past the end), rows of 16 in runs of 4.
run(5, 16, sorted_indices(22, 4, -1), "add", SORTED, 1)
run(100, 8, sorted_indices(55, 1, 1), "add", SORTED, 2)
run(7, 12, sorted_indices(33, 3, 0), "maximum", SORTED, 3)
run(9, 6, sorted_indices(40, 5, 1), "add", SORTED, 4)
# Unsorted with repeats, and unique indices without atomics.
run(8, 16, [random.Random(5).randint(-1, 8) for _ in range(30)], "add", "", 5)
run(64, 8, random.Random(6).sample(range(64), 40), "add",
    ", unique_indices=true", 6)
