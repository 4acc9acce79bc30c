"""SASSTUNE_MODE=capture, then `sasstune tune --captures DIR`: a first launch is recorded under its
schedule-cache key and runs stock at once; the batch hands each capture to the pass in mode tune
(no GPU here: it says so) and reports a kernel already in the cache as cached, which shows that the
capture's key is the one the pass looks up; a later process in mode tune then gets the tuned cubin
from the schedule cache.  The real library throughout; device buffers and the launcher are stood
in for (conftest.py's fake_device, test_launch.py)."""
import json
import os
import subprocess

import pytest
from conftest import compile_add, store_entry
from test_launch import FakeBuf, launch, loaded, parse_spec
from triton.compiler.compiler import CompiledKernel

import sasstune
from sasstune import _capture_mode, _lib, _settings, _triton

pytestmark = pytest.mark.usefixtures("fake_device")


def cli():
    path = os.path.join(os.path.dirname(_lib.find_library()), "sasstune")
    if not os.access(path, os.X_OK):
        pytest.skip("no sasstune command next to %s (build the sasstune_cli target)" % _lib.find_library())
    return path


def bufs(n=4096):
    return FakeBuf(b"\1" * n), FakeBuf(b"\2" * n), FakeBuf(b"\0" * n)


def capture_add(n=1000):
    ck = compile_add()
    _triton.consider(ck)
    run = loaded(ck)
    launch(ck, (4, 1, 1), *bufs(), n, 1024)
    return ck, run


