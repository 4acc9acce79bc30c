#!/usr/bin/env bash
# The portable wheel on the GPU machine (issue 20, item 4): install the repaired wheel into a clean
# venv and run the Liger real-client test (test/gpu/liger_client.py) from that install, with no
# build, no -dev package and no checkout on the path.
#   bash test/gpu/calls/wheel-liger.sh [WHEEL]
# WHEEL defaults to .deps/wheels/sasstune-*.whl (scripts/gpu-deps.sh builds it from this tree with
# scripts/build-wheel.sh); the Liger wheel is .deps/wheels/liger_kernel-*.whl (gpu-deps.sh too).
# On the lent H200: run tool with carry [".deps"], command `bash test/gpu/calls/wheel-liger.sh`.
#
# The venv is made with --system-site-packages: the GPU machine's torch and triton are system
# packages (nothing can be downloaded there), and the venv's own site-packages, holding sasstune
# and liger-kernel, comes first.  test/gpu/liger_client.py puts <its checkout>/python first on its
# children's PYTHONPATH; it is run here from a copy outside the checkout (/tmp/st-wheel-run/t/g/),
# so that the only sasstune its children can import is the installed one.  SASSTUNE_LIBRARY and
# SASSTUNE_WORKER are unset: the adapter loads the library from the venv and the library starts the
# worker next to it.  Results under $OUT:
#   env.txt        python, the -dev headers present or not, nvidia-smi
#   pip.log        the installs;  status.json  python -m sasstune status; status-check.txt  the check
#                  that the library and the package are the venv's, with torch/triton/liger versions
#   ldd.txt        ldd of the installed library, command and worker (libelf/libcjson from sasstune.libs)
#   run.txt        sasstune run on the add fixture through the installed command and its worker
#   liger.json, liger.md, liger.log   liger_client.py's report (see that file); BUDGET=20s overrides 10s
#   summary.txt    one line per check; env.txt, pip.log, status*, ldd.txt, run.txt go into checks.tgz
cd "$(dirname "$0")/../../.."
ROOT=$PWD
OUT=${OUT:-/tmp/wheel-liger-out}; mkdir -p "$OUT"
T0=$(date +%s)
SUM=$OUT/summary.txt; : > "$SUM"
check() { echo "$1: $2" | tee -a "$SUM"; }
WHL=${1:-$(ls .deps/wheels/sasstune-*.whl 2>/dev/null | head -1)}
LIGER=$(ls .deps/wheels/liger_kernel-*.whl 2>/dev/null | head -1)
[ -f "$WHL" ] || { check wheel "FAIL: no sasstune wheel (give one, or run scripts/gpu-deps.sh to carry .deps/wheels/sasstune-*.whl)"; exit 1; }
[ -f "$LIGER" ] || { check liger "FAIL: no .deps/wheels/liger_kernel-*.whl (scripts/gpu-deps.sh carries it)"; exit 1; }
[ -f test/gpu/liger_client.py ] || { check liger "FAIL: no test/gpu/liger_client.py in this tree (branch launch17 adds it)"; exit 1; }
WHL=$(cd "$(dirname "$WHL")" && pwd)/$(basename "$WHL"); LIGER=$PWD/$LIGER

