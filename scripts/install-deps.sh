#!/usr/bin/env bash
# Install what sasstune needs to build and test, on Debian 12, as root.
# Only apt-get and pip are used; nothing is downloaded at build time.
# Safe to run again: it installs only what is missing.
set -euo pipefail

APT_PKGS=(build-essential cmake pkg-config libelf-dev zlib1g-dev libcjson-dev libcmocka-dev
          llvm-19-dev llvm-19-tools clang-14 libclang-rt-14-dev valgrind python3-pip)
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
need_pip=()
$PY -c 'import triton, sys; sys.exit(0 if triton.__version__ == "3.6.0" else 1)' 2>/dev/null || need_pip+=("triton==3.6.0")
command -v lit >/dev/null 2>&1 || $PY -c 'import lit' 2>/dev/null || need_pip+=("lit")
$PY -c 'import nvidia,os,sys; sys.exit(not any(os.path.exists(os.path.join(p,"cu13","bin","nvdisasm")) for p in nvidia.__path__))' 2>/dev/null || need_pip+=("nvidia-cuda-nvdisasm")  # CUDA 13 nvdisasm: sass -plr tests of nvcc 13 cubins
# CUDA 13 nvdisasm, for the nvcc 13 test cubins in test/fixtures/cuda (Triton's is 12.8).
$PY -c 'import nvidia, os, sys; sys.exit(0 if os.path.exists(os.path.join(list(nvidia.__path__)[0], "cu13", "bin", "nvdisasm")) else 1)' 2>/dev/null || need_pip+=("nvidia-cuda-nvdisasm==13.2.86")
if [ ${#need_pip[@]} -gt 0 ]; then
  echo "install-deps: pip install ${need_pip[*]}"
  # triton's wheel is large but brings the ptxas/nvdisasm 12.8 matching the Triton cubins.
  $PY -m pip install -q --no-deps "${need_pip[@]}" 2>&1 | grep -v "^\[notice\]" || true
fi
$PY -c 'import pytest' 2>/dev/null || $PY -m pip install -q pytest 2>&1 | grep -v "^\[notice\]" || true  # the Triton adapter's tests (with its dependencies)
echo "install-deps: ok"
