/* The search policy: feature schema, hand-written gradients against finite
 * differences, Adam, policy files (exact round trip, malformed files rejected
 * with a message naming the problem). */
#include "testutil.h"
#include "sasstune/search.h"
#include "search/search_int.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_feature_schema(void **state)
{
	(void)state;
	assert_int_equal(ST_SEARCH_NFEAT, 47);
	assert_string_equal(st_search_feature_name(ST_F_SWAP), "move.swap");
	assert_string_equal(st_search_feature_name(ST_F_A_LDG), "a.class.ldg");
	assert_string_equal(st_search_feature_name(ST_F_B_MOVED), "b.moved");
	assert_string_equal(st_search_feature_name(ST_F_LOOP_DEPTH), "pos.loop_depth");
	assert_null(st_search_feature_name(ST_SEARCH_NFEAT));
	for (size_t i = 0; i < ST_SEARCH_NFEAT; i++)
		for (size_t j = i + 1; j < ST_SEARCH_NFEAT; j++)
			assert_string_not_equal(st_search_feature_name(i), st_search_feature_name(j));
}

static void test_rng_deterministic(void **state)
{
	(void)state;
	st_rng a, b;
	st_rng_seed(&a, 42);
	st_rng_seed(&b, 42);
	for (int i = 0; i < 100; i++)
		assert_true(st_rng_next(&a) == st_rng_next(&b));
	st_rng_seed(&b, 43);
	assert_true(st_rng_next(&a) != st_rng_next(&b));
	size_t hist[5] = {0};
	double mean = 0;
	for (int i = 0; i < 50000; i++) {
		hist[st_rng_below(&a, 5)]++;
		double u = st_rng_uniform(&a);
		assert_true(u >= 0 && u < 1);
		mean += st_rng_normal(&a);
	}
	for (int i = 0; i < 5; i++)
		assert_true(hist[i] > 9500 && hist[i] < 10500);
	assert_true(fabs(mean / 50000) < 0.03);
}

/* A small batch of random decisions for the loss. */
typedef struct batch {
	float *feat;
	st_ppo_step steps[4];
	size_t idx[4];
} batch;

static void make_batch(batch *b, const st_policy *p, st_rng *r)
{
	static const size_t ns[4] = {4, 1, 6, 3};
	size_t total = 0;
	for (int k = 0; k < 4; k++)
		total += ns[k];
	b->feat = malloc(total * ST_SEARCH_NFEAT * sizeof(float));
	size_t off = 0;
	for (int k = 0; k < 4; k++) {
		st_ppo_step *s = &b->steps[k];
		memset(s, 0, sizeof *s);
		s->feat_off = off;
		s->n = ns[k];
		for (size_t j = 0; j < ns[k] * ST_SEARCH_NFEAT; j++)
			b->feat[off + j] = (float)(2 * st_rng_uniform(r) - 1);
		off += ns[k] * ST_SEARCH_NFEAT;
		for (size_t j = 0; j < ST_STATE_NFEAT; j++)
			s->state[j] = (float)(2 * st_rng_uniform(r) - 1);
		s->action = st_rng_below(r, ns[k]);
		s->adv = st_rng_normal(r);
		s->ret = st_rng_normal(r);
		b->idx[k] = (size_t)k;
	}
	/* old log-probabilities near the current ones, some outside the clip range */
	for (int k = 0; k < 4; k++) {
		st_ppo_step *s = &b->steps[k];
		double z[8], pr[8], h[2 * 64];
		for (size_t j = 0; j < s->n; j++)
			z[j] = st_mlp_forward(p, &p->actor, b->feat + s->feat_off + j * ST_SEARCH_NFEAT, h, h + p->hidden);
		double lse = st_softmax(z, s->n, pr);
		s->logp = z[s->action] - lse + (k % 2 ? 0.5 : -0.05);
	}
}

