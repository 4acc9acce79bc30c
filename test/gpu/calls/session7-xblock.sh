#!/usr/bin/env bash
# Session 7, GPU call for the xblock family after X8 was lifted (docs/sched.md "Across blocks": the
# two blocks of an xblock move take swaps, hoists and control edits again) and case (b)'s
# single-entry test was fixed.  Two parts, each test/gpu/calls/moves-soundness.sh (build-gpu,
# incremental the second time), every candidate verified bit for bit on fresh inputs:
#  1. XBLOCK=1 alone (hoist, wait, sb off), all 14 fixtures (both ptxas sets), WALKS (1000) walks
#     each, time box BUDGET1 (200 s from the part's start, build included): only layernorm offers
#     xblock moves; "wide + new" and "new first" take one every other pick when legal and, after
#     one, every other pick inside the slots around it (soundness.c: moves.xblock_near);
#  2. the default families (hoist, wait, sb, xblock) on layernorm of both sets, WALKS walks, time
#     box BUDGET2 (100 s): hoists and group moves into the blocks an xblock move changed.
# Expected: ~1-2 min build, then ~1-2 min per part on the H200 host (the CPU dry run of part 1,
# Debug+ASan on the shared 2-core machine, took up to several minutes per large fixture; walks
# stop at the time box and the summary says how many ran).
# Run: device tool, carry [".deps"], command `bash test/gpu/calls/session7-xblock.sh`.
# $OUT: xblock-alone.md and defaults-layernorm.md (moves-soundness.sh's tables: walks, moves by
# kind, xblock and xblock_near, wrong, stray writes, crashes), the two summary.txt files, and
# session7-xblock.tgz (summaries, failing schedules).
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
mkdir -p /tmp/s7x/alone /tmp/s7x/defaults
HOIST=0 WAIT=0 SB=0 XBLOCK=1 WALKS=${WALKS:-1000} BUDGET=${BUDGET1:-200} OUT=/tmp/s7x/alone \
  timeout $(( ${BUDGET1:-200} + 60 )) bash test/gpu/calls/moves-soundness.sh > /tmp/s7x/alone/console.txt 2>&1
echo "== xblock alone rc=$? at $(( $(date +%s) - T0 ))s"; cat /tmp/s7x/alone/summary.md 2>/dev/null || tail -20 /tmp/s7x/alone/console.txt
cp /tmp/s7x/alone/summary.md $OUT/xblock-alone.md 2>/dev/null; cp /tmp/s7x/alone/summary.txt $OUT/xblock-alone.txt 2>/dev/null
HOIST=1 WAIT=1 SB=1 XBLOCK=1 FIXTURES=layernorm_f16_1024x1024 WALKS=${WALKS:-1000} BUDGET=${BUDGET2:-100} OUT=/tmp/s7x/defaults \
  timeout $(( ${BUDGET2:-100} + 60 )) bash test/gpu/calls/moves-soundness.sh > /tmp/s7x/defaults/console.txt 2>&1
echo "== defaults on layernorm rc=$? at $(( $(date +%s) - T0 ))s"; cat /tmp/s7x/defaults/summary.md 2>/dev/null || tail -20 /tmp/s7x/defaults/console.txt
cp /tmp/s7x/defaults/summary.md $OUT/defaults-layernorm.md 2>/dev/null; cp /tmp/s7x/defaults/summary.txt $OUT/defaults-layernorm.txt 2>/dev/null
tar czf $OUT/session7-xblock.tgz --exclude='*.cubin' -C /tmp s7x
echo "done at $(( $(date +%s) - T0 ))s"
