/* Aimed proposals (plugin/search/aim.c) and the samples module (plugin/profile): heat from a
 * hand-written profile of the add fixture, producer heat through register dependences, move
 * weights, and every search method drawing its proposals in proportion to an env's weights. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/profile.h"
#include "sasstune/sched.h"
#include "sasstune/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ADD "triton-sm90/add_f32_1M/"

typedef struct fx {
	uint8_t *bytes;
	st_cubin *c;
	st_sass_kernel *k;
	st_sched *s;
	st_profile *p;
} fx;

static const char samples[] =
	"{\"schema\": \"sasstune-samples-1\", \"pcs\": ["
	"{\"function\": \"add_kernel\", \"offset\": 464, \"stalls\": {\"long_sb\": 600, \"selected\": 100}},"
	"{\"function\": \"add_kernel\", \"offset\": 384, \"stalls\": {\"lg_throttle\": 200}},"
	"{\"function\": \"add_kernel\", \"offset\": 0, \"stalls\": {\"smsp__pcsamp_warps_issue_stalled_wait\": 100}},"
	"{\"function\": \"other\", \"offset\": 464, \"stalls\": {\"long_sb\": 5000}}]}";

static void fx_open(fx *f)
{
	memset(f, 0, sizeof *f);
	size_t size;
	st_error err = {0};
	f->bytes = st_test_read(ADD "sm_90.cubin", &size);
	char *listing = st_test_fixture(ADD "sm_90.sass");
	st_sass_opts so = {.listing = listing};
	assert_int_equal(st_cubin_open_mem(f->bytes, size, "add", &f->c, &err), ST_OK);
	assert_int_equal(st_sass_decode(f->c, "add_kernel", &so, &f->k, &err), ST_OK);
	assert_int_equal(st_sched_new(f->k, f->c, ST_SCHED_WIDE, &f->s, &err), ST_OK);
	assert_int_equal(st_profile_parse(samples, strlen(samples), &f->p, &err), ST_OK);
	free(listing);
}

static void fx_close(fx *f)
{
	st_profile_free(f->p);
	st_sched_free(f->s);
	st_sass_free(f->k);
	st_cubin_free(f->c);
	free(f->bytes);
}

static size_t index_at(const st_sass_kernel *k, uint32_t off)
{
	const st_sass_insn *x = st_sass_at(k, off);
	assert_non_null(x);
	return x->index;
}

static void test_profile_queries(void **state)
{
	(void)state;
	fx f;
	fx_open(&f);
	/* per reason, per instruction, per function; CUPTI's long names shortened */
	assert_int_equal(st_profile_at(f.p, "add_kernel", 464, -1), 700);
	assert_int_equal(st_profile_at(f.p, "add_kernel", 464, st_profile_reason_find(f.p, "long_sb")), 600);
	assert_int_equal(st_profile_at(f.p, "add_kernel", 0, st_profile_reason_find(f.p, "wait")), 100);
	assert_int_equal(st_profile_function_total(f.p, "add_kernel", -1), 1000);
	assert_int_equal(st_profile_function_total(f.p, "other", -1), 5000);
	assert_int_equal(st_profile_at(f.p, "nope", 464, -1), 0);
	char buf[64];
	assert_null(st_profile_short_name("smsp__pcsamp_warps_issue_stalled_barrier_not_issued", buf, sizeof buf));
	assert_string_equal(st_profile_short_name("smsp__pcsamp_warps_issue_stalled_math_pipe_throttle", buf, sizeof buf),
			    "math_pipe");
	fx_close(&f);
}

static void test_heat_and_producers(void **state)
{
	(void)state;
	fx f;
	fx_open(&f);
	st_aim *a = NULL;
	st_error err = {0};
	assert_int_equal(st_aim_new(f.s, f.p, 20, &a, &err), ST_OK);
	/* waiting samples over the kernel's samples: long_sb 600 at FADD 0x1d0, wait 100 at 0x0 */
	size_t fadd = index_at(f.k, 0x1d0), ldg_a = index_at(f.k, 0x180), ldg_b = index_at(f.k, 0x190);
	assert_true(fabs(st_aim_heat(a, fadd) - 0.6) < 1e-12);
	assert_true(fabs(st_aim_heat(a, index_at(f.k, 0x0)) - 0.1) < 1e-12);
	assert_true(fabs(st_aim_heat(a, ldg_a)) < 1e-12); /* lg_throttle is not a wait a schedule moves */
	assert_true(fabs(st_aim_hot_share(a) - 0.7) < 1e-12);
	/* FADD R12, R12, R16 reads R12 (LDG 0x190) and R16 (LDG 0x180): both producers get its heat */
	assert_true(fabs(st_aim_producer_heat(a, ldg_a) - 0.6) < 1e-12);
	assert_true(fabs(st_aim_producer_heat(a, ldg_b) - 0.6) < 1e-12);
	assert_true(fabs(st_aim_producer_heat(a, index_at(f.k, 0x1e0))) < 1e-12);
	/* every move weighs at least 1; some weigh more (a swap in front of the FADD, or of a producer) */
	size_t n = st_sched_move_count(f.s), heavier = 0;
	assert_true(n > 0);
	for (size_t m = 0; m < n; m++) {
		double w = st_aim_weight(a, f.s, m);
		assert_true(w >= 1);
		st_move mv = st_sched_move(f.s, m);
		if (mv.kind == ST_MOVE_SWAP) {
			double want = 1 + 20 * (st_aim_producer_heat(a, st_sched_at(f.s, mv.slot + 1)) +
						st_aim_heat(a, st_sched_at(f.s, mv.slot)));
			assert_true(fabs(w - want) < 1e-9);
		}
		heavier += w > 1;
	}
	assert_true(heavier > 0 && heavier < n);
	/* strength 0 is uniform */
	st_aim *u = NULL;
	assert_int_equal(st_aim_new(f.s, f.p, 0, &u, &err), ST_OK);
	for (size_t m = 0; m < n; m++)
		assert_true(st_aim_weight(u, f.s, m) == 1);
	st_aim_free(u);
	assert_int_equal(st_aim_new(f.s, f.p, -1, &u, &err), ST_EINVAL);
	assert_null(u);
	st_aim_free(a);
	fx_close(&f);
}

