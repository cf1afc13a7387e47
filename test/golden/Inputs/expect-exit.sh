#!/bin/sh
# Runs a command and checks its exact exit code (lit's `not` only checks for
# non-zero). Usage in a RUN line:
#   RUN: sh %inputs/expect-exit.sh 2 %idxmap parse --bogus 2>&1 | FileCheck %s
# The command's stdout and stderr pass through unchanged.
want=$1
shift
"$@"
got=$?
if [ "$got" -ne "$want" ]; then
  echo "expect-exit: expected exit code $want, got $got from: $*" >&2
  exit 1
fi
exit 0
