#!/usr/bin/env bash
# Runs on the GPU machine: the staged scan tiles (IDXMAP_SCAN_PREFETCH=1,
# ScanPrefetch.cpp) checked and timed with prebuilt binaries, in one call.
# Correctness first (kernels against the interpreter: the staged golden
# inputs, 65536 small tiles, the random scans both ways; compute-sanitizer
# memcheck and racecheck), then the 1-D cumsum of f32[2^28] timed with the
# look-back reading its tiles as they start and staged, over tile shapes,
# and the staged kernel beside the peers (bench/scan_peers.py).
#   bench/scan_staged.sh BIN_DIR [REPS]
# BIN_DIR holds idxmap and random_indexed_fusions. Prints one line per
# step, the timings (median us of CUPTI kernel time), and `N passed, N
# failed`.
set -uo pipefail
bin=$1; reps=${2:-30}
here=$(cd "$(dirname "$0")/.." && pwd)
in=$here/test/golden/Inputs
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
pf=IDXMAP_SCAN_PREFETCH=1; small=IDXMAP_SCAN_THREADS=32,IDXMAP_SCAN_ITEMS=4
STEP_NOTES='ERROR SUMMARY|RACECHECK SUMMARY|random .* (run on|fusions)'
. "$here/bench/steps.sh"
step "run scan-staged.hlo" 300 "$bin/idxmap" run "$in/scan-staged.hlo"
step "run scan-staged.hlo staged" 300 "$bin/idxmap" run --tune $pf "$in/scan-staged.hlo"
for f in scan-tiles scan-many-tiles scan-bf16-sum; do
  step "run $f.hlo staged" 300 "$bin/idxmap" run --tune $pf "$in/$f.hlo"
done
step "run scan-many-tiles.hlo staged, tiles of 128" 300 "$bin/idxmap" run --tune $pf,$small "$in/scan-many-tiles.hlo"
step "random scans staged, tiles of 128" 900 "$bin/random_indexed_fusions" --kind scan --count 200 --seed 300 --tune $pf,$small
step "random scans staged, lines up to 2^18" 900 "$bin/random_indexed_fusions" --kind scan --count 100 --seed 400 --max-elements 262144 --tune $pf
step "random scans, look-back span 4, tiles of 128" 900 "$bin/random_indexed_fusions" --kind scan --count 200 --seed 500 --tune IDXMAP_SCAN_LOOKBACK_SPAN=4,$small
step "run scan-many-tiles.hlo span 4, tiles of 128" 300 "$bin/idxmap" run --tune IDXMAP_SCAN_LOOKBACK_SPAN=4,$small "$in/scan-many-tiles.hlo"
step "run scan-tiles.hlo span 4 staged" 300 "$bin/idxmap" run --tune IDXMAP_SCAN_LOOKBACK_SPAN=4,$pf "$in/scan-tiles.hlo"
step "memcheck scan-staged.hlo staged" 600 "$cs" --tool memcheck --error-exitcode 1 "$bin/idxmap" run --tune $pf "$in/scan-staged.hlo"
step "racecheck scan-many-tiles.hlo staged, tiles of 128" 600 "$cs" --tool racecheck --error-exitcode 1 "$bin/idxmap" run --tune $pf,$small "$in/scan-many-tiles.hlo"
# The 1-D cumsum of f32[2^28] as JAX writes it (bench/scan_peers.py).
hlo=$(mktemp --suffix=.hlo)
python3 -c "import sys; sys.path.insert(0, '$here/bench'); import scan_peers as s; print(s.hlo_text('cumsum1d', (1 << 28,), 0, 'sum'))" > "$hlo"
for tune in "" $pf "$pf,IDXMAP_SCAN_THREADS=512,IDXMAP_SCAN_ITEMS=32" \
    "$pf,IDXMAP_SCAN_THREADS=256,IDXMAP_SCAN_ITEMS=32" "$pf,IDXMAP_SCAN_THREADS=128,IDXMAP_SCAN_ITEMS=64" \
    "$pf,IDXMAP_SCAN_THREADS=512,IDXMAP_SCAN_ITEMS=16" IDXMAP_SCAN_LOOKBACK_SPAN=4 \
    "$pf,IDXMAP_SCAN_LOOKBACK_SPAN=2" "$pf,IDXMAP_SCAN_LOOKBACK_SPAN=4"; do
  t=$("$bin/idxmap" run --no-check --bench --reps "$reps" ${tune:+--tune $tune} "$hlo" 2>&1 | grep -o "median [0-9.]* us")
  echo "time cumsum f32[2^28] ${tune:-default}: $t"
done
step "run cumsum f32[2^28] staged" 600 "$bin/idxmap" run --tune $pf "$hlo"
rm -f "$hlo"
# Beside the peers in one interleaved run (SCAN_PEERS=0 skips it).
if [ "${SCAN_PEERS:-1}" != 0 ]; then
  python3 "$here/bench/scan_peers.py" --idxmap "$bin/idxmap" --groups 5 \
    --only cumsum_f32_268435456 --tune $pf
fi
echo "scan_staged: $pass passed, $fail failed"
[ $fail -eq 0 ]
