#!/usr/bin/env bash
# Session 8, GPU call "pipe-campaign": family 3 form 1 (the load-group rotation, docs/pipeline.md "Form 1:
# rotation") on the H200.
#   1. The soundness campaign (test/gpu/soundness_pipe.c): on both layernorm fixtures (ptxas 12.8
#      and 13.5) and the bench layernorm cubin, random choices of the rotation candidates, each
#      rewritten by st_pipe_apply, judged by the independent checker and verified bit for bit
#      against the original on fresh inputs, at launches whose 4x-unrolled loops run 0 (the
#      fixture's own, N = 1024), 1 (N = 5000), 3 (N = 15000, ragged tail) and 4 (N = 16384)
#      passes (test/fixtures/pipe/*.launch.json).
#   2. The timing: `sasstune pipe --all` (every loop's largest group) and each single candidate,
#      against stock with `sasstune compare` (PAIRS interleaved pairs) at the fixture's launch
#      and at 4096x16384 and 2048x32768.
#   bash test/gpu/calls/session8-pipe-campaign.sh    (WALKS_OWN=100 WALKS_1=300 WALKS_3=300 WALKS_4=400
#                                            PAIRS=400 PAR=8 CAMPAIGN_S=240 ...)
# Device tool: carry [".deps"].  $OUT: campaign/<name>/summary.json, campaign.txt, timing.jsonl,
# timing.md, build.log.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=$PWD/build-gpu/sasstune
cache() { sed -n "s/^$1:[A-Z]*=//p" build-gpu/CMakeCache.txt; }
gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Iplugin -I"$(cache CJSON_INCLUDE_DIR)" -I"$(cache LIBELF_INCLUDE_DIR)" \
  test/gpu/soundness_pipe.c build-gpu/libsasstune_static.a "$(cache LIBELF_LIBRARY)" "$(cache CJSON_LIBRARY)" \
  $(cache ZLIB_LIBRARY) -ldl -lm -lpthread -o build-gpu/soundness_pipe >> "$OUT/build.log" 2>&1 ||
  { tail -n 20 "$OUT/build.log"; exit 1; }
P=test/fixtures/pipe
# name cubin listing launch walks
JOBS=()
for set in triton-sm90 triton-sm90-ptxas13.5; do
  d=test/fixtures/$set/layernorm_f16_1024x1024
  JOBS+=("$set.own $d/sm_90.cubin $d/sm_90.sass $d/launch.json ${WALKS_OWN:-100}"
         "$set.n5000 $d/sm_90.cubin $d/sm_90.sass $P/layernorm-n5000.launch.json ${WALKS_1:-300}"
         "$set.n15000 $d/sm_90.cubin $d/sm_90.sass $P/layernorm-n15000.launch.json ${WALKS_3:-300}"
         "$set.n16384 $d/sm_90.cubin $d/sm_90.sass $P/layernorm-n16384.launch.json ${WALKS_4:-400}")
done
b=test/fixtures/bench
JOBS+=("bench.n16384 $b/layernorm.sm_90.cubin $b/layernorm.sm_90.sass $P/layernorm-n16384.launch.json ${WALKS_4:-400}"
       "bench.n15000 $b/layernorm.sm_90.cubin $b/layernorm.sm_90.sass $P/layernorm-n15000.launch.json ${WALKS_3:-300}")
mkdir -p "$OUT/campaign"
for j in "${JOBS[@]}"; do
  set -- $j
  while [ "$(jobs -rp | wc -l)" -ge "${PAR:-8}" ]; do wait -n; done
  mkdir -p "$OUT/campaign/$1"
  timeout "${CAMPAIGN_S:-240}" build-gpu/soundness_pipe "$2" "$3" "$4" "$OUT/campaign/$1" --walks "$5" --seed 8 \
    > /dev/null 2> "$OUT/campaign/$1/stderr.log" &
