#!/usr/bin/env bash
# Session 5, GPU call D (about 4 minutes on the H200): after session5-c's campaign found wrong
# outputs on matmul_f16_2048x2048x2048_b128x256x64_w8s3 only (the one fixture with many rename
# moves), the same campaign on that fixture (both fixture sets) (a) with every family but rename
# and (b) with rename alone (plus swaps and control edits), 1000 walks each, side by side.
# $OUT gets summary-norename.md, summary-rename.md and one tarball.  Device tool: carry [".deps"].
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
BUILD_ONLY=1 BUILD=build-gpu bash test/gpu/soundness.sh /tmp/s5d-build > /dev/null 2>&1 || { echo "driver build failed"; exit 1; }
MM=matmul_f16_2048x2048x2048_b128x256x64_w8s3
mkdir -p /tmp/s5d
for set in triton-sm90 triton-sm90-ptxas13.5; do
  FIXTURE_DIR=test/fixtures/$set FIXTURES=$MM HOIST=1 WAIT=1 SB=1 XBLOCK=1 RENAME=0 WALKS=${WALKS:-1000} MAX_MOVES=32 \
    ROTATE=250 SEED=1 BUILD=build-gpu SKIP_BUILD=1 FIXTURE_SECONDS=170 FIXTURE_TIMEOUT=190 \
    bash test/gpu/soundness.sh /tmp/s5d/norename-$set > /tmp/s5d/norename-$set.log 2>&1 &
done
FIXTURE_DIR=test/fixtures/triton-sm90 FIXTURES=$MM HOIST=0 WAIT=0 SB=0 XBLOCK=0 RENAME=1 WALKS=${WALKS:-1000} MAX_MOVES=32 \
  ROTATE=250 SEED=1 BUILD=build-gpu SKIP_BUILD=1 FIXTURE_SECONDS=170 FIXTURE_TIMEOUT=190 \
  bash test/gpu/soundness.sh /tmp/s5d/rename > /tmp/s5d/rename.log 2>&1 &
wait
for r in norename-triton-sm90 norename-triton-sm90-ptxas13.5 rename; do
  echo "== $r"; cat /tmp/s5d/$r/summary.txt 2>/dev/null || tail -5 /tmp/s5d/$r.log
  python3 -c "
import json,glob
for p in glob.glob('/tmp/s5d/$r/*/summary.json'):
    s=json.load(open(p)); print(s['families'], s['walks'], s['moves'], {k:(v['mismatch'],v['crash'],v['timeout'],v['error']) for k,v in s['modes'].items()})"
done | tee $OUT/summary.md
tar czf $OUT/session5-d.tgz -C /tmp s5d --exclude='*.cubin'
echo "done at $(( $(date +%s) - T0 ))s"
