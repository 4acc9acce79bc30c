/* The racing confirmation (plugin/search/race.c) against a fake timer: deterministic noise of a
 * known size around known true ratios, no GPU.  The allocation (rounds, pairs, evaluations), the
 * survivor, the rule that the reported estimate is the fresh final batch alone, rejected
 * candidates, and the winner's curse: the selection's own numbers are biased upwards, the final
 * batch's are not. */
#include "testutil.h"
#include "sasstune/search.h"
#include "search/search_int.h"

#include <math.h>
#include <string.h>

#define MAXC 16
typedef struct fake {
	size_t n;
	double truth[MAXC];      /* true ln(original / candidate) */
	double race_bias[MAXC];  /* added to race rounds only (a candidate that looks better than it is) */
	st_status verdict[MAXC]; /* ST_OK or a rejection */
	double sigma;            /* ln-noise of one pair */
	st_rng rng;
	unsigned calls, final_calls, race_after_final;
	unsigned pairs_of[MAXC];
	double race_max;         /* the largest ln ratio any race round reported */
} fake;

static st_status fake_eval(void *ctx, size_t cand, unsigned pairs, unsigned kind, st_eval *out, st_error *err)
{
	(void)err;
	fake *f = ctx;
	assert_true(cand < f->n);
	f->calls++;
	f->pairs_of[cand] += pairs;
	if (kind == ST_EVAL_FINAL)
		f->final_calls++;
	else if (f->final_calls)
		f->race_after_final++;
	memset(out, 0, sizeof *out);
	out->status = f->verdict[cand];
	if (out->status != ST_OK)
		return ST_OK;
	double sd = f->sigma / sqrt((double)pairs);
	double l = f->truth[cand] + (kind == ST_EVAL_RACE ? f->race_bias[cand] : 0) + sd * st_rng_normal(&f->rng);
	if (kind == ST_EVAL_RACE && l > f->race_max)
		f->race_max = l;
	out->ratio = exp(l);
	out->lo = exp(l - 1.96 * sd);
	out->hi = exp(l + 1.96 * sd);
	out->pairs = pairs;
	return ST_OK;
}

static void fake_init(fake *f, size_t n, double sigma, uint64_t seed)
{
	memset(f, 0, sizeof *f);
	f->n = n;
	f->sigma = sigma;
	f->race_max = -INFINITY;
	st_rng_seed(&f->rng, seed);
}

/* 8 candidates, 50 pairs: rounds of 8 x 50, 4 x 100, 2 x 200, then one final batch. */
static void test_allocation(void **state)
{
	(void)state;
	fake f;
	fake_init(&f, 8, 0.0, 1);
	for (size_t i = 0; i < 8; i++)
		f.truth[i] = 0.001 * (double)i;
	st_race_opts o = {.round_pairs = 50, .final_pairs = 200, .min_lo = 1.0};
	st_race_result r;
	assert_int_equal(st_race_run(8, fake_eval, &f, &o, &r, NULL), ST_OK);
	assert_int_equal(r.rounds, 3);
	assert_int_equal(r.evals, 15);
	assert_int_equal(f.calls, 15);
	assert_int_equal(r.pairs_spent, 8 * 50 + 4 * 100 + 2 * 200 + 200);
	assert_int_equal(f.final_calls, 1);
	assert_int_equal(f.race_after_final, 0);
	assert_int_equal(r.chosen, 7);               /* noise-free: the best survives */
	assert_int_equal(r.winner, 7);
	assert_true(r.have_final);
	assert_true(fabs(log(r.final.ratio) - 0.007) < 1e-12);
	assert_int_equal(f.pairs_of[7], 50 + 100 + 200 + 200);
	assert_int_equal(f.pairs_of[0], 50);          /* the worst half leaves after one round */
	/* an odd count keeps the better half rounded up: 5 -> 3 -> 2 -> 1 */
	fake_init(&f, 5, 0.0, 1);
	for (size_t i = 0; i < 5; i++)
		f.truth[i] = 0.01 - 0.001 * (double)i;
	assert_int_equal(st_race_run(5, fake_eval, &f, &o, &r, NULL), ST_OK);
	assert_int_equal(r.rounds, 3);
	assert_int_equal(r.pairs_spent, 5 * 50 + 3 * 100 + 2 * 200 + 200);
	assert_int_equal(r.winner, 0);
}

