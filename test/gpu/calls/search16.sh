#!/usr/bin/env bash
# Issue 16 (docs/tune.md, "The default method" and "Racing confirmation", "Cost per step", "Transfer, measured"): one build, then
#  (a) random, ppo and greedy at equal wall time (METHOD_BUDGET, default 6s; SEEDS, default 1) on the seven
#      test/fixtures/triton-sm90 fixtures, GPU reward, every evaluation logged (--log-evals); every
#      confirmed result re-measured apart by `sasstune compare ORIG TUNED --pairs 400` (REMEASURE_PAIRS);
#  (b) unless SKIP_BENCH=1, the bench kernels (BENCH_KERNELS) tuned with the default method inside bench/run.py (budget
#      BENCH_BUDGET, default 8s, no variants) and re-measured by its own compare (400 pairs), as far as
#      the time box (TOTAL_S, default 400 s) allows, eval logs appended too.
# Expected wall time on the H200 (16 cores): build ~60 s, (a) 21 runs x ~9 s + compares ~40 s = ~230 s,
# (b) what is left of 400 s; under 7 minutes in all.
# Then bench/transfer.py over the eval logs (leave one kernel out, CPU): $OUT/transfer.md.
# Results: $OUT/summary.md (both tables), $OUT/transfer.md, $OUT/search16.tgz (every JSON, the eval logs, consoles),
# $OUT/build.log.  Every run logs its evaluations (the cost model's ratio and the feature sums: a
# fraction of a ms per evaluation, the same for every method).  FIXTURE_DIR=test/fixtures/triton-sm90-ptxas13.5
# repeats (a) on the ptxas 13.5 fixtures.  On the lent H200: run tool with carry [".deps"],
#   command `bash test/gpu/calls/search16.sh`.
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
TOTAL_S=${TOTAL_S:-400}
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
ST=$PWD/build-gpu/sasstune
R=/tmp/search16; rm -rf $R; mkdir -p $R/methods $R/logs
B=${METHOD_BUDGET:-6s}
P=${REMEASURE_PAIRS:-400}
FIX=${FIXTURE_DIR:-test/fixtures/triton-sm90}  # or test/fixtures/triton-sm90-ptxas13.5 (same names)
FIXTURES=${FIXTURES:-add_f32_1M softmax_f32_1024x1024 layernorm_f16_1024x1024 matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu matmul_f16_1024x1024x1024_b128x128x64_w4s4 matmul_f16_2048x2048x2048_b128x256x64_w8s3 attn_fwd_f16_bh4_n1024_d64_b128x64}
METHODS=${METHODS:-random ppo greedy}
SEEDS=${SEEDS:-1}   # seed 1 writes FIXTURE.METHOD.json, seed N>1 FIXTURE.METHOD.sN.json
for seed in $SEEDS; do
for f in $FIXTURES; do
  for m in $METHODS; do
    [ $(( $(date +%s) - T0 )) -gt $(( TOTAL_S - 60 )) ] && { echo "$f $m seed $seed skipped: time box"; continue; }
    j=$R/methods/$f.$m; [ "$seed" = 1 ] || j=$j.s$seed
    timeout 90 $ST tune $FIX/$f/sm_90.cubin --listing $FIX/$f/sm_90.sass --launch $FIX/$f/launch.json \
      --reward gpu --method $m --budget $B --seed $seed --quiet --json --log-evals $R/logs/$f.$m.s$seed.jsonl \
      -o $j.cubin > $j.json 2> $j.err
    rc=$?
    if [ $rc = 0 ] && ! cmp -s $j.cubin $FIX/$f/sm_90.cubin; then
      timeout 60 $ST compare $FIX/$f/sm_90.cubin $j.cubin --launch $FIX/$f/launch.json --pairs $P --json \
        > $j.compare.json 2> $j.compare.err
    fi
    echo "$f $m seed $seed rc=$rc t=$(( $(date +%s) - T0 ))s"
  done
done
done | tee $R/methods.console
LEFT=$(( TOTAL_S - ($(date +%s) - T0) ))
if [ $LEFT -gt 70 ] && [ -z "${SKIP_BENCH:-}" ]; then
  timeout $LEFT python3 bench/run.py --out $R/bench --kernels ${BENCH_KERNELS:-add,rmsnorm,softmax,layernorm,mm_leaky_512,swiglu} \
    --budget ${BENCH_BUDGET:-8s} --no-variants --time-limit $(( LEFT - 10 )) --sasstune $ST \
    "--tune-arg=--log-evals $R/logs/bench.jsonl" > $R/bench.console 2>&1
  echo "bench rc=$? at $(( $(date +%s) - T0 ))s" | tee -a $R/methods.console
fi
{ echo "search16: fixtures $FIX, methods $METHODS at $B each, seeds $SEEDS, re-measure $P pairs; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(date -u +%FT%TZ)"; echo
  python3 bench/search16/summarize.py $R; } > $OUT/summary.md 2> $R/summarize.err
cat $R/summarize.err >> $OUT/summary.md
# (4) leave-one-kernel-out transfer of a learned cost model over the eval logs (CPU, seconds)
timeout 60 python3 bench/transfer.py $R/logs/*.jsonl --json $R/transfer.json > $OUT/transfer.md 2>&1
tar czf $OUT/search16.tgz --exclude='*.cubin' -C /tmp search16
cat $OUT/summary.md
echo "done at $(( $(date +%s) - T0 ))s"