static void gradient_check(unsigned hidden, const st_ppo_hyper *hp, uint64_t seed)
{
	st_policy *p;
	st_error err;
	assert_int_equal(st_policy_new(hidden, seed, &p, &err), ST_OK);
	st_rng r;
	st_rng_seed(&r, seed);
	/* larger output weights than the initialisation so every term matters */
	for (size_t i = 0; i < p->n_params; i++)
		p->theta[i] += 0.3 * st_rng_normal(&r);
	batch b;
	make_batch(&b, p, &r);
	st_ppo_work w = {0};
	double *g = calloc(p->n_params, sizeof(double));
	double loss;
	assert_int_equal(st_ppo_loss(p, b.feat, b.steps, b.idx, 4, hp, &w, &loss, g, &err), ST_OK);
	assert_true(isfinite(loss));
	size_t checked = 0, nonzero = 0;
	double worst = 0;
	for (size_t i = 0; i < p->n_params; i++) {
		const double eps = 1e-6, keep = p->theta[i];
		double lp, lm;
		p->theta[i] = keep + eps;
		assert_int_equal(st_ppo_loss(p, b.feat, b.steps, b.idx, 4, hp, &w, &lp, NULL, &err), ST_OK);
		p->theta[i] = keep - eps;
		assert_int_equal(st_ppo_loss(p, b.feat, b.steps, b.idx, 4, hp, &w, &lm, NULL, &err), ST_OK);
		p->theta[i] = keep;
		double num = (lp - lm) / (2 * eps);
		/* relative error, with a floor for the smallest gradients (rounding) */
		double diff = fabs(num - g[i]) / fmax(1e-3, fabs(num) + fabs(g[i]));
		if (fabs(num) + fabs(g[i]) > 1e-9)
			nonzero++;
		if (diff > worst) {
			worst = diff;
			if (diff >= 1e-6)
				fprintf(stderr, "  param %zu: numeric %.10g analytic %.10g\n", i, num, g[i]);
		}
		checked++;
	}
	if (worst >= 1e-6)
		fprintf(stderr, "gradient check: worst relative error %g over %zu parameters\n", worst, checked);
	assert_true(worst < 1e-6);
	assert_true(nonzero > p->actor.end / 2);   /* the check is not vacuous */
	free(g);
	free(b.feat);
	st_ppo_work_free(&w);
	st_policy_free(p);
}

static void test_gradient_check(void **state)
{
	(void)state;
	const st_ppo_hyper full = {.clip = 0.2, .ent_coef = 0.05, .vf_coef = 0.5};
	gradient_check(5, &full, 1);
	gradient_check(3, &full, 2);
	const st_ppo_hyper pg_only = {.clip = 0.2, .ent_coef = 0, .vf_coef = 0};
	gradient_check(4, &pg_only, 3);
	const st_ppo_hyper ent_only = {.clip = 0.2, .ent_coef = 1, .vf_coef = 0};
	gradient_check(4, &ent_only, 4);
}

/* A deliberate bug must be caught: the check compares against the loss itself. */
static void test_gradient_check_detects_error(void **state)
{
	(void)state;
	st_policy *p;
	assert_int_equal(st_policy_new(4, 9, &p, NULL), ST_OK);
	st_rng r;
	st_rng_seed(&r, 9);
	batch b;
	make_batch(&b, p, &r);
	st_ppo_work w = {0};
	const st_ppo_hyper hp = {.clip = 0.2, .ent_coef = 0.01, .vf_coef = 0.5};
	double *g = calloc(p->n_params, sizeof(double)), loss, lp, lm;
	assert_int_equal(st_ppo_loss(p, b.feat, b.steps, b.idx, 4, &hp, &w, &loss, g, NULL), ST_OK);
	/* the value head's output bias has gradient mean(vf (V - R)); perturb R and it must change */
	size_t i = p->critic.b3;
	const double keep = p->theta[i];
	p->theta[i] = keep + 1e-6;
	assert_int_equal(st_ppo_loss(p, b.feat, b.steps, b.idx, 4, &hp, &w, &lp, NULL, NULL), ST_OK);
	p->theta[i] = keep - 1e-6;
	assert_int_equal(st_ppo_loss(p, b.feat, b.steps, b.idx, 4, &hp, &w, &lm, NULL, NULL), ST_OK);
	p->theta[i] = keep;
	assert_true(fabs((lp - lm) / 2e-6 - g[i]) < 1e-6);
	assert_true(fabs(g[i]) > 1e-3);
	assert_true(fabs((lp - lm) / 2e-6 - 1.1 * g[i]) > 1e-5);   /* a 10 % error would show */
	free(g);
	free(b.feat);
	st_ppo_work_free(&w);
	st_policy_free(p);
}

