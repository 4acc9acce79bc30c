"""The Triton side: hooks, the cache namespace, and tuning at a kernel's first launch.

Three things are installed by enable() and removed by disable():

* ``knobs.runtime.add_stages_inspection_hook``: wraps the ``cubin`` stage.  After stock ptxas the
  cubin goes through the plugin's run(): a schedule-cache hit gives the tuned cubin, a miss the
  learned policy's (if one is configured) or the stock one.  Kernels still to be tuned are marked
  in their Triton metadata (key ``"sasstune"``).  Called with no arguments (Triton after 3.6) it
  returns the (key, hash) pair that Triton adds to its cache key.
* ``knobs.cache.manager_class``: a subclass of the current cache manager that keeps every entry
  compiled with sasstune on under ``<triton cache>/sasstune/<tag>/``, so tuned cubins never land under
  a stock key (Triton 3.6 does not key its cache on the hook).  The tag hashes everything that
  changes what the hook returns: the library version, mode, policy file, GPU, driver.
* ``knobs.runtime.jit_post_compile_hook``: runs when the JIT gets a kernel (compiled now or read
  from Triton's cache).  A marked kernel is looked up in the schedule cache once more (another
  process may have tuned it) and otherwise armed: its first launch captures the grid and the
  arguments, writes a launch spec and calls run() in mode tune with it; the result is loaded for
  this process, written into the Triton cache entry, and (by the plugin) into the schedule cache.
"""
import functools
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import uuid

from . import _autotune, _budget, _capture, _capture_mode, _gpulock, _lib, _settings
from ._budget import BUDGET
from ._settings import log

ADAPTER_VERSION = "0.1.0"
STATE_KEY = "sasstune"  # key in Triton's <name>.json metadata
STOCK_FILE = "sasstune-stock.cubin"  # stock cubin kept beside a policy-rewritten one
NAMESPACE_DIR = "sasstune"

_lock = threading.RLock()
_installed = None  # dict of what enable() replaced, None when off
_settings_snap = None
_tags = {}  # device -> (tag, key string)


# ---- statistics (for tests, the acceptance script and curious users) --------------------------
class _Stats:

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.counts = {}
        self.events = []

    def add(self, what, **fields):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1
            fields["event"] = what
            self.events.append(fields)
            if len(self.events) > 10000:
                del self.events[:5000]

    def snapshot(self):
        with self.lock:
            return {"counts": dict(self.counts), "events": [dict(e) for e in self.events]}


STATS = _Stats()


# ---- settings and the namespace ---------------------------------------------------------------
def settings():
    return _settings_snap or _settings.current()


def namespace(device=None):
    """(tag, key string) of the Triton cache namespace for a device."""
    if device is None:
        device = _settings.current_device()
    t = _tags.get(device)
    if t is None:
        s = settings()
        plugin = _lib.load()
        facts = _settings.gpu_facts(device)
        ident = {
            "library": plugin.version,
            "adapter": ADAPTER_VERSION,
            "mode": "tune" if s.mode == "capture" else s.mode,  # both compile alike and share entries
            "variants": s.variants,
            "policy": _settings.file_digest(s.policy) if s.policy else None,
            "gpu": facts,
        }
        text = json.dumps(ident, sort_keys=True)
        tag = hashlib.sha256(text.encode()).hexdigest()[:20]
        t = (tag, "sasstune-%s-%s" % (plugin.version, tag))
        _tags[device] = t
    return t


def namespace_root():
    from triton import knobs
    return os.path.join(knobs.cache.dir, NAMESPACE_DIR)


def _make_manager(base):
    """A subclass of Triton's cache manager class `base` that namespaces kernel entries."""
    from triton.runtime.cache import FileCacheManager
    file_like = issubclass(base, FileCacheManager) and base.__init__ is FileCacheManager.__init__

    class SasstuneCacheManager(base):
        sasstune_base = base

        def __init__(self, key, override=False, dump=False):
            if override or dump:  # dump and override folders are keyed by source only; leave them
                base.__init__(self, key, override=override, dump=dump)
                return
            tag = namespace()[0]
            if not file_like:  # any other manager: a different key is a different entry
                base.__init__(self, "%s_%s" % (key, tag), override=override, dump=dump)
                return
            from triton import knobs
            self.key = key
            root = knobs.cache.dir
            if not root:
                raise RuntimeError("Could not create or locate cache dir")
            self.cache_dir = os.path.join(root, NAMESPACE_DIR, tag, key)
            self.lock_path = os.path.join(self.cache_dir, "lock")
            os.makedirs(self.cache_dir, exist_ok=True)

    SasstuneCacheManager.__qualname__ = SasstuneCacheManager.__name__ = "Sasstune" + base.__name__
    return SasstuneCacheManager


