#!/usr/bin/env bash
# The GPU runs of 2026-11-30 (docs/gpu-tests.md): the legality soundness campaign, then the cost-model ranking study.
# On the lent H200: run tool with carry [".deps"], command `bash test/gpu/calls/soundness-and-costmodel.sh`; results under $OUT.
cd "$(dirname "$0")/../../.."
source scripts/device-setup.sh >/dev/null 2>&1
T0=$(date +%s)
timeout 200 bash test/gpu/soundness.sh /tmp/sound > /tmp/sound.log 2>&1; echo "sound rc=$? at $(( $(date +%s) - T0 ))s"
cp /tmp/sound/summary.txt $OUT/sound-summary.txt; tar czf $OUT/soundness.tgz -C /tmp sound
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
mkdir -p /tmp/cm; OUT=/tmp/cm timeout 150 bash bench/costmodel/rank.sh build-gpu 32 20 200 > /tmp/cm/console.txt 2>&1; echo "rank rc=$? at $(( $(date +%s) - T0 ))s"
tar czf $OUT/costmodel.tgz -C /tmp cm
cat /tmp/sound/summary.txt; tail -20 /tmp/cm/console.txt
