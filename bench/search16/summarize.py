#!/usr/bin/env python3
"""Tables of test/gpu/calls/search16.sh (issue 16) from its results folder R:
  1. methods at equal wall time on the fixtures: the tuner's confirmed ratio [95 %] (the race's fresh
     final batch), the independent re-measure (`sasstune compare`, inverted to original/tuned), steps,
     steps/s, the search's own ms per step against one evaluation's ms, the race's pairs;
  2. the racing check: |tuner - re-measure| <= 0.3 % on how many confirmed results (fixtures and bench);
  3. wins per fixture (by re-measured ratio; an unconfirmed run is the original, 1.0).
Usage: summarize.py R   (markdown on stdout)."""
import glob
import json
import os
import sys


def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return None


def remeasure(c):
    """compare's B/A ratio and interval, inverted to original/tuned."""
    if not c or "ratio" not in c:
        return None
    return 1.0 / c["ratio"], 1.0 / c["ci_hi"], 1.0 / c["ci_lo"]


def cell(t, rm):
    if t is None:
        return "failed"
    # search = the search thread's own ms a step; work adds PPO's update time overlapped on its worker
    own, ev = t.get("search_ms_per_step", 0), t.get("eval_ms", 0)
    work = t.get("search_work_ms_per_step", own)
    base = "%d steps, %.1f/s, search %.2f ms/step (work %.2f), eval %.2f ms, search/eval %.0f %%" % (
        t.get("steps", 0), t.get("steps_per_s", 0), own, work, ev, 100 * own / ev if ev else 0)
    if not t.get("improved"):
        return "no (best quick %.4f); %s" % (t.get("best_quick_ratio", 1), base)
    s = "%.4f [%.4f, %.4f]" % (t["ratio"], t["ratio_lo"], t["ratio_hi"])
    if rm:
        s += " / re-measured %.4f [%.4f, %.4f]" % rm
    return "%s; race %d cand., %d pairs; %s" % (s, t.get("race_candidates", 0), t.get("confirm_pairs_spent", 0), base)


def main(R):
    rows, checks, wins = [], [], {}
    fixtures = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(os.path.join(R, "methods", "*.json"))
                       if ".compare." not in p})
    methods = ["random", "ppo", "greedy"]
    print("## (a) methods at equal wall time, GPU reward, seed 1\n")
    print("| fixture | " + " | ".join(methods) + " |")
    print("|---|" + "---|" * len(methods))
    for f in fixtures:
        cells, score = [], {}
        for m in methods:
            t = load(os.path.join(R, "methods", "%s.%s.json" % (f, m)))
            rm = remeasure(load(os.path.join(R, "methods", "%s.%s.compare.json" % (f, m))))
            cells.append(cell(t, rm))
            if t is not None:
                score[m] = rm[0] if (t.get("improved") and rm) else 1.0
            if t and t.get("improved") and rm:
                checks.append(("fixture " + f, m, t["ratio"], rm[0]))
        if score:
            best = max(score.values())
            wins[f] = [m for m, v in score.items() if v == best and v > 1.0] or ["none (all kept the original)"]
        print("| %s | %s |" % (f, " | ".join(cells)))
    print("\nWins by re-measured ratio (unconfirmed = 1.0):")
    for f, w in wins.items():
        print("* %s: %s" % (f, ", ".join(w)))
    for d in sorted(glob.glob(os.path.join(R, "bench", "*", "tune.json"))):
        k = os.path.basename(os.path.dirname(d))
        t = load(d)
        rm = remeasure(load(os.path.join(os.path.dirname(d), "compare.json")))
        print("\nbench %s: %s" % (k, cell(t, rm)))
        if t and t.get("improved") and rm:
            checks.append(("bench " + k, t.get("method", "?"), t["ratio"], rm[0]))
    print("\n## (b) racing: the tuner's confirmed ratio against the independent re-measure\n")
    print("| kernel | method | tuner | re-measured | difference | within 0.3 % |")
    print("|---|---|---|---|---|---|")
    ok = 0
    for k, m, a, b in checks:
        d = a / b - 1
        ok += abs(d) <= 0.003
        print("| %s | %s | %.4f | %.4f | %+.2f %% | %s |" % (k, m, a, b, 100 * d, "yes" if abs(d) <= 0.003 else "no"))
    print("\nwithin 0.3 %%: %d of %d confirmed results" % (ok, len(checks)))
    n = sum(1 for _ in glob.glob(os.path.join(R, "logs", "*.jsonl")))
    lines = sum(sum(1 for _ in open(p)) for p in glob.glob(os.path.join(R, "logs", "*.jsonl")))
    print("\neval logs: %d files, %d evaluations" % (n, lines))


if __name__ == "__main__":
    main(sys.argv[1])
