/* The tune module on the Triton sm_90 fixtures with the cost-model reward: the same seed gives
 * the same schedule, every result passes the independent checker and replays to the same
 * cubin, PPO beats a random walk at equal steps on the fixture where the model leaves room for
 * it, train writes a policy that loads and applies (gated by the model, or not), and the GPU
 * reward without a GPU fails with the runtime's one line. */
#include "testutil.h"
#include "sasstune/sched.h"
#include "sasstune/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fx {
	uint8_t *cubin;
	size_t size;
	char *listing, *launch_path;
	st_launch *spec;
	st_tune_kernel k;
} fx;

static void fx_open(fx *f, const char *name)
{
	char rel[256];
	memset(f, 0, sizeof *f);
	snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", name);
	f->cubin = st_test_read(rel, &f->size);
	snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.sass", name);
	f->listing = st_test_fixture(rel);
	snprintf(rel, sizeof rel, "triton-sm90/%s/launch.json", name);
	f->launch_path = st_test_fixture(rel);
	st_error err = {0};
	if (st_launch_load(f->launch_path, &f->spec, &err))
		fail_msg("%s: %s", name, err.msg);
	f->k = (st_tune_kernel){.cubin = f->cubin, .size = f->size, .name = name, .listing = f->listing,
				.launch = f->spec};
}

static void fx_close(fx *f)
{
	st_launch_free(f->spec);
	free(f->cubin);
	free(f->listing);
	free(f->launch_path);
}

static st_tune_opts opts(st_search_method m, uint64_t steps, uint64_t seed)
{
	st_tune_opts o;
	st_tune_opts_init(&o);
	o.search.method = m;
	o.search.steps = steps;
	o.search.seed = seed;
	o.hidden = 16;
	o.search.lr = 3e-3;
	return o;
}

static void test_same_seed_same_schedule(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, "softmax_f32_1024x1024");
	st_tune_opts o = opts(ST_SEARCH_PPO, 160, 7);
	st_tune_result a, b;
	st_error err = {0};
	if (st_tune(&f.k, &o, NULL, &a, &err) || st_tune(&f.k, &o, NULL, &b, &err))
		fail_msg("tune: %s", err.msg);
	assert_string_equal(a.kernel, "softmax_kernel");
	assert_true(a.steps == 160 && b.steps == 160);
	assert_string_equal(a.schedule_json, b.schedule_json);
	assert_int_equal(a.cubin_size, b.cubin_size);
	assert_memory_equal(a.cubin, b.cubin, a.cubin_size);
	assert_true(a.best.ratio == b.best.ratio);
	assert_int_equal(a.confirmed, 0); /* the model never confirms */
	assert_null(a.verification_json);
	if (a.improved) {
		assert_non_null(strstr(a.message, "UNCONFIRMED"));
		assert_true(a.best.ratio > 1.0 && a.model_ratio == a.best.ratio);
	}
	st_test_tune_replays(f.cubin, f.size, f.listing, &a);
	/* another seed walks elsewhere */
	st_tune_opts o2 = opts(ST_SEARCH_PPO, 160, 8);
	st_tune_result c;
	assert_int_equal(st_tune(&f.k, &o2, NULL, &c, &err), ST_OK);
	assert_true(strcmp(a.schedule_json, c.schedule_json) != 0 || a.best.ratio != c.best.ratio);
	st_tune_result_free(&a);
	st_tune_result_free(&b);
	st_tune_result_free(&c);
	fx_close(&f);
}

static void test_every_result_checks(void **state)
{
	(void)state;
	const char *names[] = {"add_f32_1M", "softmax_f32_1024x1024", "layernorm_f16_1024x1024"};
	st_search_method methods[] = {ST_SEARCH_PPO, ST_SEARCH_RANDOM, ST_SEARCH_GREEDY};
	int improved = 0;
	for (size_t i = 0; i < 3; i++) {
		fx f;
		fx_open(&f, names[i]);
		for (size_t m = 0; m < 3; m++) {
			st_tune_opts o = opts(methods[m], 80, 3 + m);
			if (m == 1)
				o.sched_flags = ST_SCHED_WIDE;
			st_tune_result r;
			st_error err = {0};
			if (st_tune(&f.k, &o, NULL, &r, &err))
				fail_msg("%s: %s", names[i], err.msg);
			improved += r.improved;
			if (!r.improved) { /* the input itself, said so */
				assert_int_equal(r.cubin_size, f.size);
				assert_memory_equal(r.cubin, f.cubin, f.size);
				assert_non_null(strstr(r.message, "input kept"));
			}
			st_test_tune_replays(f.cubin, f.size, f.listing, &r);
			st_tune_result_free(&r);
		}
		fx_close(&f);
	}
	assert_true(improved >= 3);
}

