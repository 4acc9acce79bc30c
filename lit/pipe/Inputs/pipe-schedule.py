#!/usr/bin/env python3
"""Read `sasstune pipe [--form 2] --json` (stdin) and print a schedule holding the largest candidate of
every loop for kernel argv[1]: {"sasstune_schedule": 1, "kernels": {K: {"pipe": [{"loop", "loads"}]}}};
with argv[2] = N (form 2's register limit) each entry also gets "form": 2, "regs": N."""
import json
import sys

best = {}
for c in json.load(sys.stdin):
    if c["loop"] not in best or len(c["loads"]) > len(best[c["loop"]]["loads"]):
        best[c["loop"]] = c
entries = [{"loop": c["loop"], "loads": c["loads"]} for c in best.values()]
if len(sys.argv) > 2:
    for e in entries:
        e.update({"form": 2, "regs": int(sys.argv[2])})
print(json.dumps({"sasstune_schedule": 1, "kernels": {sys.argv[1]: {"pipe": entries}}}))
