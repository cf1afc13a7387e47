#!/usr/bin/env bash
# Outside projects against an installed idxmap (ctest: consumer.*).
#
#   run.sh install BUILD PREFIX     cmake --install BUILD into a fresh PREFIX
#   run.sh cmake NAME PREFIX WORK   configure, build and run test/consumer/NAME
#                                   with find_package(idxmap) from PREFIX
#   run.sh pkg-config PREFIX WORK   build analysis/, codegen/, runtime/ and c/ with
#                                   pkg-config's flags alone, and run them
#   run.sh python PREFIX            test/capi/capi_test.py on PREFIX's library
#
# Each program's output must equal NAME/expected.txt (@VERSION@ replaced), or
# match NAME/expected.regex line by line. CC, CXX, GENERATOR and VERSION come
# from the environment (test/consumer/CMakeLists.txt sets them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1; shift

# Checks the output of program $2 (run with LD_LIBRARY_PATH=$3) against $1's
# expectation.
check() {
  local name=$1 prog=$2 libdir=$3 out
  out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$prog")
  echo "$out"
  if [ -f "$here/$name/expected.regex" ]; then
    if ! grep -Eqx -f "$here/$name/expected.regex" <<<"$out"; then
      echo "error: $name: output does not match $name/expected.regex" >&2
      exit 1
    fi
  else
    local want
    want=$(sed "s/@VERSION@/$VERSION/g" "$here/$name/expected.txt")
    if [ "$out" != "$want" ]; then
      echo "error: $name: expected:" >&2
      echo "$want" >&2
      exit 1
    fi
  fi
}

libdir_of() { # the prefix's library directory (lib or lib64 or lib/<arch>)
  dirname "$(find "$1" -name 'libidxmap_analysis.*' -print -quit)"
}

case $mode in
install)
  build=$1 prefix=$2
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  echo "installed into $prefix"
  ;;
cmake)
  name=$1 prefix=$2 work=$3
  rm -rf "$work"
  cmake -S "$here/$name" -B "$work" -G "$GENERATOR" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" >"$work.log" 2>&1 ||
    { cat "$work.log"; exit 1; }
  cmake --build "$work" >>"$work.log" 2>&1 || { cat "$work.log"; exit 1; }
  check "$name" "$work/consumer" ""
  ;;
pkg-config)
  prefix=$1 work=$2
  rm -rf "$work" && mkdir -p "$work"
  libdir=$(libdir_of "$prefix")
  export PKG_CONFIG_PATH="$libdir/pkgconfig"
  # shellcheck disable=SC2046
  "$CXX" -std=c++17 -o "$work/analysis" "$here/analysis/main.cpp" \
    $(pkg-config --cflags --libs idxmap)
  check analysis "$work/analysis" "$libdir"
  # shellcheck disable=SC2046
  "$CXX" -std=c++17 -o "$work/codegen" "$here/codegen/main.cpp" \
    $(pkg-config --cflags --libs idxmap-codegen)
  check codegen "$work/codegen" "$libdir"
  # shellcheck disable=SC2046
  "$CXX" -std=c++17 -o "$work/runtime" "$here/runtime/main.cpp" \
    $(pkg-config --cflags --libs idxmap-runtime)
  check runtime "$work/runtime" "$libdir"
  # shellcheck disable=SC2046
  "$CC" -o "$work/c" "$here/c/main.c" $(pkg-config --cflags --libs idxmap-c)
  check c "$work/c" "$libdir"
  test "$(pkg-config --modversion idxmap)" = "$VERSION"
  ;;
python)
  prefix=$1
  command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
  libdir=$(libdir_of "$prefix")
  python3 "$here/../capi/capi_test.py" "$libdir/libidxmap-c.so"
  ;;
*)
  echo "usage: run.sh install|cmake|pkg-config|python ..." >&2
  exit 2
  ;;
esac
