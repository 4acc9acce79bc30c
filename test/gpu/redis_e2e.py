#!/usr/bin/env python3
"""Issue 18 on a GPU: the fleet tier.  One process tunes Triton kernels with SASSTUNE_REDIS (a
redis-server on loopback, started by test/gpu/calls/redis.sh); a second process with an EMPTY local
schedule cache (and an empty Triton cache, so that it compiles) gets the schedules from Redis.

    python3 test/gpu/redis_e2e.py OUT.json --redis redis://127.0.0.1:PORT/0 [--budget 10s]
                                  [--tune add1024,matmul]

Processes (test/gpu/triton_e2e.py's children): stock (reference outputs), tune (SASSTUNE=1,
SASSTUNE_REDIS, cache1), fleet (SASSTUNE=1, SASSTUNE_REDIS, cache2 empty, Triton cache empty).
Checks per kernel: the tune process published its result to Redis; the fleet process's compile was
a hit whose message says it came from Redis (tuned: status cached; negative: "nothing beat stock");
it loads the very cubin the tune process ended with; outputs equal stock's bit for bit; the entry
now sits in cache2.  Writes OUT.json, OUT.md and OUT.log (the children's stderr, SASSTUNE_LOG=info).
"""
import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import triton_e2e as e2e  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--redis", required=True)
    ap.add_argument("--budget", default="10s")
    ap.add_argument("--tune", default="add1024,matmul")
    a = ap.parse_args()
    t0 = time.perf_counter()
    sys.path.insert(0, e2e.PYDIR)
    from sasstune import _lib
    lib = _lib.find_library()
    names = [x for x in a.tune.split(",") if x]
    work = tempfile.mkdtemp(prefix="sasstune-redis-")
    base = {"SASSTUNE_LIBRARY": lib}
    fleet = dict(base, SASSTUNE="1", SASSTUNE_BUDGET=a.budget, SASSTUNE_LOG="info", SASSTUNE_VARIANTS="off",
                 SASSTUNE_REDIS=a.redis)
    r = {}
    logpath = os.path.splitext(a.out)[0] + ".log"
    with open(logpath, "w") as log:
        r["stock"] = e2e.run_child("stock", names, dict(base, TRITON_CACHE_DIR=os.path.join(work, "t0")), log, 300)
        r["tune"] = e2e.run_child("tune", names, dict(fleet, SASSTUNE_CACHE_DIR=os.path.join(work, "cache1"),
                                                      TRITON_CACHE_DIR=os.path.join(work, "t1")), log, 300)
        r["fleet"] = e2e.run_child("hit", names, dict(fleet, SASSTUNE_CACHE_DIR=os.path.join(work, "cache2"),
                                                      TRITON_CACHE_DIR=os.path.join(work, "t2")), log, 300)
    with open(logpath) as f:
        logtext = f.read()
    checks = []

    def add(name, ok, detail=""):
        checks.append({"check": name, "result": "pass" if ok else "fail", "detail": str(detail)[:600]})

    for role in ("stock", "tune", "fleet"):
        add("%s process ran" % role, "error" not in r[role], r[role].get("error", "%.1f s" % r[role]["wall_s"]))
    if not any("error" in r[x] for x in r):
        add("tune process published to Redis", logtext.count("published to Redis") >= len(names),
            "%d 'published to Redis' lines" % logtext.count("published to Redis"))
        for n in names:
            sk, tk, fk = r["stock"]["kernels"][n], r["tune"]["kernels"][n], r["fleet"]["kernels"][n]
            evs = fk["compile_events"] + fk["launch_events"]
            msgs = ["%s: %s" % (e.get("status"), e.get("message")) for e in evs if e.get("message")]
            hit = [m for m in msgs if "from Redis" in m]
            add("%s: fleet process (empty local cache) got it from Redis" % n, bool(hit), "; ".join(msgs))
            add("%s: fleet process did no tuning" % n, not [e for e in evs if e.get("event") == "launch-tune"],
                [e.get("event") for e in evs])
            add("%s: fleet process loads the cubin the tune process ended with" % n,
                fk["kernel_cubin"] == tk["kernel_cubin"],
                "fleet %s, tune %s, stock %s%s" % (fk["kernel_cubin"][:12], tk["kernel_cubin"][:12],
                                                  sk["kernel_cubin"][:12],
                                                  " (tuned)" if tk["kernel_cubin"] != sk["kernel_cubin"] else
                                                  " (stock: nothing beat it)"))
            ref = sk["digests"][0]
            add("%s: outputs bit-identical (stock, tune, fleet; every launch)" % n,
                all(d == ref for d in tk["digests"] + fk["digests"]), ref[:16])
        c2 = os.path.join(work, "cache2", "v1")
        add("fleet hits were copied into the empty local cache", os.path.isdir(c2) and len(os.listdir(c2)) >= len(names),
            os.listdir(c2) if os.path.isdir(c2) else "no %s" % c2)
    lines = [x for x in logtext.splitlines() if "Redis" in x]
    fails = [c for c in checks if c["result"] == "fail"]
    rep = {"verdict": "fail" if fails else "pass", "budget": a.budget, "kernels": names, "redis": a.redis,
           "wall_s": time.perf_counter() - t0, "checks": checks, "redis_log_lines": lines[:60], "results": r}
    with open(a.out, "w") as f:
        json.dump(rep, f, indent=1, default=str)
    md = ["# Issue 18: fleet tier on the GPU (%s, budget %s, %.0f s)" % (rep["verdict"], a.budget, rep["wall_s"]), ""]
    md += ["| check | result | detail |", "|---|---|---|"]
    md += ["| %s | %s | %s |" % (c["check"], c["result"], c["detail"].replace("|", "/")[:300]) for c in checks]
    md += ["", "Log lines naming Redis:", ""] + ["    " + x[:300] for x in lines[:30]]
    with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
