/* Control-field edits (bits 105..124 of an instruction word), for the sched module.
 * The edit is written into the current image and into the original bytes the image is rebuilt
 * from, so it stays with its instruction through later st_cubin_permute() calls. */
#include "cubin_internal.h"
#include "util/util.h"

#define CTRL_LO_HI_MASK ((((uint64_t)1 << 61) - 1) & ~(((uint64_t)1 << 41) - 1)) /* hi bits 41..60 */

st_status cubin_slot_words(st_cubin *c, size_t k, size_t slot, const st_kernel_info **ki, uint8_t **cur,
			   uint8_t **orig, st_error *err)
{
	if (k >= c->v.nkernels)
		return st_error_set(err, ST_EINVAL, "%s: kernel index %zu out of range (%zu kernels)", c->name, k,
				    c->v.nkernels);
	*ki = &c->v.kernels[k];
	if (slot >= (*ki)->insn_count)
		return st_error_set(err, ST_EINVAL, "%s: .text.%s: slot %zu past the last slot %zu", c->name, (*ki)->name,
				    slot, (*ki)->insn_count ? (*ki)->insn_count - 1 : 0);
	*cur = c->image + (*ki)->file_offset + 16 * slot;
	size_t oslot = c->cum && c->cum[k] ? c->cum[k][slot] : slot;
	*orig = c->orig + (*ki)->file_offset + 16 * oslot; /* sections never move */
	return ST_OK;
}

st_status cubin_set_masked(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], const uint8_t mask[16],
			   const char *fields, st_error *err)
{
	const st_kernel_info *ki;
	uint8_t *cur, *orig;
	st_status rc = cubin_slot_words(c, k, slot, &ki, &cur, &orig, err);
	if (rc)
		return rc;
	for (size_t b = 0; b < 16; b++)
		if ((word[b] ^ cur[b]) & ~mask[b])
			return st_error_set(err, ST_EINVAL, "%s: .text.%s: the new word for 0x%zx changes bits outside %s",
					    c->name, ki->name, 16 * slot, fields);
	for (size_t b = 0; b < 16; b++) {
		cur[b] = (uint8_t)((cur[b] & ~mask[b]) | (word[b] & mask[b]));
		orig[b] = (uint8_t)((orig[b] & ~mask[b]) | (word[b] & mask[b]));
	}
	return ST_OK;
}

st_status st_cubin_set_ctrl(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err)
{
	uint8_t mask[16] = {0};
	st_put_le64(mask + 8, CTRL_LO_HI_MASK);
	return cubin_set_masked(c, k, slot, word, mask, "the control fields 105..124", err);
}
