#!/usr/bin/env bash
# Session 8, GPU call "pipe-campaign": family 3 form 1 (the load-group rotation, docs/pipeline.md
# "Form 1: rotation") on the H200, on the fixtures where it has candidates (the Triton and bench
# kernels have none): test/fixtures/pipe/rowsum_f32_256x4096 (make_rowsum.py) and
# rowsq_f32_b32_w1, rowsq_f16_b32_w1 (make_rowsq.py), mask-free column loops.
#   1. The soundness campaign (test/gpu/soundness_pipe.c): each walk picks the rotation candidates
#      at random (per loop none or one; at least one), rewrites with st_pipe_apply, asks the
#      independent checker, and verifies the result bit for bit against the original on fresh
#      inputs (a new input set every ROTATE=25 walks) with the reference integrity check, at
#      launches whose loop runs 1, 3 and many passes.
#   2. The timing: `sasstune compare STOCK PIPED` (PAIRS interleaved pairs, default 400) of the
#      `pipe --all` rewrite at long rows.
#   bash test/gpu/calls/session8-pipe-campaign.sh    (WALKS_1=300 WALKS_3=300 WALKS_N=400 PAIRS=400
#                                                     CAMPAIGN_S=200 PAR=8)
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
W=/tmp/s8pc; rm -rf $W; mkdir -p $W
# launch NAME FIXTURE ROWS N: a copy of the fixture's launch.json with ROWS rows of N values
launch() {
  python3 - "$P/$2/launch.json" "$3" "$4" > "$W/$1.json" <<'PY'
import json, sys
spec, m, n = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
esize = spec["params"][0]["bytes"] // (spec["grid"][0] * [p.get("value") for p in spec["params"] if p.get("kind") == "i32"][-1])
spec["grid"][0] = m
spec["params"][0]["bytes"] = m * n * esize
spec["params"][1]["bytes"] = m * 4
for p in spec["params"]:
    if p.get("kind") == "i32":
        p["value"] = n      # N (and the stride, where there is one)
print(json.dumps(spec))
PY
}
JOBS=()
for f in rowsum_f32_256x4096:32 rowsq_f32_b32_w1:32 rowsq_f16_b32_w1:32; do
  name=${f%%:*}; b=${f##*:}   # 4x-unrolled loop: 4*b values per pass
  launch "$name.p1" "$name" 64 $((4 * b)); launch "$name.p3" "$name" 64 $((12 * b + b)); launch "$name.pn" "$name" 256 4096
  d=$P/$name
  JOBS+=("$name.p1 $d $W/$name.p1.json ${WALKS_1:-300}" "$name.p3 $d $W/$name.p3.json ${WALKS_3:-300}"
         "$name.pn $d $W/$name.pn.json ${WALKS_N:-400}")
done
mkdir -p "$OUT/campaign"
for j in "${JOBS[@]}"; do
  set -- $j
  while [ "$(jobs -rp | wc -l)" -ge "${PAR:-8}" ]; do wait -n; done
  mkdir -p "$OUT/campaign/$1"
  timeout "${CAMPAIGN_S:-200}" build-gpu/soundness_pipe "$2/sm_90.cubin" "$2/sm_90.sass" "$3" "$OUT/campaign/$1" \
    --walks "$4" --seed 8 > /dev/null 2> "$OUT/campaign/$1/stderr.log" &
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
          f"{s['candidates']} in {s['loops']} loops, {s['sessions']} input sessions, results {r}, "
          f"checker refused {s['checker_refused']}, deterministic={s['deterministic']}, {s['seconds']:.0f}s")
    tot["walks"] += s["walks"]; tot["failed"] += s["failed"]; tot["refused"] += s["checker_refused"]
    tot["stray"] += r.get("stray_write", 0)
print(f"total: {tot['walks']} walks, failed {tot['failed']} (stray writes {tot['stray']}), checker refused {tot['refused']}")
PY
cat "$OUT/campaign.txt"
echo "campaign done at $(( $(date +%s) - T0 ))s"
: > "$OUT/timing.jsonl"
for f in rowsum_f32_256x4096 rowsq_f32_b32_w1 rowsq_f16_b32_w1; do
  d=$P/$f
  $S pipe $d/sm_90.cubin --listing $d/sm_90.sass --all -o $W/$f.piped.cubin >> "$OUT/pipe.log" 2>&1 || continue
  for shape in "8192 4096" "8192 16384" "1024 131072"; do
    set -- $shape; launch "$f.t$1x$2" "$f" "$1" "$2"
    timeout 120 $S compare $d/sm_90.cubin $W/$f.piped.cubin --launch $W/$f.t$1x$2.json --pairs "${PAIRS:-400}" --json \
      > $W/c.json 2> $W/c.err
    rc=$?
    python3 test/gpu/calls/compare_record.py record "$rc" $W/c.json $W/c.err fixture="$f" shape="$1x$2" >> "$OUT/timing.jsonl"
    tail -n 1 "$OUT/timing.jsonl" | cut -c1-200
  done
done
python3 test/gpu/calls/compare_record.py table "$OUT/timing.jsonl" fixture=fixture "rows x N=shape" > "$OUT/timing.md"
cat "$OUT/timing.md"
echo "done at $(( $(date +%s) - T0 ))s"
