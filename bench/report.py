#!/usr/bin/env python3
"""Turn bench/run.py results into docs/benchmarks.md and docs/benchmarks.png.

    python3 bench/report.py DIR|results.json [...] [--md docs/benchmarks.md] [--png docs/benchmarks.png]
    python3 bench/report.py --none          # the page saying that no results are recorded yet

One table per GPU (runs on the same GPU model are listed one after the other), the speedups
against the targets, a chart of the speedups with their 95 % intervals, and the kernels that
were not measured, with the reason.

Several runs may be given (e.g. an earlier run's results.json and a new folder); they are listed
one after the other, and when there are several the targets are also computed over all of them
(each kernel's last measurement, in the order given).

Notes on a run (what tree it was made from when results.json records no commit, what the run
left out, earlier failed attempts): `--note TEXT` (repeatable) sets them for the run given last;
the page keeps every run's notes, keyed by the run's date, when it is rewritten from the same runs.
"""
import argparse
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET_GEOMEAN = 1.05
TARGET_TUNE_S = 300.0
NOISE = 0.005   # two loads of one cubin differ by up to ~0.4 % (docs/runtime.md): not resolved below this

HOWTO = """\
## How to run

On a machine with an NVIDIA GPU, torch and Triton 3.6 (the lent H200: the build unpacks the
carried `.deps/` itself):

    bash bench/build.sh                                   # sasstune + worker, Release, into build-gpu/
    python3 bench/run.py --quick --out bench-out          # 4 kernels, 40 s budgets: about 6 minutes
    python3 bench/run.py --out bench-out --budget 5m      # every kernel, up to 5 minutes of tuning each
    python3 bench/report.py bench-out                     # rewrites this page and benchmarks.png

On the lent H200 through the device tool, one call of at most 10 minutes builds and runs a part of
the suite: `bash test/gpu/calls/bench-variants.sh KERNELS BUDGET NAME [LIMIT_S]` (the runs above; it passes
the carried ptxas 13.5 and the machine's CUDA ptxas with `--ptxas`), or `bench-suite.sh` (the same
arguments) for the SASS search alone.

`run.py` options: `--kernels a,b` (names below), `--budget T` per kernel (default 60s, 40s with
`--quick`), `--time-limit T` (the whole run, 6m with `--quick`: each kernel's budget shrinks to its share of
the time left after the other kernels' overhead, guessed at 15 s a kernel until the run has measured
it; a share under 10 s skips the tuning),
`--pairs N` for the stock/tuned comparison (400), `--baseline-pairs N` against cuBLAS or the copy
(100), `--method ppo|random|greedy`, `--tune-arg ARG` (passed to `sasstune tune`), `--sasstune PATH`,
`--build`, `--ptxas P` (another ptxas for the variants, repeatable), `--no-variants`. Without a GPU, `--compile-only` compiles every kernel for sm_90 and checks its launch spec
(`pytest bench/test_bench_compile.py` does the same and more).

What happens for each kernel, every step in a fresh process:

1. **stock** (`bench/stock.py`): the Triton kernel is compiled and launched as a user would launch it,
   its output checked against a float32 torch reference; its cubin, `nvdisasm` listing and a launch
   spec (docs/runtime.md) are written; then it is timed against its baseline in interleaved pairs
   (CUDA graphs of back-to-back launches, events, median of per-pair ratios, bootstrap interval,
   no L2 flush): cuBLAS through torch for the matmuls, torch SDPA for attention, a device copy of the
   same number of bytes for the memory-bound kernels.
2. **tune**: `sasstune tune stock.cubin --launch launch.json --reward gpu --budget B -o tuned.cubin --json`.
   The tuner keeps a result only when it confirmed it (95 % interval above 1, fresh-input
   verification, independent checker); otherwise its output is the stock cubin.
3. **compare**: `sasstune compare stock.cubin tuned.cubin --launch launch.json --pairs 400 --json`
   re-measures the result apart from the tuner. For a kernel the tuner left unchanged it compares
   two loads of the stock cubin: the A/A noise of that kernel.

4. **variants**: `sasstune variants stock.ptx --launch launch.json --cubin stock.cubin -o variant.cubin
   --json` compiles the same PTX with every ptxas it finds (Triton's 12.8 and 12.9, the `nvidia-cuda-nvcc`
   wheel's 13.x, `--ptxas P`) and their knobs, verifies each bit for bit, times it against stock and
   confirms the best (docs/variants.md). When a variant wins, `sasstune tune` runs on it too; both are
   re-measured by `sasstune compare` (400 pairs). The variants table shows the best variant alone, the
   best variant + the SASS search (the product's default) and the SASS search alone.

Kernels the runtime cannot launch yet, or that sasstune cannot rewrite yet, are still run stock and
listed with the reason.

| kernel | what | shape |
|---|---|---|
{kernels}
"""

