#!/usr/bin/env bash
# The GPU runs of 2026-11-30 (docs/tune.md): PPO vs random vs greedy at equal time on every fixture
# (GPU reward), then the benchmark kernels the first quick run left out, as far as a time box allows.
# On the lent H200: run tool with carry [".deps"], command `bash test/gpu/calls/methods-and-bench.sh`.
cd "$(dirname "$0")/../../.."
source scripts/device-setup.sh >/dev/null 2>&1
T0=$(date +%s)
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
B=${METHOD_BUDGET:-12s}
FIX=test/fixtures/triton-sm90
mkdir -p /tmp/methods
for f in ${FIXTURES:-add_f32_1M softmax_f32_1024x1024 layernorm_f16_1024x1024 matmul_f16_1024x1024x1024_b128x128x64_w4s4 matmul_f16_2048x2048x2048_b128x256x64_w8s3 attn_fwd_f16_bh4_n1024_d64_b128x64}; do
  for m in ppo random greedy; do
    timeout 60 build-gpu/sasstune tune $FIX/$f/sm_90.cubin --listing $FIX/$f/sm_90.sass --launch $FIX/$f/launch.json \
      --reward gpu --method $m --budget $B --seed 1 --quiet --json -o /tmp/methods/$f.$m.cubin > /tmp/methods/$f.$m.json 2> /tmp/methods/$f.$m.err
    echo "$f $m rc=$? $(python3 -c "import json,sys;d=json.load(open('/tmp/methods/$f.$m.json'));print({k:d.get(k) for k in ('confirmed','ratio','ratio_lo','ratio_hi','pairs','steps','steps_per_s')})" 2>&1 | tail -c 300) t=$(( $(date +%s) - T0 ))s"
  done
done | tee /tmp/methods/summary.txt
tar czf $OUT/methods.tgz -C /tmp methods
LEFT=$(( 400 - ($(date +%s) - T0) ))
if [ $LEFT -gt 90 ]; then
  timeout $LEFT python3 bench/run.py --out /tmp/bench2 --kernels mm_leaky_512,rmsnorm,add,swiglu,bmm --budget 20s --time-limit $(( LEFT - 15 )) --sasstune build-gpu/sasstune > /tmp/bench2.console 2>&1
  echo "bench rc=$? at $(( $(date +%s) - T0 ))s"; cp /tmp/bench2.console /tmp/bench2/ 2>/dev/null
  tar czf $OUT/bench2.tgz -C /tmp bench2; tail -8 /tmp/bench2.console
fi
