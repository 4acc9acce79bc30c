#!/usr/bin/env bash
# Session 8, GPU call "pipe" (about 30 s on the H200 after the build): the first GPU run of family 3
# form 1 (docs/pipeline.md "Form 1: rotation", `sasstune pipe`).  The layernorm fixtures have no
# candidate as compiled; test/fixtures/pipe/rowsum_f32_256x4096 (test/fixtures/pipe/make_rowsum.py)
# has one: loop 0x150, loads 0x200 and 0x230 with their group of 8 (no guard: the rotated loads take
# the back branch's @!P1), peeled before the loop.  For N in 32..4128 (0, 1, 2 and 31 passes of the
# 4x-unrolled loop, with and without remainder chunks) it
#   1. writes the rewrite (`sasstune pipe -o --all`; the same cubin for every N);
#   2. `sasstune compare STOCK PIPED --launch` at that N: every buffer bit for bit on fresh input sets
#      (the reference integrity check included), then the paired timing (B/A < 1: faster).
#   bash test/gpu/calls/session8-pipe.sh          (PAIRS=200 ... more timed pairs, default 60)
# Device tool: carry [".deps"].  $OUT: pipe8.md (the table), pipe8.jsonl (one record per N:
# compare's JSON or its error), piped.cubin, pipe.txt, build.log.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=$PWD/build-gpu/sasstune
F=test/fixtures/pipe/rowsum_f32_256x4096
W=/tmp/s8pipe; rm -rf $W; mkdir -p $W
$S pipe $F/sm_90.cubin --listing $F/sm_90.sass -o "$OUT/piped.cubin" --all > "$OUT/pipe.txt" 2>&1 || { cat "$OUT/pipe.txt"; exit 1; }
cat "$OUT/pipe.txt"
: > "$OUT/pipe8.jsonl"
for n in 32 96 128 160 224 256 4096 4128; do
  python3 - "$F/launch.json" "$n" > "$W/launch.$n.json" <<'PY'
import json, sys
spec, n = json.load(open(sys.argv[1])), int(sys.argv[2])
spec["params"][0]["bytes"] = 256 * n * 4
spec["params"][2]["value"] = n
print(json.dumps(spec))
PY
  timeout 90 $S compare $F/sm_90.cubin "$OUT/piped.cubin" --launch "$W/launch.$n.json" --pairs "${PAIRS:-60}" --json \
    > "$W/compare.$n.json" 2> "$W/err.$n"
  rc=$?
  passes=$(( n <= 96 ? 0 : (n - 96 + 127) / 128 ))
  python3 test/gpu/calls/compare_record.py record "$rc" "$W/compare.$n.json" "$W/err.$n" N=$n passes=$passes \
    >> "$OUT/pipe8.jsonl"
  tail -n 1 "$OUT/pipe8.jsonl" | cut -c1-300
done
python3 test/gpu/calls/compare_record.py table "$OUT/pipe8.jsonl" N=N "passes of the unrolled loop=passes" \
  > "$OUT/pipe8.md"
cat "$OUT/pipe8.md"
echo "done at $(( $(date +%s) - T0 ))s"
