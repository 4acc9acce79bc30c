#!/usr/bin/env python3
"""patch_word.py IN OUT LO HI NEWHI: copy a cubin, replacing the instruction word (LO, HI)
(it must occur once) by (LO, NEWHI).  Used to make an ISETP with two predicate outputs."""
import struct
import sys

src, dst, lo, hi, new = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16), int(sys.argv[5], 16)
data = open(src, "rb").read()
old = struct.pack("<QQ", lo, hi)
if data.count(old) != 1:
    sys.exit("patch_word: the word occurs %d times" % data.count(old))
open(dst, "wb").write(data.replace(old, struct.pack("<QQ", lo, new)))
