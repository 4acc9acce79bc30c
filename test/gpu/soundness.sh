#!/usr/bin/env bash
# The legality model's GPU soundness campaign (docs/sched.md): on every Triton fixture, WALKS
# random legal walks of 1..MAX_MOVES moves (four modes in turn: default setting, wide setting,
# wide swaps only, control-code edits only), each verified bit for bit against the original by
# the runtime on fresh input sets (a new session, i.e. new inputs, every ROTATE walks), and the
# reference checked after each: a walk after which the original no longer reproduces wrote
# outside its buffers and fails as a "stray write" (the line's "stray writes N").
#   bash test/gpu/soundness.sh [OUT_DIR]          (default build-soundness/results)
#   WALKS=1000 MAX_MOVES=64 SEED=1 ROTATE=250 FIXTURES="add_f32_1M softmax_f32_1024x1024" ...
#   BUILD_ONLY=1 ...   build the driver only; SKIP_BUILD=1 ...   use the one built, no build
#   PAR=8 ...     fixtures run side by side (one process each, one GPU)
#   FIXTURE_SECONDS=100 ...   no new walk after that many seconds (the summary says how many ran)
#   FIXTURE_TIMEOUT=120 ...   seconds a fixture may take at most (killed: its result is missing)
#   HOIST=1 WAIT=1 SB=1 RENAME=1 XBLOCK=1 ...   the hoist / wait / sb / rename / xblock families
#                 on in every mode (modes: default+new, wide+new, wide-swaps+new, new-first;
#                 docs/sched.md "Hoist and sink", "Later waits", "Scoreboard re-assignment",
#                 "Register renaming", "Across blocks")
#   RAISE=1 ...   (with RENAME=1) renames may raise the register count while the occupancy for the
#                 launch stays (docs/sched.md "Raising the register count"); the line says how
#                 many walks raised it
#   FIXTURE_DIR=test/fixtures/triton-sm90-ptxas13.5 ...   (the fixture set; default
#   test/fixtures/triton-sm90; each <name>/ holds sm_90.cubin, sm_90.sass, launch.json)
# Needs an NVIDIA GPU; on the lent machine carry .deps/ (as scripts/test-gpu.sh).  Writes
# OUT_DIR/<fixture>/summary.json, failing candidates under OUT_DIR/<fixture>/failures/, and
# OUT_DIR/summary.txt (one line per fixture).  Exit status 0 when every walk verified.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${1:-$ROOT/build-soundness/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# The fixture set, checked before the build: every <name>/ of it with a cubin, or FIXTURES.
FIX=${FIXTURE_DIR:-test/fixtures/triton-sm90}
case $FIX in /*) ;; *) FIX=$ROOT/$FIX ;; esac
[ -d "$FIX" ] || { echo "soundness.sh: no fixture folder $FIX" >&2; exit 1; }
FIXTURES=${FIXTURES:-$(cd "$FIX" && for d in */; do if [ -f "$d/sm_90.cubin" ]; then echo "${d%/}"; fi; done)}
[ -n "$FIXTURES" ] || { echo "soundness.sh: no fixtures in $FIX" >&2; exit 1; }
for f in $FIXTURES; do
  for x in sm_90.cubin sm_90.sass launch.json; do
    [ -f "$FIX/$f/$x" ] || { echo "soundness.sh: $FIX/$f/$x is missing" >&2; exit 1; }
  done
done
if [ -d .deps ] && ! [ -f /usr/include/cjson/cJSON.h ] && [ -z "${ST_PREFIX:-}" ]; then
  source scripts/device-setup.sh   # also for running: the carried libcjson.so.1
fi
BUILD=${BUILD:-build-soundness}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LOG=$OUT/build.log
if [ -n "${SKIP_BUILD:-}" ] && [ -x "$BUILD/soundness" ]; then
  :   # SKIP_BUILD=1: reuse the driver a BUILD_ONLY=1 run built (runs side by side must not rebuild)
else
  bash scripts/build-gpu.sh "$BUILD" "$LOG" || exit 1
  cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
  CJINC=$(cache CJSON_INCLUDE_DIR); ELFINC=$(cache LIBELF_INCLUDE_DIR)
  (set -x; gcc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Iplugin -I"$CJINC" -I"$ELFINC" test/gpu/soundness.c \
     "$BUILD/libsasstune_static.a" "$(cache LIBELF_LIBRARY)" "$(cache CJSON_LIBRARY)" $(cache ZLIB_LIBRARY) \
     -ldl -lm -lpthread -o "$BUILD/soundness.$$" && mv -f "$BUILD/soundness.$$" "$BUILD/soundness") >> "$LOG" 2>&1 ||
     { tail -n 20 "$LOG"; exit 1; }   # built aside and renamed: two campaigns may start side by side
