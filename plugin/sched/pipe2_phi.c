/* Form 2's fresh names (Q7, Q9, Q10): φ maps every register the members write (W) to a fresh one,
 * injective and keeping the tuples (a 64-bit operand's pair onto an even-aligned pair, a 128-bit
 * quad onto a 4-aligned quad); then i', Pf and the scoreboard S'.  Fresh: not R1, not RZ, neither
 * read nor written in B, dead on B's exit edge, and either below the kernel's highest named register
 * or (a raise, Q9) at or above its count; never in ptxas's reserve between the two (the registers it
 * counts above the highest one it names: 2 on every fixture; the first GPU run of form 2, whose
 * rewrites wrote them, stopped with an illegal instruction).  The lowest fresh block is taken first,
 * quads, then pairs, then single registers, then i'; a raised count is the highest register taken
 * plus one plus the reserve, within the caller's limit. */
#include "pipe2_internal.h"

#include <stdio.h>
#include <string.h>

/* named: the kernel's highest named GPR + 1; count: its register count; [named, count) the reserve. */
typedef struct pq_alloc { pp_set used; unsigned limit, top, named, count; bool taken[256]; } pq_alloc;

static bool refuse(pp_why *why, const char *rule, uint32_t off, const char *msg)
{
	if (why) {
		why->rule = rule;
		why->off = off;
		snprintf(why->msg, sizeof why->msg, "%s", msg);
	}
	return false;
}

static void put_regs(pp_set *s, const st_sass_reg *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < r[i].count; k++)
			pp_set_put(s, r[i].file, r[i].index + k, true);
}

/* Every register B reads or writes, and every one live on its exit edge. */
static void used_set(const pp_kern *x, const pp_loop *L, pp_set *s)
{
	*s = L->exitlive;
	for (uint32_t j = L->first; j <= L->bra; j++) {
		put_regs(s, x->in[j].defs, x->in[j].ndefs);
		put_regs(s, x->in[j].uses, x->in[j].nuses);
	}
}

/* The widest member R operand holding r (1, 2 or 4). */
static unsigned tuple_of(const pp_kern *x, const pq_cand *q, unsigned r)
{
	unsigned w = 1;
	for (uint32_t i = 0; i < q->g.nmem; i++) {
		const st_sass_insn *y = &x->in[q->g.mem[i]];
		for (unsigned k = 0; k < y->ndefs + y->nuses; k++) {
			const st_sass_reg *o = k < y->ndefs ? &y->defs[k] : &y->uses[k - y->ndefs];
			if (o->file == ST_RF_R && r >= o->index && r < (unsigned)o->index + o->count && o->count > w)
				w = o->count;
		}
	}
	return w;
}

/* The kernel's highest named GPR + 1 (RZ aside). */
static unsigned named_top(const pp_kern *x)
{
	unsigned top = 0;
	for (size_t j = 0; j < x->n; j++)
		for (unsigned k = 0; k < x->in[j].ndefs + x->in[j].nuses; k++) {
			const st_sass_reg *o = k < x->in[j].ndefs ? &x->in[j].defs[k] : &x->in[j].uses[k - x->in[j].ndefs];
			if (o->file == ST_RF_R && o->index != 255 && (unsigned)o->index + o->count > top)
				top = (unsigned)o->index + o->count;
		}
	return top;
}

/* Register v may be taken: not R1/RZ, untaken, unused in B, and below the highest named register or
 * at or above the count with the reserve still under the limit. */
static bool usable(const pq_alloc *a, unsigned v)
{
	if (v == 1 || v >= 255 || a->taken[v] || pp_set_has(&a->used, ST_RF_R, v))
		return false;
	return v < a->named || (v >= a->count && v + 1 + (a->count - a->named) <= a->limit);
}

/* The lowest fresh block of `size` registers aligned to size, or -1. */
static int grab(pq_alloc *a, unsigned size)
{
	for (unsigned b = 0; b + size <= a->limit; b += size) {
		bool ok = true;
		for (unsigned k = 0; k < size && ok; k++)
			ok = usable(a, b + k);
		if (!ok)
			continue;
		for (unsigned k = 0; k < size; k++)
			a->taken[b + k] = true;
		a->top = b + size > a->top ? b + size : a->top;
		return (int)b;
	}
	return -1;
}

