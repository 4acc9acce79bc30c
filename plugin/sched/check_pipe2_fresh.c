/* The pipe form-2 checker's fresh names (docs/sched.md "Checker: pipe form 2"): phi injective onto
 * fresh registers (Q7), i' and Pf fresh and apart from phi's image (Q7), S' fresh (Q10), and the
 * register count (Q9).  Fresh: named by no instruction of B in the original and dead on B's exit
 * edge (own liveness), or a GPR at or above the original's register count; never one of the
 * registers ptxas counts above the original's highest named one (its reserve, 2 on every fixture;
 * the first GPU run of form 2, whose rewrites wrote them, stopped with an illegal instruction), and
 * a raised count keeps that reserve above the highest fresh register. */
#include "check_pipe2.h"

#include <stdio.h>
#include <string.h>

static bool names(const st_sass_insn *x, unsigned f, unsigned i)
{
	for (unsigned k = 0; k < x->ndefs + x->nuses; k++) {
		const st_sass_reg *r = k < x->ndefs ? &x->defs[k] : &x->uses[k - x->ndefs];
		if (r->file == f && i >= r->index && i < (unsigned)r->index + r->count)
			return true;
	}
	return false;
}

/* Is (f, i) fresh for loop l?  *why gets the reason when not. */
static bool fresh(const cp2 *q, const cp2_loop *l, unsigned f, unsigned i, char *why, size_t wn)
{
	const cp *p = q->p;
	const cp_loop *lo = l->lo;
	if ((f == ST_RF_R && (i == 255 || i == 1)) || (f == ST_RF_P && i >= 7)) {
		snprintf(why, wn, "%s", f == ST_RF_P ? "PT" : i == 1 ? "R1 (the stack pointer)" : "RZ");
		return false;
	}
	for (uint32_t w = lo->f; w <= lo->l; w++)
		if (names(&p->in[w], f, i)) {
			snprintf(why, wn, "%s at 0x%x names it in the loop", p->in[w].opcode, 16 * w);
			return false;
		}
	if (f == ST_RF_R && i >= q->regs_o)
		return true;
	if (f == ST_RF_R && i >= q->named_o) {
		snprintf(why, wn, "in the reserve R%u..R%u the original counts above its highest named register", q->named_o,
			 q->regs_o - 1);
		return false;
	}
	size_t bx = (size_t)-1;
	for (size_t b = 0; b < p->nb; b++)
		if (p->bfirst[b] == lo->l + 1)
			bx = b;
	uint32_t at = CP_NONE;
	if (bx == (size_t)-1 || cp_live_into(p, bx, f, i, &at)) {
		snprintf(why, wn, "live on the exit of loop 0x%x (read at 0x%x)", 16 * lo->f, at == CP_NONE ? 0 : 16 * at);
		return false;
	}
	return true;
}

/* phi's image: injective, fresh, apart from i' and Pf. */
static void check_image(cp2 *q, cp2_loop *l, unsigned f)
{
	cp *p = q->p;
	const int16_t *m = f == ST_RF_R ? l->rphi : l->pphi;
	unsigned n = f == ST_RF_R ? CP2_NR : 8, other = f == ST_RF_R ? (unsigned)l->ip : (unsigned)l->pfp;
	char a[16], b[16], c[16], why[160];
	for (unsigned x = 0; x < n; x++) {
		if (m[x] < 0)
			continue;
		st_sass_reg_str(a, sizeof a, f, x), st_sass_reg_str(b, sizeof b, f, (unsigned)m[x]);
		for (unsigned y = x + 1; y < n; y++)
			if (m[y] == m[x]) {
				st_sass_reg_str(c, sizeof c, f, y);
				cp_flag(p, l->pf, "Q7", "phi is not injective: %s and %s both become %s", a, c, b);
			}
		if (!fresh(q, l, f, (unsigned)m[x], why, sizeof why))
			cp_flag(p, l->pf, "Q7", "phi(%s) = %s is not fresh: %s", a, b, why);
		if ((unsigned)m[x] == other)
			cp_flag(p, l->pf, "Q7", "phi(%s) = %s is also %s", a, b, f == ST_RF_R ? "i'" : "Pf");
	}
}

