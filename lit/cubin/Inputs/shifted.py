#!/usr/bin/env python3
"""Compare two `nvdisasm -hex -c` listings of one kernel, before and after `sasstune insert`.

usage: shifted.py BEFORE.sass AFTER.sass KERNEL SLOT [SLOT ...]

SLOTs are the slots of BEFORE that got an instruction inserted in front of them.  Every
instruction of BEFORE must sit in AFTER where the shift puts it (old slot i -> i + the number
of SLOTs <= i, the padding NOPs taken from the end), with the same text once each label is
replaced by the old slot of the instruction it names, and the same encoding unless it holds a
label (a patched immediate) or is a BRX / RET.REL (whose immediate cancels the PC).  Each inserted slot must hold a NOP.  Prints one summary line.
"""
import re
import sys

INSN = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* (0x[0-9a-f]{16}) \*/")
HI = re.compile(r"^\s+/\* (0x[0-9a-f]{16}) \*/")
LABEL = re.compile(r"^([.$\w]+):\s*$")
REF = re.compile(r"\.L_x_\d+")
SELF = re.compile(r"((?:BRX|RET\.REL\S*) R\d+) -0x[0-9a-f]+")


def parse(path, kernel):
    lines = open(path).read().split("\n")
    insns, labels, pending, on = [], {}, [], False
    for i, line in enumerate(lines):
        if re.match(r"\s*\.section\s", line):
            on = line.split()[1].split(",")[0] == ".text." + kernel
            continue
        if not on:
            continue
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSN.match(line)
        if not m:
            continue
        hi = HI.match(lines[i + 1]).group(1) if i + 1 < len(lines) and HI.match(lines[i + 1]) else ""
        for p in pending:
            labels[p] = len(insns)
        pending = []
        insns.append((re.sub(r"\s+", " ", m.group(2)).strip(), m.group(3) + hi))
    for p in pending:
        labels[p] = len(insns)
    return insns, labels


def main():
    before, after, kernel = sys.argv[1], sys.argv[2], sys.argv[3]
    slots = sorted(int(s, 0) for s in sys.argv[4:])
    a, la = parse(before, kernel)
    b, lb = parse(after, kernel)
    if len(a) != len(b) or not a:
        sys.exit("listings differ in length: %d and %d" % (len(a), len(b)))
    new = [i + sum(1 for s in slots if s <= i) for i in range(len(a))]
    old = {n: i for i, n in enumerate(new)}
    bad = 0

    def named(text, labels, to_old):
        return REF.sub(lambda m: "@%s" % to_old(labels.get(m.group(0), -1)), text)

    for k, s in enumerate(slots):
        t = b[s + k][0]
        if t != "NOP":
            print("inserted slot %d holds %r" % (s + k, t))
            bad += 1
    checked = 0
    for i, (text, enc) in enumerate(a):
        if new[i] >= len(b):
            continue  # one of the padding NOPs taken
        t2, e2 = b[new[i]]
        x = named(text, la, lambda j: j)
        y = named(t2, lb, lambda j: old.get(j, "new%d" % j))
        patched = REF.search(text) or SELF.search(text) or "RET.REL" in text
        if patched:  # BRX / RET.REL immediates cancel the PC: they change with the slot
            x, y = SELF.sub(r"\1 PC", x), SELF.sub(r"\1 PC", y)
        if x != y or (not patched and enc != e2):
            print("old slot %d: %r / %s became %r / %s" % (i, x, enc, y, e2))
            bad += 1
        checked += 1
    print("%s: %d instructions in place, %d inserted NOPs, %d differences" % (kernel, checked, len(slots), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
