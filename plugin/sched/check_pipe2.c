/* The independent checker for pipe form-2 rewrites (family 3 form 2; docs/sched.md "Checker: pipe
 * form 2"): called by ck_pipe when the rewrite is not a form-1 one.  It decodes the rewrite itself
 * and lines its slots up with the original's block by block: every block is unchanged (stalls,
 * waits, reuse aside) except loop blocks B, which may be preceded by a peel and whose body reads as
 * the original's instructions in order with the members gone, each chosen load's place holding its
 * hand-overs (copies of U), and one prefetch block (a copy of U, a copy of E, then the members)
 * somewhere in between.  What cannot be read so is not a form-2 rewrite (nothing reported, the
 * reason returned); what can is judged by Q1..Q12 (check_pipe2_*.c).  Public sass/cubin readings
 * only; nothing of the rewrite (pipe*.c). */
#include "check_pipe2.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has(const st_sass_reg *r, unsigned n, unsigned file, unsigned idx)
{
	for (unsigned i = 0; i < n; i++)
		if (r[i].file == file && idx >= r[i].index && idx < (unsigned)r[i].index + r[i].count)
			return true;
	return false;
}

static bool op_is(const char *op, const char *m)
{
	size_t n = strlen(m);
	return !strncmp(op, m, n) && (op[n] == 0 || op[n] == '.');
}

/* U's shape on the word: VIADD Rd, Ra, imm32 (opcode 0x836) or IADD3 Rd, Ra, imm32, RZ (0x810, Rc
 * = RZ, carry-outs [83:81], [86:84] PT; VIADD has zeros there), Rd = Ra = i, unguarded, decoded as
 * writing i and reading i only.  (Opcode bits [11:0] per nvdisasm 12.8 on the rowsum fixture.) */
static bool u_shape(const cp *p, uint32_t w, unsigned i)
{
	const uint8_t *x = p->ocode + 16 * w;
	unsigned op = cp_bits(x, 0, 12);
	if ((op != 0x836 && op != 0x810) || cp_bits(x, 12, 4) != 7 || x[2] != i || x[3] != i || p->in[w].ndefs != 1 ||
	    p->in[w].nuses != 1 || (op == 0x810 && (cp_bits(x, 81, 3) != 7 || cp_bits(x, 84, 3) != 7)))
		return false; /* one def (i), one use (i): no carry-out, nothing hidden */
	return op == 0x836 ? !strcmp(p->in[w].opcode, "VIADD") : (!strcmp(p->in[w].opcode, "IADD3") && x[8] == 0xff);
}

/* E (the last writer of Pe in B) and U (the only writer in B of E's register i, of U's shape). */
static bool find_u(cp2 *q, cp2_loop *l, char *why, size_t wn)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	lo->pe = p->in[lo->l].guard, lo->cneg = p->in[lo->l].guard_neg, lo->e = CP_NONE;
	for (uint32_t w = lo->l; w-- > lo->f && lo->e == CP_NONE;)
		if (has(p->in[w].defs, p->in[w].ndefs, ST_RF_P, (unsigned)lo->pe))
			lo->e = w;
	if (lo->e == CP_NONE || !op_is(p->in[lo->e].opcode, "ISETP")) {
		snprintf(why, wn, "loop 0x%x: its branch predicate P%d is not written by an ISETP in the loop", 16 * lo->f, lo->pe);
		return false;
	}
	const uint8_t *ew = p->ocode + 16 * lo->e;
	for (unsigned field = 24; field <= 32; field += 8) {
		unsigned i = ew[field / 8], nw = 0;
		uint32_t one = CP_NONE;
		for (uint32_t w = lo->f; i != 0xff && w <= lo->l; w++)
			if (has(p->in[w].defs, p->in[w].ndefs, ST_RF_R, i) && !nw++)
				one = w;
		if (nw == 1 && u_shape(p, one, i)) {
			l->u = one, l->iv = i, l->ifield = field;
			return true;
		}
	}
	snprintf(why, wn, "loop 0x%x: no induction update (an operand of the exit compare at 0x%x written once in the "
			  "loop by VIADD i, i, imm or IADD3 i, i, imm, RZ)", 16 * lo->f, 16 * lo->e);
	return false;
}

