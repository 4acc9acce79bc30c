#!/usr/bin/env python3
"""Equal-budget ablation of sasstune's SASS search on the bench kernels.

Every bench kernel is built once (bench/stock.py); then each configuration tunes the same stock
cubin with the same budget (`sasstune tune --reward gpu --budget B`, no compile variants, so that
only the SASS search differs), and each result is re-measured apart from its tuner
(`sasstune compare stock tuned --pairs N`).  The table gives, per kernel and configuration, the
re-measured speedup (95 % interval) and the tuner's own confirmed ratio beside it (issue 16's
"tuner within 0.3 % of the re-measure"); geometric means per configuration close it.

    python3 bench/ablation.py --out DIR --budget 6s \\
        --config "swap,ctrl=--families swap,ctrl" \\
        --config "+hoist,wait=--families swap,ctrl,hoist,wait" \\
        --config "+aim=--families swap,ctrl,hoist,wait --aim auto" [--kernels a,b] [--time-limit 480]

A configuration is NAME=ARGS: ARGS are extra `sasstune tune` arguments (shell words; `{dir}` stands
for the kernel's folder).  With --profile, each stock kernel is first profiled once
(`sasstune profile --samples-out {dir}/samples.json`, its wall time recorded), so that a configuration
can aim with `--aim {dir}/samples.json` at budgets too small for `--aim auto` (which spends at most
5 % of the budget and needs 3 s).  The order of
the configurations is rotated from kernel to kernel so that none always runs first (GPU clocks
and caches warm up over a run).  A time box (--time-limit) stops starting kernels when the time
left is less than the last kernel took.  Writes DIR/ablation.json and DIR/ablation.md.

Runs split over several GPUs (one process per kernel and GPU, CUDA_VISIBLE_DEVICES) are joined with

    python3 bench/ablation.py merge --out DIR SHARD_DIR...

which reads every SHARD_DIR/ablation.json (the same configurations in each), orders the kernels as
the bench does, and writes DIR/ablation.json and DIR/ablation.md.  --rotate-offset N starts the
rotation of the configurations at N (a shard of one kernel would otherwise always start at 0).
"""
import argparse
import json
import math
import os
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels as K  # noqa: E402
import run as R  # noqa: E402


def parse_config(text):
    """'NAME=ARGS' -> (name, [args]); ValueError if malformed."""
    name, sep, args = text.partition("=")
    if not sep or not name.strip():
        raise ValueError("a configuration is NAME=ARGS, got %r" % text)
    return name.strip(), shlex.split(args)


