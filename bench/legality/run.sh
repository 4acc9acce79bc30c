#!/usr/bin/env bash
# The legality model's mask size and cost against kernel size (docs/sched.md, "Measurements").
# Builds sasstune (Release) into $BUILD (default build-bench), compiles bench.c against it, makes
# the big kernels' listings with Triton's nvdisasm, and runs the bench on the seven Triton
# fixtures and the two big kernels (bench/legality/build.sh makes those): legal moves at the
# start and along a random walk of STEPS moves, time to list all legal moves, to apply and to
# undo one, per setting.  Prints a markdown table; JSON lines go to $OUT (default
# bench/legality/results.jsonl).   Usage: bench/legality/run.sh   (STEPS=1000 by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-bench}
STEPS=${STEPS:-1000}
OUT=${OUT:-bench/legality/results.jsonl}
TB=${TRITON_BIN:-$(python3 -c 'import triton, os; print(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin"))')}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DST_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target sasstune_static >/dev/null
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude bench/legality/bench.c "$BUILD/libsasstune_static.a" \
	"$(cache LIBELF_LIBRARY)" "$(cache CJSON_LIBRARY)" -ldl -lm -lpthread -o "$BUILD/legality-bench"
: > "$OUT"
for f in test/fixtures/triton-sm90/*/; do
	"$BUILD/legality-bench" "$f/sm_90.cubin" "$f/sm_90.sass" "$STEPS" | sed "s|\"file\": \"[^\"]*\"|\"file\": \"$(basename "$f")\"|" >> "$OUT"
done
for n in big5k big20k; do
	"$TB/nvdisasm" -hex -c "bench/legality/$n.sm_90.cubin" > "$BUILD/$n.sass"
	"$BUILD/legality-bench" "bench/legality/$n.sm_90.cubin" "$BUILD/$n.sass" "$STEPS" | sed "s|\"file\": \"[^\"]*\"|\"file\": \"$n\"|" >> "$OUT"
done
python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| kernel | insns | setting | legal moves at start (swaps) | per state along the walk: mean swaps / mean all (min..max) | new state ms | list all µs | apply µs | undo µs |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['file']} | {r['instructions']} | {r['setting']} | {r['moves_at_start']} ({r['swaps_at_start']}) | "
          f"{r['swaps_mean']:.0f} / {r['moves_mean']:.0f} ({r['moves_min']}..{r['moves_max']}) | {r['new_ms']:.1f} | "
          f"{r['list_us']:.0f} | {r['apply_us']:.0f} | {r['undo_us']:.0f} |")
PY
