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


def seeds_of(R):
    """Seed suffixes present: '' (seed 1) and '.sN' (seed N)."""
    sfx = {""}
    for p in glob.glob(os.path.join(R, "methods", "*.json")):
        parts = os.path.basename(p).split(".")
        if len(parts) >= 4 and parts[2].startswith("s") and parts[2][1:].isdigit() and parts[3] == "json":
            sfx.add("." + parts[2])
    return sorted(sfx, key=lambda x: int(x[2:]) if x else 1)


def tally(wins, methods):
    """Per method: on how many (fixture, seed) cases it had the best re-measured ratio alone, shared
    the best (ties, the all-original case included), or was beaten."""
    print("\nPer method over %d fixture x seed cases (best re-measured ratio; unconfirmed = 1.0):" % len(wins))
    for m in methods:
        alone = sum(1 for w in wins.values() if w == [m])
        tied = sum(1 for w in wins.values() if m in w and len(w) > 1)
        print("* %s: best alone %d, tied for best %d, beaten %d" % (m, alone, tied, len(wins) - alone - tied))


def main(R):
    rows, checks, wins = [], [], {}
    fixtures = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(os.path.join(R, "methods", "*.json"))
                       if ".compare." not in p})
    methods = ["random", "ppo", "greedy"]
    seeds = seeds_of(R)
    print("## (a) methods at equal wall time, GPU reward, seeds %s\n" % ", ".join(x[2:] if x else "1" for x in seeds))
    print("| fixture | seed | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    for f in fixtures:
        for sd in seeds:
            cells, score = [], {}
            for m in methods:
                t = load(os.path.join(R, "methods", "%s.%s%s.json" % (f, m, sd)))
                rm = remeasure(load(os.path.join(R, "methods", "%s.%s%s.compare.json" % (f, m, sd))))
                cells.append(cell(t, rm))
                if t is not None:
                    score[m] = rm[0] if (t.get("improved") and rm) else 1.0
                if t and t.get("improved") and rm:
                    checks.append(("fixture " + f + (" seed " + sd[2:] if sd else ""), m, t["ratio"], rm[0]))
            if score:
                best = max(score.values())
                wins[(f, sd)] = [m for m, v in score.items() if v == best]
            print("| %s | %s | %s |" % (f, sd[2:] if sd else "1", " | ".join(cells)))
    print("\nBest by re-measured ratio (unconfirmed = 1.0):")
    for (f, sd), w in wins.items():
        print("* %s seed %s: %s" % (f, sd[2:] if sd else "1", ", ".join(w)))
    tally(wins, methods)
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
