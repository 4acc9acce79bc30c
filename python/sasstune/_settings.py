"""Settings, logging, the cache folder and the GPU facts that go into the cache key.

Settings mean what they mean on the C side (include/sasstune/plugin.h, docs/cache.md): they are
read from the environment, ``enable(**overrides)`` overrides them, and every call into the plugin
passes them in options_json, so both sides always agree.
"""
import ctypes
import hashlib
import json
import os
import re
import sys
import threading

MODES = ("tune", "policy", "cache-only", "capture")
LEVELS = ("off", "error", "warn", "info", "debug")

# enable() keyword -> (environment variable, options_json key or None when the C side does not know it)
KNOBS = {
    "mode": ("SASSTUNE_MODE", "mode"),
    "budget": ("SASSTUNE_BUDGET", "budget"),
    "total_budget": ("SASSTUNE_TOTAL_BUDGET", None),
    "retune": ("SASSTUNE_RETUNE", "retune"),
    "policy": ("SASSTUNE_POLICY", "policy"),
    "log": ("SASSTUNE_LOG", "log"),
    "cache_dir": ("SASSTUNE_CACHE_DIR", "cache_dir"),
    "variants": ("SASSTUNE_VARIANTS", "variants"),
    "capture_limit": ("SASSTUNE_CAPTURE_LIMIT", None),
    "keep_captures": ("SASSTUNE_KEEP_CAPTURES", None),
    "gpu_lock": ("SASSTUNE_GPU_LOCK", None),
    "capture_dir": ("SASSTUNE_CAPTURE_DIR", None),
    # the fleet tier (docs/cache.md "Fleet"): checked by the C side on every call
    "redis": ("SASSTUNE_REDIS", "redis"),
    "redis_prefix": ("SASSTUNE_REDIS_PREFIX", "redis_prefix"),
    "redis_timeout": ("SASSTUNE_REDIS_TIMEOUT", "redis_timeout"),
    "redis_lock_ttl": ("SASSTUNE_REDIS_LOCK_TTL", "redis_lock_ttl"),
    "redis_locked": ("SASSTUNE_REDIS_LOCKED", "redis_locked"),
    "redis_retry": ("SASSTUNE_REDIS_RETRY", "redis_retry"),
}

_overrides = {}
_olock = threading.Lock()


def set_overrides(values):
    """enable()'s keywords; None leaves a setting to the environment.  Returns the previous ones."""
    for k in values:
        if k not in KNOBS:
            raise TypeError("unknown setting %r (expected one of %s)" % (k, ", ".join(sorted(KNOBS))))
    with _olock:
        old = dict(_overrides)
        _overrides.clear()
        _overrides.update({k: str(v) for k, v in values.items() if v is not None})
    return old


def truthy(value):
    return (value or "").strip().lower() not in ("", "0", "false", "no", "off")