/* ---- a flat environment: 4 moves in every state, all equal in value ---- */
typedef struct flat {
	size_t depth, picks[4], first; /* first: the first move applied, + 1 */
	double w[4];
} flat;

static size_t fl_n(void *d) { return (void)d, 4; }
static st_status fl_features(void *d, size_t m, float out[ST_SEARCH_NFEAT], st_error *err)
{
	(void)d, (void)err;
	memset(out, 0, ST_SEARCH_NFEAT * sizeof(float));
	out[ST_F_SWAP] = 1;
	out[ST_F_A_ALU] = (float)m / 4;
	return ST_OK;
}
static st_status fl_apply(void *d, size_t m, st_error *err)
{
	(void)err;
	flat *f = d;
	f->picks[m]++;
	f->depth++;
	if (!f->first)
		f->first = m + 1;
	return ST_OK;
}
static st_status fl_undo(void *d, st_error *err) { return (void)err, ((flat *)d)->depth--, ST_OK; }
static st_status fl_reset(void *d, st_error *err) { return (void)err, ((flat *)d)->depth = 0, ST_OK; }
static st_status fl_eval(void *d, unsigned pairs, st_eval *out, st_error *err)
{
	(void)d, (void)err;
	*out = (st_eval){.status = ST_OK, .ratio = 1, .lo = 1, .hi = 1, .pairs = pairs};
	return ST_OK;
}
static double fl_weight(void *d, size_t m) { return ((flat *)d)->w[m]; }

static double share_of_move2(st_search_method method, int weighted, uint64_t seed, size_t *first)
{
	flat f = {.w = {1, 1, 200, 1}};
	st_search_env env = {.data = &f, .name = "flat", .n_moves = fl_n, .features = fl_features,
			     .apply = fl_apply, .undo = fl_undo, .reset = fl_reset, .evaluate = fl_eval,
			     .weight = weighted ? fl_weight : NULL};
	const st_search_env *envs[] = {&env};
	st_search_opts o;
	st_search_opts_init(&o);
	o.method = method;
	o.seed = seed;
	o.steps = 800;
	o.rollout = 64;
	o.minibatch = 16;
	st_policy *p = NULL;
	st_error err = {0};
	if (method == ST_SEARCH_PPO)
		assert_int_equal(st_policy_new(16, 7, &p, &err), ST_OK);
	st_search_result res;
	assert_int_equal(st_search_run(envs, 1, p, &o, &res, &err), ST_OK);
	st_search_result_free(&res);
	st_policy_free(p);
	if (first)
		*first = f.first - 1;
	size_t total = f.picks[0] + f.picks[1] + f.picks[2] + f.picks[3];
	assert_true(total > 0);
	return (double)f.picks[2] / (double)total;
}

static void test_methods_follow_weights(void **state)
{
	(void)state;
	/* weight 200 of 203: random and PPO (log weight as a prior) pick move 2 nearly always;
	 * greedy tries it first in nearly every state; uniform leaves it near a quarter */
	assert_true(share_of_move2(ST_SEARCH_RANDOM, 1, 7, NULL) > 0.9);
	assert_true(share_of_move2(ST_SEARCH_RANDOM, 0, 7, NULL) < 0.4);
	assert_true(share_of_move2(ST_SEARCH_PPO, 1, 7, NULL) > 0.8);
	assert_true(share_of_move2(ST_SEARCH_PPO, 0, 7, NULL) < 0.5);
	/* greedy tries every move of a flat state once: the weights decide which comes first */
	unsigned first2[2] = {0, 0};
	for (int weighted = 0; weighted < 2; weighted++)
		for (uint64_t seed = 1; seed <= 20; seed++) {
			size_t first;
			share_of_move2(ST_SEARCH_GREEDY, weighted, seed, &first);
			first2[weighted] += first == 2;
		}
	assert_true(first2[1] >= 17);
	assert_true(first2[0] <= 12);
}

static void test_wrap_env_forwards(void **state)
{
	(void)state;
	fx f;
	fx_open(&f);
	st_aim *a = NULL;
	st_search_env *inner = NULL, *env = NULL;
	st_error err = {0};
	assert_int_equal(st_aim_new(f.s, f.p, 5, &a, &err), ST_OK);
	assert_int_equal(st_sched_env_new(f.s, NULL, NULL, &inner, &err), ST_OK);
	assert_int_equal(st_aim_wrap_env(inner, f.s, a, &env, &err), ST_OK);
	size_t n = env->n_moves(env->data);
	assert_int_equal(n, st_sched_move_count(f.s));
	for (size_t m = 0; m < n; m++)
		assert_true(env->weight(env->data, m) == st_aim_weight(a, f.s, m));
	assert_int_equal(env->apply(env->data, 0, &err), ST_OK);
	assert_int_equal(st_sched_depth(f.s), 1);
	assert_int_equal(env->reset(env->data, &err), ST_OK);
	assert_int_equal(st_sched_depth(f.s), 0);
	st_aim_env_free(env);
	st_sched_env_free(inner);
	st_aim_free(a);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_queries),
		cmocka_unit_test(test_heat_and_producers),
		cmocka_unit_test(test_methods_follow_weights),
		cmocka_unit_test(test_wrap_env_forwards),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
