#!/usr/bin/env bash
# The GPU runs of 2026-11-30 (docs/gpu-tests.md): tune every fixture (issue 6) + quick benchmark (issue 9).
# On the lent H200: run tool with carry [".deps"], command `bash test/gpu/calls/tune-and-bench.sh`; results under $OUT.
cd "$(dirname "$0")/../../.."
source scripts/device-setup.sh >/dev/null 2>&1
T0=$(date +%s)
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
mkdir -p /tmp/tune
OUT_SAVE=$OUT
OUT=/tmp/tune TUNE_LIMIT_S=330 timeout 360 bash test/gpu/tune_fixtures.sh 30 build-gpu > /tmp/tune/console.txt 2>&1; echo "tune rc=$? at $(( $(date +%s) - T0 ))s"
OUT=$OUT_SAVE
tar czf $OUT/tune.tgz -C /tmp tune
timeout 200 python3 bench/run.py --quick --out /tmp/bench --time-limit 180 --budget 25s --sasstune build-gpu/sasstune > /tmp/bench.console 2>&1; echo "bench rc=$? at $(( $(date +%s) - T0 ))s"
cp /tmp/bench.console /tmp/bench/ 2>/dev/null; tar czf $OUT/bench.tgz -C /tmp bench
cat /tmp/tune/tune_fixtures.md 2>/dev/null | head -70; tail -8 /tmp/bench.console
