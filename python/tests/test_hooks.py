"""enable()/disable() install and remove exactly what they should; SASSTUNE unset touches nothing;
the later Triton hook convention (no arguments -> (key, hash))."""
import os
import subprocess
import sys
import textwrap

import pytest
from triton import knobs
from triton.runtime.cache import FileCacheManager

import sasstune
from sasstune import _autoload, _lib, _settings, _triton

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_enable_installs_and_disable_removes():
    assert knobs.runtime.add_stages_inspection_hook is None
    assert knobs.runtime.jit_post_compile_hook is None
    assert knobs.cache.manager_class is None
    sasstune.enable()
    assert sasstune.enabled()
    assert knobs.runtime.add_stages_inspection_hook is _triton.stages_hook
    assert knobs.runtime.jit_post_compile_hook is _triton.post_compile_hook
    assert issubclass(knobs.cache.manager_class, FileCacheManager)
    sasstune.enable()  # idempotent
    sasstune.disable()
    assert not sasstune.enabled()
    assert knobs.runtime.add_stages_inspection_hook is None
    assert knobs.runtime.jit_post_compile_hook is None
    assert knobs.cache.manager_class is None
    assert "manager_class" not in knobs.cache.__dict__
    assert "TRITON_CACHE_MANAGER" not in os.environ
    sasstune.disable()  # harmless twice


def test_existing_hooks_are_chained_and_restored():
    seen = []

    def user_stages(backend, stages, options, language, capability):
        seen.append("stages")

    def user_post(**kw):
        seen.append("post")
        return None

    knobs.runtime.add_stages_inspection_hook = user_stages
    knobs.runtime.jit_post_compile_hook = user_post
    try:
        sasstune.enable()
        _triton.stages_hook(None.__class__, {}, None, None, 90)  # not a CUDA backend: only chains
        _triton.post_compile_hook(key="k", repr="", fn=None, compile={}, is_manual_warmup=False,
                                  already_compiled=False)
        assert seen == ["stages", "post"]
        sasstune.disable()
        assert knobs.runtime.add_stages_inspection_hook is user_stages
        assert knobs.runtime.jit_post_compile_hook is user_post
    finally:
        knobs.runtime.add_stages_inspection_hook = None
        knobs.runtime.jit_post_compile_hook = None


def test_no_argument_convention():
    sasstune.enable()
    key, h = _triton.stages_hook()
    assert isinstance(key, str) and isinstance(h, str) and h in key and key.startswith("sasstune-")
    assert _triton.stages_hook(None, None, None, None, None) == (key, h)  # all None counts as no arguments
    assert _triton.stages_hook() == (key, h)  # stable (precomputed)
    # what changes the hook's output changes the pair: the mode, the GPU
    sasstune.enable(mode="cache-only")
    key2, h2 = _triton.stages_hook()
    assert h2 != h
    sasstune.enable()
    _settings.set_gpu_facts(0, {"gpu_name": "NVIDIA H200", "compute_capability": "9.0"})
    try:
        _triton._tags.clear()
        assert _triton.stages_hook()[1] not in (h, h2)
    finally:
        _settings.set_gpu_facts(0, None)
        _triton._tags.clear()


def test_policy_file_content_is_in_the_namespace(tmp_path):
    pol = tmp_path / "p.policy"
    pol.write_bytes(b"one")
    sasstune.enable(policy=str(pol))
    h1 = _triton.stages_hook()[1]
    pol.write_bytes(b"two, longer")
    sasstune.enable(policy=str(pol))
    assert _triton.stages_hook()[1] != h1


def _run(code, env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SASSTUNE") or k == "SASSTUNE_LIBRARY"}
    e.update(env)
    e["PYTHONPATH"] = PYDIR + os.pathsep + e.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_sasstune_unset_leaves_triton_untouched(tmp_path):
    out = _run("""
        import sasstune, triton
        from triton import knobs
        print(knobs.runtime.add_stages_inspection_hook, knobs.runtime.jit_post_compile_hook,
              knobs.cache.manager_class, sasstune.enabled())
    """, {"TRITON_CACHE_DIR": str(tmp_path / "t")})
    assert out.split() == ["None", "None", "None", "False"]
    out = _run("""
        import sasstune, triton
        print(sasstune.enabled())
    """, {"SASSTUNE": "0", "TRITON_CACHE_DIR": str(tmp_path / "t")})
    assert out.strip() == "False"


def test_sasstune_1_enables_when_triton_is_imported(tmp_path):
    # sasstune first: nothing happens until triton is imported, then the hooks are on
    out = _run("""
        import sys, sasstune
        print("triton" in sys.modules, sasstune.enabled())
        import triton
        from triton import knobs
        print(sasstune.enabled(), knobs.runtime.add_stages_inspection_hook.__name__)
    """, {"SASSTUNE": "1", "TRITON_CACHE_DIR": str(tmp_path / "t")})
    assert out.split() == ["False", "False", "True", "stages_hook"]
    # triton first
    out = _run("""
        import triton, sasstune
        print(sasstune.enabled())
    """, {"SASSTUNE": "1", "TRITON_CACHE_DIR": str(tmp_path / "t")})
    assert out.strip() == "True"


def test_sasstune_1_without_library_warns_and_leaves_triton_alone(tmp_path):
    r = subprocess.run([sys.executable, "-c", "import sasstune, triton; print(sasstune.enabled())"],
                       env=dict(os.environ, SASSTUNE="1", SASSTUNE_LIBRARY=str(tmp_path / "missing.so"),
                                SASSTUNE_LOG="warn", PYTHONPATH=PYDIR), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0
    assert r.stdout.strip() == "False"
    assert "could not be enabled" in r.stderr


def test_pth_line(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / _autoload.PTH_NAME).write_text(_autoload.PTH_LINE)
    code = ("import site, sys; site.addsitedir(%r); print('sasstune' in sys.modules)" % str(site))
    env = dict(os.environ, PYTHONPATH=PYDIR)
    env.pop("SASSTUNE", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "False", r.stderr
    env["SASSTUNE"] = "1"
    env["SASSTUNE_LIBRARY"] = _lib.load().path
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "True", r.stderr


def test_enable_rejects_unknown_settings():
    with pytest.raises(ValueError):
        sasstune.enable(mode="fast")
    assert not sasstune.enabled()
