#!/usr/bin/env bash
# Session 5, GPU call B (about 8 minutes on the H200): issue 16's methods table at equal wall time
# after the PPO cost work: test/gpu/calls/search16.sh with random, ppo and greedy, seeds 1 and 2, 6 s
# each, on the seven fixtures (42 runs), every confirmed result re-measured by `sasstune compare`
# (400 pairs); each run reports its steps/s and the search's own ms per step against one
# evaluation's ms (PPO's target: <= 10 %).  No bench part (BENCH_KERNELS empty: session5-c's
# ablation re-measures the bench kernels).
# $OUT gets search16.md, transfer.md and one tarball.  Device tool: carry [".deps"].
cd "$(dirname "$0")/../../.."
PART_TAIL=80
source test/gpu/calls/parts.sh
left=$(( 560 - ($(date +%s) - T0) ))
METHODS=${METHODS:-random ppo greedy} SEEDS=${SEEDS:-1 2} TOTAL_S=$(( left - 10 )) SKIP_BENCH=1 \
  part search16 $left test/gpu/calls/search16.sh
cp /tmp/s4/search16/summary.md $OUT/search16.md 2>/dev/null
cp /tmp/s4/search16/transfer.md $OUT/transfer.md 2>/dev/null
cp /tmp/s4/search16/search16.tgz $OUT/ 2>/dev/null
echo "done at $(( $(date +%s) - T0 ))s"
