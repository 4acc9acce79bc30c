"""Launches made while ``triton.autotune`` benchmarks its configs are never tuned.

Triton 3.6 has no public hook that says "this launch is a benchmark": ``Autotuner._bench(self, *args,
config, **meta)`` runs every benchmarking launch of a config (through ``do_bench``, on the calling
thread) and nothing else does.  While sasstune is enabled that one method is wrapped so that a
per-thread depth counter says whether the current thread is inside it; ``benchmarking()`` reads it.
An armed kernel launched there runs stock and stays armed; the config the autotuner picks is tuned
at its first launch after benchmarking (``Autotuner.run``'s own launch, outside ``_bench``), and the
configs it did not pick are never tuned.  This module is the adapter's only use of autotuner
internals; on a Triton whose ``Autotuner`` lacks ``_bench`` with a ``config`` keyword nothing is
wrapped (benchmarking launches are then tuned like any other, as before) and ``status()`` says why.
"""
import functools
import inspect
import threading

_local = threading.local()
_lock = threading.Lock()
_state = {"orig": None, "why": "not installed"}


def benchmarking():
    """True while this thread runs an autotuner's benchmarking launches."""
    return getattr(_local, "depth", 0) > 0


def _autotuner_class():
    try:
        from triton.runtime import autotuner
    except Exception as e:  # a Triton without the autotuner module
        return None, "triton.runtime.autotuner: %s" % e
    cls = getattr(autotuner, "Autotuner", None)
    bench = getattr(cls, "_bench", None) if cls is not None else None
    if bench is None:
        return None, "this Triton's Autotuner has no _bench (3.6 has)"
    try:
        params = inspect.signature(bench).parameters
    except (TypeError, ValueError):
        params = {}
    if "config" not in params:
        return None, "this Triton's Autotuner._bench takes no config keyword (3.6's does)"
    return cls, None


def install():
    """Wrap Autotuner._bench (idempotent).  Returns None, or why not."""
    with _lock:
        if _state["orig"] is not None:
            return None
        cls, why = _autotuner_class()
        if cls is None:
            _state["why"] = why
            return why
        orig = cls.__dict__.get("_bench")
        if orig is None:  # inherited: wrap what the class resolves to, restore by deleting
            orig = cls._bench

        @functools.wraps(orig)
        def _bench(self, *args, **kwargs):
            _local.depth = getattr(_local, "depth", 0) + 1
            try:
                return orig(self, *args, **kwargs)
            finally:
                _local.depth -= 1

        _bench.sasstune_wrapped = orig
        _state.update(orig=orig, cls=cls, ours=_bench, own="_bench" in cls.__dict__, why=None)
        cls._bench = _bench
        return None


def uninstall():
    """Put back exactly what was there (unless someone replaced our wrapper since)."""
    with _lock:
        if _state["orig"] is None:
            return
        cls = _state["cls"]
        if cls.__dict__.get("_bench") is _state["ours"]:
            if _state["own"]:
                cls._bench = _state["orig"]
            else:
                del cls._bench
        _state.update(orig=None, cls=None, ours=None, why="not installed")


def status():
    """'benchmarking launches are skipped', or why they are not."""
    return "benchmarking launches are skipped" if _state["orig"] is not None else _state["why"]
