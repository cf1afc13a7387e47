#!/usr/bin/env bash
# Compile time of `idxmap emit` for every bench fusion (issue 5 target:
# <= 10 ms each). RUNS rounds over all workloads (interleaved, so that a
# noisy period of the machine spreads over all of them); per workload:
#   cold   the first compile in a fresh process (`--time`: parse, analysis,
#          IR, IR pipeline, NVPTX back end; process start-up and file
#          reading excluded): median and minimum over the rounds;
#   warm   the median of 10 more compiles in the same process (`--repeat
#          10`: code paged in, one-time initialization done, as in a
#          compiler that links the library), median over the rounds;
#   process  the whole `idxmap emit` process (start-up, reading, writing
#          the .ptx and .json), median over the rounds.
#   bench/compile_time.sh IDXMAP_BINARY [RUNS]
set -euo pipefail
idxmap=$1; runs=${2:-7}
here=$(cd "$(dirname "$0")" && pwd)
ex=$here/../test/examples # the bench workloads
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ws=(); for f in "$ex"/*.hlo; do ws+=("$(basename "$f" .hlo)"); done
for ((i = 0; i < runs; i++)); do
  for w in "${ws[@]}"; do
    t0=$EPOCHREALTIME
    "$idxmap" emit "$ex/$w.hlo" -o "$tmp/out.ptx" --time 2>"$tmp/err" >/dev/null
    t1=$EPOCHREALTIME
    echo "$(awk '{print ($1 - $2) * 1000}' <<<"$t1 $t0")" >>"$tmp/$w.proc"
    sed -nE 's/^emit: ([0-9.]+) ms.*/\1/p' "$tmp/err" >>"$tmp/$w.cold"
    "$idxmap" emit "$ex/$w.hlo" -o /dev/null --time --repeat 10 2>&1 >/dev/null |
      sed -nE 's/^repeat: .* median ([0-9.]+) ms.*/\1/p' >>"$tmp/$w.warm"
  done
done
med() { sort -g "$1" | sed -n "$(( ($(wc -l <"$1") + 1) / 2 ))p"; }
printf "%-32s %10s %10s %10s %10s\n" workload "cold med" "cold min" "warm med" "process"
for w in "${ws[@]}"; do
  printf "%-32s %10.2f %10.2f %10.2f %10.2f\n" "$w" "$(med "$tmp/$w.cold")" \
    "$(sort -g "$tmp/$w.cold" | head -1)" "$(med "$tmp/$w.warm")" "$(med "$tmp/$w.proc")"
done
