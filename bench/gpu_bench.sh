#!/usr/bin/env bash
# Runs on the GPU machine (see bench/README.md): times idxmap's kernels for
# every workload in test/examples/ and the peers (XLA, torch.compile, CUB) in the
# same command, so that all figures come from one run. Writes the raw
# outputs to $OUT (or ./bench-out).
#   bench/gpu_bench.sh IDXMAP_BINARY PEERS_PY [WORKLOAD...]
# (PM_GROUPS: groups per contender of the interleaved step, default 20)
set -uo pipefail
idxmap=$1; peers=$2; shift 2
out=${OUT:-bench-out}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
ex=$here/../test/examples # the bench workloads
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] && workloads=(gelu gelu_64x512x4096)
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv,noheader | tee "$out/device.txt"
# Kernel time from CUPTI activity records, as the peers' (peers.py --profile).
# Inputs are rotated through copies that exceed L2 (50 MB); the workloads
# that are small by nature (they fit in L2, and the peers time them on one
# input) are also timed on one input (--no-rotate), like for like.
small=" exp_transpose_abs rowsum_f32_262144x8 reduce_rows_4x8 "
for w in "${workloads[@]}"; do
  echo "=== idxmap $w" | tee -a "$out/idxmap.txt"
  "$idxmap" run "$ex/$w.hlo" --bench --reps 100 --timer=cupti 2>&1 | tee -a "$out/idxmap.txt"
  if [[ "$small" == *" $w "* ]]; then
    echo "=== idxmap $w --no-rotate" | tee -a "$out/idxmap.txt"
    "$idxmap" run "$ex/$w.hlo" --bench --reps 100 --timer=cupti --no-rotate 2>&1 | tee -a "$out/idxmap.txt"
  fi
done
# Peer names of the workloads (peers.py's workload list).
declare -A peer=(
  [gelu]=gelu_bf16_6x512x4096 [gelu_64x512x4096]=gelu_bf16_64x512x4096
  [exp_transpose_abs]=exp_transpose_abs_f32_20x160x170
  [transpose_f32_8192x8192]=transpose_f32_8192x8192
  [transpose021_bf16_64x1024x1024]=transpose021_bf16_64x1024x1024
  [rowsum_f32_8192x8192]=rowsum_f32_8192x8192 [colsum_f32_8192x8192]=colsum_f32_8192x8192
  [rowmax_f32_1048576x32]=rowmax_f32_1048576x32 [rowsum_f32_262144x8]=rowsum_f32_262144x8
  [fullsum_f32_268435456]=fullsum_f32_268435456 [softmax_f32_4096x4096]=softmax_f32_4096x4096
  [rowsum_bf16_f32acc_16384x4096]=rowsum_bf16_f32acc_16384x4096)
only=""
for w in "${workloads[@]}"; do [ -n "${peer[$w]:-}" ] && only="$only${only:+,}${peer[$w]}"; done
python3 "$peers" --profile --only "$only" --json "$out/peers.json" 2>&1 | tail -40 | tee "$out/peers.txt"
# Like for like, with spreads: each idxmap module and the peers timed
# interleaved in one process, many groups each, by peers.py's own method
# (bench/peer_method.py), when CuPy and torch are importable. Optional: a
# failure here leaves the figures above intact.
if python3 -c "import cupy, torch" 2>/dev/null; then
  pairs=()
  for w in "${workloads[@]}"; do
    [ -n "${peer[$w]:-}" ] || continue
    "$idxmap" emit "$ex/$w.hlo" -o "$out/$w.ptx" && pairs+=("${peer[$w]}=$out/$w.ptx")
  done
  [ ${#pairs[@]} -gt 0 ] && python3 "$here/peer_method.py" --peers "$peers" \
    --groups "${PM_GROUPS:-20}" --json "$out/peer_method.json" "${pairs[@]}" 2>&1 |
    grep -v -i warn | tee "$out/peer_method.txt" || true
fi
