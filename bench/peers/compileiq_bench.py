#!/usr/bin/env python3
"""sasstune against NVIDIA CompileIQ (its ptxas advanced-controls search) on the bench kernels, at
equal wall-clock tuning time, every result re-measured by `sasstune compare` (docs/benchmarks.md,
"Peers").

    python3 bench/peers/compileiq_bench.py --search-space SS.bin --ciq-ptxas PTXAS13.3 --out DIR
        [--ciq-site SITE] [--kernels a,b] [--budget 15s] [--time-limit 8m] [--pairs 400] ...

CompileIQ and its search space are not part of this project (bench/peers/fetch-deps.sh fetches
them; nothing of them is committed).  Per kernel (bench/kernels.py), each step timed:

  stock      bench/stock.py: the Triton kernel as a user builds it (stock.cubin, stock.ptx, launch.json)
  sasstune   sasstune tune stock.cubin --variants --ptx stock.ptx --budget B (the product default:
             compile variants, then the SASS search on the winner); its wall time is W
  compileiq  CompileIQ's search (MANUAL ask/tell, bench/peers/ciq_offline.py) for the same wall time
             max(B, W): each pool of candidate ACFs is compiled with `ptxas --apply-controls` (the
             PTX of stock, Triton's options; ptxas 13.3: the search spaces' version; one ptxas per
             core), then each candidate in turn is verified bit for bit
             against stock and timed against it in interleaved pairs by sasstune's runtime in one
             session (bench/peers/st_runtime.py); failures and wrong outputs score invalid (counted)
  ptxas13.3  the same PTX through the same ptxas with no ACF (what the ptxas version alone gives)
  ciq+sass   sasstune tune on CompileIQ's best cubin, budget B (no variants)
  compare    sasstune compare stock X --pairs 400 for each X above: speedup = time(stock)/time(X)

--compile-only (no GPU): the stock step compiles only, CompileIQ's objective is compile-only (a
stand-in score, the cubin's size; no verification or timing), no sasstune steps: it proves the
offline path (imports, local search space, ACFs accepted by ptxas) end to end.
Writes DIR/results.json (rewritten after each kernel) and DIR/results.md.
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import json
import math
import os
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, HERE)
sys.path.insert(0, BENCH)
import ciq_offline  # noqa: E402
import kernels as K  # noqa: E402
import run as R  # noqa: E402
import st_runtime  # noqa: E402

SCHEMA = "sasstune-peers-compileiq-1"
BASE_OPTIONS = ["-lineinfo", "--gpu-name=sm_90a"]   # Triton 3.6's options for the stock cubin
MIN_BUDGET_S = 5.0
OVERHEAD_S = 25.0   # first guess of a kernel's cost besides 3 budgets (stock, compares, set-ups)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def compile_ptx(ptxas, ptx, out, acf=None, timeout=60):
    """ptxas BASE [--apply-controls=ACF] -o out ptx -> (ok, reason, seconds)."""
    cmd = [ptxas] + BASE_OPTIONS + (["--apply-controls=" + acf] if acf else []) + [ptx, "-o", out]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "timed out after %.0f s" % timeout, time.time() - t0
    if r.returncode < 0:
        return False, "ptxas crashed (signal %d)" % -r.returncode, time.time() - t0
    if r.returncode != 0 or not os.path.exists(out):
        lines = [ln for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
        return False, (lines[0] if lines else "exit status %d" % r.returncode), time.time() - t0
    return True, "", time.time() - t0


def code_key(cubin):
    """A hash of what runs: every .text.* section (the code) and .nv.info.* section (per-kernel
    attributes: the register count, ...), not the debug sections, which differ between builds
    of the same code."""
    h = hashlib.sha256()
    try:
        shoff, = struct.unpack_from("<Q", cubin, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
        hdrs = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
        strtab = hdrs[shstrndx]
        for name, _, _, _, off, size, _, _, _, _ in hdrs:
            label = cubin[strtab[4] + name:cubin.index(b"\0", strtab[4] + name)]
            if label.startswith((b".text.", b".nv.info.")):
                h.update(label + struct.pack("<Q", size) + cubin[off:off + size])
    except (struct.error, ValueError, IndexError):
        return hashlib.sha256(cubin).hexdigest()[:16]
    return h.hexdigest()[:16]


class Objective:
    """CompileIQ's objective: compile with the ACF, verify against stock, time against stock.
    Scores are time(candidate)/time(stock) (minimised); None is invalid.  Identical cubins are
    scored once.  Counts why candidates failed."""

    def __init__(self, a, d, session, deadline_at):
        self.a, self.d, self.s, self.deadline_at = a, d, session, deadline_at
        self.ptx = os.path.join(d, "stock.ptx")
        self.seen, self.rows, self.compiled = {}, [], {}
        self.counts = {"compiled": 0, "compile_failed": 0, "duplicates": 0, "verified": 0, "wrong": 0,
                       "crashed": 0, "timed_out": 0, "other_failures": 0, "timed": 0}
        self.first_errors = {}

    def prepare(self, acfs):
        """Compile a pool at once, one ptxas per core (the GPU steps stay one at a time).  A
        compile not started by the deadline is not run (its candidate is never evaluated: the
        search stops there); one started is cut at the deadline."""
        def one(acf):
            left = self.deadline_at - time.time()
            if left <= 0:
                return False, "not compiled: the deadline passed", 0.0
            return compile_ptx(self.a.ciq_ptxas, self.ptx, acf + ".cubin", acf, min(self.a.compile_timeout, left + 1))

        with concurrent.futures.ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as ex:
            self.compiled.update(zip(acfs, ex.map(one, acfs)))

    def __call__(self, acf, index):
        out = acf + ".cubin"
        if acf not in self.compiled:
            self.prepare([acf])
        ok, why, secs = self.compiled.pop(acf)
        row = {"index": index, "compile_s": round(secs, 3)}
        self.rows.append(row)
        if not ok:
            return self._fail(row, "compile_failed", why)
        self.counts["compiled"] += 1
        cubin = open(out, "rb").read()
        h = code_key(cubin)
        row["sha"] = h
        if h in self.seen:
            self.counts["duplicates"] += 1
            row["duplicate_of"] = self.seen[h][0]
            return self.seen[h][1]
        score = self._measure(row, cubin)
        self.seen[h] = (index, score)
        return score

    def _measure(self, row, cubin):
        if self.s is None:       # --compile-only: the stand-in score
            row["bytes"] = len(cubin)
            return float(len(cubin))
        ok, why = self.s.verify(cubin)
        if not ok:
            kind = why.split(":", 1)[0]
            key = {"mismatch": "wrong", "crashed": "crashed", "timed_out": "timed_out"}.get(kind, "other_failures")
            return self._fail(row, key, why)
        self.counts["verified"] += 1
        t = self.s.compare(cubin, self.a.ciq_pairs)
        if "error" in t:
            return self._fail(row, "other_failures", t["error"])
        self.counts["timed"] += 1
        row.update(ratio=t["ratio"], ci_lo=t["ci_lo"], ci_hi=t["ci_hi"])
        return t["ratio"]

    def _fail(self, row, key, why):
        self.counts[key] += 1
        row["failed"], row["reason"] = key, why[:300]
        self.first_errors.setdefault(key, why[:300])
        return None


def space_for(a, case):
    """The search space for a kernel: the attention one (CompileIQ's "att" variant, curated for
    attention kernels) for the attention family when given, else the default one."""
    return a.search_space_attention if a.search_space_attention and case.family == "attention" else a.search_space


def run_compileiq(a, ciq, d, budget_s, lib, space):
    """CompileIQ's search on one kernel for budget_s of wall time (its session start included)."""
    t0 = time.time()
    if getattr(ciq, "error", None):
        return {"budget_s": budget_s, "error": ciq.error}
    out = {"budget_s": budget_s, "search_space": os.path.basename(space), "version": ciq.version,
           "pool_size": a.ciq_pool, "pairs_per_candidate": a.ciq_pairs}
    session = None
    if not a.compile_only:
        try:
            session = st_runtime.Session(lib, os.path.join(d, "stock.cubin"), os.path.join(d, "launch.json"))
        except st_runtime.RuntimeError_ as e:
            out["error"] = str(e)
            return out
    work = tempfile.mkdtemp(prefix="ciq-%s-" % os.path.basename(d))
    obj = Objective(a, d, session, t0 + budget_s)
    try:
        res = ciq_offline.search(ciq, space, obj, budget_s - (time.time() - t0), pool=a.ciq_pool,
                                 work_dir=work, log=log if a.verbose else None, prepare=obj.prepare,
                                 max_evals=a.ciq_max_evals)
    except Exception as e:  # CompileIQ's own failure is a finding, recorded
        out["error"] = "CompileIQ: %s: %s" % (type(e).__name__, e)
        res = None
    finally:
        if session:
            out["session"] = session.info()
            session.close()
    out.update(wall_s=time.time() - t0, counts=obj.counts, first_errors=obj.first_errors)
    if res:
        out.update(evaluated=res["evaluated"], pools=res["pools"])
        best = res["best"]
        if best:
            shutil.copy(best["acf_path"], os.path.join(d, "ciq-best.acf"))
            shutil.copy(best["acf_path"] + ".cubin", os.path.join(d, "ciq.cubin"))
            out["best"] = {"index": best["index"], "score": best["score"], "found_at_s": best["t_s"]}
    json.dump(dict(out, candidates=obj.rows), open(os.path.join(d, "ciq.json"), "w"), indent=1)
    shutil.rmtree(work, ignore_errors=True)
    return out


