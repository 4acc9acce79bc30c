#!/usr/bin/env bash
# Session 10, GPU call "pipe2" (a few minutes on the H200 after the build): the first GPU run of family 3
# form 2, prefetch into fresh registers (docs/pipeline.md "Form 2: prefetch into fresh registers",
# `sasstune pipe --form 2 --regs 64`).  For each pipe fixture (rowsum, rowsq f32/f16 b32, rowsq f32 b128)
# and each of its form-2 candidates (each load alone and the largest set) it
#   1. writes the rewrite (`sasstune pipe --form 2 --regs 64 -o --loop --loads`) and records what the
#      independent checker says of it (`sasstune check STOCK OUT`, informational);
#   2. `sasstune compare STOCK OUT --launch` at launches whose loop runs 0..3 passes and many passes
#      (rowsum: N = 32, 96, 160, 4096, 4128; rowsq: launch-n1, launch-n3, launch, launch-bench):
#      every buffer bit for bit on fresh input sets, then the paired timing (B/A < 1: faster); the
#      largest candidate gets PAIRS_BIG pairs (default 200), the single loads PAIRS (default 20);
#   3. the soundness campaign (test/gpu/soundness_pipe.c --form 2 --regs 64, WALKS=200 walks per
#      fixture and launch, 11 in parallel at most PAR=8, each under CAMPAIGN_S=150 s).
#   bash test/gpu/calls/session10-pipe2.sh
# Device tool: carry [".deps"].  $OUT: pipe2.md (the table), pipe2.jsonl (one record per run: compare's
# JSON or its error), check.txt (the checker on each rewrite), cands.txt, campaign/<fixture.launch>/
# summary.json and campaign.txt, build.log.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=$PWD/build-gpu/sasstune
W=/tmp/s10pipe2; rm -rf $W; mkdir -p $W
: > "$OUT/pipe2.jsonl"; : > "$OUT/check.txt"; : > "$OUT/cands.txt"
rowsum_launch() { # $1 N -> the row sum launch at 256 rows of N
  python3 - test/fixtures/pipe/rowsum_f32_256x4096/launch.json "$1" <<'PY'
import json, sys
spec, n = json.load(open(sys.argv[1])), int(sys.argv[2])
spec["params"][0]["bytes"] = 256 * n * 4
spec["params"][2]["value"] = n
print(json.dumps(spec))
PY
}
for n in 32 96 160 4096 4128; do rowsum_launch $n > $W/rowsum.$n.json; done
for fx in rowsum_f32_256x4096 rowsq_f32_b32_w1 rowsq_f16_b32_w1 rowsq_f32_b128_w1; do
  F=test/fixtures/pipe/$fx
  if [ $fx = rowsum_f32_256x4096 ]; then launches="$W/rowsum.32.json $W/rowsum.96.json $W/rowsum.160.json $W/rowsum.4096.json $W/rowsum.4128.json"
  else launches="$F/launch-n1.json $F/launch-n3.json $F/launch.json $F/launch-bench.json"; fi
  $S pipe $F/sm_90.cubin --listing $F/sm_90.sass --form 2 --regs 64 --json > $W/$fx.cands.json || exit 1
  python3 -c "