COLUMNS = """\
Columns: **stock** and **tuned** are `sasstune compare`'s median times per launch (and the
throughput they imply); **speedup** is time(stock)/time(tuned), the median of 400 per-pair ratios,
with its bootstrap 95 % interval (below about 0.5 % it is not resolved: two loads of one cubin
differ by that much); *unchanged* means the tuner kept the stock cubin (the interval is then the
A/A noise, and the speedup counts as 1); **tuning** is the wall time of `sasstune tune` (budget,
set-up, confirmation, verification); **steps/s** the moves the search tried per second;
**baseline** the reference implementation (cuBLAS through torch, torch SDPA, or a device copy of
the same number of bytes) with its time and throughput, timed by `bench/timing.py` in 100
interleaved pairs against the stock kernel; the last column is the stock kernel's speed as a
fraction of the baseline's (time(baseline)/time(stock), 95 % interval) and the tuned kernel's
(that fraction times the speedup).
"""


def load(dirs):
    """Each of dirs is a bench/run.py --out folder or a copy of its results.json."""
    runs = []
    for d in dirs:
        p = d if os.path.isfile(d) else os.path.join(d, "results.json")
        try:
            j = json.load(open(p))
        except (OSError, ValueError) as e:
            sys.exit("report: %s: %s" % (p, e))
        j["dir"] = d
        j["path"] = p
        runs.append(j)
    return runs


NOTES_RE = re.compile(r"<!-- notes on the run of (.+?) -->\n(.*?)<!-- end of notes -->\n", re.S)


def kept_notes(md):
    """{run date: notes text} from the page being rewritten."""
    try:
        text = open(md).read()
    except OSError:
        return {}
    return {k: v for k, v in NOTES_RE.findall(text)}


KEPT_RE = re.compile(r"<!-- ([a-z][a-z0-9_-]*) -->\n.*?<!-- end of \1 -->\n", re.S)


def kept_peers(md):
    """The page's hand-written sections, each between `<!-- NAME -->` and `<!-- end of NAME -->`
    (the peers benchmark of bench/peers/, the ablation of bench/ablation.py), kept as they are,
    in their order, on a rewrite."""
    try:
        text = open(md).read()
    except OSError:
        return ""
    return "".join("\n" + m.group(0) for m in KEPT_RE.finditer(text))


def device_of(run):
    for r in run["results"]:
        dev = (r.get("compare") or {}).get("device") or (r.get("stock") or {}).get("device")
        if dev and not dev.startswith("none"):
            return dev
    return "no GPU (compile-only)" if run["run"].get("compile_only") else "unknown GPU"


def f_time(ms):
    if ms is None:
        return "–"
    return "%.1f µs" % (ms * 1e3) if ms < 1 else "%.3f ms" % ms


def f_rate(r, ms):
    if ms is None or not ms:
        return ""
    if r.get("flops"):
        return "%.0f TFLOPS" % (r["flops"] / ms / 1e9)
    if r.get("bytes"):
        return "%.2f TB/s" % (r["bytes"] / ms / 1e9)
    return ""


def measured(r):
    return r.get("status") in ("tuned", "unchanged") and "speedup" in r


def effective_speedup(r):
    """The speedup that counts toward the targets: 1 for an unchanged kernel (it is the same cubin)."""
    return 1.0 if r.get("status") == "unchanged" else r["speedup"]


