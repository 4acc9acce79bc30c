#!/usr/bin/env python3
"""Issue 17 on a GPU: negative results are cached and a process-wide budget caps tuning.

    python3 test/gpu/negative_e2e.py OUT_DIR [--budget 10s]

Runs child processes (SASSTUNE=1) over add kernels at five block sizes and a small matmul, each
launched twice, and reports wall time, the adapter's per-kernel events and budget summary:

  first   fresh Triton cache T1, schedule cache S: every kernel tuned at its first launch
  second  fresh Triton cache T2, same S: nothing is tuned again (tuned entries hit, negative
          entries are done); the claim: wall time near stock, no launch-tune with run_s > 1 s
  total   fresh Triton cache T3, fresh schedule cache S2, SASSTUNE_TOTAL_BUDGET = 1.5 budgets:
          at most two kernels tuned, the rest skipped (stock, still pending)
  stock   SASSTUNE unset, fresh Triton cache: the reference time

and `python -m sasstune cache list --json` over S.  Writes OUT_DIR/report.json and prints a summary.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = ["add256", "add512", "add1024", "add2048", "add4096", "matmul"]


def child():
    import torch
    import triton
    import triton.language as tl
    import sasstune

    @triton.jit
    def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

    @triton.jit
    def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * sam + rk[None, :] * sak
        pb = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, K, BK):
            acc += tl.dot(tl.load(pa), tl.load(pb))
            pa += BK * sak
            pb += BK * sbk
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))

    t0 = time.perf_counter()
    n = 1 << 20
    x, y, o = torch.randn(n, device="cuda"), torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
    M = N = K = 512
    A, B = torch.randn(M, K, device="cuda").half(), torch.randn(K, N, device="cuda").half()
    C = torch.empty(M, N, device="cuda", dtype=torch.float16)
    for _ in range(2):
        for name in KERNELS:
            if name.startswith("add"):
                blk = int(name[3:])
                add_kernel[(triton.cdiv(n, blk), )](x, y, o, n, BLOCK=blk)
            else:
                matmul_kernel[(M // 64, N // 64)](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0),
                                                  B.stride(1), C.stride(0), C.stride(1), BM=64, BN=64, BK=32)
    torch.cuda.synchronize()
    out = {"wall_s": time.perf_counter() - t0, "enabled": sasstune.enabled()}
    if sasstune.enabled():
        from sasstune import _budget
        out["stats"] = sasstune.stats()
        out["summary"] = _budget.BUDGET.summary()
        out["budget_counts"] = dict(_budget.BUDGET.counts)
    print("NEG-E2E " + json.dumps(out, default=str))


def run(env_extra, log):
    keep = ("SASSTUNE_LIBRARY", "SASSTUNE_WORKER", "SASSTUNE_NVDISASM")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SASSTUNE") or k in keep}
    env.update(env_extra)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    pre = "import sasstune; " if env.get("SASSTUNE") == "1" else ""
    t0 = time.time()
    p = subprocess.run([sys.executable, "-c", pre + "import runpy, sys; sys.argv = ['x', '--child']; "
                        "runpy.run_path(%r, run_name='__main__')" % os.path.abspath(__file__)],
                       env=env, capture_output=True, text=True, timeout=1800)
    log.write("===== %s rc %d (%.1f s)\n%s\n" % (env_extra, p.returncode, time.time() - t0, p.stderr[-20000:]))
    for line in p.stdout.splitlines():
        if line.startswith("NEG-E2E "):
            r = json.loads(line[8:])
            r["process_s"] = time.time() - t0
            r["rc"] = p.returncode
            return r
    return {"error": "rc %d: %s" % (p.returncode, p.stderr[-3000:]), "process_s": time.time() - t0}


def tunes(r):
    return [e for e in r.get("stats", {}).get("events", []) if e["event"] == "launch-tune"]


def main():
    if "--child" in sys.argv:
        return child()
    outdir = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else tempfile.mkdtemp()
    budget = sys.argv[sys.argv.index("--budget") + 1] if "--budget" in sys.argv else "10s"
    secs = int(budget.rstrip("s"))
    os.makedirs(outdir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="neg-e2e-")
    S, S2 = os.path.join(work, "sched"), os.path.join(work, "sched2")
    common = {"SASSTUNE": "1", "SASSTUNE_BUDGET": budget, "SASSTUNE_LOG": "info"}
    rep = {"budget": budget}
    with open(os.path.join(outdir, "children.log"), "w") as log:
        rep["stock"] = run({"TRITON_CACHE_DIR": os.path.join(work, "t0")}, log)
        rep["first"] = run(dict(common, TRITON_CACHE_DIR=os.path.join(work, "t1"), SASSTUNE_CACHE_DIR=S), log)
        rep["second"] = run(dict(common, TRITON_CACHE_DIR=os.path.join(work, "t2"), SASSTUNE_CACHE_DIR=S), log)
        rep["total"] = run(dict(common, TRITON_CACHE_DIR=os.path.join(work, "t3"), SASSTUNE_CACHE_DIR=S2,
                                SASSTUNE_TOTAL_BUDGET=str(int(secs * 1.5))), log)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), SASSTUNE_CACHE_DIR=S)
    p = subprocess.run([sys.executable, "-m", "sasstune", "cache", "list", "--json"], env=env, capture_output=True,
                       text=True)
    rep["cache_list"] = json.loads(p.stdout) if p.returncode == 0 else {"error": p.stderr}
    checks = {
        "first tuned every kernel once": len(tunes(rep["first"])) == len(KERNELS),
        "second tuned nothing": all(e.get("run_s", 0) < 1 for e in tunes(rep["second"])),
        "second within 2x stock + 5 s": rep["second"].get("wall_s", 1e9) < 2 * rep["stock"].get("wall_s", 0) + 5,
        "total: at most 2 tuned, rest skipped":
            rep["total"].get("budget_counts", {}).get("skipped", 0) >= len(KERNELS) - 2,
        "cache list has an entry per kernel (tuned or negative)":
            len(rep["cache_list"].get("entries", [])) == len(KERNELS),
    }
    rep["checks"] = checks
    with open(os.path.join(outdir, "report.json"), "w") as f:
        json.dump(rep, f, indent=1, default=str)
    for role in ("stock", "first", "second", "total"):
        r = rep[role]
        print("%-7s wall %.1f s (process %.1f s) %s" % (role, r.get("wall_s", -1), r["process_s"],
                                                       r.get("summary", r.get("error", ""))[:300]))
    for e in rep["cache_list"].get("entries", []):
        print("  entry %s %s negative=%s %s" % (e["key"][:12], e.get("kernel"), e.get("negative"),
                                                e.get("speedup", e.get("best_ratio"))))
    for k, v in checks.items():
        print("%s: %s" % ("PASS" if v else "FAIL", k))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
