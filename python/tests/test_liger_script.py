"""CPU checks of test/gpu/liger_client.py (the Liger real-client GPU test): it imports without torch,
its five processes see the caches they should, and its report passes on what a good run gives and
fails on a bit difference, a kernel tuned again in the second run, or a missing hit; --evaluate
writes the report from saved runs."""
import copy
import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def lc():
    spec = importlib.util.spec_from_file_location("liger_client", os.path.join(ROOT, "test", "gpu", "liger_client.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def good_runs(lc):
    outs = {"rms_y": "a", "rms_dx": "b", "ln_dw": "c"}
    runs = {}
    for role in lc.ROLES:
        runs[role] = {"role": role, "rc": 0, "outputs": dict(outs), "outputs_again": dict(outs), "first_pass_s": 10.0,
                      "wall_s": 20.0, "steady_ms": [5.0, 5.1, 4.9], "kernels": [["k1", "s1"], ["k2", "s2"]],
                      "stats": {"events": []} if role in ("first", "second", "third") else None}
    runs["stock"]["outputs_again"]["ln_dw"] = "other"  # not deterministic in stock: not compared
    runs["first"]["outputs"]["ln_dw"] = "whatever"
    runs["first"]["first_pass_s"] = 150.0
    runs["first"]["stats"]["events"] = [
        {"event": "launch-tune", "kernel": "k1", "status": "tuned", "run_s": 11.0, "message": "tuned: 1.01x"},
        {"event": "launch-tune", "kernel": "k2", "status": "unchanged", "run_s": 11.0, "message": "tuned 300 steps"}]
    runs["second"]["first_pass_s"] = 10.5
    runs["second"]["stats"]["events"] = [
        {"event": "compile", "kernel": "k1", "status": "cached", "hook_ms": 0.6, "plugin_ms": 0.3},
        {"event": "compile", "kernel": "k2", "status": "unchanged", "hook_ms": 0.5, "plugin_ms": 0.2}]
    return runs


def results(checks):
    return {c["check"]: c["result"] for c in checks}


def test_plan_caches(lc):
    p = dict(lc.plan("/w", "10s"))
    assert list(dict(lc.plan("/w", "10s"))) == list(lc.ROLES)
    assert "SASSTUNE" not in p["stock"] and p["stock"]["TRITON_CACHE_DIR"] == p["stock-warm"]["TRITON_CACHE_DIR"]
    assert p["first"]["SASSTUNE_BUDGET"] == "10s"
    tc = [p[r]["TRITON_CACHE_DIR"] for r in ("stock", "first", "second")]
    assert len(set(tc)) == 3 and p["third"]["TRITON_CACHE_DIR"] == p["second"]["TRITON_CACHE_DIR"]
    assert len({p[r]["SASSTUNE_CACHE_DIR"] for r in ("first", "second", "third")}) == 1


def test_good_run_passes(lc):
    checks, s = lc.evaluate(good_runs(lc))
    r = results(checks)
    assert "fail" not in r.values(), checks
    assert r["first outputs equal stock bit for bit"] == "pass"
    assert "not compared: ln_dw" in [c for c in checks if c["check"].startswith("first outputs")][0]["detail"]
    assert s["second_vs_stock"] == pytest.approx(1.05) and s["second_within_target"]
    assert s["hit_cost_ms"] == [{"kernel": "k1", "hook_ms": 0.6, "plugin_ms": 0.3}]
    md = lc.markdown({"summary": s, "checks": checks, "date": "d", "budget": "10s"})
    assert "**1.050x** (target <= 1.10: met)" in md and "median 0.60 ms" in md


@pytest.mark.parametrize("breakage,check", [
    (lambda r: r["third"]["outputs"].update(rms_dx="x"), "third outputs equal stock bit for bit"),
    (lambda r: r["second"]["stats"]["events"].append({"event": "launch-tune", "kernel": "k2", "status": "unchanged"}),
     "second: nothing tuned or captured"),
    (lambda r: r["second"]["stats"]["events"].pop(0), "second: every kernel tuned in first is a compile-time hit"),
    (lambda r: r["third"]["stats"]["events"].append({"event": "compile", "kernel": "k1"}),
     "third: no compile and no plugin call (both caches warm)"),
    (lambda r: r["first"].update(rc=1), "first ran"),
])
def test_breakage_fails(lc, breakage, check):
    runs = copy.deepcopy(good_runs(lc))
    breakage(runs)
    assert results(lc.evaluate(runs)[0])[check] == "fail"


def test_evaluate_from_saved_runs(lc, tmp_path):
    saved = tmp_path / "runs.json"
    saved.write_text(json.dumps({"runs": good_runs(lc)}))
    out = tmp_path / "liger.json"
    assert lc.main([str(out), "--evaluate", str(saved)]) == 0
    assert "Liger Kernel under sasstune" in (tmp_path / "liger.md").read_text()
    assert json.loads(out.read_text())["summary"]["second_within_target"] is True