# ---- compile time: the cubin stage ------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _tool_version(path):
    import re
    import subprocess
    try:
        out = subprocess.run([path, "--version"], capture_output=True, timeout=60).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"\bV(\d+\.\d+\.\d+)", out) or re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else None


def ptxas_version(capability):
    """'12.8.93': the full version of the ptxas Triton uses for this capability."""
    import re
    try:  # Triton's own lru-cached `ptxas --version` (its backend hash already ran it)
        from triton.backends.nvidia.compiler import get_ptxas_version
        m = re.search(r"\bV(\d+\.\d+\.\d+)", get_ptxas_version(capability))
        if m:
            return m.group(1)
    except Exception:
        pass
    try:
        from triton.backends.nvidia.compiler import get_ptxas
        try:
            tool = get_ptxas(capability)
        except TypeError:  # Triton before 3.6: no argument
            tool = get_ptxas()
        return _tool_version(tool.path)
    except Exception:
        return None


def ptxas_command(options, capability):
    """(ptxas path, its options as one string) for this compile: THE place that mirrors how Triton
    3.6's make_cubin (triton/backends/nvidia/compiler.py) calls ptxas: the debug flags from the
    knobs (-lineinfo; -lineinfo -suppress-debug-info when line info is disabled; -g when ptxas
    optimisation is disabled), --fmad=false without fp fusion, --opt-level 0 when ptxas
    optimisation is disabled, the user's ptx_options, --gpu-name=sm_90a.  Left out: -v (it only
    prints) and the file names.  The options are None for another Triton version (not checked
    against it) or without the compile's options; the path is None when unknown."""
    try:
        import triton
        from triton import knobs
        from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability
        path = get_ptxas(capability).path
    except Exception:
        return None, None
    if not triton.__version__.startswith("3.6.") or options is None:
        return path, None
    try:
        if knobs.compilation.disable_line_info:
            flags = ["-lineinfo", "-suppress-debug-info"]
        elif knobs.nvidia.disable_ptxas_opt:
            flags = ["-g"]
        else:
            flags = ["-lineinfo"]
        if not options.enable_fp_fusion:
            flags.append("--fmad=false")
        if knobs.nvidia.disable_ptxas_opt:
            flags += ["--opt-level", "0"]
        flags += options.ptx_options.split(" ") if options.ptx_options else []
        flags.append("--gpu-name=%s" % sm_arch_from_capability(capability))
    except Exception:
        return path, None
    return path, " ".join(flags)


def _made_by(state, ptx):
    """The run() keywords that say how the cubin was made (API 2).  The same at compile time, at
    lookup and at launch, so that all three ask for the same cache key."""
    return dict(ptx=ptx, ptxas_path=state.get("ptxas_path"), ptxas_options=state.get("ptxas_options"))


