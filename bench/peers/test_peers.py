# CPU checks of the peer benchmark (bench/peers/; no GPU, no CompileIQ needed):
#   python3 -m pytest -q bench/peers/test_peers.py
# the ray stand-in, the ask/tell loop against a fake CompileIQ (deadline, invalid scores, the best),
# the code key of a cubin, CompileIQ's objective on sasstune's runtime with the mock CUDA driver
# and a fake ptxas (compile failures, wrong outputs, crashes, duplicates, timing), the report.
# With CompileIQ importable (or PEER_CIQ_SITE), PEER_SS and PEER_PTXAS13_3 set, the real CompileIQ
# runs too (compile-only, a few seconds).
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import ciq_offline as C  # noqa: E402
import compileiq_bench as B  # noqa: E402
import st_runtime  # noqa: E402


def test_ray_stub_satisfies_imports_and_refuses_use():
    code = textwrap.dedent("""
        import sys; sys.path.insert(0, %r)
        import ciq_offline as C
        stubbed = C.stub_ray()
        import ray
        from ray._common.ray_option_utils import task_options
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        f = ray.remote(len)
        assert f is len and task_options == {} and not ray.is_initialized()
        for call in (lambda: ray.get([]), lambda: ray.init(), lambda: NodeAffinitySchedulingStrategy(node_id=1)):
            try:
                call()
            except RuntimeError as e:
                assert "stub" in str(e)
            else:
                raise SystemExit("no error")
        print("ok", stubbed)
    """ % HERE)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    try:
        import ray  # noqa: F401
        assert r.stdout.split() == ["ok", "False"]   # a real ray is left alone
    except ImportError:
        assert r.stdout.split() == ["ok", "True"]


class FakeSearch:
    """CompileIQ's Search as far as the loop uses it: pools of candidates, tell() of any subset."""
    told = []

    def __init__(self, objective_function, search_space, search_config, worker_type, cache_folder,
                 disable_progress_bar, exit_on_failure):
        assert worker_type == "manual" and not exit_on_failure
        self.n, self.pool = 0, search_config["pool_size"]

    def ask(self):
        out = [SimpleNamespace(param_id="p%d" % (self.n + i), params="%02x" % ((self.n + i) % 256))
               for i in range(self.pool)]
        self.n += self.pool
        return out

    def tell(self, scores):
        FakeSearch.told.append([(s.param_id, s.score) for s in scores])


def fake_ciq():
    return SimpleNamespace(Search=FakeSearch, LocalSearchSpaceBin=lambda p: p, INVALID="*",
                           SearchConfiguration=lambda **k: k, WorkerTypes=SimpleNamespace(MANUAL="manual"),
                           Score=lambda **k: SimpleNamespace(**k),
                           save=lambda path, blob: open(path, "wb").write(bytes.fromhex(blob)), version="fake")


def test_search_loop_tells_scores_stops_at_deadline_and_keeps_the_best(tmp_path):
    FakeSearch.told = []
    seen, now = [], [0.0]

    def evaluate(acf, i):
        seen.append(open(acf, "rb").read())
        now[0] += 1.0 if i == 9 else 0.01     # the deadline passes during the third pool
        return None if i % 3 == 0 else 10.0 - i

    res = C.search(fake_ciq(), "ss.bin", evaluate, 0.5, pool=4, work_dir=tmp_path, clock=lambda: now[0])
    assert seen[:5] == [bytes([i]) for i in range(5)]      # each candidate's blob, as a file
    assert res["evaluated"] == 10 and res["pools"] == 3
    assert FakeSearch.told[0] == [("p0", "*"), ("p1", 9.0), ("p2", 8.0), ("p3", "*")]
    assert FakeSearch.told[2] == [("p8", 2.0), ("p9", "*")]    # the cut pool, told as far as it got
    assert res["best"]["index"] == 8 and res["best"]["score"] == 2.0


def elf(texts, debug=b""):
    """A minimal ELF64 with the given .text.* sections (name -> (flags, info, bytes)) and a debug one."""
    import struct
    names = [b""] + [n for n in texts] + [b".debug_line", b".shstrtab"]
    strtab = b"\0".join(names) + b"\0"
    offs, pos = {}, 0
    for n in names:
        offs[n] = pos
        pos += len(n) + 1
    body, sections = b"", []
    for n, (flags, info, data) in texts.items():
        sections.append((offs[n], 1, flags, 0x40 + len(body), len(data), info))
        body += data
    sections.append((offs[b".debug_line"], 1, 0, 0x40 + len(body), len(debug), 0))
    body += debug
    sections.append((offs[b".shstrtab"], 3, 0, 0x40 + len(body), len(strtab), 0))
    body += strtab
    shoff = 0x40 + len(body)
    hdr = bytearray(0x40)
    struct.pack_into("<Q", hdr, 0x28, shoff)
    struct.pack_into("<HHH", hdr, 0x3A, 64, len(sections) + 1, len(sections))
    sh = bytes(64) + b"".join(struct.pack("<IIQQQQIIQQ", nm, ty, fl, 0, off, sz, 0, inf, 1, 0)
                              for nm, ty, fl, off, sz, inf in sections)
    return bytes(hdr) + body + sh