def tune(a, sasstune, d, cubin, out, budget_s, env, name, variants):
    """sasstune tune cubin (with --variants: the product default) -> summary dict."""
    cmd = [sasstune, "tune", cubin, "--launch", os.path.join(d, "launch.json"), "--reward", "gpu",
           "--budget", R.fmt_seconds(budget_s), "-o", out, "--json", "--quiet"]
    if variants:      # the stock cubin: its listing is there already (used when stock is kept)
        if os.path.exists(os.path.join(d, "stock.sass")):
            cmd += ["--listing", os.path.join(d, "stock.sass")]
        cmd += ["--variants", "--ptx", os.path.join(d, "stock.ptx")]
        for p in a.ptxas:
            cmd += ["--ptxas", p]
    s = R.step(cmd, os.path.join(d, "%s.log" % name), budget_s * 2 + 180, env)
    j = R.parse_json_out(s["stdout"])
    t = R.summarize_tune(j, s, budget_s)
    if j is not None:
        t["variant"] = j.get("variant")
    t["ok"] = s["rc"] == 0 and os.path.exists(out)
    return t


def run_kernel(case, a, env, sasstune, ciq, lib, budget_s):
    d = os.path.join(a.out, case.name)
    os.makedirs(d, exist_ok=True)
    res = {"case": case.name, "title": case.title, "shape": case.shape, "budget_s": budget_s}
    cmd = [sys.executable, os.path.join(BENCH, "stock.py"), "--case", case.name, "--dir", d,
           "--pairs", str(a.baseline_pairs)] + (["--compile-only"] if a.compile_only else [])
    s = R.step(cmd, os.path.join(d, "stock.log"), 300, env)
    try:
        stock = json.load(open(os.path.join(d, "stock.json")))
    except (OSError, ValueError):
        stock = {"error": s["stderr_tail"] or "stock step failed (rc %s)" % s["rc"]}
    res["stock"] = {k: stock[k] for k in ("error", "kernel", "device", "versions", "regs", "check", "spec") if k in stock}
    if stock.get("error") or not (stock.get("spec") or {}).get("ok"):
        res["status"] = "stock-failed"
        return res
    if a.compile_only:
        res["compileiq"] = run_compileiq(a, ciq, d, budget_s, None, space_for(a, case))
        res["status"] = "compile-only"
        return res
    return run_gpu_steps(a, d, res, env, sasstune, ciq, lib, budget_s, space_for(a, case))


