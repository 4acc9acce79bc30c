#!/usr/bin/env bash
# Session 5, GPU call C (about 9.5 minutes on the H200): one build, then
#   1. test/gpu/calls/moves-soundness.sh  every move family on (hoist, wait, sb, rename, xblock), both
#      fixture sets, WALKS (1000) walks per fixture (issue 15; legality version 4), time box MOVES_S (200 s)
#   2. bench/ablation.py  the SASS search at equal budget (ABL_BUDGET, 4 s) on the bench kernels:
#      swap,ctrl (random walk) | swap,ctrl with PPO | all families (random walk), each result
#      re-measured by `sasstune compare` beside the tuner's own ratio (issues 15, 16; PPO's own
#      cost per step against one evaluation on the bench kernels), what is left of 560 s
# $OUT gets moves-summary.md, ablation.md and one tarball.  Device tool: carry [".deps"].
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
MOVES_S=${MOVES_S:-200}
ALL=${ALL_FAMILIES:-swap,ctrl,hoist,wait,sb,rename,xblock}
mkdir -p /tmp/s4/moves /tmp/s4/ablation
HOIST=1 WAIT=1 SB=1 RENAME=1 XBLOCK=1 BUDGET=$(( MOVES_S - 10 )) OUT=/tmp/s4/moves timeout $MOVES_S \
  bash test/gpu/calls/moves-soundness.sh > /tmp/s4/moves/console.txt 2>&1
echo "== moves rc=$? at $(( $(date +%s) - T0 ))s"; cat /tmp/s4/moves/summary.md 2>/dev/null || tail -20 /tmp/s4/moves/console.txt
cp /tmp/s4/moves/summary.md $OUT/moves-summary.md 2>/dev/null
left=$(( 560 - ($(date +%s) - T0) ))
echo "ablation: ${left}s left"
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
timeout $(( left + 30 )) env PYTHONUNBUFFERED=1 python3 bench/ablation.py --out /tmp/s4/ablation \
  --budget "${ABL_BUDGET:-4s}" --time-limit $(( left - 15 )) --sasstune "$PWD/build-gpu/sasstune" \
  --kernels "${ABL_KERNELS:-layernorm,swiglu,attention,softmax,rmsnorm,mm_fp8,mm_leaky_512,bmm,add,mm_4096,mm_tma_device,mm_tma_host,mm_8192}" \
  --config "swap,ctrl=--families swap,ctrl" --config "ppo=--families swap,ctrl --method ppo" \
  --config "all=--families $ALL" 2>&1 | tee /tmp/s4/ablation/console.txt | grep -v "^$"
echo "== ablation rc=${PIPESTATUS[0]} at $(( $(date +%s) - T0 ))s"
cp /tmp/s4/ablation/ablation.md $OUT/ablation.md 2>/dev/null
tar czf $OUT/session5-c.tgz --exclude='*.cubin' --exclude='*.ptx' -C /tmp s4
echo "done at $(( $(date +%s) - T0 ))s"
