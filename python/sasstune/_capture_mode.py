"""SASSTUNE_MODE=capture: record each new kernel's first launch now, tune later in one batch.

At a pending kernel's first launch (after the autotuner's benchmarking, like mode tune) the adapter
writes ``<capture dir>/<key>/`` and returns at once: the stock kernel runs, nothing is tuned.
``<key>`` is the schedule-cache key of the kernel, computed by the library's own code for the record
and options run2() would get in mode tune (``st_capture_run_key``: the variant fields too when the
kernel has PTX and SASSTUNE_VARIANTS lets the variants stage run), so one kernel is captured once
however many processes meet it, and ``sasstune tune --captures DIR``
(tools/sasstune/cmd_tune_captures.c), which hands each capture to run2() in mode tune with the record
and facts recorded here, stores its result under the key the next run looks up.  A capture folder
holds:

* ``cubin``: the stock cubin;
* ``ptx``: the PTX it was made from (when Triton kept it), for the compile-variants stage;
* ``launch.json``: the launch spec (docs/runtime.md), buffer files named relative to the folder;
* ``arg*.bin``, ``buf*.bin``: the buffers, as the first-launch capture writes them;
* ``capture.json``: ``{"v": 1, "kernel", "arch", "ptxas_version", "gpu_name", "compute_capability",
  "driver_version", "device", "key", "gpu_uuid", "ptxas_path", "ptxas_options", "variants", "bytes",
  "pid", "date"}`` (all strings but v, bytes, pid; ptxas_path and ptxas_options may be null); the
  batch waits for the GPU lock of ``gpu_uuid`` (_gpulock.py) around each kernel.

The folder is written under a temporary name and renamed into place, so a reader never sees half a
capture.  ``SASSTUNE_CAPTURE_LIMIT`` bounds the bytes of all captures in the folder together
(default 2G in this mode); past it nothing more is captured and one warning says so.
"""
import ctypes
import json
import os
import shutil
import tempfile
import threading
import time

from . import _capture, _gpulock, _lib, _settings
from ._settings import log

FORMAT = 1
DEFAULT_TOTAL = "2G"

_lock = threading.Lock()
_used = {}  # capture dir -> bytes used (measured once, then counted)
_warned = set()


def capture_dir(s):
    if s.capture_dir:
        return s.capture_dir
    return os.path.join(s.resolved_cache_dir() or tempfile.gettempdir(), "captures")


def total_limit(s):
    return _settings.parse_size(s.values.get("capture_limit", DEFAULT_TOTAL))


class _Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]


def options_json(s, device, facts, **extra):
    """The options_json run2() gets in mode tune at a launch on device (_triton.tune_at_launch; extra:
    its granted budget, which is not part of the key)."""
    return s.options(mode="tune", device=device, **facts, **extra)


def cache_key(stock, kernel, state, ptx, options):
    """The schedule-cache key run2() computes for this cubin and record (st_capture_run_key: the
    pass's own code, the variant fields included).  state: the kernel's sasstune metadata (arch,
    ptxas version, path and options); options: options_json()."""
    dll = ctypes.CDLL(_lib.load().path)
    fn = dll.st_capture_run_key
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_lib._Kernel2), ctypes.c_char_p,
                   ctypes.POINTER(_Err)]
    e = lambda v: v.encode("utf-8", "replace") if v else None  # noqa: E731
    k = _lib._Kernel(e(kernel), e(state.get("arch")), e(state.get("ptxas_version")), None, e(options))
    k2 = _lib._Kernel2(k, ctypes.sizeof(_lib._Kernel2), e(ptx), e(state.get("ptxas_path")),
                       e(state.get("ptxas_options")))
    out, err = ctypes.create_string_buffer(65), _Err()
    if fn(stock, len(stock), ctypes.byref(k2), out, ctypes.byref(err)) != 0:
        raise ValueError(err.msg.decode("utf-8", "replace"))
    return out.value.decode()


def _du(path):
    total = 0
    for root, _, files in os.walk(path):
        for n in files:
            try:
                total += os.lstat(os.path.join(root, n)).st_size
            except OSError:
                pass
    return total


def _reserve(root, n, limit):
    """Count n more bytes against the limit; False (and one warning) when they do not fit."""
    with _lock:
        if root not in _used:
            _used[root] = _du(root)
        if _used[root] + n > limit:
            if root not in _warned:
                _warned.add(root)
                log("warn", "capture folder %s: %d bytes captured, the next kernel needs %d more, over "
                    "SASSTUNE_CAPTURE_LIMIT (%d): no more kernels are captured in this process", root,
                    _used[root], n, limit)
            return False
        _used[root] += n
        return True


def _relative_files(spec):
    for p in spec.get("params", []) + spec.get("buffers", []):
        if p.get("file"):
            p["file"] = os.path.basename(p["file"])
    return spec


def capture_launch(ck, state, stock, grid, args, s, ptx=None):
    """Write the capture of this launch (ptx: the kernel's PTX, None when unknown); returns (status,
    message) for the stats."""
    device = _settings.current_device()
    facts = _settings.gpu_facts(device)
    key = cache_key(stock, ck.name, state, ptx, options_json(s, device, facts))
    root = capture_dir(s)
    final = os.path.join(root, key)
    if os.path.exists(os.path.join(final, "capture.json")):
        return "exists", "already captured: %s" % final
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".%s-%d-" % (key[:12], os.getpid()), dir=root)
    try:
        try:
            spec, b = _capture.build_spec(tmp, ck.name, dict(ck.src.signature), list(ck.src.fn.arg_names), args,
                                          ck.metadata, grid, s.capture_limit)
        except _capture.Unsupported as e:
            return "unsupported", str(e)
        if not _reserve(root, b.total_bytes + len(stock), total_limit(s)):
            return "limit", "over SASSTUNE_CAPTURE_LIMIT"
        for _, buf, path in b.buffers:
            with open(path, "wb") as f:
                buf.write_to(f)
        with open(os.path.join(tmp, "launch.json"), "w") as f:
            json.dump(_relative_files(spec), f, indent=1)
        with open(os.path.join(tmp, "cubin"), "wb") as f:
            f.write(stock)
        if ptx:
            with open(os.path.join(tmp, "ptx"), "w") as f:
                f.write(ptx)
        meta = dict(v=FORMAT, kernel=ck.name, arch=state.get("arch"), ptxas_version=state.get("ptxas_version"),
                    device=str(device), key=key, gpu_uuid=_gpulock.gpu_uuid(device), bytes=b.total_bytes, pid=os.getpid(),
                    date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), ptxas_path=state.get("ptxas_path"),
                    ptxas_options=state.get("ptxas_options"), variants=s.variants, **facts)
        with open(os.path.join(tmp, "capture.json"), "w") as f:
            json.dump(meta, f, indent=1)
        try:
            os.rename(tmp, final)
        except OSError:  # another process captured it meanwhile
            return "exists", "already captured: %s" % final
        tmp = None
        return "captured", "%d bytes of arguments into %s" % (b.total_bytes, final)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
