#!/usr/bin/env python3
"""Hand-made pipe rewrites (family 3 form 1) of layernorm's loop 1 for lit/pipe/check.test; made
layernorm-lds.sm_90.cubin and layernorm-lds-pipe.sm_90.cubin in this folder:

  make-pipe.py unguard IN OUT           0xa80 `@!P2 LDS R14` -> `LDS R14` (R14 dead after loop 1)
  make-pipe.py rotate SASSTUNE IN OUT   the rotation test/unit/test_check_pipe.c builds: the load
                                        0x210 and its group moved before the back branch, P2 renamed
                                        to P5, the ISETP combined with the exit predicate (OR P2),
                                        a peel of the group and the feeder MOV R5, R23 before 0x1b0
  make-pipe.py uncombine IN OUT         the body's ISETP back to AND with PT (a P6 hazard)

  python3 make-pipe.py unguard test/fixtures/triton-sm90/layernorm_f16_1024x1024/sm_90.cubin \\
      lit/pipe/Inputs/layernorm-lds.sm_90.cubin
  python3 make-pipe.py rotate build/test/sasstune lit/pipe/Inputs/layernorm-lds.sm_90.cubin \\
      lit/pipe/Inputs/layernorm-lds-pipe.sm_90.cubin
"""
import os
import struct
import subprocess
import sys
import tempfile

KERNEL = b".text.layernorm_kernel"
LOOP, BRA = 27, 86            # slots of 0x1b0 and the back branch 0x560
MEMBERS = [27, 29, 30, 31, 32, 33]
PEEL = [27, 28, 29, 30, 31, 32, 33]
TB = LOOP + len(PEEL)         # tuned body start
TAIL = TB + (BRA - LOOP) - len(MEMBERS)


def text_offset(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    stroff, = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        h = shoff + i * shentsize
        name, = struct.unpack_from("<I", data, h)
        end = data.index(b"\0", stroff + name)
        if data[stroff + name:end] == KERNEL:
            return struct.unpack_from("<Q", data, h + 0x18)[0]
    sys.exit("no " + KERNEL.decode())


def word(data, off, slot):
    return int.from_bytes(data[off + 16 * slot:off + 16 * slot + 16], "little")


def put(data, off, slot, w):
    data[off + 16 * slot:off + 16 * slot + 16] = w.to_bytes(16, "little")


def field(w, at, n, v):
    return (w & ~(((1 << n) - 1) << at)) | (v << at)


def clear_reuse(w):
    stall, yld = (w >> 105) & 15, (w >> 109) & 1
    return field(w, 122, 3, 0) if yld and 1 <= stall <= 11 else w


def bump(w, by):
    return field(w, 105, 4, ((w >> 105) & 15) + by)


def unguard(src, dst):
    data = bytearray(open(src, "rb").read())
    off = text_offset(data)
    put(data, off, 0xa8, field(word(data, off, 0xa8), 12, 4, 7))
    open(dst, "wb").write(data)


def rotate(sasstune, src, dst):
    orig = open(src, "rb").read()
    with tempfile.TemporaryDirectory() as tmp:
        t = src
        for k in range(len(PEEL)):  # one at a time: each lands before 0x1b0, which the branch names
            nxt = os.path.join(tmp, "t%d.cubin" % k)
            subprocess.run([sasstune, "insert", t, "-o", nxt, "--keep-reuse", "--slot", str(LOOP)],
                           check=True, stdout=subprocess.DEVNULL)
            t = nxt
        data = bytearray(open(t, "rb").read())
    o, off = text_offset(orig), text_offset(data)
    kept = [i for i in range(LOOP, BRA) if i not in MEMBERS]
    for j, i in enumerate(PEEL + kept + MEMBERS):
        put(data, off, LOOP + j, word(orig, o, i))
    edits = {LOOP + 3: [(81, 3, 5)], LOOP + 6: [(12, 3, 5)],
             TAIL + 2: [(81, 3, 5), (74, 2, 1), (87, 4, 2)], TAIL + 5: [(12, 3, 5)]}
    bumps = {0x1b: 2, 0x1d: 2, 0x1e: 1, 0x21: 1, 0x57: 4, 0x59: 1}
    for s in range(LOOP - 1, TB + BRA - LOOP):
        w = word(data, off, s)
        for at, n, v in edits.get(s, []):
            w = field(w, at, n, v)
        if s < TB or s >= TAIL - 1:
            w = clear_reuse(w)
        put(data, off, s, bump(w, bumps.get(s, 0)))
    open(dst, "wb").write(data)


def uncombine(src, dst):
    data = bytearray(open(src, "rb").read())
    off = text_offset(data)
    w = field(field(word(data, off, TAIL + 2), 74, 2, 0), 87, 4, 7)
    put(data, off, TAIL + 2, w)
    open(dst, "wb").write(data)


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "unguard":
        unguard(a[1], a[2])
    elif len(a) == 4 and a[0] == "rotate":
        rotate(a[1], a[2], a[3])
    elif len(a) == 3 and a[0] == "uncombine":
        uncombine(a[1], a[2])
    else:
        sys.exit(__doc__)