def parse_size(text):
    """'1G', '512M', '64k' or plain bytes -> int."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)i?[bB]?\s*", text or "")
    if not m:
        raise ValueError("bad size %r (expected e.g. 512M or 2G)" % text)
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


BUDGET_DEFAULT = 300  # seconds per kernel, as on the C side (ST_PASS_BUDGET_DEFAULT)
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text, what):
    """'90s', '30m', '12h', '7d', '2w' or plain seconds -> int, at least 1 (the C side's
    st_cache_parse_duration).  ValueError names the setting."""
    m = re.fullmatch(r"(\d{1,12})([smhdw]?)", text or "")
    if not m:
        raise ValueError("%s: %r is not a duration (expected e.g. 90s, 10m, 2h or plain seconds)" % (what, text))
    n = int(m.group(1)) * _UNITS[m.group(2)]
    if n < 1:
        raise ValueError("%s: %r is not at least 1 s" % (what, text))
    return n


def parse_flag(text, what):
    v = (text or "").strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise ValueError("%s: %r is not 1 or 0 (true/false, yes/no, on/off)" % (what, text))


class Settings:
    """One snapshot of the settings."""

    def __init__(self, values, overridden=()):
        self.values = values  # name -> string, only those set
        self.overridden = frozenset(overridden)  # names set by enable(), for messages
        self.mode = values.get("mode", "tune")
        if self.mode not in MODES:
            raise ValueError("SASSTUNE_MODE: unknown mode %r (expected tune, policy, cache-only or capture)" % self.mode)
        self.budget = values.get("budget")
        self.budget_seconds = parse_duration(self.budget, self.origin("budget")) if self.budget else BUDGET_DEFAULT
        tb = values.get("total_budget")
        self.total_budget = parse_duration(tb, self.origin("total_budget")) if tb else None
        self.retune = parse_flag(values["retune"], self.origin("retune")) if "retune" in values else False
        self.policy = values.get("policy")
        self.log = values.get("log", "warn")
        self.cache_dir = values.get("cache_dir")
        self.variants = values.get("variants", "auto")
        if self.variants not in ("on", "off", "auto"):
            raise ValueError("SASSTUNE_VARIANTS: unknown value %r (expected on, off or auto)" % self.variants)
        self.capture_limit = parse_size(values.get("capture_limit", "1G"))
        self.keep_captures = truthy(values.get("keep_captures"))
        self.capture_dir = values.get("capture_dir")  # mode capture: _capture_mode.py
        self.redis = values.get("redis")  # the fleet tier: _lib.Plugin.check_redis at enable()
        self.gpu_lock = values.get("gpu_lock", "skip")  # _gpulock.py
        if self.gpu_lock not in ("skip", "wait"):
            raise ValueError("SASSTUNE_GPU_LOCK: %r is not skip or wait" % self.gpu_lock)

    def origin(self, name):
        """Where a setting came from, for messages: 'SASSTUNE_BUDGET' or 'enable(budget=...)'."""
        return "enable(%s=...)" % name if name in self.overridden else KNOBS[name][0]

    def options(self, **extra):
        """options_json for the plugin: every setting the C side knows, plus extra (GPU facts, mode)."""
        o = {}
        for name, (_, key) in KNOBS.items():
            if key and name in self.values:
                o[key] = self.values[name]
        for k, v in extra.items():
            if v is not None:
                o[k] = str(v)
        return json.dumps(o, sort_keys=True)

    def resolved_cache_dir(self):
        """The schedule cache folder, by the C side's rules (docs/cache.md); None when there is none."""
        if self.cache_dir:
            return self.cache_dir
        xdg = os.environ.get("XDG_CACHE_HOME")
        if xdg and os.path.isabs(xdg):
            return os.path.join(xdg, "sasstune")
        home = os.environ.get("HOME")
        return os.path.join(home, ".cache", "sasstune") if home else None


_snap_lock = threading.Lock()
_snap = (None, None)


def current():
    """The settings now: environment, then enable()'s overrides.  Cheap when nothing changed."""
    global _snap
    env = tuple(os.environ.get(env) for env, _ in KNOBS.values())
    with _olock:
        ov = tuple(sorted(_overrides.items()))
    key = (env, ov)
    with _snap_lock:
        if _snap[0] == key:
            return _snap[1]
    values = {}
    for (name, (env_name, _)), v in zip(KNOBS.items(), env):
        if v:  # an empty variable counts as unset, as on the C side
            values[name] = v
    values.update(dict(ov))
    s = Settings(values, overridden=[name for name, _ in ov])
    with _snap_lock:
        _snap = (key, s)
    return s


# ---- logging: same levels and line shape as the C side --------------------------------------
_LEVEL_WORDS = {"error": "error", "warn": "warning", "info": "info", "debug": "debug"}


def log(level, fmt, *args):
    try:
        s = current()
        target = s.log
    except ValueError:
        target = "warn"
    if target in LEVELS:
        limit, path = LEVELS.index(target), None
    else:
        limit, path = LEVELS.index("info"), target
    if level not in LEVELS or LEVELS.index(level) > limit or level == "off":
        return
    text = fmt % args if args else fmt
    text = "".join(ch if ch >= " " and ch != "\x7f" else "?" for ch in text)
    line = "sasstune[%d] %s: %s\n" % (os.getpid(), _LEVEL_WORDS.get(level, level), text)
    data = line.encode("utf-8", "replace")
    try:
        if path:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, data)  # one write, so lines of concurrent processes do not mix
            finally:
                os.close(fd)
        else:
            os.write(2, data)
    except OSError:
        pass


