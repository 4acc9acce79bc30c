"""First launch: capture -> launch spec (checked by the runtime's own parser) -> run() in mode tune ->
the tuned cubin loaded for this process and written into the Triton cache entry.  No GPU: device
buffers, module loading and the launcher are stood in for; the spec, the plugin calls, the
bookkeeping and the cache files are real."""
import ctypes
import json
import os
import re
import struct

import pytest
from conftest import FakePlugin, compile_add, compile_scale, store_entry
from triton.compiler.compiler import CompiledKernel

import sasstune
from sasstune import _capture, _lib, _triton


class FakeBuf:
    """A 'device tensor': bytes at a made-up address."""
    FAKE_DEVICE = True  # read back by conftest's fake_device
    _next = [0x7f0000000000]

    def __init__(self, data):
        self.data = bytes(data)
        self.ptr = self._next[0]
        self._next[0] += 1 << 20


pytestmark = pytest.mark.usefixtures("fake_device")  # conftest.py


class Launcher:
    """Stands in for Triton's CudaLauncher: records what it was asked to launch."""

    def __init__(self):
        self.calls = []

    def __call__(self, gx, gy, gz, stream, function, *rest):
        self.calls.append((gx, gy, gz, function, rest[4:]))


def loaded(ck):
    """Pretend _init_handles ran: a stock module, function 111, our launcher."""
    ck.module, ck.function, ck.n_max_threads = "stock-module", 111, 1024
    ck._run = Launcher()
    return ck._run


def launch(ck, grid, *args):
    ck.run(grid[0], grid[1], grid[2], 0, ck.function, ck.packed_metadata, None, None, None, *args)


def parse_spec(text):
    """Parse with the runtime's own parser; returns the param count."""
    dll = ctypes.CDLL(_lib.find_library())

    class Err(ctypes.Structure):
        _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]

    dll.st_launch_parse.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                    ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(Err)]
    dll.st_launch_param_count.argtypes = [ctypes.c_void_p]
    dll.st_launch_param_count.restype = ctypes.c_size_t
    dll.st_launch_free.argtypes = [ctypes.c_void_p]
    spec, err = ctypes.c_void_p(), Err()
    b = text.encode()
    rc = dll.st_launch_parse(b, len(b), None, ctypes.byref(spec), ctypes.byref(err))
    assert rc == 0, err.msg.decode()
    n = dll.st_launch_param_count(spec)
    dll.st_launch_free(spec)
    return n


def ptx_param_count(ck):
    m = re.search(r"\.entry\s+\w+\s*\((.*?)\)", ck.asm["ptx"], re.S)
    return m.group(1).count(".param")


def test_spec_matches_the_kernel_abi(tmp_path):
    ck = compile_scale()
    x, o = FakeBuf(b"\1" * 4096), FakeBuf(b"\2" * 4096)
    h, b = 1.00048828125, 1.005859375  # fp16: exactly representable; bf16: rounding != truncation
    args = (x, o, 1000, 0.1, h, b, True, 256)
    spec, builder = _capture.build_spec(str(tmp_path), ck.name, dict(ck.src.signature), ck.src.fn.arg_names, args,
                                        ck.metadata, (4, ), 1 << 30)
    path, text = _capture.write_capture(spec, builder)
    assert parse_spec(text) == ptx_param_count(ck) == len(spec["params"])
    p = spec["params"]
    assert spec["grid"] == [4, 1, 1] and spec["block"] == [ck.metadata.num_warps * 32, 1, 1]
    assert spec["shared_bytes"] == ck.metadata.shared
    assert p[0]["file"] and open(p[0]["file"], "rb").read() == x.data and p[0]["dtype"] == "fp32"
    assert p[2] == {"kind": "i32", "value": 1000, "name": "n"}
    assert float.fromhex(p[3]["value"]) == struct.unpack("<f", struct.pack("<f", 0.1))[0]
    assert p[4]["hex"] == struct.pack("<e", h).hex()  # Triton: PyFloat_Pack2
    assert p[5]["hex"] == "803f"  # Triton truncates the float to bf16: 0x3f80, not 0x3f81
    assert p[6]["kind"] == "u8" and p[6]["value"] == 1
    assert p[-2]["name"] == "global_scratch" and p[-1]["name"] == "profile_scratch"
    assert json.loads(open(path).read()) == spec


