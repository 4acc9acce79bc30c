#!/usr/bin/env bash
# Session 7, GPU call "pipe" (about 60 s on the H200 after the build): what one issue slot per loop
# pass costs, the groundwork of issue 15 family 3 (docs/pipeline.md).  For each of the 14 Triton
# fixtures (ptxas 12.8 and 13.5):
#   1. `sasstune loops --json --launch` names, per loop, the slot after its header's first
#      instruction (it runs on every pass; a NOP at the header itself would run only on entry),
#      or, in a kernel without loops, the second slot of its largest block;
#   2. `sasstune insert` puts a NOP there (stall 1, no scoreboard, no wait; the reuse flags of
#      the instruction before are cleared), one per loop;
#   3. `sasstune compare STOCK NOP --launch` checks the NOP cubin's outputs against the stock
#      cubin's on fresh input sets (bit for bit when the kernel is deterministic) and times the
#      pair (B/A > 1: the NOPs cost).
#   bash test/gpu/calls/session7-pipe.sh          (PAIRS=200 ... more timed pairs, default 100)
# Device tool: carry [".deps"].  $OUT: pipe.md (the table), pipe.jsonl (one record per fixture:
# the slots, the loops' trip counts at the launch, compare's JSON or its error), build.log.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=$PWD/build-gpu/sasstune
W=/tmp/s7pipe; rm -rf $W; mkdir -p $W
: > "$OUT/pipe.jsonl"
for set in triton-sm90 triton-sm90-ptxas13.5; do
  for d in test/fixtures/$set/*/; do
    f=$(basename "$d"); t=$W/$set.$f
    [ -f "$d/sm_90.cubin" ] || continue
    $S loops "$d/sm_90.cubin" --listing "$d/sm_90.sass" --launch "$d/launch.json" --json > "$t.loops.json" 2> "$t.err"
    slots=$(python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
s = sorted({l["insert_slot"] for l in k["loops"] if l["natural"]}) or [k["hot_slot"]]
print(" ".join("--slot %d" % x for x in s))' "$t.loops.json")
    $S insert "$d/sm_90.cubin" -o "$t.nop.cubin" $slots > "$t.insert.txt" 2>> "$t.err"
    timeout 90 $S compare "$d/sm_90.cubin" "$t.nop.cubin" --launch "$d/launch.json" --pairs "${PAIRS:-100}" --json \
      > "$t.compare.json" 2>> "$t.err"
    rc=$?
    python3 - "$set/$f" "$t" "$rc" "$slots" >> "$OUT/pipe.jsonl" <<'PY'
import json, sys
name, t, rc, slots = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
k = json.load(open(t + ".loops.json"))["kernels"][0]
rec = {"fixture": name, "rc": rc, "slots": [int(x) for x in slots.split()[1::2]],
       "loops": [{"header": l["header"], "trips": l["trips"], "insert_slot": l["insert_slot"]} for l in k["loops"]],
       "insert": open(t + ".insert.txt").read().strip()}
try:
    rec["compare"] = json.load(open(t + ".compare.json"))
except Exception:
    rec["error"] = open(t + ".err").read().strip()[-400:]
print(json.dumps(rec))
PY
    tail -n 1 "$OUT/pipe.jsonl" | cut -c1-300
  done
done
python3 - "$OUT/pipe.jsonl" > "$OUT/pipe.md" <<'PY'
import json, sys
print("| fixture | NOP slots | loops: trips at the launch | outputs | B/A (NOP / stock) | 95% interval |")
print("|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    trips = ", ".join("%s" % ("?" if l["trips"] is None else l["trips"]) for l in r["loops"]) or "no loop"
    c = r.get("compare")
    if c:
        out = "bit-identical" if c.get("deterministic") else "within tolerance"
        print("| %s | %s | %s | %s | %.4f | [%.4f, %.4f] |" % (r["fixture"], r["slots"], trips, out, c["ratio"],
                                                              c["ci_lo"], c["ci_hi"]))
    else:
        print("| %s | %s | %s | FAILED (rc %d): %s | | |" % (r["fixture"], r["slots"], trips, r["rc"],
                                                            r.get("error", "").replace("\n", " ")[-200:]))
PY
cat "$OUT/pipe.md"
echo "done at $(( $(date +%s) - T0 ))s"
