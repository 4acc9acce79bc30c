#!/usr/bin/env bash
# The legality soundness campaign on the ptxas 13.5 fixtures (docs/sched.md "GPU soundness
# campaign"; test/fixtures/triton-sm90-ptxas13.5): 1000 random legal walks per fixture, the
# settings of the 2026-11-30 campaign (WALKS=1000 MAX_MOVES=64 ROTATE=250 SEED=1), each verified
# bit for bit on the GPU against the original.
# On the lent H200: run tool with carry [".deps"], command `bash test/gpu/calls/ptxas13-soundness.sh`.
# Results under $OUT: summary.txt (one line per fixture), soundness.tgz (per-fixture summary.json,
# stdout/stderr, failing walks' schedules), failures-sample.tgz (up to 10 failing cubins per
# fixture, only when some failed), build.log.  Exit status: soundness.sh's (0: every walk verified).
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
R=/tmp/sound13
rm -rf "$R"
FIXTURE_DIR=test/fixtures/triton-sm90-ptxas13.5 WALKS=1000 MAX_MOVES=64 ROTATE=250 SEED=1 \
  timeout 540 bash test/gpu/soundness.sh "$R" > /tmp/sound13.log 2>&1
rc=$?
echo "soundness rc=$rc at $(( $(date +%s) - T0 ))s"
cp /tmp/sound13.log "$R/console.log" 2>/dev/null
cp "$R/build.log" "$OUT/build.log" 2>/dev/null
cp "$R/summary.txt" "$OUT/summary.txt" 2>/dev/null
tar czf "$OUT/soundness.tgz" --exclude='walk-*.cubin' -C /tmp sound13
samples=$(cd /tmp && for d in sound13/*/failures; do ls "$d"/walk-*.cubin 2>/dev/null | sort -V | head -n 10; done)
[ -n "$samples" ] && tar czf "$OUT/failures-sample.tgz" -C /tmp $samples
cat "$R/summary.txt" 2>/dev/null || tail -n 30 /tmp/sound13.log
exit $rc
