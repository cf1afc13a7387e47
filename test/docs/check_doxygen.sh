#!/bin/sh
# Runs doxygen over the public headers with docs/Doxyfile, the output in
# OUT_DIR, and fails when it warns (a doc comment doxygen cannot parse: a bad
# command, an unknown tag, an unbalanced \code). Exit 77 (the ctest's skip
# code) when doxygen is not installed.
# Usage: check_doxygen.sh SOURCE_DIR OUT_DIR
set -u
src=$1
out=$2
if ! command -v doxygen > /dev/null 2>&1; then
  echo "doxygen is not installed: skipped (apt-get install doxygen)"
  exit 77
fi
rm -rf "$out"
mkdir -p "$out" || exit 1
cd "$src" || exit 1
{
  cat docs/Doxyfile
  echo "OUTPUT_DIRECTORY = $out"
  echo "WARN_LOGFILE = $out/warnings.log"
} | doxygen - > "$out/doxygen.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
  cat "$out/doxygen.log"
  echo "doxygen failed with exit code $rc"
  exit 1
fi
if [ -s "$out/warnings.log" ]; then
  cat "$out/warnings.log"
  echo "doxygen warned: $(wc -l < "$out/warnings.log") lines above"
  exit 1
fi
if [ ! -f "$out/html/index.html" ]; then
  echo "doxygen wrote no $out/html/index.html"
  exit 1
fi
echo "doxygen: no warnings, $(ls "$out/html" | wc -l) files in $out/html"
