#!/usr/bin/env python3
"""Compare `sasstune profile --json` with Nsight Compute's source page on the same cubin.

    python3 test/gpu/profile_ncu.py PROFILE.json NCU.csv [--name NAME] [--json OUT.json]

NCU.csv is `ncu --section SourceCounters --section WarpStateStats --page source --print-source sass
--csv ...` on one launch of the kernel.  Per instruction: sasstune's share of the kernel's samples
against ncu's "Warp Stall Sampling (All Samples)" share.  Instructions are matched by position when
both list the same number, else by offset (ncu's address minus the first one).  Prints one line
(Pearson correlation of the shares, top-10 overlap, sample counts) and writes it as JSON.
"""
import argparse
import csv
import json
import math
import sys


def read_ncu(path):
    """[(offset or None, samples)] from the source page CSV (header found by its columns)."""
    rows = list(csv.reader(open(path, newline="", errors="replace")))
    for i, r in enumerate(rows):
        cols = [c.strip() for c in r]
        samp = [j for j, c in enumerate(cols) if c.startswith("Warp Stall Sampling (All")]
        addr = [j for j, c in enumerate(cols) if "Address" in c]
        if samp:
            break
    else:
        raise SystemExit("%s: no 'Warp Stall Sampling (All Samples)' column" % path)
    s_col, a_col = samp[0], addr[0] if addr else None
    out = []
    for r in rows[i + 1:]:
        if len(r) <= s_col:
            continue
        if r[s_col].strip() in ("", "Warp Stall Sampling (All Samples)"):
            continue
        try:
            n = float(r[s_col].replace(",", ""))
        except ValueError:
            continue
        off = None
        if a_col is not None and a_col < len(r):
            try:
                off = int(r[a_col].strip(), 16)
            except ValueError:
                off = None
        out.append((off, n))
    if out and all(o is not None for o, _ in out):
        base = min(o for o, _ in out)
        out = [(o - base, n) for o, n in out]
    return out


def pearson(x, y):
    n = len(x)
    if n < 2:
        return float("nan")
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def compare(prof, ncu):
    ins = prof["instructions"]
    ours = {i["offset"]: i["samples"] for i in ins}
    if len(ncu) == len(ins):
        theirs = {ins[k]["offset"]: n for k, (_, n) in enumerate(ncu)}
        how = "position"
    else:
        theirs = {o: n for o, n in ncu if o is not None}
        how = "offset"
    offs = sorted(set(ours) | set(theirs))
    ta, tb = sum(ours.values()) or 1, sum(theirs.values()) or 1
    x = [ours.get(o, 0) / ta for o in offs]
    y = [theirs.get(o, 0) / tb for o in offs]
    top = lambda d: set(sorted((o for o in d if d[o] > 0), key=lambda o: -d[o])[:10])
    ta10, tb10 = top(ours), top(theirs)
    return {"matched_by": how, "instructions": len(ins), "ncu_rows": len(ncu),
            "sasstune_samples": sum(ours.values()), "ncu_samples": sum(theirs.values()),
            "share_correlation": pearson(x, y), "top10_overlap": len(ta10 & tb10),
            "top10_sizes": [len(ta10), len(tb10)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("ncu_csv")
    ap.add_argument("--name", default="")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    r = compare(json.load(open(a.profile)), read_ncu(a.ncu_csv))
    r["name"] = a.name
    print("%s: correlation %.3f, top-10 overlap %d/%d, samples sasstune %d ncu %d (matched by %s, %d/%d rows)" % (
        a.name, r["share_correlation"], r["top10_overlap"], min(r["top10_sizes"]) if r["top10_sizes"] else 0,
        r["sasstune_samples"], r["ncu_samples"], r["matched_by"], r["ncu_rows"], r["instructions"]))
    if a.json:
        json.dump(r, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
