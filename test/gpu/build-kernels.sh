#!/usr/bin/env bash
# Build the GPU test kernels (test/gpu/kernels.cu) for sm_90 into test/gpu/cubins/.
# Needs nvcc (CUDA 12 or later).  The cubins are committed, so the GPU tests do not
# need nvcc; rebuild them after editing kernels.cu.
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p cubins
for v in GOOD WRONG OOB FAULT TRAP HANG; do
  lower=$(echo "$v" | tr 'A-Z' 'a-z')
  "$NVCC" -arch=sm_90 -cubin -O3 -D"$v" -o "cubins/add_$lower.cubin" kernels.cu
done
"$NVCC" --version | tail -n 2 > cubins/NVCC_VERSION
ls -l cubins
