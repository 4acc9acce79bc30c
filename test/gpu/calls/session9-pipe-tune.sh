#!/usr/bin/env bash
# Session 9, GPU call: the pipe family in `sasstune tune` (docs/tune.md "The pipe alternative"),
# on the three fixtures where family 3 form 1 has a candidate (test/fixtures/pipe: rowsum at
# 256 x 4096, rowsq f32 and f16 at their bench launches).  For each, seed 1, greedy, BUDGET:
#   with     the default families (swap,ctrl,hoist,wait,sb,rename,xblock,pipe): the rotation is
#            built, timed against stock in a fresh session, kept only if it beats the search;
#   without  the same minus pipe (the ablation row of family 3 where it applies);
# then every output that differs from stock re-measured apart from the tuner:
# `sasstune compare STOCK TUNED --pairs 400` (B/A above 1: the output is slower).
#   bash test/gpu/calls/session9-pipe-tune.sh     (device tool, carry [".deps"]; BUDGET=20s)
# $OUT: NAME.{with,without}.json (tune --json), NAME.*.compare.json, pipe-tune.md, build.log.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=$PWD/build-gpu/sasstune
P=test/fixtures/pipe
ALL=swap,ctrl,hoist,wait,sb,rename,xblock,pipe
for f in rowsum_f32_256x4096:launch.json rowsq_f32_b32_w1:launch-bench.json rowsq_f16_b32_w1:launch-bench.json; do
  name=${f%%:*}; d=$P/$name; L=$d/${f##*:}
  for cfg in with:$ALL without:${ALL%,pipe}; do
    c=${cfg%%:*}
    $S tune $d/sm_90.cubin --listing $d/sm_90.sass --launch $L --reward gpu --method greedy --seed 1 \
      --budget "${BUDGET:-20s}" --families "${cfg#*:}" --quiet --json -o /tmp/$name.$c.cubin \
      --schedule-out $OUT/$name.$c.schedule.json > $OUT/$name.$c.json 2> $OUT/$name.$c.err
    echo "== $name $c rc=$? at $(( $(date +%s) - T0 ))s"
    if ! cmp -s $d/sm_90.cubin /tmp/$name.$c.cubin; then
      $S compare $d/sm_90.cubin /tmp/$name.$c.cubin --launch $L --pairs 400 --sample-us 500 --json \
        > $OUT/$name.$c.compare.json 2>> $OUT/$name.$c.err
    fi
  done
done
python3 - "$OUT" > "$OUT/pipe-tune.md" <<'PY'
import json, os, sys
out = sys.argv[1]
print("| kernel | families | tune: message | pipe | compare B/A [95 %] |")
print("| --- | --- | --- | --- | --- |")
for name in ["rowsum_f32_256x4096", "rowsq_f32_b32_w1", "rowsq_f16_b32_w1"]:
    for c in ["with", "without"]:
        try:
            t = json.load(open(os.path.join(out, f"{name}.{c}.json")))
        except Exception as e:
            print(f"| {name} | {c} | (no result: {e}) | | |"); continue
        cp = os.path.join(out, f"{name}.{c}.compare.json")
        cmpx = "stock kept"
        if os.path.exists(cp):
            try:
                j = json.load(open(cp)); tm = j.get("timing", j)
                cmpx = f"{tm['ratio']:.4f} [{tm['ci_lo']:.4f}, {tm['ci_hi']:.4f}]"
            except Exception as e:
                cmpx = f"(unreadable: {e})"
        print(f"| {name} | {c} ({t.get('families')}) | {t.get('message')} | {t.get('pipe')} | {cmpx} |")
PY
cat "$OUT/pipe-tune.md"
echo "all done at $(( $(date +%s) - T0 ))s"