def compile_mode(s):
    """The mode run() gets at compile time.  There is no launch yet, so never "tune": a
    configured policy is applied (mode policy), else the cache is only looked up."""
    if s.mode == "cache-only":
        return "cache-only"
    if s.mode == "policy" or s.policy:
        return "policy"
    return "cache-only"


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def on_cubin(stock, metadata, capability, ptx=None, options=None):
    """The body of the wrapped cubin stage: returns the bytes Triton caches and loads.  ptx: the
    stage's input; options: the compile's options (for ptxas_command)."""
    t0 = time.perf_counter()
    stock = bytes(stock)
    name = metadata.get("name")
    if not name or not stock:
        return stock
    try:
        s = settings()
        plugin = _lib.load()
        device = _settings.current_device()
        facts = _settings.gpu_facts(device)
        arch = "sm_%d" % capability
        ptxas = ptxas_version(capability)
        path, ptxas_opts = ptxas_command(options, capability)
        made = {"ptxas_path": path, "ptxas_options": ptxas_opts}
        res = plugin.run(stock, kernel=name, arch=arch, ptxas_version=ptxas,
                         options_json=s.options(mode=compile_mode(s), **facts), **_made_by(made, ptx))
    except Exception as e:  # never break a compile
        log("error", "%s: the pass failed, stock cubin kept: %s", name, e)
        STATS.add("compile", kernel=name, status="error", message=str(e), plugin_ms=0.0, hook_ms=0.0)
        return stock
    out = bytes(res.cubin) if res.cubin else stock
    # a negative hit ("cached: nothing beat stock") is done: neither armed nor captured
    pending = s.mode in ("tune", "capture") and res.code in (_lib.UNCHANGED, _lib.POLICY) and not _lib.is_negative(res)
    if res.code == _lib.ERROR:
        log("warn", "%s: %s", name, res.message)
    state = {"v": 1, "status": res.status, "message": res.message, "pending": pending,
             "stock_sha256": _sha(stock), "ptxas_version": ptxas, "arch": arch, "stock_file": None,
             "namespace": namespace(device)[0], **made}
    if pending and out != stock:
        # Tuning needs the stock cubin (the schedule cache is keyed by it): keep it beside.
        if _put_beside(metadata.get("hash"), STOCK_FILE, stock):
            state["stock_file"] = STOCK_FILE
        else:
            state["pending"] = False
            state["message"] += "; stock cubin could not be kept, not tuned at launch"
    metadata[STATE_KEY] = state
    hook_ms = (time.perf_counter() - t0) * 1e3
    STATS.add("compile", kernel=name, status=res.status, message=res.message, plugin_ms=res.seconds * 1e3,
              hook_ms=hook_ms, pending=state["pending"], changed=out != stock)
    log("debug", "%s: compile: %s: %s (%.2f ms)", name, res.status, res.message, hook_ms)
    return out


def _put_beside(triton_hash, filename, data):
    if not triton_hash:
        return False
    try:
        from triton.runtime.cache import FileCacheManager, get_cache_manager
        m = get_cache_manager(triton_hash)
        if not isinstance(m, FileCacheManager) or not _inside_namespace(m.cache_dir):
            return False
        m.put(data, filename)
        return True
    except Exception as e:
        log("warn", "cannot write %s into the Triton cache: %s", filename, e)
        return False


def stages_hook(*args, **kwargs):
    """add_stages_inspection_hook.  Triton 3.6 calls it as (backend, stages, options, language,
    capability) and ignores the result; later Triton also calls it with no arguments and adds the
    returned (key, hash) to its cache keys."""
    inst = _installed
    prev = inst.get("stages_hook") if inst else None
    if not args or all(a is None for a in args):
        tag, key = namespace()
        if prev is not None:
            try:
                pk = prev()
                if isinstance(pk, tuple) and len(pk) == 2:
                    key = "%s|%s" % (pk[0], key)
                    tag = hashlib.sha256(("%s|%s" % (pk[1], tag)).encode()).hexdigest()[:20]
            except TypeError:
                pass
        return key, tag
    backend, stages, options, language, capability = (list(args) + [None] * 5)[:5]
    if prev is not None:
        prev(*args, **kwargs)
    if getattr(backend, "binary_ext", None) == "cubin" and "cubin" in stages and inst is not None:
        stock_stage = stages["cubin"]

        def cubin_stage(src, metadata):
            return on_cubin(stock_stage(src, metadata), metadata, capability, ptx=src, options=options)

        stages["cubin"] = cubin_stage
    return namespace()[1], namespace()[0]


# ---- the Triton cache entry of a CompiledKernel ------------------------------------------------
def _inside_namespace(path):
    root = os.path.realpath(namespace_root())
    return os.path.realpath(path).startswith(root + os.sep)


def _entry_files(ck):
    """(json path, cubin path) of a kernel's Triton cache entry, or None when it is not ours."""
    group = getattr(ck, "metadata_group", None) or {}
    js = [p for c, p in group.items() if c.endswith(".json")]
    cb = [p for c, p in group.items() if c.endswith(".cubin")]
    if len(js) != 1 or len(cb) != 1 or not _inside_namespace(js[0]) or not _inside_namespace(cb[0]):
        return None
    return js[0], cb[0]