def test_unsupported_launches():
    ck = compile_add()
    md, sig, names = ck.metadata, dict(ck.src.signature), ck.src.fn.arg_names
    bufs = (FakeBuf(b"x" * 64), FakeBuf(b"y" * 64), FakeBuf(b"o" * 64))
    with pytest.raises(_capture.Unsupported, match="raw integer pointer"):
        _capture.build_spec("/tmp", ck.name, sig, names, (bufs[0], bufs[1], 0x1234, 16, 1024), md, (1, ), 1 << 30)
    with pytest.raises(_capture.Unsupported, match="SASSTUNE_CAPTURE_LIMIT"):
        _capture.build_spec("/tmp", ck.name, sig, names, bufs + (16, 1024), md, (1, ), 100)
    with pytest.raises(_capture.Unsupported, match="num_ctas"):
        _capture.build_spec("/tmp", ck.name, sig, names, bufs + (16, 1024), md._replace(num_ctas=2), (1, ), 1 << 30)
    with pytest.raises(_capture.Unsupported, match="empty grid"):
        _capture.build_spec("/tmp", ck.name, sig, names, bufs + (16, 1024), md, (0, ), 1 << 30)
    with pytest.raises(_capture.Unsupported, match="not a host tensor descriptor with TMA metadata"):
        b = _capture.SpecBuilder("/tmp")  # host TMA descriptors are captured: test_capture_tma.py
        b.add("tensordesc<fp16[64, 64]>", object(), "d", [{"swizzle": 3}])


def test_null_pointer_and_tuple_arguments(tmp_path):
    b = _capture.SpecBuilder(str(tmp_path))
    b.add(("*fp32", ("i32", "constexpr")), (0, (7, 3)), "t", [])
    assert b.params == [{"kind": "ptr", "name": "t[0]", "bytes": 0}, {"kind": "i32", "value": 7, "name": "t[1][0]"}]


def _tuning_plugin(tuned_suffix=b"TUNED", seen=None):
    """Fake plugin: compile time -> unchanged; lookups -> miss; tune with a launch -> tuned."""

    def respond(cubin, kernel, launch, opts):
        o = json.loads(opts)
        if launch is None:
            return _lib.UNCHANGED, cubin, "cache miss (fake); mode %s" % o["mode"]
        assert o["mode"] == "tune"
        spec = json.loads(launch)
        if seen is not None:  # the capture files exist while run() works
            seen.append((spec, [open(p["file"], "rb").read() for p in spec["params"] if p.get("file")],
                         parse_spec(launch)))
        return _lib.TUNED, cubin + tuned_suffix, "tuned (fake): 1.05x"

    return FakePlugin(respond)


