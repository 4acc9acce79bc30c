#!/usr/bin/env bash
# The pass's compile-variants stage through the Triton adapter (plugin API 2, issue 13 item 2):
# triton_e2e.py with SASSTUNE_VARIANTS=on for the tune and cached processes, add1024 and matmul
# tuned at first launch (30 s SASS budget each, after the variants are compiled and measured),
# then every schedule-cache entry shown (its variant set, base options and chosen variant).
# On the lent H200: run tool with carry [".deps"], command `bash test/gpu/calls/variants-pass.sh`.
# Records under $OUT: e2e.tgz (e2e.json/.md/.log: the children's stderr holds the pass's info lines
# "variants: N of M compiled and distinct in X s; chosen ..."), cache.txt (cache list + show --json),
# variants-lines.txt (those log lines alone), console.txt.
cd "$(dirname "$0")/../../.."
source scripts/device-setup.sh >/dev/null 2>&1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$(date +%s)
bash scripts/build-gpu.sh build-gpu "$OUT/build.log" || exit 1
echo "built in $(( $(date +%s) - T0 ))s" | tee "$OUT/console.txt"
export SASSTUNE_LIBRARY=$PWD/build-gpu/libsasstune.so SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
export PYTHONPATH=$PWD/python
rm -rf /tmp/e2ev && mkdir -p /tmp/e2ev/out
timeout 540 python3 test/gpu/triton_e2e.py /tmp/e2ev/out/e2e.json --budget 30s --tune add1024,matmul \
  --variants on --keep /tmp/e2ev/work > /tmp/e2ev/out/console.txt 2>&1
echo "e2e rc=$? at $(( $(date +%s) - T0 ))s" | tee -a "$OUT/console.txt"
grep -h "variants" /tmp/e2ev/out/e2e.log > "$OUT/variants-lines.txt" 2>/dev/null
{
  build-gpu/sasstune cache list --dir /tmp/e2ev/work/sasstune
  for k in $(build-gpu/sasstune cache list --json --dir /tmp/e2ev/work/sasstune |
             python3 -c 'import json,sys; print(" ".join(e["key"] for e in json.load(sys.stdin)["entries"] if e.get("valid")))'); do
    build-gpu/sasstune cache show "$k" --json --dir /tmp/e2ev/work/sasstune
  done
} > "$OUT/cache.txt" 2>&1
tar czf "$OUT/e2e.tgz" -C /tmp/e2ev out
head -40 /tmp/e2ev/out/e2e.md 2>/dev/null; cat "$OUT/variants-lines.txt"; head -60 "$OUT/cache.txt"
