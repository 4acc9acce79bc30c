"""Negative results and the process-wide budget in the adapter: a "nothing beat stock" result (a
cache hit at compile or JIT time, or a fresh one at first launch) marks the kernel done and is
never armed again; environmental failures leave it pending; SASSTUNE_TOTAL_BUDGET caps the
tuning time of a process (each kernel gets min(budget, what is left), the rest are skipped and
stay pending); bad budgets are errors at enable().  No GPU: a fake library, or the real one with
entries stored through st_cache_store."""
import ctypes
import hashlib
import json

import pytest
from conftest import Error, FakePlugin, KeyFields, Record, compile_add
from test_launch import FakeBuf, launch, loaded

import sasstune
from sasstune import _budget, _lib, _settings, _triton

pytestmark = pytest.mark.usefixtures("fake_device")  # conftest.py


@pytest.fixture(autouse=True)
def fresh_budget():
    _budget.BUDGET.reset()
    yield
    _budget.BUDGET.reset()


class TimedPlugin(FakePlugin):
    """A fake whose tuning calls take `seconds` (as reported by run())."""

    def __init__(self, respond, seconds):
        super().__init__(respond)
        self.seconds = seconds

    def run(self, cubin, **kw):
        r = super().run(cubin, **kw)
        if kw.get("launch_json"):
            r.seconds = self.seconds
        return r


def entry_state(ck):
    with open(ck.metadata_group["add_kernel.json"]) as f:
        return json.load(f)["sasstune"]


def first_launch(ck):
    _triton.consider(ck)
    run = loaded(ck)
    launch(ck, (1, 1, 1), FakeBuf(b"a" * 64), FakeBuf(b"b" * 64), FakeBuf(b"c" * 64), 16, 1024)
    return run


NEG_HIT = "cached: nothing beat stock (tuned 2026-12-01T10:00:00Z, budget 300s, best ratio 0.9990; entry abc)"


def test_negative_hit_at_compile_time_is_done():
    fake = FakePlugin(lambda c, k, launch, o: (_lib.UNCHANGED, c, NEG_HIT))
    sasstune.enable()
    _lib.set_plugin(fake)
    ck = compile_add()
    assert ck.metadata.sasstune["pending"] is False
    _triton.consider(ck)
    assert type(ck) is type(compile_add())  # not armed
    assert len(fake.calls) == 1  # no lookup, no tuning


def test_negative_hit_at_jit_time_is_done():
    def respond(cubin, kernel, launch, opts):
        if json.loads(opts)["mode"] == "cache-only" and len(fake.calls) > 1:
            return _lib.UNCHANGED, cubin, NEG_HIT  # another process tuned it meanwhile
        return _lib.UNCHANGED, cubin, "cache miss abc; mode cache-only, stock cubin kept"

    fake = FakePlugin(respond)
    sasstune.enable()
    _lib.set_plugin(fake)
    ck = compile_add()
    assert ck.metadata.sasstune["pending"] is True
    _triton.consider(ck)
    assert _triton._armed.get(id(ck)) is None
    assert entry_state(ck)["pending"] is False and "nothing beat stock" in entry_state(ck)["message"]


def test_fresh_negative_at_first_launch_is_done_and_counted():
    def respond(cubin, kernel, launch, opts):
        if launch is None:
            return _lib.UNCHANGED, cubin, "cache miss abc; mode cache-only, stock cubin kept"
        return (_lib.UNCHANGED, cubin, "cache miss abc; tuned 900 steps: no schedule passed confirmation; "
                "nothing beat stock (stored as negative, best ratio 0.9990)")

    sasstune.enable(budget="20s")
    _lib.set_plugin(TimedPlugin(respond, 20.5))
    ck = compile_add()
    run = first_launch(ck)
    assert run.calls[-1][3] == 111  # stock
    st = entry_state(ck)
    assert st["pending"] is False and "stored as negative" in st["message"]
    b = _budget.BUDGET
    assert b.counts["kept-stock"] == 1 and b.spent == pytest.approx(20.5)
    assert "1 kernel tuned (0 gained, 1 kept stock) in 20.5 s" in b.summary()


@pytest.mark.parametrize("message,code", [
    ("cache miss abc; tuning needs a GPU (no CUDA driver), stock cubin kept", _lib.UNCHANGED),
    ("cache miss abc; tuning failed: nvdisasm not found (set SASSTUNE_NVDISASM), stock cubin kept", _lib.ERROR),
    ("cache miss abc; tuned 10 steps: x; nothing better found, not stored: disk full", _lib.UNCHANGED),
])
def test_environmental_failures_stay_pending(message, code):
    def respond(cubin, kernel, launch, opts):
        if launch is None:
            return _lib.UNCHANGED, cubin, "cache miss abc; mode cache-only, stock cubin kept"
        return code, cubin, message

    fake = FakePlugin(respond)
    sasstune.enable()
    _lib.set_plugin(fake)
    ck = compile_add()
    first_launch(ck)
    st = entry_state(ck)
    assert st["pending"] is True and message in st["message"]
    assert _budget.BUDGET.counts["not-tuned"] == 1
    # a later process (same Triton cache entry) arms it again
    again = compile_add()
    assert again.metadata.sasstune["pending"] is True
    _triton.consider(again)
    assert _triton._armed.get(id(again)) is not None