/* S' (the scoreboard the prefetch block's first load sets): set by no instruction of B, named by
 * no DEPBAR of the kernel. */
static void check_sb(cp2 *q, cp2_loop *l)
{
	cp *p = q->p;
	cp_loop *lo = l->lo;
	for (uint32_t x = lo->f; x < lo->l && l->sb < 0; x++)
		if (l->ho[x - lo->f] != CP_NONE)
			l->sb = q->t[p->inv[x]].ctrl.wbar;
	if (l->sb < 0 || l->sb > 5) {
		cp_flag(p, l->pf, "Q10", "the prefetch block's loads set no scoreboard");
		return;
	}
	char sb[8];
	snprintf(sb, sizeof sb, "SB%d", l->sb);
	for (uint32_t w = 0; w < p->n; w++) {
		const st_sass_insn *x = &p->in[w];
		if (w >= lo->f && w <= lo->l && (x->ctrl.wbar == l->sb || x->ctrl.rbar == l->sb))
			cp_flag(p, l->pf, "Q10", "S' = SB%d is not fresh: %s at 0x%x sets it in the loop", l->sb, x->opcode, 16 * w);
		if (!strncmp(x->opcode, "DEPBAR", 6) && strstr(x->operands, sb))
			cp_flag(p, l->pf, "Q10", "S' = SB%d is not fresh: %s at 0x%x names it", l->sb, x->opcode, 16 * w);
	}
}

/* The original's highest named GPR + 1 (RZ aside). */
static unsigned named_top(const cp *p)
{
	unsigned top = 0;
	for (uint32_t w = 0; w < p->n; w++) {
		const st_sass_insn *x = &p->in[w];
		for (unsigned k = 0; k < x->ndefs + x->nuses; k++) {
			const st_sass_reg *r = k < x->ndefs ? &x->defs[k] : &x->uses[k - x->ndefs];
			if (r->file == ST_RF_R && r->index != 255 && (unsigned)r->index + r->count > top)
				top = (unsigned)r->index + r->count;
		}
	}
	return top;
}

void cp2_check_regs(cp2 *q)
{
	unsigned high = 0, hr = 0;
	char why[160];
	q->named_o = named_top(q->p);
	if (q->named_o > q->regs_o)
		q->named_o = q->regs_o;
	for (size_t k = 0; k < q->nl; k++) {
		cp2_loop *l = &q->lp[k];
		check_image(q, l, ST_RF_R);
		check_image(q, l, ST_RF_P);
		if (l->ip >= 0 && !fresh(q, l, ST_RF_R, (unsigned)l->ip, why, sizeof why))
			cp_flag(q->p, l->pf, "Q7", "i' = R%d is not fresh: %s", l->ip, why);
		if (l->pfp >= 0 && !fresh(q, l, ST_RF_P, (unsigned)l->pfp, why, sizeof why))
			cp_flag(q->p, l->pf + 1, "Q7", "Pf = P%d is not fresh: %s", l->pfp, why);
		check_sb(q, l);
		for (unsigned x = 0; x < CP2_NR; x++)
			if (l->rphi[x] >= 0 && (unsigned)l->rphi[x] + 1 > high)
				high = (unsigned)l->rphi[x] + 1, hr = (unsigned)l->rphi[x];
		if (l->ip >= 0 && l->ip != 255 && (unsigned)l->ip + 1 > high)
			high = (unsigned)l->ip + 1, hr = (unsigned)l->ip;
	}
	unsigned reserve = q->regs_o - q->named_o;
	unsigned want = high > q->regs_o ? high + reserve : q->regs_o;
	if (q->regs_t != want)
		cp_flag(q->p, 0, "Q9",
			"register count %u, the rules want %u (the original's %u, the highest fresh register R%u, "
			"a reserve of %u above it)", q->regs_t, want, q->regs_o, hr, reserve);
}
