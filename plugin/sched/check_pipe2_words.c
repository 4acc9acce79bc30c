/* The pipe form-2 checker's reading of the words (docs/sched.md "Checker: pipe form 2"): the
 * hand-overs and I (copies of U), F (a copy of E), the prefetch block's and the peel's member
 * copies, and phi read off them.  Fields, each confirmed by flipping it in the rowsum fixture's
 * words under nvdisasm 12.8 (sm_90): guard [14:12] (7 = PT) and negation [15]; Rd [23:16], Ra
 * [31:24], Rb [39:32], Rc [71:64]; VIADD's / IADD3's 32-bit immediate [63:32]; a first predicate
 * destination [83:81] (ISETP's Pd, LEA's carry-out), a second [86:84], a predicate source [89:87]
 * (ISETP's combining input, LEA.HI.X's carry-in); the control fields [124:105]. */
#include "check_pipe2.h"

#include <stdio.h>
#include <string.h>

/* The tuned word at t equals the original's at o outside the fields listed (at, len pairs, 0-ended)
 * and the control bits. */
static bool same_outside(const cp *p, uint32_t o, uint32_t t, const unsigned *fields)
{
	uint8_t w[16];
	memcpy(w, p->tcode + 16 * t, 16);
	for (; fields[1]; fields += 2)
		cp_set_bits(w, fields[0], fields[1], cp_bits(p->ocode + 16 * o, fields[0], fields[1]));
	return cp_same_word(p->ocode + 16 * o, w, false);
}

bool cp2_ucopy(const cp2 *q, const cp2_loop *l, uint32_t t)
{
	static const unsigned f[] = {12, 4, 16, 8, 24, 8, 32, 32, 0, 0};
	return (!q->t || !strcmp(q->t[t].opcode, q->p->in[l->u].opcode)) && same_outside(q->p, l->u, t, f);
}

bool cp2_ecopy(const cp2 *q, const cp2_loop *l, uint32_t t)
{
	static const unsigned f[] = {12, 4, 24, 8, 32, 8, 81, 3, 0, 0};
	return (!q->t || !strcmp(q->t[t].opcode, q->p->in[l->lo->e].opcode)) && same_outside(q->p, l->lo->e, t, f);
}

static void rname(char *b, size_t n, unsigned file, unsigned i)
{
	if (file == ST_RF_R && i == 255)
		snprintf(b, n, "RZ");
	else if (file == ST_RF_P && i == 7)
		snprintf(b, n, "PT");
	else
		st_sass_reg_str(b, n, file, i);
}

/* phi(file, from) = to, seen at tuned slot t; false (reported) when phi already maps from elsewhere. */
static bool phi_set(cp2 *q, cp2_loop *l, unsigned file, unsigned from, unsigned to, uint32_t t, const char *rule)
{
	int16_t *m = file == ST_RF_R ? l->rphi : file == ST_RF_P ? l->pphi : NULL;
	char a[16], b[16], c[16];
	if (!m || from >= (file == ST_RF_R ? CP2_NR : 8u)) {
		rname(a, sizeof a, file, from);
		cp_flag(q->p, t, rule, "%s written by the group: phi renames only R and P registers", a);
		return false;
	}
	if (m[from] >= 0 && (unsigned)m[from] != to) {
		rname(a, sizeof a, file, from), rname(b, sizeof b, file, (unsigned)m[from]), rname(c, sizeof c, file, to);
		cp_flag(q->p, t, rule, "phi maps %s to %s here and to %s before", a, c, b);
		return false;
	}
	m[from] = (int16_t)to;
	return true;
}

/* phi(file, from), or -1. */
static int phi_of(const cp2_loop *l, unsigned file, unsigned from)
{
	if (file == ST_RF_R && from < CP2_NR)
		return l->rphi[from];
	return file == ST_RF_P && from < 8 ? l->pphi[from] : -1;
}

static bool writes(const st_sass_insn *x, unsigned f, unsigned i)
{
	for (unsigned d = 0; d < x->ndefs; d++)
		if (x->defs[d].file == f && i >= x->defs[d].index && i < (unsigned)x->defs[d].index + x->defs[d].count)
			return true;
	return false;
}

