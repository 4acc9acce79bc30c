#!/usr/bin/env bash
# CPU cost per step of the search (issue 16), --reward model: the search's own ms per step (everything
# but the evaluation, on the search's thread) and PPO's policy work per step (all of it, on any thread;
# in brackets the part its update worker did beside the search), for the random walk, PPO with the
# current defaults (hidden 16, ppo.choices 16, ppo.async 1) and PPO with session 4's (hidden 16,
# ppo.choices 64, updates in the search's thread); then PPO's own ms/step over the random walk's.
#   bash bench/search16/cpu_cost.sh SASSTUNE DIR...   (DIR: a fixture folder with sm_90.cubin [+ sm_90.sass]
#   and launch.json, or a folder with stock.cubin and launch.json); STEPS (default 128).
ST=$1; shift
STEPS=${STEPS:-128}
CFGS=("--method random" "--method ppo" "--method ppo --set ppo.choices=64 --set ppo.async=0")
cell() { # JSON, config index -> "own" or "own / policy [overlapped]" or "own / policy"
  python3 -c "
import json,sys
d=json.loads(sys.argv[1]); i=int(sys.argv[2]); k=1e3/max(d['steps'],1)
s='%.2f' % d['search_ms_per_step']
if i: s+=' / %.2f' % (k*d['policy_seconds'])
if i == 1: s+=' [%.2f]' % (k*d['policy_overlapped_seconds'])
open('/tmp/cpu_cost.eval','w').write('%.3f' % d['eval_ms']); print(s)" "$1" "$2" 2>/dev/null || echo failed
}
echo "| kernel | legal moves | random: own ms/step | PPO new (h16, 16 choices, async): own / policy [overlapped] ms/step | PPO session 4 (h16, 64 choices, sync): own / policy ms/step | PPO new own / random own | cost model eval ms |"
echo "|---|---|---|---|---|---|---|"
for d in "$@"; do
  c=$d/sm_90.cubin; [ -f $c ] || c=$d/stock.cubin
  l=(); [ -f $d/sm_90.sass ] && l=(--listing $d/sm_90.sass)
  n=$($ST moves $c "${l[@]}" 2>/dev/null | grep -m1 -o '[0-9]* legal moves' | grep -o '^[0-9]*')
  row="| $(basename $d) | ${n:-?} |"
  own=()
  for i in 0 1 2; do
    j=$($ST tune $c "${l[@]}" --launch $d/launch.json ${CFGS[$i]} --steps $STEPS --seed 1 --quiet --json \
        -o /tmp/cpu_cost.cubin 2>/dev/null)
    x=$(cell "$j" $i)
    own+=("${x%% *}")
    row="$row $x |"
  done
  r=$(python3 -c "import sys;print('%.1f' % (float(sys.argv[2])/float(sys.argv[1])))" "${own[0]}" "${own[1]}" 2>/dev/null)
  echo "$row ${r:--} | $(cat /tmp/cpu_cost.eval 2>/dev/null) |"
done
