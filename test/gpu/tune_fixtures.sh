#!/usr/bin/env bash
# Tuning on the GPU, in one device call of at most 8 minutes (docs/tune.md, "GPU results").
#
#   source scripts/device-setup.sh          # on the lent machine (carried .deps/)
#   bash test/gpu/tune_fixtures.sh [BUDGET_S] [BUILD_DIR]
#
# BUDGET_S (default 30): tuning budget per fixture, lowered (evenly, and said so) to fit the box.  BUILD_DIR (default build-gpu): a Release
# build, made here (sasstune + sasstune-worker) when it has no working `tune`.  Three parts, each
# skipped (and said so) when the 8-minute box (TUNE_LIMIT_S, default 470 s) would not hold it:
#   policy   train a policy on the CPU (model reward) on add, softmax, layernorm and the 2048
#            matmul; apply it to the 512 and 1024 matmuls and attention, as `apply` does (gated by
#            the cost model) and forced (its 16 best-scored moves, no gate, no stop); verify and
#            time each changed result against the original on the GPU
#   methods  PPO vs random walk vs greedy with the GPU reward at equal time budgets
#            (max(10, BUDGET_S/2) s) on the 512 matmul
#   fixtures every fixture tuned with the GPU reward and PPO (confirmation: >= 200 pairs, 95 %
#            interval above 1, fresh inputs, checker); each improved result re-measured apart
#            from the tuner (`sasstune compare`, 400 pairs) and checked (`sasstune check`).
#            Budgets shrink evenly if the box is short.
# Writes $OUT (default BUILD_DIR/tune-results): tune_fixtures.md (tables), tune_fixtures.json
# (every step: command, rc, wall time, parsed JSON), steps.jsonl, logs, cubins.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=${1:-30}
BUILD=${2:-build-gpu}
OUT=${OUT:-$BUILD/tune-results}
LIMIT=${TUNE_LIMIT_S:-470}
START=$(date +%s)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
FIX=$ROOT/test/fixtures/triton-sm90
JSONL=$OUT/steps.jsonl
: > "$JSONL"
elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( LIMIT - $(elapsed) )); }
log() { echo "[$(elapsed)s] $*" | tee -a "$OUT/console.log"; }

# ---- build -----------------------------------------------------------------------------------
if ! [ -x "$BUILD/sasstune" ] || ! "$BUILD/sasstune" tune --help 2>/dev/null | grep -q -- --reward; then
  if [ -d .deps ] && ! [ -f /usr/include/cjson/cJSON.h ] && [ -z "${ST_CMAKE_ARGS:-}" ]; then
    source scripts/device-setup.sh   # also for running: the carried libcjson.so.1
  fi
  log "building $BUILD"
  bash scripts/build-gpu.sh "$BUILD" "$OUT/build.log" || { log "build failed"; exit 1; }
fi
BUILD=$(cd "$BUILD" && pwd)
S=$BUILD/sasstune
export SASSTUNE_WORKER=$BUILD/sasstune-worker
log "$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 | head -n 1)"

# step PART NAME TIMEOUT CMD...: run, record rc, wall time, stdout JSON and stderr tail
step() {
  local part=$1 name=$2 limit=$3; shift 3
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$OUT/out.tmp" 2> "$OUT/err.tmp"
  rc=$?
  t1=$(date +%s.%N)
  cat "$OUT/err.tmp" >> "$OUT/console.log"
  python3 - "$part" "$name" "$rc" "$t0" "$t1" "$OUT/out.tmp" "$OUT/err.tmp" "$*" >> "$JSONL" <<'PY'
import json, sys
part, name, rc, t0, t1, out, err, cmd = sys.argv[1:]
text = open(out).read()
try:
    parsed = json.loads(text)
except Exception:
    parsed = None
print(json.dumps({"part": part, "name": name, "cmd": cmd, "rc": int(rc), "wall_s": float(t1) - float(t0),
                  "json": parsed, "stdout": None if parsed is not None else text[-3000:],
                  "stderr": open(err).read()[-3000:]}))
PY
  log "$part $name: rc $rc, $(awk "BEGIN { printf \"%.0f\", $t1 - $t0 }") s"
  return $rc
}
skip() { echo "{\"part\": \"$1\", \"name\": \"$2\", \"skipped\": \"$3\"}" >> "$JSONL"; log "$1 $2: skipped ($3)"; }
tune() { # tune PART NAME FIXTURE BUDGET OUTDIR [ARGS...]
  local part=$1 name=$2 fx=$3 budget=$4 dir=$5; shift 5
  mkdir -p "$dir"
  step "$part" "$name" $(( budget * 2 + 90 )) "$S" tune "$FIX/$fx/sm_90.cubin" --listing "$FIX/$fx/sm_90.sass" \
    --launch "$FIX/$fx/launch.json" --reward gpu --budget "${budget}s" --seed 1 -o "$dir/$name.cubin" \
    --schedule-out "$dir/$name.schedule.json" --json --quiet "$@"
}
measure() { # measure PART NAME FIXTURE CUBIN: verify + 400 pairs apart from the tuner, and the checker
  local part=$1 name=$2 fx=$3 cubin=$4
  step "$part" "$name.compare" 120 "$S" compare "$FIX/$fx/sm_90.cubin" "$cubin" --launch "$FIX/$fx/launch.json" \
    --pairs 400 --json
  step "$part" "$name.check" 120 "$S" check "$FIX/$fx/sm_90.cubin" "$cubin" --listing "$FIX/$fx/sm_90.sass" \
    --launch "$FIX/$fx/launch.json" --json
}
# whether the last step's JSON says improved
last_improved() {
  tail -n 1 "$JSONL" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()).get("json") or {}; sys.exit(0 if d.get("improved") else 1)'
}

