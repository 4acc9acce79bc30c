"""The right GPU: a kernel launched on device 1 is tuned on device 1 (options_json "device", which
the pass hands to the runtime's worker: test_plugin_entry's device test) with device 1's facts in
the cache key."""
import json

import pytest
from conftest import compile_add
from test_launch import FakeBuf, _tuning_plugin, launch, loaded

import sasstune
from sasstune import _lib, _settings, _triton

pytestmark = pytest.mark.usefixtures("fake_device")


def test_tuned_on_the_device_it_is_launched_on(monkeypatch):
    _settings.set_gpu_facts(0, {"gpu_name": "GPU zero", "compute_capability": "9.0", "driver_version": "1"})
    _settings.set_gpu_facts(1, {"gpu_name": "GPU one", "compute_capability": "9.0", "driver_version": "1"})
    try:
        fake = _tuning_plugin()
        sasstune.enable()
        _lib.set_plugin(fake)
        ck = compile_add()
        _triton.consider(ck)
        loaded(ck)
        monkeypatch.setattr(_settings, "current_device", lambda: 1)  # torch.cuda.set_device(1)
        launch(ck, (4, 1, 1), FakeBuf(b"\1" * 4096), FakeBuf(b"\2" * 4096), FakeBuf(b"\0" * 4096), 1000, 1024)
        opts = json.loads(fake.calls[-1]["options_json"])
        assert fake.calls[-1]["launch_json"] and opts["mode"] == "tune"
        assert opts["device"] == "1" and opts["gpu_name"] == "GPU one"
    finally:
        _settings.set_gpu_facts(0, None)
        _settings.set_gpu_facts(1, None)
