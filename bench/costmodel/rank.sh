#!/usr/bin/env bash
# The cost model's ranking study, on the GPU (bench/costmodel/README.md).  For every Triton
# fixture: N random legal walks of STEPS moves (mixed move biases) plus two yield-bit anchors,
# scored by the cost model (walks.c), then verified and timed against the original in one worker
# session (`sasstune run --reference`), and the model's ranking compared with the measured one
# (Spearman's rho, pairwise order agreement) by rank.py.  Writes $OUT/ranking.md, ranking.json.
#
#   source scripts/device-setup.sh      # on the lent machine (carried .deps/)
#   bash scripts/test-gpu.sh || true    # or any Release build in build-gpu with libsasstune_static.a
#   OUT=/tmp/out bash bench/costmodel/rank.sh [BUILD_DIR] [N] [STEPS] [PAIRS]
#
# Defaults: build-gpu, 32 walks, 20 moves, 200 pairs: about a minute of GPU time for 7 fixtures.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=$(cd "${1:-build-gpu}" && pwd)
N=${2:-32}
STEPS=${3:-20}
PAIRS=${4:-200}
OUT=${OUT:-$BUILD/costmodel}
mkdir -p "$OUT"
S=$BUILD/sasstune
export SASSTUNE_WORKER=$BUILD/sasstune-worker
if ! [ -f "$BUILD/libsasstune_static.a" ]; then
  cmake --build "$BUILD" -j "$(nproc)" --target sasstune_static > "$OUT/build.log" 2>&1 || {
    echo "rank.sh: no libsasstune_static.a in $BUILD (see $OUT/build.log)"; exit 1; }
fi
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt" | head -n 1; }
LIBELF=$(cache LIBELF_LIBRARY)
CJSON=$(cache CJSON_LIBRARY)
CJINC=$(cache CJSON_INCLUDE_DIR)
ELFINC=$(cache LIBELF_INCLUDE_DIR)
EXTRA=""
case "$LIBELF" in *.a) EXTRA="-lz" ;; esac
gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Iplugin ${CJINC:+-I$CJINC} ${ELFINC:+-I$ELFINC} bench/costmodel/walks.c \
  "$BUILD/libsasstune_static.a" "$LIBELF" "$CJSON" $EXTRA -ldl -lm -lpthread -o "$OUT/walks" 2> "$OUT/walks-build.log" || {
  echo "rank.sh: walks.c did not build:"; cat "$OUT/walks-build.log"; exit 1; }
t0=$(date +%s)
for fx in test/fixtures/triton-sm90/*/; do
  fx=${fx%/}
  name=$(basename "$fx")
  d=$OUT/$name
  rm -rf "$d" && mkdir -p "$d"
  "$OUT/walks" "$fx" "$d" "$N" "$STEPS" 1 > "$d/walks.jsonl" 2> "$d/walks.err" || { echo "$name: walks failed: $(tail -n 1 "$d/walks.err")"; continue; }
  timeout 600 "$S" run --reference "$fx/sm_90.cubin" "$d"/*.cubin --launch "$fx/launch.json" --pairs "$PAIRS" --json \
    > "$d/run.json" 2> "$d/run.err"
  rc=$?
  echo "$name: $(wc -l < "$d/walks.jsonl") candidates, sasstune run rc $rc, $(( $(date +%s) - t0 )) s so far"
done
python3 bench/costmodel/rank.py "$OUT" | tee "$OUT/ranking.md"
