# CPU checks of the benchmark suite (no GPU, no torch): every bench kernel compiles for
# GPUTarget("cuda", 90, 32) and gets a launch spec matching its PTX entry (and accepted by the
# runtime's own parser when a sasstune build is around); the spec builder on mocked launches;
# bench/run.py end to end with stand-ins for the stock step and for sasstune; bench/report.py on
# the results (table, targets, chart).      python3 -m pytest bench/test_bench_compile.py -q
import json
import os
import struct
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels as K  # noqa: E402
import report  # noqa: E402
import run as R  # noqa: E402
import spec as S  # noqa: E402


def md(**kw):
    base = dict(name="k", num_warps=4, shared=0, num_ctas=1, global_scratch_size=0, profile_scratch_size=0,
                launch_cooperative_grid=False, launch_pdl=False, tensordesc_meta=None)
    base.update(kw)
    return SimpleNamespace(**base)


# ---------------------------------------------------------------------------------------------
# every kernel compiles for sm_90, and its spec matches the PTX
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [c.name for c in K.CASES])
def test_case_compiles_for_sm90(name, tmp_path):
    case = K.BY_NAME[name]
    ck, sp, why = S.case_spec(case, S.FakeFactory())
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert ".entry %s(" % ck.metadata.name in ck.asm["ptx"]
    assert ".target sm_90" in ck.asm["ptx"]
    assert why is None, why
    assert S.check_against_ptx(sp, ck.asm["ptx"]) == []
    assert sp["kernel"] == ck.metadata.name
    assert sp["block"][0] == 32 * ck.metadata.num_warps
    assert sp["shared_bytes"] == ck.metadata.shared
    # what the build function passes is what the spec sizes
    L = case.build(S.FakeFactory())
    bufs = [p for p in sp["params"] if p["kind"] == "ptr" and p.get("dtype")]
    tensors = [a for a in L.args if isinstance(a, S.FakeTensor)]
    assert [p["bytes"] for p in bufs] == [t.numel() * t.element_size() for t in tensors]
    # host TMA descriptors: the tensors behind them are the spec's hidden buffers, in order
    from triton.tools.tensor_descriptor import TensorDescriptor
    descs = [a for a in L.args if isinstance(a, TensorDescriptor)]
    assert [b["bytes"] for b in sp.get("buffers", [])] == [d.base.numel() * d.base.element_size() for d in descs]
    tmaps = [p for p in sp["params"] if p["kind"] == "tensormap"]
    assert [p["buffer"] for p in tmaps] == list(range(len(descs)))
    assert [p["box"] for p in tmaps] == [m["block_size"] for m in (ck.metadata.tensordesc_meta or [])]
    if case.name == "mm_tma_host":   # the one case with host descriptors: it has a spec now
        assert len(descs) == 3 and all(p["swizzle"] == "128B" and p["dtype"] == "fp16" for p in tmaps)
    assert sp["params"][-2]["name"] == "global_scratch" and sp["params"][-1]["name"] == "profile_scratch"
    exe = R.find_sasstune()
    assert exe, "no sasstune build ($SASSTUNE_BIN; scripts/test.sh builds build/py and sets it)"
    # the runtime's parser takes it: without a driver it stops after parsing, at the driver
    (tmp_path / "k.cubin").write_bytes(ck.asm["cubin"])
    (tmp_path / "launch.json").write_text(json.dumps(sp))
    r = subprocess.run([exe, "run", str(tmp_path / "k.cubin"), "--launch", str(tmp_path / "launch.json")],
                       capture_output=True, text=True)
    assert r.returncode == 0 or "driver" in r.stderr, r.stderr
    # family 3 has no candidate on any bench kernel, neither form 1 nor form 2 (even with every
    # register a thread may have), so tune's pipe alternatives are never built on them: the bench
    # with and without the `pipe` family is the same run (docs/tune.md "The pipe alternatives",
    # docs/benchmarks.md "Session 9")
    for form in ([], ["--form", "2", "--regs", "255"]):
        r = subprocess.run([exe, "pipe", str(tmp_path / "k.cubin"), "--kernel", ck.metadata.name, "--json"] + form,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == [], (form, r.stdout)


def test_quick_set_and_selection():
    assert 3 <= len(K.QUICK) <= 4
    assert [c.name for c in K.select("softmax,add")] == ["softmax", "add"]
    assert len(K.select(quick=True)) == len(K.QUICK)
    assert len(K.select()) == len(K.CASES)
    with pytest.raises(SystemExit):
        K.select("nope")
    for c in K.CASES:
        assert (c.flops > 0) != (c.bytes > 0), c.name
        assert c.family == "memory" or c.baseline is not None, c.name


def test_required_kernels_are_present():
    shapes = {(c.name, c.shape) for c in K.CASES}
    assert ("mm_leaky_512", "512x512x2048") in shapes
    assert {"mm_4096", "mm_8192", "mm_fp8", "mm_tma_device", "mm_tma_host", "bmm", "swiglu", "softmax", "rmsnorm",
            "layernorm", "attention", "add"} <= set(K.BY_NAME)


# ---------------------------------------------------------------------------------------------
# the spec builder on mocked launches
# ---------------------------------------------------------------------------------------------

def test_spec_params_and_scalars():
    sig = {"x": "*fp16", "y": "*fp32", "n": "i32", "big": "i64", "one": "constexpr", "eps": "fp32", "h": "fp16",
           "q": "*fp8e4nv", "nul": "*fp32", "B": "constexpr"}
    vals = {"x": S.FakeTensor((4, 8), "float16"), "y": S.FakeTensor((16,), "float32"), "n": 4096,
            "big": (1 << 60) + 3, "one": 1, "eps": 1e-5, "h": 0.1, "q": S.FakeTensor((32,), "float8_e4m3fn"),
            "nul": None, "B": 64}
    sp = S.launch_spec(sig, vals, md(name="kern", num_warps=8, shared=1024), (3, 2), {"y": "zeros"})
    assert sp["kernel"] == "kern" and sp["grid"] == [3, 2, 1] and sp["block"] == [256, 1, 1]
    assert sp["shared_bytes"] == 1024
    p = {q["name"]: q for q in sp["params"]}
    assert [q["name"] for q in sp["params"]] == ["x", "y", "n", "big", "eps", "h", "q", "nul", "global_scratch",
                                                 "profile_scratch"]
    assert p["x"] == {"kind": "ptr", "dtype": "fp16", "bytes": 64, "init": "randn", "name": "x"}
    assert p["y"]["init"] == "zeros" and p["y"]["bytes"] == 64
    assert p["n"] == {"kind": "i32", "value": 4096, "name": "n"}
    assert p["big"]["value"] == str((1 << 60) + 3)
    # fp32 scalars as the launcher packs them: rounded to float, exactly
    assert float.fromhex(p["eps"]["value"]) == struct.unpack("<f", struct.pack("<f", 1e-5))[0]
    assert p["h"] == {"kind": "bytes", "hex": struct.pack("<e", 0.1).hex(), "name": "h"}
    assert p["q"]["dtype"] == "u8" and p["q"]["init"]["high"] <= 0x40   # no e4m3 NaN bytes
    assert p["nul"] == {"kind": "ptr", "bytes": 0, "name": "nul"}
    assert p["global_scratch"]["bytes"] == 0


def test_spec_scratch_sized_from_grid():
    sp = S.launch_spec({"a": "*fp16"}, {"a": S.FakeTensor((8,), "float16")}, md(global_scratch_size=384), (4, 2, 3))
    g = sp["params"][1]
    assert g["name"] == "global_scratch" and g["bytes"] == 384 * 24 and g["verify"] is False


@pytest.mark.parametrize("kw,word", [(dict(num_ctas=2), "clusters"), (dict(launch_pdl=True), "programmatic"),
                                     (dict(launch_cooperative_grid=True), "cooperative"),
                                     (dict(tensordesc_meta=[{}]), "tensordesc_meta has 1 more entries")])
def test_spec_unsupported(kw, word):
    with pytest.raises(S.Unsupported, match=word):
        S.launch_spec({"a": "*fp16"}, {"a": S.FakeTensor((8,), "float16")}, md(**kw), (1,))


def _tma_meta(**kw):
    m = {"swizzle": 2, "elem_size": 2, "elem_type": 6, "block_size": [64, 32], "fp4_padded": False}
    m.update(kw)
    return m


def test_spec_host_tma_descriptor():
    # as Triton 3.6's launcher: CUtensorMap (dtype, box, swizzle from tensordesc_meta; elementStrides 1,
    # no interleave, L2 128B, NaN fill for padding="nan") over a hidden buffer, then shape i32, strides i64
    from triton.tools.tensor_descriptor import TensorDescriptor
    t = S.FakeTensor((256, 128), "float16")
    d = TensorDescriptor(t, [256, 128], [128, 1], [64, 64], padding="nan")
    sig = {"x": "*fp32", "a_desc": "tensordesc<fp16[64, 64]>", "n": "i32", "B": "constexpr"}
    vals = {"x": S.FakeTensor((16,), "float32"), "a_desc": d, "n": 7, "B": 64}
    sp = S.launch_spec(sig, vals, md(tensordesc_meta=[_tma_meta()]), (2,), {"a_desc": "zeros"})
    assert list(sp) == ["kernel", "grid", "block", "shared_bytes", "buffers", "params"]
    assert sp["buffers"] == [{"dtype": "fp16", "bytes": 256 * 128 * 2, "init": "zeros", "name": "a_desc.base",
                              "note": "the tensor behind host TMA descriptor a_desc (not a kernel parameter)"}]
    assert [p["name"] for p in sp["params"]] == ["x", "a_desc", "a_desc.shape[0]", "a_desc.shape[1]",
                                                 "a_desc.strides[0]", "a_desc.strides[1]", "n", "global_scratch",
                                                 "profile_scratch"]
    assert sp["params"][1] == {"kind": "tensormap", "buffer": 0, "dtype": "fp16", "shape": [256, 128],
                               "strides": [128, 1], "box": [64, 32], "element_strides": [1, 1], "swizzle": "64B",
                               "interleave": "none", "l2_promotion": "128B", "oob_fill": "nan", "name": "a_desc"}
    assert sp["params"][2] == {"kind": "i32", "value": 256, "name": "a_desc.shape[0]"}
    assert sp["params"][5] == {"kind": "i64", "value": 1, "name": "a_desc.strides[1]"}
    # the byte sizes the kernel's PTX entry has for them
    assert [S.param_bytes(p) for p in sp["params"][1:6]] == [128, 4, 4, 8, 8]
    # a strided view: the buffer holds everything the descriptor reaches
    v = TensorDescriptor(S.FakeTensor((64, 32), "bfloat16", (64, 1)), [64, 32], [64, 1], [16, 32])
    sp = S.launch_spec({"d": "tensordesc<bf16[16, 32]>"}, {"d": v},
                       md(tensordesc_meta=[_tma_meta(elem_type=10, block_size=[16, 32], swizzle=0)]), (1,))
    assert sp["params"][0]["dtype"] == "bf16" and sp["params"][0]["swizzle"] == "none"
    assert sp["params"][0]["oob_fill"] == "none"
    assert sp["buffers"][0]["bytes"] == (63 * 64 + 31 + 1) * 2 and sp["buffers"][0]["dtype"] == "bf16"
    # two descriptors: one buffer each
    sp = S.launch_spec({"p": "tensordesc<fp16[64, 64]>", "q": "tensordesc<fp16[64, 64]>"}, {"p": d, "q": d},
                       md(tensordesc_meta=[_tma_meta(), _tma_meta()]), (1,))
    assert [p["buffer"] for p in sp["params"] if p["kind"] == "tensormap"] == [0, 1] and len(sp["buffers"]) == 2


def test_tma_dtype_table_is_tritons():
    from triton.backends.nvidia import driver
    assert S.TMA_DTYPE_DEVICE_TO_HOST == driver.TMA_DTYPE_DEVICE_TO_HOST


@pytest.mark.parametrize("meta,word", [(None, "lowered without TMA"),
                                       (_tma_meta(elem_type=8, elem_size=4), "CUtensorMapDataType 10"),
                                       (_tma_meta(swizzle=4), "swizzle mode 4")])
def test_spec_host_tma_unsupported(meta, word):
    from triton.tools.tensor_descriptor import TensorDescriptor
    d = TensorDescriptor(S.FakeTensor((64, 64), "float16"), [64, 64], [64, 1], [64, 64])
    with pytest.raises(S.Unsupported, match=word):
        S.launch_spec({"d": "tensordesc<fp16[64, 64]>"}, {"d": d}, md(tensordesc_meta=[meta]), (1,))


def test_ptx_params():
    ptx = textwrap.dedent("""\
        .visible .entry k(
        	.param .u64 .ptr .global .align 1 k_param_0,
        	.param .align 64 .b8 k_param_1[128],
        	.param .f32 k_param_2,
        	.param .u32 k_param_3,
        	.param .u64 k_param_4
        )""")
    assert S.ptx_params(ptx) == [("u64", 8), ("b8", 128), ("f32", 4), ("u32", 4), ("u64", 8)]
    sp = {"params": [{"kind": "ptr"}, {"kind": "bytes", "hex": "00" * 128}, {"kind": "fp32"}, {"kind": "i32"},
                     {"kind": "i32", "name": "bad"}]}
    probs = S.check_against_ptx(sp, ptx)
    assert len(probs) == 1 and "bad" in probs[0]


def test_parse_seconds():
    assert R.parse_seconds("60s") == 60 and R.parse_seconds("5m") == 300 and R.parse_seconds("90") == 90
    with pytest.raises(ValueError):
        R.parse_seconds("soon")


# ---------------------------------------------------------------------------------------------
# run.py end to end with stand-ins, then report.py
# ---------------------------------------------------------------------------------------------

FAKE_STOCK = r'''
import argparse, json, os, sys
sys.path.insert(0, %(here)r)
import kernels as K, spec as S
ap = argparse.ArgumentParser()
ap.add_argument("--case"); ap.add_argument("--dir"); ap.add_argument("--pairs"); ap.add_argument("--compile-only", action="store_true")
a = ap.parse_args()
c = K.BY_NAME[a.case]
if c.name == "bmm":
    sys.exit("boom")   # a stock step that dies without writing stock.json
out = {"case": c.name, "shape": c.shape, "family": c.family, "device": "NVIDIA H200", "kernel": "kern",
       "versions": {"torch": "2.11", "triton": "3.6.0"}, "check": {"ok": True, "relerr": 1e-4}}
ms = 0.5
base_speed = {"matmul": 1.8, "attention": 1.2, "memory": 1.1}[c.family]
out["baseline"] = {"label": c.baseline_label or "device copy of the same bytes (torch copy_)", "triton_ms": ms,
                   "base_ms": ms / base_speed, "base_speed": base_speed, "base_speed_lo": base_speed * 0.99,
                   "base_speed_hi": base_speed * 1.01, "pairs": 100, "reps": 4, "graphs": True}
if c.name == "mm_fp8":   # a stand-in for a launch the spec cannot express
    out["spec"] = {"ok": False, "reason": "num_ctas=2: thread-block clusters are not in the launch spec yet"}
else:
    open(os.path.join(a.dir, "stock.cubin"), "wb").write(b"\x7fELF stock " + c.name.encode())
    json.dump({"kernel": "kern"}, open(os.path.join(a.dir, "launch.json"), "w"))
    out["spec"] = {"ok": True, "path": "launch.json"}
json.dump(out, open(os.path.join(a.dir, "stock.json"), "w"))
'''

FAKE_SASSTUNE = r'''#!%(python)s
import json, os, sys
a = sys.argv[1:]
speed = {"mm_leaky_512": 1.08, "softmax": 1.0, "layernorm": 0.97, "attention": 1.03, "add": 1.0}
def case_of(path):
    return os.path.basename(os.path.dirname(os.path.abspath(path)))
if a[0] == "tune" and "--help" in a:
    if os.environ.get("FAKE_NO_TUNE"):
        print("sasstune tune: not implemented yet", file=sys.stderr); sys.exit(1)
    print("usage: sasstune tune CUBIN [--reward gpu|model] ..."); sys.exit(0)
if a[0] == "inspect":
    c = case_of(a[1])
    print(json.dumps({"kernels": [{"name": "kern", "rewritable": c != "rmsnorm",
                                   "not_rewritable_because": a[1] + ": opcode 0x948 is not understood"}]})); sys.exit(0)
if a[0] == "tune":
    c, out = case_of(a[1]), a[a.index("-o") + 1]
    if c == "swiglu":
        print("sasstune tune: the worker crashed twice in a row", file=sys.stderr); sys.exit(1)
    s = speed.get(c, 1.0)
    data = open(a[1], "rb").read()
    open(out, "wb").write(data + (b" tuned" if s != 1.0 else b""))
    print(json.dumps({"kernel": "kern", "method": "ppo", "reward": "gpu", "confirmed": s > 1, "improved": s != 1.0,
                      "ratio": s, "ratio_lo": s - 0.01, "ratio_hi": s + 0.01, "steps": 1200, "seconds": 41.0,
                      "steps_per_s": 29.3, "device": "NVIDIA H200", "message": "ok"})); sys.exit(0)
if a[0] == "variants":
    c, out = case_of(a[1]), a[a.index("-o") + 1]
    stock = open(a[a.index("--cubin") + 1], "rb").read()
    won = c == "attention"
    open(out, "wb").write(stock + (b" v13.5" if won else b""))
    rows = [{"label": "stock", "compiled": True, "verified": 1, "speedup": 1.0},
            {"label": "13.5.37", "compiled": True, "verified": 1, "speedup": 1.05 if won else 0.99,
             "confirmed": won, "compile_s": 1.5},
            {"label": "13.5.37 --register-usage-level 0", "compiled": False, "verified": -1,
             "reason": "ptxas: error"}]
    print(json.dumps({"schema": "sasstune-variants-1", "best": 1 if won else 0, "variants": rows})); sys.exit(0)
if a[0] == "compare":
    c = case_of(a[1])
    same = open(a[1], "rb").read() == open(a[2], "rb").read()
    s = 1.0 if same else speed.get(c, 1.0)
    if not same and "variant" in os.path.basename(a[2]):
        s = 1.06 if "tuned" in os.path.basename(a[2]) else 1.05
    r = 1.0 / s
    print(json.dumps({"device": "NVIDIA H200", "ratio": r, "ci_lo": r - 0.004, "ci_hi": r + 0.004, "pairs": 400,
                      "reps": 4, "a_ms": 0.5, "b_ms": 0.5 * r, "verified": True, "deterministic": True})); sys.exit(0)
sys.exit(2)
'''


@pytest.fixture
def fake_run(tmp_path):
    stock = tmp_path / "fake_stock.py"
    stock.write_text(FAKE_STOCK % {"here": HERE})
    exe = tmp_path / "sasstune"
    exe.write_text(FAKE_SASSTUNE % {"python": sys.executable})
    exe.chmod(0o755)
    out = tmp_path / "out"
    R.main(["--out", str(out), "--kernels", "mm_leaky_512,softmax,layernorm,attention,rmsnorm,bmm,mm_fp8,add,swiglu",
            "--budget", "45s", "--sasstune", str(exe), "--stock-script", str(stock)])
    return out


def test_run_pipeline(fake_run):
    j = json.load(open(fake_run / "results.json"))
    assert j["run"]["schema"] == R.SCHEMA and j["run"]["tune_available"] is True
    by = {r["case"]: r for r in j["results"]}
    assert by["mm_leaky_512"]["status"] == "tuned"
    assert by["mm_leaky_512"]["speedup"] == pytest.approx(1.08)
    lo, hi = by["mm_leaky_512"]["speedup_lo"], by["mm_leaky_512"]["speedup_hi"]
    assert lo < 1.08 < hi
    assert by["mm_leaky_512"]["tune"]["steps_per_s"] == pytest.approx(29.3)
    assert by["mm_leaky_512"]["tune"]["method"] == "ppo" and by["mm_leaky_512"]["tune"]["confirmed"]
    assert by["softmax"]["status"] == "unchanged" and by["softmax"]["compare"]["what"] == "a/a"
    assert by["layernorm"]["status"] == "tuned" and by["layernorm"]["speedup"] < 1
    assert by["rmsnorm"]["status"] == "not-rewritable" and "0x948" in by["rmsnorm"]["reason"]
    assert by["bmm"]["status"] == "stock-failed" and "boom" in by["bmm"]["reason"]
    assert by["mm_fp8"]["status"] == "not-launchable" and "clusters" in by["mm_fp8"]["reason"]
    assert by["swiglu"]["status"] == "tune-failed" and "crashed twice" in by["swiglu"]["reason"]
    assert by["swiglu"]["compare"]["what"] == "a/a"
    tune_cmd = json.load(open(fake_run / "mm_leaky_512" / "result.json"))["tune"]
    assert tune_cmd["budget_s"] == 45
    log = open(fake_run / "mm_leaky_512" / "tune.log").read()
    assert "--reward gpu --budget 45s" in log and "--json" in log
    assert "--pairs 400" in open(fake_run / "mm_leaky_512" / "compare.log").read()
    # the compile-variants columns: attention's 13.5 variant won and was tuned further; the others kept stock
    v = by["attention"]["variants"]
    assert v["best"] == "13.5.37" and v["variant"]["speedup"] == pytest.approx(1.05)
    assert v["variant_sass"]["status"] == "variant+sass" and v["variant_sass"]["speedup"] == pytest.approx(1.06)
    assert "--cubin" in open(fake_run / "attention" / "variants.log").read()
    v = by["mm_leaky_512"]["variants"]
    assert v["best"] == "stock" and v["variant"]["status"] == "stock kept"
    assert v["variant_sass"]["speedup"] == pytest.approx(1.08)   # no winner: the SASS search's own cubin
    assert "variants" not in by["rmsnorm"]


def test_time_box_shrinks_and_skips(tmp_path):
    stock = tmp_path / "fake_stock.py"
    stock.write_text(FAKE_STOCK % {"here": HERE})
    exe = tmp_path / "sasstune"
    exe.write_text(FAKE_SASSTUNE % {"python": sys.executable})
    exe.chmod(0o755)
    common = ["--budget", "60s", "--sasstune", str(exe), "--stock-script", str(stock)]
    # 150 s for two kernels: the first gets its share of what is left after both overheads
    R.main(["--out", str(tmp_path / "o"), "--kernels", "softmax,add", "--time-limit", "150s"] + common)
    by = {r["case"]: r for r in json.load(open(tmp_path / "o" / "results.json"))["results"]}
    assert by["softmax"]["tune"]["budget_s"] <= (150 - 2 * R.OVERHEAD_S) / 2 + 1e-6
    assert by["softmax"]["tune"]["budget_s"] > 30
    assert by["add"]["tune"]["budget_s"] == 60
    # too little time for the overhead: listed as skipped, not dropped
    R.main(["--out", str(tmp_path / "p"), "--kernels", "softmax,add", "--time-limit", "%ds" % (R.OVERHEAD_S + 5)] + common)
    rs = json.load(open(tmp_path / "p" / "results.json"))["results"]
    assert [r["status"] for r in rs] == ["skipped", "skipped"] and "time box" in rs[0]["reason"]
    # a budget below the minimum: stock measured, no tuning, no compare
    R.main(["--out", str(tmp_path / "q"), "--kernels", "softmax", "--time-limit", "%ds" % (R.OVERHEAD_S + 5)] + common)
    r = json.load(open(tmp_path / "q" / "results.json"))["results"][0]
    assert r["status"] == "skipped" and "stock" in r and "compare" not in r
    # a small budget asked for (below MIN_BUDGET_S) is tuned as asked, inside a time box that fits it
    small = ["--budget", "6s", "--sasstune", str(exe), "--stock-script", str(stock)]
    R.main(["--out", str(tmp_path / "s"), "--kernels", "softmax", "--time-limit", "%ds" % (R.OVERHEAD_S + 30)] + small)
    r = json.load(open(tmp_path / "s" / "results.json"))["results"][0]
    assert r["status"] != "skipped" and r["tune"]["budget_s"] == 6


def test_run_without_tune(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NO_TUNE", "1")
    stock = tmp_path / "fake_stock.py"
    stock.write_text(FAKE_STOCK % {"here": HERE})
    exe = tmp_path / "sasstune"
    exe.write_text(FAKE_SASSTUNE % {"python": sys.executable})
    exe.chmod(0o755)
    R.main(["--out", str(tmp_path / "o"), "--kernels", "mm_leaky_512", "--sasstune", str(exe),
            "--stock-script", str(stock)])
    j = json.load(open(tmp_path / "o" / "results.json"))
    assert j["run"]["tune_available"] is False and "not implemented" in j["run"]["tune_unavailable_because"]
    r = j["results"][0]
    assert r["status"] == "tune-unavailable" and r["compare"]["what"] == "a/a"   # the A/A band is still measured
    report.main([str(tmp_path / "o"), "--md", str(tmp_path / "b.md")])
    text = (tmp_path / "b.md").read_text()
    assert "**No tuning in this run**" in text and "– (tune-unavailable; A/A 1.0000" in text
    assert "No kernel was measured stock against tuned" in text


def test_report(fake_run, tmp_path):
    mdp, png = tmp_path / "docs" / "benchmarks.md", tmp_path / "docs" / "benchmarks.png"
    report.main([str(fake_run), "--md", str(mdp)])
    text = mdp.read_text()
    assert "### NVIDIA H200" in text
    assert "| mm_leaky_512 | 512x512x2048 |" in text and "**1.0800**" in text
    assert "1 (unchanged; A/A" in text
    assert "slower" in text and "layernorm" in text
    assert "Geometric mean speedup" in text and "**not met**" in text   # layernorm is slower
    assert "The tuner's confirmed ratio against the re-measure" in text and "mm_leaky_512 " in text
    assert "`rmsnorm` (not-rewritable)" in text and "`mm_fp8` (not-launchable)" in text
    assert "`bmm` (stock-failed)" in text
    assert "cuBLAS (torch.matmul, no activation)" in text and "| 56 % [55, 56] / 60 % |" in text
    assert "python3 bench/run.py" in text and "![speedups](benchmarks.png)" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| attention | 13.5.37 | **1.0500**" in text and "![compile variants](benchmarks-variants.png)" in text
    assert (tmp_path / "docs" / "benchmarks-variants.png").read_bytes()[:4] == b"\x89PNG"
    gv = (1.08 * 0.97 * 1.06) ** (1 / 5)   # variant + SASS: mm_leaky 1.08, softmax 1, layernorm 0.97, attention 1.06, add 1
    assert "best variant + SASS search (the default) %.4f (5 kernels)" % gv in text
    # geomean: 1.08, 1 (unchanged), 0.97, 1.03, 1 (add unchanged)
    g = (1.08 * 0.97 * 1.03) ** (1 / 5)
    assert "**%.4f**" % g in text


def test_report_none(tmp_path):
    mdp = tmp_path / "benchmarks.md"
    report.main(["--none", "--md", str(mdp)])
    text = mdp.read_text()
    assert "No results are recorded yet" in text and "bash bench/build.sh" in text
    assert not (tmp_path / "benchmarks.png").exists()


# ---------------------------------------------------------------------------------------------
# bench/timing.py's pairing logic, over a stand-in for torch.cuda with a simulated clock
# ---------------------------------------------------------------------------------------------

class _Clock:
    t = 0.0


class _Event:
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        self.at = _Clock.t

    def elapsed_time(self, end):
        return end.at - self.at


class _Graph:
    capturing = None

    def __init__(self):
        self.calls = []

    def replay(self):
        for f in self.calls:
            f()


class _Ctx:
    def __init__(self, enter=None, exit=None):
        self.enter, self.exit = enter, exit

    def __enter__(self):
        self.enter and self.enter()

    def __exit__(self, *a):
        self.exit and self.exit()


def _fake_torch(capture_ok=True):
    class Stream:
        def wait_stream(self, s):
            pass

    def graph(g):
        if not capture_ok:
            raise RuntimeError("capture not supported")
        return _Ctx(lambda: setattr(_Graph, "capturing", g), lambda: setattr(_Graph, "capturing", None))

    cuda = SimpleNamespace(Stream=Stream, current_stream=lambda: Stream(), stream=lambda s: _Ctx(),
                           synchronize=lambda: None, CUDAGraph=_Graph, graph=graph, Event=_Event)
    return SimpleNamespace(cuda=cuda)


def _kernel(ms):
    def run():
        if _Graph.capturing is not None:
            _Graph.capturing.calls.append(run)
        else:
            _Clock.t += ms
    return run


@pytest.mark.parametrize("graphs", [True, False])
def test_paired_timing(graphs):
    import timing
    t = timing.paired(_fake_torch(graphs), _kernel(0.010), _kernel(0.008), pairs=50, sample_us=100)
    assert t["graphs"] is graphs
    assert t["reps"] == 13                       # ceil(100 us / 8 us)
    assert t["ratio"] == pytest.approx(0.8) and t["ci_lo"] <= 0.8 + 1e-9 <= t["ci_hi"] + 2e-9
    assert t["a_ms"] == pytest.approx(0.010) and t["b_ms"] == pytest.approx(0.008)


def test_bootstrap_median():
    import timing
    xs = [1.0 + 0.001 * ((i * 37) % 21 - 10) for i in range(200)]
    m, lo, hi = timing.bootstrap_median(xs)
    assert m == pytest.approx(timing.median(xs)) and lo <= m <= hi and hi - lo < 0.005
    assert timing.bootstrap_median(xs) == (m, lo, hi)   # seeded
