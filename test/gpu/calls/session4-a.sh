#!/usr/bin/env bash
# Session 4, GPU call A (about 9.5 minutes on the H200): one build, then
#   1. test/gpu/calls/redis.sh           the fleet tier on loopback (issue 18), ~1 min after the build
#   2. test/gpu/calls/peers.sh softmax   CompileIQ smoke (issue 19), time box PEERS_S (130 s)
#   3. test/gpu/calls/moves-soundness.sh the hoist soundness campaign (issue 15), what is left of 570 s
# Each part writes into its own folder; $OUT gets redis.md, peers-smoke.md, moves-summary.md and one
# tarball per part.  Device tool: carry [".deps", ".peer"].
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
part redis 150 test/gpu/calls/redis.sh
cp /tmp/s4/redis/redis.md $OUT/redis.md 2>/dev/null
part peers "${PEERS_S:-150}" test/gpu/calls/peers.sh softmax 8s peers-smoke "${PEERS_S:-130}"
cp /tmp/s4/peers/peers-smoke.md $OUT/peers-smoke.md 2>/dev/null
left=$(( 570 - ($(date +%s) - T0) ))
echo "moves: ${left}s left"
BUDGET=$(( left - 10 )) part moves $left test/gpu/calls/moves-soundness.sh
cp /tmp/s4/moves/summary.md $OUT/moves-summary.md 2>/dev/null
tar czf $OUT/session4-a.tgz -C /tmp s4
echo "done at $(( $(date +%s) - T0 ))s"
