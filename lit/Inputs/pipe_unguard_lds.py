"""Make the layernorm fixture's `@!P2 LDS R14, [R9]` at 0xa80 unguarded in a copy of the cubin and of
its listing (lit/pipe/pipe.test): as compiled, that guarded load keeps R14 live out of loop 0x1b0 and the
fixture has no pipe candidate.  usage: pipe_unguard_lds.py CUBIN LISTING OUT_CUBIN OUT_LISTING"""
import sys

cubin, listing, out_cubin, out_listing = sys.argv[1:5]
data = bytearray(open(cubin, "rb").read())
word = bytes.fromhex("84a90e0900000000")  # lo 0x00000000090ea984, little-endian
at = data.find(word)
assert at >= 0 and data.find(word, at + 1) < 0, "the LDS word is not unique"
data[at + 1] = 0x79  # guard field [15:12] = 7 (PT), negate [15] clear
open(out_cubin, "wb").write(data)
text = open(listing).read()
for old, new in (("@!P2 LDS R14, [R9] ;", "     LDS R14, [R9] ;"), ("0x00000000090ea984", "0x00000000090e7984")):
    assert text.count(old) == 1, old
    text = text.replace(old, new)
open(out_listing, "w").write(text)
