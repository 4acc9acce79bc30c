#!/usr/bin/env bash
# Fill .deps/, the folder every GPU call carries to the lent GPU machine (no -dev packages and no
# network there; docs/gpu-tests.md "The carried .deps/"), here on a Debian 12 machine with network:
#   .deps/*.deb                        the Debian packages the GPU build needs (apt-get download),
#                                      and redis-server for test/gpu/calls/redis.sh,
#                                      unpacked there into a prefix by scripts/device-setup.sh
#   .deps/wheels/liger_kernel-*.whl    Liger Kernel (pure Python, --no-deps) for test/gpu's client test
#   .deps/wheels/sasstune-*.whl        this tree's portable wheel (scripts/build-wheel.sh, rebuilt every
#                                      time so that it matches the tree) for test/gpu/calls/wheel-liger.sh
#   .deps/ptxas-13.5.xz                ptxas 13.5.37 (pip nvidia-cuda-nvcc, nvidia/cu13/bin/ptxas), xz -9;
#                                      device-setup.sh unpacks it to .deps/bin/ptxas-13.5
# Safe to run again: what is there is kept (DEPS_FRESH=1 starts over).  The device tool carries at
# most 64 MiB with the working tree; this stops if .deps/ grows past DEPS_MAX_MB (default 40).
#   bash scripts/gpu-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
D=.deps
DEBS=(libelf-dev libcjson-dev libcjson1 zlib1g-dev libcmocka-dev libcmocka0
      # the fleet tier (SASSTUNE_REDIS) and test/gpu/calls/redis.sh: hiredis, redis-server (the binary
      # is redis-tools' redis-check-rdb; redis-server's .deb holds the link) and their non-base libraries
      libhiredis-dev libhiredis0.14 redis-server redis-tools libjemalloc2 liblzf1 libatomic1)
LIGER=${LIGER_VERSION:-0.8.5}
NVCC_WHEEL=nvidia-cuda-nvcc==13.5.37
PY=${PYTHON:-python3}
if [ "${DEPS_FRESH:-0}" = 1 ]; then rm -rf "$D"; fi
rm -rf "$D/bin"   # what device-setup.sh unpacks (50 MB): made there, never carried
mkdir -p "$D/wheels"

# Debian packages: the versions this machine's apt would install (the GPU machine runs Debian 12 too).
need=()
for p in "${DEBS[@]}"; do ls "$D/${p}_"*.deb >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  echo "gpu-deps: apt-get download ${need[*]}"
  (cd "$D" && { apt-get download "${need[@]}" >/dev/null 2>&1 ||
                { apt-get update -qq && apt-get download "${need[@]}" >/dev/null; }; })
fi

if ! ls "$D/wheels/liger_kernel-$LIGER-"*.whl >/dev/null 2>&1; then
  echo "gpu-deps: pip download liger-kernel==$LIGER"
  $PY -m pip download -q --no-deps --only-binary=:all: -d "$D/wheels" "liger-kernel==$LIGER" 2>&1 | grep -v '^\[notice\]' || true
fi

# The sasstune wheel of this tree (incremental build in build/wheel; auditwheel repair).
echo "gpu-deps: scripts/build-wheel.sh"
whl=$(bash scripts/build-wheel.sh build/wheel)
rm -f "$D"/wheels/sasstune-*.whl
cp "$whl" "$D/wheels/"

# ptxas 13.5: from this machine's pip package (scripts/install-deps.sh installs it), else a pip download.
if ! [ -s "$D/ptxas-13.5.xz" ]; then
  find_ptxas() { (cd / && $PY -c 'import nvidia, os
for p in nvidia.__path__:
    f = os.path.join(p, "cu13", "bin", "ptxas")
    if os.access(f, os.X_OK): print(f); break') 2>/dev/null || true; }
  src=$(find_ptxas)
  tmp=
  if [ -z "$src" ]; then
    tmp=$(mktemp -d)
    echo "gpu-deps: pip download $NVCC_WHEEL"
    $PY -m pip download -q --no-deps -d "$tmp" "$NVCC_WHEEL" 2>&1 | grep -v '^\[notice\]' || true
    (cd "$tmp" && $PY -m zipfile -e ./*.whl x)
    src=$tmp/x/nvidia/cu13/bin/ptxas
  fi
  "$src" --version | grep -q 'V13\.5\.37' || { echo "gpu-deps: $src is not ptxas 13.5.37" >&2; exit 1; }
  echo "gpu-deps: xz -T2 -9 $src"
  xz -T2 -9 -c "$src" > "$D/ptxas-13.5.xz.part" && mv "$D/ptxas-13.5.xz.part" "$D/ptxas-13.5.xz"
  if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
fi

# Everything there, and small enough to travel.
for p in "${DEBS[@]}"; do ls "$D/${p}_"*.deb >/dev/null 2>&1 || { echo "gpu-deps: $p.deb missing" >&2; exit 1; }; done
ls "$D/wheels/liger_kernel-$LIGER-"*.whl >/dev/null 2>&1 || { echo "gpu-deps: liger-kernel wheel missing" >&2; exit 1; }
ls "$D"/wheels/sasstune-*.whl >/dev/null 2>&1 || { echo "gpu-deps: sasstune wheel missing" >&2; exit 1; }
xz -t "$D/ptxas-13.5.xz" || { echo "gpu-deps: $D/ptxas-13.5.xz is damaged" >&2; exit 1; }
kb=$(du -sk "$D" | cut -f1)
echo "gpu-deps: $D is $((kb / 1024)) MiB ($kb KiB):"
(cd "$D" && ls -1 ./*.deb wheels/*.whl ptxas-13.5.xz | sed 's|^\./||; s/^/  /')
if [ "$kb" -gt $(( ${DEPS_MAX_MB:-40} * 1024 )) ]; then
  echo "gpu-deps: $D is over ${DEPS_MAX_MB:-40} MiB; the device tool carries 64 MiB in all" >&2; exit 1
fi
