"""Compile time: the hook runs the plugin on the cubin (a real Triton compile for sm_90, no GPU),
returns bytes, keeps tuned and stock entries apart, and applies cache hits."""
import hashlib
import os

from conftest import FakePlugin, compile_add, store_entry
from triton import knobs
from triton.runtime.cache import FileCacheManager

import sasstune
from sasstune import _lib, _triton


class Spy(FakePlugin):
    """The real library, with every call recorded."""

    def __init__(self):
        real = _lib.load()
        super().__init__(None, version=real.version)
        self.real = real

    def run(self, cubin, **kw):
        self.calls.append(dict(kw, cubin=bytes(cubin)))
        return self.real.run(cubin, **kw)


def _under(path, root):
    return os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


def test_hook_calls_plugin_and_returns_bytes():
    spy = Spy()
    sasstune.enable()
    _lib.set_plugin(spy)
    ck = compile_add()
    assert len(spy.calls) == 1
    c = spy.calls[0]
    assert c["kernel"] == "add_kernel" and c["arch"] == "sm_90"
    assert c["ptxas_version"] and c["ptxas_version"].count(".") == 2  # e.g. 12.8.93
    assert '"mode": "cache-only"' in c["options_json"]  # no launch yet: never "tune" at compile time
    assert '"gpu_name"' in c["options_json"]
    assert c.get("launch_json") is None
    assert type(ck.kernel) is bytes and ck.kernel[:4] == b"\x7fELF"
    state = ck.metadata.sasstune
    assert state["status"] == "unchanged" and state["pending"] is True
    assert state["stock_sha256"] == hashlib.sha256(ck.kernel).hexdigest()
    ev = sasstune.stats()["events"]
    assert [e["event"] for e in ev] == ["compile"] and ev[0]["status"] == "unchanged"


def test_unchanged_cubin_equals_stock_compile(tmp_path, monkeypatch):
    sasstune.enable()
    hooked = compile_add().kernel
    sasstune.disable()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "other"))
    assert compile_add().kernel == hooked


def test_entries_are_namespaced(tmp_path):
    root = str(tmp_path / "triton")
    marker = b"SASSTUNE-TEST-TUNED"
    sasstune.enable()
    _lib.set_plugin(FakePlugin(lambda c, k, l, o: (_lib.CACHED, c + marker, "cache hit (fake)")))
    tuned = compile_add()
    assert tuned.kernel.endswith(marker)
    tag = _triton.namespace()[0]
    for p in tuned.metadata_group.values():
        assert _under(p, os.path.join(root, "sasstune", tag))
    sasstune.disable()
    assert knobs.cache.manager_class is None
    stock = compile_add()
    assert stock.hash == tuned.hash  # the same Triton key ...
    assert not stock.kernel.endswith(marker)  # ... but the stock entry never sees the tuned cubin
    for p in stock.metadata_group.values():
        assert _under(p, root) and not _under(p, os.path.join(root, "sasstune"))
    # and nothing tuned anywhere outside the namespace
    for d, _, files in os.walk(root):
        if _under(d, os.path.join(root, "sasstune")) or d == os.path.join(root, "sasstune"):
            continue
        for f in files:
            if f.endswith(".cubin"):
                with open(os.path.join(d, f), "rb") as fh:
                    assert marker not in fh.read()


def test_stock_entry_is_not_reused_when_enabled():
    stock = compile_add()  # SASSTUNE off: the stock entry
    sasstune.enable()
    hooked = compile_add()
    assert [e["event"] for e in sasstune.stats()["events"]] == ["compile"]  # the hook ran: a namespace miss
    assert hooked.hash == stock.hash


def test_cache_hit_applies_the_stored_cubin(tmp_path, monkeypatch):
    sasstune.enable()
    stock = compile_add().kernel
    tuned = stock + b"\0SASSTUNE-HIT"
    store_entry(tmp_path / "sasstune", stock, tuned, "add_kernel", _triton.ptxas_version(90))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "fresh"))  # Triton must compile again
    _triton.STATS.reset()
    ck = compile_add()
    ev = sasstune.stats()["events"][-1]
    assert ev["status"] == "cached" and "cache hit" in ev["message"]
    assert ck.kernel == tuned and type(ck.kernel) is bytes
    assert ck.metadata.sasstune["pending"] is False
    with open(ck.metadata_group["add_kernel.cubin"], "rb") as f:
        assert f.read() == tuned
    assert ev["plugin_ms"] < 100  # generous on a loaded 2-core machine; measured on the GPU machine


def test_policy_result_keeps_the_stock_cubin_beside(tmp_path):
    pol = tmp_path / "p.policy"
    pol.write_bytes(b"policy")

    def respond(c, k, launch, opts):
        assert '"mode": "policy"' in opts and str(pol) in opts
        return _lib.POLICY, c + b"POLICY", "policy applied (fake)"

    sasstune.enable(policy=str(pol))
    _lib.set_plugin(FakePlugin(respond))
    ck = compile_add()
    st = ck.metadata.sasstune
    assert ck.kernel.endswith(b"POLICY")
    assert st["status"] == "policy" and st["pending"] is True and st["stock_file"] == _triton.STOCK_FILE
    stock = _triton.stock_cubin(ck, st)
    assert stock is not None and stock + b"POLICY" == ck.kernel


def test_modes_at_compile_time():
    sasstune.enable(mode="cache-only")
    ck = compile_add()
    assert ck.metadata.sasstune["pending"] is False  # cache-only never tunes


def test_a_failing_plugin_never_breaks_a_compile():

    def respond(*a):
        raise RuntimeError("boom")

    sasstune.enable()
    _lib.set_plugin(FakePlugin(respond))
    ck = compile_add()
    assert ck.kernel[:4] == b"\x7fELF"
    assert sasstune.stats()["events"][-1]["status"] == "error"


def test_error_status_returns_stock(monkeypatch):
    sasstune.enable()
    _lib.set_plugin(FakePlugin(lambda c, k, l, o: (_lib.ERROR, c, "something is wrong (fake)")))
    ck = compile_add()
    assert ck.metadata.sasstune["status"] == "error" and ck.metadata.sasstune["pending"] is False


def test_hook_is_thread_safe():
    import threading
    sasstune.enable()
    stock = compile_add().kernel
    out, errors = [], []

    def work(i):
        try:
            md = {"name": "add_kernel", "hash": "00" * 32}
            out.append((_triton.on_cubin(stock, md, 90), md["sasstune"]["status"]))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i, )) for i in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert len(out) == 16 and all(b == stock and type(b) is bytes and s == "unchanged" for b, s in out)


class KeyedManager(FileCacheManager):
    """A user's own cache manager (its own __init__): namespaced through its key."""

    def __init__(self, key, override=False, dump=False):
        super().__init__(key, override=override, dump=dump)


def test_a_custom_cache_manager_is_namespaced_by_key(tmp_path):
    knobs.cache.manager_class = KeyedManager
    try:
        sasstune.enable()
        assert issubclass(knobs.cache.manager_class, KeyedManager)
        ck = compile_add()
        tag = _triton.namespace()[0]
        d = os.path.basename(os.path.dirname(ck.metadata_group["add_kernel.cubin"]))
        assert d.endswith("_" + tag)
        sasstune.disable()
        assert knobs.cache.manager_class is KeyedManager
        assert os.path.basename(os.path.dirname(compile_add().metadata_group["add_kernel.cubin"])) != d
    finally:
        del knobs.cache.manager_class
