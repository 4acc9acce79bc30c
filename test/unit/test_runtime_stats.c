/* Statistics (median, bootstrap interval) and the data helpers (half and
 * bfloat16 rounding, seeded fills, buffer comparison). */
#include "testutil.h"

#include "../../runtime/rt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_median(void **state)
{
	(void)state;
	double a[] = {5, 1, 3};
	assert_true(st_median(a, 3) == 3);
	assert_true(a[0] == 5 && a[1] == 1); /* the input is not reordered */
	double b[] = {4, 1, 3, 2};
	assert_true(st_median(b, 4) == 2.5);
	double c[] = {7};
	assert_true(st_median(c, 1) == 7);
	double d[] = {2, 2, 2, 1, 2, 9, 2};
	assert_true(st_median(d, 7) == 2);
	assert_true(isnan(st_median(NULL, 0)));
	double e[1001];
	for (int i = 0; i < 1001; i++)
		e[i] = (double)((i * 7919) % 1001); /* a permutation of 0..1000 */
	assert_true(st_median(e, 1001) == 500);
	assert_true(st_median(e, 1000) == 500 || st_median(e, 1000) == 499.5 || st_median(e, 1000) == 500.5);
}

static void test_bootstrap_exact_cases(void **state)
{
	(void)state;
	double m, lo, hi;
	st_error err = {0};
	double same[50];
	for (int i = 0; i < 50; i++)
		same[i] = 1.25;
	assert_int_equal(st_bootstrap_median(same, 50, 2000, 1, &m, &lo, &hi, &err), ST_OK);
	assert_true(m == 1.25 && lo == 1.25 && hi == 1.25);
	/* {1, 3}: resampled medians are 1, 2, 3 with probability 1/4, 1/2, 1/4 */
	double two[] = {1, 3};
	assert_int_equal(st_bootstrap_median(two, 2, 4000, 7, &m, &lo, &hi, &err), ST_OK);
	assert_true(m == 2 && lo == 1 && hi == 3);
	/* 1..101: the median is 51, the interval holds it and is a few ranks wide */
	double seq[101];
	for (int i = 0; i < 101; i++)
		seq[i] = i + 1;
	assert_int_equal(st_bootstrap_median(seq, 101, 2000, 3, &m, &lo, &hi, &err), ST_OK);
	assert_true(m == 51);
	assert_true(lo < 51 && hi > 51);
	assert_true(lo >= 40 && hi <= 62);
	/* deterministic for a seed */
	double lo2, hi2;
	assert_int_equal(st_bootstrap_median(seq, 101, 2000, 3, &m, &lo2, &hi2, &err), ST_OK);
	assert_true(lo == lo2 && hi == hi2);
	/* refusals */
	assert_int_equal(st_bootstrap_median(seq, 0, 2000, 3, &m, &lo, &hi, &err), ST_EINVAL);
	double bad[] = {1, NAN, 2};
	assert_int_equal(st_bootstrap_median(bad, 3, 100, 3, &m, &lo, &hi, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "sample 1"));
}

/* Ratios around 1 with 1 % noise: the 95 % interval should hold the true
 * median about 95 % of the time, and narrow as pairs are added. */
static void test_bootstrap_coverage(void **state)
{
	(void)state;
	st_rt_rng r;
	st_rt_rng_seed(&r, 42);
	int covered = 0, trials = 100;
	double w_small = 0, w_large = 0;
	for (int t = 0; t < trials; t++) {
		double v[400], m, lo, hi;
		for (int i = 0; i < 400; i++)
			v[i] = 1 + 0.01 * st_rt_rng_normal(&r);
		assert_int_equal(st_bootstrap_median(v, 50, 500, (uint64_t)t, &m, &lo, &hi, NULL), ST_OK);
		covered += lo <= 1 && 1 <= hi;
		w_small += hi - lo;
		assert_int_equal(st_bootstrap_median(v, 400, 500, (uint64_t)t, &m, &lo, &hi, NULL), ST_OK);
		w_large += hi - lo;
	}
	assert_true(covered >= 86 && covered <= 100); /* ~95 % of 100 */
	/* width ~ 1/sqrt(n): 8x the pairs, about 2.8x narrower */
	assert_true(w_large < w_small / 2.2 && w_large > w_small / 3.5);
	/* for 50 pairs at 1 % per-pair noise the half-width is ~0.3 % */
	assert_true(w_small / trials / 2 > 0.002 && w_small / trials / 2 < 0.005);
}

static uint16_t h(float f) { return st_rt_f32_to_f16(f); }