ALL="add_f32_1M softmax_f32_1024x1024 layernorm_f16_1024x1024 matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu matmul_f16_1024x1024x1024_b128x128x64_w4s4 matmul_f16_2048x2048x2048_b128x256x64_w8s3 attn_fwd_f16_bh4_n1024_d64_b128x64"
TRAIN="add_f32_1M softmax_f32_1024x1024 layernorm_f16_1024x1024 matmul_f16_2048x2048x2048_b128x256x64_w8s3"
HELD="matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu matmul_f16_1024x1024x1024_b128x128x64_w4s4 attn_fwd_f16_bh4_n1024_d64_b128x64"
M512=matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu
NFIX=7
OVER=8                           # seconds a tune costs beside its budget (session, confirmation, re-measure)
C=$(( B / 2 > 10 ? B / 2 : 10 )) # the methods part's budget per method
POLICY_S=45
# Plan the box: the fixtures part first gets what is left after the other two, at most B each;
# if that is under 10 s a fixture, drop the methods part, then the policy part.
DO_POLICY=1 DO_METHODS=1
plan() { echo $(( ( $(left) - DO_POLICY * POLICY_S - DO_METHODS * 3 * (C + OVER) ) / NFIX - OVER )); }
[ "$(plan)" -lt 10 ] && DO_METHODS=0
[ "$(plan)" -lt 10 ] && DO_POLICY=0
PER=$(plan)
[ "$PER" -gt "$B" ] && PER=$B
log "plan: policy $DO_POLICY, methods $DO_METHODS (${C}s each), fixtures ${PER}s each (asked ${B}s), box ${LIMIT}s"

# ---- policy: train on the CPU, apply to held-out kernels, confirm on the GPU ---------------------
if [ $DO_POLICY = 1 ]; then
  dirs=""
  for fx in $TRAIN; do dirs="$dirs $FIX/$fx"; done
  step policy train 150 "$S" train $dirs --reward model --steps 3000 --hidden 16 --set ppo.lr=0.01 --seed 1 \
    -o "$OUT/policy.json" --json --quiet
  mkdir -p "$OUT/policy"
  for fx in $HELD; do
    for g in gated forced; do
      extra=""
      [ $g = forced ] && extra="--ungated --margin -1000000 --max-steps 16"
      if step policy "$fx.$g" 120 "$S" apply "$FIX/$fx/sm_90.cubin" --listing "$FIX/$fx/sm_90.sass" \
           --policy "$OUT/policy.json" $extra -o "$OUT/policy/$fx.$g.cubin" --json && last_improved; then
        measure policy "$fx.$g" "$fx" "$OUT/policy/$fx.$g.cubin"
      fi
    done
  done
else
  skip policy all "the ${LIMIT}s box holds the fixtures part only"
fi

# ---- methods: PPO vs random vs greedy at equal time budgets ---------------------------------------
if [ $DO_METHODS = 1 ]; then
  for m in ppo random greedy; do
    tune methods "$m" "$M512" "$C" "$OUT/methods" --method "$m"
  done
else
  skip methods all "the ${LIMIT}s box holds the fixtures part only"
fi

# ---- fixtures: every one, GPU reward, PPO ------------------------------------------------------------
n=$NFIX
for fx in $ALL; do
  per=$(( $(left) / n - OVER ))
  [ "$per" -gt "$PER" ] && per=$PER
  if [ "$per" -lt 5 ]; then
    skip fixtures "$fx" "the ${LIMIT}s box is spent"
  else
    tune fixtures "$fx" "$fx" "$per" "$OUT/fixtures"
    if last_improved && [ "$(left)" -gt 20 ]; then
      measure fixtures "$fx" "$fx" "$OUT/fixtures/$fx.cubin"
    fi
  fi
  n=$(( n - 1 ))
done

# ---- report -------------------------------------------------------------------------------------------
python3 - "$JSONL" "$OUT" "$PER" "$C" "$(elapsed)" <<'PY'
import json, os, sys
jsonl, out, budget, cbudget, wall = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
steps = [json.loads(l) for l in open(jsonl) if l.strip()]
by = {(s["part"], s["name"]): s for s in steps}
def j(part, name):
    s = by.get((part, name))
    return (s or {}).get("json") or {}
