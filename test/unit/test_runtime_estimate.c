/* st_estimate_run (runtime/estimate.c): the measurement `sasstune compare` and the tuner's final
 * estimate share.  Driven through the mock CUDA driver; MOCK_CUDA_TIMER_US quantises its event
 * times as a real GPU's timer does (~0.5 us steps), which is what made the tuner's intervals sit
 * on their point estimates on the H200 (docs/runtime.md, "Estimates"). */
#include "testutil.h"

#include "sasstune/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static st_test_mock M;

static int setup(void **state)
{
	(void)state;
	st_test_mock_init(&M, ".");
	return 0;
}

static void options(st_runtime_options *o)
{
	st_test_mock_options(&M, o);
	o->timeout_s = 5; /* no hang is tested here: a loaded machine must not turn a slow start into one */
}

static st_launch *spec(void)
{
	return st_test_mock_spec();
}

#define CUBIN ST_TEST_MOCK_CUBIN
#define SIZE ST_TEST_MOCK_SIZE

static void run_ok(const uint8_t *ref, const uint8_t *b, const st_runtime_options *o, const st_launch *l, bool verify,
		   unsigned pairs, st_estimate *e)
{
	st_error err = {0};
	if (st_estimate_run(ref, SIZE(ref), l, o, b, SIZE(b), verify, pairs, e, &err) != ST_OK)
		fail_msg("estimate: %s", err.msg);
}

static void test_estimate(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = spec();
	const uint8_t *ref = CUBIN("op add\ntime_us 20\n"), *fast = CUBIN("op add\ntime_us 18\n");
	st_estimate e;
	run_ok(ref, fast, &o, l, true, 0, &e);
	assert_int_equal(e.verdict, ST_OK);
	assert_int_equal(e.stage, ST_ESTIMATE_DONE);
	assert_true(e.sample_us == ST_ESTIMATE_SAMPLE_US); /* raised from the default 50 */
	assert_true(e.t.reps == 25 || e.t.reps == 26);     /* ceil(500 us / 20 us), the init's jitter */
	assert_int_equal(e.t.n, 60);
	assert_true(fabs(e.t.ratio - 0.9) < 0.003 && e.t.ci_lo <= e.t.ratio && e.t.ratio <= e.t.ci_hi);
	assert_non_null(strstr(e.info.device, "Mock GPU"));
	assert_true(e.info.verify_sets == 2 && e.info.deterministic);
	/* a longer sample asked for is kept; the L2 flush means one launch per sample */
	o.sample_us = 1000;
	run_ok(ref, fast, &o, l, false, 20, &e);
	assert_true((e.t.reps == 50 || e.t.reps == 51) && e.t.n == 20 && e.sample_us == 1000);
	o.sample_us = 50;
	o.flush_l2 = true;
	run_ok(ref, fast, &o, l, false, 20, &e);
	assert_true(e.t.reps == 1 && e.sample_us == 0);
	st_launch_free(l);
}

static void test_verdicts(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = spec();
	const uint8_t *ref = CUBIN("op add\ntime_us 20\n");
	st_estimate e;
	run_ok(ref, CUBIN("op wrong\n"), &o, l, true, 10, &e);
	assert_true(e.verdict == ST_EMISMATCH && e.stage == ST_ESTIMATE_VERIFY);
	run_ok(ref, CUBIN("op wrong\n"), &o, l, false, 10, &e); /* not verified: timed */
	assert_true(e.verdict == ST_OK && e.stage == ST_ESTIMATE_DONE);
	run_ok(ref, CUBIN("op fault\n"), &o, l, false, 10, &e);
	assert_true(e.verdict == ST_ECRASH && e.stage == ST_ESTIMATE_TIME);
	/* the machinery failing is an error, with the stage it failed in */
	st_error err = {0};
	const uint8_t *other = CUBIN("op add\n");
	st_launch *bad = NULL;
	const char *j = "{\"kernel\":\"nope\",\"grid\":[1],\"block\":[1],\"params\":[]}";
	assert_int_equal(st_launch_parse(j, strlen(j), NULL, &bad, &err), ST_OK);
	assert_int_not_equal(st_estimate_run(ref, SIZE(ref), bad, &o, other, SIZE(other), true, 10, &e, &err), ST_OK);
	assert_int_equal(e.stage, ST_ESTIMATE_OPEN);
	assert_null(strchr(err.msg, '\n'));
	st_launch_free(bad);
	st_launch_free(l);
}

/* A 3.6 us kernel against one ~0.6 % faster, timed with a 0.5 us timer step: samples of 50 us
 * (the session default) put the median ratio on a ~1 % grid, off by about half a step with an
 * interval that sits on the point; the estimate's >= 500 us samples bring it within 0.1 % of what
 * an exact timer measures.  (The mock's jitter is far smaller than a step, so the estimate's
 * interval may still sit on its 0.1 % grid here; a GPU's sample-to-sample noise is larger.) */
static void test_quantised_timer(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	o.pairs = 100;
	o.timeout_s = 60; /* the mock computes every launch on the CPU: 100 x 2 x ~140 launches */
	st_launch *l = spec();
	const uint8_t *ref = CUBIN("op add\ntime_us 3.6\n"), *fast = CUBIN("op add\ntime_us 3.58\n");
	st_estimate exact, e;
	run_ok(ref, fast, &o, l, true, 0, &exact);
	const double truth = exact.t.ratio; /* about 3.58 / 3.6 */
	assert_true(fabs(truth - 3.58 / 3.6) < 0.002);
	setenv("MOCK_CUDA_TIMER_US", "0.5", 1);
	st_session *s = NULL;
	st_error err = {0};
	if (st_session_open(ref, SIZE(ref), l, &o, &s, &err) != ST_OK)
		fail_msg("open: %s", err.msg);
	st_timing t;
	assert_int_equal(st_session_compare(s, NULL, 0, fast, SIZE(fast), 0, &t, &err), ST_OK);
	st_session_close(s);
	run_ok(ref, fast, &o, l, true, 0, &e);
	unsetenv("MOCK_CUDA_TIMER_US");
	st_launch_free(l);
	fprintf(stderr, "0.5 us timer: 50 us samples (%u launches): %.5f [%.5f, %.5f]; estimate (%u): %.5f [%.5f, %.5f]; "
		"exact timer %.5f\n", t.reps, t.ratio, t.ci_lo, t.ci_hi, e.t.reps, e.t.ratio, e.t.ci_lo, e.t.ci_hi, truth);
	assert_true(t.reps < 20 && fabs(t.ratio - truth) > 0.003);      /* off by most of a timer step */
	assert_true(t.ci_lo == t.ratio || t.ci_hi == t.ratio);          /* the interval on the point */
	assert_true(e.t.reps >= 125 && e.verdict == ST_OK);
	assert_true(fabs(e.t.ratio - truth) < 0.001);
	assert_true(e.t.ci_lo - 0.001 < truth && truth < e.t.ci_hi + 0.001);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_estimate),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_quantised_timer),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