static void test_half(void **state)
{
	(void)state;
	assert_int_equal(h(1.0f), 0x3c00);
	assert_int_equal(h(-2.0f), 0xc000);
	assert_int_equal(h(65504.0f), 0x7bff);
	assert_int_equal(h(65519.0f), 0x7bff);
	assert_int_equal(h(65520.0f), 0x7c00); /* rounds up to infinity */
	assert_int_equal(h(INFINITY), 0x7c00);
	assert_int_equal(h(-0.0f), 0x8000);
	assert_int_equal(h(0.1f), 0x2e66);
	assert_int_equal(h(ldexpf(1, -24)), 0x0001);
	assert_int_equal(h(ldexpf(1, -25)), 0x0000);        /* a tie: to even */
	assert_int_equal(h(ldexpf(3, -25)), 0x0002);        /* 1.5 ulps: to even */
	assert_int_equal(h(ldexpf(1, -14)), 0x0400);        /* smallest normal */
	assert_int_equal(h(1.0f + ldexpf(1, -11)), 0x3c00); /* tie, even */
	assert_int_equal(h(1.0f + ldexpf(3, -11)), 0x3c02); /* tie, to even */
	assert_true((h(NAN) & 0x7c00) == 0x7c00 && (h(NAN) & 0x3ff));
	for (uint32_t x = 0; x < 65536; x++) {
		float f = st_rt_f16_to_f32((uint16_t)x);
		if (isnan(f))
			continue;
		if (st_rt_f32_to_f16(f) != x)
			fail_msg("half 0x%04x does not round-trip", x);
	}
	assert_true(st_rt_f16_to_f32(0x3555) > 0.333 && st_rt_f16_to_f32(0x3555) < 0.3334);
}

static void test_bfloat16(void **state)
{
	(void)state;
	assert_int_equal(st_rt_f32_to_bf16(1.0f), 0x3f80);
	assert_int_equal(st_rt_f32_to_bf16(-2.0f), 0xc000);
	assert_int_equal(st_rt_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80); /* tie, even */
	assert_int_equal(st_rt_f32_to_bf16(1.0f + ldexpf(3, -8)), 0x3f82); /* tie, to even */
	assert_true((st_rt_f32_to_bf16(NAN) & 0x7f80) == 0x7f80 && (st_rt_f32_to_bf16(NAN) & 0x7f));
	for (uint32_t x = 0; x < 65536; x++) {
		float f = st_rt_bf16_to_f32((uint16_t)x);
		if (!isnan(f) && st_rt_f32_to_bf16(f) != x)
			fail_msg("bf16 0x%04x does not round-trip", x);
	}
}

static void test_fills(void **state)
{
	(void)state;
	st_param p = {.kind = ST_P_PTR, .dtype = ST_DT_F32, .bytes = 4u << 20, .init = ST_INIT_RANDN, .a = 0, .b = 1};
	float *x = malloc(p.bytes), *y = malloc(p.bytes), *z = malloc(p.bytes);
	st_error err = {0};
	assert_int_equal(st_rt_param_fill(&p, 1, 0, 0, (uint8_t *)x, &err), ST_OK);
	assert_int_equal(st_rt_param_fill(&p, 1, 0, 0, (uint8_t *)y, &err), ST_OK);
	assert_memory_equal(x, y, p.bytes); /* seeded: the same set twice */
	assert_int_equal(st_rt_param_fill(&p, 1, 1, 0, (uint8_t *)z, &err), ST_OK);
	assert_memory_not_equal(x, z, p.bytes); /* a fresh set */
	assert_int_equal(st_rt_param_fill(&p, 1, 0, 1, (uint8_t *)z, &err), ST_OK);
	assert_memory_not_equal(x, z, p.bytes); /* another buffer */
	size_t n = p.bytes / 4;
	double sum = 0, sq = 0;
	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		sq += (double)x[i] * x[i];
	}
	double mean = sum / n, sd = sqrt(sq / n - mean * mean);
	assert_true(fabs(mean) < 0.01 && fabs(sd - 1) < 0.01);
	/* half buffers hold rounded normals; integer ones hold integers in range */
	st_param q = {.kind = ST_P_PTR, .dtype = ST_DT_I32, .bytes = 4096, .init = ST_INIT_RANDINT, .a = -3, .b = 4};
	int32_t *iv = (int32_t *)x;
	assert_int_equal(st_rt_param_fill(&q, 9, 0, 2, (uint8_t *)iv, &err), ST_OK);
	int seen[7] = {0};
	for (int i = 0; i < 1024; i++) {
		assert_true(iv[i] >= -3 && iv[i] < 4);
		seen[iv[i] + 3] = 1;
	}
	for (int i = 0; i < 7; i++)
		assert_true(seen[i]);
	st_param r = {.kind = ST_P_PTR, .dtype = ST_DT_F16, .bytes = 64, .init = ST_INIT_ARANGE, .a = 1, .b = 0.5};
	uint16_t *hv = (uint16_t *)x;
	assert_int_equal(st_rt_param_fill(&r, 9, 0, 0, (uint8_t *)hv, &err), ST_OK);
	assert_int_equal(hv[0], 0x3c00);
	assert_true(st_rt_f16_to_f32(hv[31]) == 16.5f);
	st_param u8 = {.kind = ST_P_PTR, .dtype = ST_DT_U8, .bytes = 16, .init = ST_INIT_FILL, .a = 300};
	assert_int_equal(st_rt_param_fill(&u8, 9, 0, 0, (uint8_t *)x, &err), ST_OK);
	assert_int_equal(((uint8_t *)x)[15], 255); /* clamped, not wrapped */
	free(x);
	free(y);
	free(z);
}

