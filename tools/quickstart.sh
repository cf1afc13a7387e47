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
cmake --build "$build" -j "$(idxmap_jobs)" --target idxmap >/dev/null
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