def run_gpu_steps(a, d, res, env, sasstune, ciq, lib, budget_s, space):
    stock = os.path.join(d, "stock.cubin")
    sst = res["sasstune"] = tune(a, sasstune, d, stock, os.path.join(d, "sasstune.cubin"), budget_s, env,
                                 "sasstune-tune", True)
    ciq_budget = max(budget_s, sst["wall_s"])       # equal wall clock: what sasstune took
    res["compileiq"] = run_compileiq(a, ciq, d, ciq_budget, lib, space)
    ok, why, _ = compile_ptx(a.ciq_ptxas, os.path.join(d, "stock.ptx"), os.path.join(d, "ptxas133.cubin"))
    res["ptxas133_plain"] = {"compiled": ok, "reason": why}
    ciq_cubin = os.path.join(d, "ciq.cubin")
    if os.path.exists(ciq_cubin):
        res["ciq_sass"] = tune(a, sasstune, d, ciq_cubin, os.path.join(d, "ciq-sass.cubin"), budget_s, env,
                               "ciq-sass-tune", False)
    m = res["measured"] = {}
    for name, f in (("compileiq", "ciq.cubin"), ("ptxas133", "ptxas133.cubin"), ("sasstune", "sasstune.cubin")):
        m[name] = R.remeasure(sasstune, a, d, name, os.path.join(d, f), env)
    cs = os.path.join(d, "ciq-sass.cubin")
    if os.path.exists(cs) and open(cs, "rb").read() != open(ciq_cubin, "rb").read():
        m["ciq_sass"] = R.remeasure(sasstune, a, d, "ciq_sass", cs, env)
    elif (res.get("ciq_sass") or {}).get("ok"):     # the SASS search kept CompileIQ's cubin
        m["ciq_sass"] = dict(m["compileiq"], note="the SASS search kept CompileIQ's cubin")
    else:
        m["ciq_sass"] = {"error": (res.get("ciq_sass") or {}).get("error") or "no CompileIQ cubin"}
    res["status"] = "measured"
    return res


