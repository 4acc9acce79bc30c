#!/usr/bin/env python3
"""The headroom table (docs/profile.md): for every bench kernel, where its time goes and how far
it is from its baseline.

    python3 bench/headroom.py DIR [--doc docs/profile.md]

DIR/<kernel>/stock.json is bench/stock.py's output (the stock Triton kernel timed against its
baseline: a device copy of the same bytes, cuBLAS or torch SDPA) and DIR/<kernel>/profile.json is
`sasstune profile DIR/<kernel>/stock.cubin --launch DIR/<kernel>/launch.json --json`.  Stall
reasons are grouped by what a schedule can do about them:

  latency     long_sb, short_sb, wait, branch: a warp waits on a producer or a fixed latency;
              moving the producer earlier or filling the slots in front of the consumer can hide it
  throughput  lg_throttle, mio_throttle, tex_throttle, math_pipe, drain, membar, imc_miss: a
              memory or math pipe is full; reordering does not add bandwidth
  issue       selected, not_selected, dispatch: the scheduler is busy issuing (compute-bound)
  sync        barrier, sleeping: waiting for other warps
  other       no_inst, misc, and the rest

Prints the markdown table; with --doc, replaces what lies between the lines
`<!-- headroom:begin -->` and `<!-- headroom:end -->` in that file.
"""
import argparse
import json
import os
import sys

GROUPS = {
    "latency": ("long_sb", "short_sb", "wait", "branch"),
    "throughput": ("lg_throttle", "mio_throttle", "tex_throttle", "math_pipe", "drain", "membar", "imc_miss"),
    "issue": ("selected", "not_selected", "dispatch"),
    "sync": ("barrier", "sleeping"),
}


def group_of(reason):
    for g, names in GROUPS.items():
        if reason in names:
            return g
    return "other"


def row(name, stock, prof):
    cells = {"kernel": name}
    b = (stock or {}).get("baseline") or {}
    if "base_speed" in b:
        cells["stock_ms"] = "%.4f" % b["triton_ms"]
        cells["base"] = "%s %.4f ms" % (b.get("label", "").split(" (")[0], b["base_ms"])
        cells["ratio"] = "%.2f" % b["base_speed"]
    elif stock and stock.get("error"):
        cells["base"] = "stock failed: " + stock["error"][:60]
    elif b.get("error"):
        cells["base"] = "baseline failed: " + b["error"][:60]
    if prof:
        r = prof.get("reasons", {})
        g = {}
        for k, v in r.items():
            g[group_of(k)] = g.get(group_of(k), 0) + v
        cells["top"] = ", ".join("%s %.0f%%" % (k, 100 * v) for k, v in sorted(r.items(), key=lambda kv: -kv[1])[:3])
        for k in ("latency", "throughput", "issue", "sync", "other"):
            cells[k] = "%.0f%%" % (100 * g.get(k, 0))
        hot = prof.get("top", [])[:1]
        if hot:
            ins = {i["offset"]: i for i in prof.get("instructions", [])}
            h = ins.get(hot[0], {})
            cells["hot"] = "`%04x %s` %.0f%%" % (hot[0], h.get("opcode", "?"), 100 * h.get("share", 0))
    elif prof is None:
        cells["top"] = "(no profile)"
    return cells


COLS = [("kernel", "kernel"), ("stock_ms", "stock ms"), ("base", "baseline"), ("ratio", "stock/baseline time"),
        ("latency", "latency"), ("throughput", "throughput"), ("issue", "issue"), ("sync", "sync"),
        ("other", "other"), ("top", "top reasons"), ("hot", "hottest instruction")]


def table(d):
    names = sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n)))
    out = ["| " + " | ".join(h for _, h in COLS) + " |", "|" + "---|" * len(COLS)]
    for n in names:
        def load(f):
            p = os.path.join(d, n, f)
            try:
                return json.load(open(p))
            except (OSError, ValueError):
                return None
        stock, prof = load("stock.json"), load("profile.json")
        if stock is None and prof is None:
            continue
        c = row(n, stock, prof)
        out.append("| " + " | ".join(c.get(k, "") for k, _ in COLS) + " |")
    return "\n".join(out) + "\n"


def replace_between(path, text):
    doc = open(path).read()
    b, e = "<!-- headroom:begin -->", "<!-- headroom:end -->"
    i, j = doc.find(b), doc.find(e)
    if i < 0 or j < i:
        raise SystemExit("%s: no %s ... %s section" % (path, b, e))
    open(path, "w").write(doc[:i + len(b)] + "\n" + text + doc[j:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--doc", default=None)
    a = ap.parse_args(argv)
    t = table(a.dir)
    sys.stdout.write(t)
    if a.doc:
        replace_between(a.doc, t)


if __name__ == "__main__":
    sys.exit(main())
