#!/usr/bin/env bash
# Session 8, one device call for family 3 form 1: session8-pipe-campaign.sh (the soundness campaign
# and the timing at long rows) and session8-pipe.sh (compare of the row sum at N = 32..4128).
#   bash test/gpu/calls/session8-b.sh     (device tool, carry [".deps"]; about 6 minutes)
# $OUT: campaign/ and pipe8/ (each part's files), console.txt of each part.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu; part NAME SECONDS SCRIPT
ROOT_OUT=$OUT
PART_TAIL=40 part campaign "${CAMPAIGN_PART_S:-380}" test/gpu/calls/session8-pipe-campaign.sh
cp -r /tmp/s4/campaign "$ROOT_OUT/campaign-part" 2>/dev/null
PART_TAIL=20 part pipe8 "${PIPE8_PART_S:-150}" test/gpu/calls/session8-pipe.sh
cp -r /tmp/s4/pipe8 "$ROOT_OUT/pipe8-part" 2>/dev/null
echo "all done at $(( $(date +%s) - T0 ))s"
