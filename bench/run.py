#!/usr/bin/env python3
"""The sasstune benchmark suite (docs/benchmarks.md).

    python3 bench/run.py --out DIR [--budget 60s] [--kernels a,b] [--quick] [--build]

For each kernel (bench/kernels.py), each step in a fresh process:

  stock    bench/stock.py: compile and launch the Triton kernel as a user would, check it against
           a float32 torch reference, dump its cubin, nvdisasm listing and launch spec, and time it
           against its baseline (cuBLAS / torch SDPA, or a device copy of the same bytes) in
           interleaved pairs
  tune     sasstune tune stock.cubin --launch launch.json --reward gpu --budget B -o tuned.cubin --json
           (a result is kept only when the tuner confirmed it: 95 % interval above 1, fresh-input
           verification, independent checker; otherwise tuned.cubin is the stock one)
  compare  sasstune compare stock.cubin tuned.cubin --launch launch.json --pairs 400 --json: the
           speedup, re-measured apart from the tuner, with its bootstrap 95 % interval (for an
           unchanged kernel this is the A/A noise of two loads of the same cubin)
  variants sasstune variants stock.ptx --launch launch.json --cubin stock.cubin -o variant.cubin --json:
           the same PTX through other ptxas binaries and options (docs/variants.md), each verified and
           timed against stock, the best confirmed; when one wins, sasstune tune runs on it too, and
           both are re-measured by compare.  Columns: best variant, best variant + SASS search (the
           product's default), SASS search alone.  --no-variants leaves them out.

Writes DIR/<kernel>/ (artifacts, stock.json, tune.json, compare.json, result.json, logs) and
DIR/results.json (the run and every kernel, rewritten after each one, so a run cut short still
reports).  `python3 bench/report.py DIR` turns it into docs/benchmarks.md and docs/benchmarks.png.

Kernels whose launch the runtime cannot express (e.g. thread-block clusters), or that sasstune
cannot rewrite, are still run stock and listed with the reason.  --quick is the time-boxed
subset (4 kernels, 40 s budgets, about 6 minutes on an H200).  --compile-only needs no GPU:
compile for sm_90, write the specs, validate them with the runtime's parser (and, with
--reward model, tune against the static cost model: unconfirmed predictions).
"""
import argparse
import datetime
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import kernels as K  # noqa: E402

SCHEMA = "sasstune-bench-1"
OVERHEAD_S = 15.0      # first estimate of a kernel's cost besides its tuning budget (stock process,
                       # tune set-up and confirmation, compare), for the time box; replaced by what the
                       # run measures once a kernel has been tuned (H200: 7 to 12 s a kernel)
MIN_BUDGET_S = 10.0    # the least tuning budget worth starting when the time box shrinks a kernel's
                       # budget; a smaller budget asked for with --budget is taken as asked