fi
[ -n "${BUILD_ONLY:-}" ] && exit 0   # BUILD_ONLY=1: build the driver, run nothing
export SASSTUNE_WORKER=$BUILD/sasstune-worker
WALKS=${WALKS:-1000}; MAX_MOVES=${MAX_MOVES:-64}; SEED=${SEED:-1}; ROTATE=${ROTATE:-250}; HOIST=${HOIST:-0}; WAIT=${WAIT:-0}; SB=${SB:-0}; XBLOCK=${XBLOCK:-0}; RENAME=${RENAME:-0}; RAISE=${RAISE:-0}
{
  echo "# sasstune legality soundness, $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n 1)"
  echo "# walks=$WALKS max_moves=$MAX_MOVES seed=$SEED rotate=$ROTATE hoist=$HOIST wait=$WAIT sb=$SB rename=$RENAME raise=$RAISE xblock=$XBLOCK fixtures=${FIX#$ROOT/}"
} > "$OUT/summary.txt"
# One fixture: its walks, then its line of the summary in OUT/<f>/line.txt (exit 1: some walk failed).
run_one() {
  local f=$1 t0 rc
  mkdir -p "$OUT/$f"
  t0=$(date +%s)
  ${FIXTURE_TIMEOUT:+timeout "$FIXTURE_TIMEOUT"} "$BUILD/soundness" "$FIX/$f/sm_90.cubin" "$FIX/$f/sm_90.sass" "$FIX/$f/launch.json" "$OUT/$f" \
    --walks "$WALKS" --max-moves "$MAX_MOVES" --seed "$SEED" --rotate "$ROTATE" --hoist "$HOIST" --wait "$WAIT" --sb "$SB" --rename "$RENAME" --raise "$RAISE" --xblock "$XBLOCK" --seconds "${FIXTURE_SECONDS:-0}" \
    > "$OUT/$f/stdout.json" 2> "$OUT/$f/stderr.log"
  rc=$?
  python3 - "$f" "$OUT/$f/summary.json" "$rc" "$(( $(date +%s) - t0 ))" > "$OUT/$f/line.txt" <<'PY'
import json, sys
name, path, rc, secs = sys.argv[1:]
try:
    s = json.load(open(path))
except Exception as e:
    print(f"{name}: no summary (exit {rc}): {e}"); sys.exit(0)
modes = " ".join(f"{m}={v['ok']}/{sum(x for k, x in v.items() if k != 'failures_the_checker_caught')}"
                 for m, v in s["modes"].items())
kinds = " ".join(f"{k}={v}" for k, v in s["moves"].items() if k != "total")
strays = sum(v.get("stray_write", 0) for v in s["modes"].values())
raise_ = (f", registers {s['registers']} (raised in {s['raised']} walks, up to {s['registers_max']} of {s['register_limit']})"
          if s.get("register_limit", 0) > s.get("registers", 0) else "")
print(f"{name}: {s['walks']} walks, {s['moves']['total']} moves ({kinds}), failed {s['failed']} "
      f"(stray writes {strays}, contaminations {s.get('contaminations', 0)}; ok/total per mode: {modes}), "
      f"deterministic={s['deterministic']}{raise_}, {secs}s")
PY
  cat "$OUT/$f/line.txt"
  echo "$rc" > "$OUT/$f/rc"
}
# PAR fixtures at a time (default 1; each is one process on one core, sharing the GPU).
PAR=${PAR:-1}
for f in $FIXTURES; do
  while [ "$(jobs -rp | wc -l)" -ge "$PAR" ]; do wait -n; done
  run_one "$f" &
done
wait
status=0
for f in $FIXTURES; do
  cat "$OUT/$f/line.txt" 2>/dev/null >> "$OUT/summary.txt" || echo "$f: no result" >> "$OUT/summary.txt"
  [ "$(cat "$OUT/$f/rc" 2>/dev/null)" = 0 ] || status=1
done
# The campaign's total: stray writes (a walk after which the original no longer reproduced) apart.
python3 - "$OUT" $FIXTURES >> "$OUT/summary.txt" <<'PY'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
walks = failed = strays = contaminations = 0
for n in names:
    try:
        s = json.load(open(f"{out}/{n}/summary.json"))
    except Exception:
        continue
    walks += s["walks"]; failed += s["failed"]; contaminations += s.get("contaminations", 0)
    strays += sum(v.get("stray_write", 0) for v in s["modes"].values())
print(f"total: {walks} walks, failed {failed} (stray writes {strays}, other failures {failed - strays}), "
      f"contaminations {contaminations}")
PY
tail -n 1 "$OUT/summary.txt"
exit $status