def _atomic_write(path, data):
    d = os.path.dirname(path)
    tmp = os.path.join(d, ".%s.tmp.%d.%s" % (os.path.basename(path), os.getpid(), uuid.uuid4().hex))
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def update_entry(ck, state, cubin=None):
    """Write the new state (and cubin) into the kernel's Triton cache entry.  Never touches an
    entry outside the sasstune namespace.  Returns whether it wrote."""
    files = _entry_files(ck)
    if files is None:
        log("info", "%s: not in the sasstune Triton cache namespace; the result stays in this process", ck.name)
        return False
    js, cb = files
    try:
        if cubin is not None:
            _atomic_write(cb, cubin)
        with open(js) as f:
            md = json.load(f)
        md[STATE_KEY] = state
        _atomic_write(js, json.dumps(md, default=vars).encode())
        return True
    except (OSError, ValueError) as e:
        log("warn", "%s: cannot update the Triton cache entry: %s", ck.name, e)
        return False


def kernel_state(ck):
    st = getattr(getattr(ck, "metadata", None), STATE_KEY, None)
    return dict(st) if isinstance(st, dict) else None


def _ptx_of(ck):
    """The PTX Triton kept beside the cubin (asm["ptx"]), None when absent."""
    ptx = (getattr(ck, "asm", None) or {}).get("ptx")
    return ptx.decode("utf-8", "replace") if isinstance(ptx, bytes) else ptx


def stock_cubin(ck, state):
    """The stock cubin of a kernel (it is the Triton cubin unless a policy rewrote it)."""
    data = None
    if state.get("stock_file"):
        files = _entry_files(ck)
        if files:
            try:
                with open(os.path.join(os.path.dirname(files[1]), state["stock_file"]), "rb") as f:
                    data = f.read()
            except OSError:
                data = None
    else:
        data = ck.asm.get("cubin") if hasattr(ck, "asm") else None
    if data is None or _sha(data) != state.get("stock_sha256"):
        return None
    return data


# ---- the JIT: arming marked kernels -----------------------------------------------------------
class _Armed:
    """A kernel waiting for its first launch."""

    def __init__(self, ck, state, cls):
        self.ck = ck
        self.state = state
        self.cls = cls  # the class to restore
        self.lock = threading.Lock()
        self.done = False


_armed = {}  # id(ck) -> _Armed
_armed_classes = {}


def _armed_class(cls):
    """A subclass of the kernel's class whose run property captures the first launch."""
    sub = _armed_classes.get(cls)
    if sub is None:

        class ArmedKernel(cls):

            @property
            def run(self):
                if self._run is None:
                    self._init_handles()
                a = _armed.get(id(self))
                if a is None or a.ck is not self:
                    return self._run
                return functools.partial(_first_launch, a)

        ArmedKernel.__name__ = ArmedKernel.__qualname__ = cls.__name__
        sub = _armed_classes[cls] = ArmedKernel
    return sub


def arm(ck, state):
    with _lock:
        if id(ck) in _armed:
            return
        a = _Armed(ck, state, ck.__class__)
        _armed[id(ck)] = a
        ck.__class__ = _armed_class(ck.__class__)
    STATS.add("armed", kernel=ck.name)


def _disarm(a):
    with _lock:
        a.done = True
        if _armed.get(id(a.ck)) is a:
            del _armed[id(a.ck)]
        if a.ck.__class__ is not a.cls:
            a.ck.__class__ = a.cls


def post_compile_hook(**kw):
    inst = _installed
    prev = inst.get("post_compile_hook") if inst else None
    ret = prev(**kw) if prev is not None else None
    if inst is None:
        return ret
    try:
        fn, comp, key = kw.get("fn"), kw.get("compile") or {}, kw.get("key")
        ck = fn.jit_function.device_caches[comp["device"]][0].get(key)
        if ck is not None and not hasattr(ck, "result"):
            consider(ck)
    except Exception as e:  # never break a launch
        log("warn", "jit_post_compile_hook: %s", e)
    return ret