def err(part, name):
    s = by.get((part, name))
    if not s:
        return "not run"
    if s.get("skipped"):
        return "skipped: " + s["skipped"]
    t = (s.get("stderr") or "").strip().splitlines()
    return "rc %s: %s" % (s.get("rc"), t[-1] if t else "")
def remeasure(part, name):
    c = j(part, name + ".compare")
    if not c:
        return "-" if (part, name + ".compare") not in by else err(part, name + ".compare")
    r, lo, hi = c.get("ratio"), c.get("ci_lo"), c.get("ci_hi")  # time(B)/time(A): invert
    if r and lo and hi:
        return "%.4f [%.4f, %.4f]" % (1 / r, 1 / hi, 1 / lo)
    return err(part, name + ".compare")
def check(part, name):
    c = j(part, name + ".check")
    return "-" if not c else ("ok" if c.get("ok") else "VIOLATIONS")
md = ["# sasstune tune on the GPU", "", "Budget per fixture %ss, methods %ss each, wall time %ss. Ratios are "
      "original/tuned time (> 1 = faster); the re-measure is `sasstune compare` (400 pairs) apart from the tuner." %
      (budget, cbudget, wall), ""]
md += ["## Every fixture (GPU reward, PPO)", "",
       "| fixture | confirmed | tuned ratio [95 %] | pairs | steps | steps/s | evals | rejected | re-measured | checker | message |",
       "|---|---|---|---|---|---|---|---|---|---|---|"]
for s in steps:
    if s["part"] != "fixtures" or "." in s["name"]:
        continue
    d = s.get("json")
    if not d:
        md.append("| %s | - | - | - | - | - | - | - | - | - | %s |" % (s["name"], err("fixtures", s["name"])))
        continue
    md.append("| %s | %s | %.4f [%.4f, %.4f] | %s | %s | %.1f | %s | %s | %s | %s | %s |" % (
        s["name"], "yes" if d.get("confirmed") else "no", d.get("ratio", 1), d.get("ratio_lo", 1), d.get("ratio_hi", 1),
        d.get("pairs"), d.get("steps"), d.get("steps_per_s", 0), d.get("evals"), d.get("rejected"),
        remeasure("fixtures", s["name"]), check("fixtures", s["name"]), (d.get("message") or "").replace("|", "/")))
md += ["", "## PPO vs random vs greedy, 512 matmul, %ss each (GPU reward)" % cbudget, "",
       "| method | confirmed | ratio [95 %] | best quick ratio | steps | evals | rejected |", "|---|---|---|---|---|---|---|"]
for m in ("ppo", "random", "greedy"):
    d = j("methods", m)
    if not d:
        md.append("| %s | %s |" % (m, err("methods", m)))
        continue
    md.append("| %s | %s | %.4f [%.4f, %.4f] | %.4f | %s | %s | %s |" % (
        m, "yes" if d.get("confirmed") else "no", d.get("ratio", 1), d.get("ratio_lo", 1), d.get("ratio_hi", 1),
        d.get("best_quick_ratio", 1), d.get("steps"), d.get("evals"), d.get("rejected")))
md += ["", "## A policy trained on the CPU (model reward), applied to held-out kernels, timed on the GPU", "",
       "| kernel | gate | moves | model predicts | GPU (verified, 400 pairs) | checker |", "|---|---|---|---|---|---|"]
t = j("policy", "train")
for s in steps:
    if s["part"] != "policy" or s["name"] == "train" or s["name"].endswith((".compare", ".check")):
        continue
    d = s.get("json") or {}
    fx, g = s["name"].rsplit(".", 1)
    md.append("| %s | %s | %s | %s | %s | %s |" % (
        fx, g, d.get("moves", "-"), "%.4f" % d["model_ratio"] if "model_ratio" in d else err("policy", s["name"]),
        remeasure("policy", s["name"]) if d.get("changed", d.get("improved")) else "unchanged", check("policy", s["name"])))
if t:
    md += ["", "Training: " + ", ".join("%s %s steps" % (k.get("kernel"), k.get("steps")) for k in t.get("kernels", []))]
skipped = [s for s in steps if s.get("skipped")]
if skipped:
    md += ["", "Skipped: " + "; ".join("%s %s (%s)" % (s["part"], s["name"], s["skipped"]) for s in skipped)]
open(os.path.join(out, "tune_fixtures.md"), "w").write("\n".join(md) + "\n")
json.dump({"budget_s": budget, "methods_budget_s": cbudget, "wall_s": wall, "steps": steps},
          open(os.path.join(out, "tune_fixtures.json"), "w"), indent=1)
print("\n".join(md))
PY
rm -f "$OUT/out.tmp" "$OUT/err.tmp"