def test_code_key_sees_code_and_kernel_attributes_not_debug_sections():
    code, regs26, regs32 = (6, 0xb, b"\x01" * 32), (0, 0, b"\x04\x2f\x08\x00\x1a"), (0, 0, b"\x04\x2f\x08\x00\x20")
    k = B.code_key(elf({b".text.k": code, b".nv.info.k": regs26}, b"lines-a"))
    assert k == B.code_key(elf({b".text.k": code, b".nv.info.k": regs26}, b"other lines"))
    assert k != B.code_key(elf({b".text.k": (6, 0xb, b"\x02" * 32), b".nv.info.k": regs26}, b"lines-a"))
    assert k != B.code_key(elf({b".text.k": code, b".nv.info.k": regs32}, b"lines-a"))
    assert B.code_key(b"not an elf") == B.code_key(b"not an elf") != B.code_key(b"not an elf either")


# ---- the objective on sasstune's runtime, mock CUDA driver -------------------------------------

SPEC = {"kernel": "add_kernel", "grid": [8], "block": [128], "params": [
    {"kind": "ptr", "dtype": "fp32", "bytes": 16384, "init": "randn"},
    {"kind": "ptr", "dtype": "fp32", "bytes": 16384, "init": "randn"},
    {"kind": "ptr", "dtype": "fp32", "bytes": 16384, "init": "randn"},
    {"kind": "i32", "value": 4096}, {"kind": "ptr", "bytes": 0}, {"kind": "ptr", "bytes": 0}]}

# A ptxas stand-in: the "ACF" holds the mock cubin body (or FAIL); it writes a MOCKCUBIN.
FAKE_PTXAS = """#!/bin/sh
acf=""; out=""
while [ $# -gt 0 ]; do
  case "$1" in --apply-controls=*) acf="${1#--apply-controls=}";; -o) out="$2"; shift;; esac
  shift
done
if grep -q FAIL "$acf"; then echo "ptxas fatal   : Invalid compiler controls file" >&2; exit 255; fi
{ printf 'MOCKCUBIN\\nkernel add_kernel\\n'; cat "$acf"; printf 'end\\n'; } > "$out"
"""


def runtime_paths():
    lib = os.environ.get("SASSTUNE_LIBRARY") or next(iter(sorted(glob.glob(os.path.join(ROOT, "build*", "libsasstune.so")))), None)
    if not lib or not os.path.exists(os.path.join(os.path.dirname(lib), "sasstune-worker")):
        pytest.skip("no unsanitised libsasstune.so with its sasstune-worker (scripts/test.sh builds build/py)")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler for the mock driver")
    return lib, cc


def mock_kernel(tmp_path, ptxas_text=FAKE_PTXAS):
    """(libsasstune path, mock driver, kernel folder, fake ptxas): a stock mock cubin and its spec."""
    lib_path, cc = runtime_paths()
    mock = str(tmp_path / "libcuda_mock.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", mock, os.path.join(ROOT, "test", "mock", "cuda_mock.c"),
                    "-lpthread"], check=True)
    d = tmp_path / "k"
    d.mkdir()
    (d / "launch.json").write_text(json.dumps(SPEC))
    (d / "stock.cubin").write_text("MOCKCUBIN\nkernel add_kernel\nop add\ntime_us 20\nend\n")
    (d / "stock.ptx").write_text("// the fake ptxas ignores it\n")
    ptxas = tmp_path / "ptxas"
    ptxas.write_text(ptxas_text)
    ptxas.chmod(0o755)
    return lib_path, mock, d, ptxas


