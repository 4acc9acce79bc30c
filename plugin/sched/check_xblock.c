/* The independent checker's rule for moves across blocks (docs/sched.md "Across blocks"), from
 * its own reading of the original CFG and the tuned words; shares no code with xblock.c.
 * Shape: block H's first instruction L sits one slot lower and its old slot holds X, an
 * instruction of H: X now ends the block A before H.  Accepted when:
 *  - A falls through into H (its only successor), A's last instruction is not control, L is
 *    neither control nor sync, no non-branch reference (BSSY) names L;
 *  - X is fixed-latency ALU without memory, scoreboards, guard or special registers, came from
 *    L's segment (no fixed point between L and X), and was not H's last instruction;
 *  - H's predecessors other than A (if any) form a loop entered only through H from A (what
 *    reaches them backwards without passing H holds neither the kernel's entry nor a block
 *    nothing enters: else a path reaches H around A); then X's
 *    sources are written nowhere in it (X included), its destinations only by X, and none of
 *    them is live into H (a path from H reads it before an unpredicated write);
 *  - every variable-latency instruction that touches X's registers and reaches A is waited on
 *    (each SB it sets, none DEPBAR-counted) after it: in its own block, or in A up to X.
 * Then the tuned layout (X in A, H starting at L) is what the latency walks use, with the full
 * table latency for every pair involving X; the ordering of X against what it passed is
 * check_orders' (same segment), against L (its own segment) this rule's. */
#include "check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool overlaps(const st_sass_reg *a, unsigned na, const st_sass_reg *b, unsigned nb)
{
	for (unsigned i = 0; i < na; i++)
		for (unsigned j = 0; j < nb; j++)
			if (ck_regs_meet(&a[i], &b[j]))
				return true;
	return false;
}

/* p writes or reads a register x writes, or writes one x reads */
static bool shares(const st_sass_insn *p, const st_sass_insn *x)
{
	return overlaps(p->defs, p->ndefs, x->uses, x->nuses) || overlaps(p->defs, p->ndefs, x->defs, x->ndefs) ||
	       overlaps(p->uses, p->nuses, x->defs, x->ndefs);
}

static bool plain_alu(const ck *c, uint32_t X)
{
	const st_sass_insn *x = &c->in[X];
	if (x->cls != ST_CLASS_ALU || x->lat_op < 0 || x->lat_cond || x->guard >= 0 || !x->ndefs ||
	    (x->flags & (ST_F_VARLAT | ST_F_LOAD | ST_F_STORE | ST_F_ATOMIC | ST_F_ASYNC | ST_F_COLLECTIVE | ST_F_BARRIER |
			 ST_F_FENCE | ST_F_BRANCH | ST_F_PCREL)) ||
	    x->ctrl.wbar != ST_SB_NONE || x->ctrl.rbar != ST_SB_NONE || c->fixed[X])
		return false;
	for (unsigned d = 0; d < x->ndefs; d++)
		if (x->defs[d].file == ST_RF_B)
			return false;
	for (uint32_t i = 0; i < c->n; i++) /* registers GMMA & co. read asynchronously */
		if (i != X && (c->in[i].cls == ST_CLASS_TENSOR || c->in[i].lat_cond) && (shares(&c->in[i], x) || shares(x, &c->in[i])))
			return false;
	return true;
}

/* bit `bit` of mark[] for every block reaching one of seeds backwards (not expanding `stop`). */
static void back(const ck *c, uint8_t *mark, const uint32_t *seeds, size_t ns, uint32_t stop, uint8_t bit)
{
	uint32_t *st = malloc((c->nb + 1) * sizeof *st);
	size_t sp = 0;
	if (!st)
		return;
	for (size_t i = 0; i < ns; i++)
		if (!(mark[seeds[i]] & bit)) {
			mark[seeds[i]] |= bit;
			st[sp++] = seeds[i];
		}
	while (sp) {
		uint32_t b = st[--sp];
		for (size_t p = 0; p < c->nb && b != stop; p++)
			for (int e = 0; e < 2; e++)
				if (c->bsucc[p][e] == (int32_t)b && !(mark[p] & bit)) {
					mark[p] |= bit;
					st[sp++] = (uint32_t)p;
				}
	}
	free(st);
}

