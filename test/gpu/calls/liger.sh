#!/usr/bin/env bash
# Liger Kernel as a real client (issue 17, item 6): test/gpu/liger_client.py, stock vs SASSTUNE=1
# with a 10 s budget, bit for bit, over five processes (stock, stock with a warm Triton cache,
# first, second with a fresh Triton cache and the same schedule cache, third with both warm).
# On the lent H200: run tool with carry [".deps"] (which holds .deps/wheels/liger_kernel-*.whl,
# from scripts/gpu-deps.sh), command `bash test/gpu/calls/liger.sh`; results under $OUT:
# liger.json (every run, checks, summary), liger.md (the summary for docs/triton.md), liger.log
# (each process's stderr, SASSTUNE_LOG=info), build.log.  BUDGET=20s overrides the budget.
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/liger-out}; mkdir -p "$OUT"
T0=$(date +%s)
WHL=$(ls .deps/wheels/liger_kernel-*.whl 2>/dev/null | head -1)
if [ -z "$WHL" ]; then echo "no .deps/wheels/liger_kernel-*.whl (scripts/gpu-deps.sh carries it)"; exit 1; fi
pip install -q --no-deps --target /tmp/liger-site "$WHL" > "$OUT/pip.log" 2>&1 || { tail -5 "$OUT/pip.log"; exit 1; }
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu "$OUT/build.log" || exit 1
echo "built in $(( $(date +%s) - T0 ))s"
export SASSTUNE_LIBRARY=$PWD/build-gpu/libsasstune.so SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
export PYTHONPATH=$PWD/python:/tmp/liger-site${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import liger_kernel, torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
LEFT=$(( 585 - ($(date +%s) - T0) ))
timeout $LEFT python3 test/gpu/liger_client.py "$OUT/liger.json" --budget "${BUDGET:-10s}" --timeout $(( LEFT - 10 ))
echo "liger_client rc=$? at $(( $(date +%s) - T0 ))s"
