#!/usr/bin/env python3
"""Join walks.jsonl (the cost model's ratios) with run.json (GPU times) per fixture under OUT and
compare the rankings: Spearman's rho between predicted and measured speed-ups, the fraction of
candidate pairs ordered alike (over pairs the GPU separates by more than 0.5 %, the A/A band),
and the anchors.  Prints markdown; writes OUT/ranking.json.  Usage: rank.py OUT"""
import json
import os
import sys


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va > 0 and vb > 0 else None


def main():
    out = sys.argv[1]
    rows, report = [], {}
    for name in sorted(os.listdir(out)):
        d = os.path.join(out, name)
        wj, rj = os.path.join(d, "walks.jsonl"), os.path.join(d, "run.json")
        if not (os.path.isfile(wj) and os.path.isfile(rj)):
            continue
        walks = {os.path.basename(w["path"]): w for w in map(json.loads, open(wj))}
        try:
            run = json.load(open(rj))
        except ValueError:
            report[name] = {"error": "run.json is not JSON: " + open(os.path.join(d, "run.err")).read()[-300:].strip()}
            continue
        cands = []
        bad = {}
        for c in run.get("candidates", []):
            w = walks.get(os.path.basename(c["path"]))
            if not w:
                continue
            if c["status"] != "ok":
                bad[w["name"]] = c["status"] + ": " + c.get("message", "")
                continue
            if "ratio" not in c:
                continue
            cands.append({"name": w["name"], "bias": w["bias"], "moves": w["moves"], "model": w["model_ratio"],
                          "gpu": 1.0 / c["ratio"], "gpu_lo": 1.0 / c["ci_hi"], "gpu_hi": 1.0 / c["ci_lo"]})
        model = [c["model"] for c in cands]
        gpu = [c["gpu"] for c in cands]
        rho = spearman(model, gpu)
        agree = total = 0
        for i in range(len(cands)):
            for j in range(i + 1, len(cands)):
                dg = gpu[i] - gpu[j]
                if abs(dg) < 0.005 * max(gpu[i], gpu[j]):
                    continue
                total += 1
                agree += (model[i] - model[j]) * dg > 0
        anchors = {c["name"]: (c["model"], c["gpu"]) for c in cands if c["bias"].startswith("anchor")}
        walks_only = [c for c in cands if not c["bias"].startswith("anchor")]
        rho_walks = spearman([c["model"] for c in walks_only], [c["gpu"] for c in walks_only])
        report[name] = {"candidates": len(cands), "rejected": bad, "spearman": rho, "spearman_walks": rho_walks,
                        "pairs_separated": total, "pairs_agree": agree, "anchors": anchors, "rows": cands,
                        "gpu_spread": [min(gpu), max(gpu)] if gpu else None,
                        "model_spread": [min(model), max(model)] if model else None}
    json.dump(report, open(os.path.join(out, "ranking.json"), "w"), indent=1)
    print("| fixture | timed | rejected | Spearman (all) | Spearman (walks) | pairs ordered alike (GPU apart > 0.5 %) | GPU speed-up range | model range | all yields cleared: model / GPU | all set: model / GPU |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    f = lambda x: "n/a" if x is None else "%.2f" % x
    for name, r in report.items():
        if "error" in r:
            print("| %s | error: %s |" % (name, r["error"]))
            continue
        a = r["anchors"]
        ac = a.get("yield_all_cleared")
        aset = a.get("yield_all_set")
        print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            name, r["candidates"], len(r["rejected"]), f(r["spearman"]), f(r["spearman_walks"]),
            "%d/%d" % (r["pairs_agree"], r["pairs_separated"]) if r["pairs_separated"] else "none separated",
            "%.4f-%.4f" % tuple(r["gpu_spread"]) if r["gpu_spread"] else "n/a",
            "%.4f-%.4f" % tuple(r["model_spread"]) if r["model_spread"] else "n/a",
            "%.4f / %.4f" % ac if ac else "n/a", "%.4f / %.4f" % aset if aset else "n/a"))
    for name, r in report.items():
        for k, v in (r.get("rejected") or {}).items():
            print("\n%s %s was rejected on the GPU (a legality-model bug to report): %s" % (name, k, v))


if __name__ == "__main__":
    main()