# ---------------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------------

COLUMNS = [("compileiq", "CompileIQ best ACF"), ("ptxas133", "ptxas 13.3, no ACF"),
           ("sasstune", "sasstune (variants + SASS search)"), ("ciq_sass", "CompileIQ + sasstune SASS search")]


def cell(m):
    if not m or "error" in m:
        return "n/a (%s)" % (m or {}).get("error", "not run")[:60]
    if m.get("same_as_stock"):
        return "1 (stock)"
    sp, lo, hi = m["speedup"], m["speedup_lo"], m["speedup_hi"]
    txt = "%.4f [%.4f, %.4f]" % (sp, lo, hi)
    return "**%s**" % txt if lo > 1 else ("_%s_" % txt if hi < 1 else txt)


def geomean(vals):
    vals = [v for v in vals if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def header(run):
    att = run.get("search_space_attention")
    lines = ["# CompileIQ vs sasstune (%s)" % run["date"], "",
             "Command: `%s`; CompileIQ %s, search space %s (sha256 %s)%s, CompileIQ's ptxas %s; budget %s s "
             "per kernel for sasstune, CompileIQ the wall time sasstune took (at least the budget); %d pairs "
             "per re-measure, %d per CompileIQ candidate, pool %d." % (
                 run["command"], run["compileiq_version"], run["search_space"], run["search_space_sha256"][:16],
                 "; for attention %s (sha256 %s)" % (att, run["search_space_attention_sha256"][:16]) if att else "",
                 run["ciq_ptxas_version"], run["budget_s"], run["pairs"], run["ciq_pairs"], run["ciq_pool"]), "",
             "Speedup = time(stock) / time(X), `sasstune compare` (95 % interval); bold: faster than stock, "
             "italic: slower.", ""]
    if run.get("compileiq_error"):
        lines += ["**CompileIQ did not run**: %s" % run["compileiq_error"], ""]
    return lines + ["| kernel | stock | " + " | ".join(t for _, t in COLUMNS) +
                    " | CompileIQ candidates (timed / compile failed / wrong / crashed or hung of evaluated) "
                    "| budget / wall s (sasstune, CompileIQ) |",
                    "|---|---|" + "---|" * len(COLUMNS) + "---|---|"]


def row(r):
    m, c, st = r.get("measured") or {}, r.get("compileiq") or {}, r.get("sasstune") or {}
    n = c.get("counts") or {}
    stock_ms = next((x.get("stock_ms") for x in m.values() if isinstance(x, dict) and x.get("stock_ms")), None)
    why = (r.get("stock") or {}).get("error") or r.get("reason")
    return "| %s | %s | %s | %s | %s |" % (
        r["case"], "%.1f µs" % (stock_ms * 1e3) if stock_ms else r.get("status", "") + (": " + why[:80] if why else ""),
        " | ".join(cell(m.get(k)) if m else "n/a" for k, _ in COLUMNS),
        "%s / %s / %s / %s of %s" % (n.get("timed", 0), n.get("compile_failed", 0), n.get("wrong", 0),
                                     n.get("crashed", 0) + n.get("timed_out", 0), c.get("evaluated", 0))
        if n else "n/a", "%.0f / %.0f, %.0f" % (r.get("budget_s") or 0, st.get("wall_s") or 0, c.get("wall_s") or 0))


def markdown(run, results):
    lines = header(run) + [row(r) for r in results] + [""]
    for k, t in COLUMNS:
        g = geomean([(r.get("measured") or {}).get(k, {}).get("speedup") for r in results])
        n = sum(1 for r in results if "speedup" in (r.get("measured") or {}).get(k, {}))
        lines.append("- Geometric mean, %s: %s (%d kernels)" % (t, "%.4f" % g if g else "n/a", n))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--search-space", required=True, help="a CompileIQ ptxas search space .bin (never committed)")
    ap.add_argument("--search-space-attention", default=None,
                    help="CompileIQ's attention search space (\"att\"), for the attention kernel [the default one]")
    ap.add_argument("--ciq-ptxas", required=True, help="the ptxas CompileIQ's ACFs are for (13.3 for the published spaces)")
    ap.add_argument("--ciq-site", default=None, help="a folder with CompileIQ and its dependencies installed (pip --target)")
    ap.add_argument("--kernels", default=None, help="comma-separated (default: all 13)")
    ap.add_argument("--budget", default="15s", help="sasstune's tuning budget per kernel [15s]")
    ap.add_argument("--time-limit", default=None, help="stop starting kernels after this long, shrinking budgets")
    ap.add_argument("--pairs", type=int, default=400, help="pairs per re-measure [400]")
    ap.add_argument("--ciq-pairs", type=int, default=50, help="timed pairs per CompileIQ candidate [50]")
    ap.add_argument("--ciq-pool", type=int, default=16, help="CompileIQ's pool size [16; its default 32]")
    ap.add_argument("--ciq-max-evals", type=int, default=None, help="stop CompileIQ after this many candidates too")
    ap.add_argument("--baseline-pairs", type=int, default=10, help="stock.py's pairs against cuBLAS etc. [10]")
    ap.add_argument("--compile-timeout", type=float, default=60)
    ap.add_argument("--compare-timeout", type=float, default=300)
    ap.add_argument("--ptxas", action="append", default=[], help="extra ptxas for sasstune's variants (repeatable)")
    ap.add_argument("--sasstune", default=None)
    ap.add_argument("--compile-only", action="store_true", help="no GPU: prove the CompileIQ path (stand-in score)")
    ap.add_argument("--verbose", action="store_true", help="log every CompileIQ candidate")
    return ap.parse_args(argv)


def subprocess_env(sasstune):
    """bench/run.py's environment for the steps: the adapter off, a private Triton cache."""
    env = dict(os.environ)
    for k in list(env):
        if k == "SASSTUNE" or k.startswith("SASSTUNE_") and k not in ("SASSTUNE_WORKER", "SASSTUNE_LIBCUDA",
                                                                      "SASSTUNE_NVDISASM"):
            del env[k]
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="peers-triton-cache-")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    nd = os.path.join(os.path.dirname(R.triton_ptxas() or ""), "nvdisasm")
    if "SASSTUNE_NVDISASM" not in env and os.path.exists(nd):
        env["SASSTUNE_NVDISASM"] = nd     # the nvdisasm that matches Triton's ptxas, as bench/run.py
    if sasstune and "SASSTUNE_WORKER" not in env:
        w = os.path.join(os.path.dirname(sasstune), "sasstune-worker")
        if os.path.exists(w):
            env["SASSTUNE_WORKER"] = w
    return env


