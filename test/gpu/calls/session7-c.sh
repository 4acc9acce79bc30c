#!/usr/bin/env bash
# Session 7, GPU call C (about 6 minutes on the H200), after the regs, xblock2 and pipe branches
# were merged (legality version 6):
#  1. test/gpu/calls/session7-regs.sh: the driver honours a raised register count (attention,
#     rename above R205), then the soundness campaign with every family on — hoist + group,
#     wait, sb, xblock (now with X8 lifted and the single-entry fix), rename with RAISE=1 —
#     both fixture sets, 1,000 walks per fixture, the reference checked after every walk;
#  2. test/gpu/calls/session7-pipe.sh: one NOP per loop pass on the 14 fixtures, outputs checked
#     and timed against stock (the price of an inserted instruction, family 3's groundwork).
# Device tool: carry [".deps"].  $OUT: regs/ (probe.txt, summary.md, ...), pipe/ (pipe.md, pipe.jsonl).
cd "$(dirname "$0")/../../.."
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
mkdir -p $OUT/regs $OUT/pipe
OUT=$OUT/regs WALK_S=${WALK_S:-130} timeout ${REGS_S:-330} bash test/gpu/calls/session7-regs.sh > $OUT/regs/console.txt 2>&1
echo "== regs rc=$? at $(( $(date +%s) - T0 ))s"; tail -40 $OUT/regs/console.txt
OUT=$OUT/pipe timeout ${PIPE_S:-150} bash test/gpu/calls/session7-pipe.sh > $OUT/pipe/console.txt 2>&1
echo "== pipe rc=$? at $(( $(date +%s) - T0 ))s"; cat $OUT/pipe/pipe.md 2>/dev/null || tail -20 $OUT/pipe/console.txt
echo "done at $(( $(date +%s) - T0 ))s"
