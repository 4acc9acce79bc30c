/* Register-field edits (bytes 2, 3, 4 and 8 of an instruction word: Rd, Ra, Rb, Rc on sm_80..90),
 * for the sched module's rename family.  Like st_cubin_set_ctrl, the edit is written into the
 * current image and into the original bytes the image is rebuilt from, so it stays with its
 * instruction through later st_cubin_permute() calls (those bytes are never patched by a move:
 * the caller renames only instructions without code references). */
#include "cubin_internal.h"

#include <string.h>

static bool reg_byte(size_t b) { return b == 2 || b == 3 || b == 4 || b == 8; }

st_status st_cubin_set_regs(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err)
{
	const st_kernel_info *ki;
	uint8_t *cur, *orig;
	st_status rc = cubin_slot_words(c, k, slot, &ki, &cur, &orig, err);
	if (rc)
		return rc;
	for (size_t b = 0; b < 16; b++)
		if (!reg_byte(b) && word[b] != cur[b])
			return st_error_set(err, ST_EINVAL,
					    "%s: .text.%s: the new word for 0x%zx changes bits outside the register fields",
					    c->name, ki->name, 16 * slot);
	for (size_t b = 0; b < 16; b++)
		if (reg_byte(b)) {
			cur[b] = word[b];
			orig[b] = word[b];
		}
	return ST_OK;
}
