#!/usr/bin/env bash
# Session 5, GPU call E (about 4 minutes on the H200): issue 16's method question on the bench
# kernels where the SASS search finds anything (layernorm, attention, swiglu, mm_fp8, softmax):
# random walk and PPO at equal 4 s budgets, seeds 2 and 3 (session5-c ran seed 1), each result
# re-measured apart by `sasstune compare` (bench/ablation.py).  $OUT gets ablation.md and a tarball.
# Device tool: carry [".deps"].
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
mkdir -p /tmp/s5e
left=$(( ${TOTAL_S:-300} - ($(date +%s) - T0) ))
timeout $(( left + 20 )) env PYTHONUNBUFFERED=1 python3 bench/ablation.py --out /tmp/s5e --budget 4s \
  --time-limit $(( left - 10 )) --sasstune "$PWD/build-gpu/sasstune" \
  --kernels "${E_KERNELS:-layernorm,attention,swiglu,mm_fp8,softmax}" \
  --config "random s2=--families swap,ctrl --seed 2" --config "ppo s2=--families swap,ctrl --method ppo --seed 2" \
  --config "random s3=--families swap,ctrl --seed 3" --config "ppo s3=--families swap,ctrl --method ppo --seed 3" \
  2>&1 | grep -v "^$"
cp /tmp/s5e/ablation.md $OUT/ablation.md 2>/dev/null
tar czf $OUT/session5-e.tgz --exclude='*.cubin' --exclude='*.ptx' -C /tmp s5e
echo "done at $(( $(date +%s) - T0 ))s"