/* The fields a member's copy may differ in: the guard and the fields of its R and P operands. */
static void copy_fields(const st_sass_insn *x, unsigned f[20])
{
	unsigned n = 0, pd = 0, pu = 0;
	f[n++] = 12, f[n++] = 4;
	for (unsigned d = 0; d < x->ndefs; d++) {
		if (x->defs[d].file == ST_RF_R && x->defs[d].slot == ST_SLOT_D)
			f[n++] = 16, f[n++] = 8;
		pd += x->defs[d].file == ST_RF_P;
	}
	for (unsigned u = 0; u < x->nuses; u++) {
		unsigned s = x->uses[u].slot;
		if (x->uses[u].file == ST_RF_R && s >= ST_SLOT_A && s <= ST_SLOT_C)
			f[n++] = s == ST_SLOT_A ? 24 : s == ST_SLOT_B ? 32 : 64, f[n++] = 8;
		pu += x->uses[u].file == ST_RF_P && s != ST_SLOT_G;
	}
	if (pd)
		f[n++] = 81, f[n++] = 3;
	if (pd > 1)
		f[n++] = 84, f[n++] = 3;
	if (pu)
		f[n++] = 87, f[n++] = 3;
	f[n++] = 0, f[n] = 0;
}

/* Does a member of B before m write the unit? */
static bool member_wrote(const cp *p, const cp_loop *lo, uint32_t m, unsigned f, unsigned i)
{
	for (uint32_t w = lo->f; w < m; w++)
		if (lo->mem[w - lo->f] && writes(&p->in[w], f, i))
			return true;
	return false;
}

/* The register a copy must read for the original's unit: i' (i in the peel) for i, phi of what an
 * earlier member wrote, else the unit itself; -1 when phi has no value for it. */
static int want_use(const cp2 *q, const cp2_loop *l, uint32_t m, unsigned f, unsigned i, bool peel)
{
	if (member_wrote(q->p, l->lo, m, f, i))
		return phi_of(l, f, i);
	if (f == ST_RF_R && i == l->iv)
		return peel ? (int)l->iv : l->ip;
	return (int)i;
}

/* The registers of the copy y of member x: defs give phi (tuple-aligned), uses follow want_use. */
static void copy_regs(cp2 *q, cp2_loop *l, uint32_t t, uint32_t m, bool peel, const char *rule)
{
	const st_sass_insn *x = &q->p->in[m], *y = &q->t[t];
	char a[16], b[16], c[16];
	for (unsigned d = 0; d < x->ndefs && d < y->ndefs; d++) {
		const st_sass_reg *xd = &x->defs[d], *yd = &y->defs[d];
		if (xd->file != yd->file || xd->count != yd->count) {
			cp_flag(q->p, t, rule, "%s from 0x%x: destination %u is not the original's renamed", x->opcode, 16 * m, d);
			return;
		}
		if (xd->count > 1 && yd->index % xd->count) {
			rname(a, sizeof a, yd->file, yd->index), rname(b, sizeof b, xd->file, xd->index);
			cp_flag(q->p, t, rule, "%s from 0x%x: %s, phi of the %u-register tuple %s, is not %u-aligned", x->opcode,
				16 * m, a, xd->count, b, xd->count);
		}
		for (unsigned u = 0; u < xd->count; u++)
			phi_set(q, l, xd->file, xd->index + u, yd->index + u, t, rule);
	}
	unsigned i = 0, j = 0;
	for (;; i++, j++) {
		while (i < x->nuses && x->uses[i].slot == ST_SLOT_G)
			i++;
		while (j < y->nuses && y->uses[j].slot == ST_SLOT_G)
			j++;
		if (i >= x->nuses || j >= y->nuses)
			break;
		const st_sass_reg *xu = &x->uses[i], *yu = &y->uses[j];
		if (xu->count > 1 && xu->count == yu->count && yu->index % xu->count && yu->index != xu->index) {
			rname(a, sizeof a, yu->file, yu->index), rname(b, sizeof b, xu->file, xu->index);
			cp_flag(q->p, t, rule, "%s from 0x%x: %s, phi of the %u-register tuple %s, is not %u-aligned", x->opcode,
				16 * m, a, xu->count, b, xu->count);
		}
		for (unsigned u = 0; u < xu->count && xu->file == yu->file && xu->count == yu->count; u++) {
			int w = want_use(q, l, m, xu->file, xu->index + u, peel);
			if (w != (int)(yu->index + u)) {
				rname(a, sizeof a, xu->file, xu->index + u), rname(b, sizeof b, yu->file, yu->index + u);
				if (w >= 0)
					rname(c, sizeof c, xu->file, (unsigned)w);
				cp_flag(q->p, t, rule, "%s from 0x%x reads %s for %s, the rules want %s", x->opcode, 16 * m, b, a,
					w >= 0 ? c : "phi of it (no member wrote it under phi)");
			}
		}
		if (xu->file != yu->file || xu->count != yu->count)
			cp_flag(q->p, t, rule, "%s from 0x%x: source %u is not the original's renamed", x->opcode, 16 * m, i);
	}
	if (x->ndefs != y->ndefs || (i < x->nuses) != (j < y->nuses))
		cp_flag(q->p, t, rule, "%s from 0x%x: its operands are not the original's renamed", x->opcode, 16 * m);
}

