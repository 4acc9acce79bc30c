#!/usr/bin/env bash
# One device call of the benchmark suite (issue 9; docs/benchmarks.md, docs/gpu-tests.md):
#   bash test/gpu/calls/bench-suite.sh KERNELS BUDGET NAME [LIMIT_S]
# builds sasstune (Release, build-gpu/), then `bench/run.py --kernels KERNELS --budget BUDGET`
# in a time box that ends LIMIT_S (default 570) seconds after the script started; results in
# $OUT/NAME.tgz (the run folder) and the console on stdout.
# On the lent H200: run tool with carry [".deps"].
cd "$(dirname "$0")/../../.."
KERNELS=$1 BUDGET=$2 NAME=$3 LIMIT_S=${4:-570}
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
LEFT=$(( LIMIT_S - ($(date +%s) - T0) - 20 ))
timeout $(( LEFT + 15 )) python3 bench/run.py --kernels "$KERNELS" --budget "$BUDGET" --time-limit "${LEFT}s" \
  --out /tmp/$NAME --sasstune build-gpu/sasstune 2>&1 | tee /tmp/$NAME.console
echo "bench rc=${PIPESTATUS[0]} at $(( $(date +%s) - T0 ))s"
cp /tmp/$NAME.console /tmp/$NAME/console.txt 2>/dev/null
tar czf $OUT/$NAME.tgz -C /tmp $NAME
