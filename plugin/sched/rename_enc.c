/* Register fields of the instruction forms the rename family (rename.c) re-encodes.
 * docs/sched.md "Register renaming", rule N2: an instruction is re-encodable when its opcode is
 * on a short list of fixed-latency math forms, it names no memory or constant operand, and every
 * R register it reads or writes is a single register in operand slot d, a, b or c whose field
 * (sm_80..90: Rd bits 16..23, Ra 24..31, Rb 32..39, Rc 64..71; /work/shared/reference/SASS.md
 * §1.4) holds exactly that register number, and no other of those four bytes holds the number
 * of a register operand (MOV R4, R0 keeps its source in the Rb field, Ra is 0: printed first,
 * the source reads as slot a and byte 3 matches by chance; this refuses it).  Slot b only when
 * no immediate is printed (an immediate moves Rb into the Rc field in some forms).  Anything
 * else is refused. */
#include "sched_internal.h"

#include <ctype.h>
#include <string.h>

static const char *const rn_ops[] = {"IMAD", "IADD3", "FFMA", "FADD", "FMUL", "LOP3", "SHF", "FMNMX",
				      "IMNMX", "SEL", "FSEL", "LEA", "ISETP", "FSETP", "PRMT", NULL};

static bool listed(const char *opcode)
{
	size_t n = strcspn(opcode, ".");
	for (const char *const *p = rn_ops; *p; p++)
		if (strlen(*p) == n && !strncmp(*p, opcode, n))
			return true;
	return false;
}

/* Whether the operand text prints an immediate (a token starting with a digit, INF or NAN). */
static bool prints_immediate(const char *ops)
{
	for (const char *p = ops; *p;) {
		while (*p == ' ' || *p == ',' || *p == '-' || *p == '|' || *p == '!' || *p == '~' || *p == '+')
			p++;
		if (isdigit((unsigned char)*p) || !strncmp(p, "INF", 3) || !strncmp(p, "QNAN", 4) || !strncmp(p, "NAN", 3))
			return true;
		p += strcspn(p, ",");
	}
	return false;
}

int sc_rename_byte(unsigned slot)
{
	return slot == ST_SLOT_D ? 2 : slot == ST_SLOT_A ? 3 : slot == ST_SLOT_B ? 4 : slot == ST_SLOT_C ? 8 : -1;
}

bool sc_rename_encodable(const st_sass_insn *x, const uint8_t word[16])
{
	if (!listed(x->opcode) || x->cls != ST_CLASS_ALU || (x->flags & (ST_F_VARLAT | ST_F_PCREL)) ||
	    strchr(x->operands, '['))
		return false;
	bool imm = prints_immediate(x->operands);
	unsigned claimed = 0; /* bit per byte (2, 3, 4, 8) an R operand sits in */
	for (int pass = 0; pass < 2; pass++) {
		const st_sass_reg *r = pass ? x->uses : x->defs;
		unsigned n = pass ? x->nuses : x->ndefs;
		for (unsigned i = 0; i < n; i++) {
			if (r[i].file != ST_RF_R)
				continue;
			int b = sc_rename_byte(r[i].slot);
			if (r[i].count != 1 || b < 0 || (pass == 0) != (r[i].slot == ST_SLOT_D) ||
			    (r[i].slot == ST_SLOT_B && imm) || word[b] != r[i].index)
				return false;
			claimed |= 1u << b;
		}
	}
	for (int pass = 0; pass < 2; pass++) { /* a field byte no operand claims must not look like one */
		const st_sass_reg *r = pass ? x->uses : x->defs;
		unsigned n = pass ? x->nuses : x->ndefs;
		for (unsigned i = 0; i < n; i++)
			for (unsigned b = 2; r[i].file == ST_RF_R && b <= 8; b = b == 4 ? 8 : b + 1)
				if (!(claimed >> b & 1) && word[b] == r[i].index)
					return false;
	}
	return true;
}
