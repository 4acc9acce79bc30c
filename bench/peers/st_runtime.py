"""sasstune's runtime (include/sasstune/runtime.h) from Python, through ctypes: one session on the
stock cubin and its launch spec, many candidates verified bit for bit and timed in interleaved
pairs against stock, the same calls `sasstune compare` and the tuner make.  The peer benchmark
(bench/peers/compileiq_bench.py) uses it as CompileIQ's objective, so that CompileIQ's candidates
pay one worker start per kernel, not one per candidate, as sasstune's own search does.

    s = Session(lib, "stock.cubin", "launch.json")
    ok, why = s.verify(cubin_bytes)            # (True, "") or (False, "mismatch: ...")
    t = s.compare(cubin_bytes, pairs=50)       # {"ratio": time(cand)/time(stock), "ci_lo", ...}
    s.close()

The structs mirror runtime.h; each ctypes copy carries spare room after the C fields, so a
library whose struct grew writes into that room rather than past the end.
"""
import ctypes
import os

ST_OK, ST_ECRASH, ST_ETIMEOUT, ST_EMISMATCH = 0, -9, -10, -11
VERDICT = {ST_ECRASH: "crashed", ST_ETIMEOUT: "timed_out", ST_EMISMATCH: "mismatch"}
_SPARE = 512


class _Options(ctypes.Structure):
    _fields_ = [("verify_sets", ctypes.c_uint), ("pairs", ctypes.c_uint), ("warmup_ms", ctypes.c_double),
                ("sample_us", ctypes.c_double), ("flush_l2", ctypes.c_bool), ("seed", ctypes.c_uint64),
                ("bootstrap", ctypes.c_uint), ("tolerance", ctypes.c_double), ("timeout_s", ctypes.c_double),
                ("device", ctypes.c_int), ("worker", ctypes.c_char_p), ("libcuda", ctypes.c_char_p),
                ("check_reference", ctypes.c_bool), ("_spare", ctypes.c_char * _SPARE)]


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512), ("_spare", ctypes.c_char * _SPARE)]


class _Timing(ctypes.Structure):
    _fields_ = [("ratio", ctypes.c_double), ("ci_lo", ctypes.c_double), ("ci_hi", ctypes.c_double),
                ("a_ms", ctypes.c_double), ("b_ms", ctypes.c_double), ("n", ctypes.c_uint), ("reps", ctypes.c_uint),
                ("_spare", ctypes.c_char * _SPARE)]


class _Info(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char * 128), ("deterministic", ctypes.c_bool), ("verify_on_gpu", ctypes.c_bool),
                ("kernel_ms", ctypes.c_double), ("verify_sets", ctypes.c_uint), ("restarts", ctypes.c_uint),
                ("start_ms", ctypes.c_double), ("restart_ms", ctypes.c_double), ("last_load_ms", ctypes.c_double),
                ("regs", ctypes.c_int), ("local_bytes", ctypes.c_int), ("reference_checks", ctypes.c_uint),
                ("contaminations", ctypes.c_uint), ("last_stray", ctypes.c_bool), ("_spare", ctypes.c_char * _SPARE)]


class RuntimeError_(RuntimeError):
    """A session could not be opened (no GPU, bad spec, the reference fails)."""


def load(path):
    """libsasstune.so at path, with the runtime's prototypes declared."""
    lib = ctypes.CDLL(os.path.abspath(path))
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    proto = {
        "st_runtime_options_init": (None, [ctypes.POINTER(_Options)]),
        "st_launch_load": (ctypes.c_int, [cp, ctypes.POINTER(vp), ctypes.POINTER(_Error)]),
        "st_launch_free": (None, [vp]),
        "st_session_open": (ctypes.c_int, [cp, sz, vp, ctypes.POINTER(_Options), ctypes.POINTER(vp),
                                           ctypes.POINTER(_Error)]),
        "st_session_close": (None, [vp]),
        "st_session_verify": (ctypes.c_int, [vp, cp, sz, ctypes.POINTER(_Error)]),
        "st_session_compare": (ctypes.c_int, [vp, cp, sz, cp, sz, ctypes.c_uint, ctypes.POINTER(_Timing),
                                              ctypes.POINTER(_Error)]),
        "st_session_get_info": (None, [vp, ctypes.POINTER(_Info)]),
        "st_status_str": (cp, [ctypes.c_int]),
    }
    for name, (res, args) in proto.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


class Session:
    """One st_session: the stock cubin and launch spec; the worker lives until close()."""

    def __init__(self, lib, cubin_path, launch_path, libcuda=None, timeout_s=None):
        self.lib, self._s, self._spec = lib, ctypes.c_void_p(), ctypes.c_void_p()
        err = _Error()
        if lib.st_launch_load(launch_path.encode(), ctypes.byref(self._spec), ctypes.byref(err)) != ST_OK:
            raise RuntimeError_("%s: %s" % (launch_path, err.msg.decode(errors="replace")))
        opt = _Options()
        lib.st_runtime_options_init(ctypes.byref(opt))
        self._libcuda = libcuda.encode() if libcuda else None   # kept alive while the session is
        opt.libcuda = self._libcuda
        if timeout_s:
            opt.timeout_s = timeout_s
        self.stock = open(cubin_path, "rb").read()
        rc = lib.st_session_open(self.stock, len(self.stock), self._spec, ctypes.byref(opt), ctypes.byref(self._s),
                                 ctypes.byref(err))
        if rc != ST_OK:
            lib.st_launch_free(self._spec)
            self._spec = ctypes.c_void_p()
            raise RuntimeError_("opening a session on %s: %s" % (cubin_path, err.msg.decode(errors="replace")))

    def verify(self, cubin):
        """(True, "") when cubin matches stock bit for bit on every input set, else (False, why)."""
        err = _Error()
        rc = self.lib.st_session_verify(self._s, cubin, len(cubin), ctypes.byref(err))
        if rc == ST_OK:
            return True, ""
        what = VERDICT.get(rc) or self.lib.st_status_str(rc).decode()
        return False, "%s: %s" % (what, err.msg.decode(errors="replace"))

    def compare(self, cubin, pairs):
        """Paired timing of cubin (B) against stock (A): ratio = time(B)/time(A), below 1 = faster."""
        t, err = _Timing(), _Error()
        rc = self.lib.st_session_compare(self._s, None, 0, cubin, len(cubin), pairs, ctypes.byref(t), ctypes.byref(err))
        if rc != ST_OK:
            what = VERDICT.get(rc) or self.lib.st_status_str(rc).decode()
            return {"error": "%s: %s" % (what, err.msg.decode(errors="replace"))}
        return {"ratio": t.ratio, "ci_lo": t.ci_lo, "ci_hi": t.ci_hi, "a_ms": t.a_ms, "b_ms": t.b_ms,
                "pairs": t.n, "reps": t.reps}

    def info(self):
        i = _Info()
        self.lib.st_session_get_info(self._s, ctypes.byref(i))
        return {"device": i.device.decode(errors="replace"), "deterministic": i.deterministic,
                "kernel_ms": i.kernel_ms, "verify_sets": i.verify_sets, "restarts": i.restarts,
                "start_ms": i.start_ms, "contaminations": i.contaminations}

    def close(self):
        if self._s:
            self.lib.st_session_close(self._s)
            self._s = ctypes.c_void_p()
        if self._spec:
            self.lib.st_launch_free(self._spec)
            self._spec = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