/* Is one register of x's definitions read on a path from h's start before an unpredicated write? */
static bool live_into(const ck *c, uint32_t h, const st_sass_insn *x)
{
	uint8_t *seen = malloc(c->nb + 1);
	uint32_t *st = malloc((c->nb + 1) * sizeof *st);
	bool live = !seen || !st;
	for (unsigned d = 0; d < x->ndefs && !live; d++)
		for (unsigned r = 0; r < x->defs[d].count && !live; r++) {
			st_sass_reg one = {(uint16_t)(x->defs[d].index + r), x->defs[d].file, 1, 0};
			size_t sp = 0;
			memset(seen, 0, c->nb);
			seen[h] = 1;
			st[sp++] = h;
			while (sp && !live) {
				uint32_t b = st[--sp];
				bool dead = false;
				for (uint32_t i = c->bfirst[b]; i <= c->blast[b] && !dead && !live; i++) {
					live = overlaps(c->in[i].uses, c->in[i].nuses, &one, 1);
					dead = c->in[i].guard < 0 && overlaps(c->in[i].defs, c->in[i].ndefs, &one, 1);
				}
				for (int e = 0; e < 2 && !dead; e++) {
					int32_t s = c->bsucc[b][e];
					if (s >= 0 && !seen[s]) {
						seen[s] = 1;
						st[sp++] = (uint32_t)s;
					}
				}
			}
		}
	free(seen);
	free(st);
	return live;
}

/* The loop entered at h (predecessors other than a), single entry from a; NULL when fine. */
static const char *loop_rule(const ck *c, uint32_t h, uint32_t a, uint32_t X, uint8_t *mark)
{
	uint32_t *oth = malloc((2 * c->nb + 1) * sizeof *oth);
	size_t no = 0;
	if (!oth)
		return "out of memory";
	for (size_t p = 0; p < c->nb; p++)
		for (int e = 0; e < 2; e++)
			if (c->bsucc[p][e] == (int32_t)h && p != a && !(e == 1 && c->bsucc[p][0] == (int32_t)h))
				oth[no++] = (uint32_t)p;
	if (!no) {
		free(oth);
		return NULL; /* H has A alone before it */
	}
	mark[h] |= 2;
	back(c, mark, oth, no, h, 2);
	free(oth);
	if (mark[a] & 2)
		return "the block before is inside the loop";
	for (size_t b = 0; b < c->nb; b++)
		for (int e = 0; e < 2 && (mark[b] & 2) == 0; e++)
			if (c->bsucc[b][e] >= 0 && (mark[c->bsucc[b][e]] & 2) && c->bsucc[b][e] != (int32_t)h)
				return "the loop has a second entry";
	/* what reaches H's other predecessors backwards must not start at the kernel's entry (or at a
	 * block nothing enters): then a path reaches H around A, and X would not run on it */
	for (size_t b = 0; b < c->nb; b++) {
		bool entered = false;
		for (size_t p = 0; p < c->nb && !entered; p++)
			entered = c->bsucc[p][0] == (int32_t)b || c->bsucc[p][1] == (int32_t)b;
		if ((mark[b] & 2) && b != h && (b == 0 || !entered))
			return "a path from the kernel's entry reaches it without passing the block before";
	}
	const st_sass_insn *x = &c->in[X];
	for (int pass = 0; pass < 2; pass++) /* sources first, then destinations */
		for (size_t b = 0; b < c->nb; b++)
			for (uint32_t i = c->bfirst[b]; (mark[b] & 2) && i <= c->blast[b]; i++) {
				if (!pass && overlaps(c->in[i].defs, c->in[i].ndefs, x->uses, x->nuses))
					return "a source is written in the loop";
				if (pass && i != X && overlaps(c->in[i].defs, c->in[i].ndefs, x->defs, x->ndefs))
					return "a destination is written elsewhere in the loop";
			}
	if (live_into(c, h, x))
		return "a destination is live into the loop";
	return NULL;
}

