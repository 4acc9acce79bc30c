#!/usr/bin/env bash
# Build sasstune with ASan+UBSan and run every CPU test: unit tests (cmocka),
# fuzz-corpus replays, the lit suite, the Python adapter's tests (against a build, then from the
# installed wheel: scripts/test-wheel.sh), and a short libFuzzer run of each fuzz target.
# Installs missing dependencies first (Debian 12, as root).
#   scripts/test.sh            everything
#   FUZZ_SECONDS=0 scripts/test.sh   skip the libFuzzer runs
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD:-build/test}
# A missing test prerequisite fails the run (never a silently skipped suite): cmocka, lit and
# FileCheck through the configure (ST_REQUIRE_TEST_DEPS), pytest and matplotlib here, imported from /
# (the repo's own folders must not stand in for packages).
for m in pytest matplotlib; do
  (cd / && python3 -c "import $m") >/dev/null 2>&1 || { echo "test.sh: python module '$m' is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
cmake -S . -B "$BUILD" -DST_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DST_REQUIRE_TEST_DEPS=ON >/dev/null
cmake --build "$BUILD" -j "$JOBS"
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS")
cmake -S . -B build/py -DCMAKE_BUILD_TYPE=Debug -DST_TESTS=OFF >/dev/null && cmake --build build/py -j "$JOBS" --target sasstune sasstune_worker sasstune_cli >/dev/null
# The Triton adapter (no GPU here: an unsanitized library for ctypes, its worker beside it),
# then the benchmark suite's CPU checks (every bench kernel compiles for sm_90, specs, report).
SASSTUNE_LIBRARY=$PWD/build/py/libsasstune.so python3 -m pytest -q -p no:cacheprovider python/tests
SASSTUNE_BIN=$PWD/build/py/sasstune python3 -m pytest -q -p no:cacheprovider bench/test_bench_compile.py bench/test_transfer.py bench/test_ablation.py bench/test_headroom.py
# the peer benchmark's CPU checks (bench/peers/: CompileIQ's loop, its objective on the mock driver)
SASSTUNE_LIBRARY=$PWD/build/py/libsasstune.so python3 -m pytest -q -p no:cacheprovider bench/peers/test_peers.py
# The Python package as a user installs it: wheel, auditwheel repair, a fresh venv, its tests there.
bash scripts/test-wheel.sh

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
if [ "$FUZZ_SECONDS" != 0 ] && ls test/fuzz/fuzz_*.c >/dev/null 2>&1; then
  FB=build/fuzz
  CC=clang-14 cmake -S . -B "$FB" -DST_FUZZ=ON -DST_TESTS=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
  cmake --build "$FB" -j "$JOBS"
  for f in test/fuzz/fuzz_*.c; do
    name=$(basename "$f" .c); short=${name#fuzz_}
    work=$FB/corpus-$short; mkdir -p "$work"
    echo "fuzz: $name for ${FUZZ_SECONDS}s"
    "$FB/test/$name" -max_total_time="$FUZZ_SECONDS" -print_final_stats=0 "$work" "test/fuzz/corpus/$short" 2>&1 | tail -n 2
  done
  echo "fuzz: no crashes"
fi
