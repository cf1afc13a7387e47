#!/usr/bin/env bash
# idxmap quickstart: installs what is missing (Debian 12, as root; otherwise
# prints the apt command and exits 2), configures, builds the `idxmap` tool
# and runs it on the built-in examples in tools/examples/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/deps.sh
source "$root/tools/deps.sh"
idxmap_ensure_deps

build=${BUILD_DIR:-$root/build/quickstart}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DIDXMAP_BUILD_TESTS=OFF -DIDXMAP_BUILD_BENCH=OFF >/dev/null
if ! cmake --build "$build" -j "$(idxmap_jobs)" --target idxmap > "$build/build.log" 2>&1; then
  tail -40 "$build/build.log" >&2
  echo "quickstart: build failed (full log: $build/build.log)" >&2
  exit 1
fi
idxmap="$build/tools/idxmap"
ex="$root/tools/examples"

banner() { printf '\n=== %s ===\n' "$*"; }
show() { printf '$ idxmap %s\n' "$*"; "$idxmap" "$@"; }

banner "simplify: each map of $(basename "$ex")/maps.txt, before and after"
"$idxmap" parse --split-input-file "$ex/maps.txt" > "$build/before.txt"
"$idxmap" simplify --split-input-file "$ex/maps.txt" > "$build/after.txt"
paste -d'\n' "$build/before.txt" "$build/after.txt" | awk '
  /^\/\/ -----$/ { next }
  { n++; printf "%s %s\n", (n % 2 ? "before:" : "after: "), $0; if (n % 2 == 0) print "" }'

banner "compose(first, second), unsimplified and simplified"
show compose "$ex/first.txt" "$ex/second.txt"
show compose --simplify "$ex/first.txt" "$ex/second.txt"

banner "domain questions"
show is-empty "$ex/empty_mod.txt"
show bounds "$ex/thread_map.txt" --expr 'bl_x * 512 + th_x * 4 + vec'
show eval "$ex/thread_map.txt" --at th_x=3,bl_x=2,s0=0,vec=1

banner "HLO: analysis of the GELU fusion of XLA's emitter documentation"
show analyze "$root/test/examples/gelu.hlo"

banner "codegen: PTX for it (loop emitter, 16-byte vector accesses), with its launch sidecar"
"$idxmap" emit "$root/test/examples/gelu.hlo" -o "$build/gelu.ptx" --time
grep -E '^\.(version|target)|\.entry|ld\.global|st\.global|tanh' "$build/gelu.ptx" | sort | uniq -c
cat "$build/gelu.json"
if "$idxmap" run "$build/gelu.ptx" > "$build/run.txt" 2>&1; then
  banner "GPU: the kernel against the reference interpreter"
  cat "$build/run.txt"
else
  printf '\n(no GPU here: `idxmap run %s` checks the kernel on a machine with a CUDA driver)\n' "$build/gelu.ptx"
fi
