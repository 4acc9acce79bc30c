#!/usr/bin/env bash
# Session 9, GPU call after the review mends (the pipe stage reads the decoded kernel; the
# timing-to-ratio conversion shared; the soundness drivers' shared helpers): the pipe family in
# tune again (session9-pipe-tune.sh), then short runs of both soundness drivers as rebuilt:
# soundness.c on add and layernorm (every family, 200 walks each), soundness_pipe.c on the three
# pipe fixtures (session8-pipe-campaign.sh with 100/100/200 walks).
#   bash test/gpu/calls/session9-recheck.sh     (device tool, carry [".deps"]; about 5 minutes)
# $OUT: tune/ (pipe-tune.md and the tune JSONs), sound.txt, campaign.txt, console of each part.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh   # OUT, T0, the device set-up, build-gpu; part NAME SECONDS SCRIPT
ROOT_OUT=$OUT
PART_TAIL=12 part tune 150 test/gpu/calls/session9-pipe-tune.sh
mkdir -p "$ROOT_OUT/tune"; cp /tmp/s4/tune/pipe-tune.md /tmp/s4/tune/*.with.json "$ROOT_OUT/tune/" 2>/dev/null
WALKS=200 HOIST=1 WAIT=1 SB=1 RENAME=1 XBLOCK=1 PAR=2 FIXTURE_TIMEOUT=100 FIXTURES="add_f32_1M layernorm_f16_1024x1024" \
  timeout 150 bash test/gpu/soundness.sh /tmp/s9sound > "$ROOT_OUT/sound-console.txt" 2>&1
echo "== soundness rc=$? at $(( $(date +%s) - T0 ))s"; cat /tmp/s9sound/summary.txt | tee "$ROOT_OUT/sound.txt"
WALKS_1=100 WALKS_3=100 WALKS_N=200 CAMPAIGN_S=90 PAIRS=100 PART_TAIL=8 part campaign 150 test/gpu/calls/session8-pipe-campaign.sh
cp /tmp/s4/campaign/campaign.txt "$ROOT_OUT/campaign.txt" 2>/dev/null; cat "$ROOT_OUT/campaign.txt"
echo "all done at $(( $(date +%s) - T0 ))s"
