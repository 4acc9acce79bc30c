#!/usr/bin/env bash
# Session 10, GPU call "pipe2": the first GPU runs of family 3 form 2, the prefetch of the next pass's
# loads into fresh registers (docs/pipeline.md "Form 2: prefetch into fresh registers",
# `sasstune pipe --form 2 --regs 64`), on the fixtures where family 3 has candidates
# (test/fixtures/pipe: rowsum, rowsq f32/f16 b32, rowsq f32 b128; the Triton and bench kernels have
# none).  PARTS picks what runs (two calls of ten minutes: PARTS=campaign, then PARTS="timing tune"):
#   campaign  the soundness campaign (test/gpu/soundness_pipe.c --form 2 --regs 64): per walk a random
#             choice among the form-2 candidates (per loop none or one, at least one), st_pipe_apply,
#             the independent checker and the occupancy rule of the raised count, then bit-for-bit
#             verification against stock on fresh inputs (a new input set every 25 walks) with the
#             reference integrity check; at launches whose loop runs 0, 1, 3 and 16 passes;
#             WALKS_FX (default 1,000) walks per fixture, spread over its launches (PAR=16 at once,
#             each stopping after WALK_S=200 s with what it did).
#   timing    `sasstune compare STOCK OUT` (PAIRS pairs, default 400, paired and interleaved; B/A < 1:
#             the rewrite is faster) of each fixture's largest form-2 rewrite (`pipe --form 2 --regs 64
#             --all`) and, for reference in the same run, of its form-1 rotation (`pipe --all`), at
#             long rows (SHAPES, default "8192x4096 8192x16384 1024x131072").
#   tune      `sasstune tune` (greedy, seed 1, BUDGET=20s, the default families: pipe builds both
#             forms' alternative and times each against stock) on each fixture, then every output
#             that differs from stock re-measured apart from the tuner (compare, 400 pairs).
#   PARTS=campaign bash test/gpu/calls/session10-pipe2.sh       (device tool, carry [".deps"])
# $OUT: campaign/<fixture.launch>/summary.json, campaign.txt; timing.jsonl, timing.md, pipe.log;
# tune/<fixture>.{json,err,schedule.json,compare.json}, pipe-tune.md; build.log.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=$PWD/build-gpu/sasstune
P=test/fixtures/pipe
W=/tmp/s10pipe2; rm -rf $W; mkdir -p $W
PARTS=" ${PARTS:-campaign timing tune} "
FIXTURES="rowsum_f32_256x4096 rowsq_f32_b32_w1 rowsq_f16_b32_w1 rowsq_f32_b128_w1"
# launch NAME FIXTURE ROWS N: a copy of the fixture's launch.json with ROWS rows of N values
launch() {
  python3 - "$P/$2/launch.json" "$3" "$4" > "$W/$1.json" <<'PY'
import json, sys
spec, m, n = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
i32 = [p for p in spec["params"] if p.get("kind") == "i32"]
esize = spec["params"][0]["bytes"] // (spec["grid"][0] * i32[-1]["value"])
spec["grid"][0] = m
spec["params"][0]["bytes"] = m * n * esize
spec["params"][1]["bytes"] = m * 4
for p in i32:
    p["value"] = n      # N (and the stride, where there is one)
print(json.dumps(spec))
PY
}
if [[ $PARTS == *" campaign "* ]]; then
cache() { sed -n "s/^$1:[A-Z]*=//p" build-gpu/CMakeCache.txt; }
gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Iplugin -I"$(cache CJSON_INCLUDE_DIR)" -I"$(cache LIBELF_INCLUDE_DIR)" \
  test/gpu/soundness_pipe.c build-gpu/libsasstune_static.a "$(cache LIBELF_LIBRARY)" "$(cache CJSON_LIBRARY)" \
  $(cache ZLIB_LIBRARY) -ldl -lm -lpthread -o build-gpu/soundness_pipe >> "$OUT/build.log" 2>&1 ||
  { tail -n 20 "$OUT/build.log"; exit 1; }