def tool_version(path):
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError as e:
        return "unusable: %s" % e
    return next((w.lstrip("V") for w in out.split() if w.startswith("V")), out.strip()[-40:])


def kernel_budget(a, budget_s, limit_s, t_start, i, n, per_kernel):
    """This kernel's budget under the time box (None: no time left): sasstune, CompileIQ and the
    SASS search on CompileIQ's cubin each take about one budget, plus the fixed costs."""
    if not limit_s:
        return budget_s
    left = limit_s - (time.time() - t_start)
    est = 1.25 * sum(per_kernel) / len(per_kernel) if per_kernel else OVERHEAD_S
    b = min(budget_s, (left - est * (n - i)) / (3 * (n - i)))
    if b < MIN_BUDGET_S:       # not enough for the rest: this one at the floor if it fits, else none
        b = MIN_BUDGET_S if left >= est + 3 * MIN_BUDGET_S else None
    return b


def main(argv=None):
    a = parse_args(argv)
    t_start = time.time()
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    a.search_space, a.ciq_ptxas = os.path.abspath(a.search_space), os.path.abspath(a.ciq_ptxas)
    if a.search_space_attention:
        a.search_space_attention = os.path.abspath(a.search_space_attention)
    cases = K.select(a.kernels, False)
    budget_s = R.parse_seconds(a.budget)
    limit_s = R.parse_seconds(a.time_limit) if a.time_limit else None
    try:
        ciq = ciq_offline.load(a.ciq_site)
    except Exception as e:    # recorded, and the sasstune columns still run: what stopped CompileIQ is a finding
        ciq = SimpleNamespace(error="importing CompileIQ: %s: %s" % (type(e).__name__, e), version=None,
                              ray_stubbed=None)
        log("peers: " + ciq.error)
    sasstune = None if a.compile_only else R.find_sasstune(a.sasstune)
    lib = st_runtime.load(os.path.join(os.path.dirname(os.path.realpath(sasstune)), "libsasstune.so")) if sasstune else None
    env = subprocess_env(sasstune)
    run = {"schema": SCHEMA, "command": "python3 bench/peers/compileiq_bench.py " + " ".join(
               shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:])),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "git": R.git_state(), "sasstune": sasstune, "compileiq_version": ciq.version,
           "compileiq_error": getattr(ciq, "error", None),
           "ray_stubbed": ciq.ray_stubbed, "search_space": os.path.basename(a.search_space),
           "search_space_sha256": hashlib.sha256(open(a.search_space, "rb").read()).hexdigest(),
           "search_space_attention": a.search_space_attention and os.path.basename(a.search_space_attention),
           "search_space_attention_sha256": a.search_space_attention and hashlib.sha256(
               open(a.search_space_attention, "rb").read()).hexdigest(),
           "ciq_ptxas_version": tool_version(a.ciq_ptxas), "variant_ptxas": a.ptxas, "budget_s": budget_s,
           "time_limit_s": limit_s, "pairs": a.pairs, "ciq_pairs": a.ciq_pairs, "ciq_pool": a.ciq_pool,
           "compile_only": a.compile_only, "kernels": [c.name for c in cases]}
    results, per_kernel = [], []

    def save():
        run["wall_s"] = time.time() - t_start
        json.dump({"run": run, "results": results}, open(os.path.join(a.out, "results.json"), "w"), indent=1)
        open(os.path.join(a.out, "results.md"), "w").write(markdown(run, results))

    log("peers: %d kernels, budget %s; CompileIQ %s (ray %s), search space %s, ptxas %s" % (
        len(cases), R.fmt_seconds(budget_s), ciq.version, {True: "stubbed", False: "real", None: "n/a"}[ciq.ray_stubbed],
        run["search_space"], run["ciq_ptxas_version"]))
    for i, case in enumerate(cases):
        b = kernel_budget(a, budget_s, limit_s, t_start, i, len(cases), per_kernel)
        if b is None:
            results.append({"case": case.name, "status": "skipped", "reason": "time box spent"})
            save()
            continue
        t0 = time.time()
        res = run_kernel(case, a, env, sasstune, ciq, lib, b)
        res["wall_s"] = time.time() - t0
        per_kernel.append(max(0.0, res["wall_s"] - 3 * b))
        results.append(res)
        save()
        m = res.get("measured") or {}
        log("peers: %-14s %s %s (%.0f s)" % (case.name, res.get("status"), "  ".join(
            "%s %s" % (k, cell(m.get(k))) for k, _ in COLUMNS) if m else json.dumps(
            {k: (res.get("compileiq") or {}).get(k) for k in ("evaluated", "counts", "best", "error")}), res["wall_s"]))
    save()
    shutil.rmtree(env["TRITON_CACHE_DIR"], ignore_errors=True)
    print(os.path.join(a.out, "results.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
