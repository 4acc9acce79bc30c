"""CPU checks of test/gpu/triton_e2e.py (the GPU acceptance script): it imports without torch or a
GPU, its kernel list has the host-TMA matmul, and its checks pass on what a good run reports and
fail when the host-TMA kernel was not captured."""
import copy
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def e2e():
    spec = importlib.util.spec_from_file_location("triton_e2e", os.path.join(ROOT, "test", "gpu", "triton_e2e.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _kernel(cubin, file_cubin, digest, launch_events=(), compile_events=(), cache_path="/t/sasstune/x/k.cubin"):
    return {"kernel_cubin": cubin, "file_cubin": file_cubin, "digests": [digest] * 4, "disarmed": True,
            "launch_events": list(launch_events), "compile_events": list(compile_events), "cache_path": cache_path}


def good_run(e2e, tune):
    """What a passing run reports: every tuned kernel tuned, every seeded one a compile-time hit."""
    hooks_on = {"stages": "stages_hook", "post_compile": "post_compile_hook", "manager": "M"}
    hooks_off = {"stages": None, "post_compile": None, "manager": None}
    r = {role: {"role": role, "wall_s": 1.0, "kernels": {}, "stats": {"events": []}}
         for role in ("stock", "tune", "cached", "stock-again", "seed", "hit")}
    for role in ("stock", "stock-again"):
        r[role].update(enabled=False, hooks=hooks_off)
    for role in ("tune", "cached", "hit"):
        r[role].update(enabled=True, hooks=hooks_on)
    for name in e2e.ALL_KERNELS:
        d = "digest-" + name
        r["stock"]["kernels"][name] = _kernel("stock-" + name, "stock-" + name, d, cache_path="/t/k/k.cubin")
        r["seed"]["kernels"][name] = {"seeded": "seeded-" + name}
        hit = {"event": "compile", "status": "cached", "message": "hit", "plugin_ms": 0.5, "hook_ms": 0.7}
        r["hit"]["kernels"][name] = _kernel("seeded-" + name, "seeded-" + name, d, compile_events=[hit])
        r["hit"]["stats"]["events"].append(hit)
    for name in tune:
        d = "digest-" + name
        nbytes = 3 * 256 * 256 * 2 if name == "mm_tma_host" else 1 << 20
        ev = {"event": "launch-tune", "status": "tuned", "message": "tuned: 1.01x", "bytes": nbytes}
        r["tune"]["kernels"][name] = _kernel("tuned-" + name, "tuned-" + name, d, launch_events=[ev])
        r["cached"]["kernels"][name] = _kernel("tuned-" + name, "tuned-" + name, d)
        r["stock-again"]["kernels"][name] = _kernel("stock-" + name, "stock-" + name, d, cache_path="/t/k/k.cubin")
    return r


def test_the_script_has_the_host_tma_case(e2e):
    assert "mm_tma_host" in e2e.ALL_KERNELS
    assert e2e.TMA["BK"] * 2 == 128  # fp16: a 128-byte inner box, the 128B swizzle


def test_checks_pass_on_a_good_run(e2e):
    tune = ["add1024", "matmul", "mm_tma_host"]
    items = e2e.evaluate(good_run(e2e, tune), tune, e2e.ALL_KERNELS).items
    assert [i for i in items if i["result"] != "pass"] == []
    assert any(i["check"].startswith("mm_tma_host: first launch captured") for i in items)
    assert any(i["check"] == "mm_tma_host: tune process outputs equal stock bit for bit (every launch)" for i in items)


@pytest.mark.parametrize("event", [
    {"event": "launch-tune", "status": "unsupported", "message": "argument a_desc: TMA swizzle mode 4"},
    {"event": "launch-tune", "status": "unchanged", "message": "cache miss x; launch_json: params[0]...",
     "bytes": 393216},
    {"event": "launch-tune", "status": "error", "message": "tuning failed: ...", "bytes": 393216},
])
def test_host_tma_not_captured_fails(e2e, event):
    tune = ["mm_tma_host"]
    r = good_run(e2e, tune)
    r["tune"]["kernels"]["mm_tma_host"]["launch_events"] = [event]
    r["tune"]["kernels"]["mm_tma_host"]["kernel_cubin"] = "stock-mm_tma_host"
    r["tune"]["kernels"]["mm_tma_host"]["file_cubin"] = "stock-mm_tma_host"
    r["cached"]["kernels"]["mm_tma_host"] = copy.deepcopy(r["tune"]["kernels"]["mm_tma_host"])
    r["cached"]["kernels"]["mm_tma_host"]["launch_events"] = []
    items = e2e.evaluate(r, tune, e2e.ALL_KERNELS).items
    failed = [i["check"] for i in items if i["result"] == "fail"]
    assert failed == ["mm_tma_host: first launch captured (descriptors' tensors as hidden buffers, spec accepted)"]
