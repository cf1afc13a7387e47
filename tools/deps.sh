#!/usr/bin/env bash
# Shared set-up for tools/quickstart.sh and tools/check.sh: makes sure the
# build dependencies are installed (Debian 12). As root it installs what is
# missing with apt; otherwise it prints the exact apt command and exits 2.
# Source this file; it defines idxmap_ensure_deps ("idxmap_ensure_deps
# --tests" also wants the sanitizer and libFuzzer build's compiler).

IDXMAP_APT_PACKAGES=(
  g++ cmake make pkg-config python3
  llvm-19-dev llvm-19-tools
  libisl-dev libgmp-dev
  libboost-graph-dev nlohmann-json3-dev python3-jsonschema
  libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev libzstd-dev
)
# tools/check.sh's second build (ASan + UBSan, libFuzzer targets) uses clang
# and its sanitizer runtimes (Debian 12's libclang-rt-19-dev since 19.1.7-3).
# (python3-jsonschema above: ctest validates sidecars against their schema.)
# doxygen and graphviz: the ctest docs.doxygen (the public headers' doc
# comments parse with no warning) and the golden test's `dot -Tsvg` of
# `partition --dot-dir` run where they are installed and are skipped
# elsewhere; CI installs them so that both run there.
IDXMAP_TEST_APT_PACKAGES=(clang-19 libclang-rt-19-dev libfuzzer-19-dev
  doxygen graphviz)

idxmap_missing_packages() {
  local p missing=()
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  echo "${missing[@]}"
}

idxmap_ensure_deps() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "note: not a Debian system; assuming dependencies are installed" >&2
    return 0
  fi
  local missing packages=("${IDXMAP_APT_PACKAGES[@]}")
  if [ "${1:-}" = "--tests" ]; then
    packages+=("${IDXMAP_TEST_APT_PACKAGES[@]}")
  fi
  missing=$(idxmap_missing_packages "${packages[@]}")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: missing packages: $missing" >&2
    echo "install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing" >&2
    exit 2
  fi
  echo "installing: $missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >&2
}

idxmap_jobs() {
  nproc 2>/dev/null || echo 2
}
