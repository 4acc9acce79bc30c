/* The static cost model on the Triton sm_90 fixtures: the original scores exactly 1, the
 * memo never changes a result, the measured control-bit facts come out the right way round
 * (every yield bit cleared: slower; every yield bit set: neutral), a load serialised behind
 * a scoreboard wait costs and more warps hide part of it, the est_gain wrapper leaves the
 * state and every other feature alone, and the launch sizing gives the hand-computed warps. */
#include "testutil.h"
#include "sasstune/sched.h"
#include "sasstune/search.h"
#include "sasstune/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct fx {
	st_cubin *c;
	st_sass_kernel *k;
	st_sched *s;
	char *listing;
} fx;

static void fx_open(fx *f, const char *name, unsigned flags)
{
	char rel[256];
	st_error err = {0};
	memset(f, 0, sizeof *f);
	snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", name);
	char *path = st_test_fixture(rel);
	snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.sass", name);
	f->listing = st_test_fixture(rel);
	if (st_cubin_open_file(path, &f->c, &err))
		fail_msg("%s: %s", path, err.msg);
	free(path);
	st_sass_opts o = {0};
	o.listing = f->listing;
	if (st_sass_decode(f->c, st_cubin_kernel(f->c, 0)->name, &o, &f->k, &err) ||
	    st_sched_new(f->k, f->c, flags, &f->s, &err))
		fail_msg("%s: %s", name, err.msg);
}

static void fx_close(fx *f)
{
	st_sched_free(f->s);
	st_sass_free(f->k);
	st_cubin_free(f->c);
	free(f->listing);
}

static st_costmodel *model(const st_sched *s, unsigned warps, unsigned cta_warps)
{
	st_costmodel_opts o = {warps, cta_warps, 0, 0, 0};
	st_costmodel *m = NULL;
	st_error err = {0};
	if (st_costmodel_new(s, &o, &m, &err))
		fail_msg("costmodel: %s", err.msg);
	return m;
}

static uint64_t xs(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_original_is_one(void **state)
{
	(void)state;
	for (const char *const *n = st_test_triton_fixtures; *n; n++) {
		fx f;
		fx_open(&f, *n, 0);
		st_costmodel *m = model(f.s, 2, 1);
		double c = st_costmodel_cycles(m, f.s);
		assert_true(c > 100 && isfinite(c));
		assert_true(st_costmodel_ratio(m, f.s) == 1.0);
		st_eval ev;
		assert_int_equal(st_costmodel_evaluate(m, f.s, 30, &ev, NULL), ST_OK);
		assert_int_equal(ev.status, ST_OK);
		assert_true(ev.ratio == 1.0 && ev.lo == ev.ratio && ev.hi == ev.ratio);
		assert_int_equal(ev.pairs, 0);
		st_costmodel_free(m);
		fx_close(&f);
	}
}

/* A random walk: the memoised model agrees with a fresh one at every step, and undoing
 * everything gives exactly 1 again. */
static void test_memo_is_exact(void **state)
{
	(void)state;
	const char *names[] = {"softmax_f32_1024x1024", "matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu"};
	for (size_t t = 0; t < 2; t++) {
		fx f;
		fx_open(&f, names[t], ST_SCHED_WIDE);
		st_costmodel *m = model(f.s, 4, 1);
		uint64_t x = 0x1234567 + t;
		int changed = 0;
		for (int i = 0; i < 40; i++) {
			size_t n = st_sched_move_count(f.s);
			assert_true(n > 0);
			assert_int_equal(st_sched_apply(f.s, st_sched_move(f.s, xs(&x) % n), NULL), ST_OK);
			if (i % 8 == 7) {
				st_costmodel *fresh = model(f.s, 4, 1);
				double a = st_costmodel_cycles(m, f.s), b = st_costmodel_cycles(fresh, f.s);
				assert_true(a == b);
				changed |= st_costmodel_ratio(m, f.s) != 1.0;
				st_costmodel_free(fresh);
			}
		}
		assert_true(changed); /* the walks move the model at all */
		st_sched_reset(f.s);
		assert_true(st_costmodel_ratio(m, f.s) == 1.0);
		st_costmodel_free(m);
		fx_close(&f);
	}
}

/* Measured on the H200 (shared/README.md): yield bits cleared on every legal instruction cost
 * 1.5-8 %; set on every legal instruction, within +-0.2 %. */
static void test_yield_facts(void **state)
{
	(void)state;
	for (const char *const *n = st_test_triton_fixtures; *n; n++) {
		fx f;
		fx_open(&f, *n, 0);
		st_costmodel_opts mo;
		st_launch *spec = NULL;
		char rel[256];
		snprintf(rel, sizeof rel, "triton-sm90/%s/launch.json", *n);
		char *lp = st_test_fixture(rel);
		assert_int_equal(st_launch_load(lp, &spec, NULL), ST_OK);
		st_tune_model_opts(f.c, st_cubin_kernel(f.c, 0)->name, spec, &mo);
		st_costmodel *m = model(f.s, mo.warps, mo.cta_warps);
		double ratio[2];
		for (int set = 0; set < 2; set++) {
			st_sched_reset(f.s);
			int flips = 0;
			for (size_t slot = 0; slot < st_sched_count(f.s); slot++) {
				if (st_sched_ctrl(f.s, slot).yield == set)
					continue;
				st_move mv = {ST_MOVE_YIELD, 0, (uint32_t)slot, {0}};
				flips += st_sched_apply(f.s, mv, NULL) == ST_OK;
			}
			assert_true(flips > 0);
			ratio[set] = st_costmodel_ratio(m, f.s);
		}
		print_message("%-50s warps %u/%u: yield cleared %.4f, set %.4f\n", *n, mo.warps, mo.cta_warps, ratio[0],
			      ratio[1]);
		assert_true(ratio[0] < 0.999);
		assert_true(fabs(ratio[1] - 1.0) < 0.005);
		st_costmodel_free(m);
		st_launch_free(spec);
		free(lp);
		fx_close(&f);
	}
}

/* layernorm's loop: `@!P5 LDG.E.64 R16` (0xd50) is followed by a HADD2 that waits on the
 * previous load's scoreboard.  Swapping them makes the second load wait for the first one's
 * whole latency: slower, and less so when more warps share the sub-partition. */
static void test_serialised_load(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, "layernorm_f16_1024x1024", 0);
	st_move mv = {ST_MOVE_SWAP, 0, 0xd50 / 16, {0}};
	char d[256];
	st_sched_describe(f.s, mv, d, sizeof d);
	assert_non_null(strstr(d, "LDG"));
	assert_non_null(strstr(d, "HADD2"));
	double r[3];
	unsigned warps[3] = {1, 4, 8};
	for (int i = 0; i < 3; i++) {
		st_costmodel *m = model(f.s, warps[i], 1);
		assert_int_equal(st_sched_apply(f.s, mv, NULL), ST_OK);
		r[i] = st_costmodel_ratio(m, f.s);
		st_sched_reset(f.s);
		st_costmodel_free(m);
	}
	print_message("serialised load: 1 warp %.4f, 4 warps %.4f, 8 warps %.4f\n", r[0], r[1], r[2]);
	assert_true(r[0] < 0.97);
	assert_true(r[1] > r[0] && r[2] > r[0]);
	assert_true(r[2] < 1.0);
	fx_close(&f);
}