# 256 rows of N: 32 (the unrolled loop does not run: nor does the peel), 160 (1 pass and a tail),
# 416 (3 passes and a tail), 2048 (16 passes; 4x-unrolled loops of 32-wide blocks, b128's of 128)
JOBS=()
for fx in $FIXTURES; do
  ls=""
  for n in 32 160 416 2048; do launch $fx.n$n $fx 256 $n; ls="$ls $W/$fx.n$n.json"; done
  set -- $ls; per=$(( (${WALKS_FX:-1000} + $# - 1) / $# ))
  for l in $ls; do JOBS+=("$fx $l $per"); done
done
mkdir -p "$OUT/campaign"
for j in "${JOBS[@]}"; do
  set -- $j
  name=$(basename $2 .json)
  while [ "$(jobs -rp | wc -l)" -ge "${PAR:-16}" ]; do wait -n; done
  mkdir -p "$OUT/campaign/$name"
  timeout "${CAMPAIGN_S:-240}" build-gpu/soundness_pipe $P/$1/sm_90.cubin $P/$1/sm_90.sass $2 "$OUT/campaign/$name" \
    --walks $3 --seconds "${WALK_S:-200}" --seed 10 --form 2 --regs 64 > /dev/null 2> "$OUT/campaign/$name/stderr.log" &
done
wait
python3 - "$OUT/campaign" > "$OUT/campaign.txt" <<'PY'
import json, os, sys
root, fx = sys.argv[1], {}
for n in sorted(os.listdir(root)):
    try:
        s = json.load(open(os.path.join(root, n, "summary.json")))
    except Exception as e:
        print(f"{n}: no summary ({e}): {open(os.path.join(root, n, 'stderr.log')).read()[-300:]}"); continue
    r = s["results"]
    print(f"{n}: form {s.get('form')}, {s['walks']} walks, {s['distinct_rewrites']} distinct rewrites of "
          f"{len(s['candidates'])} candidates, {s['sessions']} input sessions, results {r}, checker refused "
          f"{s['checker_refused']}, deterministic={s['deterministic']}, {s['seconds']:.0f}s")
    t = fx.setdefault(n.split(".")[0], [0, 0, 0, 0])
    t[0] += s["walks"]; t[1] += s["failed"]; t[2] += s["checker_refused"]; t[3] += r.get("stray_write", 0)
for k, t in fx.items():
    print(f"{k}: {t[0]} walks, failed {t[1]} (stray writes {t[3]}), checker refused {t[2]}")
print(f"total: {sum(t[0] for t in fx.values())} walks, failed {sum(t[1] for t in fx.values())}, "
      f"checker refused {sum(t[2] for t in fx.values())}")
PY
cat "$OUT/campaign.txt"
echo "campaign done at $(( $(date +%s) - T0 ))s"
fi
if [[ $PARTS == *" timing "* ]]; then
: > "$OUT/timing.jsonl"
for f in $FIXTURES; do
  d=$P/$f
  $S pipe $d/sm_90.cubin --listing $d/sm_90.sass --form 2 --regs 64 --all -o $W/$f.form2.cubin >> "$OUT/pipe.log" 2>&1
  $S pipe $d/sm_90.cubin --listing $d/sm_90.sass --all -o $W/$f.form1.cubin >> "$OUT/pipe.log" 2>&1
  for shape in ${SHAPES:-8192x4096 8192x16384 1024x131072}; do
    set -- ${shape/x/ }; launch "$f.t$1x$2" "$f" "$1" "$2"
    for form in form2 form1; do
      [ -f $W/$f.$form.cubin ] || continue
      timeout 120 $S compare $d/sm_90.cubin $W/$f.$form.cubin --launch $W/$f.t$1x$2.json --pairs "${PAIRS:-400}" \
        --json > $W/c.json 2> $W/c.err
      rc=$?
      python3 test/gpu/calls/compare_record.py record "$rc" $W/c.json $W/c.err fixture="$f" form="$form" \
        shape="$1x$2" >> "$OUT/timing.jsonl"
      tail -n 1 "$OUT/timing.jsonl" | cut -c1-160
    done
  done
done
python3 test/gpu/calls/compare_record.py table "$OUT/timing.jsonl" fixture=fixture rewrite=form "rows x N=shape" \
  > "$OUT/timing.md"
cat "$OUT/timing.md"
echo "timing done at $(( $(date +%s) - T0 ))s"
fi
[[ $PARTS == *" tune "* ]] || exit 0
mkdir -p "$OUT/tune"
for f in rowsum_f32_256x4096:launch.json rowsq_f32_b32_w1:launch-bench.json rowsq_f16_b32_w1:launch-bench.json \
         rowsq_f32_b128_w1:launch.json; do
  name=${f%%:*}; d=$P/$name; L=$d/${f##*:}
  $S tune $d/sm_90.cubin --listing $d/sm_90.sass --launch $L --reward gpu --method greedy --seed 1 \
    --budget "${BUDGET:-20s}" --quiet --json -o $W/$name.tuned.cubin \
    --schedule-out $OUT/tune/$name.schedule.json > $OUT/tune/$name.json 2> $OUT/tune/$name.err
  echo "== tune $name rc=$? at $(( $(date +%s) - T0 ))s"
  if [ -f $W/$name.tuned.cubin ] && ! cmp -s $d/sm_90.cubin $W/$name.tuned.cubin; then
    $S compare $d/sm_90.cubin $W/$name.tuned.cubin --launch $L --pairs 400 --sample-us 500 --json \
      > $OUT/tune/$name.compare.json 2>> $OUT/tune/$name.err
  fi
done
python3 - "$OUT/tune" > "$OUT/pipe-tune.md" <<'PY'
import json, os, sys
out = sys.argv[1]
print("| kernel | tune: message | pipe | compare B/A [95 %] |")
print("| --- | --- | --- | --- |")
for name in ["rowsum_f32_256x4096", "rowsq_f32_b32_w1", "rowsq_f16_b32_w1", "rowsq_f32_b128_w1"]:
    try:
        t = json.load(open(os.path.join(out, f"{name}.json")))
    except Exception as e:
        print(f"| {name} | (no result: {e}) | | |"); continue
    cp, cmpx = os.path.join(out, f"{name}.compare.json"), "stock kept"
    if os.path.exists(cp):
        try:
            j = json.load(open(cp)); tm = j.get("timing", j)
            cmpx = f"{tm['ratio']:.4f} [{tm['ci_lo']:.4f}, {tm['ci_hi']:.4f}]"
        except Exception as e:
            cmpx = f"(unreadable: {e})"
    print(f"| {name} | {t.get('message')} | {t.get('pipe')} | {cmpx} |")
PY
cat "$OUT/pipe-tune.md"
echo "all done at $(( $(date +%s) - T0 ))s"
