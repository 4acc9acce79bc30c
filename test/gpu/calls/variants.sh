#!/usr/bin/env bash
# One device call of the compile-variants stage (docs/variants.md):
#   bash test/gpu/calls/variants.sh [FIXTURES] [LIMIT_S]
# builds sasstune (Release, build-gpu/), then per fixture of test/fixtures/triton-sm90 (default:
# the attention, the layernorm, the 2048 matmul, then the other four) runs
#   sasstune variants sm_90.ptx --cubin sm_90.cubin --launch launch.json --ptxas PTXAS_13_5 --json
# (stock = Triton's bundled ptxas 12.8, found through python3; Triton's ptxas-blackwell 12.9 is
# discovered next to it) and writes $OUT/variants-NAME.json (the table: every variant's compile
# time, code bytes, registers, verified, speedup = stock/variant with its 95 % interval,
# confirmed) and $OUT/variants-NAME.err (progress); then a summary on stdout and in
# $OUT/summary.txt.  ptxas 13.5 comes from .deps/bin/ptxas-13.5 (scripts/gpu-deps.sh), else a
# .deps/*ptxas*13.5*.xz unpacked to /tmp, else it is left out (said on stdout).
# On the lent H200: run tool with carry [".deps"].
cd "$(dirname "$0")/../../.."
FIXTURES=${1:-attn_fwd_f16_bh4_n1024_d64_b128x64,layernorm_f16_1024x1024,matmul_f16_2048x2048x2048_b128x256x64_w8s3,matmul_f16_1024x1024x1024_b128x128x64_w4s4,matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu,softmax_f32_1024x1024,add_f32_1M}
LIMIT_S=${2:-570}
T0=$(date +%s)
OUT=${OUT:-/tmp/variants-out}
mkdir -p "$OUT"
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
P135=
if [ -x .deps/bin/ptxas-13.5 ]; then
  P135=$PWD/.deps/bin/ptxas-13.5
else
  XZ=$(ls .deps/*ptxas*13.5*.xz .deps/bin/*ptxas*13.5*.xz 2>/dev/null | head -1)
  if [ -n "$XZ" ]; then xz -dc "$XZ" > /tmp/ptxas-13.5 && chmod +x /tmp/ptxas-13.5 && P135=/tmp/ptxas-13.5; fi
fi
[ -n "$P135" ] && echo "ptxas 13.5: $P135 ($($P135 --version | tail -2 | head -1))" || echo "ptxas 13.5: not found in .deps (left out)"
EXTRA=()
[ -n "$P135" ] && EXTRA=(--ptxas "$P135")
for NAME in ${FIXTURES//,/ }; do
  F=test/fixtures/triton-sm90/$NAME
  LEFT=$(( LIMIT_S - ($(date +%s) - T0) - 10 ))
  if [ $LEFT -lt 30 ]; then echo "$NAME: skipped (time box)"; continue; fi
  timeout $LEFT build-gpu/sasstune variants $F/sm_90.ptx --cubin $F/sm_90.cubin --launch $F/launch.json \
    "${EXTRA[@]}" --json > $OUT/variants-$NAME.json 2> $OUT/variants-$NAME.err
  echo "$NAME: rc=$? at $(( $(date +%s) - T0 ))s"
done
python3 - "$OUT" <<'PY' | tee $OUT/summary.txt
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "variants-*.json"))):
    try:
        d = json.load(open(path))
    except Exception as e:
        print(f"{path}: unreadable ({e})"); continue
    print(f"{d['kernel']}: chosen {d['best_label']}  measured={d['measured']} {d['note']}")
    for v in d["variants"]:
        sp = "-" if v["speedup"] is None else f"{v['speedup']:.4f} [{v['speedup_lo']:.4f}, {v['speedup_hi']:.4f}] n={v['pairs']}"
        print(f"  {v['index']:2} {v['label']:<40} {v['compile_s']:6.2f}s code={v['code_bytes']:6} regs={v['regs']:4}"
              f" verified={v['verified']} {sp}{' CONFIRMED' if v['confirmed'] else ''} {v['reason']}")
PY