/* Block b unchanged at tuned offset d (PC-relative words: their targets are checked as references). */
static bool same_block2(cp2 *q, size_t b, uint32_t d, char *why, size_t wn)
{
	cp *p = q->p;
	for (uint32_t i = p->bfirst[b]; i < p->bfirst[b] + p->bcount[b]; i++) {
		uint32_t j = i + d;
		if (j >= p->n) {
			if (strcmp(p->in[i].opcode, "NOP")) {
				snprintf(why, wn, "%s at 0x%x fell off the end of the code", p->in[i].opcode, 16 * i);
				return false;
			}
			continue;
		}
		if (!cp_same_word(p->ocode + 16 * i, p->tcode + 16 * j, (p->in[i].flags & ST_F_PCREL) != 0)) {
			snprintf(why, wn, "the word at 0x%x is not the original's %s at 0x%x", 16 * j, p->in[i].opcode, 16 * i);
			return false;
		}
		p->src[j] = i, p->kind[j] = CP_SAME, p->inv[i] = j;
	}
	return true;
}

/* An LDG of B with register results: w, its destination registers (1, 2 or 4), else 0. */
static unsigned load_width(const cp *p, uint32_t o)
{
	const st_sass_insn *x = &p->in[o];
	if (!op_is(x->opcode, "LDG") || !x->ndefs || x->defs[0].file != ST_RF_R)
		return 0;
	return x->defs[0].count;
}

static bool same_as(const cp *p, uint32_t o, uint32_t t)
{
	return cp_same_word(p->ocode + 16 * o, p->tcode + 16 * t, false);
}

/* I, F at t: copies of U and E, not both U and E themselves. */
static bool block_start(const cp2 *q, const cp2_loop *l, uint32_t t)
{
	return cp2_ucopy(q, l, t) && cp2_ecopy(q, l, t + 1) && !(same_as(q->p, l->u, t) && same_as(q->p, l->lo->e, t + 1));
}

/* The tuned body [tb, tend) read with M members: kept instructions (the original's words, in order),
 * each chosen load's place holding w copies of U, one prefetch block of 2 + M slots; the members
 * are the original instructions not kept.  False when that reading fails. */
static bool read_body(cp2 *q, cp2_loop *l, uint32_t M)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	uint32_t tb = lo->tp + lo->L, tend = tb + lo->tn - 1, t = tb, o = lo->f, nm = 0;
	l->pf = CP_NONE;
	memset(lo->mem, 0, lo->l - lo->f + 1);
	for (uint32_t i = lo->f; i <= lo->l; i++)
		l->ho[i - lo->f] = CP_NONE;
	while (t < tend || o < lo->l) {
		unsigned w = o < lo->l ? load_width(p, o) : 0, k = 0;
		if (o < lo->l && t < tend && same_as(p, o, t)) {
			p->src[t] = o, p->kind[t] = CP_SAME, p->inv[o] = t;
			t++, o++;
			continue;
		}
		if (l->pf == CP_NONE && t + 2 + M <= tend && block_start(q, l, t)) {
			l->pf = t, t += 2 + M;
			continue;
		}
		while (w && k < w && t + k < tend && cp2_ucopy(q, l, t + k) && !same_as(p, l->u, t + k))
			k++;
		if (w && k == w) {
			l->ho[o - lo->f] = t, lo->mem[o - lo->f] = 1, nm++;
			for (k = 0; k < w; k++)
				p->src[t + k] = o, p->kind[t + k] = CP_NEW;
			t += w, o++;
			continue;
		}
		if (o >= lo->l)
			return false;
		lo->mem[o++ - lo->f] = 1, nm++;
	}
	return l->pf != CP_NONE && nm == M && t == tend;
}

/* After read_body: the prefetch block's slots (I, F, the members in original order). */
static void place_block(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	uint32_t t = l->pf;
	p->src[t] = l->u, p->kind[t] = CP_NEW;
	p->src[t + 1] = lo->e, p->kind[t + 1] = CP_NEW;
	t += 2;
	for (uint32_t i = lo->f; i < lo->l; i++)
		if (lo->mem[i - lo->f])
			p->src[t] = i, p->kind[t] = CP_MOVED, p->inv[i] = t++;
	l->nm = t - l->pf - 2;
}

