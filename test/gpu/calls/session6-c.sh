#!/usr/bin/env bash
# Session 6, GPU call C (about 9 minutes on the H200), after the IMAD.HI decode fix (legality
# version 5) and the runtime's reference-integrity check were merged:
#  1. test/gpu/calls/moves-soundness.sh: every move family on (hoist + group, wait, sb, rename,
#     xblock), both fixture sets, WALKS (1000) walks per fixture, time box MOVES_S (380 s; the driver now also checks the reference after every walk): is rename
#     sound now (session5-d: 232 of 1,000 wrong on matmul 2048), and no walk leaves a stray write;
#  2. test/gpu/calls/search16.sh on the ptxas 13.5 fixtures: random walk, PPO and greedy at equal
#     4 s budgets, seed 1, the default families, each confirmed result re-measured by compare
#     (issue 16 target 3, the second set the issue names), in what is left of 540 s.
# $OUT: moves-summary.md, search16.md, one tarball.  Device tool: carry [".deps"].
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
MOVES_S=${MOVES_S:-380}
mkdir -p /tmp/s6c/moves /tmp/s6c/search16
HOIST=1 WAIT=1 SB=1 RENAME=1 XBLOCK=1 BUDGET=$(( MOVES_S - 10 )) OUT=/tmp/s6c/moves timeout $MOVES_S \
  bash test/gpu/calls/moves-soundness.sh > /tmp/s6c/moves/console.txt 2>&1
echo "== moves rc=$? at $(( $(date +%s) - T0 ))s"; cat /tmp/s6c/moves/summary.md 2>/dev/null || tail -20 /tmp/s6c/moves/console.txt
cp /tmp/s6c/moves/summary.md $OUT/moves-summary.md 2>/dev/null
left=$(( ${TOTAL_S:-540} - ($(date +%s) - T0) ))
echo "search16: ${left}s left"
OUT=/tmp/s6c/search16 TOTAL_S=$left FIXTURE_DIR=test/fixtures/triton-sm90-ptxas13.5 METHOD_BUDGET=4s SKIP_BENCH=1 \
  timeout $(( left + 15 )) bash test/gpu/calls/search16.sh > /tmp/s6c/search16/console.txt 2>&1
echo "== search16 rc=$? at $(( $(date +%s) - T0 ))s"; tail -40 /tmp/s6c/search16/console.txt
cp /tmp/s6c/search16/summary.md $OUT/search16.md 2>/dev/null
tar czf $OUT/session6-c.tgz --exclude='*.cubin' --exclude='*.ptx' -C /tmp s6c
echo "done at $(( $(date +%s) - T0 ))s"
