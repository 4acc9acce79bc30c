/* The pipe checker's reading of one rotated loop body and of the edited words (docs/sched.md
 * "Checker: pipe").  Field layout, established by flipping bits of fixture words under nvdisasm
 * 12.8 (sm_90; docs/sched.md): guard = bits 12..14 (7 = PT) and 15 (negated); ISETP: 72 .EX,
 * 73 .U32, 74..75 combine op (0 AND, 1 OR, 2 XOR), 76..78 compare, 81..83 first destination,
 * 84..86 second destination, 87..89 combining predicate input, 90 its negation. */
#include "check_pipe.h"

#include <stdio.h>
#include <string.h>

/* Split the tuned body into the kept instructions (the original's, in order, words untouched) and
 * the moved tail (the rest of B's instructions, in original order) before the back branch. */
bool cp_match_loop(cp *p, cp_loop *lo)
{
	uint32_t nb = lo->l - lo->f + 1, tb = lo->tp + lo->L, tend = tb + nb - 1, t = tb, o = lo->f;
	uint32_t li = (uint32_t)(lo - p->loops) + 1;
	while (t < tend && o < lo->l) {
		if (cp_same_word(p->ocode + 16 * o, p->tcode + 16 * t, false)) {
			p->src[t] = o, p->kind[t] = CP_SAME, p->inv[o] = t;
			t++, o++;
		} else {
			lo->mem[o++ - lo->f] = 1;
		}
	}
	for (; o < lo->l; o++)
		lo->mem[o - lo->f] = 1;
	for (uint32_t m = lo->f; t < tend; t++, m++) {
		while (m < lo->l && !lo->mem[m - lo->f])
			m++;
		if (m >= lo->l) {
			cp_flag(p, t, "P7", "loop 0x%x: the body cannot be read as kept instructions then moved ones", 16 * lo->f);
			return false;
		}
		p->src[t] = m, p->kind[t] = CP_MOVED, p->inv[m] = t;
	}
	p->src[tend] = lo->l, p->kind[tend] = CP_SAME, p->inv[lo->l] = tend;
	for (t = lo->tp; t <= tend; t++)
		p->lp[t] = li;
	for (t = lo->tp; t < tb; t++)
		p->kind[t] = CP_PEEL;
	lo->pe = p->in[lo->l].guard, lo->cneg = p->in[lo->l].guard_neg;
	return true;
}

static bool is_isetp(const st_sass_insn *x)
{
	return !strncmp(x->opcode, "ISETP", 5) && (x->opcode[5] == 0 || x->opcode[5] == '.');
}

/* The word the rules want at tuned slot j: the original with the rename and, in B, the combine. */
static void wanted(const cp *p, const cp_loop *lo, uint32_t j, uint8_t w[16])
{
	uint32_t i = p->src[j];
	const st_sass_insn *x = &p->in[i];
	memcpy(w, p->ocode + 16 * i, 16);
	unsigned g = cp_bits(w, 12, 3);
	if ((x->flags & ST_F_LOAD) && g < 7 && lo->ren[g] >= 0)
		cp_set_bits(w, 12, 3, (unsigned)lo->ren[g]);
	if (is_isetp(x) && lo->ren[cp_bits(w, 81, 3) & 7] >= 0 && cp_bits(w, 81, 3) < 7)
		cp_set_bits(w, 81, 3, (unsigned)lo->ren[cp_bits(w, 81, 3)]);
	if (p->kind[j] != CP_MOVED)
		return;
	switch (lo->comb[i - lo->f]) {
	case CP_GUARD_CONT:
		cp_set_bits(w, 12, 4, (unsigned)lo->pe | (unsigned)lo->cneg << 3);
		break;
	case CP_OR_BREAK: /* Pg = cmp OR !continue */
		cp_set_bits(w, 74, 2, 1);
		cp_set_bits(w, 87, 4, (unsigned)lo->pe | (unsigned)!lo->cneg << 3);
		break;
	case CP_AND_CONT: /* Pg = cmp AND continue */
		cp_set_bits(w, 74, 2, 0);
		cp_set_bits(w, 87, 4, (unsigned)lo->pe | (unsigned)lo->cneg << 3);
		break;
	}
}

