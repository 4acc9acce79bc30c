/* Predicate fields of sm_80..90 instruction words, as the pipe family edits them (established with
 * nvdisasm 12.8 on ISETP words of the fixtures, docs/cubin.md "Predicate fields"):
 *   guard Pg [14:12] (7 = PT), negate [15];
 *   ISETP: compare [78:76], .U32 when [73] is clear, combining op [75:74] (0 AND, 1 OR, 2 XOR),
 *   destination Pu [83:81], second destination Pv [86:84], combining input Pp [89:87] with negate [90]. */
#include "pipe_internal.h"

unsigned pp_bits(const uint8_t w[16], unsigned bit, unsigned width)
{
	unsigned v = 0;
	for (unsigned i = 0; i < width; i++)
		v |= (unsigned)((w[(bit + i) / 8] >> ((bit + i) % 8)) & 1) << i;
	return v;
}

void pp_set_bits(uint8_t w[16], unsigned bit, unsigned width, unsigned v)
{
	for (unsigned i = 0; i < width; i++) {
		uint8_t m = (uint8_t)(1u << ((bit + i) % 8));
		w[(bit + i) / 8] = (uint8_t)(((v >> i) & 1) ? w[(bit + i) / 8] | m : w[(bit + i) / 8] & ~m);
	}
}

/* ISETP opcodes with P destinations seen in the fixtures ({bit 91, bits 0..11}): register 0x20c,
 * immediate 0x80c (bit 91 clear), uniform-register second operand 0xc0c (bit 91 set).  The UP forms
 * (0x28c, 0x88c) are not edited. */
bool pp_is_isetp_word(const uint8_t w[16])
{
	unsigned op = pp_bits(w, 0, 12), b91 = pp_bits(w, 91, 1);
	return ((op == 0x20c || op == 0x80c) && !b91) || (op == 0xc0c && b91);
}

void pp_guard_set(uint8_t w[16], int p, int neg)
{
	pp_set_bits(w, 12, 3, p < 0 ? 7u : (unsigned)p);
	pp_set_bits(w, 15, 1, p < 0 ? 0u : (unsigned)(neg != 0));
}

int pp_isetp_dst(const uint8_t w[16]) { return (int)pp_bits(w, 81, 3); }
int pp_isetp_dst2(const uint8_t w[16]) { return (int)pp_bits(w, 84, 3); }
int pp_isetp_op(const uint8_t w[16]) { return (int)pp_bits(w, 74, 2); }

int pp_isetp_pc(const uint8_t w[16], int *neg)
{
	*neg = (int)pp_bits(w, 90, 1);
	return (int)pp_bits(w, 87, 3);
}

void pp_isetp_set(uint8_t w[16], int dst, int op, int pc, int pc_neg)
{
	pp_set_bits(w, 81, 3, (unsigned)dst);
	pp_set_bits(w, 74, 2, (unsigned)op);
	pp_set_bits(w, 87, 3, pc < 0 ? 7u : (unsigned)pc);
	pp_set_bits(w, 90, 1, (unsigned)(pc_neg != 0));
}
