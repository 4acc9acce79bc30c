#!/usr/bin/env bash
# What bench/peers/compileiq_bench.py needs on the (offline) GPU machine, fetched here where pip
# and the CompileIQ repository snapshot can be reached.  Nothing of it is committed (licences):
# it all goes under .peer/ (ignored: add `/.peer/` to .git/info/exclude), which a GPU call carries.
#
#   bash bench/peers/fetch-deps.sh [DEST] [COMPILEIQ_GIT_DIR]
#
#   DEST/whl/              CompileIQ 1.1.0 and the dependencies its ask/tell path imports that the
#                          GPU image (Python 3.12) lacks, as cp312 manylinux wheels (about 7 MiB)
#   DEST/ptxas-13.3.xz     ptxas 13.3.73 from the nvidia-cuda-nvcc wheel, xz-compressed (11 MiB):
#                          the only published search spaces are for ptxas 13.3, and ptxas 13.4 and
#                          13.5 reject their ACFs ("ptxas fatal : Invalid compiler controls file")
#   DEST/ss/               ptxas13.3_search_space.bin and ptxas13.3_att_search_space.bin, from the
#                          NVIDIA/CompileIQ git history (commit a65dbc4, assets/), when the bare git
#                          dir of a snapshot is given (CompileIQ itself downloads them from GitHub
#                          releases at run time, which the GPU machine cannot reach)
#
# Left out on purpose: ray (ray-2.60.0 cp312: 76 MiB, over the 64 MiB a call carries; bench/peers/ciq_offline.py gives the
# import a stub and uses CompileIQ's MANUAL worker: ask/tell, our own sequential evaluation),
# and what the GPU image already has (numpy, pandas, scipy, matplotlib, requests, tqdm, aiohttp,
# anyio, msgpack, pillow, urllib3).  autograd, cma and Deprecated (pymoo's) are not imported on
# this path.
set -euo pipefail
DEST=${1:-.peer}
GIT=${2:-}
mkdir -p "$DEST/whl" "$DEST/ss"
PIP=(python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
     --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
     --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
     --platform manylinux1_x86_64 -d "$DEST/whl")
"${PIP[@]}" compileiq==1.1.0 pymoo==0.6.1.6 moocore==0.3.2 cffi==2.0.0 \
  pydantic==2.13.4 pydantic-core==2.46.4 annotated-types==0.7.0 typing-inspection==0.4.2 \
  typing-extensions==4.15.0 loguru==0.7.3 dill==0.4.1 json5==0.14.0 platformdirs==4.5.0 \
  alive-progress==3.3.0 about-time==4.2.1 graphemeu==0.7.2
if ! [ -s "$DEST/ptxas-13.3.xz" ]; then
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --platform manylinux_2_17_x86_64 -d "$tmp" nvidia-cuda-nvcc==13.3.73
  (cd "$tmp" && unzip -q -o ./*.whl 'nvidia/cu13/bin/ptxas')
  "$tmp/nvidia/cu13/bin/ptxas" --version | grep -q 'V13.3.73'
  xz -T2 -9 -c "$tmp/nvidia/cu13/bin/ptxas" > "$DEST/ptxas-13.3.xz"
  rm -rf "$tmp"
fi
if [ -n "$GIT" ]; then
  for f in ptxas13.3_search_space.bin ptxas13.3_att_search_space.bin; do
    git --git-dir="$GIT" show "a65dbc4:assets/$f" > "$DEST/ss/$f"
  done
  (cd "$DEST/ss" && sha256sum ./*.bin)
fi
du -sh "$DEST/whl" "$DEST/ptxas-13.3.xz" "$DEST/ss"
