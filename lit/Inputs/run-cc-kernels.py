# Run the cubins sasstune-cc made from lit/Inputs/*.ll on a GPU (through
# CuPy) and compare every output with a CPU reference, bit for bit: the inputs
# are chosen so that the fp32 results are exact.  Used by lit/cc/gpu-run.test.
#   python3 run-cc-kernels.py DIR   (DIR holds the cubins named below)
import os, sys
import numpy as np
import cupy as cp

os.chdir(sys.argv[1])
ok = True
def report(name, good, detail=""):
    global ok
    ok &= bool(good)
    print(f"{'PASS' if good else 'FAIL'} {name} {detail}", flush=True)

rng = np.random.default_rng(1)
# vector add
n = (1 << 20) + 3
a = rng.standard_normal(n, dtype=np.float32); b = rng.standard_normal(n, dtype=np.float32)
f = cp.RawModule(path="vector-add.cubin").get_function("vadd")
da, db, dc = cp.asarray(a), cp.asarray(b), cp.zeros(n + 64, dtype=cp.float32)
f(((n + 255) // 256,), (256,), (da, db, dc, np.int32(n)))
c = cp.asnumpy(dc)
report("vadd", np.array_equal(c[:n], a + b) and not c[n:].any(), f"n={n}")

# block sum: values are multiples of 0.25, so every partial sum is exact in fp32
for cub in ("reduce.cubin", "reduce-O3.cubin"):
    f = cp.RawModule(path=cub).get_function("block_sum")
    for n, threads in ((1 << 20, 256), (1000003, 1024), (77, 128)):
        x = (rng.integers(0, 8, n) * 0.25).astype(np.float32)
        dx, out = cp.asarray(x), cp.zeros(1, dtype=cp.float32)
        f(((n + threads - 1) // threads,), (threads,), (dx, out, np.int32(n)))
        got, want = float(out.get()[0]), float(x.astype(np.float64).sum())
        report(f"block_sum {cub}", got == want, f"n={n} threads={threads} got={got} want={want}")

# smooth: integer inputs, so a+b+c is exact; times fp32(1/3), one rounding
third = np.float32(np.float64.fromhex("0x1.5555560000000p-2"))
def smooth_ref(x):
    n = len(x); ntiles = (n + 255) // 256
    t = np.zeros(ntiles * 256, dtype=np.float32); t[:n] = x
    t = t.reshape(ntiles, 256)
    j = np.arange(256)
    l = t[:, np.maximum(j, 1) - 1]; r = t[:, np.minimum(j, 254) + 1]
    s = ((l + t) + r) * third
    return s.reshape(-1)[:n]
for cub in ("stencil-loop.cubin", "stencil-90a.cubin"):
    f = cp.RawModule(path=cub).get_function("smooth")
    for n, blocks in ((100000, 64), (256 * 3, 7), (1 << 20, 132)):
        x = rng.integers(-50, 50, n).astype(np.float32)
        dx, dout = cp.asarray(x), cp.full(n + 256, -7.0, dtype=cp.float32)
        f((blocks,), (256,), (dx, dout, np.int32(n)))
        o = cp.asnumpy(dout)
        want = smooth_ref(x)
        report(f"smooth {cub}", np.array_equal(o[:n], want) and (o[n:] == -7.0).all(),
               f"n={n} blocks={blocks} maxdiff={np.abs(o[:n]-want).max()}")

# two kernels in one module
m = cp.RawModule(path="two-kernels.cubin")
x = rng.standard_normal(256, dtype=np.float32)
dx = cp.asarray(x)
m.get_function("scale")((1,), (256,), (dx, np.float32(0.5)))
m.get_function("offset")((1,), (256,), (dx, np.float32(0.25)))
want = np.minimum(np.maximum(x * np.float32(0.5), -1), 1) + np.float32(0.25)
report("scale+offset", np.array_equal(cp.asnumpy(dx), want.astype(np.float32)))
print("ALL PASS" if ok else "SOME FAILED")
sys.exit(0 if ok else 1)
