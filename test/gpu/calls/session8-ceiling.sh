#!/usr/bin/env bash
# Session 8, GPU call "ceiling": what software pipelining could gain on the pipe family's row-sum
# fixture, against what form 1 (the rotation) does.  bench/pipe/ceiling.py compiles the same row sum
# with a register prefetch written at the source (regprefetch) and with Triton's num_stages=3
# (stages3); `sasstune compare FIXTURE X` (PAIRS pairs, default 400; bit for bit first) for X in
# the rotated fixture (`sasstune pipe --all`), regprefetch and stages3, at 8192x4096, 8192x16384 and
# 1024x131072 fp32.
#   bash test/gpu/calls/session8-ceiling.sh     (device tool, carry [".deps"]; about 2 minutes)
# $OUT: ceiling.jsonl, ceiling.md, build.log.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=$PWD/build-gpu/sasstune
F=test/fixtures/pipe/rowsum_f32_256x4096
W=/tmp/s8ceil; rm -rf $W; mkdir -p $W
python3 bench/pipe/ceiling.py $W > "$OUT/ceiling-build.txt" 2>&1 || { cat "$OUT/ceiling-build.txt"; exit 1; }
cat "$OUT/ceiling-build.txt"
$S pipe $F/sm_90.cubin --listing $F/sm_90.sass --all -o $W/rotated.cubin > /dev/null 2>&1 || exit 1
: > "$OUT/ceiling.jsonl"
for shape in "8192 4096" "8192 16384" "1024 131072"; do
  set -- $shape
  python3 - $F/launch.json "$1" "$2" > $W/l.json <<'PY'
import json, sys
spec, m, n = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
spec["grid"][0] = m; spec["params"][0]["bytes"] = m * n * 4; spec["params"][1]["bytes"] = m * 4
spec["params"][2]["value"] = n; spec["shared_bytes"] = 256   # stages3's dynamic shared memory
print(json.dumps(spec))
PY
  for v in rotated regprefetch stages3; do
    timeout 120 $S compare $F/sm_90.cubin $W/$v.cubin --launch $W/l.json --pairs "${PAIRS:-400}" --json > $W/c.json 2> $W/c.err
    rc=$?
    python3 test/gpu/calls/compare_record.py record "$rc" $W/c.json $W/c.err variant="$v" shape="$1x$2" >> "$OUT/ceiling.jsonl"
  done
done
python3 test/gpu/calls/compare_record.py table "$OUT/ceiling.jsonl" "variant (B) vs the fixture (A)=variant" "rows x N=shape" > "$OUT/ceiling.md"
cat "$OUT/ceiling.md"
echo "done at $(( $(date +%s) - T0 ))s"
