#!/usr/bin/env bash
# The GPU run of 2026-11-30 09:22 UTC (docs/tune.md): the SwiGLU kernel that re-measured slower, tuned again
# under the 1.005 confirmation bar, and its earlier tuned cubin re-measured.  SWIGLU_DIR must hold the
# bench run's stock.cubin, stock.sass, launch.json and tuned.cubin (renamed old-tuned.cubin).
cd "$(dirname "$0")/../../.."
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu $OUT/build.log || exit 1
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
S=${SWIGLU_DIR:?set SWIGLU_DIR to the folder with stock.cubin, stock.sass, launch.json, old-tuned.cubin}
timeout 60 build-gpu/sasstune tune $S/stock.cubin --listing $S/stock.sass --launch $S/launch.json --reward gpu --budget 20s --seed 1 --quiet --json -o $OUT/new-tuned.cubin > $OUT/tune.json 2> $OUT/tune.err; echo tune rc=$?
python3 -c "import json;d=json.load(open('$OUT/tune.json'));print({k:d.get(k) for k in ('confirmed','ratio','ratio_lo','ratio_hi','pairs','steps','message')})"
timeout 40 build-gpu/sasstune compare $S/stock.cubin $S/old-tuned.cubin --launch $S/launch.json --pairs 400 2>&1 | tail -3
cmp -s $S/stock.cubin $OUT/new-tuned.cubin && echo "new result: the original" || timeout 40 build-gpu/sasstune compare $S/stock.cubin $OUT/new-tuned.cubin --launch $S/launch.json --pairs 400 2>&1 | tail -3
