/* Form 2's new words (Q6-Q8), each with its decoded form for the timing (pa_edit).  The fields edited
 * (sm_80..90, read back with nvdisasm 12.8, docs/pipeline.md "Form 2"): the R operands Rd [23:16],
 * Ra [31:24], Rb [39:32], Rc [71:64] (an operand's slot D, A, B, C); on LEA/IADD3/ISETP the predicate
 * destination [83:81] (ISETP's second [86:84]) and the predicate input [89:87] (IADD3's second carry
 * fields are not edited: such a member is refused); the guard [15:12]; on
 * U (VIADD 0x836 / IADD3 0x810) the 32-bit immediate [63:32].  Every field is checked to hold the
 * register the decoder named before it is changed: a word whose layout is not this one is refused. */
#include "pipe2_internal.h"

#include <stdio.h>
#include <string.h>

void pq_copy_edit(const st_sass_insn *y, pa_edit *e)
{
	e->x = *y;
	unsigned nd = y->ndefs < PA_REGS ? y->ndefs : PA_REGS, nu = y->nuses < PA_REGS - 1 ? y->nuses : PA_REGS - 1;
	memcpy(e->defs, y->defs, nd * sizeof *e->defs);
	memcpy(e->uses, y->uses, nu * sizeof *e->uses);
	e->x.ndefs = (uint8_t)nd;
	e->x.nuses = (uint8_t)nu;
	e->x.defs = e->defs;
	e->x.uses = e->uses;
	memcpy(e->w, y->word, 16);
	memcpy(e->x.word, y->word, 16);
}

static int r_byte(unsigned slot)
{
	return slot == ST_SLOT_D ? 2 : slot == ST_SLOT_A ? 3 : slot == ST_SLOT_B ? 4 : slot == ST_SLOT_C ? 8 : -1;
}

static bool cannot(pp_why *why, const st_sass_insn *y, const char *what, unsigned r)
{
	if (why) {
		why->rule = "Q7";
		why->off = y->offset;
		snprintf(why->msg, sizeof why->msg, "%s: %s%u is not where form 2 edits it in the word", y->opcode, what, r);
	}
	return false;
}

/* Operand o of y (def or use) in e renamed: R by φ (or i -> i' in the prefetch block), P by φ. */
static bool rename_op(const st_sass_insn *y, pa_edit *e, st_sass_reg *o, bool def, const pq_cand *q, int prefetch,
		      pp_why *why)
{
	if (o->file == ST_RF_R) {
		int to = -1;
		if (!def && prefetch && o->count > 1 && q->iv >= o->index && q->iv < (unsigned)o->index + o->count)
			return cannot(why, y, "i in a wide operand at R", o->index); /* i -> i' renames one register only */
		if (!def && prefetch && o->count == 1 && o->index == q->iv)
			to = (int)q->ip;
		else if (o->index < 256 && q->phi_r[o->index] >= 0)
			to = q->phi_r[o->index];
		if (to < 0)
			return true;
		for (unsigned k = 1; to != (int)q->ip && k < o->count; k++)
			if (q->phi_r[o->index + k] != to + (int)k)
				return cannot(why, y, "the tuple of R", o->index);
		int b = r_byte(o->slot);
		if (b < 0 || e->w[b] != o->index)
			return cannot(why, y, "R", o->index);
		e->w[b] = (uint8_t)to;
		o->index = (uint16_t)to;
		return true;
	}
	if (o->file != ST_RF_P || o->slot == ST_SLOT_G || o->index > 7 || q->phi_p[o->index] < 0)
		return true;
	bool isetp = pp_is_isetp_word(e->w); /* the second destination [86:84]: ISETP's only (cubin preds.c) */
	unsigned bit = def ? (pp_bits(e->w, 81, 3) == o->index ? 81 : isetp && pp_bits(e->w, 84, 3) == o->index ? 84 : 0)
			   : (pp_bits(e->w, 87, 3) == o->index ? 87 : 0);
	if (!bit)
		return cannot(why, y, "P", o->index);
	pp_set_bits(e->w, bit, 3, (unsigned)q->phi_p[o->index]);
	o->index = (uint16_t)q->phi_p[o->index];
	return true;
}

bool pq_member_edit(const pp_kern *x, const pq_cand *q, uint32_t i, int prefetch, pa_edit *e, pp_why *why)
{
	const st_sass_insn *y = &x->in[i];
	if (y->ndefs > PA_REGS || y->nuses + 1 > PA_REGS)
		return cannot(why, y, "more operands than followed, R", 0);
	pq_copy_edit(y, e);
	for (unsigned d = 0; d < y->ndefs; d++)
		if (!rename_op(y, e, &e->defs[d], true, q, prefetch, why))
			return false;
	for (unsigned u = 0; u < y->nuses; u++)
		if (!rename_op(y, e, &e->uses[u], false, q, prefetch, why))
			return false;
	if (pp_is_load(&q->g, i) && prefetch) { /* continue(Pf): @Pf for `@Pe BRA`, @!Pf for `@!Pe BRA` */
		pp_guard_set(e->w, q->pf, q->L.pe_neg);
		e->uses[e->x.nuses++] = (st_sass_reg){(uint16_t)q->pf, ST_RF_P, 1, ST_SLOT_G};
		e->x.guard = (int8_t)q->pf;
		e->x.guard_file = ST_RF_P;
		e->x.guard_neg = (uint8_t)q->L.pe_neg;
	}
	memcpy(e->x.word, e->w, 16);
	return true;
}

/* The hand-over of destination register d: U's word, Rd = d, Ra = φ(d), immediate 0. */
void pq_hand_edit(const pp_kern *x, const pq_cand *q, unsigned d, pa_edit *e)
{
	pq_copy_edit(&x->in[q->u], e);
	e->w[2] = (uint8_t)d;
	e->w[3] = (uint8_t)q->phi_r[d];
	memset(e->w + 4, 0, 4);
	e->defs[0].index = (uint16_t)d;
	e->uses[0].index = (uint16_t)q->phi_r[d];
	memcpy(e->x.word, e->w, 16);
}

/* I: U's word with Rd = i' (source i and immediate s unchanged). */
void pq_i_edit(const pp_kern *x, const pq_cand *q, pa_edit *e)
{
	pq_copy_edit(&x->in[q->u], e);
	e->w[2] = (uint8_t)q->ip;
	e->defs[0].index = (uint16_t)q->ip;
	memcpy(e->x.word, e->w, 16);
}

/* F: E's word with destination Pf and the operand that was i now i'. */
void pq_f_edit(const pp_kern *x, const pq_cand *q, pa_edit *e)
{
	const st_sass_insn *y = &x->in[q->e];
	pq_copy_edit(y, e);
	pp_set_bits(e->w, 81, 3, (unsigned)q->pf);
	e->w[q->ebyte] = (uint8_t)q->ip;
	for (unsigned d = 0; d < e->x.ndefs; d++)
		if (e->defs[d].file == ST_RF_P)
			e->defs[d].index = (uint16_t)q->pf;
	for (unsigned u = 0; u < e->x.nuses; u++)
		if (e->uses[u].file == ST_RF_R && e->uses[u].index == q->iv)
			e->uses[u].index = (uint16_t)q->ip;
	memcpy(e->x.word, e->w, 16);
}
