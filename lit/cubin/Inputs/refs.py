#!/usr/bin/env python3
"""Check sasstune's decoded code references against an `nvdisasm -hex -c` listing.

    refs.py INSPECT.json LISTING

For every kernel: each branch target sasstune decodes (BRA, BSSY, CALL.REL, LEPC, ...) must be
the address of the label nvdisasm prints on that instruction, and each label nvdisasm prints
must be decoded; BRX target lists (BRANCH_TARGETS) must equal the jump-table entries; every
EXIT list entry must be an EXIT, every SYSCALL entry a CALL, every MBARRIER entry a SYNCS
instruction, every return literal the slot after a CALL.  Prints one line per kernel, exits 1
on the first mismatch.
"""
import json
import re
import sys

INSN = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* 0x[0-9a-f]{16} \*/")
LABEL = re.compile(r"^([.$\w]+):\s*$")
REF = re.compile(r"`\(([^)]+)\)")
TARGETS = re.compile(r'BRANCH_TARGETS ([^"]+)"')


def listing(path):
    """{section name: ({addr: text}, {label: addr})}"""
    secs, cur, pending = {}, None, []
    for line in open(path):
        m = re.match(r"\s*\.section\s+(\S+?),", line)
        if m:
            cur = secs.setdefault(m.group(1), ({}, {}))
            pending = []
            continue
        m = LABEL.match(line)
        if m and cur is not None:
            pending.append(m.group(1))
            continue
        m = INSN.match(line)
        if m and cur is not None:
            a = int(m.group(1), 16)
            cur[0][a] = re.sub(r"\s+", " ", m.group(2)).strip()
            for p in pending:
                cur[1][p] = a
            pending = []
    return secs


def fail(msg):
    print("MISMATCH: " + msg)
    sys.exit(1)


def main():
    d = json.load(open(sys.argv[1]))
    secs = listing(sys.argv[2])
    for k in d["kernels"]:
        text, labels = secs[".text." + k["name"]]
        refs = k["code_refs"]
        decoded = {}
        for r in refs:
            if r["kind"] in ("branch", "return") and r["what"] not in ("MOV",) and r["slot"] >= 0 and \
                    r["kind"] != "reloc" and r["what"] in ("BRA", "BRA.DIV", "CALL.REL", "BSSY",
                                                           "WARPSYNC.COLLECTIVE", "LEPC"):
                decoded[16 * r["slot"]] = r["target"]
        nbranch = 0
        listed_targets = []
        for a, t in sorted(text.items()):
            names = REF.findall(t)
            m = TARGETS.search(t)
            if m:
                listed_targets += [labels[x.strip()] for x in m.group(1).split(",")]
            for nm in names:
                if nm not in labels:
                    continue  # a function in another section (CALL.ABS with a relocation)
                if t.split()[0].startswith("RET") or "RET." in t:
                    continue  # RET.REL: nvdisasm names the function, the immediate cancels the PC
                nbranch += 1
                if decoded.get(a) != labels[nm]:
                    fail("%s: %s at 0x%x: nvdisasm says 0x%x, sasstune %s" % (
                        k["name"], t, a, labels[nm],
                        "nothing" if a not in decoded else hex(decoded[a])))
        if nbranch != len(decoded):
            fail("%s: nvdisasm prints %d labels, sasstune decodes %d branches" % (k["name"], nbranch, len(decoded)))
        jt = sorted(r["target"] for r in refs if r["kind"] == "jump_table")
        if sorted(listed_targets) != jt:
            fail("%s: BRANCH_TARGETS %s, jump tables %s" % (k["name"], sorted(listed_targets), jt))
        want = {"EIATTR_EXIT_INSTR_OFFSETS": "EXIT", "EIATTR_SYSCALL_OFFSETS": "CALL",
                "EIATTR_MBARRIER_INSTR_OFFSETS": "SYNCS"}
        nattr = 0
        for r in refs:
            if r["kind"] == "attr" and r["what"] in want:
                nattr += 1
                t = text.get(r["target"], "")
                if want[r["what"]] not in t:
                    fail("%s: %s entry 0x%x is '%s'" % (k["name"], r["what"], r["target"], t))
            if r["kind"] == "return":
                t = text.get(r["target"] - 16, "")
                if "CALL" not in t:
                    fail("%s: return address 0x%x does not follow a CALL ('%s')" % (k["name"], r["target"], t))
        print("%s: %d branch targets, %d jump-table entries, %d attribute entries agree with nvdisasm" % (
            k["name"], nbranch, len(jt), nattr))


if __name__ == "__main__":
    main()
