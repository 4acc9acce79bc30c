#!/usr/bin/env bash
# CPU cost per step of the search (issue 16), --reward model: the search's own ms per step (everything
# but the evaluation) and PPO's policy share, for the random walk, PPO with the issue-16 defaults
# (hidden 16, ppo.choices 64) and PPO as before (hidden 64, every legal move scored).
#   bash bench/search16/cpu_cost.sh SASSTUNE DIR...   (DIR: a fixture folder with sm_90.cubin [+ sm_90.sass]
#   and launch.json, or a folder with stock.cubin and launch.json); STEPS (default 128).
ST=$1; shift
STEPS=${STEPS:-128}
echo "| kernel | legal moves | random: own ms/step | PPO new (h16, 64 choices): own / policy ms/step | PPO old (h64, all moves): own / policy ms/step | cost model eval ms |"
echo "|---|---|---|---|---|---|"
for d in "$@"; do
  c=$d/sm_90.cubin; [ -f $c ] || c=$d/stock.cubin
  l=(); [ -f $d/sm_90.sass ] && l=(--listing $d/sm_90.sass)
  n=$($ST moves $c "${l[@]}" 2>/dev/null | grep -m1 -o '[0-9]* legal moves' | grep -o '^[0-9]*')
  row="| $(basename $d) | ${n:-?} |"
  for cfg in "--method random" "--method ppo" "--method ppo --hidden 64 --set ppo.choices=0"; do
    j=$($ST tune $c "${l[@]}" --launch $d/launch.json $cfg --steps $STEPS --seed 1 --quiet --json -o /tmp/cpu_cost.cubin 2>/dev/null)
    row="$row $(python3 -c "import json,sys;d=json.loads(sys.argv[1]);p=1e3*d['policy_seconds']/max(d['steps'],1);print('%.2f' % d['search_ms_per_step'] + ('' if '$cfg'=='--method random' else ' / %.2f' % p)); open('/tmp/cpu_cost.eval','w').write('%.3f' % d['eval_ms'])" "$j" 2>/dev/null || echo failed) |"
  done
  echo "$row $(cat /tmp/cpu_cost.eval 2>/dev/null) |"
done
