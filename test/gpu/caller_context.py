"""A caller that holds its own CUDA context (PyTorch) uses libsasstune.so in
process; a faulting candidate must kill only the worker, never the caller's
context.  Usage: caller_context.py LIBSASSTUNE FIXTURE_DIR CUBIN_DIR"""
import ctypes
import sys

import torch

lib_path, fix, cubins = sys.argv[1:4]


class Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]


lib = ctypes.CDLL(lib_path)
vp, sz = ctypes.c_void_p, ctypes.c_size_t
lib.st_launch_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(vp), ctypes.POINTER(Err)]
lib.st_session_open.argtypes = [ctypes.c_char_p, sz, vp, vp, ctypes.POINTER(vp), ctypes.POINTER(Err)]
lib.st_session_verify.argtypes = [vp, ctypes.c_char_p, sz, ctypes.POINTER(Err)]
lib.st_session_close.argtypes = [vp]
lib.st_launch_free.argtypes = [vp]

x = torch.randn(1 << 20, device="cuda")
y = x * 2
torch.cuda.synchronize()

err = Err()
spec = vp()
assert lib.st_launch_load(f"{fix}/launch.json".encode(), ctypes.byref(spec), ctypes.byref(err)) == 0, err.msg
ref = open(f"{fix}/sm_90.cubin", "rb").read()
sess = vp()
rc = lib.st_session_open(ref, len(ref), spec, None, ctypes.byref(sess), ctypes.byref(err))
assert rc == 0, err.msg
results = []
for name in ["add_good", "add_fault", "add_trap", "add_good"]:
    data = open(f"{cubins}/{name}.cubin", "rb").read()
    rc = lib.st_session_verify(sess, data, len(data), ctypes.byref(err))
    results.append(rc)
    print(f"{name}: status {rc} {err.msg.decode() if rc else 'ok'}")
    # after every candidate, the caller's own context still computes correctly
    z = x + y
    torch.cuda.synchronize()
    assert torch.equal(z, x * 3), "the caller's CUDA context was disturbed"
lib.st_session_close(sess)
lib.st_launch_free(spec)
assert results == [0, -9, -9, 0], results
print("caller context: intact after 2 crashed candidates (statuses %s)" % results)