def test_objective_verifies_times_and_counts_failures(tmp_path):
    lib_path, mock, d, ptxas = mock_kernel(tmp_path)
    a = SimpleNamespace(ciq_ptxas=str(ptxas), compile_timeout=30, ciq_pairs=20)
    lib = st_runtime.load(lib_path)
    with st_runtime.Session(lib, str(d / "stock.cubin"), str(d / "launch.json"), libcuda=mock) as s:
        obj = B.Objective(a, str(d), s, time.time() + 60)
        bodies = ["op add\ntime_us 16\n", "FAIL\n", "op wrong\n", "op fault\n", "op add\ntime_us 16\n",
                  "op add\ntime_us 24\n"]
        acfs = []
        for i, body in enumerate(bodies):
            acfs.append(str(tmp_path / ("c%d.acf" % i)))
            open(acfs[-1], "w").write(body)
        obj.prepare(acfs[:3])                 # a pool compiled at once; the rest one by one
        assert sorted(obj.compiled) == sorted(acfs[:3])
        scores = [obj(acf, i) for i, acf in enumerate(acfs)]
        assert obj.compiled == {}
    assert scores[0] < 0.9 and scores[5] > 1.1                 # time(candidate)/time(stock)
    assert scores[1] is None and scores[2] is None and scores[3] is None
    assert scores[4] == scores[0]                              # same code: scored once
    c = obj.counts
    assert (c["compiled"], c["compile_failed"], c["wrong"], c["crashed"], c["duplicates"], c["timed"]) == (5, 1, 1, 1, 1, 2)
    assert "Invalid compiler controls file" in obj.first_errors["compile_failed"]
    assert obj.first_errors["wrong"].startswith("mismatch:")
    assert obj.rows[4]["duplicate_of"] == 0


def test_markdown_table_and_geometric_means():
    run = {"date": "d", "command": "c", "compileiq_version": "1.1.0", "search_space": "ss.bin",
           "search_space_sha256": "ab" * 32, "ciq_ptxas_version": "13.3.73", "budget_s": 12, "pairs": 400,
           "ciq_pairs": 50, "ciq_pool": 12, "search_space_attention": "att.bin", "search_space_attention_sha256": "cd" * 32}
    m = lambda s, lo, hi: {"speedup": s, "speedup_lo": lo, "speedup_hi": hi, "stock_ms": 0.05}
    results = [
        {"case": "k1", "status": "measured", "measured": {"compileiq": m(1.02, 1.01, 1.03), "ptxas133": m(0.99, 0.98, 0.995),
                                                          "sasstune": m(1.04, 1.03, 1.05), "ciq_sass": m(1.05, 1.04, 1.06)},
         "compileiq": {"evaluated": 30, "wall_s": 14, "counts": {"timed": 20, "compile_failed": 3, "wrong": 2}},
         "sasstune": {"wall_s": 14}, "budget_s": 12},
        {"case": "k2", "status": "measured", "measured": {"compileiq": {"speedup": 1.0, "speedup_lo": 1.0, "speedup_hi": 1.0,
                                                                        "same_as_stock": True},
                                                          "ptxas133": {"error": "no cubin"}, "sasstune": m(1.0, 0.99, 1.01),
                                                          "ciq_sass": m(1.0, 0.99, 1.01)}},
        {"case": "k3", "status": "skipped", "reason": "time box spent"},
        {"case": "k4", "status": "stock-failed", "stock": {"error": "RuntimeError: no GPU"}}]
    md = B.markdown(run, results)
    assert "| k1 | 50.0 µs | **1.0200 [1.0100, 1.0300]** | _0.9900 [0.9800, 0.9950]_ |" in md
    assert "| 20 / 3 / 2 / 0 of 30 | 12 / 14, 14 |" in md
    assert "| k2 | 50.0 µs | 1 (stock) | n/a (no cubin) |" in md
    assert "| k3 | skipped: time box spent | n/a |" in md and "| k4 | stock-failed: RuntimeError: no GPU |" in md
    assert "Geometric mean, CompileIQ best ACF: 1.0100 (2 kernels)" in md
    assert "; for attention att.bin (sha256 cdcdcdcdcdcdcdcd)" in md and "did not run" not in md
    assert "**CompileIQ did not run**: importing" in B.markdown(dict(run, compileiq_error="importing"), [])
    assert "Geometric mean, ptxas 13.3, no ACF: 0.9900 (1 kernels)" in md