{ command -v python3; python3 --version; ldd --version | head -1
  for h in /usr/include/libelf.h /usr/include/cjson/cJSON.h /usr/include/zlib.h; do
    [ -e "$h" ] && echo "present: $h" || echo "absent: $h"; done
  nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$OUT/env.txt" 2>&1
V=/tmp/st-wheel-venv
rm -rf "$V" /tmp/st-wheel-run
# The GPU machine's python3 is itself a venv (/opt/torch/.venv) holding torch and triton, and
# --system-site-packages would give the base interpreter's packages, not those.  So: a plain venv,
# plus a .pth naming python3's own site-packages folders, which come after the venv's own (sasstune
# and liger-kernel).  A Python without ensurepip makes the venv without pip and uses the parent's
# pip through that .pth.
python3 -m venv "$V" > "$OUT/pip.log" 2>&1 ||
  { rm -rf "$V"; python3 -m venv --without-pip "$V" >> "$OUT/pip.log" 2>&1; } ||
  { check venv "FAIL: python3 -m venv (see pip.log)"; exit 1; }
SITE=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -c 'import site; print("\n".join(site.getsitepackages()))' > "$SITE/zz-parent-site.pth"
"$V/bin/python" -m pip install --no-index --no-deps "$WHL" "$LIGER" >> "$OUT/pip.log" 2>&1 ||
  { tail -5 "$OUT/pip.log"; check install "FAIL: pip install (see pip.log)"; exit 1; }
check install "ok: $(basename "$WHL") and $(basename "$LIGER") in $V (parent site-packages after it: $(tr '\n' ' ' < "$SITE/zz-parent-site.pth"))"

unset SASSTUNE_LIBRARY SASSTUNE_WORKER PYTHONPATH
export PATH="$V/bin:$PATH"
mkdir -p /tmp/st-wheel-run/t/g && cd /tmp/st-wheel-run
"$V/bin/python" -m sasstune status > "$OUT/status.json" 2>&1
cat > /tmp/st-wheel-run/status_check.py <<'PYEOF'
import json, os, sys
s = json.load(open(sys.argv[1]))
assert s["library"] == os.path.join(sys.argv[2], "sasstune", "libsasstune.so"), s["library"]
import sasstune, liger_kernel, torch, triton
assert sasstune.__file__.startswith(sys.argv[2]), sasstune.__file__
print("torch", torch.__version__, "triton", triton.__version__, "sasstune", sasstune.__file__)
PYEOF
if "$V/bin/python" /tmp/st-wheel-run/status_check.py "$OUT/status.json" "$SITE" > "$OUT/status-check.txt" 2>&1; then
  check status "ok: library in the venv; $(tail -1 "$OUT/status-check.txt")"
else
  check status "FAIL: $(tail -1 "$OUT/status-check.txt")"
fi
for f in libsasstune.so sasstune sasstune-worker; do echo "== $f"; ldd "$SITE/sasstune/$f"; done > "$OUT/ldd.txt" 2>&1
if ! grep -q "not found" "$OUT/ldd.txt" && [ "$(grep -c "sasstune.libs/libelf" "$OUT/ldd.txt")" -ge 2 ]; then
  check ldd "ok: every library found, libelf from sasstune.libs"
else
  check ldd "FAIL (ldd.txt)"
fi
FIX=$ROOT/test/fixtures/triton-sm90/add_f32_1M
sasstune run "$FIX/sm_90.cubin" --launch "$FIX/launch.json" > "$OUT/run.txt" 2>&1 &&
  check run "ok: sasstune run (installed command, its worker, the GPU)" || check run "FAIL (run.txt)"

cp "$ROOT/test/gpu/liger_client.py" /tmp/st-wheel-run/t/g/liger_client.py
LEFT=$(( 585 - ($(date +%s) - T0) ))
timeout $LEFT "$V/bin/python" /tmp/st-wheel-run/t/g/liger_client.py "$OUT/liger.json" --budget "${BUDGET:-10s}" --timeout $(( LEFT - 10 ))
rc=$?
[ $rc = 0 ] && check liger "ok: liger_client.py from the installed wheel" || check liger "FAIL: liger_client.py rc=$rc"
echo "done at $(( $(date +%s) - T0 ))s"
# at most 8 files come back from the device: the small ones in one archive
(cd "$OUT" && tar czf checks.tgz env.txt pip.log status.json status-check.txt ldd.txt run.txt 2>/dev/null &&
   rm -f env.txt pip.log status.json status-check.txt ldd.txt run.txt)
grep -q FAIL "$SUM" && exit 1 || exit 0
