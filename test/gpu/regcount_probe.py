"""What the CUDA driver says a cubin's kernel uses: CU_FUNC_ATTRIBUTE_NUM_REGS (4) and
MAX_THREADS_PER_BLOCK (0) after cuModuleLoadData, beside the count in the cubin's EIATTR_REGCOUNT
record as `sasstune` reads it (docs/sched.md "Raising the register count": the driver must honour
a raised count).  usage: python3 regcount_probe.py KERNEL CUBIN...  (one line per cubin)."""
import ctypes
import sys


def main():
    kernel, paths = sys.argv[1].encode(), sys.argv[2:]
    cu = ctypes.CDLL("libcuda.so.1")
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cu.cuInit(0) == 0
    assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    for p in paths:
        data = open(p, "rb").read()
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        rc = cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data))
        if rc:
            print(f"{p}: cuModuleLoadData failed ({rc})")
            continue
        rc = cu.cuModuleGetFunction(ctypes.byref(fn), mod, ctypes.c_char_p(kernel))
        regs, maxt = ctypes.c_int(-1), ctypes.c_int(-1)
        if not rc:
            cu.cuFuncGetAttribute(ctypes.byref(regs), 4, fn)
            cu.cuFuncGetAttribute(ctypes.byref(maxt), 0, fn)
        print(f"{p}: NUM_REGS {regs.value} MAX_THREADS_PER_BLOCK {maxt.value} (get function rc {rc})")
        cu.cuModuleUnload(mod)


if __name__ == "__main__":
    main()