/* A rollout of 8 decisions of 3 choices each, as the search records them. */
static void make_rollout(st_ppo_batch *b, st_rng *r)
{
	const size_t T = 8, C = 3, F = ST_SEARCH_NFEAT;
	memset(b, 0, sizeof *b);
	b->buf = calloc(T, sizeof *b->buf);
	b->feat = malloc(T * C * F * sizeof(float));
	assert_non_null(b->buf);
	assert_non_null(b->feat);
	b->cap = T;
	b->feat_cap = T * C * F;
	for (size_t k = 0; k < T; k++) {
		st_ppo_step *s = &b->buf[b->n++];
		s->feat_off = b->feat_len;
		s->n = C;
		for (size_t j = 0; j < C * F; j++)
			b->feat[b->feat_len++] = (float)(2 * st_rng_uniform(r) - 1);
		for (size_t j = 0; j < ST_STATE_NFEAT; j++)
			s->state[j] = (float)(2 * st_rng_uniform(r) - 1);
		s->action = st_rng_below(r, C);
		s->logp = log(1.0 / C) + 0.1 * st_rng_normal(r);
		s->value = st_rng_normal(r);
		s->reward = st_rng_normal(r);
		s->done = k == 3 || k == 7;
	}
}

/* The learner on a worker thread (ppo.async) computes exactly the update st_ppo_learn makes in
 * the caller's thread from the same rollout and shuffle seed; start hands back an empty batch. */
static void test_learner_async_equals_sync(void **state)
{
	(void)state;
	st_search_opts o;
	st_search_opts_init(&o);
	o.rollout = 8;
	o.minibatch = 4;
	o.epochs = 3;
	st_policy *p[2];
	st_ppo_learner l[2];
	st_ppo_batch b[2];
	st_error err;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(st_policy_new(8, 5, &p[k], &err), ST_OK);
		assert_int_equal(st_ppo_learner_init(&l[k], p[k], &o, &err), ST_OK);
		st_rng r;
		st_rng_seed(&r, 77);
		make_rollout(&b[k], &r);
	}
	double *before = malloc(p[0]->n_params * sizeof(double));
	memcpy(before, p[0]->theta, p[0]->n_params * sizeof(double));
	st_rng shuffle;
	st_rng_seed(&shuffle, 1234);
	assert_int_equal(st_ppo_learn(&l[0], &b[0], 1e-2, 0.5, 0, &shuffle, &err), ST_OK);
	assert_int_equal(b[0].n, 0);
	assert_int_equal(st_ppo_learner_start(&l[1], &b[1], 1e-2, 0.5, 0, 1234, &err), ST_OK);
	assert_int_equal(b[1].n, 0);       /* the learner's empty batch came back */
	assert_int_equal(b[1].cap, 8);
	assert_int_equal(st_ppo_learner_start(&l[1], &b[1], 1e-2, 0.5, 0, 1234, &err), ST_EINVAL);
	double t = 0;
	assert_int_equal(st_ppo_learner_join(&l[1], &t, &err), ST_OK);
	assert_true(t >= 0);
	assert_int_equal(st_ppo_learner_join(&l[1], &t, &err), ST_OK); /* nothing running: at once */
	assert_memory_equal(p[0]->theta, p[1]->theta, p[0]->n_params * sizeof(double));
	assert_memory_not_equal(p[0]->theta, before, p[0]->n_params * sizeof(double));
	assert_int_equal(p[1]->trained_steps, 8);
	/* freed while an update runs: the free joins it first (ASan sees no use after free) */
	st_rng r;
	st_rng_seed(&r, 78);
	st_ppo_batch_free(&b[1]);
	make_rollout(&b[1], &r);
	assert_int_equal(st_ppo_learner_start(&l[1], &b[1], 1e-2, 0.0, 0, 9, &err), ST_OK);
	for (int k = 0; k < 2; k++) {
		st_ppo_learner_free(&l[k]);
		st_ppo_batch_free(&b[k]);
		st_policy_free(p[k]);
	}
	free(before);
}

