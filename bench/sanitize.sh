#!/usr/bin/env bash
# Runs on the GPU machine: compute-sanitizer memcheck and racecheck over a
# representative subset of the emitted kernels (issue 6: transposes, row
# (a warp per row, a block of 512 per long row), multi-row, column and full
# reductions, chunked full reductions with their combine loop, a full
# reduction's scalar tail (argmax of f32[262147]), multi-block reductions
# folded by ticket (IDXMAP_RED_TICKET_FOLD=1), a gather with two runs per
# thread, side outputs, row normalization; scans (tiles, columns, short rows,
# variadic, a look-back line, the pipelined tiles), concatenates (over the output and by the
# largest operand), in-place dynamic-update-slices and scatters). Small
# inputs, so that the sanitizer's slow-down stays in minutes; the chunked
# full reduction is forced onto small inputs with --tune (512-byte chunks of
# 32 threads).
#   bench/sanitize.sh IDXMAP_BINARY
set -uo pipefail
idxmap=$1
here=$(cd "$(dirname "$0")/.." && pwd)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
in=$here/test/golden/Inputs; ex=$here/test/examples
chunks="IDXMAP_RED_FULL_CHUNK=512,IDXMAP_RED_FULL_CHUNK_THREADS=32"
cases=(
  "$ex/exp_transpose_abs.hlo"
  "$ex/reduce_rows_4x8.hlo"
  "$in/transpose-side-output.hlo"
  "$in/transpose-vector-ragged.hlo"
  "$in/reduce-row-long.hlo"
  "$in/reduce-side-column.hlo"
  "$in/reduce-side-multirow.hlo"
  "$in/reduce-init-full.hlo"
  "$in/reduce-full-small-chunks.hlo --tune $chunks"
  "$in/reduce-argmax-full.hlo"
  "$in/reduce-init-full.hlo --tune IDXMAP_RED_TICKET_FOLD=1"
  "$in/reduce-full-small-chunks.hlo --tune $chunks,IDXMAP_RED_TICKET_FOLD=1"
  "$in/reduce-argmax-full.hlo --tune IDXMAP_RED_TICKET_FOLD=1"
  "$in/reduce-side-column.hlo --tune IDXMAP_RED_TICKET_FOLD=1"
  "$in/gather-embedding.hlo"
  "$in/reduce-row-max-neg-s32.hlo"
  "$in/rownorm-softmax-bf16.hlo"
  "$in/rownorm-layernorm.hlo"
  "$in/rownorm-variadic.hlo"
  "$in/scan-tiles.hlo"
  "$in/scan-column-tiles.hlo"
  "$in/scan-short-rows.hlo"
  "$in/scan-variadic.hlo"
  "$in/scan-long-line.hlo"
  "$in/scan-ragged-line.hlo"
  "$in/scan-pipelined.hlo --tune IDXMAP_SCAN_PIPELINED=1"
  "$in/scan-pipelined.hlo --tune IDXMAP_SCAN_PIPELINED=1,IDXMAP_SCAN_STAGES=2"
  "$in/concat-three-widths.hlo"
  "$in/concat-three-widths.hlo --tune IDXMAP_PIECE_OVER_OUTPUT=0"
  "$in/concat-three-widths.hlo --tune IDXMAP_PIECE_OVER_OUTPUT=0,IDXMAP_PIECE_EVICT_LAST=1"
  "$in/dus-kv-cache.hlo"
  "$in/dus-two-roots.hlo"
  "$in/scatter-add-rows.hlo"
  "$in/scatter-combines.hlo"
)
fail=0
for tool in memcheck racecheck; do
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    out=$(timeout 300 "$cs" --tool "$tool" "$idxmap" run $c 2>&1)
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" <<<"$out" | tail -1)
    ok=$(grep -c ": ok" <<<"$out")
    echo "$tool | $c | $summary | outputs ok: $ok"
    grep -qE "SUMMARY: 0 (errors|hazards)" <<<"$summary" || fail=1
  done
done
exit $fail