static void test_buffers_match(void **state)
{
	(void)state;
	float ref[1000], got[1000];
	for (int i = 0; i < 1000; i++)
		ref[i] = got[i] = (float)i * 0.25f;
	char why[300];
	assert_true(st_rt_buffers_match((uint8_t *)ref, (uint8_t *)got, sizeof ref, ST_DT_F32, true, 0, why, sizeof why));
	got[7] = 100;
	got[9] = 101;
	assert_false(st_rt_buffers_match((uint8_t *)ref, (uint8_t *)got, sizeof ref, ST_DT_F32, true, 0, why, sizeof why));
	assert_non_null(strstr(why, "2 of 1000 fp32 elements differ, first at element 7 (reference 1.75, got 100)"));
	/* tolerance mode: relative L2 error */
	for (int i = 0; i < 1000; i++)
		got[i] = ref[i] * (1 + 1e-5f);
	assert_false(st_rt_buffers_match((uint8_t *)ref, (uint8_t *)got, sizeof ref, ST_DT_F32, true, 0, why, sizeof why));
	assert_true(st_rt_buffers_match((uint8_t *)ref, (uint8_t *)got, sizeof ref, ST_DT_F32, false, 1e-3, why, sizeof why));
	got[500] = 1e6f;
	assert_false(st_rt_buffers_match((uint8_t *)ref, (uint8_t *)got, sizeof ref, ST_DT_F32, false, 1e-3, why, sizeof why));
	assert_non_null(strstr(why, "relative L2 error"));
	got[500] = NAN;
	assert_false(st_rt_buffers_match((uint8_t *)ref, (uint8_t *)got, sizeof ref, ST_DT_F32, false, 1e-3, why, sizeof why));
	assert_non_null(strstr(why, "first at element 500"));
	/* untyped buffers compare bytes */
	uint8_t a[5] = {1, 2, 3, 4, 5}, b[5] = {1, 2, 3, 4, 6};
	assert_false(st_rt_buffers_match(a, b, 5, ST_DT_NONE, false, 1, why, sizeof why));
	assert_non_null(strstr(why, "first at element 4 (reference 0x05, got 0x06)"));
}

static void test_hash_and_proto(void **state)
{
	(void)state;
	assert_true(st_rt_hash64("abc", 3, 0) != st_rt_hash64("abd", 3, 0));
	assert_true(st_rt_hash64("abcdefghij", 10, 0) == st_rt_hash64("abcdefghij", 10, 0));
	st_rt_writer w = {0};
	st_rt_put_u32(&w, 7);
	st_rt_put_f64(&w, -1.5);
	st_rt_put_str(&w, "hello");
	st_rt_put_blob(&w, "\0\1", 2);
	st_rt_reader r = {.p = w.b.data, .left = w.b.len};
	assert_int_equal(st_rt_get_u32(&r), 7);
	assert_true(st_rt_get_f64(&r) == -1.5);
	char *s = st_rt_get_str(&r);
	assert_string_equal(s, "hello");
	free(s);
	size_t n;
	const uint8_t *p = st_rt_get_blob(&r, &n);
	assert_int_equal(n, 2);
	assert_int_equal(p[1], 1);
	assert_false(r.bad);
	st_rt_get_u32(&r); /* past the end */
	assert_true(r.bad);
	/* a blob whose length runs past the end is refused */
	uint8_t bad[8] = {0xff, 0xff, 0, 0, 0, 0, 0, 0};
	st_rt_reader r2 = {.p = bad, .left = 8};
	assert_null(st_rt_get_blob(&r2, &n));
	assert_true(r2.bad);
	st_buf_free(&w.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_bootstrap_exact_cases),
		cmocka_unit_test(test_bootstrap_coverage),
		cmocka_unit_test(test_half),
		cmocka_unit_test(test_bfloat16),
		cmocka_unit_test(test_fills),
		cmocka_unit_test(test_buffers_match),
		cmocka_unit_test(test_hash_and_proto),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
