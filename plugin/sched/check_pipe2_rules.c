/* The pipe form-2 checker's rules on the original reading (docs/sched.md "Checker: pipe form 2"):
 * Q1 shape (form 1's P1, the chosen loads unguarded), Q2 the closure (form 1's P2), Q3 the
 * induction update and the exit test, Q4 the members' inputs, Q5 interference.  Registers are
 * judged one unit (file, index) at a time. */
#include "check_pipe2.h"

#include <stdio.h>
#include <string.h>

static unsigned writers(const cp *p, const cp_loop *lo, unsigned f, unsigned i, uint32_t *one)
{
	unsigned n = 0;
	*one = CP_NONE;
	for (uint32_t w = lo->f; w <= lo->l; w++)
		if (cp_writes(&p->in[w], f, i) && !n++)
			*one = w;
	return n;
}

/* Q1 beyond form 1's P1, Q2's loads: every member LDG is a chosen load, unguarded in the original. */
static void loads(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	for (uint32_t x = lo->f; x < lo->l; x++) {
		const st_sass_insn *in = &p->in[x];
		if (!lo->mem[x - lo->f] || !(in->flags & ST_F_LOAD))
			continue;
		if (l->ho[x - lo->f] == CP_NONE)
			cp_flag(p, p->inv[x], "Q2", "%s at 0x%x left its place without a hand-over", in->opcode, 16 * x);
		else if (in->guard >= 0)
			cp_flag(p, p->inv[x], "Q1", "%s at 0x%x is guarded in the original (only unguarded loads)", in->opcode,
				16 * x);
	}
}

/* Q3: U and E stay, U after the last member, E after U; E is ISETP.<cmp>.AND Pe, PT, i, b, PT. */
static void induction(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	const uint8_t *ew = p->ocode + 16 * lo->e;
	if (lo->mem[l->u - lo->f])
		cp_flag(p, p->inv[l->u], "Q3", "the induction update %s at 0x%x left its place", p->in[l->u].opcode, 16 * l->u);
	if (lo->p != 0 && l->u < lo->p)
		cp_flag(p, p->inv[l->u], "Q3", "the induction update at 0x%x lies before the member at 0x%x", 16 * l->u,
			16 * lo->p);
	if (lo->e < l->u)
		cp_flag(p, p->inv[lo->e], "Q3", "the exit compare at 0x%x lies before the induction update at 0x%x", 16 * lo->e,
			16 * l->u);
	if (strstr(p->in[lo->e].opcode, ".EX") || cp_bits(ew, 12, 4) != 7 || cp_bits(ew, 74, 2) || cp_bits(ew, 84, 3) != 7 ||
	    cp_bits(ew, 87, 4) != 7 || p->in[lo->e].ndefs != 1)
		cp_flag(p, p->inv[lo->e], "Q3", "the exit compare at 0x%x is not ISETP.<cmp>.AND Pe, PT, a, b, PT", 16 * lo->e);
	unsigned other = ew[(l->ifield == 24 ? 32 : 24) / 8];
	uint32_t one;
	if (other != 0xff && cp_reads(&p->in[lo->e], ST_RF_R, other) &&
	    writers(p, lo, ST_RF_R, other, &one))
		cp_flag(p, p->inv[lo->e], "Q3", "the exit compare at 0x%x reads R%u, written in the loop at 0x%x", 16 * lo->e,
			other, 16 * one);
}

/* Q4: each input of a member (a unit no earlier member wrote) is written nowhere in B, is i, or is a
 * feeder's output. */
static void inputs(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	for (uint32_t m = lo->f; m < lo->l; m++) {
		const st_sass_insn *x = &p->in[m];
		for (unsigned k = 0; lo->mem[m - lo->f] && k < x->nuses; k++)
			for (unsigned u = 0; u < x->uses[k].count; u++) {
				unsigned f = x->uses[k].file, i = x->uses[k].index + u;
				bool earlier = false;
				for (uint32_t w = lo->f; w < m && !earlier; w++)
					earlier = lo->mem[w - lo->f] && cp_writes(&p->in[w], f, i);
				uint32_t one;
				unsigned nw = earlier ? 0 : writers(p, lo, f, i, &one);
				if (!nw || (f == ST_RF_R && i == l->iv && nw == 1 && one == l->u) ||
				    (nw == 1 && lo->feed[one - lo->f]))
					continue;
				char nm[16];
				st_sass_reg_str(nm, sizeof nm, f, i);
				cp_flag(p, p->inv[m], "Q4", "%s at 0x%x reads %s, written %u time%s in the loop (first at 0x%x): "
							   "neither invariant, i nor a feeder's", x->opcode, 16 * m, nm, nw,
					nw == 1 ? "" : "s", 16 * one);
			}
	}
}

