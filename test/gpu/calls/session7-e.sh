#!/usr/bin/env bash
# Session 7, GPU call E (about 1.5 minutes): the new defaults end to end on one fixture.
# `sasstune tune` with the default families (rename included, its register-count raise from the
# launch spec) and the default method on attention (its count may rise 208 -> 255 at its launch),
# 20 s; then `check --launch` on the output and `compare` (400 pairs) apart from the tuner.
# Device tool: carry [".deps"].  $OUT: tune.json, check.txt, compare.txt.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=build-gpu/sasstune A=test/fixtures/triton-sm90/attn_fwd_f16_bh4_n1024_d64_b128x64
$S tune $A/sm_90.cubin --listing $A/sm_90.sass --launch $A/launch.json --reward gpu --budget ${BUDGET:-20s} --json --quiet \
  -o /tmp/s7e.cubin > $OUT/tune.json 2> $OUT/tune.err; echo "tune rc=$?"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print({k: j.get(k) for k in ('families','method','confirmed','improved','ratio','ratio_lo','ratio_hi','steps','occupancy')})" $OUT/tune.json
[ -f /tmp/s7e.cubin ] || exit 1
$S check $A/sm_90.cubin /tmp/s7e.cubin --listing $A/sm_90.sass --launch $A/launch.json 2>&1 | tee $OUT/check.txt
$S compare $A/sm_90.cubin /tmp/s7e.cubin --launch $A/launch.json --pairs 400 2>&1 | tail -4 | tee $OUT/compare.txt
echo "done at $(( $(date +%s) - T0 ))s"
