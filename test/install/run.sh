#!/usr/bin/env bash
# Installs idxmap from BUILD into a temporary prefix, then configures, builds
# and runs test/install as a separate project against it.
set -euo pipefail
build=$1; src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
out=$("$tmp/consumer/consumer")
echo "$out"
test "$out" = "(d0, d1) -> (d0, d1), domain: d0 in [0, 15], d1 in [0, 7]"