/* The wrapper: same features as sched's but est_gain (and reverts_last for yield flips that
 * restore the original bit); computing them leaves the state as it was. */
static st_status no_eval(void *ctx, const st_sched *s, unsigned pairs, st_eval *out, st_error *err)
{
	(void)ctx, (void)s, (void)pairs, (void)out;
	return st_error_set(err, ST_EUNSUPPORTED, "not here");
}

static void test_est_gain_wrapper(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, "layernorm_f16_1024x1024", 0);
	st_costmodel *m = model(f.s, 1, 1);
	st_search_env *inner = NULL, *env = NULL;
	assert_int_equal(st_sched_env_new(f.s, no_eval, NULL, &inner, NULL), ST_OK);
	assert_int_equal(st_costmodel_wrap_env(inner, f.s, m, &env, NULL), ST_OK);
	size_t n = env->n_moves(env->data);
	assert_int_equal(n, st_sched_move_count(f.s));
	int neg = 0, pos = 0, serial = -1;
	double before = st_costmodel_cycles(m, f.s);
	for (size_t i = 0; i < n; i++) {
		float a[ST_SEARCH_NFEAT], b[ST_SEARCH_NFEAT];
		assert_int_equal(inner->features(inner->data, i, a, NULL), ST_OK);
		assert_int_equal(env->features(env->data, i, b, NULL), ST_OK);
		for (size_t k = 0; k < ST_SEARCH_NFEAT; k++)
			if (k != ST_F_EST_GAIN && k != ST_F_REVERTS)
				assert_true(a[k] == b[k]);
		assert_true(b[ST_F_EST_GAIN] >= -1 && b[ST_F_EST_GAIN] <= 1);
		neg += b[ST_F_EST_GAIN] < 0;
		pos += b[ST_F_EST_GAIN] > 0;
		st_move mv = st_sched_move(f.s, i);
		if (mv.kind == ST_MOVE_SWAP && mv.slot == 0xd50 / 16)
			serial = (int)i, assert_true(b[ST_F_EST_GAIN] < -0.5f);
	}
	assert_true(serial >= 0);
	assert_true(neg > 0 && pos > 0);
	assert_int_equal(st_sched_depth(f.s), 0);
	assert_true(st_costmodel_cycles(m, f.s) == before);
	/* flip a yield bit: flipping it back is flagged as a revert */
	size_t y = SIZE_MAX;
	for (size_t i = 0; i < n && y == SIZE_MAX; i++)
		if (st_sched_move(f.s, i).kind == ST_MOVE_YIELD)
			y = i;
	assert_true(y != SIZE_MAX);
	uint32_t slot = st_sched_move(f.s, y).slot;
	assert_int_equal(env->apply(env->data, y, NULL), ST_OK);
	int found = 0;
	for (size_t i = 0; i < env->n_moves(env->data); i++) {
		st_move mv = st_sched_move(f.s, i);
		if (mv.kind == ST_MOVE_YIELD && mv.slot == slot) {
			float b[ST_SEARCH_NFEAT];
			assert_int_equal(env->features(env->data, i, b, NULL), ST_OK);
			assert_true(b[ST_F_REVERTS] == 1.0f);
			found = 1;
		}
	}
	assert_true(found);
	assert_int_equal(env->reset(env->data, NULL), ST_OK);
	st_costmodel_env_free(env);
	st_sched_env_free(inner);
	st_costmodel_free(m);
	fx_close(&f);
}

