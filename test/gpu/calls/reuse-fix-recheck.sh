#!/usr/bin/env bash
# After the reuse-flag fix (docs/sched.md): re-tune layernorm and attention in the benchmark suite
# (45 s each), then the Triton end-to-end test with only its host-TMA matmul tuned at first launch.
# On the lent H200: run tool with carry [".deps"] (and a git archive of the tree, see docs/gpu-tests.md).
cd "$(dirname "$0")/../../.."
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
timeout 170 python3 bench/run.py --kernels layernorm,attention --budget 45s --time-limit 150s \
  --out /tmp/bench-c --sasstune build-gpu/sasstune 2>&1 | tee /tmp/bench-c.console
echo "bench rc=${PIPESTATUS[0]} at $(( $(date +%s) - T0 ))s"
cp /tmp/bench-c.console /tmp/bench-c/console.txt; tar czf $OUT/bench-c.tgz -C /tmp bench-c
mkdir -p /tmp/e2e
SASSTUNE_LIBRARY=$PWD/build-gpu/libsasstune.so SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker \
  timeout 150 python3 test/gpu/triton_e2e.py /tmp/e2e/e2e.json --tune mm_tma_host --budget 15s > /tmp/e2e/console.txt 2>&1
echo "e2e rc=$? at $(( $(date +%s) - T0 ))s"
tar czf $OUT/e2e.tgz -C /tmp e2e
tail -5 /tmp/e2e/console.txt; cat /tmp/e2e/e2e.md 2>/dev/null | head -40
