"""One tuning at a time per physical GPU, machine-wide.

Processes that tune at the same time on one GPU time each other's kernels.  Before a first launch
is captured and tuned, the adapter takes an exclusive ``flock`` on
``<schedule cache>/locks/gpu-<uuid>.lock``, where ``<uuid>`` is the GPU's UUID (the same physical
GPU has the same UUID whatever ``CUDA_VISIBLE_DEVICES`` calls it).  ``SASSTUNE_GPU_LOCK`` says what a
process does when another one holds it:

* ``skip`` (default): the launch runs stock at once and the kernel stays armed, so a later launch
  tries again;
* ``wait``: block until the lock is free, then tune.

The lock belongs to the open file: the kernel drops it when the holder exits, even by ``kill -9``,
so no stale lock survives a crash (nothing is ever written into the file, its content means
nothing).  The descriptor is close-on-exec, so the runtime's worker (fork+exec) never holds it; the
worker exits by itself within 0.2 s when its parent dies (runtime/worker.c, parent_watch) or at the
socket's EOF.  Threads of one process contend like processes (each acquire opens the file anew).
"""
import ctypes
import fcntl
import os
import re
import sys
import tempfile

from . import _settings

POLICIES = ("skip", "wait")


def _uuid_from_torch(device):
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if not torch.cuda.is_initialized():
            return None
        return str(torch.cuda.get_device_properties(device).uuid)
    except Exception:
        return None


def _uuid_from_driver(device):
    cu = _settings._libcuda()
    if cu is None:
        return None
    try:
        if cu.cuInit(0) != 0:
            return None
        dev = ctypes.c_int(0)
        if cu.cuDeviceGet(ctypes.byref(dev), ctypes.c_int(device)) != 0:
            return None
        raw = ctypes.create_string_buffer(16)
        get = getattr(cu, "cuDeviceGetUuid_v2", None) or cu.cuDeviceGetUuid
        if get(raw, dev) != 0:
            return None
        h = raw.raw.hex()
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
    except (AttributeError, OSError):
        return None


def normalize(text):
    """'GPU-B3C6...' or a uuid string -> 'b3c6...' (lowercase hex and dashes only), or None."""
    t = re.sub(r"^gpu-", "", (text or "").strip().lower())
    t = re.sub(r"[^0-9a-f-]", "", t)
    return t if re.search(r"[0-9a-f]{8}", t) else None


_uuids = {}


def gpu_uuid(device):
    """The UUID of a device (this process's ordinal), from torch or the driver; memoized.  A
    device with neither gets 'ordinal-N' (then only processes that number GPUs alike share it)."""
    u = _uuids.get(device)
    if u is None:
        u = normalize(_uuid_from_torch(device)) or normalize(_uuid_from_driver(device)) or "ordinal-%d" % device
        _uuids[device] = u
    return u


def lock_path(settings, device):
    base = settings.resolved_cache_dir() or tempfile.gettempdir()
    return os.path.join(base, "locks", "gpu-%s.lock" % gpu_uuid(device))


class Held:
    """A held GPU lock; release() (or leaving the with block, or dying) frees it."""

    def __init__(self, fd, path):
        self.fd, self.path = fd, path

    def release(self):
        if self.fd is not None:
            os.close(self.fd)  # closing the last descriptor of the open file drops the flock
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def acquire_path(path, wait):
    """Lock `path` exclusively: a Held, or None when another holder has it and not wait."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return Held(fd, path)


def acquire(settings, device):
    """The GPU lock of `device` under the settings' policy (SASSTUNE_GPU_LOCK)."""
    return acquire_path(lock_path(settings, device), settings.gpu_lock == "wait")
