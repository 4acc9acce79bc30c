#!/usr/bin/env bash
# Session 6, GPU call B (about 5 minutes on the H200), issue 16, after the estimate fix (the tuner's
# fresh-session estimate opens its session with compare's 2 input sets and 25 ms warm-up):
#  1. agreement: one layernorm tune (random, seed 3, 4 s), then compare stock/tuned twice;
#  2. methods at the new default families (no --families: swap,ctrl,hoist,wait,sb,xblock): random
#     walk, PPO and greedy at equal 4 s budgets, seeds 3 and 4, on the bench kernels where the
#     search finds anything (session6-a ran seeds 1 and 2); bench/ablation.py re-measures each
#     result by compare and counts the tuner's number within 0.3 % of it.
# Device tool: carry [".deps"].  $OUT: agree.txt, ablation.md, a tarball.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
ST=$PWD/build-gpu/sasstune
d=/tmp/s6b/agree
mkdir -p $d
python3 bench/stock.py --case layernorm --dir $d --pairs 50 > $d/stock.log 2>&1
$ST tune $d/stock.cubin --launch $d/launch.json --reward gpu --budget 4s --seed 3 -o $d/tuned.cubin --json --quiet \
  > $d/tune.json 2> $d/tune.err
python3 -c "import json;d=json.load(open('$d/tune.json'));print('tuner', d.get('ratio'), d.get('ratio_lo'), d.get('ratio_hi'), d['families'], d['verification'].get('fresh_sets'), d['verification'].get('race_final'))" | tee $OUT/agree.txt
for rep in 1 2; do
  [ -f $d/tuned.cubin ] || break
  $ST compare $d/stock.cubin $d/tuned.cubin --launch $d/launch.json --pairs 400 --json > $d/c.json 2>&1
  python3 -c "import json;d=json.load(open('$d/c.json'));print('compare rep $rep', round(1/d['ratio'],5), round(1/d['ci_hi'],5), round(1/d['ci_lo'],5))" 2>&1 | tee -a $OUT/agree.txt
done
echo "agreement done at $(( $(date +%s) - T0 ))s"
left=$(( ${TOTAL_S:-330} - ($(date +%s) - T0) ))
timeout $(( left + 20 )) env PYTHONUNBUFFERED=1 python3 bench/ablation.py --out /tmp/s6b/abl --budget 4s \
  --time-limit $(( left - 10 )) --sasstune "$ST" \
  --kernels "${B_KERNELS:-layernorm,attention,mm_fp8,softmax}" \
  --config "random s3=--seed 3" --config "ppo s3=--method ppo --seed 3" --config "greedy s3=--method greedy --seed 3" \
  --config "random s4=--seed 4" --config "ppo s4=--method ppo --seed 4" --config "greedy s4=--method greedy --seed 4" \
  2>&1 | grep -v "^$"
cp /tmp/s6b/abl/ablation.md $OUT/ablation.md 2>/dev/null
tar czf $OUT/session6-b.tgz --exclude='*.cubin' --exclude='*.ptx' -C /tmp s6b
echo "done at $(( $(date +%s) - T0 ))s"