def slower(r):
    return r.get("status") == "tuned" and r["speedup_hi"] < 1.0


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def col_speedup(c):
    """The speedup of one variants column that counts toward the targets (1 when stock was kept or
    the search kept its input; its median otherwise)."""
    if not c or "speedup" not in c:
        return None
    return 1.0 if c.get("status") in ("stock kept", "unchanged") else c["speedup"]


def f_col(c):
    if not c:
        return "–"
    if "speedup" not in c:
        return "– (%s)" % (c.get("error") or "not measured")
    v = col_speedup(c)
    if c.get("status") in ("stock kept", "unchanged"):
        return "1 (%s)" % ("stock kept" if c["status"] == "stock kept" else "unchanged")
    bold = c["speedup_lo"] > 1.0
    txt = ("**%.4f**" if bold else "%.4f") % v + " [%.4f, %.4f]" % (c["speedup_lo"], c["speedup_hi"])
    return txt + (" slower" if c["speedup_hi"] < 1.0 else "")


def variants_rows(rs):
    """The four columns (stock, best variant, best variant + SASS search, SASS search alone)."""
    vr = [r for r in rs if measured(r) and (r.get("variants") or {}).get("ran")]
    if not vr:
        return []
    out = ["| kernel | best variant | variant [95 %] | variant + SASS search (default) [95 %] "
           "| SASS search alone [95 %] | variants compiled / verified | variants step |",
           "|---|---|---|---|---|---|---|"]
    cols = {"variant": [], "variant_sass": [], "sass": []}
    for r in vr:
        v = r["variants"]
        sass = {"speedup": r["speedup"], "speedup_lo": r["speedup_lo"], "speedup_hi": r["speedup_hi"],
                "status": r["status"]}
        t = v.get("table") or []
        nc = sum(1 for x in t if x.get("compiled"))
        nv = sum(1 for x in t if x.get("verified") == 1)
        if v.get("error"):
            out.append("| %s | – (%s) | – | – | %s | – | %.0f s |" % (r["case"], v["error"], f_col(sass), v.get("wall_s", 0)))
            continue
        for k, c in (("variant", v.get("variant")), ("variant_sass", v.get("variant_sass")), ("sass", sass)):
            x = col_speedup(c)
            if x is not None:
                cols[k].append(x)
        out.append("| %s | %s | %s | %s | %s | %d / %d of %d | %.0f s |" % (
            r["case"], v.get("best", "stock"), f_col(v.get("variant")), f_col(v.get("variant_sass")),
            f_col(sass), nc, nv, len(t), v.get("wall_s", 0)))
    out.append("")
    g = lambda xs: "%.4f (%d kernel%s)" % (geomean(xs), len(xs), "s" * (len(xs) != 1)) if xs else "–"
    out.append("Geometric means over stock: best variant %s; best variant + SASS search (the default) %s; "
               "SASS search alone %s (target >= %.2f with no kernel slower)." % (
                   g(cols["variant"]), g(cols["variant_sass"]), g(cols["sass"]), TARGET_GEOMEAN))
    out.append("")
    return out


