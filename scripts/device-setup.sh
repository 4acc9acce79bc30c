#!/usr/bin/env bash
# On the GPU machine (which has no -dev packages and no network): unpack the
# Debian packages carried in .deps/ (made by scripts/gpu-deps.sh) into a prefix, and
# configure+build there; ptxas 13.5 to .deps/bin/ptxas-13.5.
# Usage (from the repo root on the device): source scripts/device-setup.sh
set -e
ST_PREFIX=${ST_PREFIX:-/tmp/st-prefix}
mkdir -p "$ST_PREFIX"
for f in .deps/*.deb; do [ -e "$f" ] || continue; dpkg -x "$f" "$ST_PREFIX"; done
# ptxas 13.5 (scripts/gpu-deps.sh carries it xz-compressed): .deps/bin/ptxas-13.5, executable.
if [ -f .deps/ptxas-13.5.xz ] && ! [ -x .deps/bin/ptxas-13.5 ]; then
  mkdir -p .deps/bin
  xz -dc .deps/ptxas-13.5.xz > .deps/bin/ptxas-13.5.part
  chmod +x .deps/bin/ptxas-13.5.part
  mv .deps/bin/ptxas-13.5.part .deps/bin/ptxas-13.5
fi
export ST_PREFIX
export CMAKE_PREFIX_PATH="$ST_PREFIX/usr"
export LD_LIBRARY_PATH="$ST_PREFIX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
# redis-server and redis-cli (test/gpu/calls/redis.sh), after the machine's own tools
case ":$PATH:" in *":$ST_PREFIX/usr/bin:"*) ;; *) export PATH="$PATH:$ST_PREFIX/usr/bin" ;; esac
# The carried libelf is only the static archive, which cannot go into the shared
# libsasstune.so (not built -fPIC); use the machine's own libelf.so.1 if it has one.
ST_LIBELF=$ST_PREFIX/usr/lib/x86_64-linux-gnu/libelf.a
for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64; do
  if [ -e "$d/libelf.so.1" ]; then ST_LIBELF=$d/libelf.so.1; break; fi
done
export ST_CMAKE_ARGS="-DCMAKE_PREFIX_PATH=$ST_PREFIX/usr -DLIBELF_LIBRARY=$ST_LIBELF -DCJSON_LIBRARY=$ST_PREFIX/usr/lib/x86_64-linux-gnu/libcjson.so.1 -DCMOCKA_LIBRARY=$ST_PREFIX/usr/lib/x86_64-linux-gnu/libcmocka.so.0"
set +e
