"""Finding libsasstune.so and calling its pass-plugin entry (include/sasstune/plugin.h) with ctypes.

The library is looked for, in order:

1. ``$SASSTUNE_LIBRARY`` (a path to the .so);
2. next to this package (an installed copy: ``sasstune/libsasstune.so``);
3. the source tree's build folders (``build-py/``, ``build/``, then any other ``build*/``),
   skipping sanitizer builds, which cannot be loaded into a plain Python;
4. the dynamic loader's path (``libsasstune.so``).
"""
import ctypes
import os
import threading
import time

# st_plugin_status, in plugin.h's order.
STATUS_NAMES = ("tuned", "cached", "policy", "unchanged", "error")
TUNED, CACHED, POLICY, UNCHANGED, ERROR = range(5)
API_VERSION = 2  # what this adapter speaks; a library of API 1 is still used, through run()
# plugin.h ST_PLUGIN_NEGATIVE: in the message of an UNCHANGED result whose kernel is done (tuned,
# now and stored or before and cached, and nothing beat stock).
NEGATIVE = "nothing beat stock"


def is_negative(res):
    """Whether a run() result says "tuned, nothing beat stock": the kernel is done, stock kept."""
    return res.code == UNCHANGED and NEGATIVE in res.message


class SasstuneError(RuntimeError):
    """The library could not be found or loaded, or it is not the plugin this adapter speaks."""


class _Kernel(ctypes.Structure):
    _fields_ = [
        ("kernel", ctypes.c_char_p),
        ("arch", ctypes.c_char_p),
        ("ptxas_version", ctypes.c_char_p),
        ("launch_json", ctypes.c_char_p),
        ("options_json", ctypes.c_char_p),
    ]


class _Kernel2(ctypes.Structure):
    """st_plugin_kernel2 (API 2): the v1 record, its own size, and how the cubin was made."""
    _fields_ = [
        ("v1", _Kernel),
        ("size", ctypes.c_size_t),
        ("ptx", ctypes.c_char_p),
        ("ptxas_path", ctypes.c_char_p),
        ("ptxas_options", ctypes.c_char_p),
    ]


class _Result(ctypes.Structure):
    _fields_ = [
        ("cubin", ctypes.POINTER(ctypes.c_uint8)),
        ("cubin_size", ctypes.c_size_t),
        ("status", ctypes.c_int),
        ("message", ctypes.c_char * 512),
    ]


# CFUNCTYPE (not PYFUNCTYPE): ctypes releases the GIL for the call, so compiles on several
# threads run the pass in parallel (run() is thread-safe and keeps no state).
_RUN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_Kernel),
                        ctypes.POINTER(_Result))
_FREE = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Result))
_RUN2 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_Kernel2),
                         ctypes.POINTER(_Result))


