"""One tuning at a time per GPU: processes contending on <cache>/locks/gpu-<uuid>.lock, skip and
wait, kill -9 leaving the lock free, and the first launch running stock (kernel still armed)
while another process tunes on the same GPU."""
import os
import signal
import subprocess
import sys
import threading

import pytest
from conftest import compile_add
from test_launch import FakeBuf, _tuning_plugin, launch, loaded
from triton.compiler.compiler import CompiledKernel

import sasstune
from sasstune import _gpulock, _lib, _settings, _triton

pytestmark = pytest.mark.usefixtures("fake_device")
PY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A process that takes the lock (waiting for it), says so, and holds it until its stdin closes;
# with a log path, a fake tuning: it appends "start" and "end" lines around a short sleep instead.
HOLDER = """
import os, sys, time
sys.path.insert(0, %r)
from sasstune import _gpulock
path, log = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
with _gpulock.acquire_path(path, wait=True):
    if log:
        for what in ("start", "end"):
            with open(log, "a") as f:
                f.write("%%s %%d\\n" %% (what, os.getpid()))
            time.sleep(0.05)
    else:
        print("held", flush=True)
        sys.stdin.read()
""" % PY


def holder(path, log=None):
    args = [sys.executable, "-c", HOLDER, path] + ([log] if log else [])
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if not log:
        assert p.stdout.readline().strip() == "held"
    return p


def lock_file():
    return _gpulock.lock_path(_settings.current(), 0)


def test_lock_path_is_per_gpu_uuid_under_the_cache(tmp_path):
    assert _gpulock.normalize("GPU-B3C6E1E4-0A1B-2C3D-4E5F-60718293A4B5") == "b3c6e1e4-0a1b-2c3d-4e5f-60718293a4b5"
    assert _gpulock.normalize("../x") is None
    _gpulock._uuids[7] = "b3c6e1e4-0a1b-2c3d-4e5f-60718293a4b5"
    try:
        assert _gpulock.lock_path(_settings.current(), 7) == str(
            tmp_path / "sasstune" / "locks" / "gpu-b3c6e1e4-0a1b-2c3d-4e5f-60718293a4b5.lock")
    finally:
        del _gpulock._uuids[7]


def test_fake_tunings_of_several_processes_never_overlap(tmp_path):
    log = str(tmp_path / "log")
    procs = [holder(lock_file(), log) for _ in range(4)]
    for p in procs:
        assert p.wait(timeout=60) == 0
    lines = open(log).read().split()
    pairs = [(lines[i], lines[i + 1], lines[i + 2], lines[i + 3]) for i in range(0, len(lines), 4)]
    assert len(pairs) == 4
    for start, pid, end, pid2 in pairs:  # every start is followed by the same process's end
        assert (start, end) == ("start", "end") and pid == pid2


def test_kill_9_leaves_the_lock_free():
    p = holder(lock_file())
    assert _gpulock.acquire_path(lock_file(), wait=False) is None  # held elsewhere
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=60)
    held = _gpulock.acquire_path(lock_file(), wait=False)
    assert held is not None
    held.release()


def test_busy_gpu_runs_stock_and_tries_again_later():
    fake = _tuning_plugin()
    sasstune.enable()
    _lib.set_plugin(fake)
    ck = compile_add()
    _triton.consider(ck)
    run = loaded(ck)
    bufs = [FakeBuf(b"\1" * 4096), FakeBuf(b"\2" * 4096), FakeBuf(b"\0" * 4096)]
    p = holder(lock_file())
    try:
        launch(ck, (4, 1, 1), *bufs, 1000, 1024)
        assert not [c for c in fake.calls if c["launch_json"]]  # not tuned
        assert run.calls[-1][3] == 111 and type(ck) is not CompiledKernel  # stock ran, still armed
        assert sasstune.stats()["counts"].get("gpu-busy") == 1
    finally:
        p.stdin.close()
        p.wait(timeout=60)
    launch(ck, (4, 1, 1), *bufs, 1000, 1024)  # the GPU is free now: tuned
    assert len([c for c in fake.calls if c["launch_json"]]) == 1
    assert run.calls[-1][3] == 222 and type(ck) is CompiledKernel
    # and the lock was released after tuning
    held = _gpulock.acquire_path(lock_file(), wait=False)
    assert held is not None
    held.release()


def test_wait_blocks_until_the_other_tuning_ends():
    fake = _tuning_plugin()
    sasstune.enable(gpu_lock="wait")
    _lib.set_plugin(fake)
    ck = compile_add()
    _triton.consider(ck)
    loaded(ck)
    p = holder(lock_file())
    t = threading.Thread(target=launch, args=(ck, (4, 1, 1), FakeBuf(b"\1" * 64), FakeBuf(b"\2" * 64),
                                                FakeBuf(b"\0" * 64), 16, 1024))
    t.start()
    t.join(0.5)
    blocked = t.is_alive() and not [c for c in fake.calls if c["launch_json"]]
    p.stdin.close()
    p.wait(timeout=60)
    t.join(60)
    assert blocked  # it waited for the holder
    assert len([c for c in fake.calls if c["launch_json"]]) == 1 and type(ck) is CompiledKernel


def test_bad_setting():
    with pytest.raises(ValueError, match="SASSTUNE_GPU_LOCK"):
        sasstune.enable(gpu_lock="maybe")
