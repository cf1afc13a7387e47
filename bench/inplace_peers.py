#!/usr/bin/env python3
"""Times in-place updates (issue 17) beside the peers, by peers.py's method
(bench/kernel_timing.py: CUPTI kernel time of groups of 6 calls, the
contenders interleaved and rotated): idxmap's kernel (updating the cache in
place, as its sidecar's "aliases" ask), XLA through JAX with the cache
donated (its in-place dynamic-update-slice), torch eager's in-place slice
assignment and torch.compile of it.

  python3 bench/inplace_peers.py --idxmap BIN [--groups N] [--only NAME]
      [--variant NAME=KNOB=V[,KNOB=V]]...

Workloads: KV-cache writes of 8 rows of 4096 bf16 into caches of 8 MiB
(L2-resident) and 2 GiB, at a row the kernels read from a device scalar;
scatter-adds of f32 rows of 128: 1M rows with duplicates into 65536 rows
(random, and sorted with indices_are_sorted), 262144 unique rows into 1M
rows (torch's index_add_), and random rows into operands of 8 MiB and of
128 MiB (larger than L2). --variant also times idxmap's kernels emitted
with other --tune settings.
Prints per contender the mean, median, min and max of the group times (us)
and the bandwidth of the bytes the update must move (read + written).
"""
import argparse, os, statistics, subprocess, sys, tempfile, warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_timing  # noqa: E402

HLO = """HloModule kv_{rows}x{width}, input_output_alias={{ {{}}: (0, {{}}, may-alias) }}

fused_dus {{
  p0 = bf16[{rows},{width}]{{1,0}} parameter(0)
  p1 = bf16[{upd},{width}]{{1,0}} parameter(1)
  p2 = s32[] parameter(2)
  c0 = s32[] constant(0)
  ROOT d = bf16[{rows},{width}]{{1,0}} dynamic-update-slice(p0, p1, p2, c0)
}}

ENTRY main {{
  cache = bf16[{rows},{width}]{{1,0}} parameter(0)
  upd = bf16[{upd},{width}]{{1,0}} parameter(1)
  pos = s32[] parameter(2)
  ROOT f = bf16[{rows},{width}]{{1,0}} fusion(cache, upd, pos), kind=kLoop, calls=fused_dus
}}
"""

WORKLOADS = [("kv_write_8_into_bf16_1024x4096", 1024, 4096, 8),
             ("kv_write_8_into_bf16_262144x4096", 262144, 4096, 8)]

SCATTER_HLO = """HloModule {name}

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

fused {{
  p0 = f32[{rows},{width}]{{1,0}} parameter(0)
  p1 = s32[{n},1]{{1,0}} parameter(1)
  p2 = f32[{n},{width}]{{1,0}} parameter(2)
  ROOT s = f32[{rows},{width}]{{1,0}} scatter(p0, p1, p2), update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add{unique}
}}

ENTRY main {{
  o = f32[{rows},{width}]{{1,0}} parameter(0)
  i = s32[{n},1]{{1,0}} parameter(1)
  u = f32[{n},{width}]{{1,0}} parameter(2)
  ROOT f = f32[{rows},{width}]{{1,0}} fusion(o, i, u), kind=kInput, calls=fused
}}
"""

# name, operand rows, row width, update rows, indices: "random" (with
# duplicates), "sorted" (the same, sorted, indices_are_sorted) or "unique"
SCATTERS = [("scatter_add_1M_rows_into_f32_65536x128", 65536, 128, 1 << 20, "random"),
            ("scatter_add_sorted_1M_rows_into_f32_65536x128", 65536, 128, 1 << 20,
             "sorted"),
            ("index_add_unique_262144_rows_into_f32_1048576x128", 1 << 20, 128,
             1 << 18, "unique"),
            # Beyond the three: an operand of 8 MiB and one of
            # 128 MiB (larger than L2) under the same stream of updates.
            ("scatter_add_262144_rows_into_f32_16384x128", 16384, 128, 1 << 18,
             "random"),
            ("scatter_add_1M_rows_into_f32_262144x128", 262144, 128, 1 << 20,
             "random")]


