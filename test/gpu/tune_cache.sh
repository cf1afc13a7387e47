#!/bin/sh
# `idxmap tune` on one fusion records the fastest candidate's knobs in a
# tune cache; then `analyze` says the plan comes from the cache, `emit`
# with the cache writes the PTX that `emit --tune KNOBS` writes, and `run`
# with the cache passes the check against the interpreter.
# Usage: tune_cache.sh IDXMAP FILE.hlo FUSION. Exit 77 (skipped) without a
# driver.
set -u
idxmap=$1
hlo=$2
fusion=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "tune_cache: $*" >&2
  exit 1
}

"$idxmap" run "$hlo" > "$dir/run.txt" 2>&1
rc=$?
if [ $rc -eq 3 ]; then
  echo "no CUDA driver or GPU: skipped"
  exit 77
fi
[ $rc -eq 0 ] || fail "idxmap run failed (exit $rc): $(cat "$dir/run.txt")"

"$idxmap" tune "$hlo" --fusion "$fusion" --top 4 --iterations 20 \
  --cache "$dir/tune.json" ||
  fail "idxmap tune failed"
cat "$dir/tune.json"
[ "$(grep -c '"fingerprint"' "$dir/tune.json")" -eq 1 ] ||
  fail "not one entry in the cache"
# The entry's knobs as --tune NAME=VALUE,..., and its device.
knobs=$(sed -n 's/.*"knobs": {\([^}]*\)}.*/\1/p' "$dir/tune.json" |
  sed 's/"//g; s/: /=/g; s/, /,/g')
device=$(sed -n 's/.*"device": "\([^"]*\)".*/\1/p' "$dir/tune.json")
echo "cached knobs: '$knobs' on $device"

"$idxmap" run "$hlo" --tune-cache "$dir/tune.json" ||
  fail "idxmap run --tune-cache failed"
case "$device" in
A100 | H100 | H200) ;;
*)
  echo "device $device is no preset: emit and analyze not compared"
  exit 0
  ;;
esac
"$idxmap" analyze "$hlo" --device "$device" --tune-cache "$dir/tune.json" \
  > "$dir/analyze.txt" || fail "idxmap analyze --tune-cache failed"
grep -q "tuned: from cache $dir/tune.json" "$dir/analyze.txt" ||
  fail "analyze does not name the cache"
[ "$(grep -c "tuned: from cache" "$dir/analyze.txt")" -eq 1 ] ||
  fail "analyze takes more than the one tuned fusion from the cache"
"$idxmap" emit "$hlo" --fusion "$fusion" --device "$device" \
  --tune-cache "$dir/tune.json" -o "$dir/cached.ptx" ||
  fail "idxmap emit --tune-cache failed"
if [ -n "$knobs" ]; then
  "$idxmap" emit "$hlo" --fusion "$fusion" --device "$device" \
    --tune "$knobs" -o "$dir/tuned.ptx"
else
  "$idxmap" emit "$hlo" --fusion "$fusion" --device "$device" \
    -o "$dir/tuned.ptx"
fi || fail "idxmap emit --tune failed"
cmp -s "$dir/cached.ptx" "$dir/tuned.ptx" ||
  fail "emit --tune-cache differs from emit --tune '$knobs'"
echo "ok"
