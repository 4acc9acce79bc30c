#!/usr/bin/env bash
# Session 5, GPU call A (about 7 minutes on the H200): issue 16's racing check after the merge of the
# fresh-session estimate (st_estimate_run): test/gpu/calls/search16.sh with the random walk only
# (METHODS=random, seed 1, 6 s) on the seven fixtures, then every bench kernel tuned at 6 s with the
# default method inside bench/run.py; every confirmed result re-measured apart by `sasstune compare`
# (400 pairs); the table "tuner against re-measure" with the 0.3 % criterion.
# $OUT gets search16.md, transfer.md and one tarball.  Device tool: carry [".deps"].
cd "$(dirname "$0")/../../.."
PART_TAIL=60
source test/gpu/calls/parts.sh
left=$(( 540 - ($(date +%s) - T0) ))
METHODS=${METHODS:-random} SEEDS=${SEEDS:-1} TOTAL_S=$(( left - 10 )) BENCH_BUDGET=${BENCH_BUDGET:-6s} \
  BENCH_KERNELS=${BENCH_KERNELS:-add,rmsnorm,softmax,layernorm,swiglu,attention,mm_leaky_512,bmm,mm_fp8,mm_tma_host,mm_tma_device,mm_4096,mm_8192} \
  part search16 $left test/gpu/calls/search16.sh
cp /tmp/s4/search16/summary.md $OUT/search16.md 2>/dev/null
cp /tmp/s4/search16/transfer.md $OUT/transfer.md 2>/dev/null
cp /tmp/s4/search16/search16.tgz $OUT/ 2>/dev/null
echo "done at $(( $(date +%s) - T0 ))s"
