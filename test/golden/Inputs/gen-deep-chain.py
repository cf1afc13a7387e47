#!/usr/bin/env python3
"""Writes an HLO module whose loop fusion reads every level at two indices:
x[k] = x[k-1] + reverse(x[k-1]) for k = 1..LEVELS, x[0] the parameter.
Expanded inline, level k is computed 2^(LEVELS-k) times; deep-chain-24.hlo
is `gen-deep-chain.py 24 > deep-chain-24.hlo`.

Usage: gen-deep-chain.py [LEVELS [N]]  (defaults: 24 levels of f32[1024])
"""
import sys

levels = int(sys.argv[1]) if len(sys.argv) > 1 else 24
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
t = f"f32[{n}]"
lines = [f"HloModule deep_chain_{levels}", "", "fused {",
         f"  x0 = {t} parameter(0)"]
for k in range(1, levels + 1):
    lines.append(f"  r{k} = {t} reverse(x{k - 1}), dimensions={{0}}")
    root = "ROOT " if k == levels else ""
    lines.append(f"  {root}x{k} = {t} add(x{k - 1}, r{k})")
lines += ["}", "", "ENTRY e {", f"  p = {t} parameter(0)",
          f"  ROOT f = {t} fusion(p), kind=kLoop, calls=fused", "}"]
print("\n".join(lines))