static cp2_loop *new_loop(cp2 *q, uint32_t f, uint32_t l)
{
	cp *p = q->p;
	cp_loop *lo = &p->loops[p->nl++];
	cp2_loop *l2 = &q->lp[q->nl++];
	memset(lo, 0, sizeof *lo), memset(l2, 0, sizeof *l2);
	lo->f = f, lo->l = l;
	memset(lo->ren, -1, sizeof lo->ren);
	lo->mem = calloc(4 * (size_t)(l - f + 1), 1);
	l2->ho = calloc(l - f + 1, sizeof *l2->ho);
	l2->lo = lo, l2->ip = l2->pfp = l2->sb = -1;
	memset(l2->rphi, -1, sizeof l2->rphi), memset(l2->pphi, -1, sizeof l2->pphi);
	if (!lo->mem || !l2->ho)
		return NULL;
	lo->clo = lo->mem + (l - f + 1), lo->feed = lo->clo + (l - f + 1), lo->comb = lo->feed + (l - f + 1);
	return l2;
}

/* Loop block b: its back branch K slots lower (the first such K), naming the tuned body's first slot;
 * the peel is what lies between B's old place and that slot. */
static bool loop_block2(cp2 *q, size_t b, uint32_t *d, uint32_t ins, char *why, size_t wn)
{
	cp *p = q->p;
	uint32_t f = p->bfirst[b], l = f + p->bcount[b] - 1, K = 0, t = 0;
	for (; *d + K <= ins && (t = l + *d + K) < p->n; K++) {
		const st_sass_insn *x = &q->t[t];
		if (op_is(x->opcode, "BRA") && cp_same_word(p->ocode + 16 * l, p->tcode + 16 * t, true) && x->target >= 0)
			break;
	}
	if (*d + K > ins || t >= p->n) {
		snprintf(why, wn, "loop 0x%x: its back branch is not found below its old place", 16 * f);
		return false;
	}
	if (K == 0)
		return same_block2(q, b, *d, why, wn);
	uint32_t tb = (uint32_t)(q->t[t].target / 16);
	if (tb < f + *d || tb >= t) {
		snprintf(why, wn, "loop 0x%x: its back branch at 0x%x names 0x%x, outside the rewritten loop", 16 * f, 16 * t, 16 * tb);
		return false;
	}
	cp2_loop *l2 = new_loop(q, f, l);
	if (!l2) {
		snprintf(why, wn, "out of memory");
		return false;
	}
	cp_loop *lo = l2->lo;
	lo->tp = f + *d, lo->L = tb - lo->tp, lo->tn = t - tb + 1;
	if (!find_u(q, l2, why, wn))
		return false;
	uint32_t M = 1;
	while (M <= CP_MAX_MEMBERS && !read_body(q, l2, M))
		M++;
	if (M > CP_MAX_MEMBERS) {
		snprintf(why, wn, "loop 0x%x: its body cannot be read as the kept instructions, hand-overs at the chosen "
				  "loads' places and one prefetch block (I, F, the members)", 16 * f);
		return false;
	}
	place_block(q, l2);
	p->src[t] = l, p->kind[t] = CP_SAME, p->inv[l] = t;
	for (uint32_t j = lo->tp; j <= t; j++)
		p->lp[j] = (uint32_t)p->nl;
	for (uint32_t j = lo->tp; j < tb; j++)
		p->kind[j] = CP_PEEL;
	*d += K;
	return true;
}

static bool align2(cp2 *q, const st_cubin *orig, size_t ko, uint32_t ins, char *why, size_t wn)
{
	cp *p = q->p;
	uint32_t d = 0;
	for (size_t b = 0; b < p->nb; b++) {
		if (b && p->bfirst[b] != p->bfirst[b - 1] + p->bcount[b - 1]) {
			snprintf(why, wn, "blocks not in layout order");
			return false;
		}
		bool ok = cp_is_loop(p, b, orig, ko) ? loop_block2(q, b, &d, ins, why, wn) : same_block2(q, b, d, why, wn);
		if (!ok)
			return false;
	}
	if (d != ins) {
		snprintf(why, wn, "%u padding slots used, %u by rewritten loops", ins, d);
		return false;
	}
	if (!q->nl) {
		snprintf(why, wn, "no loop rewritten");
		return false;
	}
	return true;
}

