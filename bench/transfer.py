#!/usr/bin/env python3
"""Does a learned cost model transfer?  Leave-one-kernel-out over `sasstune tune --log-evals` logs.

Each log line is one GPU evaluation of a candidate schedule: its descriptor `f` (the summed feature
rows of its moves, schema sasstune-features-1, docs/search.md), the number of moves, the static cost
model's ratio, and the measured ratio original/candidate (docs/tune.md, --log-evals).  Candidates
measured several times are merged (pairs-weighted mean of ln ratio).  For every kernel K (grouped by
kernel name, so a fixture and a bench build of the same kernel leave together):

  * train a ridge regression (standardised inputs: f, ln model_ratio, moves) on every other kernel's
    candidates, target ln(measured ratio);
  * on K: Spearman's rho between the prediction and the measured ratio (and, as a reference, the
    static cost model's rho alone);
  * the zero-GPU pick: K's candidate the model rates best, its measured gain, against the online
    search's confirmed gain on K (the best accepted final batch in K's logs: kind "final" with a 95 %
    low end above --confirm-min).

Caveats printed with the table: the candidates are the ones the online search visited (the pick is
"rank what the search saw", not a search of its own), and most measurements are 30-pair quick ones.
Usage: transfer.py LOG.jsonl... [--lam 1.0] [--confirm-min 1.005] [--json OUT.json]"""
import argparse
import collections
import json
import math
import sys

import numpy as np


def load(paths):
    """{kernel: [(x, y, weight)]} with x = f + [ln model_ratio, moves], y = ln ratio; plus finals."""
    acc = collections.defaultdict(lambda: [0.0, 0.0, None])  # key -> [sum w*y, sum w, x]
    finals = collections.defaultdict(list)
    for p in paths:
        for line in open(p):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("status") != "ok" or not d.get("f") or not d.get("ratio"):
                continue
            k = d.get("kernel") or d.get("cubin")
            if d.get("kind") == "final":
                finals[k].append((d["ratio"], d["lo"], d["hi"]))
            if d.get("moves", 0) == 0:
                continue  # the original itself
            mr = d.get("model_ratio") or 1.0
            x = tuple(d["f"]) + (math.log(mr) if mr > 0 else 0.0, float(d["moves"]))
            w = float(d.get("pairs") or 1)
            a = acc[(k, d.get("cubin"), x)]
            a[0] += w * math.log(d["ratio"])
            a[1] += w
            a[2] = x
    data = collections.defaultdict(list)
    for (k, _c, _x), (sy, sw, x) in acc.items():
        data[k].append((np.array(x, dtype=float), sy / sw, sw))
    return data, finals


def ranks(v):
    order = np.argsort(v, kind="mergesort")
    r = np.empty(len(v))
    r[order] = np.arange(len(v))
    vs = v[order]
    i = 0
    while i < len(v):  # average ties
        j = i
        while j + 1 < len(v) and vs[j + 1] == vs[i]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 3:
        return float("nan")
    ra, rb = ranks(np.asarray(a, float)), ranks(np.asarray(b, float))
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def ridge(X, y, w, lam):
    mu, sd = X.mean(0), X.std(0)
    sd[sd == 0] = 1.0
    Z = (X - mu) / sd
    ym = np.average(y, weights=w)
    W = np.sqrt(w)[:, None]
    A = (Z * W).T @ (Z * W) + lam * np.eye(Z.shape[1])
    beta = np.linalg.solve(A, (Z * W).T @ ((y - ym) * W[:, 0]))
    return lambda Xn: ((Xn - mu) / sd) @ beta + ym


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--lam", type=float, default=1.0)
    ap.add_argument("--confirm-min", type=float, default=1.005)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    data, finals = load(a.logs)
    kernels = sorted(k for k in data if len(data[k]) >= 3)
    rows = []
    print("| left-out kernel | candidates | train | Spearman (learned) | Spearman (static model) | "
          "pick: measured | online confirmed | pick / confirmed gain |")
    print("|---|---|---|---|---|---|---|---|")
    for k in kernels:
        train = [t for o in kernels if o != k for t in data[o]]
        if len(train) < 10:
            continue
        X = np.array([t[0] for t in train])
        y = np.array([t[1] for t in train])
        w = np.array([t[2] for t in train])
        f = ridge(X, y, w, a.lam)
        Xk = np.array([t[0] for t in data[k]])
        yk = np.array([t[1] for t in data[k]])
        pred = f(Xk)
        rho = spearman(pred, yk)
        rho_model = spearman(Xk[:, -2], yk)
        pick = float(np.exp(yk[int(np.argmax(pred))]))
        acc = [r for r in finals.get(k, []) if r[1] > a.confirm_min]
        conf = max((r[0] for r in acc), default=None)
        frac = (math.log(pick) / math.log(conf)) if conf and conf > 1 else None
        rows.append({"kernel": k, "candidates": len(yk), "train": len(y), "spearman": rho,
                     "spearman_static_model": rho_model, "pick_ratio": pick, "confirmed": conf,
                     "pick_fraction_of_confirmed": frac})
        print("| %s | %d | %d | %.2f | %.2f | %.4f | %s | %s |" % (
            k, len(yk), len(y), rho, rho_model, pick, "%.4f" % conf if conf else "none confirmed",
            "%.0f %%" % (100 * frac) if frac is not None else "-"))
    good = [r for r in rows if r["spearman"] >= 0.5 or (r["pick_fraction_of_confirmed"] or 0) >= 0.5]
    print("\nkernels where transfer is shown (Spearman >= 0.5, or the pick gives >= half the confirmed "
          "gain): %d of %d" % (len(good), len(rows)))
    print("caveats: the candidates are those the online search visited; their ratios are mostly "
          "30-pair quick measurements (noise ~1 %); the pick's ratio is that noisy measurement.")
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
