#!/usr/bin/env bash
# Session 6, GPU call D (about 7 minutes on the H200), after rename passed its second campaign
# (session6-c) and was no longer withheld:
#  1. does rename pay at equal budget: the greedy search (the method that led session6-a/b) with the
#     proven families and with rename added, 4 s, seeds 1 and 2, the three bench kernels where the
#     search finds anything (bench/ablation.py, each result re-measured by compare);
#  2. a longer budget for the method question: random walk and greedy at 20 s, seed 5, the same
#     three kernels.
# Device tool: carry [".deps"].  $OUT: rename.md, long.md, a tarball.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
ST=$PWD/build-gpu/sasstune
F=swap,ctrl,hoist,wait,sb,xblock
K=${D_KERNELS:-layernorm,attention,mm_fp8}
mkdir -p /tmp/s6d
left=$(( 200 - ($(date +%s) - T0) ))
timeout $(( left + 20 )) env PYTHONUNBUFFERED=1 python3 bench/ablation.py --out /tmp/s6d/rename --budget 4s \
  --time-limit $(( left - 5 )) --sasstune "$ST" --kernels "$K" \
  --config "greedy s1=--method greedy --families $F --seed 1" --config "greedy+rename s1=--method greedy --families $F,rename --seed 1" \
  --config "greedy s2=--method greedy --families $F --seed 2" --config "greedy+rename s2=--method greedy --families $F,rename --seed 2" \
  2>&1 | grep -v "^$"
cp /tmp/s6d/rename/ablation.md $OUT/rename.md 2>/dev/null
left=$(( ${TOTAL_S:-420} - ($(date +%s) - T0) ))
echo "long: ${left}s left"
timeout $(( left + 20 )) env PYTHONUNBUFFERED=1 python3 bench/ablation.py --out /tmp/s6d/long --budget 20s \
  --time-limit $(( left - 5 )) --sasstune "$ST" --kernels "$K" \
  --config "random s5=--seed 5" --config "greedy s5=--method greedy --seed 5" \
  2>&1 | grep -v "^$"
cp /tmp/s6d/long/ablation.md $OUT/long.md 2>/dev/null
tar czf $OUT/session6-d.tgz --exclude='*.cubin' --exclude='*.ptx' -C /tmp s6d
echo "done at $(( $(date +%s) - T0 ))s"
