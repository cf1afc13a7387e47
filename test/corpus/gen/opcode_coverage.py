#!/usr/bin/env python3
"""List which of XLA's HloOpcode names the corpus files use.

usage: python3 test/corpus/gen/opcode_coverage.py [FILE.hlo ...]
(default: test/corpus/xla/*.hlo). The opcode list is HLO_OPCODE_LIST of
xla/hlo/ir/hlo_opcode.h (openxla/xla, early 2026: 136 opcodes).
"""
import glob
import os
import re
import sys

OPCODES = """abs acos acosh add add-dependency after-all all-gather all-gather-done
all-gather-start all-reduce all-reduce-done all-reduce-start all-to-all and asin asinh
async-done async-start async-update atan atan2 atanh batch-norm-grad batch-norm-inference
batch-norm-training bitcast bitcast-convert broadcast call cbrt ceil cholesky clamp
count-leading-zeros collective-broadcast collective-permute collective-permute-done
collective-permute-start collective-reduce compare complex concatenate conditional constant
convert convolution copy copy-done copy-start cosine cosh custom-call divide domain dot
dynamic-reshape dynamic-slice dynamic-update-slice erf exponential exponential-minus-one fft
floor fusion gather get-dimension-size get-tuple-element imag infeed iota is-finite log
log-plus-one logistic map maximum minimum mulhi multiply negate not opt-barrier or outfeed pad
parameter partition-id popcnt power ragged-all-to-all ragged-dot real recv recv-done reduce
reduce-precision reduce-scatter reduce-window remainder replica-id reshape reverse rng
rng-bit-generator rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt
scaled-dot scan scatter select select-and-scatter send send-done set-dimension-size
shift-left shift-right-arithmetic shift-right-logical shuffle sign sine sinh slice sort sqrt
stochastic-convert subtract tan tanh topk transpose triangular-solve tuple while xor""".split()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(here, "..", "xla", "*.hlo")))
    used = {}
    word = re.compile(r"(?<![\w.%#-])([a-z][a-z0-9-]*)\(")
    ops = set(OPCODES)
    for f in files:
        text = open(f).read()
        # drop comments and quoted strings
        text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
        text = re.sub(r"//[^\n]*", "", text)
        for m in word.finditer(text):
            w = m.group(1)
            base = w
            for suffix in ("-start", "-update", "-done"):
                if w.endswith(suffix) and w not in ops and w[: -len(suffix)] in ops:
                    base = "async-" + suffix[1:]  # wrapped form counts as async-*
            if base in ops:
                used.setdefault(base, set()).add(os.path.basename(f))
    missing = [o for o in OPCODES if o not in used]
    print(f"{len(used)} of {len(OPCODES)} opcodes used")
    print("missing:", " ".join(missing) if missing else "(none)")
    for o in OPCODES:
        if o in used:
            print(f"  {o}: {' '.join(sorted(used[o]))}")


if __name__ == "__main__":
    main()