done
wait
python3 - "$OUT/campaign" > "$OUT/campaign.txt" <<'PY'
import json, os, sys
root = sys.argv[1]
tot = {"walks": 0, "failed": 0, "refused": 0, "stray": 0}
for n in sorted(os.listdir(root)):
    try:
        s = json.load(open(os.path.join(root, n, "summary.json")))
    except Exception as e:
        print(f"{n}: no summary ({e}): {open(os.path.join(root, n, 'stderr.log')).read()[-300:]}"); continue
    r = s["results"]
    print(f"{n}: {s['walks']} walks, {s['distinct_rewrites']} distinct rewrites of {len(s['candidates'])} candidates "
          f"in {s['loops']} loops, results {r}, checker refused {s['checker_refused']}, "
          f"deterministic={s['deterministic']}, {s['seconds']:.0f}s")
    tot["walks"] += s["walks"]; tot["failed"] += s["failed"]; tot["refused"] += s["checker_refused"]
    tot["stray"] += r.get("stray_write", 0)
print(f"total: {tot['walks']} walks, failed {tot['failed']} (stray writes {tot['stray']}), checker refused {tot['refused']}")
PY
cat "$OUT/campaign.txt"
echo "campaign done at $(( $(date +%s) - T0 ))s"
# 2. timing
W=/tmp/s8pipe; rm -rf $W; mkdir -p $W
: > "$OUT/timing.jsonl"
timeone() { # name stock piped launch
  timeout 120 $S compare "$2" "$3" --launch "$4" --pairs "${PAIRS:-400}" --json > $W/c.json 2> $W/c.err
  local rc=$?
  python3 - "$1" "$4" "$rc" $W/c.json $W/c.err >> "$OUT/timing.jsonl" <<'PY'
import json, sys
name, launch, rc, cj, ce = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
rec = {"name": name, "launch": launch, "rc": rc}
try:
    rec["compare"] = json.load(open(cj))
except Exception:
    rec["error"] = open(ce).read()[-400:]
print(json.dumps(rec))
PY
  tail -n 1 "$OUT/timing.jsonl" | cut -c1-240
}
for set in triton-sm90 triton-sm90-ptxas13.5 bench; do
  if [ $set = bench ]; then c=$b/layernorm.sm_90.cubin; l=$b/layernorm.sm_90.sass; own=$b/layernorm.launch.json
  else d=test/fixtures/$set/layernorm_f16_1024x1024; c=$d/sm_90.cubin; l=$d/sm_90.sass; own=$d/launch.json; fi
  $S pipe "$c" --listing "$l" --json > $W/$set.cands.json 2>> "$OUT/pipe.err"
  $S pipe "$c" --listing "$l" --all -o $W/$set.all.cubin >> "$OUT/pipe.log" 2>&1
  for L in "$own" $P/layernorm-bench-4096x16384.launch.json $P/layernorm-bench-2048x32768.launch.json; do
    timeone "$set all" "$c" $W/$set.all.cubin "$L"
  done
  # each single-load candidate at the 4096x16384 launch
  python3 -c '
import json, sys
for c in json.load(open(sys.argv[1])).get("candidates", []):
    if len(c["loads"]) == 1: print("%s %s" % (c["header"], c["loads"][0]))' $W/$set.cands.json > $W/$set.singles 2>/dev/null
  while read -r h ld; do
    $S pipe "$c" --listing "$l" --loop "$h" --loads "$ld" -o $W/$set.one.cubin >> "$OUT/pipe.log" 2>&1 &&
      timeone "$set loop $h load $ld" "$c" $W/$set.one.cubin $P/layernorm-bench-4096x16384.launch.json
  done < $W/$set.singles
done
python3 - "$OUT/timing.jsonl" > "$OUT/timing.md" <<'PY'
import json, sys
print("| rewrite | launch | outputs | B/A (rotated / stock) | 95% interval |")
print("|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line); c = r.get("compare"); L = r["launch"].split("/")[-1]
    if c:
        out = "bit-identical" if c.get("deterministic") else "within tolerance"
        print("| %s | %s | %s | %.4f | [%.4f, %.4f] |" % (r["name"], L, out, c["ratio"], c["ci_lo"], c["ci_hi"]))
    else:
        print("| %s | %s | FAILED (rc %d): %s | | |" % (r["name"], L, r["rc"], r.get("error", "").replace("\n", " ")[-200:]))
PY
cat "$OUT/timing.md"
echo "done at $(( $(date +%s) - T0 ))s"
