"""The fleet tier from Python: enable(redis=...) checks the URL and the library's hiredis support,
the settings reach the plugin, and a real redis-server on loopback serves an entry to a process
with an empty local cache (through the plugin, cache-only) and lists it with `sasstune cache --redis`."""
import ctypes
import json
import os
import shutil
import socket
import subprocess
import time

import pytest

import sasstune
from sasstune import _lib, _settings

from conftest import Error, KeyFields, Record

REDIS = shutil.which("redis-server")


@pytest.fixture
def store_entry_remote():
    """Store stock -> tuned in Redis (st_cache_remote_store) under the key a plain run() asks for."""
    def store(url, stock, tuned):
        import hashlib
        dll = ctypes.CDLL(_lib.find_library())
        k = KeyFields(hashlib.sha256(stock).hexdigest().encode(), b"k", None, None, None, b"12.8.93", None)
        r = Record(b"{}", b'{"runs": 1}', 1.05, 1.02, 1.08, b"test", b"1s", None, tuned, len(tuned))
        remote, err = ctypes.c_void_p(), Error()
        dll.st_cache_remote_open.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p,
                                             ctypes.c_int, ctypes.POINTER(Error)]
        dll.st_cache_remote_store.argtypes = [ctypes.c_void_p, ctypes.POINTER(KeyFields), ctypes.POINTER(Record),
                                              ctypes.POINTER(Error)]
        dll.st_cache_remote_free.argtypes = [ctypes.c_void_p]
        assert dll.st_cache_remote_open(ctypes.byref(remote), url.encode(), None, 0, ctypes.byref(err)) == 0, err.msg
        try:
            assert dll.st_cache_remote_store(remote, ctypes.byref(k), ctypes.byref(r), ctypes.byref(err)) == 0, err.msg
        finally:
            dll.st_cache_remote_free(remote)
    return store


@pytest.fixture
def redis_url(tmp_path):
    if not REDIS:
        pytest.skip("no redis-server (scripts/install-deps.sh installs it)")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([REDIS, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(tmp_path), "--save", "",
                          "--appendonly", "no", "--logfile", str(tmp_path / "redis.log")])
    try:
        for _ in range(100):  # at most 5 s
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield "redis://127.0.0.1:%d/0" % port
    finally:
        p.terminate()
        try:
            p.wait(timeout=2)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def test_enable_refuses_a_bad_url(monkeypatch):
    with pytest.raises(ValueError) as e:
        sasstune.enable(redis="http://cache:6379")
    assert "enable(redis=...)" in str(e.value) and "not redis://" in str(e.value)
    monkeypatch.setenv("SASSTUNE_REDIS", "redis://h:99999")
    with pytest.raises(ValueError) as e:
        sasstune.enable()
    assert "SASSTUNE_REDIS" in str(e.value) and "port" in str(e.value)


def test_library_has_hiredis():
    assert _lib.load().check_redis("redis://127.0.0.1:6379/0") is None


def test_settings_reach_the_plugin(monkeypatch):
    monkeypatch.setenv("SASSTUNE_REDIS_TIMEOUT", "150ms")
    _settings.set_overrides({"redis": "redis://127.0.0.1:1/0"})
    try:
        o = json.loads(_settings.current().options())
    finally:
        _settings.set_overrides({})
    assert o["redis"] == "redis://127.0.0.1:1/0" and o["redis_timeout"] == "150ms"


def test_remote_entry_reaches_an_empty_local_cache(redis_url, tmp_path, store_entry_remote):
    cubin = b"\x7fELF" + b"\0" * 60
    store_entry_remote(redis_url, cubin, b"\x7fELF" + b"\1" * 60)
    p = _lib.load()
    opts = {"mode": "cache-only", "cache_dir": str(tmp_path / "c"), "redis": redis_url, "log": "off"}
    r = p.run(cubin, kernel="k", arch="sm_90", ptxas_version="12.8.93", options_json=json.dumps(opts))
    # a fake cubin: the checker cannot re-check it, so it is refused, and counted as a miss
    assert r.status == "unchanged" and "cache miss" in r.message
    sasstune_cli = os.path.join(os.path.dirname(_lib.find_library()), "sasstune")
    if os.path.exists(sasstune_cli):
        out = subprocess.run([sasstune_cli, "cache", "list", "--redis", redis_url], capture_output=True, text=True)
        assert "1 entry" in out.stdout and " k " in out.stdout, out.stdout + out.stderr
