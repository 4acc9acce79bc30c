"""triton.autotune: its benchmarking launches are never tuned; the config it picks is tuned at its
first real launch.  The Autotuner is Triton 3.6's own (decorator, run, _bench); the kernel it
drives stands in for a JITFunction and launches armed CompiledKernels (one per config), with the
fake device of conftest.py."""
import json

import pytest
from conftest import FakePlugin, compile_add
from test_launch import FakeBuf, launch, loaded
from triton.compiler.compiler import CompiledKernel

import sasstune
from sasstune import _autotune, _lib, _triton

triton = pytest.importorskip("triton")

pytestmark = pytest.mark.usefixtures("fake_device")


def tuning_plugin():
    def respond(cubin, kernel, launch_json, opts):
        if launch_json is None:
            return _lib.UNCHANGED, cubin, "cache miss (fake); mode %s" % json.loads(opts)["mode"]
        return _lib.TUNED, cubin + b"TUNED", "tuned (fake)"

    return FakePlugin(respond)


class PerConfig:
    """Stands in for the JITFunction under the autotuner: run() launches the compiled kernel of
    the config's block size and records whether the autotuner was benchmarking."""

    def __init__(self, kernels):
        self.kernels = kernels  # B -> CompiledKernel (armed)
        self.launches = []

        def fn(x, y, o, n, B):
            pass

        self.fn = fn
        self.arg_names = ["x", "y", "o", "n", "B"]

    def run(self, *args, grid=None, warmup=False, **kw):
        b = kw["B"]
        self.launches.append((b, _autotune.benchmarking()))
        launch(self.kernels[b], (4, 1, 1), *args, b)


def test_benchmarking_launches_are_not_tuned_the_pick_is():
    fake = tuning_plugin()
    sasstune.enable()
    _lib.set_plugin(fake)
    assert _autotune.status() == "benchmarking launches are skipped"
    kernels = {}
    for b in (256, 1024):
        ck = compile_add(b)
        _triton.consider(ck)
        loaded(ck)
        kernels[b] = ck
    inner = PerConfig(kernels)
    # 1024 is the fastest config: the autotuner picks it
    bench = lambda kernel_call, quantiles: (kernel_call(), [float(inner.launches[-1][0] == 256) + 1.0] * 3)[1]  # noqa
    tuner = triton.autotune(configs=[triton.Config({"B": 256}), triton.Config({"B": 1024})], key=["n"],
                            do_bench=bench)(inner)
    x, y, o = FakeBuf(b"\1" * 4096), FakeBuf(b"\2" * 4096), FakeBuf(b"\0" * 4096)
    tuner.run(x, y, o, 1000, grid=(4, 1, 1), warmup=False)
    # every config was benchmarked (inside _bench), then the pick launched outside it
    assert [b for b, inside in inner.launches if inside] == [256, 1024]
    assert inner.launches[-1] == (1024, False)
    tunes = [c for c in fake.calls if c["launch_json"] is not None]
    assert len(tunes) == 1 and tunes[0]["cubin"] == kernels[1024].kernel[:-len(b"TUNED")]
    assert type(kernels[1024]) is CompiledKernel  # tuned and disarmed
    assert type(kernels[256]) is not CompiledKernel  # still armed: never launched for real
    ev = [e for e in sasstune.stats()["events"] if e["event"] == "launch-tune"]
    assert [e["kernel"] for e in ev] == ["add_kernel"] and ev[0]["status"] == "tuned"
    # a second call with the same key: no benchmarking, no plugin call
    n_calls, n_launches = len(fake.calls), len(inner.launches)
    tuner.run(x, y, o, 1000, grid=(4, 1, 1), warmup=False)
    assert inner.launches[n_launches:] == [(1024, False)] and len(fake.calls) == n_calls


def test_disable_puts_back_the_autotuner():
    from triton.runtime.autotuner import Autotuner
    orig = Autotuner.__dict__["_bench"]
    sasstune.enable()
    assert Autotuner.__dict__["_bench"] is not orig
    assert Autotuner._bench.sasstune_wrapped is orig
    sasstune.disable()
    assert Autotuner.__dict__["_bench"] is orig and not _autotune.benchmarking()
    assert _autotune.status() == "not installed"


def test_no_bench_method_means_nothing_is_wrapped(monkeypatch):
    from triton.runtime.autotuner import Autotuner
    monkeypatch.delattr(Autotuner, "_bench")  # put back by monkeypatch
    assert _autotune.install() == "this Triton's Autotuner has no _bench (3.6 has)"
    assert "_bench" not in Autotuner.__dict__ and _autotune.status().startswith("this Triton")
