"""Writes lit/cache/Inputs/current/v1 and current-variant/v1: entries of key format 2 (docs/cache.md)
for the lit tests.

    python3 lit/cache/Inputs/make_current.py

current: a tuned entry (add_kernel), a negative one (softmax_kernel: nothing beat stock) and a
negative one made under legality rules 0 (layernorm_kernel: stale).  current-variant: entries of the
compile-variants stage (the optional key fields variants and ptxas_options): a tuned one made from a
ptxas 13.5 variant (matmul_kernel) and a negative one (swiglu_kernel: variants chose stock, nothing
beat it).  The key is computed as plugin/cache/cache_key.c does; `sasstune cache list` refuses an
entry whose key is wrong.  The key holds the legality version, so after a bump the keys change:
the script prints each kernel's key; the lit tests name entries by its first 4 hex digits
(negative.test: softmax, add; show-variant.test: matmul, swiglu) and list them in key order.
"""
import hashlib
import re
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
# this tree's ST_LEGALITY_VERSION (include/sasstune/sched.h): current entries carry it
with open(os.path.join(HERE, "..", "..", "..", "include", "sasstune", "sched.h")) as _h:
    LEGALITY = re.search(r"#define ST_LEGALITY_VERSION (\d+)", _h.read()).group(1)
OUT = os.path.join(HERE, "current", "v1")
OUT_VARIANT = os.path.join(HERE, "current-variant", "v1")
VSET, VOPTS = "on:12.8.93,12.9.86,13.5.37", "-lineinfo --gpu-name=sm_90a"
CUBIN = "0123456789abcdef" * 4
KEY_FIELDS = ("cubin_sha256", "kernel", "gpu_name", "compute_capability", "driver_version", "ptxas_version",
              "legality_version", "moves")


def key_of(fields):
    text = "sasstune-cache-key/2\n"
    for name in KEY_FIELDS + ("variants", "ptxas_options"):  # the optional ones only when present
        if name in fields:
            v = fields[name].encode()
            text += "%s=%d:%s\n" % (name, len(v), fields[name])
    return hashlib.sha256(text.encode()).hexdigest()


def entry(kernel, legality, date, method, budget, negative=None, tuned=None, out=OUT, variants=None,
          variant=None):
    f = {"cubin_sha256": CUBIN, "kernel": kernel, "gpu_name": "NVIDIA H200", "compute_capability": "9.0",
         "driver_version": "580.65.06", "ptxas_version": "12.8.93", "sasstune_version": "0.1.0",
         "legality_version": legality, "moves": "swap,ctrl"}
    if variants:
        f.update(variants=variants[0], ptxas_options=variants[1])
    key = key_of(f)
    e = {"schema": 1, "key": key, "fields": f, "provenance": {"date": date, "method": method, "budget": budget}}
    folder = os.path.join(out, key)
    os.makedirs(folder)
    if negative:
        e["negative"] = negative
    else:
        sha = hashlib.sha256(tuned).hexdigest()
        e.update(schedule={"kernels": {kernel: {"swaps": [[12, 13]]}}}, verification={"runs": 5},
                 speedup={"estimate": 1.031, "low": 1.012, "high": 1.05}, tuned_cubin={"sha256": sha, "size": len(tuned)})
        with open(os.path.join(folder, sha + ".cubin"), "wb") as fh:
            fh.write(tuned)
    if variant:
        e["variant"] = variant
    with open(os.path.join(folder, "entry.json"), "w") as fh:
        json.dump(e, fh, indent=1)
        fh.write("\n")
    return key


if __name__ == "__main__":
    shutil.rmtree(os.path.dirname(OUT), ignore_errors=True)
    shutil.rmtree(os.path.dirname(OUT_VARIANT), ignore_errors=True)
    print("add_kernel", entry("add_kernel", LEGALITY, "2026-11-30T10:00:00Z", "ppo", "5m", tuned=bytes(range(64))))
    print("softmax_kernel", entry("softmax_kernel", LEGALITY, "2026-12-01T10:00:00Z", "ppo", "10s",
                negative={"best_ratio": 0.9987, "why": "no schedule passed confirmation (200 pairs, 95 % interval "
                          "above 1.005); input kept"}))
    print("layernorm_kernel", entry("layernorm_kernel", "0", "2026-10-01T10:00:00Z", "ppo", "10s",
                negative={"best_ratio": 1.001, "why": "made under older rules"}))
    print("matmul_kernel", entry("matmul_kernel", LEGALITY, "2026-12-01T11:00:00Z", "ppo", "5m", tuned=bytes(range(1, 65)),
                out=OUT_VARIANT, variants=(VSET, VOPTS),
                variant={"ptxas_version": "13.5.37", "options": "--register-usage-level 0"}))
    print("swiglu_kernel", entry("swiglu_kernel", LEGALITY, "2026-12-01T12:00:00Z", "ppo", "5m", out=OUT_VARIANT, variants=(VSET, VOPTS),
                negative={"best_ratio": 0.9991, "why": "variants chose stock; no schedule passed confirmation"}))
