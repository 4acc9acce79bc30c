#!/usr/bin/env python3
"""End-to-end acceptance of the Triton adapter on a GPU (issue 7).  Needs torch, Triton 3.6 and a
built libsasstune.so + sasstune-worker (found like the adapter finds them: SASSTUNE_LIBRARY, else
build-py/, build/, other build*/ folders; `--build` configures and builds build-py first).

    python3 test/gpu/triton_e2e.py OUT.json [--budget 30s] [--tune add1024,matmul,mm_tma_host] [--build]
                                   [--variants on|off|auto] [--keep DIR]

--variants sets SASSTUNE_VARIANTS for the tune and cached processes (default off, as before the
compile-variants stage existed); the seeded entries use plain keys, so seed and hit run with off.

Kernels: an elementwise add at four block sizes, a pointer matmul (512^3 fp16) and a matmul through
host TMA tensor descriptors (mm_tma_host: triton.tools.tensor_descriptor.TensorDescriptor, 256^3
fp16, 128x128x64 tiles, 128B swizzle), whose first launch is captured with the tensors behind its
descriptors as hidden buffers of the launch spec (docs/triton.md).

Runs separate processes over one Triton cache folder, in this order:

  stock        SASSTUNE unset, `import sasstune`: Triton untouched; reference cubins and outputs
  tune         SASSTUNE=1: each kernel is tuned at its first launch (SASSTUNE_BUDGET), later
               launches use the result; outputs equal stock's bit for bit
  cached       SASSTUNE=1, a new process: no tuning, no capture; the tuned cubin comes from the cache
  stock-again  SASSTUNE unset again: stock cubins from the same Triton cache folder (namespacing)
  seed, hit    a schedule-cache entry is stored for every kernel (the stock cubin with bytes appended,
               which the driver loads and runs unchanged), then a process with an empty Triton cache
               compiles them: compile-time hits, their cost (goal < 5 ms per kernel), and the
               outputs of the cubins that came from the cache

Writes OUT.json, OUT.md (a summary) and OUT.log (every child's stderr).  Exit status 0 when every
check that applies passed; checks that need the plugin to tune are reported "n/a" (with the
plugin's message) when the plugin did not tune the kernel (nothing confirmed in the budget, no
launch spec, no GPU).
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.path.join(ROOT, "python")
ALL_KERNELS = ["add256", "add512", "add1024", "add2048", "matmul", "mm_tma_host"]
TMA = dict(M=256, N=256, K=256, BM=128, BN=128, BK=64)  # fp16, BK * 2 bytes = 128: a 128B swizzle
SEED_MARK = b"\0" * 16 + b"SASSTUNE-E2E-SEEDED-ENTRY"


# =============================================================================================
# child side
# =============================================================================================
def child(role, names):
    want_sasstune_first = role in ("tune", "cached", "hit")
    if want_sasstune_first:  # SASSTUNE=1: sasstune first, it enables itself once triton is imported
        __import__("sasstune")
    import torch
    import triton
    import triton.language as tl
    from triton.compiler.compiler import CompiledKernel
    from triton.tools.tensor_descriptor import TensorDescriptor
    import sasstune
    from sasstune import _settings, _triton

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
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def matmul_tma_host_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                               BK: tl.constexpr):
        # C = A @ B through host TMA descriptors: each a CUtensorMap kernel parameter
        pn_count = tl.cdiv(N, BN)
        pm, pn = tl.program_id(0) // pn_count, tl.program_id(0) % pn_count
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kt in range(0, tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([pm * BM, kt * BK]), b_desc.load([kt * BK, pn * BN]), acc)
        c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))

    g = torch.Generator().manual_seed(1234)
    n = 1 << 20
    x = torch.randn(n, generator=g).cuda()
    y = torch.randn(n, generator=g).cuda()
    o = torch.empty(n, device="cuda")
    M = N = K = 512
    A = torch.randn(M, K, generator=g).half().cuda()
    B = torch.randn(K, N, generator=g).half().cuda()
    C = torch.empty(M, N, device="cuda", dtype=torch.float16)
    TM, TN, TK, BM, BN, BK = (TMA[k] for k in ("M", "N", "K", "BM", "BN", "BK"))
    TA = torch.randn(TM, TK, generator=g).half().cuda()
    TB = torch.randn(TK, TN, generator=g).half().cuda()
    TC = torch.empty(TM, TN, device="cuda", dtype=torch.float16)
    tdescs = (TensorDescriptor.from_tensor(TA, [BM, BK]), TensorDescriptor.from_tensor(TB, [BK, BN]),
              TensorDescriptor.from_tensor(TC, [BM, BN]))

    def job(name):
        if name.startswith("add"):
            blk = int(name[3:])
            return (add_kernel, (lambda meta: (triton.cdiv(n, meta["BLOCK"]), )), (x, y, o, n), {"BLOCK": blk}, o)
        if name == "mm_tma_host":
            return (matmul_tma_host_kernel, (lambda meta: (triton.cdiv(TM, BM) * triton.cdiv(TN, BN), )),
                    tdescs + (TM, TN, TK), {"BM": BM, "BN": BN, "BK": BK, "num_warps": 4, "num_stages": 3}, TC)
        return (matmul_kernel, (lambda meta: (M // 64, N // 64)),
                (A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0), C.stride(1)),
                {"BM": 64, "BN": 64, "BK": 32, "num_warps": 4, "num_stages": 3}, C)

    def digest(t):
        import ctypes
        torch.cuda.synchronize()
        h = t.detach().cpu().contiguous()
        return hashlib.sha256(ctypes.string_at(h.data_ptr(), h.numel() * h.element_size())).hexdigest()

    def new_events(n0):
        return sasstune.stats()["events"][n0:]

    def sha(b):
        return hashlib.sha256(b).hexdigest() if b is not None else None

    from triton import knobs
    out = {"role": role, "pid": os.getpid(), "torch": torch.__version__, "triton": triton.__version__,
           "enabled": sasstune.enabled(),
           "hooks": {"stages": getattr(knobs.runtime.add_stages_inspection_hook, "__name__", None),
                     "post_compile": getattr(knobs.runtime.jit_post_compile_hook, "__name__", None),
                     "manager": getattr(knobs.cache.manager_class, "__name__", None)},
           "device": torch.cuda.get_device_name(), "kernels": {}}
    if role == "seed":
        from sasstune import _lib
        out["library"] = _lib.find_library()
    for name in names:
        fn, grid, args, kw, res = job(name)
        n0 = len(sasstune.stats()["events"])
        t0 = time.perf_counter()
        ck = fn.warmup(*args, grid=grid, **kw)  # compile only (the hook runs on a Triton miss)
        compile_s = time.perf_counter() - t0
        k = {"compile_s": compile_s, "compiled_cubin": sha(ck.kernel), "compile_events": new_events(n0)}
        if role == "seed":
            stock = ck.asm["cubin"]
            _store_seed(out["library"], stock, stock + SEED_MARK, ck.name, _triton.ptxas_version(90),
                        _settings.gpu_facts())
            k["seeded"] = sha(stock + SEED_MARK)
            out["kernels"][name] = k
            continue
        res.zero_()
        n0 = len(sasstune.stats()["events"])
        t0 = time.perf_counter()
        fn[grid](*args, **kw)  # the first launch: captures and tunes when the kernel is armed
        torch.cuda.synchronize()
        k["first_launch_s"] = time.perf_counter() - t0
        k["launch_events"] = new_events(n0)
        digests = [digest(res)]
        for _ in range(3):
            res.zero_()
            fn[grid](*args, **kw)
            digests.append(digest(res))
        k["digests"] = digests
        k["kernel_cubin"] = sha(ck.kernel)  # what this process loaded (after the first launch)
        k["disarmed"] = type(ck) is CompiledKernel
        cub = [p for c, p in ck.metadata_group.items() if c.endswith(".cubin")][0]
        with open(cub, "rb") as f:
            k["file_cubin"] = sha(f.read())
        k["cache_path"] = cub
        jsp = [p for c, p in ck.metadata_group.items() if c.endswith(".json")][0]
        with open(jsp) as f:
            k["state"] = json.load(f).get("sasstune")
        try:
            from triton.testing import do_bench
            k["time_ms"] = do_bench(lambda: fn[grid](*args, **kw), warmup=25, rep=200, return_mode="median")
        except Exception as e:  # timing is informative only
            k["time_ms"] = None
            k["time_error"] = str(e)
        out["kernels"][name] = k
    out["stats"] = sasstune.stats()
    out["gpu_facts"] = _settings.gpu_facts() if role != "stock" else None
    print("E2E-RESULT " + json.dumps(out, default=str))


def _store_seed(lib_path, stock, tuned, kernel, ptxas, facts):
    """Store a schedule-cache entry through the C library (st_cache_store)."""
    import ctypes

    class KeyFields(ctypes.Structure):
        _fields_ = [(f, ctypes.c_char_p) for f in ("cubin_sha256", "kernel", "gpu_name", "compute_capability",
                                                    "driver_version", "ptxas_version", "sasstune_version",
                                                    "variants", "ptxas_options")]  # every member: NULL = absent

    class Record(ctypes.Structure):
        _fields_ = [("schedule_json", ctypes.c_char_p), ("verification_json", ctypes.c_char_p),
                    ("speedup", ctypes.c_double), ("speedup_low", ctypes.c_double),
                    ("speedup_high", ctypes.c_double), ("method", ctypes.c_char_p), ("budget", ctypes.c_char_p),
                    ("date", ctypes.c_char_p), ("tuned_cubin", ctypes.c_char_p), ("tuned_cubin_size", ctypes.c_size_t),
                    ("variant_ptxas_version", ctypes.c_char_p), ("variant_options", ctypes.c_char_p)]

    class Err(ctypes.Structure):
        _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]

    dll = ctypes.CDLL(lib_path)
    e = lambda s: s.encode() if s else None  # noqa: E731
    k = KeyFields(e(hashlib.sha256(stock).hexdigest()), e(kernel), e(facts["gpu_name"]),
                  e(facts["compute_capability"]), e(facts["driver_version"]), e(ptxas), None)
    r = Record(b"{}", b'{"note": "seeded by triton_e2e.py"}', 1.0, 1.0, 1.0, b"e2e-seed", b"0s", None, tuned,
               len(tuned))
    cache, err = ctypes.c_void_p(), Err()
    dll.st_cache_open.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.POINTER(Err)]
    dll.st_cache_store.argtypes = [ctypes.c_void_p, ctypes.POINTER(KeyFields), ctypes.POINTER(Record),
                                   ctypes.POINTER(Err)]
    dll.st_cache_free.argtypes = [ctypes.c_void_p]
    if dll.st_cache_open(ctypes.byref(cache), None, ctypes.byref(err)) != 0:
        raise RuntimeError(err.msg.decode())
    try:
        if dll.st_cache_store(cache, ctypes.byref(k), ctypes.byref(r), ctypes.byref(err)) != 0:
            raise RuntimeError(err.msg.decode())
    finally:
        dll.st_cache_free(cache)


# =============================================================================================
# parent side
# =============================================================================================
def run_child(role, names, env, log, timeout):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SASSTUNE") and not k.startswith("TRITON_")}
    e.update(env)
    e["PYTHONPATH"] = PYDIR + os.pathsep + os.environ.get("PYTHONPATH", "")
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", role, "--kernels", ",".join(names)],
                           env=e, capture_output=True, text=True, timeout=timeout)
        rc, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as x:
        rc, so, se = "timeout", x.stdout or "", x.stderr or ""
        so = so.decode() if isinstance(so, bytes) else so
        se = se.decode() if isinstance(se, bytes) else se
    wall = time.perf_counter() - t0
    env_shown = " ".join("%s=%s" % kv for kv in sorted(env.items()))
    log.write("===== %s (rc %s, %.1f s): %s\n%s\n" % (role, rc, wall, env_shown, se))
    log.flush()
    res = None
    for line in so.splitlines():
        if line.startswith("E2E-RESULT "):
            res = json.loads(line[len("E2E-RESULT "):])
    if res is None:
        res = {"role": role, "error": "rc %s; stderr tail: %s" % (rc, se[-2000:])}
    res["wall_s"] = wall
    res["rc"] = rc
    return res


class Checks:

    def __init__(self):
        self.items = []

    def add(self, name, ok, detail=""):
        self.items.append({"check": name, "result": "pass" if ok is True else "fail" if ok is False else "n/a",
                           "detail": detail})


def events(res, what):
    return [e for e in (res.get("stats") or {}).get("events", []) if e.get("event") == what]


def evaluate(r, tune_names, all_names):
    c = Checks()
    stock, tune, cached, again, hit = r["stock"], r["tune"], r["cached"], r["stock-again"], r["hit"]
    for role in ("stock", "tune", "cached", "stock-again", "seed", "hit"):
        c.add("%s process ran" % role, "error" not in r[role], r[role].get("error", "%.1f s" % r[role]["wall_s"]))
    if any("error" in r[x] for x in r):
        return c
    for res in (stock, again):
        c.add("%s: SASSTUNE unset leaves Triton untouched" % res["role"],
              not res["enabled"] and res["hooks"] == {"stages": None, "post_compile": None, "manager": None},
              json.dumps(res["hooks"]))
    c.add("tune/cached/hit: SASSTUNE=1 enabled the hooks",
          all(x["enabled"] and x["hooks"]["stages"] == "stages_hook" for x in (tune, cached, hit)))
    for name in tune_names:
        ref = stock["kernels"][name]["digests"][0]
        tk, ck, ak = tune["kernels"][name], cached["kernels"][name], again["kernels"][name]
        lt = [e for e in tk["launch_events"] if e.get("event") == "launch-tune"]
        tuned_ev = [e for e in lt if e.get("status") in ("tuned", "cached")]
        c.add("%s: tune process ran the plugin at the first launch" % name, len(lt) >= 1,
              "; ".join("%s: %s" % (e.get("status"), e.get("message")) for e in lt) or "no launch-tune event")
        tuned = bool(tuned_ev) and tuned_ev[-1].get("status") == "tuned"
        if name == "mm_tma_host":  # host TMA descriptors: captured, and the plugin took the spec
            want = 3 * TMA["M"] * TMA["N"] * 2  # A, B and C (K = M = N), the hidden buffers
            # unsupported: the adapter could not capture it; "launch_json:" the plugin's parser refused
            # the spec (UNCHANGED); error: e.g. the runtime refused it against the cubin
            cap = [e for e in lt if e.get("status") not in ("unsupported", "error") and
                   "launch_json:" not in str(e.get("message"))]
            c.add("%s: first launch captured (descriptors' tensors as hidden buffers, spec accepted)" % name,
                  bool(cap) and cap[-1].get("bytes") == want,
                  "; ".join("%s: %s, %s bytes captured (want %d)" % (e.get("status"), e.get("message"),
                                                                      e.get("bytes"), want) for e in lt)
                  or "no launch-tune event")
        if tuned_ev:
            c.add("%s: later launches use the tuned cubin (loaded and in Triton's cache)" % name,
                  tk["kernel_cubin"] == tk["file_cubin"] != stock["kernels"][name]["kernel_cubin"] and tk["disarmed"],
                  "loaded %s, cache file %s, stock %s" % (tk["kernel_cubin"][:12], tk["file_cubin"][:12],
                                                          stock["kernels"][name]["kernel_cubin"][:12]))
        else:
            c.add("%s: later launches use the tuned cubin" % name, None,
                  "the plugin did not tune: %s" % (lt[-1].get("message") if lt else "no event"))
        c.add("%s: tune process outputs equal stock bit for bit (every launch)" % name,
              all(d == ref for d in tk["digests"]), "%d launches" % len(tk["digests"]))
        c.add("%s: cached process did no tuning and no capture" % name,
              not [e for e in ck["compile_events"] + ck["launch_events"] if e["event"] in ("armed", "launch-tune")],
              "events: %s" % [e["event"] for e in ck["compile_events"] + ck["launch_events"]])
        c.add("%s: cached process loads what the tune process ended with" % name,
              ck["kernel_cubin"] == tk["kernel_cubin"] and ck["file_cubin"] == tk["file_cubin"],
              "tuned" if tuned else "(stock: nothing was tuned)")
        c.add("%s: cached process outputs equal stock bit for bit" % name, all(d == ref for d in ck["digests"]))
        c.add("%s: stock process after tuning gets the stock cubin" % name,
              ak["kernel_cubin"] == stock["kernels"][name]["kernel_cubin"] and "/sasstune/" not in ak["cache_path"],
              ak["cache_path"])
        c.add("%s: stock process after tuning: outputs equal" % name, all(d == ref for d in ak["digests"]))
    hit_ev = events(hit, "compile")
    for name in all_names:
        hk = hit["kernels"][name]
        ref = stock["kernels"][name]["digests"][0]
        ev = [e for e in hk["compile_events"] if e["event"] == "compile"]
        c.add("%s: compile-time cache hit applied the stored cubin" % name,
              bool(ev) and ev[-1]["status"] == "cached" and hk["kernel_cubin"] == r["seed"]["kernels"][name]["seeded"],
              ev[-1]["message"] if ev else "no compile event")
        c.add("%s: outputs of the cached cubin equal stock bit for bit" % name, all(d == ref for d in hk["digests"]))
    plugin_ms = [e["plugin_ms"] for e in hit_ev if e.get("status") == "cached"]
    hook_ms = [e["hook_ms"] for e in hit_ev if e.get("status") == "cached"]
    if hook_ms:
        c.add("compile-time overhead on a cache hit under 5 ms per kernel (hook, median)",
              statistics.median(hook_ms) < 5.0,
              "hook median %.2f ms, max %.2f ms; plugin run() median %.2f ms, max %.2f ms; %d kernels" %
              (statistics.median(hook_ms), max(hook_ms), statistics.median(plugin_ms), max(plugin_ms), len(hook_ms)))
    return c


def markdown(report):
    lines = ["# Triton adapter end to end", "",
             "Machine: %s; torch %s; Triton %s; library %s." % (report["results"]["stock"].get("device"),
                                                               report["results"]["stock"].get("torch"),
                                                               report["results"]["stock"].get("triton"),
                                                               report.get("library")),
             "Budget %s; tuned kernels: %s; total %.0f s." % (report["budget"], ", ".join(report["tune"]),
                                                              report["wall_s"]), "",
             "Verdict: **%s**" % report["verdict"], "", "| check | result | detail |", "|---|---|---|"]
    for i in report["checks"]:
        lines.append("| %s | %s | %s |" % (i["check"], i["result"], str(i["detail"]).replace("|", "/")[:300]))
    lines += ["", "| process | kernel | compile s | first launch s | median ms | status (compile / launch) |",
              "|---|---|---|---|---|---|"]
    for role in ("stock", "tune", "cached", "stock-again", "hit"):
        res = report["results"][role]
        for name, k in (res.get("kernels") or {}).items():
            comp = [e for e in k.get("compile_events", []) if e["event"] == "compile"]
            lt = [e for e in k.get("launch_events", []) if e["event"] == "launch-tune"]
            st = "%s / %s" % (comp[-1]["status"] if comp else "-", lt[-1]["status"] if lt else "-")
            tm = k.get("time_ms")
            lines.append("| %s | %s | %.3f | %s | %s | %s |" % (role, name, k.get("compile_s", 0),
                                                               "%.3f" % k["first_launch_s"] if "first_launch_s" in k
                                                               else "-", "%.4f" % tm if tm else "-", st))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="summary JSON path (also writes .md and .log beside it)")
    ap.add_argument("--budget", default="30s")
    ap.add_argument("--tune", default="add1024,matmul,mm_tma_host",
                    help="kernels tuned at first launch (of %s)" % ALL_KERNELS)
    ap.add_argument("--variants", default="off", choices=("on", "off", "auto"),
                    help="SASSTUNE_VARIANTS of the tune and cached processes (seeded entries use plain keys: off)")
    ap.add_argument("--build", action="store_true", help="configure and build build-py first")
    ap.add_argument("--keep", help="keep the caches in this folder")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--kernels", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.kernels.split(","))
        return 0
    if not a.out:
        ap.error("give the summary path")
    t_start = time.perf_counter()
    if a.build:
        b = os.path.join(ROOT, "build-py")
        subprocess.run(["cmake", "-S", ROOT, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DST_TESTS=OFF"], check=True)
        subprocess.run(["cmake", "--build", b, "-j", str(os.cpu_count() or 4), "--target", "sasstune",
                        "sasstune_worker"], check=True)
    sys.path.insert(0, PYDIR)
    from sasstune import _lib
    lib = _lib.find_library()
    tune_names = [x for x in a.tune.split(",") if x]
    work = a.keep or tempfile.mkdtemp(prefix="sasstune-e2e-")
    os.makedirs(work, exist_ok=True)
    tc = os.path.join(work, "triton")
    base = {"SASSTUNE_LIBRARY": lib, "TRITON_CACHE_DIR": tc}
    on = dict(base, SASSTUNE="1", SASSTUNE_BUDGET=a.budget, SASSTUNE_LOG="info",
              SASSTUNE_CACHE_DIR=os.path.join(work, "sasstune"), SASSTUNE_VARIANTS=a.variants)
    seeded = dict(base, SASSTUNE="1", SASSTUNE_LOG="info", SASSTUNE_CACHE_DIR=os.path.join(work, "sasstune-seeded"),
                  SASSTUNE_VARIANTS="off")
    logpath = os.path.splitext(a.out)[0] + ".log"
    r = {}
    with open(logpath, "w") as log:
        r["stock"] = run_child("stock", ALL_KERNELS, base, log, 600)
        r["tune"] = run_child("tune", tune_names, on, log, 900)
        r["cached"] = run_child("cached", tune_names, on, log, 600)
        r["stock-again"] = run_child("stock-again", tune_names, base, log, 600)
        r["seed"] = run_child("seed", ALL_KERNELS, dict(seeded, SASSTUNE_MODE="cache-only",
                                                        TRITON_CACHE_DIR=os.path.join(work, "triton-seed")), log, 600)
        r["hit"] = run_child("hit", ALL_KERNELS, dict(seeded, TRITON_CACHE_DIR=os.path.join(work, "triton-hit")), log,
                             600)
    checks = evaluate(r, tune_names, ALL_KERNELS).items
    fails = [i for i in checks if i["result"] == "fail"]
    na = [i for i in checks if i["result"] == "n/a"]
    verdict = "fail" if fails else "pass" if not na else "pass, except what needs the plugin to tune (n/a)"
    report = {"verdict": verdict, "budget": a.budget, "tune": tune_names, "library": lib, "work": work,
              "wall_s": time.perf_counter() - t_start, "checks": checks, "results": r}
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1, default=str)
    md = markdown(report)
    with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
        f.write(md)
    print(md)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
