"""Shared fixtures: a private Triton cache and schedule cache per test, the real library, a small
Triton kernel compiled for sm_90 without a GPU, and a way to store schedule-cache entries through
the C library (st_cache_store)."""
import ctypes
import hashlib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# python/, so that `import sasstune` finds this checkout; SASSTUNE_TEST_INSTALLED=1 tests the installed
# package instead (scripts/test-wheel.sh: a venv with the wheel), and then it must not be this checkout's.
INSTALLED = os.environ.get("SASSTUNE_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, os.path.dirname(HERE))

import sasstune  # noqa: E402
if INSTALLED and os.path.abspath(sasstune.__file__).startswith(os.path.dirname(HERE) + os.sep):
    raise RuntimeError("SASSTUNE_TEST_INSTALLED=1 but sasstune was imported from the checkout: %s" % sasstune.__file__)
from sasstune import _capture, _lib, _settings, _triton  # noqa: E402

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

ENV = ("SASSTUNE", "SASSTUNE_MODE", "SASSTUNE_BUDGET", "SASSTUNE_POLICY", "SASSTUNE_LOG", "SASSTUNE_CACHE_DIR",
       "SASSTUNE_CAPTURE_LIMIT", "SASSTUNE_KEEP_CAPTURES", "SASSTUNE_GPU_LOCK", "SASSTUNE_CAPTURE_DIR",
       "TRITON_CACHE_DIR", "TRITON_CACHE_MANAGER",
       "TRITON_ALWAYS_COMPILE", "SASSTUNE_VARIANTS", "SASSTUNE_REDIS", "SASSTUNE_REDIS_PREFIX",
       "SASSTUNE_REDIS_TIMEOUT", "SASSTUNE_REDIS_LOCK_TTL", "SASSTUNE_REDIS_LOCKED", "SASSTUNE_REDIS_RETRY")


@triton.jit
def add_kernel(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@triton.jit
def scale_kernel(x, o, n, a, h, b, flag, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    v = tl.load(x + i, mask=m) * a + h.to(tl.float32) + b.to(tl.float32)
    v = tl.where(flag, v, -v)
    tl.store(o + i, v, mask=m)


ADD_SIG = {"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32", "B": "constexpr"}
SCALE_SIG = {"x": "*fp32", "o": "*fp32", "n": "i32", "a": "fp32", "h": "fp16", "b": "bf16", "flag": "u1",
             "B": "constexpr"}


def compile_add(block=1024):
    src = triton.compiler.ASTSource(fn=add_kernel, signature=ADD_SIG, constexprs={"B": block})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32))


def compile_scale():
    src = triton.compiler.ASTSource(fn=scale_kernel, signature=SCALE_SIG, constexprs={"B": 256})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32))


@pytest.fixture(autouse=True)
def clean_env(tmp_path, monkeypatch):
    for v in ENV:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("SASSTUNE_CACHE_DIR", str(tmp_path / "sasstune"))
    monkeypatch.setenv("SASSTUNE_LOG", "error")
    # Keys as store_entry makes them; with variants the key also names the ptxas binaries found
    # (tests that want variants set it back).
    monkeypatch.setenv("SASSTUNE_VARIANTS", "off")
    _settings.set_overrides({})
    old = _lib.set_plugin(None)
    _triton.STATS.reset()
    yield tmp_path
    sasstune.disable()
    _lib.set_plugin(old)
    _settings.set_overrides({})


# ---- the C library's cache, for inserting entries ---------------------------------------------
class KeyFields(ctypes.Structure):
    """st_cache_key_fields, every member (the C side reads them all; extra ones NULL = absent)."""
    _fields_ = [(n, ctypes.c_char_p) for n in ("cubin_sha256", "kernel", "gpu_name", "compute_capability",
                                                "driver_version", "ptxas_version", "sasstune_version",
                                                "variants", "ptxas_options", "legality_version", "moves")]


