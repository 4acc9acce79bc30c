#!/usr/bin/env bash
# The GPU runs of 2026-11-30 (docs/gpu-tests.md): Triton end-to-end acceptance + quick benchmark.
# On the lent H200: run tool with carry [".deps"], command `bash test/gpu/calls/e2e-and-bench.sh`; results under $OUT.
cd "$(dirname "$0")/../../.."
source scripts/device-setup.sh >/dev/null 2>&1
T0=$(date +%s)
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built in $(( $(date +%s) - T0 ))s"
export SASSTUNE_LIBRARY=$PWD/build-gpu/libsasstune.so SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
export PYTHONPATH=$PWD/python
mkdir -p /tmp/e2e; timeout 200 python3 test/gpu/triton_e2e.py /tmp/e2e/e2e.json --budget 30s > /tmp/e2e.console 2>&1; echo "e2e rc=$? at $(( $(date +%s) - T0 ))s"
mkdir -p /tmp/e2e; cp /tmp/e2e.console /tmp/e2e/ 2>/dev/null
timeout 330 python3 bench/run.py --quick --out /tmp/bench --time-limit 300 --sasstune build-gpu/sasstune > /tmp/bench.console 2>&1; echo "bench rc=$? at $(( $(date +%s) - T0 ))s"
cp /tmp/bench.console /tmp/bench/ 2>/dev/null
tar czf $OUT/e2e.tgz -C /tmp e2e; tar czf $OUT/bench.tgz -C /tmp bench
cat /tmp/e2e/e2e.md 2>/dev/null | head -60; tail -5 /tmp/e2e.console; tail -15 /tmp/bench.console
