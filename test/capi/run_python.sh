#!/bin/sh
# Runs capi_test.py on the C API's library $1; exit 77 (skipped) without
# python3.
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
exec python3 "$(dirname "$0")/capi_test.py" "$1"
