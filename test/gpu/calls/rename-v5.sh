#!/usr/bin/env bash
# Session 6, the rename family's second GPU campaign (about 4 minutes on the H200), legality
# version 5: IMAD.HI's Rc decoded as the pair it is (docs/sched.md "Register renaming", cause
# found).  The session5-d run that refuted it, again: swaps, control edits and renames only
# (RENAME=1, no other family), 1000 walks of 1..32 moves, on the two fixtures with renames
# (matmul 2048: 791-815 renames in 300 CPU dry-run walks; attention: 249), both fixture sets,
# four runs side by side.  Pass: 0 wrong, 0 crashes in all four.
# $OUT gets summary.md and rename-v5.tgz (no cubins).  Device tool: carry [".deps"].
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
BUILD_ONLY=1 BUILD=build-gpu bash test/gpu/soundness.sh /tmp/rv5-build > /dev/null 2>&1 || { echo "driver build failed"; exit 1; }
mkdir -p /tmp/rv5
for set in triton-sm90 triton-sm90-ptxas13.5; do
  for f in matmul_f16_2048x2048x2048_b128x256x64_w8s3 attn_fwd_f16_bh4_n1024_d64_b128x64; do
    FIXTURE_DIR=test/fixtures/$set FIXTURES=$f HOIST=0 WAIT=0 SB=0 XBLOCK=0 RENAME=1 WALKS=${WALKS:-1000} MAX_MOVES=32 \
      ROTATE=250 SEED=1 BUILD=build-gpu SKIP_BUILD=1 FIXTURE_SECONDS=170 FIXTURE_TIMEOUT=190 \
      bash test/gpu/soundness.sh /tmp/rv5/$set-${f%%_f16*} > /tmp/rv5/$set-${f%%_f16*}.log 2>&1 &
  done
done
wait
for d in /tmp/rv5/*/; do
  r=$(basename "$d")
  echo "== $r"; cat "$d/summary.txt" 2>/dev/null || tail -5 "/tmp/rv5/$r.log"
  python3 -c "
import json,glob
for p in glob.glob('$d/*/summary.json'):
    s=json.load(open(p)); print(s['families'], s['walks'], s['moves'], {k:(v['mismatch'],v['crash'],v['timeout'],v['error']) for k,v in s['modes'].items()})"
done | tee $OUT/summary.md
tar czf $OUT/rename-v5.tgz -C /tmp rv5 --exclude='*.cubin'
echo "done at $(( $(date +%s) - T0 ))s"
