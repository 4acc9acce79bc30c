#!/usr/bin/env python3
"""Probe nvdisasm's own operand sizes for hidden register groups (docs/sass.md "Hidden groups").

`nvdisasm -plr` marks every register an instruction reads or writes, from NVIDIA's ISA
description.  On ptxas output a hidden group register is usually also an ordinary operand
(IMAD.HI R4, R5, R7, R4 reads {R5:R4}, R5 being Ra too), so comparing the decode with -plr on
the original cubins cannot see it.  This script moves the register fields apart: for every
instruction of every cubin given (one per opcode form and cubin unless --all), it writes
R200 / R208 / R216 / R224 into the Rd / Ra / Rb / Rc bytes (2, 3, 4, 8) that hold one of the
instruction's decoded R registers, with `sasstune rewrite --unchecked` field edits, then runs
`sasstune disasm --plr` on the result and prints every instruction whose decode differs from
-plr (e.g. `IMAD.HI.U32 R4, R5, R7, R224: missing use R225`).  Exit status 1 if any differs.

usage: plr-probe.py SASSTUNE CUBIN [CUBIN...] [--nvdisasm PATH] [--all]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

LINE = re.compile(r"^\s+([0-9a-f]{4,})\s+\[\S+\]\s+(?:@!?U?P\S+\s+)?(\S+)\s+(.*?)\s+defs (\S+) uses (\S+)")
FIELDS = {"d": (2, 200), "a": (3, 208), "b": (4, 216), "c": (8, 224)}


def regs(text):
    out = set()
    for tok in text.split(","):
        m = re.fullmatch(r"R(\d+)(?:\.\.R(\d+))?", tok)
        if m:
            lo = int(m.group(1))
            out.update(range(lo, int(m.group(2) or lo) + 1))
    return out


def cubin_words(path):
    """{kernel: bytes of its .text section} from the ELF."""
    import struct
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx]
    out = {}
    for s in secs:
        name = data[strtab[4] + s[0]:].split(b"\0", 1)[0].decode()
        if name.startswith(".text."):
            out[name[6:]] = data[s[4]:s[4] + s[5]]
    return out


def disasm(sasstune, cubin, env, plr):
    cmd = [sasstune, "disasm", cubin] + (["--plr"] if plr else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def probe(sasstune, cubin, env, every):
    text = cubin_words(cubin)
    kernel, seen, edits = None, set(), {}
    for line in disasm(sasstune, cubin, env, False).splitlines():
        if line.startswith("kernel "):
            kernel = line.split()[1].rstrip(":")
            continue
        m = LINE.match(line)
        if not m or kernel not in text:
            continue
        off, op, defs, uses = int(m.group(1), 16), m.group(2), m.group(4), m.group(5)
        if op.startswith(("CALL", "RET")) or (not every and op in seen):
            continue
        word = text[kernel][off:off + 16]
        named = regs(defs) | regs(uses)
        moves = [{"slot": off // 16, "field": f, "reg": v} for f, (b, v) in FIELDS.items()
                 if word[b] in named and word[b] != 255]
        if moves:
            seen.add(op)
            edits.setdefault(kernel, []).extend(moves)
    if not edits:
        return []
    with tempfile.TemporaryDirectory() as tmp:
        sched = os.path.join(tmp, "s.json")
        out = os.path.join(tmp, "p.cubin")
        json.dump({"sasstune_schedule": 1, "kernels": {k: {"moves": v} for k, v in edits.items()}}, open(sched, "w"))
        subprocess.run([sasstune, "rewrite", "--unchecked", cubin, "--schedule", sched, "-o", out],
                       check=True, capture_output=True, env=env)
        res = disasm(sasstune, out, env, True)
    return [l.strip() for l in res.splitlines() if l.strip().startswith("differs at")], sum(map(len, edits.values()))


def main(argv):
    args, env, every = [], dict(os.environ), False
    it = iter(argv[1:])
    for a in it:
        if a == "--nvdisasm":
            env["SASSTUNE_NVDISASM"] = next(it)
        elif a == "--all":
            every = True
        else:
            args.append(a)
    if len(args) < 2:
        sys.exit(__doc__)
    bad = 0
    for cubin in args[1:]:
        r = probe(args[0], cubin, env, every)
        diffs, n = r if r else ([], 0)
        print(f"{cubin}: {n} fields moved, {len(diffs)} instructions differ from -plr")
        for d in diffs:
            print("  " + d)
        bad += len(diffs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