static void test_adam_minimises_quadratic(void **state)
{
	(void)state;
	st_adam a;
	assert_int_equal(st_adam_init(&a, 3), ST_OK);
	double x[3] = {3, -2, 0.5}, g[3];
	for (int it = 0; it < 3000; it++) {
		for (int i = 0; i < 3; i++)
			g[i] = 2 * (x[i] - (double)i);   /* minimum at (0, 1, 2) */
		st_adam_step(&a, x, g, 0.01, 0);
	}
	for (int i = 0; i < 3; i++)
		assert_true(fabs(x[i] - i) < 1e-2);
	/* clipping: a huge first gradient clipped to 0.5 leaves the second step
	 * (gradient 0.5) at full size, -0.1 each; unclipped the second would be -0.067 */
	double y[1] = {0}, gy[1] = {1e6};
	st_adam b;
	assert_int_equal(st_adam_init(&b, 1), ST_OK);
	st_adam_step(&b, y, gy, 0.1, 0.5);
	gy[0] = 0.5;
	st_adam_step(&b, y, gy, 0.1, 0.5);
	assert_true(fabs(y[0] + 0.2) < 1e-3);
	st_adam_free(&a);
	st_adam_free(&b);
}

static void test_policy_roundtrip(void **state)
{
	(void)state;
	st_error err;
	st_policy *p, *q;
	assert_int_equal(st_policy_new(8, 77, &p, &err), ST_OK);
	st_rng r;
	st_rng_seed(&r, 5);
	for (size_t i = 0; i < p->n_params; i++)   /* awkward values: tiny, huge, negative zero */
		p->theta[i] = i % 7 == 0 ? -0.0 : i % 5 == 0 ? 1e-300 * st_rng_normal(&r) : st_rng_normal(&r) * 1e3;
	p->trained_steps = 123456789;
	char dir[] = "/tmp/st-policy-XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/p.json", dir);
	assert_int_equal(st_policy_save(p, path, &err), ST_OK);
	assert_int_equal(st_policy_load(path, &q, &err), ST_OK);
	assert_int_equal(q->hidden, 8);
	assert_int_equal(q->n_params, p->n_params);
	assert_true(q->trained_steps == 123456789);
	assert_memory_equal(q->theta, p->theta, p->n_params * sizeof(double));
	char *a, *b;
	assert_int_equal(st_policy_to_json(p, &a, &err), ST_OK);
	assert_int_equal(st_policy_to_json(q, &b, &err), ST_OK);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\"schema\":\"" ST_SEARCH_SCHEMA "\""));
	assert_non_null(strstr(a, "\"a.class.ldg\""));
	free(a);
	free(b);
	st_policy_free(q);
	unlink(path);
	rmdir(dir);
	assert_int_equal(st_policy_load(path, &q, &err), ST_EIO);
	assert_null(q);
	st_policy_free(p);
	assert_int_equal(st_policy_new(0, 1, &p, &err), ST_EINVAL);
	assert_int_equal(st_policy_new(ST_POLICY_MAX_HIDDEN + 1, 1, &p, &err), ST_EINVAL);
}

/* Replace the first occurrence of `from` in a policy text by `to`. */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	assert_non_null(at);
	size_t n = strlen(text) + strlen(to) + 1;
	char *out = malloc(n);
	snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

static void expect_reject(const char *text, st_status code, const char *needle)
{
	st_policy *p = (st_policy *)1;
	st_error err;
	st_error_clear(&err);
	st_status s = st_policy_from_json(text, strlen(text), &p, &err);
	if (s != code || !strstr(err.msg, needle))
		fprintf(stderr, "expected %d with '%s', got %d: %s\n", code, needle, s, err.msg);
	assert_int_equal(s, code);
	assert_null(p);
	assert_non_null(strstr(err.msg, needle));
}