def test_first_launch_tunes_loads_and_records(tmp_path, fake_device):
    seen = []
    fake = _tuning_plugin(seen=seen)
    sasstune.enable(budget="30s")
    _lib.set_plugin(fake)
    ck = compile_add()
    stock = ck.kernel
    assert ck.metadata.sasstune["pending"]
    _triton.consider(ck)  # what jit_post_compile_hook does
    assert isinstance(ck, CompiledKernel) and type(ck) is not CompiledKernel  # armed
    run = loaded(ck)
    x, y, o = FakeBuf(b"\1" * 4096), FakeBuf(b"\2" * 4096), FakeBuf(b"\0" * 4096)
    launch(ck, (4, 1, 1), x, y, o, 1000, 1024)
    # the plugin got a launch spec of this very launch, and the stock cubin
    call = fake.calls[-1]
    assert call["cubin"] == stock and json.loads(call["options_json"])["budget"] == "30s"
    spec, files, nparams = seen[0]
    assert spec["kernel"] == "add_kernel" and spec["grid"] == [4, 1, 1]
    assert files == [x.data, y.data, o.data]
    assert nparams == ptx_param_count(ck)  # the runtime's parser accepts it, one param per PTX param
    # the tuned cubin is loaded and used, from this first launch on
    tuned = stock + b"TUNED"
    assert fake_device == [tuned]
    assert run.calls[-1][3] == 222 and ck.function == 222 and ck.kernel == tuned
    assert type(ck) is CompiledKernel  # disarmed
    # written into the Triton cache entry (the namespace only)
    with open(ck.metadata_group["add_kernel.cubin"], "rb") as f:
        assert f.read() == tuned
    with open(ck.metadata_group["add_kernel.json"]) as f:
        st = json.load(f)["sasstune"]
    assert st["pending"] is False and st["status"] == "tuned"
    # capture files are gone
    assert not os.listdir(os.path.join(str(tmp_path / "sasstune"), "captures"))
    # later launches pay nothing
    n = len(fake.calls)
    launch(ck, (4, 1, 1), x, y, o, 1000, 1024)
    assert len(fake.calls) == n and run.calls[-1][3] == 222
    # a later process: Triton's cache hands out the tuned cubin, nothing is tuned or looked up
    again = compile_add()
    assert again.kernel == tuned and again.metadata.sasstune["pending"] is False
    _triton.consider(again)
    assert len(fake.calls) == n and type(again) is CompiledKernel
    ev = [e for e in sasstune.stats()["events"] if e["event"] == "launch-tune"]
    assert len(ev) == 1 and ev[0]["status"] == "tuned" and ev[0]["written"]


def test_first_launch_with_the_real_library_today(tmp_path, fake_device):
    """Without a GPU the plugin's tuning step says so ("tuning needs a GPU"): the stock cubin stays,
    this process does not try again, and the kernel stays pending in the Triton cache entry (an
    environmental reason: a later process on a GPU tunes it)."""
    sasstune.enable()
    ck = compile_add()
    _triton.consider(ck)
    run = loaded(ck)
    launch(ck, (2, 1, 1), FakeBuf(b"a" * 256), FakeBuf(b"b" * 256), FakeBuf(b"c" * 256), 64, 1024)
    assert run.calls[-1][3] == 111 and fake_device == []
    ev = [e for e in sasstune.stats()["events"] if e["event"] == "launch-tune"][0]
    assert ev["status"] in ("unchanged", "tuned", "cached"), ev
    with open(ck.metadata_group["add_kernel.json"]) as f:
        st = json.load(f)["sasstune"]
    assert st["pending"] is True and "not tuned in this process" in st["message"], st
    assert type(ck) is CompiledKernel


def test_lookup_at_jit_time_finds_another_process_result(tmp_path):
    sasstune.enable()
    ck = compile_add()
    stock = ck.kernel
    tuned = stock + b"\0OTHER-PROCESS"
    store_entry(tmp_path / "sasstune", stock, tuned, "add_kernel", _triton.ptxas_version(90))
    _triton.consider(ck)  # module not loaded yet: the tuned bytes replace the stock ones
    assert ck.kernel == tuned and type(ck) is CompiledKernel
    with open(ck.metadata_group["add_kernel.cubin"], "rb") as f:
        assert f.read() == tuned
    assert [e["status"] for e in sasstune.stats()["events"] if e["event"] == "lookup"] == ["cached"]


def test_another_process_tuning_leaves_it_pending(fake_device):

    def respond(cubin, kernel, launch, opts):
        if launch is None:
            return _lib.UNCHANGED, cubin, "cache miss"
        return _lib.UNCHANGED, cubin, "cache miss abc; another process is tuning this kernel, stock cubin kept"

    sasstune.enable()
    _lib.set_plugin(FakePlugin(respond))
    ck = compile_add()
    _triton.consider(ck)
    loaded(ck)
    launch(ck, (1, 1, 1), FakeBuf(b"a" * 64), FakeBuf(b"b" * 64), FakeBuf(b"c" * 64), 16, 1024)
    with open(ck.metadata_group["add_kernel.json"]) as f:
        assert json.load(f)["sasstune"]["pending"] is True
    assert type(ck) is CompiledKernel  # but this process does not try again