def consider(ck):
    """Decide what to do with a kernel the JIT just got: nothing, swap in a cached tuned cubin,
    or arm it for tuning at its first launch."""
    state = kernel_state(ck)
    s = settings()
    if not state or not state.get("pending") or s.mode not in ("tune", "capture"):
        return
    stock = stock_cubin(ck, state)
    if stock is None:
        log("warn", "%s: stock cubin not found; not tuned", ck.name)
        return
    # Another process may have tuned it since Triton cached this entry.
    t0 = time.perf_counter()
    facts = _settings.gpu_facts()
    res = _lib.load().run(stock, kernel=ck.name, arch=state.get("arch"), ptxas_version=state.get("ptxas_version"),
                          options_json=s.options(mode="cache-only", **facts), **_made_by(state, _ptx_of(ck)))
    STATS.add("lookup", kernel=ck.name, status=res.status, ms=(time.perf_counter() - t0) * 1e3)
    if res.code == _lib.CACHED and ck.module is None:
        ck.kernel = res.cubin
        ck.asm["cubin"] = res.cubin
        state.update(status="cached", message=res.message, pending=False)
        update_entry(ck, state, res.cubin)
        return
    if _lib.is_negative(res):  # another process tuned it and found nothing: done, stock kept
        state.update(status="unchanged", message=res.message, pending=False)
        update_entry(ck, state)
        return
    arm(ck, state)


# ---- the first launch -------------------------------------------------------------------------
def _load_binary(ck, cubin):
    """Load a cubin for ck on the current device: (module, function, n_regs, n_spills, n_max_threads)."""
    from triton.runtime.driver import driver
    device = driver.active.get_current_device()
    return driver.active.utils.load_binary(ck.name, cubin, ck.metadata.shared, device)


def _warp_size():
    try:
        from triton.runtime.driver import driver
        return driver.active.get_current_target().warp_size
    except Exception:
        return 32


def install_cubin(ck, cubin):
    """Make ck launch cubin from now on.  Returns None, or why not."""
    mod, func, n_regs, n_spills, n_max = _load_binary(ck, cubin)
    if ck.metadata.num_warps * _warp_size() > n_max:
        return "it allows %d threads a block, the kernel needs %d" % (n_max, ck.metadata.num_warps * _warp_size())
    ck.module, ck.function, ck.n_regs, ck.n_spills, ck.n_max_threads = mod, func, n_regs, n_spills, n_max
    ck.kernel = cubin
    ck.asm["cubin"] = cubin
    return None


def _capturing():
    try:
        import sys
        torch = sys.modules.get("torch")
        return bool(torch is not None and torch.cuda.is_current_stream_capturing())
    except Exception:
        return False


def _first_launch(a, gx, gy, gz, stream, function, *rest):
    ck = a.ck
    if not a.lock.acquire(blocking=False):  # another thread is tuning it: run what we have
        return ck._run(gx, gy, gz, stream, ck.function, *rest)
    try:
        if not a.done and not _capturing() and not _autotune.benchmarking():
            if settings().mode == "capture":
                _capture_for_later(a, (gx, gy, gz), rest[4:])
                _disarm(a)
            else:
                _tune_with_gpu_lock(a, (gx, gy, gz), rest[4:])
    finally:
        a.lock.release()
    return ck._run(gx, gy, gz, stream, ck.function, *rest)


def _tune_with_gpu_lock(a, grid, args):
    """Tune at this launch and disarm, holding the GPU lock (_gpulock.py); when another tuning holds
    it (SASSTUNE_GPU_LOCK=skip), the launch runs stock and the kernel stays armed."""
    held = _gpu_lock(a.ck)
    if held is None:
        return
    with held:
        try:
            tune_at_launch(a.ck, a.state, grid, args)
        except Exception as e:
            log("warn", "%s: tuning at first launch failed, stock cubin kept: %s", a.ck.name, e)
            STATS.add("launch-tune", kernel=a.ck.name, status="error", message=str(e))
    _disarm(a)


