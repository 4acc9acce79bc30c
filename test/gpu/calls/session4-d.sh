#!/usr/bin/env bash
# Session 4, GPU call D (about 8.5 minutes on the H200): one build, then
#   1. test/gpu/calls/moves-soundness.sh  hoist + wait families, both fixture sets, 1000 walks each
#      (issue 15; legality version 3), time box MOVES_S (130 s)
#   2. bench/ablation.py  the SASS search at equal budget (ABL_BUDGET, 4 s) on the bench kernels:
#      swap,ctrl | +hoist,wait | +hoist,wait aimed by a stall profile (issues 15, 14), each result
#      re-measured by `sasstune compare` beside the tuner's own ratio (issue 16), what is left of 520 s
# $OUT gets moves-summary.md, ablation.md and one tarball.  Device tool: carry [".gpu"] (a tree copy).
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
MOVES_S=${MOVES_S:-130}
mkdir -p /tmp/s4/moves /tmp/s4/ablation
BUDGET=$(( MOVES_S - 10 )) OUT=/tmp/s4/moves timeout $MOVES_S bash test/gpu/calls/moves-soundness.sh \
  > /tmp/s4/moves/console.txt 2>&1
echo "== moves rc=$? at $(( $(date +%s) - T0 ))s"; cat /tmp/s4/moves/summary.md 2>/dev/null || tail -20 /tmp/s4/moves/console.txt
cp /tmp/s4/moves/summary.md $OUT/moves-summary.md 2>/dev/null
left=$(( 520 - ($(date +%s) - T0) ))
echo "ablation: ${left}s left"
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
F=swap,ctrl,hoist,wait
timeout $(( left + 40 )) env PYTHONUNBUFFERED=1 python3 bench/ablation.py --out /tmp/s4/ablation \
  --budget "${ABL_BUDGET:-4s}" --time-limit $(( left - 15 )) --profile --sasstune "$PWD/build-gpu/sasstune" \
  --kernels "${ABL_KERNELS:-layernorm,swiglu,attention,softmax,rmsnorm,mm_fp8,mm_leaky_512,bmm,add,mm_4096,mm_tma_device,mm_tma_host,mm_8192}" \
  --config "swap,ctrl=--families swap,ctrl" --config "+hoist,wait=--families $F" \
  --config "+hoist,wait aimed=--families $F --aim {dir}/samples.json" 2>&1 | tee /tmp/s4/ablation/console.txt | grep -v "^$"
echo "== ablation rc=${PIPESTATUS[0]} at $(( $(date +%s) - T0 ))s"
cp /tmp/s4/ablation/ablation.md $OUT/ablation.md 2>/dev/null
tar czf $OUT/session4-d.tgz --exclude='*.cubin' --exclude='*.ptx' -C /tmp s4
echo "done at $(( $(date +%s) - T0 ))s"
