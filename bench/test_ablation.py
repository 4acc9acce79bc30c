"""CPU checks of bench/ablation.py: configurations, rotation, the table and its summary lines."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ablation as A  # noqa: E402


def test_parse_config():
    assert A.parse_config("+aim=--families swap,ctrl,hoist --aim auto") == \
        ("+aim", ["--families", "swap,ctrl,hoist", "--aim", "auto"])
    assert A.parse_config("plain=") == ("plain", [])
    with pytest.raises(ValueError):
        A.parse_config("no equals sign")
    with pytest.raises(ValueError):
        A.parse_config("=--aim auto")


def test_rotate_visits_every_order_start():
    cfg = ["a", "b", "c"]
    assert [A.rotate(cfg, k)[0] for k in range(4)] == ["a", "b", "c", "a"]
    assert A.rotate([], 3) == []


def test_bad_arguments_are_refused(capsys):
    with pytest.raises(SystemExit):
        A.parse_args(["--out", "/tmp/x", "--config", "a=", "--config", "a=--aim auto"])
    assert "must differ" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        A.parse_args(["--out", "/tmp/x", "--config", "a=", "--kernels", "nosuchkernel"])
    assert "unknown kernel" in capsys.readouterr().err


def _t(speedup, lo, hi, ratio=None, same=False):
    m = {"speedup": speedup, "speedup_lo": lo, "speedup_hi": hi}
    if same:
        m["same_as_stock"] = True
    return {"confirmed": ratio is not None, "ratio": ratio, "remeasure": m}


def test_markdown_geomean_slower_and_tuner_gap():
    run = {"date": "d", "command": "c", "budget_s": 6.0, "pairs": 400}
    results = [
        {"case": "k1", "configs": {"old": _t(1.0, 1.0, 1.0, same=True), "new": _t(1.02, 1.01, 1.03, ratio=1.021)}},
        {"case": "k2", "configs": {"old": _t(0.99, 0.985, 0.995, ratio=1.01), "new": _t(1.0, 1.0, 1.0, same=True)}},
        {"case": "k3", "error": "skipped: the time box is spent", "configs": {}},
    ]
    md = A.markdown(run, results, ["old", "new"])
    assert "| k1 | 1 (stock) | 1.0200 [1.0100, 1.0300]; tuner 1.0210 |" in md
    assert "| k3 | – (skipped: the time box is spent) | – (skipped: the time box is spent) |" in md
    assert "- old: geometric mean %.4f over 2 kernels; 1 resolved slower than stock" % (0.99 ** 0.5) in md
    assert "- new: geometric mean %.4f over 2 kernels; 0 resolved slower than stock" % (1.02 ** 0.5) in md
    # k1/new: 1.021 vs 1.02 is within 0.3 %; k2/old: 1.01 vs 0.99 is not
    assert "1 of 2 within 0.3 %" in md


def test_report_rewrite_keeps_every_hand_written_section(tmp_path):
    import report
    md = tmp_path / "b.md"
    md.write_text("# old\n\nold text\n\n<!-- peers -->\n## Peers\nP\n<!-- end of peers -->\n"
                  "between\n<!-- ablation -->\n## Ablation\nA\n<!-- end of ablation -->\n")
    report.main(["--none", "--md", str(md)])
    text = md.read_text()
    assert "old text" not in text and "between" not in text
    assert text.endswith("\n<!-- peers -->\n## Peers\nP\n<!-- end of peers -->\n"
                         "\n<!-- ablation -->\n## Ablation\nA\n<!-- end of ablation -->\n")
    report.main(["--none", "--md", str(md)])
    assert md.read_text() == text                 # kept once, not stacked


def test_markdown_cost_per_step():
    run = {"date": "d", "command": "c", "budget_s": 6.0, "pairs": 400}
    t1 = dict(_t(1.0, 1.0, 1.0, same=True), steps=100, steps_per_s=50.0, eval_ms=10.0, search_ms_per_step=0.5,
              policy_seconds=0.03)
    t2 = dict(_t(1.0, 1.0, 1.0, same=True), steps=200, steps_per_s=150.0, eval_ms=5.0, search_ms_per_step=0.1,
              policy_seconds=0.0)
    md = A.markdown(run, [{"case": "k1", "configs": {"ppo": t1, "rw": t2}},
                          {"case": "k2", "configs": {"ppo": t2, "rw": t2}}], ["ppo", "rw"])
    # ppo: own 5 % (k1) and 2 % (k2); policy 0.3 ms a step = 3 % of 10 ms on k1 (k2 has none)
    assert "- ppo, cost per step over 2 kernels: 50.0-150.0 steps/s; the search's own work 2.0-5.0 % of one " \
        "evaluation; the policy's 3.0-3.0 %" in md
    assert "- rw, cost per step over 2 kernels: 150.0-150.0 steps/s; the search's own work 2.0-2.0 % of one " \
        "evaluation\n" in md


def _shard(d, case, configs, budget=4.0, names=("old", "new")):
    import json
    os.makedirs(d, exist_ok=True)
    run = {"date": "d", "command": "c " + case, "budget_s": budget, "pairs": 400, "configs": {n: [] for n in names}}
    json.dump({"run": run, "results": [{"case": case, "configs": configs}]}, open(os.path.join(d, "ablation.json"), "w"))
    return str(d)


def test_merge_joins_shards_in_bench_order(tmp_path):
    a = _shard(tmp_path / "a", "softmax", {"old": _t(1.0, 1.0, 1.0, same=True), "new": _t(1.02, 1.01, 1.03)})
    b = _shard(tmp_path / "b", "mm_leaky_512", {"old": _t(1.01, 1.0, 1.02), "new": _t(1.03, 1.02, 1.04)})
    assert A.main(["merge", "--out", str(tmp_path / "m"), a, b]) == 0
    md = open(tmp_path / "m" / "ablation.md").read()
    # mm_leaky_512 comes first in the bench's order, whatever the shards' order
    assert md.index("| mm_leaky_512 |") < md.index("| softmax |")
    assert "- new: geometric mean %.4f over 2 kernels" % ((1.02 * 1.03) ** 0.5) in md
    assert "c mm_leaky_512; c softmax" in md


def test_merge_refuses_shards_that_differ(tmp_path, capsys):
    a = _shard(tmp_path / "a", "softmax", {}, budget=4.0)
    b = _shard(tmp_path / "b", "add", {}, budget=6.0)
    assert A.main(["merge", "--out", str(tmp_path / "m"), a, b]) == 1
    assert "another budget" in capsys.readouterr().err
    assert A.main(["merge", "--out", str(tmp_path / "m"), str(tmp_path / "none")]) == 1