/* The latest writer of the unit before B position q, around the back edge (q = l + 1: B's end). */
static uint32_t latest(const cp *p, const cp_loop *lo, uint32_t q, unsigned f, unsigned i)
{
	for (uint32_t w = q; w-- > lo->f;)
		if (cp_writes(&p->in[w], f, i))
			return w;
	for (uint32_t w = lo->l + 1; w-- > q;)
		if (cp_writes(&p->in[w], f, i))
			return w;
	return CP_NONE;
}

/* Q5 for one unit r some member writes: a non-member's read (and B's exit, when r is live there)
 * sees a non-member's value or a chosen load's destination; no member writes a chosen load's
 * destination after it. */
static void interference(cp2 *q, cp2_loop *l, unsigned f, unsigned i, size_t bx)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	char nm[16];
	st_sass_reg_str(nm, sizeof nm, f, i);
	uint32_t at = CP_NONE;
	bool live = bx == (size_t)-1 || cp_live_into(p, bx, f, i, &at);
	for (uint32_t r = lo->f; r <= lo->l + 1; r++) {
		if (r <= lo->l && (lo->mem[r - lo->f] || !cp_reads(&p->in[r], f, i)))
			continue;
		if (r > lo->l && !live)
			continue;
		uint32_t w = latest(p, lo, r, f, i);
		if (w == CP_NONE || !lo->mem[w - lo->f] || (l->ho[w - lo->f] != CP_NONE && p->in[w].defs[0].file == f &&
							    i >= p->in[w].defs[0].index &&
							    i < (unsigned)p->in[w].defs[0].index + p->in[w].defs[0].count))
			continue;
		if (r <= lo->l)
			cp_flag(p, p->inv[r], "Q5", "%s at 0x%x reads %s, which the member %s at 0x%x wrote", p->in[r].opcode,
				16 * r, nm, p->in[w].opcode, 16 * w);
		else
			cp_flag(p, p->inv[lo->l], "Q5", "%s written by the member %s at 0x%x is live on the exit of loop 0x%x "
							"(read at 0x%x)", nm, p->in[w].opcode, 16 * w, 16 * lo->f,
				at == CP_NONE ? 0 : 16 * at);
	}
	for (uint32_t x = lo->f; x < lo->l; x++)
		if (l->ho[x - lo->f] != CP_NONE && cp_writes(&p->in[x], f, i))
			for (uint32_t w = x + 1; w < lo->l; w++)
				if (lo->mem[w - lo->f] && cp_writes(&p->in[w], f, i))
					cp_flag(p, p->inv[w], "Q5", "the member %s at 0x%x writes %s after the load at 0x%x",
						p->in[w].opcode, 16 * w, nm, 16 * x);
}

static size_t exit_block(const cp *p, const cp_loop *lo)
{
	for (size_t b = 0; b < p->nb; b++)
		if (p->bfirst[b] == lo->l + 1)
			return b;
	return (size_t)-1;
}

/* W: every unit a member writes, each judged once. */
static void check_w(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	unsigned seen[256][2], ns = 0;
	size_t bx = exit_block(p, lo);
	for (uint32_t m = lo->f; m < lo->l; m++) {
		const st_sass_insn *x = &p->in[m];
		for (unsigned d = 0; lo->mem[m - lo->f] && d < x->ndefs; d++)
			for (unsigned u = 0; u < x->defs[d].count; u++) {
				unsigned f = x->defs[d].file, i = x->defs[d].index + u, s;
				for (s = 0; s < ns && (seen[s][0] != f || seen[s][1] != i); s++)
					;
				if (s < ns || ns == 256)
					continue;
				seen[ns][0] = f, seen[ns++][1] = i;
				interference(q, l, f, i, bx);
			}
	}
}

void cp2_check_rules(cp2 *q, cp2_loop *l)
{
	cp_shape(q->p, l->lo);
	cp_closure(q->p, l->lo);
	loads(q, l);
	induction(q, l);
	inputs(q, l);
	check_w(q, l);
}
