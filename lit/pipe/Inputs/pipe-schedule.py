#!/usr/bin/env python3
"""Read `sasstune pipe --json` (stdin) and print a schedule holding the largest candidate of every
loop for kernel argv[1]: {"sasstune_schedule": 1, "kernels": {K: {"pipe": [{"loop", "loads"}]}}}."""
import json
import sys

best = {}
for c in json.load(sys.stdin):
    if c["loop"] not in best or len(c["loads"]) > len(best[c["loop"]]["loads"]):
        best[c["loop"]] = c
entries = [{"loop": c["loop"], "loads": c["loads"]} for c in best.values()]
print(json.dumps({"sasstune_schedule": 1, "kernels": {sys.argv[1]: {"pipe": entries}}}))
