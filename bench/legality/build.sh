#!/usr/bin/env bash
# Build the large kernels the legality bench measures (big.cu, fully unrolled): about 5k and 20k
# SASS instructions for sm_90, with nvcc -> PTX and Triton's bundled ptxas/nvdisasm 12.8 (the
# same tools as the Triton fixtures).  The cubins are committed; the listings are made by run.sh.
# Usage: bench/legality/build.sh
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
TB=${TRITON_BIN:-$(python3 -c 'import triton, os; print(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin"))')}
for spec in big5k:1050 big20k:4000; do
	name=${spec%%:*}; n=${spec##*:}
	"$NVCC" -ptx -arch=sm_90 -O3 -DN="$n" -o "/tmp/$name.ptx" big.cu
	sed -i 's/^\.version 9\.[0-9]*/.version 8.7/' "/tmp/$name.ptx" # ptxas 12.8 reads PTX ISA 8.7
	"$TB/ptxas" -arch=sm_90 -O3 -o "$name.sm_90.cubin" "/tmp/$name.ptx"
	echo "built $name.sm_90.cubin (N=$n)"
done
