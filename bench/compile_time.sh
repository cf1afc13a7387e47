#!/usr/bin/env bash
# Compile time of `idxmap emit` for every bench fusion (issue 5 target:
# <= 10 ms each). Prints, per workload, the wall and CPU milliseconds of N
# runs (`--time`: parse, analysis, IR, IR pipeline, NVPTX back end; process
# start-up and file reading excluded) and their medians.
#   bench/compile_time.sh IDXMAP_BINARY [RUNS]
set -euo pipefail
idxmap=$1; runs=${2:-7}
here=$(cd "$(dirname "$0")" && pwd)
printf "%-32s %12s %12s  %s\n" workload "median wall" "median CPU" "all runs (wall/CPU ms)"
for f in "$here"/hlo/*.hlo; do
  w=$(basename "$f" .hlo)
  walls=(); cpus=(); all=""
  for ((i = 0; i < runs; i++)); do
    line=$("$idxmap" emit "$f" -o /dev/null --time 2>&1 >/dev/null | grep '^emit:')
    wall=$(sed -E 's/^emit: ([0-9.]+) ms.*/\1/' <<<"$line")
    cpu=$(sed -E 's/.*, ([0-9.]+) ms CPU.*/\1/' <<<"$line")
    walls+=("$wall"); cpus+=("$cpu"); all="$all $wall/$cpu"
  done
  mw=$(printf "%s\n" "${walls[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
  mc=$(printf "%s\n" "${cpus[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
  printf "%-32s %12s %12s  %s\n" "$w" "$mw" "$mc" "$all"
done