static void test_policy_malformed(void **state)
{
	(void)state;
	st_policy *p;
	char *good;
	assert_int_equal(st_policy_new(2, 1, &p, NULL), ST_OK);
	assert_int_equal(st_policy_to_json(p, &good, NULL), ST_OK);
	st_policy_free(p);

	expect_reject("", ST_EFORMAT, "not valid JSON");
	expect_reject("{\"format\": ", ST_EFORMAT, "not valid JSON");
	expect_reject("[1, 2]", ST_EFORMAT, "not a JSON object");
	expect_reject("{}", ST_EFORMAT, "not a sasstune policy");
	struct { const char *from, *to; st_status code; const char *needle; } cases[] = {
		{"\"format\":\"sasstune-policy\"", "\"format\":\"other\"", ST_EFORMAT, "not a sasstune policy"},
		{"\"version\":1", "\"version\":2", ST_EUNSUPPORTED, "version 2 is not supported"},
		{"\"version\":1", "\"version\":\"1\"", ST_EFORMAT, "version"},
		{"\"schema\":\"sasstune-features-1\"", "\"schema\":7", ST_EFORMAT, "schema"},
		{"\"schema\":\"sasstune-features-1\"", "\"schema\":\"sasstune-features-0\"", ST_EUNSUPPORTED,
		 "'sasstune-features-0' differs"},
		{"\"a.stall\"", "\"a.latency\"", ST_EUNSUPPORTED, "features[17] is 'a.latency' in the file but 'a.stall' here"},
		{"\"move.swap\",", "", ST_EUNSUPPORTED, "features[0] is 'move.ctrl' in the file but 'move.swap' here"},
		{"\"pos.loop_depth\"", "\"pos.loop_depth\",\"pos.extra\"", ST_EUNSUPPORTED, "the file has 48 features, this build 47"},
		{"\"move.swap\"", "3", ST_EFORMAT, "features[0] is not a string"},
		{"\"features\"", "\"feature_names\"", ST_EFORMAT, "no \"features\" array"},
		{"\"state.log_moves\"", "\"state.other\"", ST_EUNSUPPORTED, "state_features[1]"},
		{"\"hidden\":2", "\"hidden\":2.5", ST_EFORMAT, "hidden"},
		{"\"hidden\":2", "\"hidden\":0", ST_EFORMAT, "hidden"},
		{"\"hidden\":2", "\"hidden\":100000", ST_EFORMAT, "hidden"},
		{"\"hidden\":2", "\"hidden\":3", ST_EFORMAT, "actor.w1 has 94 numbers, expected 141"},
		{"\"trained_steps\":0", "\"trained_steps\":-1", ST_EFORMAT, "trained_steps"},
		{"\"actor\"", "\"actr\"", ST_EFORMAT, "no \"actor\" object"},
		{"\"b3\":[", "\"b3\":[1,", ST_EFORMAT, "actor.b3 has 2 numbers, expected 1"},
		{"\"w2\":[", "\"w2\":[\"x\",", ST_EFORMAT, "actor.w2[0] is not a finite number"},
		{"\"w3\":[", "\"w3\":[1e999,", ST_EFORMAT, "actor.w3[0] is not a finite number"},
		{"\"critic\":{\"w1\"", "\"critic\":{\"v1\"", ST_EFORMAT, "critic has no \"w1\" array"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *bad = edit(good, cases[i].from, cases[i].to);
		expect_reject(bad, cases[i].code, cases[i].needle);
		free(bad);
	}
	/* the good text itself loads, even without a terminating NUL inside len */
	size_t n = strlen(good);
	char *copy = malloc(n);
	memcpy(copy, good, n);
	assert_int_equal(st_policy_from_json(copy, n, &p, NULL), ST_OK);
	st_policy_free(p);
	assert_int_equal(st_policy_from_json(copy, n - 1, &p, NULL), ST_EFORMAT);
	free(copy);
	free(good);

	/* a file: the path is named in the message */
	char dir[] = "/tmp/st-policy-XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/bad.json", dir);
	st_error err;
	assert_int_equal(st_write_file_atomic(path, "{\"format\":1}", 12, &err), ST_OK);
	assert_int_equal(st_policy_load(path, &p, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "bad.json: not a sasstune policy"));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_feature_schema),
		cmocka_unit_test(test_rng_deterministic),
		cmocka_unit_test(test_gradient_check),
		cmocka_unit_test(test_gradient_check_detects_error),
		cmocka_unit_test(test_adam_minimises_quadratic),
		cmocka_unit_test(test_learner_async_equals_sync),
		cmocka_unit_test(test_policy_roundtrip),
		cmocka_unit_test(test_policy_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
