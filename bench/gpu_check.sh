#!/usr/bin/env bash
# Runs on the GPU machine: the correctness half of `ctest -L gpu` with
# prebuilt binaries (a portable build: -DIDXMAP_PORTABLE=ON), for a machine
# where the project cannot be built. Every golden and bench input through
# `idxmap run` (kernels against the interpreter), the whole modules of the
# corpus, then the random-fusion
# programs, each step bounded in time. Prints one line per step and a
# closing `N passed, N failed` line.
#   bench/gpu_check.sh BIN_DIR [COUNT]
# BIN_DIR holds idxmap and the random_* programs; COUNT random fusions per
# program (default 100).
set -uo pipefail
bin=$1; count=${2:-100}
here=$(cd "$(dirname "$0")/.." && pwd)
STEP_NOTES='random .* run on|grid-stride'
. "$here/bench/steps.sh"
in=$here/test/golden/Inputs
for f in $here/test/examples/*.hlo "$in"/reduce-init-*.hlo "$in"/reduce-side-*.hlo \
  "$in"/reduce-argmax-*.hlo "$in"/reduce-full-chunked.hlo "$in"/reduce-full-small-chunks.hlo \
  "$in"/reduce-row-max-neg-s32.hlo "$in"/reduce-hint-broadcast.hlo "$in"/reduce-row-long.hlo \
  "$in"/reduce-loop-bf16-long-sum.hlo "$in"/loop-fast-math.hlo "$in"/loop-pad-speculated.hlo \
  "$in"/loop-pad-stride-guard.hlo "$in"/reduce-loop-short.hlo "$in"/loop-reduce-window.hlo \
  "$in"/loop-float-functions.hlo "$in"/loop-log1p.hlo "$in"/loop-reduce-precision.hlo "$in"/rownorm-softmax-*.hlo \
  "$in"/rownorm-layernorm.hlo "$in"/rownorm-mixed.hlo "$in"/rownorm-variadic.hlo \
  "$in"/rownorm-quiet-softmax-short-rows.hlo \
  "$in"/transpose-*.hlo "$in"/scan-*.hlo "$in"/concat-*.hlo "$in"/dus-*.hlo \
  "$in"/scatter-add-rows.hlo "$in"/scatter-combines.hlo "$in"/gather-embedding.hlo \
  "$in"/deep-chain-24.hlo; do
  step "run $(basename "$f")" 120 "$bin/idxmap" run "$f"
done
# Whole optimized modules (JAX's dumps, golden inputs): every fusion the
# emitters take, beside the gemms, loops and collectives they leave.
for f in $here/test/corpus/jax/*.opt.hlo "$in"/whole_module_gemm.hlo "$in"/whole_module_while.hlo; do
  step "run $(basename "$f")" 300 "$bin/idxmap" run "$f"
done
step random_loop_fusions 300 "$bin/random_loop_fusions" --count "$count"
step random_loop_fusions_grid_stride_1 300 "$bin/random_loop_fusions" --count "$count" --seed 7300 --max-elements 65536 --max-grid 1
step random_loop_fusions_grid_stride_5 300 "$bin/random_loop_fusions" --count "$count" --seed 7200 --max-elements 200000 --max-grid 5
step random_transposes 300 "$bin/random_transposes" --count "$count"
step random_reductions 300 "$bin/random_reductions" --count "$count"
step random_row_normalizations 300 "$bin/random_row_normalizations" --count "$count"
step random_loop_fusions_new_ops 300 "$bin/random_loop_fusions" --count "$count" --seed 73000 --new-ops 60
for kind in dus concat gather slices scatter scan; do
  step "random_indexed_fusions $kind" 300 "$bin/random_indexed_fusions" --kind $kind --count "$count"
done
step random_indexed_fusions_concat_over_output 300 "$bin/random_indexed_fusions" --kind concat \
  --count "$count" --seed 47000 --tune IDXMAP_PIECE_OVER_OUTPUT=1
echo "gpu_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
