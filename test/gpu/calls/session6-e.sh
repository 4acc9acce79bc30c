#!/usr/bin/env bash
# Session 6, GPU call E (about 5 minutes on the H200): the method question at the longer budget
# (session6-d: at 20 s, seed 5, the random walk led greedy on 2 of 3 kernels, the reverse of 4 s):
# random walk and greedy at 20 s, seeds 6 and 7, layernorm and attention (bench/ablation.py, each
# result re-measured by compare).  Device tool: carry [".deps"].  $OUT: long.md, a tarball.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
mkdir -p /tmp/s6e
left=$(( ${TOTAL_S:-290} - ($(date +%s) - T0) ))
timeout $(( left + 20 )) env PYTHONUNBUFFERED=1 python3 bench/ablation.py --out /tmp/s6e/long --budget 20s \
  --time-limit $(( left - 5 )) --sasstune "$PWD/build-gpu/sasstune" --kernels "${E_KERNELS:-layernorm,attention}" \
  --config "random s6=--seed 6" --config "greedy s6=--method greedy --seed 6" \
  --config "random s7=--seed 7" --config "greedy s7=--method greedy --seed 7" 2>&1 | grep -v "^$"
cp /tmp/s6e/long/ablation.md $OUT/long.md 2>/dev/null
tar czf $OUT/session6-e.tgz --exclude='*.cubin' --exclude='*.ptx' -C /tmp s6e
echo "done at $(( $(date +%s) - T0 ))s"
