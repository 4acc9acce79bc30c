/* Racing confirmation (docs/search.md, "Candidates and confirmation"): successive halving of the
 * candidates on paired timing, then a fresh final batch for the survivor alone.
 *
 * Invariants:
 *  - selection and estimate never share samples: the rounds only decide which candidate survives;
 *    the reported ratio and interval are the final batch's, measured after the choice, so they are
 *    an unbiased estimate for the chosen candidate (no winner's curse from the selection);
 *  - round r evaluates every candidate still in the race with round_pairs << r pairs, ranks them by
 *    the pairs-weighted mean of ln(ratio) over all their rounds, and keeps the better half (rounded
 *    up); a rejected evaluation (status != ST_OK) drops the candidate at once;
 *  - with one candidate there is no race: only the final batch;
 *  - pairs_spent counts every pair asked for (rounds and final), as the caller is charged. */
#include "search/search_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct racer {
	size_t cand;
	double sum_log, weight;   /* sum of pairs x ln(ratio), sum of pairs */
} racer;

static int racer_cmp(const void *a, const void *b)
{
	const racer *x = a, *y = b;
	double mx = x->weight > 0 ? x->sum_log / x->weight : -INFINITY;
	double my = y->weight > 0 ? y->sum_log / y->weight : -INFINITY;
	if (mx != my)
		return mx > my ? -1 : 1;
	return x->cand < y->cand ? -1 : x->cand > y->cand; /* deterministic on ties */
}

/* One round over racers[0..*n): evaluate, drop the rejected, keep the better half. */
static st_status race_round(racer *rc, size_t *n, unsigned pairs, st_race_eval_fn eval, void *ctx,
			    st_race_result *out, st_error *err)
{
	size_t kept = 0;
	for (size_t i = 0; i < *n; i++) {
		st_eval ev;
		memset(&ev, 0, sizeof ev);
		st_status s = eval(ctx, rc[i].cand, pairs, ST_EVAL_RACE, &ev, err);
		if (s)
			return s;
		out->evals++;
		out->pairs_spent += pairs;
		if (ev.status != ST_OK || !(ev.ratio > 0))
			continue;
		double w = ev.pairs ? (double)ev.pairs : (double)pairs;
		rc[i].sum_log += w * log(ev.ratio);
		rc[i].weight += w;
		rc[kept++] = rc[i];
	}
	qsort(rc, kept, sizeof *rc, racer_cmp);
	*n = kept > 1 ? (kept + 1) / 2 : kept;
	return ST_OK;
}

st_status st_race_run(size_t n, st_race_eval_fn eval, void *ctx, const st_race_opts *o, st_race_result *out,
		      st_error *err)
{
	memset(out, 0, sizeof *out);
	out->winner = out->chosen = SIZE_MAX;
	if (!n)
		return ST_OK;
	if (!eval || !o || !o->final_pairs || !o->round_pairs)
		return st_error_set(err, ST_EINVAL, "st_race_run needs an evaluator, round_pairs and final_pairs");
	racer *rc = calloc(n, sizeof *rc);
	if (!rc)
		return st_error_set(err, ST_ENOMEM, "out of memory for the race");
	for (size_t i = 0; i < n; i++)
		rc[i].cand = i;
	size_t alive = n;
	st_status s = ST_OK;
	unsigned pairs = o->round_pairs;
	while (alive > 1 && !s) {
		s = race_round(rc, &alive, pairs, eval, ctx, out, err);
		out->rounds++;
		pairs = pairs > UINT32_MAX / 2 ? pairs : pairs * 2;
	}
	if (!s && alive == 1) {
		out->chosen = rc[0].cand;
		st_eval ev;
		memset(&ev, 0, sizeof ev);
		s = eval(ctx, rc[0].cand, o->final_pairs, ST_EVAL_FINAL, &ev, err);
		if (!s) {
			out->evals++;
			out->pairs_spent += o->final_pairs;
			out->final = ev;
			out->have_final = 1;
			if (ev.status == ST_OK && ev.lo > o->min_lo)
				out->winner = rc[0].cand;
		}
	}
	free(rc);
	return s;
}
