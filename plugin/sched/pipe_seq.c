/* The instruction sequences P8 checks for one loop of a pipe plan (pipe_apply.c): B's end into the
 * next pass (the wrap), every way into H followed by the peel and the first pass, and the last pass
 * into every path from B's exit.  Each entry carries the issue cycle its dynamic instance had in the
 * original code (relative to B's first pass), so that pa_fix can keep ptxas's own distances. */
#include "pipe_timing.h"

#include <stdlib.h>

#define PA_SEQ 4096 /* entries of one sequence */
#define PA_TAIL 40  /* instructions of a predecessor of H that a window looks at */

typedef struct pa_seq { pa_ins e[PA_SEQ]; size_t n; } pa_seq;

static void put(pa_seq *s, const st_sass_insn *x, const st_sass_insn *o, st_ctrl *ct, int64_t t0)
{
	if (s->n < PA_SEQ)
		s->e[s->n++] = (pa_ins){x, o, ct, t0 == PA_NO_T ? PA_NO_T : (int32_t)t0};
}

static uint32_t block_of(const pp_kern *x, uint32_t blk, uint32_t *count, int32_t succ[2])
{
	uint32_t first;
	st_sass_block(x->k, blk, &first, count, succ);
	return first;
}

/* Original stall cycles of [a, b). */
static int64_t cycles(const pp_kern *x, uint32_t a, uint32_t b)
{
	int64_t c = 0;
	for (uint32_t i = a; i < b; i++)
		c += x->in[i].ctrl.stall;
	return c;
}

static pa_loop *planned(pa_plan *P, uint32_t blk, int h)
{
	for (size_t l = 0; l < P->n; l++)
		if ((h ? P->lp[l].L.h : P->lp[l].L.b) == blk)
			return &P->lp[l];
	return NULL;
}

/* B in its new order for the pass starting at original cycle base (PA_NO_T: unknown); members compute
 * the next pass (last: there is none, their instances are new). */
static void put_b(pa_plan *P, pa_loop *lp, pa_seq *s, int64_t base, bool last)
{
	const pp_loop *L = &lp->L;
	int64_t C = cycles(&P->x, L->first, L->bra + 1);
	for (uint32_t k = 0; k <= L->bra - L->first; k++) {
		uint32_t i = lp->order[k], m = 0;
		while (m < lp->g.nmem && lp->g.mem[m] != i)
			m++;
		bool mem = m < lp->g.nmem;
		int64_t t = base == PA_NO_T || (mem && last) ? PA_NO_T : base + cycles(&P->x, L->first, i) + (mem ? C : 0);
		put(s, m < lp->g.nmem ? &lp->bed[m].x : &P->x.in[i], &P->x.in[i], &P->ct[i], t);
	}
}

static void put_peel(pa_plan *P, pa_loop *lp, pa_seq *s, bool timed)
{
	for (uint32_t t = 0; t < lp->npeel; t++) {
		const st_sass_insn *o = &P->x.in[lp->ped[t].x.index];
		put(s, &lp->ped[t].x, o, &lp->pct[t], timed ? cycles(&P->x, lp->L.first, o->index) : PA_NO_T);
	}
}

/* Block blk as it runs after the rewrite, starting at original cycle t (its last `tail` instructions
 * when tail > 0); returns the cycle after it. */
static int64_t put_block(pa_plan *P, uint32_t blk, pa_seq *s, int64_t t, uint32_t tail, bool own_peel)
{
	uint32_t count;
	int32_t succ[2];
	uint32_t first = block_of(&P->x, blk, &count, succ);
	pa_loop *lp = planned(P, blk, 0);
	if (lp) {
		put_b(P, lp, s, PA_NO_T, true);
		return PA_NO_T;
	}
	for (uint32_t i = first; i < first + count; i++) {
		if (!tail || i + tail >= first + count)
			put(s, &P->x.in[i], &P->x.in[i], &P->ct[i], t);
		t = t == PA_NO_T ? t : t + P->x.in[i].ctrl.stall;
	}
	if ((lp = planned(P, blk, 1)))
		put_peel(P, lp, s, own_peel);
	return t;
}

/* B's end into the next passes: B repeated until the last copy is 2 * 30 cycles from the first. */
static bool time_wrap(pa_plan *P, pa_loop *lp, pa_seq *s, pp_why *why)
{
	uint32_t len = lp->L.bra - lp->L.first + 1;
	int64_t C = cycles(&P->x, lp->L.first, lp->L.bra + 1);
	size_t reps = 0;
	s->n = 0;
	while (reps < 2 || (reps < 32 && reps * (size_t)(C > 0 ? C : 1) < 60 && s->n + len <= PA_SEQ)) {
		put_b(P, lp, s, (int64_t)reps * C, false);
		reps++;
	}
	return pa_fix(P->x.sm, s->e, s->n, s->n - len, why);
}

/* Every predecessor of H (or none) into H, the peel and the first pass of B. */
static bool time_entry(pa_plan *P, pa_loop *lp, pa_seq *s, pp_why *why)
{
	uint32_t count;
	int32_t succ[2];
	uint32_t hfirst = block_of(&P->x, lp->L.h, &count, succ);
	int64_t th = -cycles(&P->x, hfirst, hfirst + count);
	bool any = false;
	for (uint32_t b = 0; b <= P->x.nb; b++) {
		s->n = 0;
		if (b < P->x.nb) {
			uint32_t f = block_of(&P->x, b, &count, succ);
			if (succ[0] != (int32_t)lp->L.h && succ[1] != (int32_t)lp->L.h)
				continue;
			any = true;
			put_block(P, b, s, th - cycles(&P->x, f, f + count), PA_TAIL, false);
		} else if (any) {
			break;
		}
		put_block(P, lp->L.h, s, th, 0, true);
		size_t from = s->n - lp->npeel;
		put_b(P, lp, s, 0, false);
		if (!pa_fix(P->x.sm, s->e, s->n, from, why))
			return false;
	}
	return true;
}

/* The last pass into every path from B's exit, 30 cycles deep (at most 4 blocks). */
static bool time_exit(pa_plan *P, pa_seq *s, size_t endb, uint32_t blk, int64_t t, int depth, pp_why *why)
{
	size_t at = s->n;
	t = put_block(P, blk, s, t, 0, false);
	if (!pa_fix(P->x.sm, s->e, s->n, at, why))
		return false;
	int d = 0;
	for (size_t k = endb; k < s->n; k++)
		d += s->e[k].ct->stall;
	uint32_t count;
	int32_t succ[2];
	block_of(&P->x, blk, &count, succ);
	for (int k = 0; k < 2 && d < 30 && depth < 4; k++)
		if (succ[k] >= 0 && !time_exit(P, s, endb, (uint32_t)succ[k], t, depth + 1, why))
			return false;
	s->n = at;
	return true;
}

bool pa_time_loop(pa_plan *P, pa_loop *lp, pp_why *why)
{
	pa_seq *s = malloc(sizeof *s);
	if (!s) {
		why->rule = "P8";
		snprintf(why->msg, sizeof why->msg, "out of memory");
		return false;
	}
	bool ok = time_wrap(P, lp, s, why) && time_entry(P, lp, s, why);
	if (ok) {
		s->n = 0;
		put_b(P, lp, s, 0, true);
		ok = time_exit(P, s, s->n, lp->L.b + 1, cycles(&P->x, lp->L.first, lp->L.bra + 1), 0, why);
	}
	free(s);
	return ok;
}
