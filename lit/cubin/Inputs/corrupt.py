#!/usr/bin/env python3
"""Write a damaged copy of a cubin: corrupt.py IN OUT WHAT, WHAT one of
magic, machine, osabi, shoff, secsize, phoff, nvinfo-format, attr (the first EXIT list's id
becomes 0x7e), lang6a (ptxas 13.x: the first EIATTR_LANGUAGE 0x66 becomes the unknown 0x6a),
warpsync (bit 16 set in the first WARPSYNC.ALL: an operand sasstune does not know), notelf (100 bytes of text)."""
import struct
import sys

src, dst, what = sys.argv[1:4]
b = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shnum, = struct.unpack_from("<H", b, 0x3c)
shstrndx, = struct.unpack_from("<H", b, 0x3e)


def sections():
    stro = struct.unpack_from("<Q", b, shoff + 64 * shstrndx + 24)[0]
    for i in range(shnum):
        h = shoff + 64 * i
        name_off, typ = struct.unpack_from("<II", b, h)
        off, size = struct.unpack_from("<QQ", b, h + 24)
        end = b.index(0, stro + name_off)
        yield i, b[stro + name_off:end].decode(), typ, off, size, h


if what == "magic":
    b[1:4] = b"XYZ"
elif what == "machine":
    b[18] = 62
elif what == "osabi":
    b[7] = 0x12
elif what == "shoff":
    struct.pack_into("<Q", b, 0x28, len(b) + 4096)
elif what == "phoff":
    struct.pack_into("<Q", b, 0x20, len(b) - 8)
elif what == "secsize":
    for i, name, typ, off, size, h in sections():
        if name.startswith(".text."):
            struct.pack_into("<Q", b, h + 32, len(b))
            break
elif what == "nvinfo-format":
    for i, name, typ, off, size, h in sections():
        if name.startswith(".nv.info."):
            b[off] = 9
            break
elif what in ("attr", "lang6a"):
    old, new = (0x1C, 0x7E) if what == "attr" else (0x66, 0x6A)
    done = False
    for i, name, typ, off, size, h in sections():
        if not name.startswith(".nv.info."):
            continue
        p = off
        while p < off + size and not done:
            fmt, attr = b[p], b[p + 1]
            if attr == old:
                b[p + 1] = new
                done = True
            p += 4 + (struct.unpack_from("<H", b, p + 2)[0] if fmt == 4 else 0)
elif what == "warpsync":
    for i, name, typ, off, size, h in sections():
        if not name.startswith(".text."):
            continue
        for p in range(off, off + size, 16):
            if struct.unpack_from("<Q", b, p)[0] & 0xffffffffffff0fff == 0x948:
                b[p + 2] |= 1
                break
        break
elif what == "notelf":
    b = bytearray(b"this is a text file, not a cubin\n" * 3)
else:
    sys.exit("unknown damage " + what)
open(dst, "wb").write(b)
