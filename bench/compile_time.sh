#!/usr/bin/env bash
# Compile time of `idxmap emit` per fusion (issue 16's target: <= 10 ms
# each). RUNS rounds over all inputs (interleaved, so that a noisy period
# of the machine spreads over all of them); per input:
#   cold   the first compile in a fresh process (`--time`: parse, analysis,
#          IR, IR pipeline, NVPTX back end; process start-up and file
#          reading excluded): median and minimum over the rounds;
#   warm   the median of 10 more compiles in the same process (`--repeat
#          10`: code paged in, one-time initialization done, as in a
#          compiler that links the library), median over the rounds;
#   process  the whole `idxmap emit` process (start-up, reading, writing
#          the .ptx and .json), median over the rounds.
# With --per-fusion: each fusion of each module on its own (`idxmap emit
# --fusion F`; the module is still parsed whole each time), as a module of
# many fusions (a JAX dump) is judged against the per-fusion target:
#   bench/compile_time.sh --per-fusion BIN 3 test/corpus/jax/*.opt.hlo
# With --instructions (needs valgrind): instead of times, the instructions
# the whole `idxmap emit` process executes (callgrind), which do not vary
# from run to run: compare two binaries on a noisy machine with it. An
# empty process (a 4x8 row reduction) takes about 9.5 M of them; on the
# 2-core CI VM about 7.5 M instructions take a millisecond.
#   bench/compile_time.sh [--per-fusion] [--instructions] IDXMAP_BINARY [RUNS] [HLO...]
# Without HLO files: the bench workloads (test/examples); the suite is
# `bench/compile_time.sh BIN 3 bench/suite/hlo/*.hlo`.
set -euo pipefail
count=0; perfusion=0
while [ "${1:-}" = --instructions ] || [ "${1:-}" = --per-fusion ]; do
  [ "$1" = --instructions ] && count=1
  [ "$1" = --per-fusion ] && perfusion=1
  shift
done
idxmap=$1; runs=${2:-7}
shift $(($# >= 2 ? 2 : 1))
here=$(cd "$(dirname "$0")" && pwd)
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
  inputs=("$here"/../test/examples/*.hlo) # the bench workloads
fi
# Work items: a file and, with --per-fusion, one of its fusions (its name
# in `idxmap analyze`); ws names each item.
files=(); fusions=(); ws=()
for f in "${inputs[@]}"; do
  if [ $perfusion -eq 1 ]; then
    for fu in $("$idxmap" analyze "$f" 2>/dev/null | sed -nE 's/^fusion ([^ ]+) \(calls.*/\1/p'); do
      files+=("$f"); fusions+=("$fu"); ws+=("$(basename "$f" .hlo):$fu")
    done
  else
    files+=("$f"); fusions+=(""); ws+=("$(basename "$f" .hlo)")
  fi
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ $count -eq 1 ]; then
  command -v valgrind >/dev/null || { echo "compile_time.sh: --instructions needs valgrind" >&2; exit 2; }
  printf "%-40s %14s\n" fusion "instructions"
  for j in "${!files[@]}"; do
    sel=(); [ -z "${fusions[$j]}" ] || sel=(--fusion "${fusions[$j]}")
    n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$idxmap" emit "${files[$j]}" \
      "${sel[@]}" -o "$tmp/out.ptx" 2>&1 | sed -nE 's/.*Collected : ([0-9]+).*/\1/p')
    printf "%-40s %14s\n" "${ws[$j]}" "$n"
  done
  exit 0
fi
for ((i = 0; i < runs; i++)); do
  for j in "${!files[@]}"; do
    f=${files[$j]}; w=${ws[$j]}
    sel=(); [ -z "${fusions[$j]}" ] || sel=(--fusion "${fusions[$j]}")
    t0=$EPOCHREALTIME
    "$idxmap" emit "$f" "${sel[@]}" -o "$tmp/out.ptx" --time 2>"$tmp/err" >/dev/null
    t1=$EPOCHREALTIME
    echo "$(awk '{print ($1 - $2) * 1000}' <<<"$t1 $t0")" >>"$tmp/$w.proc"
    sed -nE 's/^emit: ([0-9.]+) ms.*/\1/p' "$tmp/err" >>"$tmp/$w.cold"
    "$idxmap" emit "$f" "${sel[@]}" -o /dev/null --time --repeat 10 2>&1 >/dev/null |
      sed -nE 's/^repeat: .* median ([0-9.]+) ms.*/\1/p' >>"$tmp/$w.warm"
  done
done
med() { sort -g "$1" | sed -n "$(( ($(wc -l <"$1") + 1) / 2 ))p"; }
printf "%-40s %10s %10s %10s %10s\n" fusion "cold med" "cold min" "warm med" "process"
for w in "${ws[@]}"; do
  printf "%-40s %10.2f %10.2f %10.2f %10.2f\n" "$w" "$(med "$tmp/$w.cold")" \
    "$(sort -g "$tmp/$w.cold" | head -1)" "$(med "$tmp/$w.warm")" "$(med "$tmp/$w.proc")"
done