/* One candidate: no race, the final batch alone.  None: nothing happens. */
static void test_single_and_none(void **state)
{
	(void)state;
	fake f;
	fake_init(&f, 1, 0.0, 1);
	f.truth[0] = 0.02;
	st_race_opts o = {.round_pairs = 30, .final_pairs = 400, .min_lo = 1.005};
	st_race_result r;
	assert_int_equal(st_race_run(1, fake_eval, &f, &o, &r, NULL), ST_OK);
	assert_int_equal(r.rounds, 0);
	assert_int_equal(r.evals, 1);
	assert_int_equal(r.pairs_spent, 400);
	assert_int_equal(r.winner, 0);
	assert_int_equal(st_race_run(0, fake_eval, &f, &o, &r, NULL), ST_OK);
	assert_int_equal(r.winner, SIZE_MAX);
	assert_int_equal(r.chosen, SIZE_MAX);
	assert_int_equal(r.evals, 0);
	o.final_pairs = 0;
	st_error err;
	assert_int_equal(st_race_run(1, fake_eval, &f, &o, &r, &err), ST_EINVAL);
}

/* The reported estimate is the final batch, never the race's numbers: a candidate that looks 5 %
 * better in the race than it is wins the race, and is then measured for what it is. */
static void test_final_is_fresh(void **state)
{
	(void)state;
	fake f;
	fake_init(&f, 4, 0.0, 1);
	f.truth[0] = f.truth[1] = f.truth[2] = 0.010;
	f.truth[3] = 0.002;
	f.race_bias[3] = 0.05;
	st_race_opts o = {.round_pairs = 40, .final_pairs = 200, .min_lo = 1.005};
	st_race_result r;
	assert_int_equal(st_race_run(4, fake_eval, &f, &o, &r, NULL), ST_OK);
	assert_int_equal(r.chosen, 3);
	assert_true(fabs(log(r.final.ratio) - 0.002) < 1e-12);
	assert_int_equal(r.winner, SIZE_MAX);         /* 0.2 % does not clear 1.005 */
	o.min_lo = 1.001;
	fake_init(&f, 4, 0.0, 1);
	f.truth[0] = f.truth[1] = f.truth[2] = 0.010;
	f.truth[3] = 0.002;
	f.race_bias[3] = 0.05;
	assert_int_equal(st_race_run(4, fake_eval, &f, &o, &r, NULL), ST_OK);
	assert_int_equal(r.winner, 3);
}

/* A rejected evaluation drops the candidate; all rejected: no survivor, no final batch. */
static void test_rejected(void **state)
{
	(void)state;
	fake f;
	fake_init(&f, 4, 0.0, 1);
	f.truth[2] = 0.05;
	f.verdict[2] = ST_EMISMATCH;
	f.truth[1] = 0.01;
	st_race_opts o = {.round_pairs = 30, .final_pairs = 200, .min_lo = 1.0};
	st_race_result r;
	assert_int_equal(st_race_run(4, fake_eval, &f, &o, &r, NULL), ST_OK);
	assert_int_equal(r.winner, 1);
	assert_int_equal(f.pairs_of[2], 30);          /* raced once, then out */
	fake_init(&f, 3, 0.0, 1);
	f.verdict[0] = f.verdict[1] = f.verdict[2] = ST_ECRASH;
	assert_int_equal(st_race_run(3, fake_eval, &f, &o, &r, NULL), ST_OK);
	assert_int_equal(r.chosen, SIZE_MAX);
	assert_int_equal(r.winner, SIZE_MAX);
	assert_false(r.have_final);
	assert_int_equal(f.final_calls, 0);
}

/* The winner's curse, removed: 8 candidates all truly 1 % faster, noisy.  Over many races the
 * largest race number overstates the truth; the final batch's mean is the truth within its
 * standard error.  (Deterministic: the fake's noise has a fixed seed.) */
static void test_no_winners_curse(void **state)
{
	(void)state;
	const int trials = 400;
	const double truth = 0.01, sigma = 0.05;
	double sum_final = 0, sum_race_max = 0;
	st_race_opts o = {.round_pairs = 30, .final_pairs = 200, .min_lo = 0.5};
	for (int t = 0; t < trials; t++) {
		fake f;
		fake_init(&f, 8, sigma, 1000 + (uint64_t)t);
		for (size_t i = 0; i < 8; i++)
			f.truth[i] = truth;
		st_race_result r;
		assert_int_equal(st_race_run(8, fake_eval, &f, &o, &r, NULL), ST_OK);
		assert_true(r.have_final);
		sum_final += log(r.final.ratio);
		sum_race_max += f.race_max;
	}
	double se = sigma / sqrt(200.0) / sqrt((double)trials);
	double mean_final = sum_final / trials, mean_max = sum_race_max / trials;
	assert_true(fabs(mean_final - truth) < 4 * se);
	assert_true(mean_max > truth + 0.005);        /* what a best-of-N report would say */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allocation),       cmocka_unit_test(test_single_and_none),
		cmocka_unit_test(test_final_is_fresh),   cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_no_winners_curse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
