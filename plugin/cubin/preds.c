/* Predicate-field edits for the sched module's pipe family (plugin/sched/pipe_apply.c, pipe2_words.c):
 * the guard [15:12] of any instruction; on ISETP (opcodes 0x20c/0x80c with bit 91 clear, 0xc0c with
 * bit 91 set) the combining op [75:74], the destinations [83:81] and [86:84] and the combining input
 * [90:87] (docs/cubin.md "Predicate fields"); on IADD3 and LEA the carry destination [83:81] and input
 * [90:87].  Like st_cubin_set_regs, the edit goes into the current image and into the original bytes
 * the image is rebuilt from, so it stays with its instruction. */
#include "cubin_internal.h"

#include <string.h>

static bool bit_of(const uint8_t w[16], unsigned b) { return (w[b / 8] >> (b % 8)) & 1; }

static bool isetp(const uint8_t w[16])
{
	unsigned op = (unsigned)w[0] | (unsigned)(w[1] & 0xf) << 8;
	return ((op == 0x20c || op == 0x80c) && !bit_of(w, 91)) || (op == 0xc0c && bit_of(w, 91));
}

/* IADD3 (0x210 register, 0x810 immediate, 0xc10 uniform) and LEA (0x211, 0x811, 0xc11): the carry
 * destination [83:81] and the carry input [89:87] with its negate [90] (the form-2 rename of the pipe
 * family, pipe2_words.c; read back through nvdisasm 12.8 in test_pipe2). */
static bool carry_alu(const uint8_t w[16])
{
	unsigned op = (unsigned)w[0] | (unsigned)(w[1] & 0xf) << 8;
	return op == 0x210 || op == 0x810 || op == 0xc10 || op == 0x211 || op == 0x811 || op == 0xc11;
}

static bool pred_bit(const uint8_t w[16], unsigned b)
{
	if (b >= 12 && b <= 15)
		return true;
	if (carry_alu(w) && ((b >= 81 && b <= 83) || (b >= 87 && b <= 90)))
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
