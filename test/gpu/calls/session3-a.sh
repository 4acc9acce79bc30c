#!/usr/bin/env bash
# Session 3, device call A (docs/gpu-tests.md): one build, then
#   1. the legality soundness campaign on the ptxas 13.5 fixtures (1000 walks each; the settings of
#      the 2026-11-30 campaign), and
#   2. `sasstune variants` on the seven Triton fixtures with ptxas 13.5 from .deps (Triton's 12.8
#      as stock, its 12.9 discovered beside it).
# On the lent H200: run tool with carry [".deps"] (scripts/gpu-deps.sh).  Results: $OUT/soundness.tgz,
# $OUT/variants.tgz, $OUT/summary.txt, $OUT/build.log.
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
R=/tmp/sound13; rm -rf $R
FIXTURE_DIR=test/fixtures/triton-sm90-ptxas13.5 WALKS=1000 MAX_MOVES=64 ROTATE=250 SEED=1 BUILD=build-gpu \
  timeout 240 bash test/gpu/soundness.sh "$R" > $R.log 2>&1
echo "soundness rc=$? at $(( $(date +%s) - T0 ))s"
cp $R.log $R/console.log 2>/dev/null
tar czf $OUT/soundness.tgz --exclude='walk-*.cubin' -C /tmp sound13
V=/tmp/variants13; rm -rf $V; mkdir -p $V
OUT=$V bash test/gpu/calls/variants.sh "" $(( 540 - ($(date +%s) - T0) )) > $V/console.txt 2>&1
echo "variants done at $(( $(date +%s) - T0 ))s"
tar czf $OUT/variants.tgz -C /tmp variants13
{ echo "== soundness (ptxas 13.5 fixtures)"; cat $R/summary.txt 2>/dev/null || tail -20 $R.log
  echo "== variants"; cat $V/summary.txt 2>/dev/null || tail -30 $V/console.txt; } | tee $OUT/summary.txt
