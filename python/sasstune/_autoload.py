"""SASSTUNE=1: enable sasstune as soon as Triton is imported, without importing Triton ourselves.

`import sasstune` with SASSTUNE set calls activate(): if Triton is already imported it enables at
once, otherwise a one-shot import hook enables right after `triton` finishes importing.  The .pth
file that `python -m sasstune install-pth` writes does `import sasstune` at interpreter start-up,
only when SASSTUNE is set, so every Python process of that environment gets this for free.
Failures are logged, never raised: an environment variable must not break a program.
"""
import importlib.abc
import sys
import threading

from ._settings import log

_done = False
_lock = threading.Lock()

import os as _os

PTH_NAME = "sasstune-autoload.pth"  # its name in site-packages
with open(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "autoload.pth")) as _f:
    PTH_LINE = _f.read()  # imports nothing unless SASSTUNE is set


def _enable_quietly():
    global _done
    with _lock:
        if _done:
            return
        _done = True
    try:
        from . import enable
        enable()
    except Exception as e:
        log("warn", "SASSTUNE is set but sasstune could not be enabled: %s", e)


class _TritonWatcher(importlib.abc.MetaPathFinder):
    """Finds `triton` through the other finders and runs _enable_quietly after it has loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        spec = None
        for finder in list(sys.meta_path):
            fs = getattr(finder, "find_spec", None)
            if fs is None:
                continue
            spec = fs(name, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_enable(module):
            exec_module(module)
            _enable_quietly()

        spec.loader.exec_module = exec_then_enable
        return spec


def activate():
    if "triton" in sys.modules and hasattr(sys.modules["triton"], "knobs"):
        _enable_quietly()
    elif not any(isinstance(f, _TritonWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _TritonWatcher())
