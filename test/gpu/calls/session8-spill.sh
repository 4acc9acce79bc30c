#!/usr/bin/env bash
# Session 8, GPU call "spill": kernels that spill are rewritable since the cubin module reads
# EIATTR_ANNOTATIONS (docs/cubin.md).  On the spill fixture (test/fixtures/spill: the attention
# kernel at --maxrregcount 96, 214 STL/LDL):
#   1. the soundness campaign with every family (hoist, wait, sb, rename with the raise capped at
#      the kernel's EIATTR_MAXREG_COUNT, xblock), WALKS walks (default 1000), bit for bit on fresh
#      inputs;
#   2. `sasstune tune --reward gpu` for BUDGET (default 20s) with the default families, then
#      `sasstune check --launch` and `sasstune compare` (400 pairs) of its output against stock.
#   bash test/gpu/calls/session8-spill.sh
# Device tool: carry [".deps"].  $OUT: soundness/ (summary.txt, attn_spill/summary.json), tune.json,
# check.txt, compare.json, build.log.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=$PWD/build-gpu/sasstune
D=test/fixtures/spill/attn_spill
BUILD=build-gpu FIXTURE_DIR=test/fixtures/spill WALKS=${WALKS:-1000} HOIST=1 WAIT=1 SB=1 RENAME=1 RAISE=1 XBLOCK=1 \
  FIXTURE_SECONDS=${SPILL_S:-300} bash test/gpu/soundness.sh "$OUT/soundness" 2>&1 | tail -4
echo "soundness done at $(( $(date +%s) - T0 ))s"
timeout 120 $S tune $D/sm_90.cubin --listing $D/sm_90.sass --launch $D/launch.json --reward gpu --budget "${BUDGET:-20s}" \
  -o /tmp/spill.tuned.cubin --json > "$OUT/tune.json" 2> "$OUT/tune.err"
echo "tune rc=$? at $(( $(date +%s) - T0 ))s"; tail -c 600 "$OUT/tune.json"; echo
if [ -f /tmp/spill.tuned.cubin ]; then
  $S check $D/sm_90.cubin /tmp/spill.tuned.cubin --listing $D/sm_90.sass --launch $D/launch.json > "$OUT/check.txt" 2>&1
  echo "check rc=$?"; tail -2 "$OUT/check.txt"
  timeout 120 $S compare $D/sm_90.cubin /tmp/spill.tuned.cubin --launch $D/launch.json --pairs 400 --json > "$OUT/compare.json" 2>&1
  echo "compare rc=$?"; tail -c 400 "$OUT/compare.json"; echo
fi
echo "done at $(( $(date +%s) - T0 ))s"
