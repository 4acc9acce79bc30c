#!/usr/bin/env bash
# The main job: build sasstune and tune a bundled kernel (the 512x512x2048 fp16
# matmul with a leaky-ReLU epilogue, the research prototype's headline case).
# On a machine with an NVIDIA GPU every step runs for real; without one, the
# steps that need a GPU are skipped and the script says so (a cost-model search runs instead).
# Also shows the compile variants of the same PTX (the table; verified and timed with a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD=${BUILD:-build/release}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DST_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)" >/dev/null
ST="$BUILD/sasstune"
FX=test/fixtures/triton-sm90/matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu
OUT=${OUT:-build/demo}
mkdir -p "$OUT"
export SASSTUNE_NVDISASM=${SASSTUNE_NVDISASM:-$(python3 -c 'import triton,os;print(os.path.join(os.path.dirname(triton.__file__),"backends","nvidia","bin","nvdisasm"))' 2>/dev/null || true)}

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then have_gpu=1; fi

step() { echo; echo "== $*"; }
step "inspect the bundled cubin"
"$ST" inspect "$FX/sm_90.cubin"
step "rewrite with an empty schedule: byte-identical copy"
echo '{"sasstune_schedule": 1, "kernels": {}}' > "$OUT/empty.json"
"$ST" rewrite "$FX/sm_90.cubin" --schedule "$OUT/empty.json" -o "$OUT/copy.cubin"
cmp "$FX/sm_90.cubin" "$OUT/copy.cubin" && echo "identical"
step "decode it: control fields, defs/uses, classes (first lines)"
"$ST" disasm "$FX/sm_90.cubin" --listing "$FX/sm_90.sass" | sed -n 1,12p
step "the legal moves of the ptxas schedule (legality model, docs/sched.md)"
"$ST" moves "$FX/sm_90.cubin" --listing "$FX/sm_90.sass" | sed -n 1p
step "compile variants of the same PTX (other ptxas binaries and knobs; docs/variants.md)"
[ "$have_gpu" = 1 ] || echo "   (no GPU: the compiles run and are compared; verifying and timing them are SKIPPED)"
"$ST" variants "$FX/sm_90.ptx" --cubin "$FX/sm_90.cubin" --launch "$FX/launch.json" --quiet -o "$OUT/variant.cubin"
if [ "$have_gpu" = 1 ]; then
  step "GPU found: tune on it (PPO, GPU reward, ${BUDGET:-120s}); every candidate verified bit for bit"
  "$ST" tune "$FX/sm_90.cubin" --listing "$FX/sm_90.sass" --launch "$FX/launch.json" --reward gpu \
    --budget "${BUDGET:-120s}" -o "$OUT/tuned.cubin" --schedule-out "$OUT/tuned.json"
  step "independent re-measure: original vs tuned, 400 interleaved pairs"
  "$ST" compare "$FX/sm_90.cubin" "$OUT/tuned.cubin" --launch "$FX/launch.json" --pairs 400
else
  step "no GPU on this machine: tuning with the GPU reward, verifying and timing are SKIPPED"
  echo "   (what runs instead needs no GPU: a search scored by the static cost model; its result is"
  echo "    an unconfirmed prediction, never timed, and is not a speedup claim)"
  "$ST" tune "$FX/sm_90.cubin" --listing "$FX/sm_90.sass" --launch "$FX/launch.json" --reward model \
    --steps "${STEPS:-400}" --hidden 16 --quiet -o "$OUT/tuned.cubin" --schedule-out "$OUT/tuned.json"
fi
step "the independent checker on the result"
"$ST" check "$FX/sm_90.cubin" "$OUT/tuned.cubin" --listing "$FX/sm_90.sass" --launch "$FX/launch.json"
echo
echo "outputs in $OUT: tuned.cubin, tuned.json (replay with: sasstune rewrite CUBIN --schedule tuned.json -o OUT)"