static bool map_regs(const pp_kern *x, pq_cand *q, const pp_set *W, pq_alloc *a, pp_why *why)
{
	char m[160];
	uint32_t at = x->in[q->L.first].offset;
	for (unsigned size = 4; size >= 1; size /= 2)
		for (unsigned r = 0; r < 255; r++) {
			if (!pp_set_has(W, ST_RF_R, r) || q->phi_r[r] >= 0 || tuple_of(x, q, r) != size)
				continue;
			unsigned base = r & ~(size - 1);
			for (unsigned k = 0; k < size; k++)
				if (!pp_set_has(W, ST_RF_R, base + k) || q->phi_r[base + k] >= 0) {
					snprintf(m, sizeof m, "R%u..R%u, a %u-register operand, is not all written by the group",
						 base, base + size - 1, size);
					return refuse(why, "Q7", at, m);
				}
			int b = grab(a, size);
			if (b < 0) {
				snprintf(m, sizeof m, "no fresh %u-aligned %u register%s below %u for R%u", size, size,
					 size > 1 ? "s" : "", a->limit, base);
				return refuse(why, "Q9", at, m);
			}
			for (unsigned k = 0; k < size; k++)
				q->phi_r[base + k] = (int16_t)(b + (int)k);
		}
	int ip = grab(a, 1);
	if (ip < 0) {
		snprintf(m, sizeof m, "no fresh register below %u for i'", a->limit);
		return refuse(why, "Q9", at, m);
	}
	q->ip = (unsigned)ip;
	return true;
}

static bool map_preds(const pp_kern *x, pq_cand *q, const pp_set *W, const pp_set *used, pp_why *why)
{
	int next = 0;
	for (int p = 0; p <= 7; p++) {
		bool need = p < 7 && pp_set_has(W, ST_RF_P, (unsigned)p);
		if (!need && p < 7)
			continue;
		while (next < 7 && pp_set_has(used, ST_RF_P, (unsigned)next))
			next++;
		if (next == 7)
			return refuse(why, "Q7", x->in[q->L.first].offset, "no fresh predicate left for φ and Pf");
		if (p < 7)
			q->phi_p[p] = (int8_t)next++;
		else
			q->pf = next++;
	}
	return true;
}

/* S': the lowest scoreboard no instruction of B sets and no DEPBAR of the kernel names; one that B
 * does not wait on either first (a wait in B on S' would wait for the prefetches every pass). */
static bool pick_sb(const pp_kern *x, pq_cand *q, pp_why *why)
{
	for (int pass = 0; pass < 2; pass++)
		for (int sb = 0; sb < 6; sb++) {
			bool busy = false;
			char name[8];
			snprintf(name, sizeof name, "SB%d", sb);
			for (uint32_t j = q->L.first; j <= q->L.bra && !busy; j++)
				busy = x->in[j].ctrl.wbar == sb || x->in[j].ctrl.rbar == sb ||
				       (!pass && (x->in[j].ctrl.wait >> sb & 1));
			for (size_t j = 0; j < x->n && !busy; j++)
				busy = !strncmp(x->in[j].opcode, "DEPBAR", 6) && strstr(x->in[j].operands, name);
			if (!busy) {
				q->sb = sb;
				return true;
			}
		}
	return refuse(why, "Q10", x->in[q->L.first].offset, "no scoreboard is free in the loop");
}

bool pq_fresh_all(const pp_kern *x, pq_cand *q, const pp_set *W, unsigned reglimit, pp_why *why)
{
	memset(q->phi_r, 0xff, sizeof q->phi_r);
	memset(q->phi_p, 0xff, sizeof q->phi_p);
	unsigned count = x->c ? st_cubin_regcount(x->c, x->ki) : 0;
	if (!count)
		return refuse(why, "Q9", x->in[q->L.first].offset, "the kernel's register count is unknown");
	pq_alloc a = {.limit = reglimit > count ? reglimit : count, .count = count, .named = named_top(x)};
	a.named = a.named > count ? count : a.named;
	unsigned most = st_cubin_maxregs(x->c, x->ki);
	a.limit = a.limit > most ? (most > count ? most : count) : a.limit;
	a.limit = a.limit > 255 ? 255 : a.limit;
	used_set(x, &q->L, &a.used);
	if (!map_regs(x, q, W, &a, why) || !map_preds(x, q, W, &a.used, why) || !pick_sb(x, q, why))
		return false;
	q->regs_before = count;
	q->regs_after = a.top > count ? a.top + (count - a.named) : count;
	return true;
}