import json,sys
c=json.load(open('$W/$fx.cands.json'))
for i,x in enumerate(c): print(i, len(c)-1, hex(x['loop']), ','.join(hex(l) for l in x['loads']))" > $W/$fx.list
  cat $W/$fx.list | sed "s/^/$fx /" >> "$OUT/cands.txt"
  while read -r i last loop loads; do
    out=$W/$fx.$i.cubin
    $S pipe $F/sm_90.cubin --listing $F/sm_90.sass --form 2 --regs 64 -o $out --loop $loop --loads $loads > $W/p.txt 2>&1 \
      || { echo "$fx $loads: $(cat $W/p.txt)"; continue; }
    echo "== $fx $loads" >> "$OUT/check.txt"
    $S check $F/sm_90.cubin $out --listing $F/sm_90.sass --launch $F/launch.json >> "$OUT/check.txt" 2>&1
    echo "rc=$?" >> "$OUT/check.txt"
    pairs=${PAIRS:-20}; [ "$i" = "$last" ] && pairs=${PAIRS_BIG:-200}
    for l in $launches; do
      timeout 120 $S compare $F/sm_90.cubin $out --launch $l --pairs $pairs --json > $W/c.json 2> $W/c.err
      rc=$?
      python3 test/gpu/calls/compare_record.py record "$rc" $W/c.json $W/c.err fixture=$fx loads=$loads \
        launch=$(basename $l .json) >> "$OUT/pipe2.jsonl"
      tail -n 1 "$OUT/pipe2.jsonl" | cut -c1-240
    done
  done < $W/$fx.list
done
python3 test/gpu/calls/compare_record.py table "$OUT/pipe2.jsonl" fixture=fixture loads=loads launch=launch \
  > "$OUT/pipe2.md"
cat "$OUT/pipe2.md"
echo "compares done at $(( $(date +%s) - T0 ))s"
# 3. the soundness campaign with --form 2 (test/gpu/soundness_pipe.c): per walk a random choice among
#    the candidates, st_pipe_apply, the checker (and the occupancy rule of the raise), bit-for-bit
#    verification with fresh inputs every 25 walks, at the fixtures' 1-pass, 3-pass and long launches.
cache() { sed -n "s/^$1:[A-Z]*=//p" build-gpu/CMakeCache.txt; }
gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Iplugin -I"$(cache CJSON_INCLUDE_DIR)" -I"$(cache LIBELF_INCLUDE_DIR)" \
  test/gpu/soundness_pipe.c build-gpu/libsasstune_static.a "$(cache LIBELF_LIBRARY)" "$(cache CJSON_LIBRARY)" \
  $(cache ZLIB_LIBRARY) -ldl -lm -lpthread -o build-gpu/soundness_pipe >> "$OUT/build.log" 2>&1 ||
  { tail -n 20 "$OUT/build.log"; exit 1; }
mkdir -p "$OUT/campaign"
for job in rowsum_f32_256x4096:$W/rowsum.160.json rowsum_f32_256x4096:$W/rowsum.4096.json \
           rowsq_f32_b32_w1:launch-n1 rowsq_f32_b32_w1:launch-n3 rowsq_f32_b32_w1:launch \
           rowsq_f16_b32_w1:launch-n1 rowsq_f16_b32_w1:launch-n3 rowsq_f16_b32_w1:launch \
           rowsq_f32_b128_w1:launch-n1 rowsq_f32_b128_w1:launch-n3 rowsq_f32_b128_w1:launch; do
  fx=${job%%:*}; l=${job#*:}; F=test/fixtures/pipe/$fx
  case $l in /*) ;; *) l=$F/$l.json ;; esac
  name=$fx.$(basename $l .json)
  while [ "$(jobs -rp | wc -l)" -ge "${PAR:-8}" ]; do wait -n; done
  mkdir -p "$OUT/campaign/$name"
  timeout "${CAMPAIGN_S:-150}" build-gpu/soundness_pipe $F/sm_90.cubin $F/sm_90.sass $l "$OUT/campaign/$name" \
    --walks "${WALKS:-200}" --seed 10 --form 2 --regs 64 > /dev/null 2> "$OUT/campaign/$name/stderr.log" &
done
wait
for d in "$OUT"/campaign/*/; do
  python3 -c "
import json,sys
s=json.load(open('$d/summary.json'))
print('%-40s walks %4d  ok %4d  failed %d  checker refused %d  contaminations %d' % ('$(basename $d)', s['walks'],
      s['results']['ok'], s['failed'], s['checker_refused'], s['contaminations']))" 2>/dev/null || echo "$(basename $d): no summary"
done | tee "$OUT/campaign.txt"
echo "done at $(( $(date +%s) - T0 ))s"
