/* Predicate-field edits for the sched module's pipe family (plugin/sched/pipe_apply.c): the guard
 * [15:12] of any instruction, and on ISETP (opcodes 0x20c/0x80c with bit 91 clear, 0xc0c with bit 91 set) the
 * combining op [75:74], the destinations [83:81] and [86:84] and the combining input [90:87]
 * (docs/cubin.md "Predicate fields").  Like st_cubin_set_regs, the edit goes into the current image
 * and into the original bytes the image is rebuilt from, so it stays with its instruction. */
#include "cubin_internal.h"

#include <string.h>

static bool bit_of(const uint8_t w[16], unsigned b) { return (w[b / 8] >> (b % 8)) & 1; }

static bool isetp(const uint8_t w[16])
{
	unsigned op = (unsigned)w[0] | (unsigned)(w[1] & 0xf) << 8;
	return ((op == 0x20c || op == 0x80c) && !bit_of(w, 91)) || (op == 0xc0c && bit_of(w, 91));
}

static bool pred_bit(const uint8_t w[16], unsigned b)
{
	if (b >= 12 && b <= 15)
		return true;
	return isetp(w) && ((b >= 74 && b <= 75) || (b >= 81 && b <= 90));
}

st_status st_cubin_set_preds(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err)
{
	const st_kernel_info *ki;
	uint8_t *cur, *orig;
	st_status rc = cubin_slot_words(c, k, slot, &ki, &cur, &orig, err);
	if (rc)
		return rc;
	if (isetp(cur) != isetp(word))
		return st_error_set(err, ST_EINVAL, "%s: .text.%s: the new word for 0x%zx changes the opcode", c->name,
				    ki->name, 16 * slot);
	uint8_t mask[16] = {0};
	for (unsigned b = 0; b < 128; b++)
		if (pred_bit(cur, b))
			mask[b / 8] |= (uint8_t)(1u << (b % 8));
	return cubin_set_masked(c, k, slot, word, mask, "the predicate fields", err);
}
