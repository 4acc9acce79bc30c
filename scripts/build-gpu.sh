#!/usr/bin/env bash
# The Release build every GPU script uses: sasstune, sasstune-worker, libsasstune.so and
# libsasstune_static.a in $BUILD (default build-gpu).  On the lent GPU machine (no -dev
# packages there) it unpacks the carried .deps/ first (scripts/device-setup.sh).  If another
# compiler warns where the test build does not, it retries once with -Wno-error and says so.
#   bash scripts/build-gpu.sh [BUILD_DIR] [LOG]      (exit 1, with the log's tail, on failure)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-${BUILD:-build-gpu}}
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
LOG=${2:-$BUILD/build.log}
if [ -d .deps ] && ! [ -f /usr/include/cjson/cJSON.h ] && [ -z "${ST_CMAKE_ARGS:-}" ]; then
  source scripts/device-setup.sh >/dev/null 2>&1
fi
build() {
  cmake -S . -B "$BUILD" ${ST_CMAKE_ARGS:-} -DCMAKE_BUILD_TYPE=Release -DST_TESTS=OFF "$@" &&
    cmake --build "$BUILD" -j "$(nproc)" --target sasstune sasstune_static sasstune_cli sasstune_worker
}
echo "building sasstune in $BUILD (log: $LOG)" >&2
if ! build > "$LOG" 2>&1; then
  echo "build failed with -Werror; retrying without it" | tee -a "$LOG" >&2
  printf '#!/bin/sh\nexec "$@" -Wno-error\n' > "$BUILD/no-werror.sh"
  chmod +x "$BUILD/no-werror.sh"
  if ! build -DCMAKE_C_COMPILER_LAUNCHER="$BUILD/no-werror.sh" >> "$LOG" 2>&1; then
    tail -n 30 "$LOG" >&2
    exit 1
  fi
fi
grep -h "CUPTI headers" "$LOG" >&2 || true