def row(r):
    st, c, t, b = r.get("stock") or {}, r.get("compare") or {}, r.get("tune") or {}, (r.get("stock") or {}).get("baseline") or {}
    stock_ms = c.get("stock_ms", b.get("triton_ms"))
    tuned_ms = c.get("tuned_ms") if measured(r) else None
    if measured(r):
        if r["status"] == "unchanged":
            sp = "1 (unchanged; A/A %.4f [%.4f, %.4f])" % (r["speedup"], r["speedup_lo"], r["speedup_hi"])
        else:
            sp = ("%.4f [%.4f, %.4f] (interval includes 1)" if r["speedup_lo"] <= 1.0 <= r["speedup_hi"]
                  else "**%.4f** [%.4f, %.4f]") % (r["speedup"], r["speedup_lo"], r["speedup_hi"])
            sp += " slower" if slower(r) else ""
    else:
        sp = "– (%s)" % r.get("status", "?")
        if "speedup" in r:
            sp = "– (%s; A/A %.4f [%.4f, %.4f])" % (r.get("status", "?"), r["speedup"], r["speedup_lo"], r["speedup_hi"])
    if t.get("ran"):
        tune_s = "%.0f s (budget %.0f s)" % (t["wall_s"], t.get("budget_s") or 0)
        sps = "%.1f" % t["steps_per_s"] if t.get("steps_per_s") is not None else "–"
        meth = t.get("method") or "–"
        if t.get("confirmed"):
            meth += ", confirmed %.4f" % t["ratio"] if t.get("ratio") else ", confirmed"
    else:
        tune_s, sps, meth = "–", "–", "–"
    if b.get("label") and "base_ms" in b:
        frac, lo, hi = 1.0 / b["base_speed"], 1.0 / b["base_speed_hi"], 1.0 / b["base_speed_lo"]
        base = "%s: %s %s" % (b["label"].replace("|", "\\|"), f_time(b["base_ms"]), f_rate(r, b["base_ms"]))
        vs = "%.0f %% [%.0f, %.0f]" % (100 * frac, 100 * lo, 100 * hi)
        vs += " / %.0f %%" % (100 * frac * effective_speedup(r)) if measured(r) else " / –"
    elif b.get("error"):
        base, vs = "%s: failed (%s)" % (b.get("label"), b["error"]), "–"
    else:
        base, vs = "–", "–"
    return "| %s | %s | %s %s | %s %s | %s | %s | %s | %s | %s | %s |" % (
        r["case"], r.get("shape", ""), f_time(stock_ms), f_rate(r, stock_ms), f_time(tuned_ms), f_rate(r, tuned_ms),
        sp, tune_s, sps, meth, base, vs)


def targets(rs, where="below"):
    m = [r for r in rs if measured(r)]
    lines = []
    if not m:
        return ["No kernel was measured stock against tuned in this run."]
    g = geomean([effective_speedup(r) for r in m])
    slow = [r["case"] + (" (the tuner had confirmed %.4f [%.4f, %.4f])" % (
        r["tune"]["ratio"], r["tune"]["ratio_lo"], r["tune"]["ratio_hi"])
        if (r.get("tune") or {}).get("confirmed") and "ratio_lo" in r["tune"] else "") for r in m if slower(r)]
    ran = [r["tune"] for r in rs if (r.get("tune") or {}).get("ran")]
    changed = [r for r in m if r["status"] == "tuned"]
    lines.append("- Geometric mean speedup over the ptxas schedule, %d kernels measured (%d changed by the tuner): "
                 "**%.4f** (target >= %.2f: %s)%s" % (
                     len(m), len(changed), g, TARGET_GEOMEAN, "met" if g >= TARGET_GEOMEAN else "**not met**",
                     "; over the %d changed ones alone: %.4f" % (len(changed), geomean([r["speedup"] for r in changed]))
                     if changed and len(changed) < len(m) else ""))
    above = [r for r in changed if r["speedup_lo"] > 1.0]
    unch = [r for r in m if r["status"] == "unchanged"]
    detail = []
    if changed:
        detail.append("%d of the %d changed kernels have their interval above 1" % (len(above), len(changed)))
        amb = [r for r in changed if r["speedup_lo"] <= 1.0 <= r["speedup_hi"]]
        if amb:
            detail.append("%s: interval includes 1 (not resolved; counted at its median in the geometric mean)" %
                          ", ".join(r["case"] for r in amb))
    if unch:
        detail.append("%s kept the stock cubin (A/A %s)" % (
            ", ".join(r["case"] for r in unch),
            ", ".join("[%.4f, %.4f]" % (r["speedup_lo"], r["speedup_hi"]) for r in unch)))
    lines.append("- Kernels slower than stock (95 %% interval below 1): %s%s (target: none: %s)" % (
        ", ".join(slow) if slow else "none", "; " + "; ".join(detail) if detail else "",
        "met" if not slow else "**not met**"))
    if ran:
        mx = max(t["wall_s"] for t in ran)
        bud = [t.get("budget_s") or 0 for t in ran]
        lines.append("- Longest tuning: %.0f s, with budgets of %s (target <= %.0f s per kernel: %s%s)" % (
            mx, "%.0f s" % max(bud) if min(bud) == max(bud) else "%.0f to %.0f s" % (min(bud), max(bud)),
            TARGET_TUNE_S, "met" if mx <= TARGET_TUNE_S else "**not met**",
            ", trivially: the budgets were far below it" if max(bud) <= TARGET_TUNE_S / 4 and mx <= TARGET_TUNE_S else ""))
    lines += agreement(m)
    not_m = [r for r in rs if not measured(r)]
    if not_m:
        lines.append("- Not measured: %d of %d kernels (%s); the targets cover only the measured ones." % (
            len(not_m), len(rs), where))
    return lines