def test_unsupported_launch_is_recorded_and_not_retried_in_this_process(fake_device):
    fake = _tuning_plugin()
    sasstune.enable()
    _lib.set_plugin(fake)
    ck = compile_add()
    _triton.consider(ck)
    run = loaded(ck)
    launch(ck, (1, 1, 1), FakeBuf(b"a" * 64), FakeBuf(b"b" * 64), 0xdead0000, 16, 1024)
    assert run.calls and run.calls[-1][3] == 111
    assert all(c.get("launch_json") is None for c in fake.calls)
    with open(ck.metadata_group["add_kernel.json"]) as f:
        st = json.load(f)["sasstune"]
    assert st["pending"] is True and "raw integer pointer" in st["message"]  # another launch may do
    n = len(fake.calls)
    launch(ck, (1, 1, 1), FakeBuf(b"a" * 64), FakeBuf(b"b" * 64), FakeBuf(b"c" * 64), 16, 1024)
    assert len(fake.calls) == n  # disarmed for this process


def test_rejected_when_the_tuned_cubin_cannot_run_the_block(monkeypatch):
    monkeypatch.setattr(_triton, "_load_binary", lambda ck, c: ("m", 333, 255, 0, 64))
    sasstune.enable()
    _lib.set_plugin(_tuning_plugin())
    ck = compile_add()
    _triton.consider(ck)
    run = loaded(ck)
    launch(ck, (1, 1, 1), FakeBuf(b"a" * 64), FakeBuf(b"b" * 64), FakeBuf(b"c" * 64), 16, 1024)
    assert run.calls[-1][3] == 111 and ck.function == 111


def test_graph_capture_defers_tuning(monkeypatch):
    fake = _tuning_plugin()
    sasstune.enable()
    _lib.set_plugin(fake)
    ck = compile_add()
    _triton.consider(ck)
    loaded(ck)
    monkeypatch.setattr(_triton, "_capturing", lambda: True)
    launch(ck, (1, 1, 1), FakeBuf(b"a" * 64), FakeBuf(b"b" * 64), FakeBuf(b"c" * 64), 16, 1024)
    assert type(ck) is not CompiledKernel  # still armed
    monkeypatch.setattr(_triton, "_capturing", lambda: False)
    launch(ck, (1, 1, 1), FakeBuf(b"a" * 64), FakeBuf(b"b" * 64), FakeBuf(b"c" * 64), 16, 1024)
    assert type(ck) is CompiledKernel and ck.function == 222


def test_post_compile_hook_finds_the_kernel_and_disable_disarms():
    sasstune.enable()
    _lib.set_plugin(_tuning_plugin())
    ck = compile_add()

    class JF:
        device_caches = {0: ({"key": ck}, {}, None, None, None)}

    class Info:
        jit_function = JF()

    _triton.post_compile_hook(key="key", repr="", fn=Info(), compile={"device": 0}, is_manual_warmup=False,
                              already_compiled=False)
    assert type(ck) is not CompiledKernel
    sasstune.disable()
    assert type(ck) is CompiledKernel


def test_keep_captures(tmp_path):
    sasstune.enable(keep_captures="1")
    _lib.set_plugin(_tuning_plugin())
    ck = compile_add()
    _triton.consider(ck)
    loaded(ck)
    launch(ck, (1, 1, 1), FakeBuf(b"a" * 64), FakeBuf(b"b" * 64), FakeBuf(b"c" * 64), 16, 1024)
    ev = [e for e in sasstune.stats()["events"] if e["event"] == "launch-tune"][0]
    assert os.path.isfile(os.path.join(ev["capture"], "launch.json"))
