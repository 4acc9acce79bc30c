#!/usr/bin/env bash
# sasstune against NVIDIA CompileIQ on the bench kernels (issue 19; docs/benchmarks.md "Peers"):
#   bash test/gpu/calls/peers.sh [KERNELS] [BUDGET] [NAME] [LIMIT_S]
# Expected wall on the H200 (16 cores): set-up and build (~1 min), then per kernel about 3 x BUDGET + 30-40 s
# (stock, sasstune's tune with variants, CompileIQ for the same wall time, the SASS search on
# CompileIQ's cubin, four 400-pair re-measures), all inside a time box ending LIMIT_S (default 530)
# seconds after the start: later kernels get smaller budgets (at least 5 s) or are skipped.
#   smoke (~2 min):  bash test/gpu/calls/peers.sh softmax 8s peers-smoke 150
#   the suite, in two calls of ~9 min (budget 12 s):
#     bash test/gpu/calls/peers.sh mm_leaky_512,bmm,swiglu,softmax,rmsnorm,layernorm,attention 12s peers-a
#     bash test/gpu/calls/peers.sh add,mm_4096,mm_8192,mm_tma_device,mm_tma_host,mm_fp8 12s peers-b
# Needs (made here by `bash bench/peers/fetch-deps.sh .peer GIT_DIR_OF_COMPILEIQ`; never committed):
#   $PEER_DIR/whl/*.whl           CompileIQ 1.1.0 and the dependencies the GPU image lacks (cp312)
#   $PEER_DIR/ptxas-13.3.xz       ptxas 13.3.73 (the search space's version; 13.4/13.5 reject its ACFs)
#   $PEER_SS                      the search space (default $PEER_DIR/ss/ptxas13.3_search_space.bin)
#   $PEER_SS_ATT                  for the attention kernel (default $PEER_DIR/ss/ptxas13.3_att_search_space.bin,
#                                 CompileIQ's variant curated for attention; the default space if absent)
# PEER_DIR defaults to .peer; PEER_CIQ_POOL (16) and PEER_CIQ_PAIRS (50) are passed on.
# Device tool: carry [".deps", ".peer"] (about 13 + 22 MiB).  Results: $OUT/NAME.tgz (the run folder
# without cubins, with CompileIQ's best ACF per kernel), $OUT/NAME.md, console on stdout.
cd "$(dirname "$0")/../../.."
KERNELS=${1:-softmax} BUDGET=${2:-8s} NAME=${3:-peers-smoke} LIMIT_S=${4:-530}
PEER_DIR=${PEER_DIR:-.peer}
PEER_SS=${PEER_SS:-$PEER_DIR/ss/ptxas13.3_search_space.bin}
T0=$(date +%s)
for f in "$PEER_DIR"/whl "$PEER_DIR"/ptxas-13.3.xz "$PEER_SS"; do
  [ -e "$f" ] || { echo "peers.sh: $f is missing (bash bench/peers/fetch-deps.sh; carry .peer)"; exit 1; }
done
python3 --version; ldd --version | head -1
python3 -m pip list 2>/dev/null | grep -iE '^(numpy|pandas|scipy|matplotlib|tqdm|requests|typing.extensions) '
# a failed install is recorded, not fatal: the bench then reports why CompileIQ could not be imported
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/ciq-site \
  "$PEER_DIR"/whl/*.whl || echo "peers.sh: installing the carried wheels failed (rc $?)"
xz -dc "$PEER_DIR/ptxas-13.3.xz" > /tmp/ptxas-13.3 && chmod +x /tmp/ptxas-13.3 || exit 1
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "set up and built at $(( $(date +%s) - T0 ))s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
PTX=()
[ -x .deps/bin/ptxas-13.5 ] && PTX+=(--ptxas "$PWD/.deps/bin/ptxas-13.5")
[ -x /usr/local/cuda/bin/ptxas ] && PTX+=(--ptxas /usr/local/cuda/bin/ptxas)
echo "extra ptxas for sasstune's variants: ${PTX[*]}"
ATT=()   # CompileIQ's attention space ("att" variant) for the attention kernel, when carried
[ -f "${PEER_SS_ATT:-$PEER_DIR/ss/ptxas13.3_att_search_space.bin}" ] && \
  ATT=(--search-space-attention "${PEER_SS_ATT:-$PEER_DIR/ss/ptxas13.3_att_search_space.bin}")
LEFT=$(( LIMIT_S - ($(date +%s) - T0) - 15 ))
timeout $(( LEFT + 60 )) env PYTHONUNBUFFERED=1 python3 bench/peers/compileiq_bench.py --kernels "$KERNELS" \
  --budget "$BUDGET" --time-limit "${LEFT}s" --search-space "$PEER_SS" --ciq-ptxas /tmp/ptxas-13.3 \
  "${ATT[@]}" --ciq-site /tmp/ciq-site --ciq-pool "${PEER_CIQ_POOL:-16}" --ciq-pairs "${PEER_CIQ_PAIRS:-50}" \
  "${PTX[@]}" --out /tmp/$NAME --sasstune build-gpu/sasstune 2>&1 | tee /tmp/$NAME.console
echo "peers rc=${PIPESTATUS[0]} at $(( $(date +%s) - T0 ))s"
cp /tmp/$NAME.console /tmp/$NAME/console.txt 2>/dev/null
cp /tmp/$NAME/results.md $OUT/$NAME.md 2>/dev/null && cat $OUT/$NAME.md
tar czf $OUT/$NAME.tgz --exclude='*.cubin' -C /tmp $NAME
