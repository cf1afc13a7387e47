#!/bin/sh
# Round-trip check for one corpus file (ctest corpus.<dir>.<file>).
#
# usage: check_roundtrip.sh IDXMAP FILE.hlo
#
# Prints FILE with `idxmap hlo` (canonical form), parses that print back and
# prints it again; the two prints must be identical. Exit 0 when they are,
# 1 with the reason (idxmap's diagnostic or a diff) otherwise, 2 on usage.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 IDXMAP FILE.hlo" >&2
  exit 2
fi
idxmap=$1
file=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corpus-roundtrip.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

if ! "$idxmap" hlo "$file" >"$tmp/first.hlo" 2>"$tmp/first.err"; then
  echo "FAIL: idxmap hlo rejected $file:" >&2
  cat "$tmp/first.err" >&2
  exit 1
fi
if ! "$idxmap" hlo "$tmp/first.hlo" >"$tmp/second.hlo" 2>"$tmp/second.err"; then
  echo "FAIL: idxmap hlo rejected its own print of $file:" >&2
  cat "$tmp/second.err" >&2
  exit 1
fi
if ! cmp -s "$tmp/first.hlo" "$tmp/second.hlo"; then
  echo "FAIL: printing $file is not a fixed point (first print vs. reprint):" >&2
  diff -u "$tmp/first.hlo" "$tmp/second.hlo" | head -n 80 >&2
  exit 1
fi
echo "ok: $file round-trips ($(wc -l <"$tmp/first.hlo") lines)"
exit 0
