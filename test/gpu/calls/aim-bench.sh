#!/usr/bin/env bash
# Issue 14: aimed versus uniform proposals at equal budget on bench kernels (docs/profile.md).
# Expected wall time on the H200 (16 cores): about 8 minutes with the defaults (3 kernels: stock
# ~15 s each, then two tunes of BUDGET each plus confirmation); everything is time-boxed by LIMIT_S.
#   bash test/gpu/calls/aim-bench.sh
# Environment:
#   KERNELS=mm_leaky_512,softmax,layernorm   bench kernels (bench/kernels.py)
#   BUDGET=60s        per tune, in seconds with an "s" (--aim auto needs 5 % of it >= 3 s: >= 60s)
#   METHOD=ppo        search method (ppo, random, greedy)
#   SEED=1            tune seed (the same for both arms)
#   LIMIT_S=560       the time box
# Each kernel: bench/stock.py once (cubin, listing, launch spec), then `sasstune tune --reward gpu`
# with --aim off and --aim auto (order alternating between kernels), then `sasstune compare` of the
# two tuned cubins (aimed / uniform).  On the lent H200: run tool with carry [".deps"].  Results:
#   $OUT/summary.md   per kernel and arm: confirmed, ratio [lo, hi], steps, aim and its cost; the
#                     head-to-head ratio; $OUT/aim-bench.tgz the JSON and logs; $OUT/build.log
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
KERNELS=${KERNELS:-mm_leaky_512,softmax,layernorm}
BUDGET=${BUDGET:-60s}
METHOD=${METHOD:-ppo}
SEED=${SEED:-1}
LIMIT_S=${LIMIT_S:-560}
B_S=${BUDGET%s}
left() { echo $(( LIMIT_S - ($(date +%s) - T0) )); }
R=/tmp/aimbench; rm -rf $R; mkdir -p $R
S=$OUT/summary.md
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log 2> $R/build.stderr || { cat $R/build.stderr; exit 1; }
ST=$PWD/build-gpu/sasstune
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
{ echo "# aimed vs uniform proposals ($(date -u +%FT%TZ), $(git rev-parse --short HEAD)): $METHOD, budget $BUDGET, seed $SEED"
  echo; echo "built at $(( $(date +%s) - T0 ))s; $(cat $R/build.stderr | grep CUPTI | head -1)"; echo
  echo "| kernel | arm | confirmed | ratio [95 %] | steps | aim | aim ms |"; echo "|---|---|---|---|---|---|---|"; } > $S
i=0
for k in ${KERNELS//,/ }; do
  [ "$(left)" -gt $(( 2 * B_S + 90 )) ] || { echo "(time box: skipped $k and the rest)" >> $R/notes.txt; break; }
  D=$R/$k; mkdir -p $D
  timeout 120 python3 bench/stock.py --case $k --dir $D --pairs 10 > $D/stock.log 2>&1
  [ -f $D/launch.json ] || { echo "$k: no launch spec (see $k/stock.log)" >> $R/notes.txt; continue; }
  arms="off auto"; [ $((i % 2)) = 1 ] && arms="auto off"; i=$((i + 1))
  L=(); [ -f $D/stock.sass ] && L=(--listing $D/stock.sass)
  for arm in $arms; do
    timeout $(( 2 * B_S + 120 )) $ST tune $D/stock.cubin --launch $D/launch.json "${L[@]}" --reward gpu \
      --method $METHOD --budget $BUDGET --seed $SEED --aim $arm --quiet --json -o $D/$arm.cubin > $D/$arm.json 2> $D/$arm.err
    python3 - "$k" "$arm" "$D/$arm.json" >> $S <<'EOF'
import json, sys
k, arm, p = sys.argv[1:]
try:
    d = json.load(open(p))
except Exception as e:  # noqa: BLE001
    print("| %s | %s | error: %s | | | | |" % (k, arm, str(e)[:60])); sys.exit()
print("| %s | %s | %s | %.4f [%.4f, %.4f] | %s | %s | %.0f |" % (k, arm, d.get("confirmed"), d.get("ratio", 1), d.get("ratio_lo", 1),
      d.get("ratio_hi", 1), d.get("steps"), d.get("aim"), d.get("aim_ms", 0)))
EOF
  done
  if [ -f $D/off.cubin ] && [ -f $D/auto.cubin ] && ! cmp -s $D/off.cubin $D/auto.cubin; then
    timeout 120 $ST compare $D/off.cubin $D/auto.cubin --launch $D/launch.json --pairs 200 --json > $D/head2head.json 2>&1
    echo "$k: aimed/uniform time $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('%.4f [%.4f, %.4f]' % (d['ratio'], d['ci_lo'], d['ci_hi']))" $D/head2head.json 2>&1 | tail -c 200)" >> $R/notes.txt
  else
    echo "$k: the two arms gave the same cubin (or one is missing)" >> $R/notes.txt
  fi
done
{ echo; cat $R/notes.txt 2>/dev/null; echo; echo "done at $(( $(date +%s) - T0 ))s"; } >> $S
tar czf $OUT/aim-bench.tgz --exclude='*.cubin' -C /tmp aimbench
cat $S
