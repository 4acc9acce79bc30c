"""The adapter finds and loads libsasstune.so and speaks its plugin ABI."""
import json
import os

import pytest

from sasstune import _lib, _settings


def test_loads_the_plugin():
    p = _lib.load()
    assert p.name == "sasstune"
    assert p.stage == "after-ptxas"
    assert p.version.count(".") == 2
    assert os.path.isfile(p.path) or p.path == "libsasstune.so"
    assert _lib.load() is p  # loaded once


def test_run_miss_returns_input_unchanged(tmp_path):
    p = _lib.load()
    r = p.run(b"\x7fELF-not-really", kernel="k", arch="sm_90", ptxas_version="12.8.93",
              options_json=json.dumps({"mode": "cache-only", "cache_dir": str(tmp_path)}))
    assert r.status == "unchanged"
    assert r.cubin == b"\x7fELF-not-really"
    assert "cache-only" in r.message
    assert isinstance(r.cubin, bytes)


def test_run_reports_bad_settings_as_error():
    r = _lib.load().run(b"abc", kernel="k", options_json='{"mode": "fast"}')
    assert r.status == "error"
    assert r.cubin == b"abc"
    assert "mode" in r.message


def test_sasstune_library_env_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("SASSTUNE_LIBRARY", str(tmp_path / "nope.so"))
    assert _lib.find_library() == str(tmp_path / "nope.so")
    with pytest.raises(_lib.SasstuneError) as e:
        _lib.load(str(tmp_path / "nope.so"))
    assert "nope.so" in str(e.value)


def test_not_a_plugin_is_refused(tmp_path):
    import ctypes.util
    libc = ctypes.util.find_library("c")
    if not libc:
        pytest.skip("no libc path")
    with pytest.raises(_lib.SasstuneError) as e:
        _lib.Plugin(libc)
    assert "sasstune_plugin_info" in str(e.value)


def test_sanitizer_builds_are_skipped(tmp_path):
    f = tmp_path / "libsasstune.so"
    f.write_bytes(b"\x7fELF....libasan.so.8....")
    assert _lib._is_sanitized(str(f))
    assert _lib._usable(str(f), "build") == "sanitizer build, skipped"
    assert _lib._usable(str(f), "package") is None


def test_settings_pass_through_options_json(monkeypatch):
    monkeypatch.setenv("SASSTUNE_BUDGET", "30s")
    monkeypatch.setenv("SASSTUNE_MODE", "tune")
    _settings.set_overrides({"policy": "/p.bin", "log": "info"})
    o = json.loads(_settings.current().options(mode="cache-only", gpu_name="NVIDIA H200",
                                               compute_capability="9.0", driver_version="580.65.06"))
    assert o["budget"] == "30s" and o["policy"] == "/p.bin" and o["log"] == "info"
    assert o["mode"] == "cache-only"  # the explicit per-call mode wins
    assert o["gpu_name"] == "NVIDIA H200" and o["compute_capability"] == "9.0"
    assert o["driver_version"] == "580.65.06"
    assert "cache_dir" in o


def test_bad_mode_is_an_error(monkeypatch):
    monkeypatch.setenv("SASSTUNE_MODE", "fast")
    with pytest.raises(ValueError):
        _settings.current()


def test_parse_size():
    assert _settings.parse_size("1G") == 1 << 30
    assert _settings.parse_size("512M") == 512 << 20
    assert _settings.parse_size("100") == 100
    with pytest.raises(ValueError):
        _settings.parse_size("lots")


def test_log_to_file(monkeypatch, tmp_path):
    path = tmp_path / "log.txt"
    monkeypatch.setenv("SASSTUNE_LOG", str(path))
    _settings.log("info", "hello %s", "world")
    _settings.log("debug", "not written")
    text = path.read_text()
    assert "info: hello world" in text and "not written" not in text