/* Variable-latency instructions touching X that reach A: waited on after them. */
static const char *wait_rule(const ck *c, uint32_t a, uint32_t X, uint32_t xt, uint8_t *mark)
{
	uint32_t seed = a;
	back(c, mark, &seed, 1, UINT32_MAX, 4);
	for (size_t b = 0; b < c->nb; b++)
		for (uint32_t V = c->bfirst[b]; (mark[b] & 4) && V <= c->blast[b]; V++) {
			const st_sass_insn *v = &c->in[V];
			if (V == X || !(v->flags & ST_F_VARLAT) || !shares(v, &c->in[X]))
				continue;
			uint8_t need = (uint8_t)((v->ctrl.wbar < 6 ? 1u << v->ctrl.wbar : 0) | (v->ctrl.rbar < 6 ? 1u << v->ctrl.rbar : 0));
			uint8_t got = 0;
			uint32_t end = b == a ? xt : c->blast[b];
			for (uint32_t q = c->inv[V] + 1; q <= end; q++)
				got |= (uint8_t)(c->ct[q].wait | (c->depcnt[c->map[q]] == 0 ? c->depbar[c->map[q]] : 0));
			if (!need || (need & c->counted) || (got & need) != need)
				return "a variable-latency instruction touching its registers is not waited on before it";
		}
	return NULL;
}

static const char *judge(ck *c, uint32_t h, uint32_t X)
{
	uint32_t a = h - 1, L = c->bfirst[h];
	const st_sass_insn *al = &c->in[c->blast[a]], *il = &c->in[L];
	if (c->bsucc[a][0] != (int32_t)h || (c->bsucc[a][1] >= 0 && c->bsucc[a][1] != (int32_t)h) || c->blast[a] + 1 != L)
		return "the block before does not fall through into it alone";
	if (al->cls == ST_CLASS_CONTROL || (al->flags & (ST_F_BRANCH | ST_F_PCREL)))
		return "the block before ends in control flow";
	if (il->cls == ST_CLASS_CONTROL || il->cls == ST_CLASS_SYNC || (il->flags & (ST_F_BRANCH | ST_F_PCREL | ST_F_BARRIER | ST_F_FENCE)))
		return "the block's first instruction is control, sync, barrier or fence";
	for (uint32_t i = 0; i < c->n; i++)
		if (c->in[i].target == (int64_t)il->offset && !(c->in[i].flags & ST_F_BRANCH))
			return "a BSSY (or another non-branch reference) names the block";
	if (!plain_alu(c, X) || X == c->blast[h])
		return "not a fixed-latency ALU instruction without memory, scoreboard, guard or special registers";
	if (c->seg[X] != c->seg[L + 1])
		return "it passed a fixed point inside its block";
	if (shares(il, &c->in[X]) || shares(&c->in[X], il))
		return "it shares a register with the block's first instruction, which it passed";
	uint8_t *mark = calloc(c->nb + 1, 1);
	if (!mark)
		return "out of memory";
	const char *why = loop_rule(c, h, a, X, mark);
	if (!why)
		why = wait_rule(c, a, X, L, mark);
	free(mark);
	return why;
}

void ck_xblock(ck *c)
{
	for (uint32_t h = 1; h < c->nb; h++) {
		uint32_t L = c->bfirst[h];
		if (L + 1 >= c->n || c->inv[L] != L + 1)
			continue;
		uint32_t X = c->map[L];
		if (X == L || c->in[X].block != h)
			continue;
		const char *why = judge(c, h, X);
		if (why) {
			char msg[256];
			snprintf(msg, sizeof msg, "%s moved from 0x%x to the end of the block before 0x%x: %s", c->in[X].opcode,
				 16 * X, 16 * L, why);
			ck_flag(c, L, msg);
			continue; /* and check_places reports the moves themselves */
		}
		c->xmoved[X] = c->xleader[L] = 1;
		c->tblock[L] = h - 1; /* the tuned layout: X ends A, H starts at L */
		c->tblast[h - 1] = L;
		c->tbfirst[h] = L + 1;
	}
}