/* Sizing from the launch: attention has 32 CTAs for 132 SMs (one warp per sub-partition);
 * add has 1024 CTAs of 4 warps (8 resident CTAs per SM by the wave, 2048 threads allow 16). */
static void test_model_opts(void **state)
{
	(void)state;
	struct { const char *name; unsigned warps, cta; } want[] = {
		{"attn_fwd_f16_bh4_n1024_d64_b128x64", 1, 1},
		{"add_f32_1M", 8, 1},
	};
	for (size_t i = 0; i < 2; i++) {
		char rel[256];
		snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", want[i].name);
		char *cp = st_test_fixture(rel);
		snprintf(rel, sizeof rel, "triton-sm90/%s/launch.json", want[i].name);
		char *lp = st_test_fixture(rel);
		st_cubin *c = NULL;
		st_launch *spec = NULL;
		assert_int_equal(st_cubin_open_file(cp, &c, NULL), ST_OK);
		assert_int_equal(st_launch_load(lp, &spec, NULL), ST_OK);
		st_costmodel_opts o;
		st_tune_model_opts(c, st_launch_kernel(spec), spec, &o);
		print_message("%s: %u warps per SMSP, %u per CTA\n", want[i].name, o.warps, o.cta_warps);
		assert_int_equal(o.warps, want[i].warps);
		assert_int_equal(o.cta_warps, want[i].cta);
		st_tune_model_opts(c, st_launch_kernel(spec), NULL, &o); /* no launch: a guess */
		assert_int_equal(o.warps, 2);
		st_launch_free(spec);
		st_cubin_free(c);
		free(cp);
		free(lp);
	}
}

/* It runs per step: time a walk with an evaluation after every move. */
static void test_speed(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, "matmul_f16_1024x1024x1024_b128x128x64_w4s4", 0);
	st_costmodel *m = model(f.s, 2, 1);
	uint64_t x = 99;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int steps = 200;
	for (int i = 0; i < steps; i++) {
		assert_int_equal(st_sched_apply(f.s, st_sched_move(f.s, xs(&x) % st_sched_move_count(f.s)), NULL), ST_OK);
		(void)st_costmodel_ratio(m, f.s);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
	print_message("matmul 1024 (1016 instructions): %.2f ms per move + evaluation (this build)\n", 1e3 * s / steps);
	assert_true(s / steps < 0.05); /* generous: sanitizers and -O0 included */
	st_costmodel_free(m);
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	st_costmodel *m = (st_costmodel *)1;
	st_error err = {0};
	assert_int_equal(st_costmodel_new(NULL, NULL, &m, &err), ST_EINVAL);
	assert_null(m);
	assert_non_null(strstr(err.msg, "costmodel"));
	st_eval ev;
	assert_int_equal(st_costmodel_evaluate(NULL, NULL, 0, &ev, &err), ST_EINVAL);
	st_search_env *env = (st_search_env *)1;
	assert_int_equal(st_costmodel_wrap_env(NULL, NULL, NULL, &env, &err), ST_EINVAL);
	assert_null(env);
	st_costmodel_free(NULL);
	st_costmodel_env_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_original_is_one),  cmocka_unit_test(test_memo_is_exact),
		cmocka_unit_test(test_yield_facts),      cmocka_unit_test(test_serialised_load),
		cmocka_unit_test(test_est_gain_wrapper), cmocka_unit_test(test_model_opts),
		cmocka_unit_test(test_speed),            cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
