"""bench/headroom.py: the table from stock.json + profile.json, and its place in a document."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headroom  # noqa: E402


def write(d, name, stock=None, prof=None):
    os.makedirs(os.path.join(d, name))
    if stock is not None:
        json.dump(stock, open(os.path.join(d, name, "stock.json"), "w"))
    if prof is not None:
        json.dump(prof, open(os.path.join(d, name, "profile.json"), "w"))


def test_table_groups_and_doc(tmp_path):
    d = str(tmp_path / "run")
    write(d, "add", {"baseline": {"label": "device copy of the same bytes (torch copy_)", "triton_ms": 0.2,
                                  "base_ms": 0.1, "base_speed": 2.0}},
          {"reasons": {"long_sb": 0.5, "lg_throttle": 0.3, "selected": 0.1, "barrier": 0.05, "no_inst": 0.05},
           "top": [464], "instructions": [{"offset": 464, "opcode": "FADD", "share": 0.4}]})
    write(d, "broken", {"error": "RuntimeError: no GPU"})
    os.makedirs(os.path.join(d, "empty"))
    t = headroom.table(d)
    lines = t.strip().splitlines()
    assert len(lines) == 4  # header, rule, add, broken (empty has neither file)
    add = lines[2]
    assert "| add | 0.2000 | device copy of the same bytes 0.1000 ms | 2.00 | 50% | 30% | 10% | 5% | 5% |" in add
    assert "long_sb 50%, lg_throttle 30%, selected 10%" in add and "`01d0 FADD` 40%" in add
    assert "stock failed: RuntimeError: no GPU" in lines[3] and "(no profile)" in lines[3]
    doc = tmp_path / "doc.md"
    doc.write_text("before\n<!-- headroom:begin -->\nold\n<!-- headroom:end -->\nafter\n")
    headroom.replace_between(str(doc), t)
    text = doc.read_text()
    assert "old" not in text and text.startswith("before\n<!-- headroom:begin -->\n| kernel |")
    assert text.endswith("<!-- headroom:end -->\nafter\n")
