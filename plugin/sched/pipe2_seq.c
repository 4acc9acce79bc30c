/* Q11 for form 2 (form 1's P8, pipe_seq.c, over form 2's new code): B's new layout into the next passes
 * (the wrap), every way into H followed by the peel and the first pass, and the last pass into every
 * path from B's exit (30 cycles, 4 blocks deep).  Unchanged original instructions carry the issue
 * cycle their instance had in the original (so pa_fix keeps ptxas's own distances between them); every
 * edited or inserted instruction gets the full latency (PA_NO_T). */
#include "pipe2_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PQ_SEQ 4096 /* entries of one sequence */
#define PQ_TAIL 40  /* instructions of a predecessor of H that a window looks at */

typedef struct pq_seq { pa_ins e[PQ_SEQ]; size_t n; } pq_seq;

static void put(pq_seq *s, const st_sass_insn *x, st_ctrl *ct, int64_t t0)
{
	if (s->n < PQ_SEQ)
		s->e[s->n++] = (pa_ins){x, x, ct, t0 == PA_NO_T ? PA_NO_T : (int32_t)t0};
}

static int64_t cycles(const pp_kern *x, uint32_t a, uint32_t b)
{
	int64_t c = 0;
	for (uint32_t i = a; i < b; i++)
		c += x->in[i].ctrl.stall;
	return c;
}

static pq_loop *planned(pq_plan *P, uint32_t blk, int h)
{
	for (size_t l = 0; l < P->n; l++)
		if ((h ? P->lp[l].q.L.h : P->lp[l].q.L.b) == blk)
			return &P->lp[l];
	return NULL;
}

/* B's new layout for the pass starting at original cycle base (PA_NO_T: unknown). */
static void put_b(pq_plan *P, pq_loop *lp, pq_seq *s, int64_t base)
{
	for (uint32_t k = 0; k < lp->nb; k++) {
		pq_ent *e = &lp->b[k];
		bool same = !e->edited && e->orig >= 0 && base != PA_NO_T;
		put(s, pq_insn(P, e), pq_ct(P, e), same ? base + cycles(&P->x, lp->q.L.first, (uint32_t)e->orig) : PA_NO_T);
	}
}

static void put_peel(pq_plan *P, pq_loop *lp, pq_seq *s)
{
	for (uint32_t t = 0; t < lp->np; t++)
		put(s, pq_insn(P, &lp->peel[t]), pq_ct(P, &lp->peel[t]), PA_NO_T);
}

/* Block blk as it runs after the rewrite from original cycle t (its last `tail` instructions when
 * tail > 0), a planned H followed by its peel; returns the cycle after it. */
static int64_t put_block(pq_plan *P, uint32_t blk, pq_seq *s, int64_t t, uint32_t tail)
{
	uint32_t first, count;
	int32_t succ[2];
	st_sass_block(P->x.k, blk, &first, &count, succ);
	pq_loop *lp = planned(P, blk, 0);
	if (lp) {
		put_b(P, lp, s, PA_NO_T);
		return PA_NO_T;
	}
	for (uint32_t i = first; i < first + count; i++) {
		if (!tail || i + tail >= first + count)
			put(s, &P->x.in[i], &P->ct[i], t);
		t = t == PA_NO_T ? t : t + P->x.in[i].ctrl.stall;
	}
	if ((lp = planned(P, blk, 1)))
		put_peel(P, lp, s);
	return t;
}

/* B's end into the next passes: B repeated until the last copy is 2 * 30 cycles from the first. */
static bool time_wrap(pq_plan *P, pq_loop *lp, pq_seq *s, pp_why *why)
{
	int64_t C = cycles(&P->x, lp->q.L.first, lp->q.L.bra + 1);
	size_t reps = 0;
	s->n = 0;
	while (reps < 2 || (reps < 32 && reps * (size_t)(C > 0 ? C : 1) < 60 && s->n + lp->nb <= PQ_SEQ)) {
		put_b(P, lp, s, (int64_t)reps * C);
		reps++;
	}
	return pa_fix(P->x.sm, s->e, s->n, s->n - lp->nb, why);
}

/* Every predecessor of H (or none) into H, the peel and the first pass of B. */
static bool time_entry(pq_plan *P, pq_loop *lp, pq_seq *s, pp_why *why)
{
	uint32_t first, count;
	int32_t succ[2];
	st_sass_block(P->x.k, lp->q.L.h, &first, &count, succ);
	int64_t th = -cycles(&P->x, first, first + count);
	bool any = false;
	for (uint32_t b = 0; b <= P->x.nb; b++) {
		s->n = 0;
		if (b < P->x.nb) {
			st_sass_block(P->x.k, b, &first, &count, succ);
			if (succ[0] != (int32_t)lp->q.L.h && succ[1] != (int32_t)lp->q.L.h)
				continue;
			any = true;
			put_block(P, b, s, th - cycles(&P->x, first, first + count), PQ_TAIL);
		} else if (any) {
			break;
		}
		put_block(P, lp->q.L.h, s, th, 0);
		size_t from = s->n - lp->np;
		put_b(P, lp, s, 0);
		if (!pa_fix(P->x.sm, s->e, s->n, from, why))
			return false;
	}
	return true;
}

/* The last pass into every path from B's exit, 30 cycles deep (at most 4 blocks). */
static bool time_exit(pq_plan *P, pq_seq *s, size_t endb, uint32_t blk, int64_t t, int depth, pp_why *why)
{
	size_t at = s->n;
	t = put_block(P, blk, s, t, 0);
	if (!pa_fix(P->x.sm, s->e, s->n, at, why))
		return false;
	int d = 0;
	for (size_t k = endb; k < s->n; k++)
		d += s->e[k].ct->stall;
	uint32_t first, count;
	int32_t succ[2];
	st_sass_block(P->x.k, blk, &first, &count, succ);
	for (int k = 0; k < 2 && d < 30 && depth < 4; k++)
		if (succ[k] >= 0 && !time_exit(P, s, endb, (uint32_t)succ[k], t, depth + 1, why))
			return false;
	s->n = at;
	return true;
}

bool pq_time_loop(pq_plan *P, pq_loop *lp, pp_why *why)
{
	pq_seq *s = malloc(sizeof *s);
	if (!s) {
		why->rule = "Q11";
		snprintf(why->msg, sizeof why->msg, "out of memory");
		return false;
	}
	bool ok = time_wrap(P, lp, s, why) && time_entry(P, lp, s, why);
	if (ok) {
		s->n = 0;
		put_b(P, lp, s, 0);
		ok = time_exit(P, s, s->n, lp->q.L.b + 1, cycles(&P->x, lp->q.L.first, lp->q.L.bra + 1), 0, why);
	}
	if (!ok && why->rule && !strcmp(why->rule, "P8"))
		why->rule = "Q11";
	free(s);
	return ok;
}
