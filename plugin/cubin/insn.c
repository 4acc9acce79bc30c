/* Instruction-word fields the cubin module needs: the opcode and the PC-relative branch
 * immediate (SASS.md §1.5).  sm_70..sm_89: 48-bit signed at bits 34..81; sm_90+: 56-bit signed
 * made of bits 34..81 (high 48) and bits 16..23 (low 8); BSSY: 30-bit signed at 34..63 on both.
 * Immediates count 4-byte units from the next instruction. */
#include "cubin_internal.h"
#include "util/util.h"

st_word st_word_load(const uint8_t *p)
{
	st_word w = {st_le64(p), st_le64(p + 8)};
	return w;
}

void st_word_store(uint8_t *p, st_word w)
{
	st_put_le64(p, w.lo);
	st_put_le64(p + 8, w.hi);
}

unsigned st_word_opcode(st_word w)
{
	return (unsigned)(w.lo & 0xfff) | (unsigned)((w.hi >> 27) & 1) << 12;
}

st_branch_field st_branch_kind(unsigned opcode, const char **name)
{
	const char *n = NULL;
	st_branch_field f = ST_BF_WIDE;
	switch (opcode) {
	case 0x947: n = "BRA"; break;
	case 0x1947: n = "BRA.DIV"; break;
	case 0x944: n = "CALL.REL"; break;
	case 0x949: n = "BRX"; break;
	case 0x950: n = "RET.REL"; break;
	case 0x945: n = "BSSY"; f = ST_BF_BSSY; break;
	default: f = ST_BF_NONE; break;
	}
	if (name)
		*name = n;
	return f;
}

static int64_t sext(uint64_t v, unsigned bits)
{
	uint64_t m = 1ull << (bits - 1);
	v &= (bits == 64) ? ~0ull : ((1ull << bits) - 1);
	return (int64_t)((v ^ m) - m);
}

/* bits 34..81 of the word, as an unsigned 48-bit number */
static uint64_t field48(st_word w)
{
	return (w.lo >> 34) | ((w.hi & 0x3ffff) << 30);
}

static void set_field48(st_word *w, uint64_t v)
{
	v &= (1ull << 48) - 1;
	w->lo = (w->lo & ((1ull << 34) - 1)) | (v << 34);
	w->hi = (w->hi & ~0x3ffffull) | (v >> 30);
}

int64_t st_branch_imm(st_word w, unsigned sm, st_branch_field f)
{
	if (f == ST_BF_BSSY)
		return sext((w.lo >> 34) & ((1ull << 30) - 1), 30);
	if (f != ST_BF_WIDE)
		return 0;
	if (sm >= 90)
		return sext(field48(w) << 8 | ((w.lo >> 16) & 0xff), 56);
	return sext(field48(w), 48);
}

bool st_branch_set_imm(st_word *w, unsigned sm, st_branch_field f, int64_t imm)
{
	if (f == ST_BF_BSSY) {
		if (imm < -(1ll << 29) || imm >= (1ll << 29))
			return false;
		uint64_t v = (uint64_t)imm & ((1ull << 30) - 1);
		w->lo = (w->lo & ~(((1ull << 30) - 1) << 34)) | (v << 34);
		return true;
	}
	if (f != ST_BF_WIDE)
		return false;
	if (sm >= 90) {
		if (imm < -(1ll << 55) || imm >= (1ll << 55))
			return false;
		uint64_t v = (uint64_t)imm & ((1ull << 56) - 1);
		w->lo = (w->lo & ~(0xffull << 16)) | ((v & 0xff) << 16);
		set_field48(w, v >> 8);
		return true;
	}
	if (imm < -(1ll << 47) || imm >= (1ll << 47))
		return false;
	set_field48(w, (uint64_t)imm);
	return true;
}
