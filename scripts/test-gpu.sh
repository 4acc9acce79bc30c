#!/usr/bin/env bash
# GPU tests: build sasstune (Release) on a machine with an NVIDIA GPU and run
# test/gpu/run-tests.sh.  Results go to $OUT (default build-gpu/results):
# results.txt, results.jsonl, summary.txt and build.log.
# On the lent GPU machine (no -dev packages there), carry .deps/ and run:
#   bash scripts/test-gpu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/build-gpu/results}
mkdir -p "$OUT"
if [ -d .deps ] && ! [ -f /usr/include/cjson/cJSON.h ]; then
  source scripts/device-setup.sh
fi
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-$(nproc)}
LOG=$OUT/build.log
: > "$LOG"
# The runtime alone (it needs only cJSON), for when the whole project does not
# build here: a half-written module elsewhere must not stop the GPU tests.
CJ=$(dirname "$(find / -name cJSON.h -path '*cjson*' 2>/dev/null | head -n 1)")
CJLIB=$(find / -name 'libcjson.so*' 2>/dev/null | head -n 1)
F="-O2 -std=c11 -D_GNU_SOURCE -fPIC -Iinclude -Iplugin -Itools/sasstune -I$CJ"
L="$CJLIB -ldl -lpthread -lm"
runtime_so() {
  (set -x; gcc $F -shared runtime/*.c plugin/util/*.c -o "$BUILD/libsasstune.so" $L) >> "$LOG" 2>&1
}
runtime_only() {
  mkdir -p "$BUILD"
  cat > "$BUILD/gpu-main.c" <<'C'
#include "cli.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
void st_cli_error(const char *cmd, const char *fmt, ...)
{ va_list ap; va_start(ap, fmt); fprintf(stderr, "sasstune %s: ", cmd); vfprintf(stderr, fmt, ap); fputc('\n', stderr); va_end(ap); }
int st_cli_fail(const char *cmd, const st_error *err) { st_cli_error(cmd, "%s", err->msg); return ST_EXIT_FAIL; }
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "run")) return st_cmd_run(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "compare")) return st_cmd_compare(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "noise")) return st_cmd_noise(argc - 1, argv + 1);
	fprintf(stderr, "usage: sasstune run|compare|noise ... (runtime-only build)\n");
	return ST_EXIT_USAGE;
}
C
  (set -x
   gcc $F runtime/*.c plugin/util/*.c tools/sasstune-worker/main.c -o "$BUILD/sasstune-worker" $L &&
   gcc $F runtime/*.c plugin/util/*.c tools/sasstune/cmd_run.c tools/sasstune/cmd_compare.c \
       tools/sasstune/cmd_noise.c "$BUILD/gpu-main.c" -o "$BUILD/sasstune" $L) >> "$LOG" 2>&1
}
if ! bash scripts/build-gpu.sh "$BUILD" "$LOG"; then
  echo "full build failed; building the runtime alone" | tee -a "$LOG"
  runtime_only || { tail -n 40 "$LOG"; exit 1; }
fi
# libsasstune.so (for the in-process test); a static libelf may not link into it
if ! cmake --build "$BUILD" -j "$JOBS" --target sasstune >> "$LOG" 2>&1; then
  echo "libsasstune.so did not link; building the runtime part as libsasstune.so" | tee -a "$LOG"
  runtime_so || { tail -n 20 "$LOG"; exit 1; }
fi
bash test/gpu/run-tests.sh "$BUILD" "$OUT"
