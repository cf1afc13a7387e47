#!/usr/bin/env bash
# ctest bench.suite: gen.py reproduces bench/suite/hlo/ exactly, and the
# runner's dry run (no CUDA) analyzes and emits every fusion with IDXMAP.
#   bench/suite/check_suite.sh IDXMAP
set -euo pipefail
idxmap=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen.py" --out "$tmp/hlo" 2>/dev/null
if ! diff -r "$here/hlo" "$tmp/hlo"; then
  echo "bench/suite/hlo differs from gen.py's output: run python3 bench/suite/gen.py" >&2
  exit 1
fi
python3 "$here/run_suite.py" --idxmap "$idxmap" --dry-run --work-dir "$tmp/ptx" \
  > "$tmp/plan.txt" 2>&1 || { cat "$tmp/plan.txt"; exit 1; }
tail -1 "$tmp/plan.txt"
