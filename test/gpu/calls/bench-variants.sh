#!/usr/bin/env bash
# One device call of the benchmark suite with the compile-variants columns (issue 13;
# docs/benchmarks.md, docs/variants.md):
#   bash test/gpu/calls/bench-variants.sh KERNELS BUDGET NAME [LIMIT_S]
# builds sasstune (Release, build-gpu/), then `bench/run.py --kernels KERNELS --budget BUDGET
# --ptxas .deps/bin/ptxas-13.5` (and the CUDA toolkit's ptxas when there is one) in a time box
# that ends LIMIT_S (default 570) seconds after the script started; results in $OUT/NAME.tgz (the
# run folder without cubins) and the console on stdout.
# On the lent H200: run tool with carry [".deps"] (scripts/gpu-deps.sh).
cd "$(dirname "$0")/../../.."
KERNELS=$1 BUDGET=$2 NAME=$3 LIMIT_S=${4:-570}
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
PTX=()
[ -x .deps/bin/ptxas-13.5 ] && PTX+=(--ptxas "$PWD/.deps/bin/ptxas-13.5")
[ -x /usr/local/cuda/bin/ptxas ] && PTX+=(--ptxas /usr/local/cuda/bin/ptxas)
echo "extra ptxas: ${PTX[*]}"
LEFT=$(( LIMIT_S - ($(date +%s) - T0) - 20 ))
timeout $(( LEFT + 15 )) python3 bench/run.py --kernels "$KERNELS" --budget "$BUDGET" --time-limit "${LEFT}s" \
  "${PTX[@]}" --out /tmp/$NAME --sasstune build-gpu/sasstune 2>&1 | tee /tmp/$NAME.console
echo "bench rc=${PIPESTATUS[0]} at $(( $(date +%s) - T0 ))s"
cp /tmp/$NAME.console /tmp/$NAME/console.txt 2>/dev/null
tar czf $OUT/$NAME.tgz --exclude='*.cubin' -C /tmp $NAME
