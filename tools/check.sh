#!/usr/bin/env bash
# idxmap test command (CI runs exactly this through .ci/run): installs what is
# missing (Debian 12, as root; otherwise prints the apt command and exits 2),
# then runs the whole test suite twice, each time in a fresh build directory:
#   1. build/check (g++, RelWithDebInfo): every ctest test (unit, golden,
#      seeded fuzzers, the C API, outside projects against an install
#      (test/consumer), GPU tests that skip without a driver);
#   2. build/check-sanitize (clang-19, AddressSanitizer + UndefinedBehavior-
#      Sanitizer, IDXMAP_FUZZ=ON): the same tests but the consumer tests (the
#      outside projects are not built with the sanitizers), the C API from
#      Python and the GPU ones
#      (test/CMakeLists.txt leaves them out there), plus the libFuzzer
#      targets: their seed corpora replayed, then IDXMAP_FUZZ_SECONDS
#      (default 60) of fuzzing each.
# Arguments go to both ctest runs (e.g. `tools/check.sh -R golden`).
# Environment: BUILD_DIR, SANITIZE_BUILD_DIR (the two build directories),
# IDXMAP_CHECK_SANITIZE=0 (skip the second run), IDXMAP_FUZZ_SECONDS.
# ccache is used when installed, never required.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/deps.sh
source "$root/tools/deps.sh"
sanitize=${IDXMAP_CHECK_SANITIZE:-1}
if [ "$sanitize" = 1 ]; then
  idxmap_ensure_deps --tests
else
  idxmap_ensure_deps
fi

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
jobs=$(idxmap_jobs)

build=${BUILD_DIR:-$root/build/check}
rm -rf "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}"
cmake --build "$build" -j "$jobs"
(cd "$build" && ctest --output-on-failure -j "$jobs" "$@")

[ "$sanitize" = 1 ] || exit 0
san=${SANITIZE_BUILD_DIR:-$root/build/check-sanitize}
rm -rf "$san"
cmake -S "$root" -B "$san" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DIDXMAP_FUZZ=ON -DIDXMAP_BUILD_BENCH=OFF \
  -DIDXMAP_FUZZ_SECONDS="${IDXMAP_FUZZ_SECONDS:-60}" "${launcher[@]}"
cmake --build "$san" -j "$jobs"
# Every sanitizer report (leaks included) aborts the process and is also
# written to $reports: a test that expects a failure (exit 1, `not`) cannot
# hide one, since any report there fails the run.
reports="$san/sanitizer-reports"
mkdir -p "$reports"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:log_path=$reports/asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$reports/ubsan}
status=0
(cd "$san" && ctest --output-on-failure -j "$jobs" "$@") || status=$?
if [ -n "$(ls -A "$reports")" ]; then
  echo "check.sh: sanitizer reports in $reports:" >&2
  head -n 60 "$reports"/* >&2
  status=1
fi
exit "$status"