def agreement(m):
    """Issue 16: the tuner's confirmed ratio against compare's re-measure, kernel by kernel."""
    conf = [r for r in m if r["status"] == "tuned" and (r.get("tune") or {}).get("confirmed")
            and (r.get("tune") or {}).get("ratio")]
    if not conf:
        return []
    d = [(r["case"], r["tune"]["ratio"] / r["speedup"] - 1) for r in conf]
    ok = sum(abs(x) <= 0.003 for _, x in d)
    return ["- The tuner's confirmed ratio against the re-measure (tuner / compare - 1; target: within 0.3 %% on "
            ">= 90 %%): %d of %d within (%s): %s" % (
                ok, len(d), "met" if ok >= 0.9 * len(d) else "**not met**",
                ", ".join("%s %+.2f %%" % (c, 100 * x) for c, x in d))]


def latest(runs):
    """One result per kernel over several runs: its last measurement, else its last result."""
    by = {}
    for run in runs:
        for r in run["results"]:
            if measured(r) or not measured(by.get(r["case"], {})):
                by[r["case"]] = dict(r, _date=run["run"].get("date"))
    return list(by.values())


def hhmm(run):
    d = run["run"].get("date") or "?"
    return d.split()[1] if len(d.split()) > 1 else d


def chart(groups, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [(dev, [(run, r) for run in runs for r in run["results"] if measured(r)]) for dev, runs in groups]
    panels = [(dev, items) for dev, items in panels if items]
    if not panels:
        return False
    h = sum(0.9 + 0.38 * len(items) for _, items in panels) + 0.8
    fig, axes = plt.subplots(len(panels), 1, figsize=(8.5, h), squeeze=False)
    for ax, (dev, items) in zip(axes[:, 0], panels):
        names, vals, lo, hi, colors = [], [], [], [], []
        for run, r in items:
            names.append("%s  %s%s" % (r["case"], r.get("shape", ""),
                                       "  (%s)" % hhmm(run) if len(dict(groups)[dev]) > 1 else ""))
            vals.append(r["speedup"])
            lo.append(r["speedup"] - r["speedup_lo"])
            hi.append(r["speedup_hi"] - r["speedup"])
            colors.append("#b0b0b0" if r["status"] == "unchanged" else "#d04040" if slower(r) else
                          "#a8d5b0" if r["speedup_lo"] <= 1.0 else "#3a8f4a")
        y = list(range(len(names)))[::-1]
        ax.barh(y, [v - 1 for v in vals], left=1, color=colors, xerr=[lo, hi], capsize=3, height=0.6)
        for yy, (run, r), v, e in zip(y, items, vals, hi):
            label = "unchanged" if r["status"] == "unchanged" else "%.3f" % v
            ax.text(max(v, 1.0) + e + 0.002, yy, label, va="center", fontsize=7)
        ax.axvline(1.0, color="black", lw=0.8)
        ax.axvline(TARGET_GEOMEAN, color="#3a6fd0", lw=0.8, ls="--")
        ax.axvspan(1 - NOISE, 1 + NOISE, color="#e8e8e8", zorder=0)
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        span = max([abs(v - 1) + e for v, e in zip(vals, hi)] + [TARGET_GEOMEAN - 1 + 0.01, 0.02])
        low = max([1 - (v - l) for v, l in zip(vals, lo)] + [NOISE, 0.01])
        ax.set_xlim(1 - low * 1.5, 1 + span * 1.25 + 0.01)
        g = geomean([effective_speedup(r) for _, r in items])
        n_not = sum(1 for r in latest(dict(groups)[dev]) if not measured(r))
        ax.set_title("%s: speedup over the ptxas schedule\n(geomean %.3f%s)" % (
            dev, g, ", %d kernel%s not measured" % (n_not, "s" * (n_not != 1)) if n_not else ""), fontsize=10)
        ax.set_xlabel("time(stock) / time(tuned), 95 % interval; grey band: A/A noise; dashed: the 1.05 target\n"
                      "green: interval above 1; pale green: interval includes 1; red: below 1; grey: unchanged",
                      fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True


def chart_variants(groups, png):
    """Three bars per kernel: best variant, best variant + SASS search (the default), SASS search alone."""
    items = [r for _, runs in groups for run in runs for r in run["results"]
             if measured(r) and (r.get("variants") or {}).get("ran") and not r["variants"].get("error")]
    if not items:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8.5, 1.2 + 0.62 * len(items)))
    kinds = [("variant", "best variant", "#e0a040"), ("variant_sass", "variant + SASS search (default)", "#3a8f4a"),
             ("sass", "SASS search alone", "#4a6fd0")]
    for k, (key, label, color) in enumerate(kinds):
        ys, vals, lo, hi = [], [], [], []
        for i, r in enumerate(items):
            c = r["variants"].get(key) if key != "sass" else {
                "speedup": r["speedup"], "speedup_lo": r["speedup_lo"], "speedup_hi": r["speedup_hi"], "status": r["status"]}
            v = col_speedup(c)
            if v is None:
                continue
            exact = c.get("status") in ("stock kept", "unchanged")
            ys.append((len(items) - 1 - i) * 1.0 + (1 - k) * 0.26)
            vals.append(v)
            lo.append(0 if exact else v - c["speedup_lo"])
            hi.append(0 if exact else c["speedup_hi"] - v)
        ax.barh(ys, [v - 1 for v in vals], left=1, height=0.24, color=color, xerr=[lo, hi], capsize=2, label=label)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.axvline(TARGET_GEOMEAN, color="#3a6fd0", lw=0.8, ls="--")
    ax.axvspan(1 - NOISE, 1 + NOISE, color="#e8e8e8", zorder=0)
    ax.set_yticks([len(items) - 1 - i for i in range(len(items))])
    ax.set_yticklabels([r["case"] for r in items], fontsize=8)
    ax.set_title("compile variants and the SASS search: speedup over stock Triton", fontsize=10)
    ax.set_xlabel("time(stock) / time(column), 95 % interval; grey band: A/A noise; dashed: the 1.05 target", fontsize=8)
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True


