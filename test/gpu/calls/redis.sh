#!/usr/bin/env bash
# Issue 18 on the GPU: the fleet tier through a real redis-server on loopback.  Expected wall time on
# the H200 (16 cores): about 1.5 to 2 minutes (build ~40 s; stock + tune (2 kernels x BUDGET 10 s, plus
# confirmation) + fleet processes ~60 s).
# On the lent H200: run tool with carry [".deps"] (scripts/gpu-deps.sh fills it: hiredis and
# redis-server are carried as .debs), command `bash test/gpu/calls/redis.sh`.
# Sizes: BUDGET (default 10s per kernel), KERNELS (default add1024,matmul).
# Results under $OUT: redis.json (checks and every child's result), redis.md (summary), redis.log
# (the children's stderr, SASSTUNE_LOG=info), build.log, redis-server.log.
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/redis-out}; mkdir -p "$OUT"
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu "$OUT/build.log" || exit 1
grep -q "SASSTUNE_REDIS available" "$OUT/build.log" ||
  { echo "built without hiredis: see build.log"; exit 1; }
echo "built in $(( $(date +%s) - T0 ))s"
command -v redis-server >/dev/null || { echo "no redis-server on PATH ($PATH)"; exit 1; }
# loopback, a free port, its own folder, no persistence; always stopped
RD=$(mktemp -d)
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$PORT" --dir "$RD" --save '' --appendonly no --daemonize no \
  --logfile "$OUT/redis-server.log" &
RPID=$!
trap 'kill $RPID 2>/dev/null; wait $RPID 2>/dev/null; rm -rf "$RD"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
redis-cli -p "$PORT" ping | grep -q PONG ||
  { echo "redis-server did not start:"; ldd "$(command -v redis-server)" | grep "not found"; tail -5 "$OUT/redis-server.log"; exit 1; }
export SASSTUNE_LIBRARY=$PWD/build-gpu/libsasstune.so SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
timeout $(( 570 - ($(date +%s) - T0) )) python3 test/gpu/redis_e2e.py "$OUT/redis.json" \
  --redis "redis://127.0.0.1:$PORT/0" --budget "${BUDGET:-10s}" --tune "${KERNELS:-add1024,matmul}"
rc=$?
echo "redis keys: $(redis-cli -p "$PORT" --scan --pattern 'sasstune:*' | tr '\n' ' ')"
build-gpu/sasstune cache list --redis "redis://127.0.0.1:$PORT/0" 2>&1 | tee -a "$OUT/redis.md" || true
echo "redis_e2e rc=$rc at $(( $(date +%s) - T0 ))s"
exit $rc