/* The rewritten instruction's guard, destination and predicate input, read from its tuned word. */
static void retarget(cp *p, uint32_t j)
{
	st_sass_insn *t = &p->ti[j];
	const st_sass_insn *x = &p->in[p->src[j]];
	st_sass_reg *r = p->tregs + (size_t)j * CP_REGS;
	if (x->ndefs + x->nuses + 2 > CP_REGS)
		return;
	unsigned g = cp_bits(t->word, 12, 3), neg = cp_bits(t->word, 15, 1), nd = 0, nu = 0;
	for (unsigned d = 0; d < x->ndefs; d++) {
		r[nd] = x->defs[d];
		if (is_isetp(x) && r[nd].file == ST_RF_P && r[nd].index == cp_bits(p->ocode + 16 * x->index, 81, 3))
			r[nd].index = (uint16_t)cp_bits(t->word, 81, 3);
		nd++;
	}
	for (unsigned u = 0; u < x->nuses; u++)
		if (x->uses[u].slot != ST_SLOT_G)
			r[nd + nu++] = x->uses[u];
	if (g < 7)
		r[nd + nu++] = (st_sass_reg){(uint16_t)g, ST_RF_P, 1, ST_SLOT_G};
	if (is_isetp(x) && cp_bits(t->word, 87, 3) < 7 && cp_bits(p->ocode + 16 * x->index, 87, 3) == 7)
		r[nd + nu++] = (st_sass_reg){(uint16_t)cp_bits(t->word, 87, 3), ST_RF_P, 1, ST_SLOT_C};
	t->guard = g < 7 ? (int8_t)g : -1, t->guard_neg = (uint8_t)neg, t->guard_file = ST_RF_P;
	t->defs = r, t->ndefs = (uint8_t)nd, t->uses = r + nd, t->nuses = (uint8_t)nu;
}

/* A predicate field (3 bits at `at`, the negation bit after them) as text: "!P2", "PT". */
static void pred_str(char *b, size_t n, const uint8_t *w, unsigned at)
{
	unsigned g = cp_bits(w, at, 3), neg = cp_bits(w, at + 3, 1);
	snprintf(b, n, "%sP%c", neg ? "!" : "", g < 7 ? (char)('0' + g) : 'T');
}

static void guard_str(char *b, size_t n, const uint8_t *w)
{
	b[0] = '@';
	pred_str(b + 1, n - 1, w, 12);
}

/* Which fields of the tuned word tw differ from the wanted w, one line. */
static void report_edit(cp *p, uint32_t j, const st_sass_insn *x, const uint8_t *w, const uint8_t *tw)
{
	uint8_t t2[16], t3[16];
	memcpy(t2, tw, 16);
	cp_set_bits(t2, 12, 4, cp_bits(w, 12, 4));
	memcpy(t3, t2, 16);
	cp_set_bits(t3, 74, 2, cp_bits(w, 74, 2));
	cp_set_bits(t3, 81, 3, cp_bits(w, 81, 3));
	cp_set_bits(t3, 87, 4, cp_bits(w, 87, 4));
	if (!cp_same_word(w, t2, false) && !(is_isetp(x) && cp_same_word(w, t3, false))) {
		cp_flag(p, j, "P6", "%s from 0x%x: word edited outside the guard and ISETP fields the rules allow",
			x->opcode, 16 * x->index);
		return;
	}
	char gw[8], gt[8];
	guard_str(gw, sizeof gw, w), guard_str(gt, sizeof gt, tw);
	if (strcmp(gw, gt))
		cp_flag(p, j, "P6", "%s from 0x%x: guard %s, the rules want %s", x->opcode, 16 * x->index, gt, gw);
	if (!cp_same_word(w, t2, false)) {
		char it[8], iw[8];
		pred_str(it, sizeof it, tw, 87), pred_str(iw, sizeof iw, w, 87);
		cp_flag(p, j, "P6", "%s from 0x%x: combine op, input, destination %u, %s, P%u where the rules want %u, %s, P%u",
			x->opcode, 16 * x->index, cp_bits(tw, 74, 2), it, cp_bits(tw, 81, 3), cp_bits(w, 74, 2), iw,
			cp_bits(w, 81, 3));
	}
}

void cp_check_edits(cp *p, cp_loop *lo)
{
	uint32_t tend = lo->tp + lo->L + (lo->l - lo->f);
	for (uint32_t j = lo->tp; j < tend; j++) {
		if (p->kind[j] == CP_SAME || p->src[j] == CP_NONE)
			continue;
		uint8_t w[16];
		const uint8_t *tw = p->tcode + 16 * j;
		const st_sass_insn *x = &p->in[p->src[j]];
		wanted(p, lo, j, w);
		if (!cp_same_word(w, tw, false))
			report_edit(p, j, x, w, tw);
		retarget(p, j);
	}
}
