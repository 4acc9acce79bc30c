"""sasstune for Triton: tuned SASS schedules for every Triton kernel, cached across processes.

    import sasstune
    sasstune.enable()          # or run with SASSTUNE=1 and import sasstune (or install the .pth)
    ...                        # use Triton as usual
    sasstune.disable()

With SASSTUNE unset (or 0) importing this package changes nothing in Triton.  See docs/triton.md.
"""
import os as _os

from ._lib import SasstuneError, find_library, STATUS_NAMES  # noqa: F401
from ._settings import truthy as _truthy

__version__ = "0.1.0"
__all__ = ["enable", "disable", "enabled", "stats", "reset_stats", "library", "SasstuneError", "__version__"]


def enable(mode=None, budget=None, policy=None, log=None, cache_dir=None, capture_limit=None, keep_captures=None,
           total_budget=None, retune=None, gpu_lock=None, capture_dir=None, variants=None, redis=None,
           redis_prefix=None):
    """Turn sasstune on for Triton compiles and launches from now on.

    Keywords override the environment (SASSTUNE_MODE, SASSTUNE_BUDGET, SASSTUNE_POLICY,
    SASSTUNE_LOG, SASSTUNE_CACHE_DIR, SASSTUNE_CAPTURE_LIMIT, SASSTUNE_KEEP_CAPTURES,
    SASSTUNE_TOTAL_BUDGET, SASSTUNE_RETUNE, SASSTUNE_GPU_LOCK, SASSTUNE_CAPTURE_DIR, SASSTUNE_VARIANTS,
    SASSTUNE_REDIS, SASSTUNE_REDIS_PREFIX);
    the settings are read now and used until the next enable().  budget is per kernel, total_budget
    per process (durations: 90s, 10m, 2h, or plain seconds); retune=1 tunes again kernels cached as
    "nothing beat stock"; variants (on, off or auto) says whether tuning first tries other ptxas
    binaries; redis="redis://host:port/db" shares schedules through Redis (docs/cache.md, "Fleet";
    the other SASSTUNE_REDIS_* settings come from the environment).  Raises SasstuneError when
    libsasstune.so cannot be loaded, was built without hiredis while redis is set, or Triton is
    older than 3.6, ValueError for a bad setting (e.g. budget="bogus", a redis URL that does not
    parse)."""
    from . import _lib, _settings, _triton
    old = _settings.set_overrides(dict(mode=mode, budget=budget, policy=policy, log=log, cache_dir=cache_dir,
                                       capture_limit=capture_limit, keep_captures=keep_captures,
                                       total_budget=total_budget, retune=retune, gpu_lock=gpu_lock,
                                       capture_dir=capture_dir, variants=variants, redis=redis,
                                       redis_prefix=redis_prefix))
    try:
        s = _settings.current()
        plugin = _lib.load()
        why = plugin.check_redis(s.redis) if s.redis else None
        if why:
            err = ValueError if "built without hiredis" not in why else SasstuneError
            raise err("%s: %s" % (s.origin("redis"), why))
        _triton.install(s)
    except BaseException:
        _settings.set_overrides(old)
        raise
    _settings.log("debug", "enabled: library %s, mode %s", find_library(), s.mode)


def disable():
    """Remove every hook; Triton is as before enable().  Kernels the JIT already holds in memory
    keep the cubin they were loaded with (a fresh process, or clearing the JIT's device_caches,
    recompiles them)."""
    import sys
    if "triton" not in sys.modules:
        return
    from . import _triton
    _triton.uninstall()


def enabled():
    import sys
    if "triton" not in sys.modules:
        return False
    from . import _triton
    return _triton.installed()


def stats():
    """Counters and events: compiles through the hook (status, plugin and hook time in ms),
    cache lookups at JIT time, kernels armed for tuning, tuning at first launch."""
    from . import _triton
    return _triton.STATS.snapshot()


def reset_stats():
    from . import _triton
    _triton.STATS.reset()


def library():
    """The loaded plugin (path, version), loading it if needed."""
    from . import _lib
    return _lib.load()


if _truthy(_os.environ.get("SASSTUNE")):
    from . import _autoload
    _autoload.activate()
