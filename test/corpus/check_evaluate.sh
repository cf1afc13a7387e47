#!/bin/sh
# Evaluation check for one corpus file (ctest corpus.eval.<dir>.<file>).
#
# usage: check_evaluate.sh IDXMAP FILE.hlo
#
# Runs `idxmap hlo --evaluate FILE` (random arguments, the default budgets).
# Passes when it evaluates (exit 0), or when it stops with a located
# diagnostic naming what the interpreter does not model ("cannot evaluate
# ..."): an op without value semantics on one device (custom-call, rng,
# infeed, ...) or a type without them (c64, f8). Anything else (another
# error, a crash, a budget hit) fails. Prints which of the two happened.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 IDXMAP FILE.hlo" >&2
  exit 2
fi
idxmap=$1
file=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corpus-eval.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

"$idxmap" hlo --evaluate "$file" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ]; then
  echo "evaluated: $file"
  exit 0
fi
if [ $rc -eq 1 ] && grep -q "error: cannot evaluate" "$tmp/err" &&
   [ "$(grep -c 'error:' "$tmp/err")" -eq 1 ]; then
  echo "opaque: $file: $(grep 'error:' "$tmp/err" | sed 's/.*error: //')"
  exit 0
fi
echo "FAIL: idxmap hlo --evaluate $file exited $rc:" >&2
head -n 20 "$tmp/err" >&2
exit 1