def all_cases():
    sys.path.insert(0, HERE)
    import kernels as K
    return [c.name for c in K.CASES]


def kernels_table():
    sys.path.insert(0, HERE)
    import kernels as K
    return "\n".join("| `%s`%s | %s | %s |" % (c.name, " (quick)" if c.quick else "", c.title, c.shape) for c in K.CASES)


def render(runs, png_name, notes=None):
    notes = notes or {}
    out = ["# Benchmarks", "",
           "The suite in `bench/` measures what sasstune does to Triton kernels that users run, on the GPU:",
           "each kernel stock (ptxas's schedule, as Triton builds it) against the same kernel tuned by",
           "`sasstune tune`, with the measurement repeated apart from the tuner, and the stock kernel against",
           "cuBLAS (matmuls), torch SDPA (attention) or a device copy of the same bytes (memory-bound kernels).",
           "Targets: a geometric mean speedup of at least %.2f over the ptxas schedule with no kernel slower,"
           % TARGET_GEOMEAN,
           "at most %.0f minutes of tuning per kernel." % (TARGET_TUNE_S / 60), ""]
    out.append("## Results")
    out.append("")
    gpu_runs = [r for r in runs if not r["run"].get("compile_only")]
    if not gpu_runs:
        out += ["**No results are recorded yet**: the suite has not been run on a GPU since it was written.",
                "To make them, run the commands under *How to run* on a GPU machine and commit the page",
                "and chart that `bench/report.py` writes.", ""]
    groups = {}
    for run in gpu_runs:
        groups.setdefault(device_of(run), []).append(run)
    groups = sorted(groups.items())
    for dev, rs in groups:
        out.append("### %s" % dev)
        out.append("")
        for run in rs:
            m = run["run"]
            git = m.get("git") or {}
            commit = ("sasstune %s%s" % (git["commit"], " with local changes" if git.get("dirty") else "")
                      if git.get("commit") else "no git commit recorded")
            out.append("Made on %s by `%s` (%s, tuning budget %.0f s%s; %s)." % (
                m.get("date", "?"), m.get("command", "?"), commit,
                m.get("budget_s", 0), ", time box %.0f s" % m["time_limit_s"] if m.get("time_limit_s") else "",
                "total %.0f s" % m["wall_s"] if m.get("wall_s") else ""))
            rel = os.path.relpath(os.path.abspath(run["path"]), ROOT)
            if not rel.startswith(".."):
                out.append("Data: `%s`." % rel)
            st = next((r.get("stock", {}).get("versions") for r in run["results"] if r.get("stock", {}).get("versions")), None)
            if st:
                out.append("Software: " + ", ".join("%s %s" % kv for kv in sorted(st.items())) + ".")
            if not m.get("tune_available", True):
                out.append("")
                out.append("**No tuning in this run**: %s." % m.get("tune_unavailable_because"))
            left_out = [c for c in all_cases() if c not in m.get("kernels", [])]
            if left_out and m.get("kernels"):
                out.append("")
                out.append("This run covered %d of the suite's %d kernels%s; not run: %s." % (
                    len(m["kernels"]), len(all_cases()), " (`--quick`)" if m.get("quick") else "",
                    ", ".join("`%s`" % c for c in left_out)))
            if notes.get(m.get("date")):
                out.append("")
                out.append("<!-- notes on the run of %s -->" % m["date"])
                out.append(notes[m["date"]].rstrip("\n"))
                out.append("<!-- end of notes -->")
            out.append("")
            out.append("| kernel | shape | stock | tuned | speedup [95 %] | tuning | steps/s | method | baseline "
                       "| stock [95 %] / tuned, of the baseline's speed |")
            out.append("|---|---|---|---|---|---|---|---|---|---|")
            for r in run["results"]:
                out.append(row(r))
            out.append("")
            out += targets(run["results"])
            out.append("")
            vrows = variants_rows(run["results"])
            if vrows:
                out.append("Compile variants (docs/variants.md): the same PTX through other ptxas binaries and "
                           "options, each verified bit for bit and timed against stock; every column re-measured "
                           "apart from its tuner by `sasstune compare` (400 pairs):")
                out.append("")
                out += vrows
            skipped = [r for r in run["results"] if not measured(r)]
            if skipped:
                out.append("Not measured stock against tuned:")
                out.append("")
                for r in skipped:
                    out.append("- `%s` (%s): %s" % (r["case"], r.get("status"), r.get("reason") or
                                                    (r.get("tune") or {}).get("error") or "see its folder"))
                out.append("")
        if len(rs) > 1:
            comb = latest(rs)
            out.append("#### Targets over the %d runs above" % len(rs))
            out.append("")
            out.append("Each kernel counted once, with its last measurement (runs of %s); the targets of each run "
                       "are under its table." % ", ".join(r["run"].get("date", "?") for r in rs))
            out.append("")
            out += targets(comb, "%s; the reasons are in each run's list above" % ", ".join("`%s`" % r["case"] for r in comb
                                                                      if not measured(r)))
            vrows = variants_rows(comb)
            if vrows:
                out.append("Compile variants over the %d runs (each kernel once):" % len(rs))
                out.append("")
                out += vrows
            never = [c for c in all_cases() if c not in {r["case"] for r in comb}]
            if never:
                out.append("- Not run at all on this GPU: %s." % ", ".join("`%s`" % c for c in never))
            out.append("")
        out.append("")
    if groups and png_name:
        out.append("![speedups](%s)" % png_name)
        out.append("")
    if gpu_runs:
        out.append(COLUMNS)
    for run in [r for r in runs if r["run"].get("compile_only")]:
        m = run["run"]
        out.append("### Without a GPU: compiled for sm_90 (%s)" % m.get("date"))
        out.append("")
        out.append("`%s` (sasstune %s): every kernel compiled by Triton %s for `GPUTarget(\"cuda\", 90, 32)`, its "
                   "launch spec checked against the PTX entry and by the runtime's parser, and `sasstune inspect` "
                   "asked whether it can rewrite it.%s" % (
                       m.get("command"), (m.get("git") or {}).get("commit", "?"),
                       next((r["stock"]["versions"].get("triton") for r in run["results"]
                             if (r.get("stock") or {}).get("versions")), "?"),
                       " Tuned against the static cost model: predictions, never timed." if m.get("reward") == "model" else ""))
        out.append("")
        model = m.get("reward") == "model"
        out.append("| kernel | shape | cubin | instructions | launch spec | rewritable |" + (" predicted speedup | steps/s |" if model else ""))
        out.append("|---|---|---|---|---|---|" + ("---|---|" if model else ""))
        for r in run["results"]:
            st = r.get("stock") or {}
            spec = st.get("spec") or {}
            if st.get("error"):
                sp_txt = "compile failed: %s" % st["error"]
            elif spec.get("ok"):
                sp_txt = "ok"
            else:
                sp_txt = "**no**: %s" % spec.get("reason", "?")
            rw = {True: "yes", False: "**no**: %s" % r.get("rewritable_why"), None: "–"}[r.get("rewritable")]
            line = "| `%s` | %s | %s | %s | %s | %s |" % (
                r["case"], r.get("shape", ""), "%d B" % st["cubin_bytes"] if st.get("cubin_bytes") else "–",
                r.get("instructions") or "–", sp_txt, rw)
            if model:
                t = r.get("tune") or {}
                line += " %s | %s |" % ("%.4f" % t["model_ratio"] if t.get("model_ratio") else "–",
                                        "%.1f" % t["steps_per_s"] if t.get("steps_per_s") else "–")
            out.append(line)
        out.append("")
    out.append(HOWTO.replace("{kernels}", kernels_table()))
    return "\n".join(out).rstrip() + "\n", groups


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", help="bench/run.py --out folders")
    ap.add_argument("--md", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--png", default=None, help="the chart (default: benchmarks.png beside --md)")
    ap.add_argument("--none", action="store_true", help="write the page with no results")
    ap.add_argument("--note", action="append", default=[],
                    help="a paragraph of notes on the run given last (repeatable); the notes the page already has on "
                         "the other runs (and on that one, without --note) are kept")
    a = ap.parse_args(argv)
    if not a.dirs and not a.none:
        ap.error("give a results folder (or --none)")
    runs = load(a.dirs) if a.dirs else []
    notes, peers = kept_notes(a.md), kept_peers(a.md)
    if a.note:
        if not runs:
            ap.error("--note goes with a run")
        notes[runs[-1]["run"].get("date")] = "\n\n".join(a.note)
    png = a.png or os.path.join(os.path.dirname(os.path.abspath(a.md)), "benchmarks.png")
    os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    link = os.path.relpath(os.path.abspath(png), os.path.dirname(os.path.abspath(a.md)))
    text, groups = render(runs, link, notes)
    drew = chart(groups, png) if groups else False
    vpng = png[:-4] + "-variants.png" if png.endswith(".png") else png + "-variants.png"
    if groups and chart_variants(groups, vpng):
        text = text.replace("![speedups](%s)\n" % link,
                            "![speedups](%s)\n\n![compile variants](%s)\n" % (link, os.path.basename(vpng)))
    if groups and not drew:
        text = text.replace("![speedups](%s)\n" % link, "")
    os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
    open(a.md, "w").write(text + peers)
    print(a.md + (" " + png if drew else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
