#!/usr/bin/env bash
# The runtime's GPU tests.  Usage: test/gpu/run-tests.sh BUILD_DIR OUT_DIR
# Runs every step even if one fails; writes OUT_DIR/results.txt (human output),
# OUT_DIR/results.jsonl (one JSON record per step) and OUT_DIR/summary.txt.
set -uo pipefail
BUILD=$(cd "$1" && pwd)
OUT=$2
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
ROOT=$PWD
S=$BUILD/sasstune
FIX=$ROOT/test/fixtures/triton-sm90
CUBINS=$ROOT/test/gpu/cubins
TXT=$OUT/results.txt
JSONL=$OUT/results.jsonl
TMP=$(mktemp -d)
: > "$TXT"
: > "$JSONL"
export SASSTUNE_WORKER=$BUILD/sasstune-worker

log() { echo "$*" | tee -a "$TXT"; }

# step NAME TIMEOUT CMD...: run, keep its human/JSON output, record rc and wall time
step() {
  local name=$1 limit=$2; shift 2
  log ""
  log "### $name"
  log "\$ $*"
  local t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$TMP/out" 2> "$TMP/err"
  local rc=$?
  local t1=$(date +%s.%N)
  cat "$TMP/out" "$TMP/err" | tee -a "$TXT" | tail -n 40
  python3 - "$name" "$rc" "$t0" "$t1" "$TMP/out" "$TMP/err" "$*" >> "$JSONL" <<'PY'
import json, sys
name, rc, t0, t1, out, err, cmd = sys.argv[1:]
text = open(out).read()
try:
    parsed = json.loads(text)
except Exception:
    parsed = None
print(json.dumps({"step": name, "cmd": cmd, "rc": int(rc), "wall_s": float(t1) - float(t0),
                  "json": parsed, "stdout": None if parsed is not None else text[-4000:],
                  "stderr": open(err).read()[-4000:]}))
PY
  return 0
}

log "# sasstune runtime GPU tests, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
log "$(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1)"
log "git: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"

FIXTURES=$(ls "$FIX")

# 1. every fixture: verify (determinism of the reference, guards) and time
for f in $FIXTURES; do
  step "run/$f" 300 "$S" run "$FIX/$f/sm_90.cubin" --launch "$FIX/$f/launch.json" --json
done

# 2. A/A noise at default settings, five times per fixture
for f in $FIXTURES; do
  step "noise/$f" 300 "$S" noise "$FIX/$f/sm_90.cubin" --launch "$FIX/$f/launch.json" --repeat 5 --json
done
# the same module against itself (no second load): separates placement from method
for f in attn_fwd_f16_bh4_n1024_d64_b128x64 matmul_f16_1024x1024x1024_b128x128x64_w4s4; do
  step "same-module/$f" 300 "$S" compare "$FIX/$f/sm_90.cubin" "$FIX/$f/sm_90.cubin" --launch "$FIX/$f/launch.json" --json
done
# without CUDA graphs (plain launches), for the record
for f in add_f32_1M softmax_f32_1024x1024 attn_fwd_f16_bh4_n1024_d64_b128x64; do
  step "noise-nographs/$f" 300 env SASSTUNE_NO_GRAPHS=1 "$S" noise "$FIX/$f/sm_90.cubin" --launch "$FIX/$f/launch.json" --repeat 3 --json
done

# 3. faulting, trapping and hanging candidates among good ones, in one run
A=$FIX/add_f32_1M
step "faults" 300 "$S" run --reference "$A/sm_90.cubin" --launch "$A/launch.json" --json \
  "$CUBINS/add_good.cubin" "$CUBINS/add_fault.cubin" "$CUBINS/add_good.cubin" "$CUBINS/add_trap.cubin" \
  "$CUBINS/add_good.cubin" "$CUBINS/add_hang.cubin" "$CUBINS/add_good.cubin" "$CUBINS/add_wrong.cubin" \
  "$CUBINS/add_oob.cubin" "$A/sm_90.cubin"

# 4. cost per candidate: 20 distinct candidates (the reference plus a trailing byte
#    each, so that every one is loaded anew), verified and timed; at the default
#    settings and at search-like ones (50 pairs, 5 ms warm-up).  add_f32_64M is
#    Triton's add kernel on 64M elements: a 0.2 ms kernel.
cost() {
  local name=$1 cubin=$2 spec=$3
  rm -f "$TMP"/cand_*.cubin
  for i in $(seq 1 20); do
    cp "$cubin" "$TMP/cand_$i.cubin"
    printf "%04d" "$i" >> "$TMP/cand_$i.cubin"
  done
  step "cost-search/$name" 300 "$S" run --reference "$cubin" --launch "$spec" --pairs 50 --warmup-ms 5 --json "$TMP"/cand_*.cubin
  step "cost-default/$name" 300 "$S" run --reference "$cubin" --launch "$spec" --json "$TMP"/cand_*.cubin
}
for f in $FIXTURES; do
  cost "$f" "$FIX/$f/sm_90.cubin" "$FIX/$f/launch.json"
done
cost add_f32_64M "$A/sm_90.cubin" "$ROOT/test/gpu/specs/add_f32_64M.json"
step "noise/add_f32_64M" 300 "$S" noise "$A/sm_90.cubin" --launch "$ROOT/test/gpu/specs/add_f32_64M.json" --repeat 3 --json

# 5. compare: nvcc's add against Triton's (a real difference), and with an L2 flush
step "compare/nvcc-vs-triton-add" 300 "$S" compare "$A/sm_90.cubin" "$CUBINS/add_good.cubin" --launch "$A/launch.json" --json
step "compare/nvcc-vs-triton-add-flush" 300 "$S" compare "$A/sm_90.cubin" "$CUBINS/add_good.cubin" --launch "$A/launch.json" --flush-l2 --json
for f in matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu softmax_f32_1024x1024; do
  step "noise-flush/$f" 300 "$S" noise "$FIX/$f/sm_90.cubin" --launch "$FIX/$f/launch.json" --flush-l2 --repeat 2 --json
done

# 6. the caller's own CUDA context survives a faulting candidate (in process, via libsasstune.so)
step "caller-context" 300 python3 "$ROOT/test/gpu/caller_context.py" "$BUILD/libsasstune.so" "$A" "$CUBINS"

python3 "$ROOT/test/gpu/summarize.py" "$JSONL" | tee "$OUT/summary.txt"
rm -rf "$TMP"