/* PPO against a random walk at equal steps (the same episodes, starts and evaluations).  On the
 * 512 matmul (docs/tune.md, release runs): at 2000 steps, hidden 16, lr 1e-2, PPO found
 * 1.0012-1.0031 on four seeds against 1.0002-1.0005 for the random walk; at 1000 steps it won
 * only two of four.  On other fixtures the two overlap at these budgets (docs/tune.md), so the
 * assertion is made here.  Two seeds: PPO takes about 80 s a run under the sanitizers. */
static void test_ppo_beats_random(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, "matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu");
	double sum[2] = {0, 0};
	int wins = 0;
	for (uint64_t seed = 1; seed <= 2; seed++) {
		double r[2];
		for (int m = 0; m < 2; m++) {
			st_tune_opts o = opts(m ? ST_SEARCH_RANDOM : ST_SEARCH_PPO, 2000, seed);
			o.search.lr = 1e-2;
			st_tune_result res;
			st_error err = {0};
			if (st_tune(&f.k, &o, NULL, &res, &err))
				fail_msg("tune: %s", err.msg);
			r[m] = res.improved ? res.best.ratio : 1.0;
			sum[m] += log(r[m]);
			st_tune_result_free(&res);
		}
		wins += r[0] > r[1];
		print_message("seed %llu: ppo %.5f, random %.5f\n", (unsigned long long)seed, r[0], r[1]);
	}
	print_message("mean log gain: ppo %.5f, random %.5f\n", sum[0] / 2, sum[1] / 2);
	assert_int_equal(wins, 2);
	assert_true(sum[0] / 2 > sum[1] / 2 + 0.0005);
	fx_close(&f);
}

static void test_train_and_apply(void **state)
{
	(void)state;
	fx a, b, c;
	fx_open(&a, "add_f32_1M");
	fx_open(&b, "softmax_f32_1024x1024");
	fx_open(&c, "layernorm_f16_1024x1024");
	st_tune_kernel ks[2] = {a.k, b.k};
	st_tune_opts o = opts(ST_SEARCH_PPO, 200, 5);
	st_policy *p = NULL;
	st_error err = {0};
	assert_int_equal(st_policy_new(8, 5, &p, &err), ST_OK);
	st_tune_result res[2];
	if (st_tune_train(ks, 2, &o, p, res, &err))
		fail_msg("train: %s", err.msg);
	assert_true(res[0].steps + res[1].steps == 200);
	assert_true(res[0].steps > 0 && res[1].steps > 0);
	assert_string_equal(res[0].kernel, "add_kernel");
	st_tune_result_free(&res[0]);
	st_tune_result_free(&res[1]);
	char path[] = "/tmp/st_test_policy_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(st_policy_save(p, path, &err), ST_OK);
	st_policy *q = NULL;
	if (st_policy_load(path, &q, &err))
		fail_msg("load: %s", err.msg);
	unlink(path);
	for (int gate = 0; gate < 2; gate++) {
		st_tune_result r;
		if (st_tune_apply_policy(&c.k, q, 32, 0, gate ? ST_TUNE_MODEL_GATE : 0, &r, &err))
			fail_msg("apply: %s", err.msg);
		print_message("apply %s: %s (model %.4f)\n", gate ? "gated" : "ungated", r.message, r.model_ratio);
		if (r.improved) {
			snprintf(r.kernel, sizeof r.kernel, "layernorm_kernel");
			st_test_tune_replays(c.cubin, c.size, c.listing, &r);
		}
		if (gate)
			assert_true(!r.improved || r.model_ratio > 1.0); /* the gate keeps only a predicted gain */
		st_tune_result_free(&r);
	}
	st_tune_result r0;
	assert_int_equal(st_tune_apply_policy(&c.k, q, 0, 0, 0, &r0, &err), ST_OK); /* no steps: the input */
	assert_int_equal(r0.improved, 0);
	assert_memory_equal(r0.cubin, c.cubin, c.size);
	st_tune_result_free(&r0);
	st_tune_kernel bad = c.k;
	bad.kernel = "no_such_kernel";
	assert_int_equal(st_tune_apply_policy(&bad, q, 4, 0, 0, &r0, &err), ST_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no_such_kernel"));
	st_policy_free(p);
	st_policy_free(q);
	fx_close(&a);
	fx_close(&b);
	fx_close(&c);
}

static void test_gpu_reward_without_gpu(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, "add_f32_1M");
	st_tune_opts o = opts(ST_SEARCH_RANDOM, 10, 1);
	o.reward = ST_REWARD_GPU;
	o.runtime.libcuda = "/nonexistent/libcuda.so.1";
	char worker[4096];
	const char *bd = getenv("ST_BUILD_DIR");
	snprintf(worker, sizeof worker, "%s/sasstune-worker", bd && *bd ? bd : ".");
	o.runtime.worker = worker;
	st_tune_result r;
	st_error err = {0};
	assert_int_equal(st_tune(&f.k, &o, NULL, &r, &err), ST_EDEVICE);
	assert_non_null(strstr(err.msg, "cannot load the CUDA driver /nonexistent/libcuda.so.1"));
	assert_null(strchr(err.msg, '\n'));
	assert_null(r.cubin);
	st_tune_kernel nolaunch = f.k;
	nolaunch.launch = NULL;
	nolaunch.kernel = "add_kernel";
	assert_int_equal(st_tune(&nolaunch, &o, NULL, &r, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "launch spec"));
	o.search.confirm_pairs = 100;
	assert_int_equal(st_tune(&f.k, &o, NULL, &r, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "200 pairs"));
	fx_close(&f);
}