def test_total_budget_caps_each_kernel_and_skips_the_rest(tmp_path):
    budgets = []

    def respond(cubin, kernel, launch, opts):
        if launch is None:
            return _lib.UNCHANGED, cubin, "cache miss abc; mode cache-only, stock cubin kept"
        budgets.append(json.loads(opts)["budget"])
        return _lib.UNCHANGED, cubin, "cache miss abc; tuned 5 steps: none; nothing beat stock (stored as negative)"

    log = tmp_path / "sasstune.log"
    sasstune.enable(budget="30s", total_budget="45", log=str(log))
    fake = TimedPlugin(respond, 40.0)
    _lib.set_plugin(fake)
    kernels = [compile_add(block) for block in (256, 512, 1024)]
    first_launch(kernels[0])  # granted 30 s, took 40
    fake.seconds = 5.0
    first_launch(kernels[1])  # 5 s left: granted 5
    first_launch(kernels[2])  # nothing left: skipped, stock, still pending
    assert budgets == ["30s", "5s"]
    st = json.load(open(kernels[2].metadata_group["add_kernel.json"]))["sasstune"]
    assert st["pending"] is True and "SASSTUNE_TOTAL_BUDGET spent" in st["message"]
    b = _budget.BUDGET
    assert b.counts["skipped"] == 1 and b.counts["kept-stock"] == 2 and b.spent == pytest.approx(45.0)
    assert [e["status"] for e in sasstune.stats()["events"] if e["event"] == "launch-tune"][-1] == "skipped"
    b.at_exit()
    text = log.read_text()
    assert "add_kernel: tuned, kept stock (40.0 s; 40.0 s of tuning in this process)" in text
    assert "add_kernel: skipped: budget spent" in text
    assert "summary: 2 kernels tuned (0 gained, 2 kept stock) in 45.0 s; 1 skipped (budget spent)" in text


def test_bad_budgets_are_errors_at_enable(monkeypatch):
    with pytest.raises(ValueError, match=r"enable\(budget=\.\.\.\): 'bogus' is not a duration"):
        sasstune.enable(budget="bogus")
    with pytest.raises(ValueError, match=r"enable\(total_budget=\.\.\.\): '0s' is not at least 1 s"):
        sasstune.enable(total_budget="0s")
    with pytest.raises(ValueError, match=r"enable\(retune=\.\.\.\): 'maybe'"):
        sasstune.enable(retune="maybe")
    monkeypatch.setenv("SASSTUNE_TOTAL_BUDGET", "ten minutes")
    with pytest.raises(ValueError, match="SASSTUNE_TOTAL_BUDGET: 'ten minutes' is not a duration"):
        sasstune.enable()
    monkeypatch.setenv("SASSTUNE_TOTAL_BUDGET", "10m")
    sasstune.enable(budget=90, retune=True)
    s = _settings.current()
    assert (s.budget_seconds, s.total_budget, s.retune) == (90, 600, True)
    assert json.loads(s.options())["retune"] == "True"  # the C side reads true/false too


def _store_negative(cache_dir, stock, kernel, ptxas, budget):
    dll = ctypes.CDLL(_lib.find_library())
    facts = _settings.gpu_facts()
    e = lambda s: s.encode() if s is not None else None  # noqa: E731
    k = KeyFields(e(hashlib.sha256(stock).hexdigest()), e(kernel), e(facts["gpu_name"]),
                  e(facts["compute_capability"]), e(facts["driver_version"]), e(ptxas), None)
    r = Record(method=b"ppo", budget=e(budget), negative=1, best_ratio=0.998, why=b"nothing passed confirmation")
    cache, err = ctypes.c_void_p(), Error()
    dll.st_cache_open.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.POINTER(Error)]
    dll.st_cache_store.argtypes = [ctypes.c_void_p, ctypes.POINTER(KeyFields), ctypes.POINTER(Record),
                                   ctypes.POINTER(Error)]
    dll.st_cache_free.argtypes = [ctypes.c_void_p]
    assert dll.st_cache_open(ctypes.byref(cache), e(str(cache_dir)), ctypes.byref(err)) == 0, err.msg
    try:
        assert dll.st_cache_store(cache, ctypes.byref(k), ctypes.byref(r), ctypes.byref(err)) == 0, err.msg
    finally:
        dll.st_cache_free(cache)


def test_real_library_negative_entry_is_not_armed_unless_retune_is_due(tmp_path):
    sasstune.enable()
    ck = compile_add()
    stock = ck.kernel
    _store_negative(tmp_path / "sasstune", stock, "add_kernel", _triton.ptxas_version(90), "300s")
    res = _lib.load().run(stock, kernel="add_kernel", arch="sm_90", ptxas_version=_triton.ptxas_version(90),
                          options_json=_settings.current().options(mode="cache-only", **_settings.gpu_facts()))
    assert _lib.is_negative(res) and res.message.startswith("cached: nothing beat stock"), res
    _triton.consider(ck)
    assert _triton._armed.get(id(ck)) is None and entry_state(ck)["pending"] is False
    # a larger budget than the entry was tuned with: armed again
    sasstune.enable(budget="10m")
    third = compile_add(256)
    _store_negative(tmp_path / "sasstune", third.kernel, "add_kernel", _triton.ptxas_version(90), "300s")
    assert third.metadata.sasstune["pending"] is True
    _triton.consider(third)
    assert _triton._armed.get(id(third)) is not None
