#!/usr/bin/env python3
"""The GPU call scripts' record of one `sasstune compare --json` run, and their table of many.

    compare_record.py record RC C.json C.err KEY=VALUE...   one JSON line: the KEY=VALUE pairs, "rc",
                                                             and "compare" (the JSON) or "error" (C.err's tail)
    compare_record.py table RECORDS.jsonl COL=KEY...          a Markdown table: one column per KEY, then
                                                             outputs, B/A and its 95 % interval
"""
import json
import sys


def record(rc, cj, ce, pairs):
    rec = dict(p.split("=", 1) for p in pairs)
    rec["rc"] = int(rc)
    try:
        rec["compare"] = json.load(open(cj))
    except Exception:
        rec["error"] = open(ce).read()[-400:]
    print(json.dumps(rec))


def table(path, cols):
    cols = [c.split("=", 1) for c in cols]
    print("| " + " | ".join(h for h, _ in cols) + " | outputs | B/A | 95% interval |")
    print("|" + "---|" * (len(cols) + 3))
    for line in open(path):
        r = json.loads(line)
        c = r.get("compare")
        head = "| " + " | ".join(str(r.get(k, "")) for _, k in cols) + " | "
        if c:
            out = "bit-identical" if c.get("deterministic") else "within tolerance"
            print(head + "%s | %.4f | [%.4f, %.4f] |" % (out, c["ratio"], c["ci_lo"], c["ci_hi"]))
        else:
            err = r.get("error", "").replace("\n", " ")[-200:]
            print(head + "FAILED (rc %d): %s | | |" % (r["rc"], err))


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