# ---- the policy file's identity, for the Triton cache namespace ------------------------------
_policy_memo = {}


def file_digest(path):
    """SHA-256 of a file (memoized on path, size and mtime); 'missing' when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    key = (path, st.st_size, st.st_mtime_ns)
    d = _policy_memo.get(key)
    if d is None:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            d = h.hexdigest()
        except OSError:
            d = "missing"
        _policy_memo[key] = d
    return d


# ---- GPU facts (part of the schedule cache key) -----------------------------------------------
UNKNOWN = {"gpu_name": "unknown", "compute_capability": "unknown", "driver_version": "unknown"}
_facts = {}
_facts_lock = threading.Lock()


def _libcuda():
    names = [os.environ.get("TRITON_LIBCUDA_PATH"), os.environ.get("SASSTUNE_LIBCUDA"), "libcuda.so.1", "libcuda.so"]
    for n in names:
        if not n:
            continue
        if os.path.isdir(n):
            n = os.path.join(n, "libcuda.so.1")
        try:
            return ctypes.CDLL(n)
        except OSError:
            continue
    return None


def _nvml_driver_version():
    """The driver's own version ('580.65.06') from NVML, or None."""
    for n in ("libnvidia-ml.so.1", "libnvidia-ml.so"):
        try:
            nvml = ctypes.CDLL(n)
        except OSError:
            continue
        try:
            init = getattr(nvml, "nvmlInit_v2", None) or nvml.nvmlInit
            if init() != 0:
                return None
            buf = ctypes.create_string_buffer(96)
            ok = nvml.nvmlSystemGetDriverVersion(buf, ctypes.c_uint(96)) == 0
            nvml.nvmlShutdown()
            return buf.value.decode() if ok and buf.value else None
        except (AttributeError, OSError):
            return None
    return None


def probe_gpu(device):
    """{gpu_name, compute_capability, driver_version} of a CUDA device through the driver API:
    cuDeviceGetName, the compute capability attributes, and the driver version (NVML's
    '580.65.06' when NVML is there, else cuDriverGetVersion's CUDA version, e.g. '13.0')."""
    cu = _libcuda()
    if cu is None:
        return dict(UNKNOWN)
    facts = dict(UNKNOWN)
    try:
        if cu.cuInit(0) != 0:
            return facts
        v = ctypes.c_int(0)
        drv = _nvml_driver_version()
        if drv:
            facts["driver_version"] = drv
        elif cu.cuDriverGetVersion(ctypes.byref(v)) == 0:
            facts["driver_version"] = "%d.%d" % (v.value // 1000, (v.value % 1000) // 10)
        dev = ctypes.c_int(0)
        if cu.cuDeviceGet(ctypes.byref(dev), ctypes.c_int(device)) != 0:
            return facts
        name = ctypes.create_string_buffer(256)
        if cu.cuDeviceGetName(name, ctypes.c_int(255), dev) == 0:
            facts["gpu_name"] = name.value.decode("utf-8", "replace").strip() or "unknown"
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76
        if cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) == 0 and \
                cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev) == 0:
            facts["compute_capability"] = "%d.%d" % (major.value, minor.value)
    except (AttributeError, OSError):
        pass
    return facts


def current_device():
    """Triton's current device (torch's), or 0 when there is no active GPU driver."""
    if "torch" in sys.modules:
        try:
            torch = sys.modules["torch"]
            if torch.cuda.is_initialized():
                return torch.cuda.current_device()
        except Exception:
            pass
    return 0


def gpu_facts(device=None):
    """GPU facts of a device (default: the current one), probed once per device and process."""
    if device is None:
        device = current_device()
    f = _facts.get(device)
    if f is None:
        with _facts_lock:
            f = _facts.get(device)
            if f is None:
                f = probe_gpu(device)
                _facts[device] = f
    return f


def set_gpu_facts(device, facts):
    """Pin the facts of a device (tests, or a flow that knows them better)."""
    with _facts_lock:
        if facts is None:
            _facts.pop(device, None)
        else:
            _facts[device] = dict(UNKNOWN, **facts)