class Record(ctypes.Structure):
    _fields_ = [("schedule_json", ctypes.c_char_p), ("verification_json", ctypes.c_char_p),
                ("speedup", ctypes.c_double), ("speedup_low", ctypes.c_double), ("speedup_high", ctypes.c_double),
                ("method", ctypes.c_char_p), ("budget", ctypes.c_char_p), ("date", ctypes.c_char_p),
                ("tuned_cubin", ctypes.c_char_p), ("tuned_cubin_size", ctypes.c_size_t),
                ("variant_ptxas_version", ctypes.c_char_p), ("variant_options", ctypes.c_char_p),
                ("negative", ctypes.c_int), ("best_ratio", ctypes.c_double), ("why", ctypes.c_char_p)]


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]



@pytest.fixture
def fake_device(monkeypatch):
    """Stand-ins for the device side of a first launch: an object with FAKE_DEVICE set (a test's
    'device tensor': bytes `data` at a made-up address `ptr`) reads back as those bytes, and
    module loading records each cubin it is given (the list returned) instead of loading it."""
    orig = _capture.buffer_of

    def buffer_of(arg):
        if getattr(arg, "FAKE_DEVICE", False):
            return _capture.DeviceBuffer(arg.ptr, len(arg.data), lambda f: f.write(arg.data))
        return orig(arg)

    loads = []

    def load_binary(ck, cubin):
        loads.append(cubin)
        return ("tuned-module", 222, 32, 0, 1024)

    monkeypatch.setattr(_capture, "buffer_of", buffer_of)
    monkeypatch.setattr(_triton, "_load_binary", load_binary)
    monkeypatch.setattr(_triton, "_warp_size", lambda: 32)
    return loads

def store_entry(cache_dir, stock, tuned, kernel, ptxas_version, facts=None):
    """Insert a schedule-cache entry for `stock` -> `tuned` with the key the adapter will ask for."""
    dll = ctypes.CDLL(_lib.find_library())
    facts = facts or _settings.gpu_facts()
    e = lambda s: s.encode() if s is not None else None  # noqa: E731
    k = KeyFields(e(hashlib.sha256(stock).hexdigest()), e(kernel), e(facts["gpu_name"]),
                  e(facts["compute_capability"]), e(facts["driver_version"]), e(ptxas_version), None)
    r = Record(b"{}", b'{"runs": 1}', 1.05, 1.02, 1.08, b"test", b"1s", None, tuned, len(tuned))
    cache = ctypes.c_void_p()
    err = Error()
    dll.st_cache_open.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.POINTER(Error)]
    dll.st_cache_store.argtypes = [ctypes.c_void_p, ctypes.POINTER(KeyFields), ctypes.POINTER(Record),
                                   ctypes.POINTER(Error)]
    dll.st_cache_free.argtypes = [ctypes.c_void_p]
    assert dll.st_cache_open(ctypes.byref(cache), e(str(cache_dir)), ctypes.byref(err)) == 0, err.msg
    try:
        assert dll.st_cache_store(cache, ctypes.byref(k), ctypes.byref(r), ctypes.byref(err)) == 0, err.msg
    finally:
        dll.st_cache_free(cache)


class FakePlugin:
    """Stands in for the library: answers with `respond(cubin, kernel, launch_json, options)`."""

    def __init__(self, respond, version="0.1.0"):
        self.respond = respond
        self.version = version
        self.path = "fake"
        self.calls = []

    def run(self, cubin, kernel=None, arch=None, ptxas_version=None, launch_json=None, options_json=None,
            ptx=None, ptxas_path=None, ptxas_options=None):
        self.calls.append(dict(cubin=bytes(cubin), kernel=kernel, arch=arch, ptxas_version=ptxas_version,
                               launch_json=launch_json, options_json=options_json, ptx=ptx,
                               ptxas_path=ptxas_path, ptxas_options=ptxas_options))
        code, out, msg = self.respond(bytes(cubin), kernel, launch_json, options_json)
        return _lib.RunResult(code, out, msg, 0.0001)