def _capture_for_later(a, grid, args):
    """Mode capture: record the launch for `sasstune tune --captures` (_capture_mode.py) and leave the
    kernel pending in Triton's cache, so that a later process in mode tune looks it up again."""
    ck, s = a.ck, settings()
    try:
        stock = stock_cubin(ck, a.state)
        if stock is None:
            raise RuntimeError("stock cubin not found")
        status, message = _capture_mode.capture_launch(ck, a.state, stock, grid, args, s, ptx=_ptx_of(ck))
    except Exception as e:
        status, message = "error", str(e)
    log("warn" if status == "error" else "info", "%s: capture: %s: %s", ck.name, status, message)
    STATS.add("capture", kernel=ck.name, status=status, message=message)


def _gpu_lock(ck):
    """The GPU lock of the current device (waiting under SASSTUNE_GPU_LOCK=wait), or None when another
    process or thread holds it: the launch then runs stock and the kernel stays armed."""
    s = settings()
    device = _settings.current_device()
    try:
        held = _gpulock.acquire(s, device)
    except OSError as e:  # no lock folder: tune unlocked rather than never
        log("warn", "%s: cannot take the GPU lock (%s); tuning without it", ck.name, e)
        return _gpulock.Held(None, None)
    if held is None:
        log("info", "%s: another tuning holds GPU %d (%s); running stock, tuning at a later launch", ck.name,
            device, _gpulock.gpu_uuid(device))
        STATS.add("gpu-busy", kernel=ck.name, device=device)
    return held


def _capture_root(s):
    base = s.resolved_cache_dir() or tempfile.gettempdir()
    d = os.path.join(base, "captures")
    os.makedirs(d, exist_ok=True)
    return d


def tune_at_launch(ck, state, grid, args):
    """Capture this launch, tune with it (within the process-wide budget), install and record the
    result.  Only a final outcome (tuned, or tuned and nothing beat stock) marks the kernel done
    in the Triton cache entry; one that could not be tuned here (no GPU, no nvdisasm, an
    unsupported launch, the budget spent, an error) stays pending for a later process."""
    s = settings()
    stock = stock_cubin(ck, state)
    if stock is None:
        raise RuntimeError("stock cubin not found")
    budget = BUDGET.grant(s.budget_seconds, s.total_budget)
    if budget is None:
        state.update(message="not tuned in this process: SASSTUNE_TOTAL_BUDGET spent")
        update_entry(ck, state)  # still pending: a later process with budget left tunes it
        BUDGET.record(ck.name, "skipped")
        STATS.add("launch-tune", kernel=ck.name, status="skipped", message=state["message"])
        return
    src = ck.src
    names = list(src.fn.arg_names)
    t0 = time.perf_counter()
    folder = tempfile.mkdtemp(prefix="%s-%d-" % (ck.name[:60], os.getpid()), dir=_capture_root(s))
    try:
        try:
            spec, builder = _capture.build_spec(folder, ck.name, dict(src.signature), names, args, ck.metadata, grid,
                                                s.capture_limit)
        except _capture.Unsupported as e:
            state.update(message="not tuned in this process: %s" % e)
            update_entry(ck, state)  # still pending: another launch of it may be capturable
            BUDGET.record(ck.name, "not-tuned", 0.0, str(e))
            STATS.add("launch-tune", kernel=ck.name, status="unsupported", message=str(e))
            return
        _, text = _capture.write_capture(spec, builder)
        capture_ms = (time.perf_counter() - t0) * 1e3
        device = _settings.current_device()  # tune on the GPU the kernel is launched on
        facts = _settings.gpu_facts(device)
        log("info", "%s: tuning at first launch (budget %d s; %d bytes of arguments captured)", ck.name, budget,
            builder.total_bytes)
        res = _lib.load().run(stock, kernel=ck.name, arch=state.get("arch"), ptxas_version=state.get("ptxas_version"),
                              launch_json=text,
                              options_json=_capture_mode.options_json(s, device, facts, budget="%ds" % budget),
                              **_made_by(state, _ptx_of(ck)))
    finally:
        if not s.keep_captures:
            shutil.rmtree(folder, ignore_errors=True)
    ev = dict(kernel=ck.name, status=res.status, message=res.message, capture_ms=capture_ms,
              run_s=res.seconds, bytes=builder.total_bytes, capture=folder if s.keep_captures else None)
    _record_outcome(ck, state, stock, res, ev)
    STATS.add("launch-tune", **ev)