def main():
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--idxmap", required=True)
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--only", default="")
    ap.add_argument("--variant", action="append", default=[],
                    metavar="NAME=K=V[,K=V]",
                    help="also time idxmap's kernel emitted with these --tune "
                         "settings, as contender idxmap[NAME]")
    a = ap.parse_args()
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import cupy as cp
    import torch
    import jax
    import jax.numpy as jnp
    tmp = tempfile.mkdtemp()
    for name, rows, width, upd in WORKLOADS:
        if a.only and name not in a.only.split(","):
            continue
        hlo = os.path.join(tmp, name + ".hlo")
        with open(hlo, "w") as f:
            f.write(HLO.format(rows=rows, width=width, upd=upd))
        ptx = os.path.join(tmp, name + ".ptx")
        subprocess.run([a.idxmap, "emit", hlo, "-o", ptx], check=True)
        pos = rows // 3
        cache = torch.randn(rows, width, device="cuda").to(torch.bfloat16)
        u = torch.randn(upd, width, device="cuda").to(torch.bfloat16)
        p = torch.tensor(pos, device="cuda", dtype=torch.int32)
        ins = [cache, u, p]
        call_idxmap = kernel_timing.idxmap_launches(
            cp, torch, ptx, lambda k, q: ins[[x["name"] for x in k["params"]].index(q["name"])]
            if q["role"] == "input" else ins[0])

        def eager():
            cache[pos:pos + upd].copy_(u)

        def tc_fn(c, v, q):
            c[q:q + upd].copy_(v)
        tc = torch.compile(tc_fn)

        def call_tc():
            tc(cache, u, pos)

        jf = jax.jit(lambda c, v, q: jax.lax.dynamic_update_slice(c, v, (q, 0)),
                     donate_argnums=0)
        state = [jnp.zeros((rows, width), jnp.bfloat16),
                 jnp.ones((upd, width), jnp.bfloat16), jnp.int32(pos)]

        def call_jax():
            state[0] = jf(state[0], state[1], state[2])

        def sync_jax():
            state[0].block_until_ready()
            torch.cuda.synchronize()
        # The reference of "moving the update's bytes": a copy of the update.
        u2 = torch.empty_like(u)

        def copy_update():
            u2.copy_(u)
        contenders = {"idxmap": (call_idxmap, torch.cuda.synchronize),
                      "copy_of_update": (copy_update, torch.cuda.synchronize),
                      "xla_jax_donated": (call_jax, sync_jax),
                      "torch_eager": (eager, torch.cuda.synchronize),
                      "torch_compile": (call_tc, torch.cuda.synchronize)}
        for c, s in contenders.values():
            c(); s()
        # Sanity: idxmap's write leaves the update's rows in the cache.
        ref = u.clone()
        cache[pos:pos + upd].zero_()
        call_idxmap(); torch.cuda.synchronize()
        ok = bool(torch.equal(cache[pos:pos + upd], ref))
        times, per_call = kernel_timing.time_groups(
            contenders, a.groups, kernel_timing.mark,
            activities=("kernel", "gpu_memcpy", "gpu_memset"))
        moved = 2 * upd * width * 2
        print(f"{name}: idxmap wrote the update in place: {ok}; "
              f"{moved} bytes must move")
        print(f"{'contender':18s} {'k/call':>6s} {'mean':>8s} {'median':>8s} "
              f"{'min':>8s} {'max':>8s} {'GB/s':>8s}")
        for c, t in times.items():
            med = statistics.median(t)
            print(f"{c:18s} {per_call[c]:6.1f} {statistics.mean(t):8.2f} "
                  f"{med:8.2f} {min(t):8.2f} {max(t):8.2f} "
                  f"{moved / (med * 1e3) if med else 0:8.1f}")
        del cache, state
        torch.cuda.empty_cache()
    run_scatters(a, cp, torch, jax, jnp, tmp)


def emit_variants(a, hlo, tmp, name):
    """PTX of HLO emitted with each --variant's --tune settings, by name."""
    out = {}
    for v in a.variant:
        vname, _, settings = v.partition("=")
        ptx = os.path.join(tmp, f"{name}.{vname}.ptx")
        cmd = [a.idxmap, "emit", hlo, "-o", ptx]
        for kv in settings.split(","):
            cmd += ["--tune", kv]
        subprocess.run(cmd, check=True)
        out[vname] = ptx
    return out


