#!/usr/bin/env bash
# Session 3, device call C (docs/gpu-tests.md): one build, then
#   1. line tables after a 300-swap walk on the seven fixtures (test/gpu/calls/line-tables.sh's check),
#   2. issue 17's launch checks (test/gpu/launch17_checks.py: autotune, GPU lock, capture + batch),
#   3. the Triton end-to-end test with the compile-variants stage at first launch (triton_e2e.py
#      --variants on, add1024 and matmul, 15 s budgets).
# On the lent H200: run tool with carry [".deps"].  Results: $OUT/{line-tables.txt,l17.tgz,e2e.tgz,summary.txt,build.log}.
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
mkdir -p /tmp/lt && OUT=/tmp/lt timeout 120 bash test/gpu/calls/line-tables.sh > /tmp/lt/console.txt 2>&1
cp /tmp/lt/line-tables.txt $OUT/ 2>/dev/null; echo "line tables at $(( $(date +%s) - T0 ))s"
export SASSTUNE_LIBRARY=$PWD/build-gpu/libsasstune.so SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
rm -rf /tmp/l17 && mkdir -p /tmp/l17
timeout 240 python3 test/gpu/launch17_checks.py /tmp/l17/l17.json --budget 5s > /tmp/l17/console.txt 2>&1
echo "launch17_checks rc=$? at $(( $(date +%s) - T0 ))s"
tar czf $OUT/l17.tgz -C /tmp l17
rm -rf /tmp/e2ev && mkdir -p /tmp/e2ev/out
LEFT=$(( 560 - ($(date +%s) - T0) ))
timeout $LEFT python3 test/gpu/triton_e2e.py /tmp/e2ev/out/e2e.json --budget 15s --tune add1024,matmul \
  --variants on --keep /tmp/e2ev/work > /tmp/e2ev/out/console.txt 2>&1
echo "e2e rc=$? at $(( $(date +%s) - T0 ))s"
grep -h "variants" /tmp/e2ev/out/e2e.log > /tmp/e2ev/out/variants-lines.txt 2>/dev/null
build-gpu/sasstune cache list --dir /tmp/e2ev/work/sasstune > /tmp/e2ev/out/cache.txt 2>&1
tar czf $OUT/e2e.tgz -C /tmp/e2ev out
{ echo "== line tables"; cat $OUT/line-tables.txt
  echo "== launch17 checks"; tail -25 /tmp/l17/console.txt
  echo "== e2e with variants"; head -40 /tmp/e2ev/out/e2e.md 2>/dev/null || tail -20 /tmp/e2ev/out/console.txt
  cat /tmp/e2ev/out/variants-lines.txt /tmp/e2ev/out/cache.txt; } | tee $OUT/summary.txt