def _record_outcome(ck, state, stock, res, ev):
    """Install a tuned cubin; mark the kernel done only for a final outcome; count and log it."""
    if res.code in (_lib.TUNED, _lib.CACHED, _lib.POLICY) and res.cubin and res.cubin != stock:
        why = install_cubin(ck, res.cubin)
        if why:
            log("warn", "%s: the tuned cubin was not loaded (%s); stock kept", ck.name, why)
            ev.update(status="rejected", message=why)
            BUDGET.record(ck.name, "not-tuned", res.seconds, why)
            return
        state.update(status=res.status, message=res.message, pending=False, tuned_sha256=_sha(res.cubin))
        ev["written"] = update_entry(ck, state, res.cubin)
        BUDGET.record(ck.name, "gained" if res.code == _lib.TUNED else "cached", res.seconds, res.message)
    elif _lib.is_negative(res):  # tuned now (stored as negative) or before: done, stock kept
        state.update(status=res.status, message=res.message, pending=False, launch_status=res.status)
        ev["written"] = update_entry(ck, state)
        BUDGET.record(ck.name, "cached" if res.message.startswith("cached: ") else "kept-stock", res.seconds)
    elif res.code == _lib.UNCHANGED and "another process is tuning" in res.message:
        ev["written"] = False  # leave it pending: the next process finds the other one's result
        BUDGET.record(ck.name, "not-tuned", res.seconds, "another process is tuning it")
    else:  # no GPU, no nvdisasm, an error: not done, a later process tries again
        if res.code == _lib.ERROR:
            log("warn", "%s: %s", ck.name, res.message)
        state.update(message="not tuned in this process: %s" % res.message, launch_status=res.status)
        ev["written"] = update_entry(ck, state)
        BUDGET.record(ck.name, "not-tuned", res.seconds, res.message)


# ---- on and off -------------------------------------------------------------------------------
def install(s):
    """Install the hooks (idempotent); s is the settings snapshot to use."""
    global _installed, _settings_snap
    from triton import knobs
    if not hasattr(knobs.runtime, "add_stages_inspection_hook"):
        raise _lib.SasstuneError("this Triton has no knobs.runtime.add_stages_inspection_hook (Triton 3.6 or later "
                                 "is needed)")
    with _lock:
        _settings_snap = s
        _tags.clear()
        if _installed is not None:
            return
        inst = {
            "stages_hook": knobs.runtime.add_stages_inspection_hook,
            "post_compile_hook": knobs.runtime.jit_post_compile_hook,
            "manager_set": "manager_class" in knobs.cache.__dict__,
            "manager": knobs.cache.__dict__.get("manager_class"),
        }
        base = knobs.cache.manager_class
        if base is None:
            from triton.runtime.cache import FileCacheManager
            base = FileCacheManager
        mgr = _make_manager(base)
        inst["our_manager"] = mgr
        _installed = inst
        _budget.register_exit()
        knobs.runtime.add_stages_inspection_hook = stages_hook
        knobs.runtime.jit_post_compile_hook = post_compile_hook
        knobs.cache.manager_class = mgr
        why = _autotune.install()  # the autotuner's benchmarking launches are not tuned
        if why:
            log("info", "autotuner benchmarking launches will be tuned too: %s", why)


def uninstall():
    global _installed, _settings_snap
    from triton import knobs
    with _lock:
        inst = _installed
        if inst is None:
            return
        if knobs.runtime.add_stages_inspection_hook is stages_hook:
            knobs.runtime.add_stages_inspection_hook = inst["stages_hook"]
        if knobs.runtime.jit_post_compile_hook is post_compile_hook:
            knobs.runtime.jit_post_compile_hook = inst["post_compile_hook"]
        if knobs.cache.__dict__.get("manager_class") is inst["our_manager"]:
            if inst["manager_set"]:
                knobs.cache.__dict__["manager_class"] = inst["manager"]
            else:
                del knobs.cache.manager_class  # back to TRITON_CACHE_MANAGER or the default
        _autotune.uninstall()
        for a in list(_armed.values()):
            _disarm(a)
        _installed = None
        _settings_snap = None
        _tags.clear()


def installed():
    return _installed is not None
