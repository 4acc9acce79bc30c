#!/usr/bin/env bash
# Issue 14 device call (docs/profile.md): `sasstune profile` on the H200.
# Expected wall time on the H200 (16 cores): about 4 minutes with the defaults (build ~1 min,
# fixtures ~40 s, ncu ~40 s, headroom ~10 s a bench kernel until the time box ends).
#   bash test/gpu/calls/profile.sh
# Environment (defaults fit the 4-minute limit):
#   LIMIT_S=230          the time box; every part after the build checks what is left
#   PARTS="fixtures ncu headroom"   which parts, in this order
#   PROFILE_MS=50        GPU time sampled per kernel (sasstune profile --ms)
#   NCU_FIXTURES="softmax_f32_1024x1024 matmul_f16_1024x1024x1024_b128x128x64_w4s4"
#   BENCH_KERNELS=all    bench kernels for the headroom table (comma list, bench/kernels.py)
#   BENCH_PAIRS=30       stock-vs-baseline pairs (bench/stock.py --pairs)
# On the lent H200: run tool with carry [".deps"].  Results under $OUT:
#   summary.md      CUPTI found or not, per fixture the top reasons and the hottest instructions,
#                   the ncu agreement, the headroom table (bench/headroom.py)
#   profile.tgz     every fixture's text/JSON/samples file, the ncu CSVs and comparisons, the bench
#                   kernels' stock.json/profile.json/launch.json, logs
#   build.log
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
LIMIT_S=${LIMIT_S:-230}
PARTS=${PARTS:-fixtures ncu headroom}
PROFILE_MS=${PROFILE_MS:-50}
NCU_FIXTURES=${NCU_FIXTURES:-softmax_f32_1024x1024 matmul_f16_1024x1024x1024_b128x128x64_w4s4}
BENCH_KERNELS=${BENCH_KERNELS:-all}
BENCH_PAIRS=${BENCH_PAIRS:-30}
left() { echo $(( LIMIT_S - ($(date +%s) - T0) )); }
R=/tmp/profile14; rm -rf $R; mkdir -p $R/fixtures $R/ncu $R/headroom
S=$OUT/summary.md
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log 2> $R/build.stderr || { cat $R/build.stderr; exit 1; }
ST=$PWD/build-gpu/sasstune
{ echo "# sasstune profile on the GPU ($(date -u +%FT%TZ), $(git rev-parse --short HEAD))"
  echo; echo "built at $(( $(date +%s) - T0 ))s; $(grep -h CUPTI $R/build.stderr $OUT/build.log | head -1)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  ls -l /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* 2>/dev/null | head -2; } > $S

# 1. every fixture: text, JSON, samples file; the first lines of each go to the summary
if [[ " $PARTS " == *" fixtures "* ]]; then
  echo; echo "## fixtures" >> $S
  for d in test/fixtures/triton-sm90*/*/; do
    d=${d%/}
    [ -f "$d/launch.json" ] && [ -f "$d/sm_90.cubin" ] || continue
    [ "$(left)" -gt 20 ] || { echo "(time box: skipped $d and the rest)" >> $S; break; }
    n=$(basename "$(dirname "$d")")__$(basename "$d")
    L=(); [ -f "$d/sm_90.sass" ] && L=(--listing "$d/sm_90.sass")
    t1=$(date +%s%N)
    timeout 60 $ST profile "$d/sm_90.cubin" --launch "$d/launch.json" "${L[@]}" --ms $PROFILE_MS --top 5 \
      --samples-out $R/fixtures/$n.samples.json > $R/fixtures/$n.txt 2> $R/fixtures/$n.err
    rc=$?
    ms=$(( ($(date +%s%N) - t1) / 1000000 ))
    [ $rc = 0 ] && $ST profile "$d/sm_90.cubin" --samples-in $R/fixtures/$n.samples.json "${L[@]}" --json \
      > $R/fixtures/$n.json 2>> $R/fixtures/$n.err
    { echo; echo "### $n (rc $rc, ${ms} ms)"; echo '```'
      if [ $rc = 0 ]; then sed -n '1,/^listing:/p' $R/fixtures/$n.txt | head -12; else head -3 $R/fixtures/$n.err; fi
      echo '```'; } >> $S
  done
fi

# 2. the ncu cross-check: ncu's source page on one launch of the kernel run by `sasstune run`
if [[ " $PARTS " == *" ncu "* ]]; then
  echo; echo "## ncu cross-check" >> $S
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for f in $NCU_FIXTURES; do
    [ "$(left)" -gt 30 ] || { echo "(time box: skipped $f)" >> $S; break; }
    d=test/fixtures/triton-sm90/$f; n=triton-sm90__$f
    [ -f $R/fixtures/$n.json ] || $ST profile $d/sm_90.cubin --launch $d/launch.json --listing $d/sm_90.sass \
      --ms $PROFILE_MS --json > $R/fixtures/$n.json 2> $R/ncu/$f.prof.err
    k=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernel'])" $d/launch.json)
    timeout $(( $(left) - 10 )) $NCU --target-processes all --kernel-name "$k" --launch-count 1 \
      --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
      $ST run $d/sm_90.cubin --launch $d/launch.json --sets 1 --no-time --timeout 120 > $R/ncu/$f.csv 2> $R/ncu/$f.err
    echo "ncu rc=$? for $f" >> $R/ncu/log.txt
    if [ -s $R/fixtures/$n.json ] && [ -s $R/ncu/$f.csv ]; then
      python3 test/gpu/profile_ncu.py $R/fixtures/$n.json $R/ncu/$f.csv --name $f --json $R/ncu/$f.cmp.json \
        >> $S 2>&1 || echo "comparison failed for $f (see ncu/$f.csv)" >> $S
    else
      { echo "$f: no comparison (profile $( [ -s $R/fixtures/$n.json ] && echo ok || echo missing), ncu csv $( [ -s $R/ncu/$f.csv ] && echo ok || echo missing)):"
        head -3 $R/ncu/$f.err $R/ncu/$f.prof.err 2>/dev/null; } >> $S
    fi
  done
fi

# 3. headroom: each bench kernel stock (bench/stock.py: compiled by Triton, checked, timed against
#    its baseline), then profiled; bench/headroom.py writes the table
if [[ " $PARTS " == *" headroom "* ]]; then
  echo; echo "## headroom" >> $S
  if [ "$BENCH_KERNELS" = all ]; then
    BENCH_KERNELS=$(python3 -c "import sys; sys.path.insert(0,'bench'); import kernels as K; print(','.join(c.name for c in K.CASES))")
  fi
  for k in ${BENCH_KERNELS//,/ }; do
    [ "$(left)" -gt 15 ] || { echo "(time box: skipped $k and the rest)" >> $S; break; }
    D=$R/headroom/$k; mkdir -p $D
    timeout $(( $(left) - 5 )) python3 bench/stock.py --case $k --dir $D --pairs $BENCH_PAIRS > $D/stock.log 2>&1
    if [ -f $D/launch.json ] && [ "$(left)" -gt 8 ]; then
      L=(); [ -f $D/stock.sass ] && L=(--listing $D/stock.sass)
      timeout $(( $(left) - 3 )) $ST profile $D/stock.cubin --launch $D/launch.json "${L[@]}" --ms $PROFILE_MS \
        --json --samples-out $D/samples.json > $D/profile.json 2> $D/profile.err || rm -f $D/profile.json
    fi
    echo "$k: stock rc $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('error') or 'ok')" $D/stock.json 2>/dev/null), profile $( [ -s $D/profile.json ] && echo ok || head -1 $D/profile.err) at $(( $(date +%s) - T0 ))s" >> $R/headroom/log.txt
  done
  cat $R/headroom/log.txt >> $S
  echo >> $S
  python3 bench/headroom.py $R/headroom >> $S 2>&1
fi
echo; echo "done at $(( $(date +%s) - T0 ))s" >> $S
tar czf $OUT/profile.tgz --exclude='*.cubin' -C /tmp profile14
cat $S
