#!/usr/bin/env bash
# On the GPU machine (which has no -dev packages and no network): unpack the
# Debian packages carried in .deps/ into a prefix, and configure+build there.
# Usage (from the repo root on the device): source scripts/device-setup.sh
set -e
ST_PREFIX=${ST_PREFIX:-/tmp/st-prefix}
mkdir -p "$ST_PREFIX"
for f in .deps/*.deb; do dpkg -x "$f" "$ST_PREFIX"; done
export ST_PREFIX
export CMAKE_PREFIX_PATH="$ST_PREFIX/usr"
export LD_LIBRARY_PATH="$ST_PREFIX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export ST_CMAKE_ARGS="-DCMAKE_PREFIX_PATH=$ST_PREFIX/usr -DLIBELF_LIBRARY=$ST_PREFIX/usr/lib/x86_64-linux-gnu/libelf.a -DCJSON_LIBRARY=$ST_PREFIX/usr/lib/x86_64-linux-gnu/libcjson.so.1 -DCMOCKA_LIBRARY=$ST_PREFIX/usr/lib/x86_64-linux-gnu/libcmocka.so.0"
set +e
