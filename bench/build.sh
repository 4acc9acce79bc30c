#!/usr/bin/env bash
# Build sasstune (Release: the command and its GPU worker) for bench/run.py, the way
# scripts/test-gpu.sh does on the lent GPU machine (carried .deps/ unpacked by
# scripts/device-setup.sh when the machine has no -dev packages).
#   bash bench/build.sh            # into build-gpu/ ($BUILD), log in $BUILD/bench-build.log
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
bash scripts/build-gpu.sh "$BUILD" "$BUILD/bench-build.log" || exit 1
ls -l "$BUILD/sasstune" "$BUILD/sasstune-worker" >&2