def run_scatters(a, cp, torch, jax, jnp, tmp):
    """Scatter-adds of rows (duplicates, or unique rows as index_add) in
    place beside torch's index_add_ (eager, compiled) and XLA's .at[].add
    with the operand donated."""
    for name, rows, width, n, kind in SCATTERS:
        unique = kind == "unique"
        ordered = kind == "sorted"
        if a.only and name not in a.only.split(","):
            continue
        hlo = os.path.join(tmp, name + ".hlo")
        with open(hlo, "w") as f:
            f.write(SCATTER_HLO.format(
                name=name, rows=rows, width=width, n=n,
                unique=", unique_indices=true" if unique else
                ", indices_are_sorted=true" if ordered else ""))
        ptx = os.path.join(tmp, name + ".ptx")
        subprocess.run([a.idxmap, "emit", hlo, "-o", ptx], check=True)
        variant_ptx = emit_variants(a, hlo, tmp, name)
        op = torch.zeros(rows, width, device="cuda")
        idx = (torch.randperm(rows, device="cuda")[:n] if unique else
               torch.randint(0, rows, (n,), device="cuda")).to(torch.int32)
        if ordered:
            idx = torch.sort(idx).values
        upd = torch.randn(n, width, device="cuda")
        idx2 = idx.reshape(n, 1).contiguous()
        ins = [op, idx2, upd]
        call_idxmap = kernel_timing.idxmap_launches(
            cp, torch, ptx, lambda k, q: ins[[x["name"] for x in k["params"]].index(q["name"])]
            if q["role"] == "input" else ins[0])
        idx64 = idx.long()

        def eager():
            op.index_add_(0, idx64, upd)

        def tc_fn(o, i, u):
            o.index_add_(0, i, u)
        tc = torch.compile(tc_fn)

        def call_tc():
            tc(op, idx64, upd)
        jf = jax.jit(lambda o, i, u: o.at[i].add(u, unique_indices=unique,
                                                 indices_are_sorted=ordered),
                     donate_argnums=0)
        state = [jnp.zeros((rows, width), jnp.float32),
                 jnp.asarray(idx.cpu().numpy()), jnp.ones((n, width), jnp.float32)]

        def call_jax():
            state[0] = jf(*state)

        def sync_jax():
            state[0].block_until_ready()
            torch.cuda.synchronize()
        contenders = {"idxmap": (call_idxmap, torch.cuda.synchronize),
                      **{f"idxmap[{v}]": (kernel_timing.idxmap_launches(
                          cp, torch, vp, lambda k, q: ins[[x["name"] for x in k["params"]].index(q["name"])]
                          if q["role"] == "input" else ins[0]), torch.cuda.synchronize)
                         for v, vp in variant_ptx.items()},
                      "xla_jax_donated": (call_jax, sync_jax),
                      "torch_eager": (eager, torch.cuda.synchronize),
                      "torch_compile": (call_tc, torch.cuda.synchronize)}
        # Sanity: one idxmap launch on zeros equals torch's index_add.
        op.zero_()
        call_idxmap(); torch.cuda.synchronize()
        ref = torch.zeros_like(op).index_add_(0, idx64, upd)
        err = float((op - ref).abs().max())
        for c, s in contenders.values():
            c(); s()
        times, per_call = kernel_timing.time_groups(
            contenders, a.groups, kernel_timing.mark,
            activities=("kernel", "gpu_memcpy", "gpu_memset"))
        moved = n * width * 4 * 3 + n * 4
        print(f"{name}: max |idxmap - torch| = {err:.3g}; {moved} bytes must "
              f"move (updates read, rows read and written)")
        print(f"{'contender':18s} {'k/call':>6s} {'mean':>8s} {'median':>8s} "
              f"{'min':>8s} {'max':>8s} {'GB/s':>8s}")
        for c, t in times.items():
            med = statistics.median(t)
            print(f"{c:18s} {per_call[c]:6.1f} {statistics.mean(t):8.2f} "
                  f"{med:8.2f} {min(t):8.2f} {max(t):8.2f} "
                  f"{moved / (med * 1e3) if med else 0:8.1f}")
        del op, upd, state
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
