#!/usr/bin/env bash
# The Python package as a user installs it (issue 20), checked from a fresh venv:
#   1. scripts/build-wheel.sh: pip wheel . through scikit-build-core (no build isolation, no
#      sasstune-cc), auditwheel repair (libelf, libcjson and libhiredis vendored into sasstune.libs/);
#   2. the wheel's name (py3-none-manylinux_*) and files (no LLVM), auditwheel show;
#   3. python3 -m venv without the system site packages; the repaired wheel, pytest, and the host's
#      triton package (links to it and its dist-info: 600 MB, used only to compile kernels in tests);
#   4. from there, with SASSTUNE_LIBRARY unset and no checkout on sys.path: python -m sasstune status
#      (the library inside the venv), ldd (vendored libraries used), sasstune inspect on a fixture,
#      sasstune run reaching the worker next to the command, and the adapter's CPU tests
#      (python/tests with SASSTUNE_TEST_INSTALLED=1).
#   bash scripts/test-wheel.sh [WORK_DIR]    (default build/wheel; the repaired wheel: WORK_DIR/dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
W=${1:-build/wheel}
mkdir -p "$W" && W=$(cd "$W" && pwd)
PY=${PYTHON:-python3}
T0=$(date +%s)
fail() { echo "test-wheel: FAIL: $*" >&2; exit 1; }
step() { echo "test-wheel: $* ($(( $(date +%s) - T0 ))s)"; }
rm -rf "$W/venv" "$W/run"
mkdir -p "$W/run"

step "scripts/build-wheel.sh (logs: $W/build.log, $W/repair.log)"
WHL=$(bash scripts/build-wheel.sh "$W") || fail "scripts/build-wheel.sh"
case $(basename "$WHL") in sasstune-*-py3-none-manylinux_*_x86_64.whl) ;; *) fail "unexpected wheel name $WHL" ;; esac
$PY -m auditwheel show "$WHL" > "$W/show.log" 2>&1 || { cat "$W/show.log"; fail "auditwheel show"; }
files=$($PY -m zipfile -l "$WHL")
for f in sasstune-autoload.pth sasstune/libsasstune.so sasstune/sasstune sasstune/sasstune-worker \
         sasstune.libs/libelf sasstune.libs/libcjson; do
  grep -q "^$f" <<<"$files" || fail "$f is not in $(basename "$WHL")"
done
! grep -qi "llvm" <<<"$files" || fail "LLVM is in the wheel"
echo "  $(basename "$WHL"), $(( $(stat -c %s "$WHL") / 1024 )) KiB"

step "venv (no system site packages)"
$PY -m venv --without-pip "$W/venv"
V=$W/venv/bin/python
SITE=$($V -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
pipv() { local out; out=$($PY -m pip --python "$V" "$@" 2>&1) || { echo "$out"; return 1; }
         [ -z "$out" ] || grep -v '^\[notice\]' <<<"$out" || true; }
pipv install -q --no-index --no-deps "$WHL" || fail "pip install $WHL"
pipv install -q pytest || fail "pip install pytest"
# triton and its metadata (its backends are found through its entry points), linked
TRITON=$(cd / && $PY -c 'import importlib.metadata as m, os, triton
print(os.path.dirname(triton.__file__)); print(m.distribution("triton")._path)')
ln -s $TRITON "$SITE/"

# From here: the venv only, no build tree, no checkout on the path, a neutral working folder.
export -n SASSTUNE_LIBRARY SASSTUNE_WORKER PYTHONPATH 2>/dev/null || true
unset SASSTUNE_LIBRARY SASSTUNE_WORKER PYTHONPATH
export PATH="$W/venv/bin:/usr/local/bin:/usr/bin:/bin"
cd "$W/run"
step "python -m sasstune status"
$V -m sasstune status > status.json || { cat status.json; fail "python -m sasstune status"; }
$V - "$SITE" <<'PYEOF' || { cat status.json; fail "status: the library is not the venv's"; }
import json, os, sys
site = sys.argv[1]
s = json.load(open("status.json"))
lib = s["library"]
assert lib == os.path.join(site, "sasstune", "libsasstune.so"), lib
assert lib.startswith(sys.prefix + os.sep) and sys.prefix != sys.base_prefix, (lib, sys.prefix)
assert os.path.join(site, "sasstune-autoload.pth") in s["pth_installed"], s["pth_installed"]
print("  library:", lib)
PYEOF
step "ldd"
for f in "$SITE/sasstune/libsasstune.so" "$SITE/sasstune/sasstune" "$SITE/sasstune/sasstune-worker"; do
  out=$(ldd "$f")
  ! grep -q "not found" <<<"$out" || { echo "$out"; fail "$f: a library is not found"; }
  for lib in libelf libcjson; do
    l=$(grep "$lib" <<<"$out" || true)
    [ -z "$l" ] || grep -q "=> $SITE/sasstune/../sasstune.libs/" <<<"$l" || { echo "$out"; fail "$f: $lib is not the vendored one"; }
  done
done
grep -q "sasstune.libs/libelf" <<<"$(ldd "$SITE/sasstune/libsasstune.so")" || fail "libsasstune.so does not use the vendored libelf"
step "sasstune inspect, sasstune run, sasstune-cc"
[ "$(command -v sasstune)" = "$W/venv/bin/sasstune" ] || fail "sasstune on PATH is $(command -v sasstune)"
FIX=$ROOT/test/fixtures/triton-sm90/add_f32_1M
sasstune inspect "$FIX/sm_90.cubin" > inspect.txt || fail "sasstune inspect"
grep -qx "    rewritable" inspect.txt || { cat inspect.txt; fail "inspect: add_kernel is not rewritable"; }
grep -q "^  add_kernel: 56 instructions" inspect.txt || { cat inspect.txt; fail "inspect: add_kernel"; }
# On the GPU this verifies and times; here it must get as far as the worker next to the command
# (which then finds no CUDA driver), never "cannot find sasstune-worker".
if sasstune run "$FIX/sm_90.cubin" --launch "$FIX/launch.json" > run.txt 2>&1; then
  echo "  sasstune run succeeded (a GPU here)"
else
  grep -q "CUDA driver\|cuda" run.txt && ! grep -q "sasstune-worker" run.txt || { cat run.txt; fail "sasstune run did not reach the worker"; }
fi
! sasstune-cc --help > cc.txt 2>&1 && grep -q "not in this package" cc.txt || { cat cc.txt; fail "sasstune-cc launcher"; }
step "the adapter's CPU tests against the installed package"
SASSTUNE_TEST_INSTALLED=1 $V -m pytest -q -p no:cacheprovider --rootdir "$ROOT" "$ROOT/python/tests"
step "ok"