/* Before decoding the rewrite: some loop of the original with U and E has, within its reach in the
 * rewrite, a copy of U followed by a copy of E that are not U and E themselves (the words alone). */
static bool any_block(cp2 *q, const st_cubin *orig, size_t ko, uint32_t ins, char *why, size_t wn)
{
	cp *p = q->p;
	cp_loop lo = {0};
	cp2_loop l = {0};
	l.lo = &lo;
	for (size_t b = 0; b < p->nb; b++) {
		if (!cp_is_loop(p, b, orig, ko))
			continue;
		lo.f = p->bfirst[b], lo.l = lo.f + p->bcount[b] - 1;
		if (!find_u(q, &l, why, wn))
			continue;
		for (uint32_t t = lo.f; t + 1 < p->n && t < lo.l + ins; t++)
			if (block_start(q, &l, t))
				return true;
	}
	snprintf(why, wn, "no loop holds a prefetch block (a copy of its induction update, then of its exit compare)");
	return false;
}

/* Judge the lined-up rewrite: the references, each loop's rules and words, then timing and control. */
static void judge2(cp2 *q, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt)
{
	cp *p = q->p;
	cp_check_refs(p, orig, ko, tuned, kt);
	for (size_t l = 0; l < q->nl; l++) {
		cp2_check_rules(q, &q->lp[l]);
		for (size_t m = 0; m < q->nl; m++)
			if (q->lp[m].lo->l + 1 == q->lp[l].lo->f)
				cp_flag(p, q->lp[l].lo->tp, "Q12", "loop 0x%x is entered from loop 0x%x, rewritten too",
					16 * q->lp[l].lo->f, 16 * q->lp[m].lo->f);
		cp2_check_words(q, &q->lp[l]);
	}
	for (uint32_t j = 0; j < p->n; j++)
		if (p->src[j] != CP_NONE)
			p->ti[j] = q->t[j];
	for (size_t l = 0; l < q->nl; l++)
		if (!q->lp[l].lo->bad)
			cp_check_timing(p, q->lp[l].lo);
	cp2_check_regs(q);
	cp2_check_ctrl(q);
}

bool ck_pipe2(ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt, char *why, size_t wn)
{
	cp p;
	cp2 q = {0};
	st_sass_kernel *tk = NULL;
	st_error err = {0};
	st_sass_opts o = c->o ? *c->o : (st_sass_opts){0};
	o.listing = NULL; /* a listing given for the original is not the rewrite's */
	size_t po = st_cubin_insertable(orig, ko), pt = st_cubin_insertable(tuned, kt);
	if (!cp_init(&p, c, orig, ko, tuned, kt))
		return true;
	p.f2 = true, q.p = &p, q.lp = calloc(p.nb + 1, sizeof *q.lp);
	q.regs_o = st_cubin_regcount(orig, ko), q.regs_t = st_cubin_regcount(tuned, kt);
	bool lined = false;
	if (!q.lp)
		snprintf(why, wn, "out of memory");
	else if (pt > po)
		snprintf(why, wn, "the rewrite has %zu insertable slots, the original %zu", pt, po);
	else if (!any_block(&q, orig, ko, (uint32_t)(po - pt), why, wn))
		;
	else if (st_sass_decode(tuned, c->name, &o, &tk, &err))
		snprintf(why, wn, "the rewrite does not decode: %s", err.msg);
	else if (st_sass_count(tk) != p.n)
		snprintf(why, wn, "the rewrite decodes to %zu instructions, the original to %zu", st_sass_count(tk), p.n);
	else if ((q.t = st_sass_insns(tk)), (lined = align2(&q, orig, ko, (uint32_t)(po - pt), why, wn)))
		judge2(&q, orig, ko, tuned, kt);
	for (size_t l = 0; q.lp && l < q.nl; l++)
		free(q.lp[l].ho);
	free(q.lp);
	st_sass_free(tk);
	cp_free(&p);
	return lined;
}
