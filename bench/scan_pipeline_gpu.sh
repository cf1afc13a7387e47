#!/usr/bin/env bash
# Runs on the GPU machine: the pipelined row scan (IDXMAP_SCAN_PIPELINED,
# docs/KERNEL_PLAN.md "pipelined tiles") on the 1-D cumsum of f32[2^28]
# (issue 18) beside the default kernel and the CUDA probe of the same design
# (bench/scan_pipeline_probe.py, which also times a copy of the same bytes
# and torch.cumsum), then its correctness: s32 and f32 cumsums of 2^24
# against the interpreter and compute-sanitizer memcheck on the golden
# pipelined fusions. Each step is bounded in time, so a kernel that hangs
# costs its step only.
#   bench/scan_pipeline_gpu.sh IDXMAP_BINARY [TILES...]
# TILES are THREADS,ITEMS,STAGES triples for the pipelined kernel (default:
# the plan's own and the probe's best shapes).
set -uo pipefail
idxmap=$1; shift
tiles=("$@")
[ ${#tiles[@]} -eq 0 ] && tiles=(auto 128,32,12 128,64,6 256,32,6 64,64,12)
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
# The HLO JAX writes for jnp.cumsum: bench/scan_peers.py's, of f32 and s32.
python3 - "$here/bench" "$work" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import scan_peers
for name, ty, n in (('cumsum28', 'f32', 1 << 28), ('cumsum24', 'f32', 1 << 24),
                    ('cumsum24s', 's32', 1 << 24)):
    hlo = scan_peers.CUMSUM_HLO.format(name=name, slice='', dims=n,
                                       layout='0', dim=0)
    with open(f'{sys.argv[2]}/{name}.hlo', 'w') as f:
        f.write(hlo.replace('f32', ty))
EOF
nvidia-smi --query-gpu=name,clocks.max.memory --format=csv,noheader ||
  echo "no nvidia-smi"
# Runs a bounded step; prints the lines matching PATTERN, else its last
# line (or that it timed out).
step() { # SECONDS PATTERN COMMAND...
  local secs=$1 pat=$2 out rc; shift 2
  out=$(timeout "$secs" "$@" 2>&1); rc=$?
  [ $rc -eq 124 ] && { echo "timed out after ${secs} s"; return; }
  grep -E "$pat" <<<"$out" || tail -1 <<<"$out"
}
knobs() { # THREADS,ITEMS,STAGES or auto
  [ "$1" = auto ] && { echo IDXMAP_SCAN_PIPELINED=1; return; }
  IFS=, read -r t i s <<<"$1"
  echo "IDXMAP_SCAN_PIPELINED=1,IDXMAP_SCAN_THREADS=$t,IDXMAP_SCAN_ITEMS=$i,IDXMAP_SCAN_STAGES=$s"
}
echo "== 1-D cumsum f32[2^28], CUPTI kernel time"
for t in default "${tiles[@]}"; do
  tune=IDXMAP_SCAN_PIPELINED=0
  [ "$t" != default ] && tune=$(knobs "$t")
  printf '%-12s ' "$t"
  step 120 "time:" "$idxmap" run "$work/cumsum28.hlo" --no-check --bench \
    --reps 30 --timer=cupti --tune "$tune"
done
echo "== the probe (copy, torch.cumsum, the same design in CUDA)"
timeout 200 python3 "$here/bench/scan_pipeline_probe.py" 28 15 4,8,12,8,st \
  4,16,6,8,st 2>&1 | tail -4
echo "== against the interpreter"
for t in "${tiles[@]}"; do
  for f in cumsum24s cumsum24; do
    printf '%-12s %-10s ' "$t" "$f"
    step 120 ": ok|mismatch|left" "$idxmap" run "$work/$f.hlo" \
      --tune "$(knobs "$t")"
  done
done
echo "== compute-sanitizer memcheck"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for s in 2 3; do
  step 300 "ERROR SUMMARY|: ok" "$cs" --tool memcheck "$idxmap" run \
    "$here/test/golden/Inputs/scan-pipelined.hlo" \
    --tune "IDXMAP_SCAN_PIPELINED=1,IDXMAP_SCAN_STAGES=$s" | tr '\n' ' '
  echo
done
rm -rf "$work"
