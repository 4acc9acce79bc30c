#!/usr/bin/env bash
# Issue 17 on the GPU (test/gpu/launch17_checks.py): triton.autotune tuned once (the pick), two
# processes tuning at once serialised by the GPU lock, SASSTUNE_MODE=capture + `sasstune tune
# --captures` + a compile-time hit afterwards (the Liger client is test/gpu/calls/liger.sh).
# On the lent H200: run tool with carry [".deps"], command
# `bash test/gpu/calls/launch17.sh`; results under $OUT: l17.json (checks and every run), l17.log
# (the children's stderr, SASSTUNE_LOG=info), build.log.  About 2 to 3 minutes.
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/l17-out}; mkdir -p "$OUT"
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu "$OUT/build.log" || exit 1
echo "built in $(( $(date +%s) - T0 ))s"
export SASSTUNE_LIBRARY=$PWD/build-gpu/libsasstune.so SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
timeout $(( 585 - ($(date +%s) - T0) )) python3 test/gpu/launch17_checks.py "$OUT/l17.json" --budget "${BUDGET:-5s}"
echo "launch17_checks rc=$? at $(( $(date +%s) - T0 ))s"