def parse_seconds(text):
    """'60s', '5m', '1h', '90' -> seconds."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|min|h)?\s*", str(text))
    if not m:
        raise ValueError("bad duration %r (e.g. 60s, 5m)" % text)
    return float(m.group(1)) * {None: 1, "s": 1, "ms": 1e-3, "m": 60, "min": 60, "h": 3600}[m.group(2)]


def fmt_seconds(s):
    return "%ds" % max(1, int(round(s)))


# ---------------------------------------------------------------------------------------------
# finding sasstune
# ---------------------------------------------------------------------------------------------

def _sanitized(build_dir):
    try:
        return "ST_SANITIZE:BOOL=ON" in open(os.path.join(build_dir, "CMakeCache.txt")).read()
    except OSError:
        return False


def find_sasstune(explicit=None):
    """The sasstune command: --sasstune, $SASSTUNE_BIN, else an unsanitised build in the tree
    (build-gpu first: what scripts/test-gpu.sh and bench/build.sh make; one whose `tune` works
    before one whose does not), else PATH."""
    if explicit:
        return os.path.abspath(explicit)
    if os.environ.get("SASSTUNE_BIN"):
        return os.path.abspath(os.environ["SASSTUNE_BIN"])
    dirs = [os.path.join(ROOT, "build-gpu")] + sorted(
        os.path.join(ROOT, d) for d in os.listdir(ROOT) if d.startswith("build") and d != "build-gpu")
    found = []
    for d in dirs:
        for bd in (d, os.path.join(d, "test")):
            p = os.path.join(bd, "sasstune")
            if os.path.isfile(p) and os.access(p, os.X_OK) and not _sanitized(bd):
                found.append(p)
    for p in found:
        if probe_tune(p)[0]:
            return p
    return found[0] if found else shutil.which("sasstune")


def probe_tune(sasstune):
    """(available, reason): whether this sasstune has a working `tune` command."""
    if not sasstune:
        return False, "no sasstune command found (build it: bash bench/build.sh, or pass --sasstune)"
    try:
        r = subprocess.run([sasstune, "tune", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, "%s tune --help: %s" % (sasstune, e)
    text = (r.stdout + r.stderr).strip()
    if r.returncode == 0 and "--reward" in text:
        return True, ""
    return False, "sasstune tune is not available in %s: %s" % (sasstune, text.splitlines()[-1] if text else "rc %d" % r.returncode)


def git_state():
    def git(*a):
        try:
            return subprocess.run(["git", "-C", ROOT] + list(a), capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    return {"commit": git("rev-parse", "--short", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


# ---------------------------------------------------------------------------------------------
# running the steps
# ---------------------------------------------------------------------------------------------

def step(cmd, log_path, timeout, env=None):
    """Run cmd; stdout and stderr go to log_path (and stdout is returned).  -> dict."""
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
        rc, out, err, timed_out = r.returncode, r.stdout, r.stderr, False
    except subprocess.TimeoutExpired as e:
        rc, timed_out = None, True
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    wall = time.time() - t0
    with open(log_path, "w") as f:
        f.write("$ %s\n# rc %s, %.1f s%s\n--- stdout\n%s\n--- stderr\n%s\n" % (
            " ".join(shlex.quote(c) for c in cmd), rc, wall, " (timed out)" if timed_out else "", out, err))
    last = [ln for ln in err.strip().splitlines() if ln.strip()]
    return {"cmd": cmd, "rc": rc, "timed_out": timed_out, "wall_s": wall, "stdout": out,
            "stderr_tail": "\n".join(last[-5:])}


def parse_json_out(text):
    """The JSON object a command printed (the last one, if there are several)."""
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    for start in [m.start() for m in re.finditer(r"^\{", text, re.M)][::-1]:
        try:
            return json.loads(text[start:])
        except ValueError:
            continue
    return None


def first(obj, *names, default=None):
    """The first of names present in a (possibly nested) dict."""
    if isinstance(obj, dict):
        for n in names:
            if n in obj and obj[n] is not None:
                return obj[n]
        for v in obj.values():
            if isinstance(v, dict):
                r = first(v, *names)
                if r is not None:
                    return r
    return default


def summarize_tune(j, s, budget_s):
    """The fields the report needs from `sasstune tune --json` (docs/tune.md), tolerant of names."""
    t = {"ran": True, "rc": s["rc"], "timed_out": s["timed_out"], "wall_s": s["wall_s"], "budget_s": budget_s}
    if j is None:
        t["error"] = s["stderr_tail"] or ("timed out" if s["timed_out"] else "no JSON output (rc %s)" % s["rc"])
        return t
    t.update(method=first(j, "method"), reward=first(j, "reward"), confirmed=bool(first(j, "confirmed", default=False)),
             improved=bool(first(j, "improved", default=False)), ratio=first(j, "ratio", "speedup"),
             ratio_lo=first(j, "ratio_lo", "lo"), ratio_hi=first(j, "ratio_hi", "hi"), pairs=first(j, "pairs"),
             model_ratio=first(j, "model_ratio"), steps=first(j, "steps"), evals=first(j, "evals"),
             rejected=first(j, "rejected"), seconds=first(j, "seconds"), steps_per_s=first(j, "steps_per_s"),
             device=first(j, "device"), message=first(j, "message"), aim=first(j, "aim"), aim_ms=first(j, "aim_ms"),
             search_ms_per_step=first(j, "search_ms_per_step"), eval_ms=first(j, "eval_ms"),
             policy_seconds=first(j, "policy_seconds"))
    if t["steps_per_s"] is None and t["steps"] and t["seconds"]:
        t["steps_per_s"] = t["steps"] / t["seconds"]
    if s["rc"] not in (0, None) and not t.get("message"):
        t["error"] = s["stderr_tail"]
    return t


def inspect_kernel(sasstune, cubin, kernel):
    """(rewritable, why, instructions) from `sasstune inspect --json`: rewritable is True, False
    (why says why) or None (inspect could not say)."""
    try:
        r = subprocess.run([sasstune, "inspect", cubin, "--json"], capture_output=True, text=True, timeout=60)
        j = json.loads(r.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        return None, "sasstune inspect: %s" % e, None
    for k in j.get("kernels", []):
        if k.get("name") == kernel:
            n = k.get("instructions")
            if k.get("rewritable", True):
                return True, None, n
            why = k.get("not_rewritable_because") or "not rewritable"
            return False, why.split(": ", 1)[-1] if why.startswith(cubin) else why, n
    return None, "kernel %s not found by sasstune inspect" % kernel, None


def run_case(case, a, out_dir, sasstune, tune_ok, tune_why, budget_s, env):
    d = os.path.join(out_dir, case.name)
    os.makedirs(d, exist_ok=True)
    for f in ("stock.json", "tune.json", "compare.json", "result.json", "tuned.cubin"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    res = {"case": case.name, "title": case.title, "shape": case.shape, "family": case.family,
           "flops": case.flops, "bytes": case.bytes, "quick": case.quick}
    # 1. stock
    cmd = [sys.executable, a.stock_script, "--case", case.name, "--dir", d,
           "--pairs", str(a.baseline_pairs)] + (["--compile-only"] if a.compile_only else [])
    s = step(cmd, os.path.join(d, "stock.log"), a.stock_timeout, env)
    try:
        stock = json.load(open(os.path.join(d, "stock.json")))
    except (OSError, ValueError):
        stock = {"error": s["stderr_tail"] or ("timed out" if s["timed_out"] else "stock step failed (rc %s)" % s["rc"])}
    stock.pop("traceback", None)
    stock["wall_s"] = s["wall_s"]
    res["stock"] = stock
    if stock.get("error"):
        res["status"] = "stock-failed"
        res["reason"] = stock["error"]
        return res
    spec = stock.get("spec") or {}
    cubin, launch = os.path.join(d, "stock.cubin"), os.path.join(d, "launch.json")
    if sasstune:
        ok, why, n = inspect_kernel(sasstune, cubin, stock.get("kernel"))
        res["rewritable"], res["instructions"] = ok, n
        if why:
            res["rewritable_why"] = why
    if not spec.get("ok"):
        res["status"] = "not-launchable"
        res["reason"] = "the runtime cannot launch it yet: " + spec.get("reason", "no launch spec")
        return res
    if sasstune and a.compile_only:
        # the runtime's own parser must take the spec (without a GPU it stops at the driver, after
        # parsing; on the GPU, tune reports a bad spec itself)
        v = step([sasstune, "run", cubin, "--launch", launch, "--pairs", "1"], os.path.join(d, "spec-check.log"), 120, env)
        bad = v["rc"] != 0 and "driver" not in v["stderr_tail"]
        if bad:
            res["status"] = "not-launchable"
            res["reason"] = "the runtime refused the launch spec: " + v["stderr_tail"]
            return res
    if sasstune:
        if ok is False:
            res["status"] = "not-rewritable"
            res["reason"] = "sasstune cannot rewrite it yet: " + why
            return res
    if a.compile_only and a.reward != "model":
        res["status"] = "compiled"
        return res
    # 2. tune
    tuned = os.path.join(d, "tuned.cubin")
    if not tune_ok:
        res["tune"] = {"ran": False, "error": tune_why}
        res["status"] = "tune-unavailable"
        res["reason"] = tune_why
    elif budget_s < min(MIN_BUDGET_S, a.requested_budget_s):
        res["tune"] = {"ran": False, "error": "skipped: the run's time box is spent"}
        res["status"] = "skipped"
        res["reason"] = "the run's time box left no tuning budget (stock measured)"
        return res
    else:
        cmd = [sasstune, "tune", cubin, "--launch", launch, "--reward", a.reward, "--budget", fmt_seconds(budget_s),
               "-o", tuned, "--schedule-out", os.path.join(d, "tuned.schedule.json"), "--json", "--quiet"]
        if os.path.exists(os.path.join(d, "stock.sass")):
            cmd += ["--listing", os.path.join(d, "stock.sass")]
        if a.method:
            cmd += ["--method", a.method]
        if a.aim:
            cmd += ["--aim", a.aim]
        for x in a.tune_arg:
            cmd += shlex.split(x)
        s = step(cmd, os.path.join(d, "tune.log"), budget_s * 2 + a.tune_slack, env)
        j = parse_json_out(s["stdout"])
        if j is not None:
            json.dump(j, open(os.path.join(d, "tune.json"), "w"), indent=1)
        res["tune"] = summarize_tune(j, s, budget_s)
        if not res["tune"].get("method"):
            res["tune"]["method"] = a.method or "default"
        if s["rc"] != 0 or j is None:
            res["status"] = "tune-failed"
            res["reason"] = "sasstune tune %s: %s" % ("timed out" if s["timed_out"] else "exited with %s" % s["rc"],
                                                     res["tune"].get("error") or res["tune"].get("message") or "")
    if a.compile_only:
        res.setdefault("status", "model-only" if res.get("tune", {}).get("ran") else res.get("status", "compiled"))
        return res
    # 3. compare (stock vs the tuner's output; stock vs stock when there is none: the A/A band)
    have_tuned = os.path.exists(tuned) and res.get("tune", {}).get("rc") == 0
    same = have_tuned and open(tuned, "rb").read() == open(cubin, "rb").read()
    other = tuned if have_tuned else cubin
    s = step([sasstune, "compare", cubin, other, "--launch", launch, "--pairs", str(a.pairs), "--json"],
             os.path.join(d, "compare.log"), a.compare_timeout, env) if sasstune else None
    j = parse_json_out(s["stdout"]) if s else None
    if j is not None and "ratio" in j:
        json.dump(j, open(os.path.join(d, "compare.json"), "w"), indent=1)
        r, lo, hi = j["ratio"], j["ci_lo"], j["ci_hi"]
        res["compare"] = {"what": "tuned" if have_tuned and not same else "a/a", "ratio": r, "ci_lo": lo, "ci_hi": hi,
                          "pairs": j.get("pairs"), "reps": j.get("reps"), "stock_ms": j.get("a_ms"),
                          "tuned_ms": j.get("b_ms"), "device": j.get("device"), "verified": j.get("verified"),
                          "deterministic": j.get("deterministic"), "wall_s": s["wall_s"]}
        # speedup = time(stock) / time(tuned); its interval from the ratio's
        res["speedup"], res["speedup_lo"], res["speedup_hi"] = 1.0 / r, 1.0 / hi, 1.0 / lo
        if have_tuned and not same:
            res.setdefault("status", "tuned")
        else:
            res.setdefault("status", "unchanged")
    else:
        res["compare"] = {"error": (s["stderr_tail"] if s else "no sasstune command") or "no result"}
        res.setdefault("status", "compare-failed")
        res.setdefault("reason", res["compare"]["error"])
    if a.variants and sasstune and tune_ok and res.get("status") in ("tuned", "unchanged"):
        res["variants"] = run_variants(a, d, res, sasstune, budget_s, env)
    return res


def compare_pair(sasstune, a, d, name, cubin, other, launch, env):
    """`sasstune compare stock OTHER`: {speedup, lo, hi, ...} or {error}."""
    s = step([sasstune, "compare", cubin, other, "--launch", launch, "--pairs", str(a.pairs), "--json"],
             os.path.join(d, "compare-%s.log" % name), a.compare_timeout, env)
    j = parse_json_out(s["stdout"])
    if j is None or "ratio" not in j:
        return {"error": s["stderr_tail"] or "no result"}
    json.dump(j, open(os.path.join(d, "compare-%s.json" % name), "w"), indent=1)
    return {"speedup": 1.0 / j["ratio"], "speedup_lo": 1.0 / j["ci_hi"], "speedup_hi": 1.0 / j["ci_lo"],
            "ms": j.get("b_ms"), "stock_ms": j.get("a_ms"), "pairs": j.get("pairs"), "wall_s": s["wall_s"]}


def remeasure(sasstune, a, d, name, other, env):
    """Speedup of d/OTHER over d/stock.cubin by `sasstune compare` (compare_pair); a cubin identical to
    stock is not measured ({speedup 1, same_as_stock}); a missing one is {error}."""
    stock = os.path.join(d, "stock.cubin")
    if not os.path.exists(other):
        return {"error": "no cubin"}
    if open(other, "rb").read() == open(stock, "rb").read():
        return {"speedup": 1.0, "speedup_lo": 1.0, "speedup_hi": 1.0, "same_as_stock": True}
    return compare_pair(sasstune, a, d, name, stock, other, os.path.join(d, "launch.json"), env)


def triton_ptxas():
    spec_ = importlib.util.find_spec("triton")
    p = os.path.join(os.path.dirname(spec_.origin), "backends", "nvidia", "bin", "ptxas") if spec_ else ""
    return p if p and os.path.exists(p) else None


def run_variants(a, d, res, sasstune, budget_s, env):
    """The compile-variants columns (docs/variants.md): `sasstune variants` on the stock PTX picks the
    best (ptxas binary, options) verified and confirmed against stock; when one wins, the SASS search
    runs on it too.  Every cubin is re-measured apart from the tuner.  Columns: variant (the winner
    alone), variant_sass (the winner + the SASS search: the product's default), and the SASS search
    alone (the run's `speedup`).  No winner: variant is stock (1) and variant_sass is the SASS search's
    own result, the same cubin."""
    cubin, launch, ptx = (os.path.join(d, f) for f in ("stock.cubin", "launch.json", "stock.ptx"))
    vcub, vt = os.path.join(d, "variant.cubin"), os.path.join(d, "variant-tuned.cubin")
    out = {"ran": True}
    cmd = [sasstune, "variants", ptx, "--launch", launch, "--cubin", cubin, "--json", "-o", vcub,
           "--options", a.variant_options]
    tp = triton_ptxas()
    if tp:
        cmd += ["--stock-ptxas", tp]
    for p in a.ptxas:
        cmd += ["--ptxas", p]
    s = step(cmd, os.path.join(d, "variants.log"), a.variants_timeout, env)
    j = parse_json_out(s["stdout"])
    out["wall_s"] = s["wall_s"]
    if j is None or s["rc"] != 0:
        out["error"] = s["stderr_tail"] or "sasstune variants: no JSON (rc %s)" % s["rc"]
        return out
    json.dump(j, open(os.path.join(d, "variants.json"), "w"), indent=1)
    vs = j.get("variants") or []
    out["table"] = [{k: v.get(k) for k in ("label", "compiled", "compile_s", "code_bytes", "regs", "verified",
                                          "speedup", "speedup_lo", "speedup_hi", "confirmed", "duplicate_of", "reason")}
                    for v in vs]
    best = j.get("best", 0) or 0
    won = best and os.path.exists(vcub) and open(vcub, "rb").read() != open(cubin, "rb").read()
    out["best"] = vs[best].get("label") if won and best < len(vs) else "stock"
    sass = {"speedup": res["speedup"], "speedup_lo": res["speedup_lo"], "speedup_hi": res["speedup_hi"],
            "status": res["status"]}
    if not won:
        out["variant"] = {"speedup": 1.0, "speedup_lo": 1.0, "speedup_hi": 1.0, "status": "stock kept"}
        out["variant_sass"] = dict(sass, note="no variant won: the SASS search's own cubin")
        return out
    out["variant"] = dict(compare_pair(sasstune, a, d, "variant", cubin, vcub, launch, env), status="variant")
    cmd = [sasstune, "tune", vcub, "--launch", launch, "--reward", "gpu", "--budget", fmt_seconds(budget_s),
           "-o", vt, "--json", "--quiet"]
    if a.method:
        cmd += ["--method", a.method]
    if a.aim:
        cmd += ["--aim", a.aim]
    s = step(cmd, os.path.join(d, "variant-tune.log"), budget_s * 2 + a.tune_slack, env)
    tj = parse_json_out(s["stdout"])
    out["variant_tune"] = summarize_tune(tj, s, budget_s)
    if s["rc"] == 0 and os.path.exists(vt) and open(vt, "rb").read() != open(vcub, "rb").read():
        out["variant_sass"] = dict(compare_pair(sasstune, a, d, "variant-sass", cubin, vt, launch, env),
                                   status="variant+sass")
    else:
        out["variant_sass"] = dict(out["variant"], status="variant (the SASS search kept it)")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="results folder")
    ap.add_argument("--budget", default=None, help="tuning budget per kernel (default 60s; 40s with --quick)")
    ap.add_argument("--kernels", default=None, help="comma-separated (default: all; --quick: %s)" % ",".join(K.QUICK))
    ap.add_argument("--quick", action="store_true", help="the time-boxed subset: 4 kernels, 40s budgets, ~6 min")
    ap.add_argument("--time-limit", default=None,
                    help="stop starting work after this long, shrinking later budgets to fit (default: none; 6m with --quick)")
    ap.add_argument("--pairs", type=int, default=400, help="pairs for the stock/tuned comparison [400]")
    ap.add_argument("--baseline-pairs", type=int, default=100, help="pairs for stock vs cuBLAS / copy [100]")
    ap.add_argument("--method", default=None, help="search method passed to sasstune tune (ppo, random, greedy)")
    ap.add_argument("--reward", default="gpu", choices=["gpu", "model"],
                    help="tune's reward [gpu]; model only makes sense with --compile-only (predictions, not measured)")
    ap.add_argument("--tune-arg", action="append", default=[], help="extra arguments for sasstune tune (repeatable)")
    ap.add_argument("--aim", default=None, help="aimed proposals for sasstune tune: auto, off or a samples file "
                    "(docs/profile.md; default: tune's own, uniform)")
    ap.add_argument("--no-variants", dest="variants", action="store_false",
                    help="leave out the compile-variants columns (sasstune variants; docs/variants.md)")
    ap.add_argument("--ptxas", action="append", default=[],
                    help="a ptxas binary for the variants, besides those sasstune finds itself (repeatable)")
    ap.add_argument("--variant-options", default="-lineinfo --gpu-name=sm_90a",
                    help="the options Triton 3.6 gave ptxas for the stock cubin [-lineinfo --gpu-name=sm_90a]")
    ap.add_argument("--variants-timeout", type=float, default=300, help="limit of the variants step [300 s]")
    ap.add_argument("--sasstune", default=None, help="the sasstune command (default: $SASSTUNE_BIN, build-gpu/, ...)")
    ap.add_argument("--build", action="store_true", help="build sasstune first (bash bench/build.sh)")
    ap.add_argument("--compile-only", action="store_true", help="no GPU: compile for sm_90 and write the specs")
    ap.add_argument("--stock-timeout", type=float, default=None, help="the stock step's limit [300 s; 180 s with --quick]")
    ap.add_argument("--compare-timeout", type=float, default=300)
    ap.add_argument("--tune-slack", type=float, default=120, help="tune's timeout is 2 x budget + this [120]")
    ap.add_argument("--stock-script", default=os.path.join(HERE, "stock.py"), help=argparse.SUPPRESS)  # tests
    a = ap.parse_args(argv)

    t_start = time.time()
    if a.stock_timeout is None:
        a.stock_timeout = 180.0 if a.quick else 300.0
    cases = K.select(a.kernels, a.quick)
    budget_s = parse_seconds(a.budget or ("40s" if a.quick else "60s"))
    a.requested_budget_s = budget_s
    limit_s = parse_seconds(a.time_limit) if a.time_limit else (360.0 if a.quick else None)
    out_dir = os.path.abspath(a.out)
    os.makedirs(out_dir, exist_ok=True)

    if a.build:
        r = subprocess.run(["bash", os.path.join(HERE, "build.sh")], cwd=ROOT)
        if r.returncode != 0:
            print("bench: the build failed (see its log); going on with whatever sasstune is found", file=sys.stderr)
    sasstune = find_sasstune(a.sasstune)
    tune_ok, tune_why = probe_tune(sasstune)
    if a.reward == "model" and not a.compile_only:
        sys.exit("bench: --reward model gives unconfirmed predictions; use it with --compile-only")

    env = dict(os.environ)
    for k in list(env):
        if k == "SASSTUNE" or k.startswith("SASSTUNE_") and k not in ("SASSTUNE_WORKER", "SASSTUNE_LIBCUDA", "SASSTUNE_NVDISASM"):
            del env[k]   # the stock process runs stock Triton: the adapter stays off
    # a Triton cache of this run's own (outside DIR, which stays small enough to copy back): the
    # stock kernels are really compiled, and the launcher module is built once for all of them
    triton_cache = tempfile.mkdtemp(prefix="bench-triton-cache-")
    env["TRITON_CACHE_DIR"] = triton_cache
    if "SASSTUNE_NVDISASM" not in env:
        # the nvdisasm that matches the ptxas Triton used (for tune, when it needs a listing)
        spec_ = importlib.util.find_spec("triton")
        nd = os.path.join(os.path.dirname(spec_.origin), "backends", "nvidia", "bin", "nvdisasm") if spec_ else ""
        if nd and os.path.exists(nd):
            env["SASSTUNE_NVDISASM"] = nd
    if sasstune and "SASSTUNE_WORKER" not in env and os.path.exists(os.path.join(os.path.dirname(sasstune), "sasstune-worker")):
        env["SASSTUNE_WORKER"] = os.path.join(os.path.dirname(sasstune), "sasstune-worker")
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    run = {"schema": SCHEMA, "command": "python3 bench/run.py " + " ".join(shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:])),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "host": os.uname().nodename, "git": git_state(), "sasstune": sasstune, "tune_available": tune_ok,
           "tune_unavailable_because": tune_why or None, "budget_s": budget_s, "time_limit_s": limit_s,
           "pairs": a.pairs, "baseline_pairs": a.baseline_pairs, "method": a.method, "reward": a.reward, "aim": a.aim,
           "quick": a.quick, "compile_only": a.compile_only, "kernels": [c.name for c in cases],
           "targets": {"geomean_speedup": 1.05, "no_kernel_slower": True, "max_tuning_s": 300}}
    results = []

    def save():
        run["wall_s"] = time.time() - t_start
        tmp = os.path.join(out_dir, "results.json.tmp")
        json.dump({"run": run, "results": results}, open(tmp, "w"), indent=1)
        os.replace(tmp, os.path.join(out_dir, "results.json"))

    print("bench: %d kernels, budget %s each%s; sasstune %s%s" % (
        len(cases), fmt_seconds(budget_s), ", time box %s" % fmt_seconds(limit_s) if limit_s else "",
        sasstune or "(none)", "" if tune_ok else " (no tuning: %s)" % tune_why), file=sys.stderr)
    overheads = []   # wall time less tuning budget, of each kernel tuned so far
    for i, case in enumerate(cases):
        b = budget_s
        if limit_s:
            left = limit_s - (time.time() - t_start)
            n_left = len(cases) - i
            # the overhead still to come: 1.25 x the mean measured so far (the first guess before any)
            est = 1.25 * sum(overheads) / len(overheads) if overheads else OVERHEAD_S
            if left < est:
                results.append({"case": case.name, "title": case.title, "shape": case.shape, "family": case.family,
                                "status": "skipped", "reason": "time box (%s) spent" % fmt_seconds(limit_s)})
                save()
                continue
            b = min(b, (left - est * n_left) / n_left)
            if b < budget_s:
                print("bench: %s: tuning budget %s (time box: %s left for %d kernel%s, overhead %.0f s each)" % (
                    case.name, fmt_seconds(max(b, 0)), fmt_seconds(left), n_left, "s" if n_left > 1 else "", est),
                    file=sys.stderr)
        t0 = time.time()
        res = run_case(case, a, out_dir, sasstune, tune_ok, tune_why, b, env)
        res["wall_s"] = time.time() - t0
        t = res.get("tune") or {}
        if t.get("ran") and t.get("budget_s"):
            overheads.append(max(0.0, res["wall_s"] - t["budget_s"]))
        json.dump(res, open(os.path.join(out_dir, case.name, "result.json"), "w"), indent=1)
        results.append(res)
        save()
        sp = ("speedup %.4f [%.4f, %.4f]" % (res["speedup"], res["speedup_lo"], res["speedup_hi"])
              if "speedup" in res else res.get("reason", ""))
        print("bench: %-14s %-16s %s (%.0f s)" % (case.name, res.get("status"), sp, res["wall_s"]), file=sys.stderr)
    save()
    shutil.rmtree(triton_cache, ignore_errors=True)
    print(os.path.join(out_dir, "results.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