/* The GPU reward through the mock driver (which runs any real cubin as an add): the race's
 * survivor is re-measured against the original in a session opened anew (st_estimate_run, as
 * `sasstune compare`), and that is what the result reports and the cache entry records. */
static void test_gpu_fresh_session_estimate(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, "add_f32_1M");
	static const char small[] = /* the fixture's kernel and parameters over 4096 elements */
		"{\"kernel\":\"add_kernel\",\"grid\":[32],\"block\":[128],\"params\":["
		"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
		"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
		"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
		"{\"kind\":\"i32\",\"value\":4096},{\"kind\":\"ptr\",\"bytes\":0},{\"kind\":\"ptr\",\"bytes\":0}]}";
	st_launch *l = NULL;
	st_error err = {0};
	assert_int_equal(st_launch_parse(small, strlen(small), NULL, &l, &err), ST_OK);
	f.k.launch = l;
	st_tune_opts o = opts(ST_SEARCH_RANDOM, 12, 3);
	o.reward = ST_REWARD_GPU;
	char worker[4096], mock[4096];
	const char *bd = getenv("ST_BUILD_DIR");
	snprintf(worker, sizeof worker, "%s/sasstune-worker", bd && *bd ? bd : ".");
	snprintf(mock, sizeof mock, "%s/test/libcuda_mock.so", bd && *bd ? bd : ".");
	o.runtime.worker = worker;
	o.runtime.libcuda = mock;
	o.runtime.warmup_ms = 1;
	o.runtime.timeout_s = 30;
	setenv("MOCK_CUDA_ELF_SPREAD", "0.04", 1); /* schedules time apart by a hash of their bytes */
	st_tune_result r;
	if (st_tune(&f.k, &o, NULL, &r, &err) != ST_OK)
		fail_msg("tune: %s", err.msg);
	if (r.improved) {
		assert_true(r.confirmed);
		assert_non_null(r.verification_json);
		assert_non_null(strstr(r.verification_json, "\"estimate\": \"fresh-session\""));
		assert_non_null(strstr(r.verification_json, "\"estimate_sample_us\": 500"));
		assert_non_null(strstr(r.verification_json, "\"race_final\": ["));
		assert_non_null(strstr(r.message, "in a fresh session"));
		assert_int_equal(r.best.pairs, o.search.confirm_pairs);
		assert_true(r.best.lo > ST_TUNE_GPU_CONFIRM_MIN && r.best.lo <= r.best.ratio && r.best.ratio <= r.best.hi);
		st_test_tune_replays(f.cubin, f.size, f.listing, &r);
	} else {
		fail_msg("nothing reached the final estimate: %s", r.message);
	}
	unsetenv("MOCK_CUDA_ELF_SPREAD");
	st_tune_result_free(&r);
	st_launch_free(l);
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, "add_f32_1M");
	st_tune_opts o = opts(ST_SEARCH_RANDOM, 10, 1);
	st_tune_result r;
	st_error err = {0};
	st_tune_kernel k = f.k;
	k.kernel = "nope";
	assert_int_equal(st_tune(&k, &o, NULL, &r, &err), ST_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no kernel named 'nope'"));
	k = f.k;
	k.launch = NULL; /* the only entry kernel is picked */
	assert_int_equal(st_tune(&k, &o, NULL, &r, &err), ST_OK);
	assert_string_equal(r.kernel, "add_kernel");
	st_tune_result_free(&r);
	o.version = 99;
	assert_int_equal(st_tune(&f.k, &o, NULL, &r, &err), ST_EINVAL);
	o = opts(ST_SEARCH_RANDOM, 0, 1); /* no budget */
	assert_int_equal(st_tune(&f.k, &o, NULL, &r, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "budget"));
	o = opts(ST_SEARCH_RANDOM, 10, 1); /* rename passed its second GPU campaign (legality 5): tuned with */
	o.sched_flags |= ST_SCHED_RENAME;
	assert_int_equal(st_tune(&f.k, &o, NULL, &r, &err), ST_OK);
	st_tune_result_free(&r);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_schedule), cmocka_unit_test(test_every_result_checks),
		cmocka_unit_test(test_ppo_beats_random),        cmocka_unit_test(test_train_and_apply),
		cmocka_unit_test(test_gpu_reward_without_gpu),  cmocka_unit_test(test_errors),
		cmocka_unit_test(test_gpu_fresh_session_estimate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