def batch(root, *extra, cache_dir):
    env = dict(os.environ, SASSTUNE_LIBCUDA="/nonexistent/libcuda.so.1", SASSTUNE_CACHE_DIR=str(cache_dir))
    p = subprocess.run([cli(), "tune", "--captures", str(root), "--budget", "1s"] + list(extra), env=env,
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_capture_writes_a_capture_and_runs_stock(tmp_path):
    sasstune.enable(mode="capture")
    ck, run = capture_add()
    stock = ck.kernel
    assert run.calls[-1][3] == 111 and type(ck) is CompiledKernel  # stock ran; disarmed
    ev = [e for e in sasstune.stats()["events"] if e["event"] in ("capture", "launch-tune")]
    assert [e["event"] for e in ev] == ["capture"] and ev[0]["status"] == "captured", ev
    root = tmp_path / "sasstune" / "captures"
    (key,) = os.listdir(root)
    facts = _settings.gpu_facts()
    state = ck.metadata.sasstune
    opts = _capture_mode.options_json(_settings.current(), 0, facts)
    assert key == _capture_mode.cache_key(stock, "add_kernel", state, _triton._ptx_of(ck), opts)
    assert state["message"].startswith("cache miss %s" % key[:12])  # the compile's own lookup key
    folder = root / key
    assert (folder / "cubin").read_bytes() == stock
    assert (folder / "ptx").read_text() == _triton._ptx_of(ck)
    meta = json.loads((folder / "capture.json").read_text())
    assert meta["v"] == 1 and meta["kernel"] == "add_kernel" and meta["key"] == key and meta["device"] == "0"
    assert meta["arch"] == "sm_90" and meta["gpu_name"] == facts["gpu_name"] and meta["bytes"] == 3 * 4096
    assert meta["ptxas_path"] == state["ptxas_path"] and meta["ptxas_options"] == state["ptxas_options"]
    assert meta["ptxas_options"] and meta["variants"] == "off"  # conftest turns variants off
    spec = (folder / "launch.json").read_text()
    files = [p["file"] for p in json.loads(spec)["params"] if p.get("file")]
    assert files == ["arg0.bin", "arg1.bin", "arg2.bin"]  # relative: the folder can move
    assert (folder / "arg1.bin").read_bytes() == b"\2" * 4096
    old = os.getcwd()
    os.chdir(folder)
    try:
        assert parse_spec(spec) > 0  # the runtime's own parser takes it from its folder
    finally:
        os.chdir(old)
    # the Triton entry stays pending, so a later process in mode tune looks it up again
    with open(ck.metadata_group["add_kernel.json"]) as f:
        assert json.load(f)["sasstune"]["pending"] is True
    # the same kernel met again (another process): not captured twice
    ck2, _ = capture_add()
    ev = [e for e in sasstune.stats()["events"] if e["event"] == "capture"]
    assert ev[-1]["status"] == "exists" and os.listdir(root) == [key]


def test_capture_with_variants_keys_as_the_pass(tmp_path):
    """With the PTX and SASSTUNE_VARIANTS=on the pass's key holds the variant fields: the capture is
    named by that key (the compile's lookup names it too), and the batch, given the capture's PTX,
    ptxas and setting, computes the same key and runs the variants stage (no driver here: it says so)."""
    sasstune.enable(mode="capture", variants="on")
    ck, _ = capture_add()
    state, stock, ptx = ck.metadata.sasstune, ck.kernel, _triton._ptx_of(ck)
    root, cache = tmp_path / "sasstune" / "captures", tmp_path / "sasstune"
    (key,) = os.listdir(root)
    assert state["message"].startswith("cache miss %s" % key[:12]), state["message"]
    facts = _settings.gpu_facts()
    plain = _capture_mode.cache_key(stock, "add_kernel", state, None, _capture_mode.options_json(
        _settings.current(), 0, facts))  # no PTX: the stock path's key
    off = _capture_mode.cache_key(stock, "add_kernel", state, ptx, json.dumps(dict(variants="off", **facts)))
    assert plain == off != key
    meta = json.loads((root / key / "capture.json").read_text())
    assert meta["variants"] == "on" and meta["key"] == key
    log = tmp_path / "batch.log"
    env = dict(os.environ, SASSTUNE_LIBCUDA="/nonexistent/libcuda.so.1", SASSTUNE_LOG=str(log))
    env.pop("SASSTUNE_VARIANTS")  # the capture's recorded setting is used, not the batch's environment
    p = subprocess.run([cli(), "tune", "--captures", str(root), "--budget", "1s", "--cache-dir", str(cache)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "note: recorded key" not in p.stdout and "cache miss %s" % key[:12] in p.stdout, p.stdout
    assert "add_kernel: variants: " in log.read_text()  # the stage ran (and found no driver, or no GPU)


def test_capture_limit_stops_capturing_and_says_so_once(tmp_path):
    log = tmp_path / "log"
    sasstune.enable(mode="capture", capture_limit="14000", log=str(log))  # 12288 bytes of arguments + cubin
    capture_add()
    capture_add(2000)  # another specialisation would be another kernel; the same one is over too
    ev = [e for e in sasstune.stats()["events"] if e["event"] == "capture"]
    assert [e["status"] for e in ev] == ["limit", "limit"]
    assert log.read_text().count("over SASSTUNE_CAPTURE_LIMIT (14000): no more kernels") == 1
    assert not [n for n in os.listdir(tmp_path / "sasstune" / "captures") if not n.startswith(".")]


def test_batch_tunes_into_the_key_a_later_run_looks_up(tmp_path):
    sasstune.enable(mode="capture")
    ck, _ = capture_add()
    stock, ptxas = ck.kernel, ck.metadata.sasstune["ptxas_version"]
    root, cache = tmp_path / "sasstune" / "captures", tmp_path / "sasstune"
    (key,) = os.listdir(root)
    # no GPU: the pass says so; the capture is read and keyed
    rc, out, err = batch(root, cache_dir=cache)
    assert rc == 0, err
    assert "[1/1] add_kernel %s: unchanged" % key[:12] in out and "tuning needs a GPU" in out, out
    assert "cache miss %s" % key[:12] in out  # the pass's own key is the capture's
    assert "1 captures: 0 tuned, 0 cached, 1 unchanged, 0 errors or unreadable, 0 skipped" in out
    # a result in the schedule cache under the key the adapter asks for: the batch finds it
    tuned = stock + b"TUNED"
    store_entry(cache, stock, tuned, "add_kernel", ptxas)
    rc, out, _ = batch(root, cache_dir=cache)
    assert rc == 0 and "add_kernel %s: cached" % key[:12] in out and "1 cached" in out, out
    # and the next run of the program, in mode tune, gets it without tuning
    sasstune.enable(mode="tune")
    again = compile_add()
    assert again.metadata.sasstune["pending"] is True  # the entry the capture run left
    _triton.consider(again)
    assert again.kernel == tuned and type(again) is CompiledKernel


def test_batch_budget_and_bad_captures(tmp_path):
    root = tmp_path / "caps"
    (root / "broken").mkdir(parents=True)
    (root / "broken" / "capture.json").write_text('{"v": 2, "kernel": "k"}')
    (root / ".tmp-half").mkdir()  # a capture being written: ignored
    rc, out, _ = batch(root, "--total-budget", "0", cache_dir=tmp_path / "c")
    assert rc == 1 and "[1/1] broken: unreadable: capture.json: \"v\" is not 1" in out, out
    assert "1 captures: 0 tuned, 0 cached, 0 unchanged, 1 errors or unreadable" in out
    p = subprocess.run([cli(), "tune", "--captures", str(root), "--budget", "soon"], capture_output=True, text=True)
    assert p.returncode == 2 and "--budget" in p.stderr


def test_batch_waits_for_the_gpu_lock(tmp_path):
    """The batch takes the adapter's GPU lock (capture.json's gpu_uuid) around each kernel: with a
    program tuning on that GPU it says it waits, and goes on when the lock is free."""
    from test_gpulock import holder
    from sasstune import _gpulock
    sasstune.enable(mode="capture")
    capture_add()
    root, cache = tmp_path / "sasstune" / "captures", tmp_path / "sasstune"
    (key,) = os.listdir(root)
    meta = json.loads((root / key / "capture.json").read_text())
    assert meta["gpu_uuid"] == _gpulock.gpu_uuid(0)
    h = holder(_gpulock.lock_path(_settings.current(), 0))
    env = dict(os.environ, SASSTUNE_LIBCUDA="/nonexistent/libcuda.so.1", SASSTUNE_CACHE_DIR=str(cache))
    p = subprocess.Popen([cli(), "tune", "--captures", str(root), "--budget", "1s"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        assert first.startswith("[1/1] add_kernel: waiting for GPU %s" % meta["gpu_uuid"]), first
        assert p.poll() is None  # still waiting while the holder lives
    finally:
        h.stdin.close()
        h.wait(timeout=60)
    out, _ = p.communicate(timeout=300)
    assert p.returncode == 0 and "[1/1] add_kernel %s: unchanged" % key[:12] in out, out