def geomean(vals):
    vals = [v for v in vals if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def rotate(seq, k):
    k %= max(1, len(seq))
    return seq[k:] + seq[:k]


def tune_and_measure(a, sasstune, d, name, args, env):
    """One configuration on one kernel: tune, then compare. -> dict."""
    out = os.path.join(d, "tuned-%s.cubin" % name)
    cmd = [sasstune, "tune", os.path.join(d, "stock.cubin"), "--launch", os.path.join(d, "launch.json"),
           "--reward", "gpu", "--budget", R.fmt_seconds(a.budget_s), "-o", out, "--json", "--quiet"] + args
    s = R.step(cmd, os.path.join(d, "tune-%s.log" % name), a.budget_s * 2 + 120, env)
    t = R.summarize_tune(R.parse_json_out(s["stdout"]), s, a.budget_s)
    t["args"] = args
    t["remeasure"] = R.remeasure(sasstune, a, d, name, out, env)
    if not os.path.exists(out):
        t["remeasure"]["error"] = t.get("error") or "no output cubin"
    return t


def run_kernel(a, case, configs, k, sasstune, env):
    d = os.path.join(a.out, case.name)
    os.makedirs(d, exist_ok=True)
    res = {"case": case.name, "configs": {}}
    s = R.step([sys.executable, os.path.join(HERE, "stock.py"), "--case", case.name, "--dir", d,
                "--pairs", str(a.baseline_pairs)], os.path.join(d, "stock.log"), 300, env)
    try:
        stock = json.load(open(os.path.join(d, "stock.json")))
    except (OSError, ValueError):
        stock = {"error": s["stderr_tail"] or "stock step failed (rc %s)" % s["rc"]}
    if stock.get("error") or not (stock.get("spec") or {}).get("ok"):
        res["error"] = stock.get("error") or "no launch spec"
        return res
    if a.profile:
        p = R.step([sasstune, "profile", os.path.join(d, "stock.cubin"), "--launch", os.path.join(d, "launch.json"),
                    "--ms", "50", "--samples-out", os.path.join(d, "samples.json")], os.path.join(d, "profile.log"), 120, env)
        res["profile"] = {"rc": p["rc"], "wall_s": p["wall_s"], "error": p["stderr_tail"] if p["rc"] else None}
    for name, args in rotate(configs, k):
        args = [x.replace("{dir}", d) for x in args]
        res["configs"][name] = tune_and_measure(a, sasstune, d, name, args, env)
    return res


def cell(t):
    m = (t or {}).get("remeasure") or {}
    if "speedup" not in m:
        return "– (%s)" % (m.get("error") or (t or {}).get("error") or "not run")[:60].replace("|", "/")
    if m.get("same_as_stock"):
        return "1 (stock)"
    txt = "%.4f [%.4f, %.4f]" % (m["speedup"], m["speedup_lo"], m["speedup_hi"])
    if t.get("confirmed") and t.get("ratio"):
        txt += "; tuner %.4f" % t["ratio"]
    return txt


def cost_lines(results, names):
    """Per configuration: steps/s, and the search's own work and its policy's per step as a share of
    one evaluation (issue 16: PPO's <= 10 %), the range over the kernels that report them."""
    out = []
    for n in names:
        ts = [r["configs"].get(n) or {} for r in results if not r.get("error")]
        ts = [t for t in ts if t.get("steps") and t.get("eval_ms")]
        if not ts:
            continue
        own = [100 * t["search_ms_per_step"] / t["eval_ms"] for t in ts if t.get("search_ms_per_step") is not None]
        pol = [100 * 1000 * t["policy_seconds"] / t["steps"] / t["eval_ms"] for t in ts if t.get("policy_seconds")]
        sps = [t["steps_per_s"] for t in ts if t.get("steps_per_s")]
        txt = "- %s, cost per step over %d kernels: %.1f-%.1f steps/s" % (n, len(ts), min(sps), max(sps)) if sps else \
            "- %s, cost per step over %d kernels:" % (n, len(ts))
        if own:
            txt += "; the search's own work %.1f-%.1f %% of one evaluation" % (min(own), max(own))
        if pol:
            txt += "; the policy's %.1f-%.1f %%" % (min(pol), max(pol))
        out.append(txt)
    return out


def markdown(run, results, names):
    lines = ["# Equal-budget ablation of the SASS search (%s)" % run["date"], "",
             "Command: `%s`; budget %s per kernel and configuration, no compile variants; speedup = "
             "time(stock)/time(tuned) by `sasstune compare` (%d pairs, 95 %% interval), the tuner's "
             "own confirmed ratio beside it." % (run["command"], R.fmt_seconds(run["budget_s"]), run["pairs"]),
             "", "| kernel | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for r in results:
        if r.get("error"):
            lines.append("| %s | %s |" % (r["case"], " | ".join(["– (%s)" % r["error"][:60]] * len(names))))
            continue
        lines.append("| %s | %s |" % (r["case"], " | ".join(cell(r["configs"].get(n)) for n in names)))
    lines.append("")
    for n in names:
        sp = [((r["configs"].get(n) or {}).get("remeasure") or {}).get("speedup") for r in results if not r.get("error")]
        g = geomean(sp)
        slower = sum(1 for r in results if not r.get("error") and
                     (((r["configs"].get(n) or {}).get("remeasure") or {}).get("speedup_hi") or 2) < 1.0)
        lines.append("- %s: geometric mean %s over %d kernels; %d resolved slower than stock" %
                     (n, "%.4f" % g if g else "–", len([v for v in sp if v]), slower))
    lines += cost_lines(results, names)
    gaps = [(r["case"], n, t["ratio"], t["remeasure"]["speedup"]) for r in results if not r.get("error")
            for n, t in r["configs"].items() if t.get("confirmed") and t.get("ratio")
            and "speedup" in (t.get("remeasure") or {}) and not t["remeasure"].get("same_as_stock")]
    if gaps:
        within = sum(1 for g in gaps if abs(g[2] / g[3] - 1) <= 0.003)
        lines += ["", "Tuner against re-measure (confirmed results): %d of %d within 0.3 %%." % (within, len(gaps))]
    return "\n".join(lines) + "\n"


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", action="append", required=True, help="NAME=ARGS (repeatable, at least one)")
    ap.add_argument("--budget", default="6s")
    ap.add_argument("--kernels", default=None, help="comma list (default: every bench kernel)")
    ap.add_argument("--time-limit", type=float, default=None, help="seconds for the whole run")
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--baseline-pairs", type=int, default=10)
    ap.add_argument("--compare-timeout", type=float, default=120)
    ap.add_argument("--sasstune", default=None)
    ap.add_argument("--profile", action="store_true", help="profile each stock kernel first ({dir}/samples.json)")
    ap.add_argument("--rotate-offset", type=int, default=0, help="start the configuration rotation at N")
    a = ap.parse_args(argv)
    a.budget_s = R.parse_seconds(a.budget)
    try:
        a.configs = [parse_config(c) for c in a.config]
    except ValueError as e:
        ap.error(str(e))
    if len({n for n, _ in a.configs}) != len(a.configs):
        ap.error("configuration names must differ")
    names = a.kernels.split(",") if a.kernels else [c.name for c in K.CASES]
    known = {c.name: c for c in K.CASES}
    bad = [n for n in names if n not in known]
    if bad:
        ap.error("unknown kernel(s): %s (known: %s)" % (", ".join(bad), ", ".join(known)))
    a.cases = [known[n] for n in names]
    return a


def merge(argv):
    """`merge --out DIR SHARD...`: join the shards' ablation.json into one table.  -> exit status."""
    ap = argparse.ArgumentParser(prog="ablation.py merge", description="join sharded ablation runs")
    ap.add_argument("--out", required=True)
    ap.add_argument("shards", nargs="+")
    a = ap.parse_args(argv)
    runs, results = [], []
    for d in a.shards:
        try:
            j = json.load(open(os.path.join(d, "ablation.json")))
        except (OSError, ValueError) as e:
            print("ablation merge: %s: %s" % (d, e), file=sys.stderr)
            return 1
        runs.append(j["run"])
        results += j["results"]
    names = list(runs[0]["configs"])
    for d, r in zip(a.shards, runs):
        if list(r["configs"]) != names or r["budget_s"] != runs[0]["budget_s"]:
            print("ablation merge: %s has other configurations or another budget than %s" % (d, a.shards[0]),
                  file=sys.stderr)
            return 1
    order = {c.name: i for i, c in enumerate(K.CASES)}
    results.sort(key=lambda r: order.get(r["case"], len(order)))
    run = dict(runs[0])
    run["command"] = "; ".join(sorted({r["command"] for r in runs}))
    run["shards"] = len(runs)
    os.makedirs(a.out, exist_ok=True)
    json.dump({"run": run, "results": results}, open(os.path.join(a.out, "ablation.json"), "w"), indent=1)
    open(os.path.join(a.out, "ablation.md"), "w").write(markdown(run, results, names))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["merge"]:
        return merge(argv[1:])
    a = parse_args(argv)
    t0 = time.time()
    os.makedirs(a.out, exist_ok=True)
    sasstune = R.find_sasstune(a.sasstune)
    if not sasstune:
        print("ablation: no sasstune command found (--sasstune)", file=sys.stderr)
        return 1
    env = dict(os.environ)
    run = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "budget_s": a.budget_s, "pairs": a.pairs,
           "command": "python3 bench/ablation.py " + " ".join(shlex.quote(x) for x in (argv or sys.argv[1:])),
           "configs": {n: args for n, args in a.configs}}
    results, last = [], 0.0
    for k, case in enumerate(a.cases):
        if a.time_limit and time.time() - t0 + last > a.time_limit:
            results.append({"case": case.name, "error": "skipped: the time box is spent", "configs": {}})
            continue
        t = time.time()
        r = run_kernel(a, case, a.configs, k + a.rotate_offset, sasstune, env)
        last = time.time() - t
        results.append(r)
        print("ablation: %-14s %s (%.0f s)" % (case.name, "  ".join(
            "%s %s" % (n, cell(r["configs"].get(n))) for n, _ in a.configs) if not r.get("error") else r["error"], last),
            flush=True)
        json.dump({"run": run, "results": results}, open(os.path.join(a.out, "ablation.json"), "w"), indent=1)
    md = markdown(run, results, [n for n, _ in a.configs])
    open(os.path.join(a.out, "ablation.md"), "w").write(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
