#!/usr/bin/env python3
"""Write a schedule with a random permutation of one kernel, from `sasstune inspect --json`.

    randperm.py INSPECT.json KERNEL SEED [--inverse]

The permutation keeps what sasstune refuses to move: function entries (they stay first in
their function) and instructions stay inside their function; an LEPC with a label stays next
to its CALL.  --inverse prints the inverse permutation (which must restore the file).
"""
import json
import random
import sys

d = json.load(open(sys.argv[1]))
name, seed = sys.argv[2], int(sys.argv[3])
k = next(k for k in d["kernels"] if k["name"] == name)
n = k["instructions"]
starts = sorted({s["value"] // 16 for s in d["symbols"]
                 if s["type"] == 2 and s["shndx"] == k["section"] and s["value"] < 16 * n} | {0})
pinned = set(starts)
for r in k["code_refs"]:
    if r["what"] == "LEPC":
        pinned |= {r["slot"], r["slot"] + 1}
rng = random.Random(seed)
perm = list(range(n))
bounds = starts + [n]
for a, b in zip(bounds, bounds[1:]):
    free = [s for s in range(a, b) if s not in pinned]
    moved = free[:]
    rng.shuffle(moved)
    for s, t in zip(free, moved):
        perm[s] = t
if "--inverse" in sys.argv:
    inv = [0] * n
    for j, p in enumerate(perm):
        inv[p] = j
    perm = inv
print(json.dumps({"sasstune_schedule": 1, "kernels": {name: {"permutation": perm}}}))
