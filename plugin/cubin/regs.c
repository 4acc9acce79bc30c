/* Register-field edits (bytes 2, 3, 4 and 8 of an instruction word: Rd, Ra, Rb, Rc on sm_80..90),
 * for the sched module's rename family.  Like st_cubin_set_ctrl, the edit is written into the
 * current image and into the original bytes the image is rebuilt from, so it stays with its
 * instruction through later st_cubin_permute() calls (those bytes are never patched by a move:
 * the caller renames only instructions without code references). */
#include "cubin_internal.h"

st_status st_cubin_set_regs(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err)
{
	static const uint8_t mask[16] = {[2] = 0xff, [3] = 0xff, [4] = 0xff, [8] = 0xff};
	return cubin_set_masked(c, k, slot, word, mask, "the register fields", err);
}