def test_real_compileiq_compile_only(tmp_path):
    """The real thing, offline, when it is here: CompileIQ's candidates compiled by ptxas 13.3."""
    ss, ptxas = os.environ.get("PEER_SS"), os.environ.get("PEER_PTXAS13_3")
    if not (ss and ptxas and os.path.exists(ss) and os.path.exists(ptxas)):
        pytest.skip("set PEER_SS (a CompileIQ search space) and PEER_PTXAS13_3 (ptxas 13.3)")
    code = textwrap.dedent("""
        import sys, os, subprocess; sys.path.insert(0, %r)
        import ciq_offline as C
        ciq = C.load(os.environ.get("PEER_CIQ_SITE"))
        ptx = os.path.join(%r, "test", "fixtures", "triton-sm90", "add_f32_1M", "sm_90.ptx")
        def ev(acf, i):
            r = subprocess.run([os.environ["PEER_PTXAS13_3"], "--gpu-name=sm_90a", "--apply-controls=" + acf, ptx,
                                "-o", acf + ".cubin"], capture_output=True)
            return float(os.path.getsize(acf + ".cubin")) if r.returncode == 0 else None
        res = C.search(ciq, os.environ["PEER_SS"], ev, 10, pool=6, work_dir=%r)
        print(ciq.version, res["evaluated"], sum(h["score"] is not None for h in res["history"]))
    """ % (HERE, ROOT, str(tmp_path)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    if r.returncode != 0 and "No module named 'compileiq'" in r.stderr:
        pytest.skip("CompileIQ is not installed (PEER_CIQ_SITE)")
    assert r.returncode == 0, r.stderr[-2000:]
    version, evaluated, valid = r.stdout.split()[-3:]
    assert version == "1.1.0" and int(evaluated) >= 1 and int(valid) >= 1


# A ptxas stand-in for whole pools: the ACF byte n (a fake CompileIQ's blob) picks the mock kernel:
# n % 5 == 0 fails to compile, n % 5 == 1 computes wrong outputs (in 17 us), else runs in 16 + n % 5 us; no
# ACF: the stock kernel.
POOL_PTXAS = """#!/bin/sh
acf=""; out=""
while [ $# -gt 0 ]; do
  case "$1" in --apply-controls=*) acf="${1#--apply-controls=}";; -o) out="$2"; shift;; esac
  shift
done
op=add; t=20
if [ -n "$acf" ]; then
  n=$(od -An -tu1 "$acf" | tr -d ' '); r=$((n % 5))
  [ $r -eq 0 ] && { echo "ptxas fatal   : Invalid compiler controls file" >&2; exit 255; }
  [ $r -eq 1 ] && op=wrong; t=$((16 + r))
fi
printf 'MOCKCUBIN\\nkernel add_kernel\\nop %s\\ntime_us %s\\nend\\n' $op $t > "$out"
"""


def test_gpu_steps_on_the_mock_driver(tmp_path, monkeypatch):
    """The per-kernel GPU steps end to end: a fake CompileIQ's pools through the fake ptxas, the
    objective on sasstune's runtime, the re-measures by `sasstune compare`; `sasstune tune`
    cannot read a mock cubin, so both of its columns record its error."""
    lib_path, mock, d, ptxas = mock_kernel(tmp_path, POOL_PTXAS)
    sasstune = os.path.join(os.path.dirname(lib_path), "sasstune")
    if not os.path.exists(sasstune):
        pytest.skip("no sasstune next to %s" % lib_path)
    monkeypatch.setenv("SASSTUNE_LIBCUDA", mock)
    ss = tmp_path / "ss.bin"
    ss.write_bytes(b"space")
    a = B.parse_args(["--out", str(tmp_path), "--search-space", str(ss), "--ciq-ptxas", str(ptxas),
                      "--ciq-pool", "10", "--ciq-max-evals", "20", "--pairs", "30", "--ciq-pairs", "20"])
    res = B.run_gpu_steps(a, str(d), {"case": "k"}, B.subprocess_env(sasstune), sasstune, fake_ciq(),
                          st_runtime.load(lib_path), 600.0, str(ss))
    c, m = res["compileiq"], res["measured"]
    assert res["sasstune"]["ok"] is False and "ELF" in res["sasstune"]["error"]
    assert c["evaluated"] == 20 and c["pools"] == 2 and c["counts"]["compile_failed"] == 4
    assert c["counts"]["wrong"] == 1 and c["counts"]["duplicates"] == 12   # codes seen before: scored once
    assert c["best"]["score"] < 0.95                # the 18 us kernel (the 17 us one is wrong), stock 20 us
    assert os.path.exists(d / "ciq-best.acf") and (d / "ciq.cubin").read_text().count("time_us 18") == 1
    assert 1.05 < m["compileiq"]["speedup"] < 1.2 and m["compileiq"]["pairs"] == 30
    assert m["ptxas133"].get("same_as_stock") and m["sasstune"] == {"error": "no cubin"}
    assert "ELF" in m["ciq_sass"]["error"]
    saved = json.load(open(d / "ciq.json"))
    assert len(saved["candidates"]) == c["evaluated"] and saved["counts"] == c["counts"]


def test_report_rewrite_keeps_the_peers_section(tmp_path):
    import report
    md = tmp_path / "b.md"
    md.write_text("# old page\n\nold text\n\n<!-- peers -->\n## Peers\n\nthe table\n<!-- end of peers -->\n")
    report.main(["--none", "--md", str(md)])
    text = md.read_text()
    assert "old text" not in text and "No results are recorded yet" in text
    assert text.endswith("\n<!-- peers -->\n## Peers\n\nthe table\n<!-- end of peers -->\n")
    report.main(["--none", "--md", str(md)])
    assert md.read_text() == text                 # kept once, not stacked
