#!/usr/bin/env python3
"""Judges the cost model on recorded measurements, without a GPU.
Accuracy: for every fusion of a run_suite.py JSON, the estimate of its
default plan (`idxmap analyze`) over its measured time. Choice: for each
fusion measured with variants (--search), the estimate of every timed plan
(`idxmap analyze --tune KNOBS`), the plan the model picks (the lowest
estimate; ties keep the default) and how far its measured time is from the
best measured plan. Prints one line per fusion and two summary lines.

  python3 bench/suite/model_pick.py --idxmap BIN --json RUN.json [--device MODEL]
                                    [--plans] [--same-kernel]

The estimates come from BIN's model and the plans from BIN's rules, so BIN
should be the binary the run measured, or one whose rules make the same
plans (a new cost model judged on old measurements).
"""
import argparse, hashlib, json, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def tune_env(tune):
    """The environment that sets TUNE's knobs ("NAME=V[,NAME=V]"): every
    idxmap reads its knobs from there (older binaries' analyze has no
    --tune)."""
    env = dict(os.environ)
    for kv in re.split(r"[,\s]+", tune or ""):
        if "=" in kv:
            k, v = kv.split("=", 1)
            env[k] = v
    return env


def estimate(idxmap, hlo, device, tune):
    cmd = [idxmap, "analyze", hlo, "--device", device]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=tune_env(tune))
    m = re.search(r"estimate:\s*([0-9.]+) us", r.stdout or "")
    return float(m.group(1)) if m else None


def kernel_key(idxmap, hlo, device, tune):
    """What the plan compiles to under TUNE: the PTX and sidecar
    (grid, block, shared and workspace bytes) of `idxmap emit`, or None.
    Two spellings of one plan (a knob set to its default, an override the
    rules would have made) compile to the same kernel."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "k.ptx")
        r = subprocess.run([idxmap, "emit", hlo, "--device", device, "-o", out],
                           capture_output=True, text=True, timeout=300,
                           env=tune_env(tune))
        if r.returncode != 0:
            return None
        h = hashlib.sha256()
        for f in (out, os.path.join(d, "k.json")):
            with open(f, "rb") as fh:
                h.update(fh.read())
        return h.hexdigest()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idxmap", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--device", default="",
                    help="the device model to plan for (default: the run's "
                         "device_model, else H200)")
    ap.add_argument("--hlo-dir", default=os.path.join(HERE, "hlo"))
    ap.add_argument("--same-kernel", action="store_true",
                    help="count variants that compile to the same kernel as one "
                         "plan (its time the mean of theirs)")
    ap.add_argument("--plans", action="store_true",
                    help="also print every timed plan's estimate and measured time")
    a = ap.parse_args(argv)
    with open(a.json) as f:
        run = json.load(f)
    a.device = a.device or run.get("device_model") or "H200"
    ratios = []
    for r in run["fusions"]:
        if r.get("idxmap_us"):
            e = estimate(a.idxmap, os.path.join(a.hlo_dir, r["name"] + ".hlo"), a.device, None)
            if e is not None:
                ratios.append(e / r["idxmap_us"])
    if ratios:
        ratios.sort()
        near = lambda t: sum(abs(x - 1) <= t for x in ratios)
        print(f"accuracy: estimate / measured over {len(ratios)} fusions: median "
              f"{ratios[len(ratios) // 2]:.3f}, within 10 % on {near(0.10)}, within 20 % "
              f"on {near(0.20)}, range {ratios[0]:.2f}-{ratios[-1]:.2f}")
    within, judged = 0, 0
    print(f"{'fusion':36s} {'plans':>5s} {'pick':34s} {'pick_us':>8s} {'best':34s} "
          f"{'best_us':>8s} {'pick/best':>9s}")
    for r in run["fusions"]:
        timed = {}
        if "idxmap_us" in r:
            timed[""] = r["idxmap_us"]
        for tune, v in (r.get("variants") or {}).items():
            if v.get("median") is not None and v.get("check", {}).get("ok") is not False:
                timed[tune] = v["median"]
        hlo = os.path.join(a.hlo_dir, r["name"] + ".hlo")
        if a.same_kernel:
            # One kernel measured under several spellings is one plan: its
            # time is the mean of its measurements, for the pick and the
            # best alike (the spread between them is the run's noise).
            keys = {t: kernel_key(a.idxmap, hlo, a.device, t) for t in timed}
            groups = {}
            for t, k in keys.items():
                groups.setdefault(k or t, []).append(t)
            merged = {}
            for ts in groups.values():
                ts.sort(key=lambda t: (t != "", t))
                merged[ts[0]] = sum(timed[t] for t in ts) / len(ts)
            timed = merged
        if len(timed) < 2:
            continue
        est = {t: estimate(a.idxmap, hlo, a.device, t) for t in timed}
        if any(e is None for e in est.values()):
            print(f"{r['name']:36s} no estimate for every plan")
            continue
        # min over (estimate, not default): ties keep the default plan.
        pick = min(timed, key=lambda t: (est[t], t != ""))
        best = min(timed, key=lambda t: timed[t])
        ratio = timed[pick] / timed[best]
        judged += 1
        within += ratio <= 1.03
        print(f"{r['name'][:36]:36s} {len(timed):5d} {(pick or 'default')[:34]:34s} "
              f"{timed[pick]:8.2f} {(best or 'default')[:34]:34s} {timed[best]:8.2f} "
              f"{ratio:9.3f}")
        if a.plans:
            for t in sorted(timed, key=lambda t: timed[t]):
                print(f"    {(t or 'default')[:60]:60s} measured {timed[t]:8.2f}  "
                      f"estimate {est[t]:8.2f}")
    print(f"summary: the model's pick within 3 % of the best measured plan on "
          f"{within} of {judged} fusions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
