#!/usr/bin/env python3
"""Print every label reference of an `nvdisasm -hex -c` listing as one line,
"FUNCTION: INSTRUCTION => TARGET", with each label replaced by what sits at it, sorted.

Two listings of the same cubin before and after a permutation of its instruction slots
must print the same lines: every branch, BSSY, call, LEPC and BRX target list still lands on
the same instruction, wherever both went (an LEPC naming a return address: the slot after the
same CALL).  Label names (.L_x_N) are renumbered by nvdisasm,
and patched literals move, so targets are named by their encoding when the word is not
patched by a move (most instructions), else by their text with labels and hex numbers masked.
Also prints "labels: N" so that a test can see it is not comparing nothing.
"""
import re
import sys

INSN = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* (0x[0-9a-f]{16}) \*/")
HI = re.compile(r"^\s+/\* (0x[0-9a-f]{16}) \*/")
LABEL = re.compile(r"^([.$\w]+):\s*$")
REF = re.compile(r"`\(([^)]+)\)")
TARGETS = re.compile(r'BRANCH_TARGETS ([^"]+)"')


def parse(path):
    lines = open(path).read().split("\n")
    insns, labels, pending, func = [], {}, [], None
    for i, line in enumerate(lines):
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            if not m.group(1).startswith(".") or m.group(1).startswith(".text."):
                func = m.group(1) if not m.group(1).startswith(".text.") else func
            continue
        if line.lstrip().startswith(".section"):
            func = None
        m = INSN.match(line)
        if not m:
            continue
        hi = HI.match(lines[i + 1]).group(1) if i + 1 < len(lines) and HI.match(lines[i + 1]) else ""
        text = re.sub(r"\s+", " ", m.group(2)).strip()
        idx = len(insns)
        for p in pending:
            labels[p] = idx
        pending = []
        insns.append({"addr": int(m.group(1), 16), "text": text, "enc": m.group(3) + hi, "func": func})
    return insns, labels


def patched(text):
    return "`(" in text or "BRANCH_TARGETS" in text or re.match(r"(@!?U?P\w+ )?MOV R\d+, 0x", text)


def masked(text):
    text = re.sub(r"\.L_x_\d+", ".L", text)
    return re.sub(r"0x[0-9a-f]+", "0xN", text)


def main():
    insns, labels = parse(sys.argv[1])

    def ident(name, src):
        if name not in labels:
            return "?" + name
        i = labels[name]
        if src.startswith("LEPC") and i > 0 and "CALL" in insns[i - 1]["text"]:
            return "after " + ident_at(i - 1)  # a return address: the slot after its CALL
        return ident_at(i)

    def ident_at(i):
        t = insns[i]
        return "[" + masked(t["text"]) + "]" if patched(t["text"]) else t["enc"]

    out = []
    for t in insns:
        text = t["text"]
        if not patched(text) or text.split(" ")[-1].startswith("0x") and "MOV" in text and "`" not in text:
            continue
        names = REF.findall(text)
        m = TARGETS.search(text)
        if m:
            names += [n.strip() for n in m.group(1).split(",")]
        if not names:
            continue
        # BRX/RET immediates cancel the PC: print the absolute target instead
        src = re.sub(r"(BRX R\d+) (-?0x[0-9a-f]+)",
                     lambda mm: "%s abs=0x%x" % (mm.group(1), t["addr"] + 16 + int(mm.group(2), 16)), text)
        src = REF.sub("`L", src)
        src = TARGETS.sub("BRANCH_TARGETS", src)
        out.append("%s: %s => %s" % (t["func"], src, " ".join(ident(n, text) for n in names)))
    for line in sorted(out):
        print(line)
    print("labels: %d" % len(out))


if __name__ == "__main__":
    main()
