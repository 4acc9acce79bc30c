#!/usr/bin/env bash
# Build sasstune (Release: the command and its GPU worker) for bench/run.py, the way
# scripts/test-gpu.sh does on the lent GPU machine (carried .deps/ unpacked by
# scripts/device-setup.sh when the machine has no -dev packages).
#   bash bench/build.sh            # into build-gpu/ ($BUILD), log in $BUILD/bench-build.log
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -d .deps ] && ! [ -f /usr/include/cjson/cJSON.h ]; then
  source scripts/device-setup.sh
fi
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$BUILD"
LOG=$BUILD/bench-build.log
: > "$LOG"
build() {
  cmake -S . -B "$BUILD" ${ST_CMAKE_ARGS:-} -DCMAKE_BUILD_TYPE=Release -DST_TESTS=OFF "$@" &&
    cmake --build "$BUILD" -j "$JOBS" --target sasstune_cli sasstune_worker
}
echo "bench: building sasstune in $BUILD (log: $LOG)" >&2
if ! build >> "$LOG" 2>&1; then
  # another compiler may warn where the test build does not: retry without -Werror
  echo "bench: build failed with -Werror; retrying without it" | tee -a "$LOG" >&2
  printf '#!/bin/sh\nexec "$@" -Wno-error\n' > "$BUILD/no-werror.sh"
  chmod +x "$BUILD/no-werror.sh"
  if ! build -DCMAKE_C_COMPILER_LAUNCHER="$PWD/$BUILD/no-werror.sh" >> "$LOG" 2>&1; then
    tail -n 30 "$LOG" >&2
    exit 1
  fi
fi
ls -l "$BUILD/sasstune" "$BUILD/sasstune-worker" >&2
