#!/usr/bin/env bash
# Tuned cubins keep their line tables (issue 17, docs/cubin.md "Line tables are rewritten"): for
# every Triton fixture, a 300-swap legal walk (`sasstune shuffle --no-ctrl`), then
#   - the sizes of .debug_line / .nv_debug_line_sass (kept: the original size; dropped: 0),
#   - `nvdisasm -g` of the original and the walked cubin: every instruction keeps its source line,
#   - `sasstune run --reference ORIG WALKED --no-time`: the driver loads the rewritten cubin and
#     its outputs are bit-identical to the original's.
#   bash test/gpu/calls/line-tables.sh
# Results: $OUT/line-tables.txt (one line per fixture and check) and the console on stdout.
# On the lent H200: run tool with carry [".deps"].
cd "$(dirname "$0")/../../.."
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
S=build-gpu/sasstune
NVD=$(python3 -c "import triton,os;print(os.path.dirname(triton.__file__))")/backends/nvidia/bin/nvdisasm
W=/tmp/line-tables; rm -rf $W; mkdir -p $W
R=$OUT/line-tables.txt; : > $R
for d in test/fixtures/triton-sm90/*/; do
  f=$(basename $d)
  timeout 120 $S shuffle $d/sm_90.cubin --listing $d/sm_90.sass --steps 300 --seed 3 --no-ctrl -o $W/$f.cubin > /dev/null 2>&1 \
    || { echo "$f shuffle FAILED" | tee -a $R; continue; }
  sizes=$(readelf -SW $W/$f.cubin 2>/dev/null | sed -n 's/.*\] \(\.debug_line\|\.nv_debug_line_sass\) *PROGBITS *[0-9a-f]* [0-9a-f]* \([0-9a-f]*\).*/\1=0x\2/p' | tr '\n' ' ')
  $NVD -g -c $d/sm_90.cubin | sed 's/\.reuse//g' > $W/$f.a.txt; $NVD -g -c $W/$f.cubin | sed 's/\.reuse//g' > $W/$f.b.txt
  lines=$(python3 - $W/$f.a.txt $W/$f.b.txt <<'PY'
import collections, re, sys
def pairs(fn):
    cur, out = None, collections.Counter()
    for l in open(fn):
        m = re.search(r'//## File "([^"]*)", line (\d+)', l)
        if m: cur = (m.group(1), m.group(2)); continue
        m = re.match(r'\s*/\*([0-9a-f]{4})\*/\s*(.*?);', l)
        if m: out[(re.sub(r'0x[0-9a-f]+', 'X', m.group(2)), cur)] += 1
    return out
a, b = pairs(sys.argv[1]), pairs(sys.argv[2])
print("lines-kept" if a == b else "lines-DIFFER(%d)" % len(a - b))
PY
)
  run=$(timeout 120 $S run --reference $d/sm_90.cubin $W/$f.cubin --launch $d/launch.json --no-time 2>&1 | tail -n 3 | tr '\n' ' ')
  echo "$f: $sizes $lines run: $run" | tee -a $R
done
echo "done at $(( $(date +%s) - T0 ))s"