class _Info(ctypes.Structure):
    _fields_ = [
        ("api_version", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("version", ctypes.c_char_p),
        ("stage", ctypes.c_char_p),
        ("run", _RUN),
        ("free_result", _FREE),
        ("run2", _RUN2),  # API >= 2 only: a v1 library's struct ends before it, never read then
    ]


class RunResult:
    """What one run() returned: status (a name from STATUS_NAMES), the cubin to use, the message,
    and the wall time of the call in seconds."""
    __slots__ = ("status", "code", "cubin", "message", "seconds")

    def __init__(self, code, cubin, message, seconds):
        self.code = code
        self.status = STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else "error"
        self.cubin = cubin
        self.message = message
        self.seconds = seconds

    def __repr__(self):
        return "RunResult(%s, %d bytes, %r)" % (self.status, len(self.cubin), self.message)


def _enc(s):
    if s is None:
        return None
    return s.encode("utf-8", "replace") if isinstance(s, str) else bytes(s)


class Plugin:
    """The pass entry of one loaded libsasstune.so."""

    def __init__(self, path):
        self.path = path
        try:
            self._dll = ctypes.CDLL(path)
        except OSError as e:
            raise SasstuneError("cannot load %s: %s" % (path, e)) from None
        try:
            entry = self._dll.sasstune_plugin_info
        except AttributeError:
            raise SasstuneError("%s has no sasstune_plugin_info(): not libsasstune" % path) from None
        entry.restype = ctypes.POINTER(_Info)
        entry.argtypes = []
        info = entry()
        if not info:
            raise SasstuneError("%s: sasstune_plugin_info() returned NULL" % path)
        self._info = info.contents
        self.api_version = self._info.api_version
        if self.api_version < 1:
            raise SasstuneError("%s speaks plugin API %d; this adapter speaks 1 to %d" %
                                (path, self.api_version, API_VERSION))
        self.name = (self._info.name or b"").decode()
        self.version = (self._info.version or b"").decode()
        self.stage = (self._info.stage or b"").decode()
        self._run = self._info.run
        self._free = self._info.free_result
        self._run2 = self._info.run2 if self.api_version >= 2 else None

    def run(self, cubin, kernel=None, arch=None, ptxas_version=None, launch_json=None, options_json=None,
            ptx=None, ptxas_path=None, ptxas_options=None):
        """Run the pass on cubin (bytes).  ptx, ptxas_path and ptxas_options (how the cubin was
        made) go through run2() (API 2; an API 1 library gets the rest through run()).  Never
        raises for what the pass reports: a failure comes back as status "error" with the input."""
        cubin = bytes(cubin)
        k = _Kernel(_enc(kernel), _enc(arch), _enc(ptxas_version), _enc(launch_json), _enc(options_json))
        r = _Result()
        t0 = time.perf_counter()
        if self._run2:
            k2 = _Kernel2(k, ctypes.sizeof(_Kernel2), _enc(ptx), _enc(ptxas_path), _enc(ptxas_options))
            rc = self._run2(cubin, len(cubin), ctypes.byref(k2), ctypes.byref(r))
        else:
            rc = self._run(cubin, len(cubin), ctypes.byref(k), ctypes.byref(r))
        dt = time.perf_counter() - t0
        try:
            msg = r.message.decode("utf-8", "replace")
            if r.cubin and (r.cubin_size or not cubin):
                out = ctypes.string_at(r.cubin, r.cubin_size)
            else:
                out = cubin
            code = r.status if rc == 0 else ERROR
            if rc != 0 and not msg:
                msg = "run() returned %d" % rc
        finally:
            self._free(ctypes.byref(r))
        return RunResult(code, out, msg, dt)

    def check_redis(self, url):
        """None when url (SASSTUNE_REDIS) can be used by this library, else why: the library was
        built without hiredis, or the URL does not parse (the C parser's message)."""
        avail = getattr(self._dll, "st_cache_remote_available", None)
        if avail is None or not avail():
            return "%s was built without hiredis: the Redis tier cannot be used" % self.path
        parse = self._dll.st_remote_parse_url
        parse.restype = ctypes.c_int
        parse.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
        out, err = ctypes.create_string_buffer(2048), ctypes.create_string_buffer(1024)  # st_remote_url, st_error
        if parse(_enc(url), out, err) != 0:
            return err.raw[4:].split(b"\0")[0].decode("utf-8", "replace")
        return None

    def __repr__(self):
        return "Plugin(%r, version %s)" % (self.path, self.version)


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def _source_root():
    # python/sasstune/_lib.py -> the repository root
    return os.path.dirname(os.path.dirname(_package_dir()))


def _is_sanitized(path):
    """ASan/UBSan builds abort a Python that did not preload their runtime: skip them."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return True
    return b"libasan.so" in data or b"libubsan.so" in data or b"__asan_init" in data


def candidates():
    """Every place looked at, in order, as (path, where) pairs (whether or not they exist)."""
    out = []
    env = os.environ.get("SASSTUNE_LIBRARY")
    if env:
        out.append((env, "SASSTUNE_LIBRARY"))
        return out
    out.append((os.path.join(_package_dir(), "libsasstune.so"), "package"))
    root = _source_root()
    if os.path.isfile(os.path.join(root, "include", "sasstune", "plugin.h")):
        firsts = [os.path.join(root, "build-py", "libsasstune.so"), os.path.join(root, "build", "libsasstune.so")]
        for p in firsts:
            out.append((p, "build"))
        others = []
        try:
            names = sorted(os.listdir(root))
        except OSError:
            names = []
        for n in names:
            if not n.startswith("build"):
                continue
            for sub in ("", "*"):
                d = os.path.join(root, n)
                dirs = [d] if not sub else [os.path.join(d, s) for s in _listdir(d)]
                for dd in dirs:
                    p = os.path.join(dd, "libsasstune.so")
                    if p not in firsts and os.path.isfile(p):
                        others.append(p)
        others.sort(key=lambda p: -_mtime(p))  # newest first
        out.extend((p, "build") for p in others)
    out.append(("libsasstune.so", "loader path"))
    return out


def _listdir(d):
    try:
        return sorted(x for x in os.listdir(d) if os.path.isdir(os.path.join(d, x)))
    except OSError:
        return []


def _mtime(p):
    try:
        return os.stat(p).st_mtime
    except OSError:
        return 0


def _usable(path, where):
    """None if path may be loaded, else why not."""
    if where == "loader path" or where == "SASSTUNE_LIBRARY":
        return None
    if not os.path.isfile(path):
        return "absent"
    if where == "build" and _is_sanitized(path):
        return "sanitizer build, skipped"
    return None


def find_library():
    """The path of the library this adapter would load first."""
    for path, where in candidates():
        if _usable(path, where) is None:
            return path
    return "libsasstune.so"


_lock = threading.Lock()
_plugin = None


def load(path=None):
    """Load (once) and return the Plugin; path forces one file.  Raises SasstuneError naming every
    place tried."""
    global _plugin
    with _lock:
        if path is None and _plugin is not None:
            return _plugin
        places = [(path, "given")] if path else candidates()
        tried = []
        for p, where in places:
            why = _usable(p, where)
            if why:
                tried.append("%s (%s)" % (p, why))
                continue
            try:
                plugin = Plugin(p)
            except SasstuneError as e:
                tried.append(str(e))
                continue
            if path is None:
                _plugin = plugin
            return plugin
        raise SasstuneError("cannot load libsasstune.so (set SASSTUNE_LIBRARY); tried: " + "; ".join(tried))


def set_plugin(plugin):
    """Replace the loaded plugin (tests use a fake with the same run() signature).  Returns the old one."""
    global _plugin
    with _lock:
        old, _plugin = _plugin, plugin
    return old