/* One copy of member m at tuned slot t (peel: i stays i; else the prefetch block's: i', loads under
 * continue(Pf)). */
static void check_copy(cp2 *q, cp2_loop *l, uint32_t t, uint32_t m, bool peel)
{
	cp *p = q->p;
	const char *rule = peel ? "Q8" : "Q7";
	const st_sass_insn *x = &p->in[m];
	unsigned f[20];
	copy_fields(x, f);
	if (strcmp(x->opcode, q->t[t].opcode) || !same_outside(p, m, t, f)) {
		cp_flag(p, t, rule, "the %s's slot 0x%x is not a copy of %s at 0x%x (opcode or a field other than its "
				    "registers and guard differs)", peel ? "peel" : "prefetch block", 16 * t, x->opcode, 16 * m);
		return;
	}
	copy_regs(q, l, t, m, peel, rule);
	unsigned g = cp_bits(p->tcode + 16 * t, 12, 4), want = cp_bits(p->ocode + 16 * m, 12, 4);
	if (!peel && l->ho[m - l->lo->f] != CP_NONE)
		want = (unsigned)(l->pfp < 0 ? 7 : l->pfp) | (unsigned)l->lo->cneg << 3;
	if (g != want) {
		char a[8], b[8];
		snprintf(a, sizeof a, "@%sP%c", g & 8 ? "!" : "", (g & 7) < 7 ? (char)('0' + (g & 7)) : 'T');
		snprintf(b, sizeof b, "@%sP%c", want & 8 ? "!" : "", (want & 7) < 7 ? (char)('0' + (want & 7)) : 'T');
		cp_flag(p, t, rule, "%s from 0x%x: guard %s, the rules want %s%s", x->opcode, 16 * m, a, b,
			peel ? " (the peel's loads run unguarded)" : l->ho[m - l->lo->f] != CP_NONE ? " (continue on Pf)" : "");
	}
}

/* Q7: I = U with destination i' (source i, immediate s kept); F = E with destination Pf and i'. */
static void check_i_f(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	uint32_t t = l->pf;
	const uint8_t *iw = p->tcode + 16 * t, *fw = p->tcode + 16 * (t + 1), *uw = p->ocode + 16 * l->u,
		      *ew = p->ocode + 16 * l->lo->e;
	l->ip = iw[2], l->pfp = (int)cp_bits(fw, 81, 3);
	if (iw[3] != l->iv)
		cp_flag(p, t, "Q7", "I reads R%u, the rules want i = R%u", iw[3], l->iv);
	if (cp_bits(iw, 32, 32) != cp_bits(uw, 32, 32))
		cp_flag(p, t, "Q7", "I adds 0x%x, U at 0x%x adds 0x%x", cp_bits(iw, 32, 32), 16 * l->u, cp_bits(uw, 32, 32));
	if (cp_bits(iw, 12, 4) != 7)
		cp_flag(p, t, "Q7", "I is guarded");
	unsigned of = l->ifield == 24 ? 32 : 24;
	if (fw[l->ifield / 8] != l->ip)
		cp_flag(p, t + 1, "Q7", "F compares R%u where E at 0x%x compares i = R%u, the rules want i' = R%u",
			fw[l->ifield / 8], 16 * l->lo->e, l->iv, (unsigned)l->ip);
	if (fw[of / 8] != ew[of / 8] || cp_bits(fw, 12, 4) != cp_bits(ew, 12, 4))
		cp_flag(p, t + 1, "Q7", "F is not E at 0x%x with only its destination and i renamed", 16 * l->lo->e);
}

