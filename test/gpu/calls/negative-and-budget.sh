#!/usr/bin/env bash
# Issue 17 (negative entries, process budget) on the H200: test/gpu/negative_e2e.py.
# On the lent H200: run tool with carry [".deps"], command `bash test/gpu/calls/negative-and-budget.sh`;
# results under $OUT (report.json, children.log, build.log).
cd "$(dirname "$0")/../../.."
source scripts/device-setup.sh >/dev/null 2>&1
T0=$(date +%s)
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built in $(( $(date +%s) - T0 ))s"
export SASSTUNE_LIBRARY=$PWD/build-gpu/libsasstune.so SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
timeout 560 python3 test/gpu/negative_e2e.py $OUT --budget 10s; echo "negative_e2e rc=$? at $(( $(date +%s) - T0 ))s"
