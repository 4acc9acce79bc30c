#!/usr/bin/env bash
# Issue 15: the GPU soundness campaign with the hoist and wait families on (docs/sched.md "Hoist
# and sink", "Later waits").
# Expected wall time on the H200 (16 cores): build ~1-2 min, then both fixture sets side by side
# (14 processes, one per fixture, one GPU), ~1-2 min: <= 5 min in all.  Hard budget: BUDGET
# (285 s) after the start; a fixture stops starting walks BUDGET-25 s after the start (its
# summary says how many of WALKS ran) and is killed at BUDGET-5 s.  Walk cost measured on the
# 2-core build machine (Release, load average 8-11; `soundness --dry-run`, the same walks without
# the GPU): 300 walks of 1..32 moves with both families take 2-9 s on add/softmax/layernorm,
# 11-40 s on the matmuls, 21-42 s on attention, so 1000 take up to ~140 s there; an idle H200
# host core should be 2-4x faster.  Verifying a candidate takes 6-9 ms (14 processes share the GPU).
# Run: device tool, carry [".deps"], command `bash test/gpu/calls/moves-soundness.sh`
#   sizes: WALKS (1000 per fixture), MAX_MOVES (32), SETS (both fixture sets), BUDGET (285).
# Every walk runs with both families on, rotating over four modes: default + new, wide + new, wide
# swaps + new, "new first" (a hoist or wait move whenever one is legal, a group hoist/sink of a
# load with its address arithmetic every third pick when one is; wait moves become legal
# once swaps have copied waits onto instructions that do not need them); each candidate verified
# bit for bit on fresh inputs.  HOIST=0, WAIT=0 or SB=0 turns one family off (sb: scoreboard
# re-assignment, "new first" picks a wait or sb move every other time one is legal); XBLOCK=1 adds
# the xblock family (moves across blocks; its moves are picked every other time in "new first");
# RENAME=1 adds the rename family (docs/sched.md "Register renaming"; "new first" counts renames
# with waits); RAISE=1 with it lets renames raise the register count while the occupancy for the
# launch stays (docs/sched.md "Raising the register count"; the table's "raised" column).
# Results: $OUT/summary.md (per-fixture table: walks, moves by kind, wrong, stray writes, crashes),
# $OUT/summary.txt (soundness.sh's lines), $OUT/soundness.tgz (summaries, failures), build.log.
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu "$OUT/build.log" || exit 1
WALKS=${WALKS:-1000}; MAX_MOVES=${MAX_MOVES:-32}; BUDGET=${BUDGET:-285}
SETS=${SETS:-"triton-sm90 triton-sm90-ptxas13.5"}
# soundness.sh builds its driver into build-gpu (incremental); do that once before the sets start
BUILD_ONLY=1 BUILD=build-gpu bash test/gpu/soundness.sh /tmp/hoist-build > /dev/null 2>&1 || { echo "driver build failed"; exit 1; }
built=$(( $(date +%s) - T0 )); echo "built at ${built}s"
left=$(( BUDGET - built )); [ $left -ge 60 ] || left=60   # a slow build: still 35 s of walks
rm -rf /tmp/hoist; mkdir -p /tmp/hoist
for set in $SETS; do
  R=/tmp/hoist/$set
  FIXTURE_DIR=test/fixtures/$set HOIST=${HOIST:-1} WAIT=${WAIT:-1} SB=${SB:-1} XBLOCK=${XBLOCK:-0} RENAME=${RENAME:-0} RAISE=${RAISE:-0} WALKS=$WALKS MAX_MOVES=$MAX_MOVES PAR=8 ROTATE=250 SEED=1 \
    BUILD=build-gpu SKIP_BUILD=1 FIXTURE_SECONDS=$((left - 25)) FIXTURE_TIMEOUT=$((left - 5)) \
    bash test/gpu/soundness.sh "$R" > "$R.log" 2>&1 &
done
wait
echo "walked at $(( $(date +%s) - T0 ))s"
: > "$OUT/summary.txt"
for set in $SETS; do
  R=/tmp/hoist/$set
  { echo "== $set"; cat "$R/summary.txt" 2>/dev/null || tail -20 "$R.log"; } >> "$OUT/summary.txt"
  cp "$R.log" "$R/console.log" 2>/dev/null
done
python3 - /tmp/hoist $SETS > "$OUT/summary.md" <<'PY'
import json, os, sys
root, sets = sys.argv[1], sys.argv[2:]
print("| set | fixture | walks (of planned) | moves | swap | stall | yield | reuse | hoist (slots moved; group) | wait | sb | rename | xblock (picks near one) "
      "| raised (registers: max of limit) | wrong | stray writes | crashes/timeouts/errors | checker caught | s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
tot = [0, 0, 0, 0, 0]
for st in sets:
    d = os.path.join(root, st)
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not os.path.isdir(os.path.join(d, f)):
            continue
        p = os.path.join(d, f, "summary.json")
        if not os.path.isfile(p):
            print(f"| {st} | {f} | no result (summary.txt says why) |  |  |  |  |  |  |  |  |  |  |  |  |  |  |")
            continue
        s = json.load(open(p)); m = s["moves"]
        wrong = sum(v["mismatch"] for v in s["modes"].values())
        bad = sum(v["crash"] + v["timeout"] + v["error"] for v in s["modes"].values())
        stray = sum(v.get("stray_write", 0) for v in s["modes"].values())
        caught = sum(v["failures_the_checker_caught"] for v in s["modes"].values())
        tot = [tot[0] + s["walks"], tot[1] + m["total"], tot[2] + wrong, tot[3] + bad, tot[4] + stray]
        print(f"| {st} | {f} | {s['walks']} ({s.get('walks_planned', s['walks'])}) | {m['total']} | {m['swap']} "
              f"| {m['stall']} | {m['yield']} | {m['reuse']} | {m.get('hoist', 0)} ({m.get('hoist_slots', 0)}; {m.get('hoist_group', 0)}) | {m.get('wait', 0)} | {m.get('sb', 0)} | {m.get('rename', 0)} | {m.get('xblock', 0)} ({m.get('xblock_near', 0)}) "
              f"| {s.get('raised', 0)} ({s.get('registers', 0)}: {s.get('registers_max', 0)} of {s.get('register_limit', 0)}) "
              f"| {wrong} | {stray} | {bad} | {caught} | {s['seconds']:.0f} |")
print(f"\nTotal: {tot[0]} walks, {tot[1]} moves, {tot[2]} wrong, {tot[4]} stray writes (the original no longer "
      f"reproduced after the walk), {tot[3]} crashes/timeouts/errors.")
PY
cat "$OUT/summary.md"
tar czf "$OUT/soundness.tgz" --exclude='walk-*.cubin' -C /tmp hoist
echo "done at $(( $(date +%s) - T0 ))s"
