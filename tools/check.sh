#!/usr/bin/env bash
# idxmap test command (CI runs exactly this through .ci/run): installs what is
# missing (Debian 12, as root; otherwise prints the apt command and exits 2),
# configures a fresh build directory, builds everything and runs the whole
# test suite with ctest (unit, golden, fuzz; GPU tests skip without a driver).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/deps.sh
source "$root/tools/deps.sh"
idxmap_ensure_deps

build=${BUILD_DIR:-$root/build/check}
rm -rf "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$(idxmap_jobs)"
cd "$build"
ctest --output-on-failure -j "$(idxmap_jobs)" "$@"