/* Q6: w hand-overs at each chosen load's place, D_j = phi(D_j) + 0, unguarded; the prefetch block
 * right after the last of them. */
static void check_handovers(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	uint32_t last = CP_NONE;
	for (uint32_t x = lo->f; x < lo->l; x++) {
		uint32_t t0 = l->ho[x - lo->f];
		if (t0 == CP_NONE)
			continue;
		unsigned d0 = p->in[x].defs[0].index, w = p->in[x].defs[0].count;
		for (unsigned j = 0; j < w; j++) {
			const uint8_t *hw = p->tcode + 16 * (t0 + j);
			int src = phi_of(l, ST_RF_R, d0 + j);
			if (hw[2] != d0 + j)
				cp_flag(p, t0 + j, "Q6", "the hand-over of 0x%x writes R%u, the rules want R%u", 16 * x, hw[2], d0 + j);
			if ((int)hw[3] != src)
				cp_flag(p, t0 + j, "Q6", "the hand-over of 0x%x reads R%u, the rules want phi(R%u) = R%d", 16 * x,
					hw[3], d0 + j, src);
			if (cp_bits(hw, 32, 32))
				cp_flag(p, t0 + j, "Q6", "the hand-over of 0x%x adds 0x%x, the rules want 0x0", 16 * x,
					cp_bits(hw, 32, 32));
			if (cp_bits(hw, 12, 4) != 7)
				cp_flag(p, t0 + j, "Q6", "the hand-over of 0x%x is guarded", 16 * x);
		}
		last = t0 + w;
	}
	if (last != l->pf)
		cp_flag(p, l->pf, "Q7", "the prefetch block at 0x%x is not right after the last hand-over (0x%x)", 16 * l->pf,
			last == CP_NONE ? 0 : 16 * (last - 1));
}

/* Q8: the peel holds the feeders (original words) then the members renamed, in original order. */
static void check_peel(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	uint32_t want = 0, j = lo->tp;
	for (uint32_t i = lo->f; i < lo->l; i++)
		want += lo->mem[i - lo->f] || lo->feed[i - lo->f];
	if (want != lo->L) {
		cp_flag(p, lo->tp, "Q8", "loop 0x%x: a peel of %u instructions, the feeders and members are %u", 16 * lo->f,
			lo->L, want);
		lo->bad = true;
		return;
	}
	for (uint32_t pass = 0; pass < 2; pass++) /* the feeders first, then the members */
		for (uint32_t i = lo->f; i < lo->l; i++)
			if (pass ? lo->mem[i - lo->f] : lo->feed[i - lo->f] && !lo->mem[i - lo->f])
				p->src[j++] = i;
	for (j = lo->tp; j < lo->tp + lo->L; j++) {
		uint32_t i = p->src[j];
		if (lo->mem[i - lo->f]) {
			check_copy(q, l, j, i, true);
		} else if (!cp_same_word(p->ocode + 16 * i, p->tcode + 16 * j, false)) {
			cp_flag(p, j, "Q8", "the peel's slot 0x%x is not the feeder %s at 0x%x", 16 * j, p->in[i].opcode, 16 * i);
			p->src[j] = CP_NONE;
		}
	}
}

void cp2_check_words(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	check_i_f(q, l);
	for (uint32_t t = l->pf + 2; t < l->pf + 2 + l->nm; t++)
		check_copy(q, l, t, p->src[t], false);
	check_handovers(q, l);
	check_peel(q, l);
}
