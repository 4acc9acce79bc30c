#!/usr/bin/env bash
# Session 7: does greedy gain from iterated local search (search option greedy_kick, docs/search.md)?
# Greedy stops by itself at its first local optimum (session7-b: 5-35 s of a 60 s budget); with
# greedy_kick=3 it restarts from the best state after three random moves until the budget is spent.
# bench/ablation.py, 30 s budget, the default families, seed 1, on the kernels where greedy ever found
# anything; each result re-measured by `sasstune compare` (400 pairs).  Device tool: carry [".deps"].
# $OUT: kick.md, kick.json.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
rm -rf /tmp/s7k; mkdir -p /tmp/s7k
left=$(( ${TOTAL_S:-400} - ($(date +%s) - T0) ))
timeout $(( left + 20 )) env PYTHONUNBUFFERED=1 python3 bench/ablation.py --out /tmp/s7k --budget ${BUDGET:-30s} \
  --time-limit $(( left - 5 )) --sasstune "$PWD/build-gpu/sasstune" --kernels "${KERNELS:-layernorm,attention,mm_fp8}" \
  --config "greedy=--method greedy --seed ${SEED:-1}" \
  --config "greedy+kick3=--method greedy --seed ${SEED:-1} --set greedy_kick=3" 2>&1 | grep -v "^Command:\|^$"
cp /tmp/s7k/ablation.md $OUT/kick.md; cp /tmp/s7k/ablation.json $OUT/kick.json
for f in /tmp/s7k/*/tune-*.log; do  # steps, restarts and seconds of every tune (its JSON is in the log)
  echo "$f: $(grep -o '"\(steps\|restarts\|seconds\)": [0-9.]*' "$f" | head -3 | tr '\n' ' ')"
done | tee $OUT/steps.txt
echo "done at $(( $(date +%s) - T0 ))s"
