#!/usr/bin/env bash
# Session 4, GPU call B (about 9.5 minutes on the H200): one build, then
#   1. test/gpu/calls/profile.sh          sasstune profile on the fixtures, ncu cross-check, headroom (issue 14)
#   2. test/gpu/calls/moves-soundness.sh  the hoist campaign on the ptxas 13.5 fixtures (issue 15)
#   3. test/gpu/calls/search16.sh         methods at equal time, racing re-measured (issue 16), what is left
# $OUT gets profile.md, moves13-summary.md, search16.md and one tarball.  Device tool: carry [".gpu"].
cd "$(dirname "$0")/../../.."
PART_TAIL=40
source test/gpu/calls/parts.sh
LIMIT_S=${PROFILE_S:-200} part profile $(( ${PROFILE_S:-200} + 20 )) test/gpu/calls/profile.sh
cp /tmp/s4/profile/summary.md $OUT/profile.md 2>/dev/null
SETS=triton-sm90-ptxas13.5 BUDGET=80 part moves13 90 test/gpu/calls/moves-soundness.sh
cp /tmp/s4/moves13/summary.md $OUT/moves13-summary.md 2>/dev/null
left=$(( 575 - ($(date +%s) - T0) ))
echo "search16: ${left}s left"
TOTAL_S=$(( left - 10 )) part search16 $left test/gpu/calls/search16.sh
cp /tmp/s4/search16/summary.md $OUT/search16.md 2>/dev/null
tar czf $OUT/session4-b.tgz -C /tmp s4
echo "done at $(( $(date +%s) - T0 ))s"
