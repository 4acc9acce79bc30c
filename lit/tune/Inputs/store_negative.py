"""Store a negative entry ("nothing beat stock") for a capture, as the pass would key it.

    python3 store_negative.py CACHE_DIR CAPTURE_FOLDER SCHED_H BUDGET

The key is key format 2 (docs/cache.md): the capture's cubin SHA-256 and capture.json's kernel, GPU
facts and ptxas version, with this tree's ST_LEGALITY_VERSION and ST_SCHED_MOVE_FAMILIES read from
SCHED_H (include/sasstune/sched.h); no variant fields (the capture has no PTX).  Prints the key.
"""
import hashlib
import json
import os
import re
import sys

cache, folder, sched_h, budget = sys.argv[1:5]
with open(os.path.join(folder, "capture.json")) as fh:
    meta = json.load(fh)
with open(os.path.join(folder, "cubin"), "rb") as fh:
    cubin_sha = hashlib.sha256(fh.read()).hexdigest()
text = open(sched_h).read()
legality = re.search(r"#define ST_LEGALITY_VERSION (\d+)", text).group(1)
moves = re.search(r'#define ST_SCHED_MOVE_FAMILIES "([^"]*)"', text).group(1)
fields = {"cubin_sha256": cubin_sha, "kernel": meta["kernel"], "gpu_name": meta["gpu_name"],
          "compute_capability": meta["compute_capability"], "driver_version": meta["driver_version"],
          "ptxas_version": meta["ptxas_version"], "legality_version": legality, "moves": moves}
serial = "sasstune-cache-key/2\n" + "".join("%s=%d:%s\n" % (k, len(v.encode()), v) for k, v in fields.items())
key = hashlib.sha256(serial.encode()).hexdigest()
fields["sasstune_version"] = "0.1.0"
entry = {"schema": 1, "key": key, "fields": fields,
         "provenance": {"date": "2026-12-01T10:00:00Z", "method": "ppo", "budget": budget},
         "negative": {"best_ratio": 0.9987, "why": "no schedule passed confirmation"}}
os.makedirs(os.path.join(cache, "v1", key), exist_ok=True)
with open(os.path.join(cache, "v1", key, "entry.json"), "w") as fh:
    json.dump(entry, fh)
print(key)
