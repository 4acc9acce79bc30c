/* The search driver: budgets, episodes (PPO and random walk), greedy hill
 * climbing, the candidates kept for confirmation, and the confirmation that
 * alone may accept a schedule.  See docs/search.md.
 *
 * Every environment state the search wants to return to is a path: the move
 * indices applied since reset().  Moving between states undoes back to the
 * common prefix (or resets) and replays the rest, which is why the environment
 * must number moves the same way each time it reaches a state. */
#include "search/search_int.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- options ------------------------------------------------------------------ */

typedef enum { OPT_U64, OPT_UNS, OPT_DBL, OPT_METHOD } opt_type;
typedef struct opt_desc {
	const char *name;
	opt_type type;
	size_t off;
	double min, max, def;
} opt_desc;

#define OPT(name, field, type, min, max, def) {name, type, offsetof(st_search_opts, field), min, max, def}
static const opt_desc opt_table[] = {
	OPT("method", method, OPT_METHOD, 0, 2, ST_SEARCH_PPO),
	OPT("seed", seed, OPT_U64, 0, 0, 1),
	OPT("steps", steps, OPT_U64, 0, 0, 2000),
	OPT("seconds", seconds, OPT_DBL, 0, 1e9, 0),
	OPT("episode_len", episode_len, OPT_UNS, 1, 1e6, 32),
	OPT("eval_interval", eval_interval, OPT_UNS, 1, 1e6, 1),
	OPT("eval_pairs", eval_pairs, OPT_UNS, 1, 1e7, 30),
	OPT("confirm_pairs", confirm_pairs, OPT_UNS, 0, 1e7, 200),
	OPT("confirm_top", confirm_top, OPT_UNS, 1, 1000, 8),
	OPT("race_pairs", race_pairs, OPT_UNS, 1, 1e7, 50),
	OPT("greedy_k", greedy_k, OPT_UNS, 1, 1e6, 8),
	OPT("greedy_kick", greedy_kick, OPT_UNS, 0, 64, 0),
	OPT("start_best", start_best, OPT_DBL, 0, 1, 0.5),
	OPT("reward_scale", reward_scale, OPT_DBL, 1e-6, 1e9, 100),
	OPT("crash_penalty", crash_penalty, OPT_DBL, 0, 1e9, 1),
	OPT("confirm_min", confirm_min, OPT_DBL, 1, 2, 1.0),
	OPT("ppo.rollout", rollout, OPT_UNS, 2, 1e6, 64),
	OPT("ppo.epochs", epochs, OPT_UNS, 1, 1000, 4),
	OPT("ppo.minibatch", minibatch, OPT_UNS, 1, 1e6, 16),
	OPT("ppo.anneal", anneal, OPT_UNS, 0, 1, 1),
	OPT("ppo.lr", lr, OPT_DBL, 0, 1, 3e-4),
	OPT("ppo.gamma", gamma, OPT_DBL, 0, 1, 0.99),
	OPT("ppo.lambda", lambda, OPT_DBL, 0, 1, 0.95),
	OPT("ppo.clip", clip, OPT_DBL, 0, 10, 0.2),
	OPT("ppo.ent_coef", ent_coef, OPT_DBL, 0, 10, 0.01),
	OPT("ppo.vf_coef", vf_coef, OPT_DBL, 0, 100, 0.5),
	OPT("ppo.max_grad_norm", max_grad_norm, OPT_DBL, 0, 1e9, 0.5),
	OPT("ppo.choices", choices, OPT_UNS, 0, 1e7, 16),
	OPT("ppo.async", async, OPT_UNS, 0, 1, 1),
	OPT("progress_every", progress_every, OPT_UNS, 1, 1e9, 16),
};
#define N_OPTS (sizeof opt_table / sizeof opt_table[0])
static const char *const method_names[] = {"ppo", "random", "greedy"};

const char *st_search_method_name(st_search_method m)
{
	return (unsigned)m < 3 ? method_names[m] : NULL;
}

void st_search_opts_init(st_search_opts *o)
{
	memset(o, 0, sizeof *o);
	o->version = ST_SEARCH_OPTS_VERSION;
	for (size_t i = 0; i < N_OPTS; i++) {
		const opt_desc *d = &opt_table[i];
		char *f = (char *)o + d->off;
		switch (d->type) {
		case OPT_U64: *(uint64_t *)f = (uint64_t)d->def; break;
		case OPT_UNS: *(unsigned *)f = (unsigned)d->def; break;
		case OPT_DBL: *(double *)f = d->def; break;
		case OPT_METHOD: *(st_search_method *)f = (st_search_method)d->def; break;
		}
	}
}

static double opt_value(const st_search_opts *o, const opt_desc *d)
{
	const char *f = (const char *)o + d->off;
	switch (d->type) {
	case OPT_U64: return (double)*(const uint64_t *)f;
	case OPT_UNS: return (double)*(const unsigned *)f;
	case OPT_DBL: return *(const double *)f;
	case OPT_METHOD: return (double)*(const st_search_method *)f;
	}
	return 0;
}

static st_status opts_check(const st_search_opts *o, st_error *err)
{
	if (o->version != ST_SEARCH_OPTS_VERSION)
		return st_error_set(err, ST_EINVAL, "st_search_opts version %u is not %d (call st_search_opts_init)",
				    o->version, ST_SEARCH_OPTS_VERSION);
	for (size_t i = 0; i < N_OPTS; i++) {
		const opt_desc *d = &opt_table[i];
		if (d->type == OPT_U64)
			continue;
		double v = opt_value(o, d);
		if (!(v >= d->min && v <= d->max))
			return st_error_set(err, ST_EINVAL, "search option %s = %g is outside %g..%g", d->name,
					    v, d->min, d->max);
	}
	if (o->steps == 0 && o->seconds <= 0)
		return st_error_set(err, ST_EINVAL, "search needs a budget: steps or seconds");
	if (o->confirm_pairs && o->confirm_pairs < o->eval_pairs)
		return st_error_set(err, ST_EINVAL, "confirm_pairs (%u) must be 0 or at least eval_pairs (%u)",
				    o->confirm_pairs, o->eval_pairs);
	return ST_OK;
}

st_status st_search_opts_set(st_search_opts *o, const char *name, const char *value, st_error *err)
{
	if (!o || !name || !value)
		return st_error_set(err, ST_EINVAL, "st_search_opts_set needs options, a name and a value");
	const opt_desc *d = NULL;
	for (size_t i = 0; i < N_OPTS && !d; i++)
		if (strcmp(opt_table[i].name, name) == 0)
			d = &opt_table[i];
	if (!d)
		return st_error_set(err, ST_ENOTFOUND, "unknown search option '%s'", name);
	char *f = (char *)o + d->off, *end = NULL;
	if (d->type == OPT_METHOD) {
		for (size_t m = 0; m < 3; m++)
			if (strcmp(value, method_names[m]) == 0) {
				*(st_search_method *)f = (st_search_method)m;
				return ST_OK;
			}
		return st_error_set(err, ST_EINVAL, "search option method: '%s' is not ppo, random or greedy", value);
	}
	if (d->type == OPT_U64) {
		if (value[0] < '0' || value[0] > '9')
			return st_error_set(err, ST_EINVAL, "search option %s: '%s' is not a count", name, value);
		unsigned long long u = strtoull(value, &end, 0);
		if (*end)
			return st_error_set(err, ST_EINVAL, "search option %s: '%s' is not a count", name, value);
		*(uint64_t *)f = (uint64_t)u;
		return ST_OK;
	}
	double v = strtod(value, &end);
	if (end == value || *end || !isfinite(v))
		return st_error_set(err, ST_EINVAL, "search option %s: '%s' is not a number", name, value);
	if (v < d->min || v > d->max || (d->type == OPT_UNS && v != floor(v)))
		return st_error_set(err, ST_EINVAL, "search option %s = %s is outside %g..%g%s", name, value,
				    d->min, d->max, d->type == OPT_UNS ? " (integer)" : "");
	if (d->type == OPT_UNS)
		*(unsigned *)f = (unsigned)v;
	else
		*(double *)f = v;
	return ST_OK;
}

void st_search_result_free(st_search_result *r)
{
	if (!r)
		return;
	free(r->schedule_json);
	r->schedule_json = NULL;
}

/* ---- paths and candidates --------------------------------------------------------- */

typedef struct path {
	size_t *v;
	size_t n, cap;
} path;

static st_status path_reserve(path *p, size_t n, st_error *err)
{
	if (n <= p->cap)
		return ST_OK;
	size_t cap = p->cap ? p->cap * 2 : 32;
	while (cap < n)
		cap *= 2;
	size_t *v = realloc(p->v, cap * sizeof *v);
	if (!v)
		return st_error_set(err, ST_ENOMEM, "out of memory for a move path");
	p->v = v;
	p->cap = cap;
	return ST_OK;
}

static st_status path_copy(path *dst, const path *src, st_error *err)
{
	st_status s = path_reserve(dst, src->n, err);
	if (s)
		return s;
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof *src->v);
	dst->n = src->n;
	return ST_OK;
}

static void path_free(path *p)
{
	free(p->v);
	memset(p, 0, sizeof *p);
}

static uint64_t fnv1a(const void *data, size_t n)
{
	const unsigned char *b = data;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

typedef struct cand {
	path moves;
	st_eval ev;
	uint64_t hash;
	char *json;
} cand;

typedef struct envrun {
	const st_search_env *env;
	st_search_result *res;
	path cur;             /* moves applied since the last reset */
	float *fstack;        /* on_eval only: the feature row of each move of cur, as applied */
	size_t fstack_cap;    /* rows */
	path best;            /* the best quick evaluation's state */
	st_eval best_ev;
	cand *cands;          /* the confirm_top best distinct states, best first */
	size_t n_cands;
	double cur_ratio;     /* ratio of the state with evaluated_len moves */
	size_t evaluated_len;
	int converged;        /* greedy: every legal move tried, none improved */
	int stuck;            /* greedy: converged, and a kick found no move to make */
	size_t *order;        /* greedy: this state's moves in random order */
	size_t order_n, order_next, order_cap;
	double *order_w;      /* greedy, aimed: the weight of each order entry */
	size_t order_w_cap;
	int order_valid;
} envrun;

typedef struct run {
	const st_search_opts *o;
	envrun *er;
	size_t n_er;
	st_rng rng;
	uint64_t steps, evals, rejected, last_progress;
	double t0, eval_s, policy_s;
	int cancelled;
	st_eval best_all;
	float *feat;          /* the current state's move rows (+ the stop row) */
	size_t feat_cap;      /* rows */
	size_t *pick;         /* PPO: the moves behind feat's rows (a sample when ppo.choices < n) */
	size_t pick_cap;
	/* PPO */
	st_policy *pol;       /* the weights the learner trains */
	st_policy act;        /* ppo.async: the weights the search acts with (pol's as of the last join) */
	const st_policy *actp; /* &act, or pol when updates run in this thread */
	st_ppo_learner learn;
	double update_s, wait_s; /* async: the updates' time on the worker, the time spent joining them */
	double *z, *pr, *h;
	size_t z_cap;
	st_ppo_batch roll;    /* the rollout being filled (aimed: roll.prior = log weight of each row) */
	double *w;            /* aimed proposals: the current state's move weights */
	size_t w_cap;
	int aimed;            /* some environment has weights */
} run;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *env_name(const envrun *e) { return e->env->name ? e->env->name : "environment"; }

/* Prefix a failed callback's message with the environment and what failed. */
static st_status env_fail(st_status s, const envrun *e, const char *what, size_t move, st_error *err)
{
	if (move == SIZE_MAX)
		st_error_wrap(err, "%s: %s", env_name(e), what);
	else
		st_error_wrap(err, "%s: %s %zu", env_name(e), what, move);
	return s;
}

static int budget_ok(const run *r)
{
	if (r->cancelled)
		return 0;
	if (r->o->steps && r->steps >= r->o->steps)
		return 0;
	if (r->o->seconds > 0 && now_s() - r->t0 >= r->o->seconds)
		return 0;
	return 1;
}

static void progress(run *r, int force)
{
	const st_search_opts *o = r->o;
	if (!o->progress || r->steps == r->last_progress)
		return;
	if (!force && r->steps % o->progress_every)
		return;
	r->last_progress = r->steps;
	double el = now_s() - r->t0;
	st_search_progress p = {
		.steps = r->steps, .evals = r->evals, .rejected = r->rejected,
		.steps_per_s = el > 0 ? (double)r->steps / el : 0,
		.seconds_left = o->seconds > 0 ? (o->seconds - el > 0 ? o->seconds - el : 0) : -1,
		.best = r->best_all,
	};
	if (o->progress(&p, o->progress_data))
		r->cancelled = 1;
}

/* ---- moving the environment ---------------------------------------------------------- */

static st_status grow(void **p, size_t *cap, size_t need, size_t elem, st_error *err);

/* With on_eval, the move's feature row (in the state it is applied to) goes on fstack. */
static st_status er_note_features(const run *r, envrun *e, size_t m, st_error *err)
{
	if (!r->o->on_eval || !e->env->features)
		return ST_OK;
	st_status s = grow((void **)&e->fstack, &e->fstack_cap, e->cur.n + 1, ST_SEARCH_NFEAT * sizeof(float), err);
	if (!s && (s = e->env->features(e->env->data, m, e->fstack + e->cur.n * ST_SEARCH_NFEAT, err)))
		return env_fail(s, e, "features of move", m, err);
	return s;
}

static st_status er_apply(const run *r, envrun *e, size_t m, st_error *err)
{
	st_status s = path_reserve(&e->cur, e->cur.n + 1, err);
	if (s || (s = er_note_features(r, e, m, err)))
		return s;
	if ((s = e->env->apply(e->env->data, m, err)))
		return env_fail(s, e, "apply move", m, err);
	e->cur.v[e->cur.n++] = m;
	return ST_OK;
}

static st_status er_undo(envrun *e, st_error *err)
{
	st_status s = e->env->undo(e->env->data, err);
	if (s)
		return env_fail(s, e, "undo", SIZE_MAX, err);
	e->cur.n--;
	return ST_OK;
}

static st_status er_reset(envrun *e, st_error *err)
{
	st_status s = e->env->reset(e->env->data, err);
	if (s)
		return env_fail(s, e, "reset", SIZE_MAX, err);
	e->cur.n = 0;
	return ST_OK;
}

/* Bring the environment to the state `t` (a path from the original). */
static st_status er_goto(const run *r, envrun *e, const path *t, st_error *err)
{
	size_t k = 0;
	while (k < e->cur.n && k < t->n && e->cur.v[k] == t->v[k])
		k++;
	st_status s;
	if (1 + t->n < (e->cur.n - k) + (t->n - k)) {
		if ((s = er_reset(e, err)))
			return s;
		k = 0;
	}
	while (e->cur.n > k)
		if ((s = er_undo(e, err)))
			return s;
	for (size_t i = k; i < t->n; i++) {
		if (t->v[i] >= e->env->n_moves(e->env->data))
			return st_error_set(err, ST_EINVAL, "%s: replaying a path, move %zu is out of range "
					    "(the environment must number moves the same way in the same state)",
					    env_name(e), t->v[i]);
		if ((s = er_apply(r, e, t->v[i], err)))
			return s;
	}
	return ST_OK;
}

/* Tell on_eval about an evaluation of the current state. */
static void er_note_eval(const run *r, const envrun *e, unsigned kind, const st_eval *ev)
{
	float sum[ST_SEARCH_NFEAT] = {0};
	int have = e->env->features != NULL;
	for (size_t i = 0; have && i < e->cur.n; i++)
		for (size_t f = 0; f < ST_SEARCH_NFEAT; f++)
			sum[f] += e->fstack[i * ST_SEARCH_NFEAT + f];
	st_search_eval_note n = {.env = (size_t)(e - r->er), .kind = kind, .ev = *ev, .n_moves = e->cur.n,
				 .feat_sum = have ? sum : NULL};
	r->o->on_eval(&n, r->o->on_eval_data);
}

static st_status er_eval(run *r, envrun *e, unsigned pairs, unsigned kind, st_eval *ev, st_error *err)
{
	memset(ev, 0, sizeof *ev);
	double t = now_s();
	st_status s = e->env->evaluate(e->env->data, pairs, ev, err);
	r->eval_s += now_s() - t;
	if (s)
		return env_fail(s, e, "evaluate", SIZE_MAX, err);
	r->evals++;
	e->res->evals++;
	if (ev->status == ST_OK) {
		if (!isfinite(ev->ratio) || !(ev->ratio > 0) || !isfinite(ev->lo) || !isfinite(ev->hi) ||
		    ev->lo > ev->ratio || ev->hi < ev->ratio)
			return st_error_set(err, ST_EINVAL, "%s: evaluate gave ratio %g with interval [%g, %g]",
					    env_name(e), ev->ratio, ev->lo, ev->hi);
	} else {
		r->rejected++;
		e->res->rejected++;
	}
	if (r->o->on_eval) /* only evaluations that passed the checks above */
		er_note_eval(r, e, kind, ev);
	return ST_OK;
}

/* Keep the current state as a candidate for confirmation if it ranks. */
static st_status cand_note(run *r, envrun *e, const st_eval *ev, st_error *err)
{
	const size_t K = r->o->confirm_top;
	if (!(ev->ratio > 1.0) || (e->n_cands == K && ev->ratio <= e->cands[K - 1].ev.ratio))
		return ST_OK;
	char *json = NULL;
	uint64_t hash;
	if (e->env->schedule_json) {
		st_status s = e->env->schedule_json(e->env->data, &json, err);
		if (s)
			return env_fail(s, e, "schedule_json", SIZE_MAX, err);
		if (!json)
			return st_error_set(err, ST_EINVAL, "%s: schedule_json gave no text", env_name(e));
		hash = fnv1a(json, strlen(json));
	} else {
		hash = fnv1a(e->cur.v, e->cur.n * sizeof *e->cur.v);
	}
	size_t at = SIZE_MAX;
	for (size_t i = 0; i < e->n_cands && at == SIZE_MAX; i++) {
		const cand *c = &e->cands[i];
		if (c->hash != hash)
			continue;
		if (json ? strcmp(c->json, json) == 0
			 : c->moves.n == e->cur.n && !memcmp(c->moves.v, e->cur.v, e->cur.n * sizeof *e->cur.v))
			at = i;
	}
	if (at != SIZE_MAX) {          /* the same schedule again: keep its best measurement */
		free(json);
		if (ev->ratio <= e->cands[at].ev.ratio)
			return ST_OK;
		e->cands[at].ev = *ev;
	} else {
		if (e->n_cands == K) {
			cand *last = &e->cands[K - 1];
			path_free(&last->moves);
			free(last->json);
			e->n_cands--;
		}
		at = e->n_cands++;
		cand *c = &e->cands[at];
		memset(c, 0, sizeof *c);
		c->ev = *ev;
		c->hash = hash;
		c->json = json;
		st_status s = path_copy(&c->moves, &e->cur, err);
		if (s)
			return s;
	}
	while (at > 0 && e->cands[at].ev.ratio > e->cands[at - 1].ev.ratio) {
		cand t = e->cands[at];
		e->cands[at] = e->cands[at - 1];
		e->cands[at - 1] = t;
		at--;
	}
	return ST_OK;
}

static st_status note_eval(run *r, envrun *e, const st_eval *ev, st_error *err)
{
	if (ev->status != ST_OK)
		return ST_OK;
	if (ev->ratio > e->best_ev.ratio) {
		st_status s = path_copy(&e->best, &e->cur, err);
		if (s)
			return s;
		e->best_ev = *ev;
	}
	if (ev->ratio > r->best_all.ratio)
		r->best_all = *ev;
	return cand_note(r, e, ev, err);
}

/* ---- features and the policy ------------------------------------------------------- */

/* The rows PPO decides among: every legal move, or (ppo.choices = k < n) k of them drawn uniformly
 * without replacement, in increasing move order (r->pick[i] is row i's move).  The sample is part
 * of the observation, so PPO's ratio stays that of the decision it recorded; the cost of a step
 * (features, forward passes, and the update over the rollout) scales with k instead of n. */
static st_status pick_moves(run *r, size_t n, size_t *k, st_error *err)
{
	size_t want = r->o->choices && r->o->choices < n ? r->o->choices : n;
	st_status s = grow((void **)&r->pick, &r->pick_cap, n, sizeof(size_t), err);
	if (s)
		return s;
	for (size_t i = 0; i < n; i++)
		r->pick[i] = i;
	if (want < n) {
		for (size_t i = 0; i < want; i++) { /* partial Fisher-Yates */
			size_t j = i + st_rng_below(&r->rng, n - i), t = r->pick[i];
			r->pick[i] = r->pick[j];
			r->pick[j] = t;
		}
		for (size_t i = 1; i < want; i++) /* insertion sort: a fixed row order for a fixed sample */
			for (size_t j = i; j > 0 && r->pick[j - 1] > r->pick[j]; j--) {
				size_t t = r->pick[j];
				r->pick[j] = r->pick[j - 1];
				r->pick[j - 1] = t;
			}
	}
	*k = want;
	return ST_OK;
}

/* Feature rows of the k moves in r->pick (+ the stop row). */
static st_status gather(run *r, envrun *e, size_t k, st_error *err)
{
	if (k + 1 > r->feat_cap) {
		size_t cap = r->feat_cap ? r->feat_cap : 64;
		while (cap < k + 1)
			cap *= 2;
		float *f = realloc(r->feat, cap * ST_SEARCH_NFEAT * sizeof(float));
		if (!f)
			return st_error_set(err, ST_ENOMEM, "out of memory for move features");
		r->feat = f;
		r->feat_cap = cap;
	}
	for (size_t i = 0; i < k; i++) {
		float *row = r->feat + i * ST_SEARCH_NFEAT;
		st_status s = e->env->features(e->env->data, r->pick[i], row, err);
		if (s)
			return env_fail(s, e, "features of move", r->pick[i], err);
		for (size_t f = 0; f < ST_SEARCH_NFEAT; f++)
			if (!isfinite(row[f]))
				return st_error_set(err, ST_EINVAL, "%s: move %zu feature %s is not finite",
						    env_name(e), r->pick[i], st_search_feature_name(f));
	}
	st_stop_features(r->feat + k * ST_SEARCH_NFEAT);
	return ST_OK;
}

static st_status grow(void **p, size_t *cap, size_t need, size_t elem, st_error *err)
{
	if (need <= *cap)
		return ST_OK;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * elem);
	if (!q)
		return st_error_set(err, ST_ENOMEM, "out of memory in the search");
	*p = q;
	*cap = c;
	return ST_OK;
}

/* Aimed proposals: r->w[0..n) = the environment's move weights (all 1 without a weight callback). */
static st_status weights(run *r, envrun *e, size_t n, st_error *err)
{
	st_status s = grow((void **)&r->w, &r->w_cap, n + 1, sizeof(double), err);
	for (size_t i = 0; !s && i < n; i++) {
		r->w[i] = e->env->weight ? e->env->weight(e->env->data, i) : 1.0;
		if (!(r->w[i] > 0) || !isfinite(r->w[i]))
			return st_error_set(err, ST_EINVAL, "%s: move %zu has weight %g (must be positive and finite)",
					    env_name(e), i, r->w[i]);
	}
	return s;
}

/* A move drawn in proportion to r->w[0..n). */
static size_t weighted_pick(run *r, size_t n)
{
	double total = 0, acc = 0;
	for (size_t i = 0; i < n; i++)
		total += r->w[i];
	double u = st_rng_uniform(&r->rng) * total;
	for (size_t i = 0; i < n; i++) {
		acc += r->w[i];
		if (u < acc)
			return i;
	}
	return n - 1;
}

/* The update over the full rollout: here, or (ppo.async) started on the learner's worker; a
 * running update was joined before, so the acting weights are the policy's when it starts. */
static st_status ppo_update(run *r, double bootstrap, int async, st_error *err)
{
	const st_search_opts *o = r->o;
	double lr = o->lr;
	if (o->anneal && o->steps) {
		double left = 1.0 - (double)r->steps / (double)o->steps;
		lr *= left > 0 ? left : 0;
	}
	if (async)
		return st_ppo_learner_start(&r->learn, &r->roll, lr, bootstrap, r->aimed, st_rng_next(&r->rng), err);
	return st_ppo_learn(&r->learn, &r->roll, lr, bootstrap, r->aimed, &r->rng, err);
}

/* Wait for a running update (a fixed point of the search: its next decision, or the end) and act
 * with its weights from here on. */
static st_status ppo_join(run *r, st_error *err)
{
	if (!r->learn.running)
		return ST_OK;
	double t0 = now_s();
	st_status s = st_ppo_learner_join(&r->learn, &r->update_s, err);
	r->wait_s += now_s() - t0;
	memcpy(r->act.theta, r->pol->theta, r->pol->n_params * sizeof(double));
	return s;
}

/* Choose among the n moves (+ stop when allowed) in r->feat; records the decision. */
static st_status ppo_choose(run *r, size_t n, size_t n_all, int can_stop, double step_frac, size_t *action,
			     st_error *err)
{
	const st_policy *p = r->actp;
	const size_t H = p->hidden, F = ST_SEARCH_NFEAT, c = n + (can_stop != 0);
	st_status s;
	float state[ST_STATE_NFEAT];
	st_state_features(r->feat, n, step_frac, state);
	state[ST_SEARCH_NFEAT + 1] = (float)(log((double)n_all + 1.0) / 8.0); /* every legal move counts */
	if ((s = ppo_join(r, err)))
		return s;
	if (r->roll.n >= r->o->rollout) {
		double boot = st_mlp_forward(p, &p->critic, state, r->h, r->h + H);
		if ((s = ppo_update(r, boot, r->o->async, err)))
			return s;
	}
	if ((s = grow((void **)&r->z, &r->z_cap, c, 2 * sizeof(double), err)))
		return s;
	r->pr = r->z + r->z_cap;
	for (size_t j = 0; j < c; j++) /* aimed: the weights as a prior on the logits (stop: none) */
		r->z[j] = st_mlp_forward(p, &p->actor, r->feat + j * F, r->h, r->h + H) +
			  (r->aimed && j < n ? log(r->w[j]) : 0);
	double lse = st_softmax(r->z, c, r->pr);
	double u = st_rng_uniform(&r->rng), acc = 0;
	size_t a = c - 1;
	for (size_t j = 0; j < c; j++) {
		acc += r->pr[j];
		if (u < acc) {
			a = j;
			break;
		}
	}
	st_ppo_batch *b = &r->roll;
	if ((s = grow((void **)&b->feat, &b->feat_cap, b->feat_len + c * F, sizeof(float), err)))
		return s;
	st_ppo_step *st = &b->buf[b->n++];
	memset(st, 0, sizeof *st);
	st->feat_off = b->feat_len;
	st->n = c;
	st->action = a;
	st->logp = r->z[a] - lse;
	memcpy(st->state, state, sizeof state);
	st->value = st_mlp_forward(p, &p->critic, state, r->h, r->h + H);
	if (r->aimed) {
		if ((s = grow((void **)&b->prior, &b->prior_cap, b->feat_cap / F, sizeof(double), err)))
			return s;
		for (size_t j = 0; j < c; j++)
			b->prior[b->feat_len / F + j] = j < n ? log(r->w[j]) : 0;
	}
	memcpy(b->feat + b->feat_len, r->feat, c * F * sizeof(float));
	b->feat_len += c * F;
	*action = a;
	return ST_OK;
}

/* ---- episodes (PPO and random walk) ------------------------------------------------- */

/* Evaluate the moves made since the last evaluation; returns the reward, or
 * the crash penalty after undoing a rejected sequence (*rejected = 1). */
static st_status eval_pending(run *r, envrun *e, double *reward, int *rejected, st_error *err)
{
	*reward = 0;
	*rejected = 0;
	if (e->cur.n <= e->evaluated_len)
		return ST_OK;
	st_eval ev;
	st_status s = er_eval(r, e, r->o->eval_pairs, ST_EVAL_QUICK, &ev, err);
	if (s)
		return s;
	if (ev.status == ST_OK) {
		*reward = r->o->reward_scale * (log(ev.ratio) - log(e->cur_ratio));
		e->cur_ratio = ev.ratio;
		e->evaluated_len = e->cur.n;
		return note_eval(r, e, &ev, err);
	}
	*reward = -r->o->crash_penalty;
	*rejected = 1;
	while (e->cur.n > e->evaluated_len)
		if ((s = er_undo(e, err)))
			return s;
	return ST_OK;
}

static st_status episode(run *r, envrun *e, int ppo, st_error *err)
{
	const st_search_opts *o = r->o;
	st_status s;
	if (e->best.n && st_rng_uniform(&r->rng) < o->start_best) {
		/* Measure the start again: the best's own measurement was selected
		 * as the maximum of noisy ones, so it is biased upwards, and every
		 * move from it would look like a loss. */
		st_eval ev;
		if ((s = er_goto(r, e, &e->best, err)) || (s = er_eval(r, e, o->eval_pairs, ST_EVAL_START, &ev, err)))
			return s;
		e->cur_ratio = ev.status == ST_OK ? ev.ratio : e->best_ev.ratio;
	} else {
		path origin = {0};
		if ((s = er_goto(r, e, &origin, err)))
			return s;
		e->cur_ratio = 1.0;
	}
	e->evaluated_len = e->cur.n;
	size_t last = SIZE_MAX;   /* this episode's latest step in the rollout */
	double reward;
	int rejected = 0;
	for (unsigned t = 0; t < o->episode_len && budget_ok(r); t++) {
		size_t n = e->env->n_moves(e->env->data), a;
		if (n == 0)
			break;
		if (r->aimed && (s = weights(r, e, n, err)))
			return s;
		if (ppo) {
			double t0 = now_s();
			size_t k;
			if ((s = pick_moves(r, n, &k, err)) || (s = gather(r, e, k, err)))
				return s;
			s = ppo_choose(r, k, n, t > 0, (double)t / o->episode_len, &a, err);
			r->policy_s += now_s() - t0;
			if (s)
				return s;
			a = a == k ? n : r->pick[a]; /* row k is the stop action */
			last = r->roll.n - 1;   /* an update may have emptied the rollout before it */
		} else {
			a = e->env->weight ? weighted_pick(r, n) : st_rng_below(&r->rng, n);
		}
		r->steps++;
		e->res->steps++;
		int stop = a == n;
		if (!stop && (s = er_apply(r, e, a, err)))
			return s;
		int end = stop || t + 1 == o->episode_len || !budget_ok(r);
		if (end || e->cur.n - e->evaluated_len >= o->eval_interval) {
			if ((s = eval_pending(r, e, &reward, &rejected, err)))
				return s;
			if (last != SIZE_MAX)
				r->roll.buf[last].reward += reward;
		}
		progress(r, 0);
		if (stop || rejected)
			break;
	}
	if ((s = eval_pending(r, e, &reward, &rejected, err)))
		return s;
	if (last != SIZE_MAX) {
		r->roll.buf[last].reward += reward;
		r->roll.buf[last].done = 1;
	}
	return ST_OK;
}

/* ---- greedy hill climbing --------------------------------------------------------- */

/* One greedy round: try the next k moves of this state's random order, keep
 * the best if it beats the current state.  A state whose every move was tried
 * without improvement is a local optimum: the environment is done. */
static st_status greedy_iter(run *r, envrun *e, st_error *err)
{
	size_t n = e->env->n_moves(e->env->data);
	if (n == 0) {
		e->converged = 1;
		return ST_OK;
	}
	st_status s;
	if (!e->order_valid || e->order_n != n) {   /* a new state: a fresh order */
		if ((s = grow((void **)&e->order, &e->order_cap, n, sizeof(size_t), err)))
			return s;
		for (size_t i = 0; i < n; i++)
			e->order[i] = i;
		if (e->env->weight) {
			if ((s = weights(r, e, n, err)) ||
			    (s = grow((void **)&e->order_w, &e->order_w_cap, n, sizeof(double), err)))
				return s;
			memcpy(e->order_w, r->w, n * sizeof(double));
		}
		e->order_n = n;
		e->order_next = 0;
		e->order_valid = 1;
	}
	size_t best = SIZE_MAX;
	double best_ratio = e->cur_ratio;
	for (size_t k = 0; k < r->o->greedy_k && e->order_next < n && budget_ok(r); k++) {
		size_t i = e->order_next++, j = i + st_rng_below(&r->rng, n - i);
		if (e->env->weight) { /* aimed: the next move in proportion to the weights left */
			double total = 0, acc = 0, u;
			for (size_t q = i; q < n; q++)
				total += e->order_w[q];
			u = st_rng_uniform(&r->rng) * total;
			for (j = i; j + 1 < n && (acc += e->order_w[j]) <= u; j++)
				;
			double t = e->order_w[j];
			e->order_w[j] = e->order_w[i];
			e->order_w[i] = t;
		}
		size_t m = e->order[j];
		e->order[j] = e->order[i];
		e->order[i] = m;
		if ((s = er_apply(r, e, m, err)))
			return s;
		r->steps++;
		e->res->steps++;
		st_eval ev;
		if ((s = er_eval(r, e, r->o->eval_pairs, ST_EVAL_QUICK, &ev, err)) || (s = note_eval(r, e, &ev, err)))
			return s;
		if (ev.status == ST_OK && ev.ratio > best_ratio) {
			best_ratio = ev.ratio;
			best = m;
		}
		if ((s = er_undo(e, err)))
			return s;
		progress(r, 0);
	}
	if (best != SIZE_MAX) {
		if ((s = er_apply(r, e, best, err)))
			return s;
		e->cur_ratio = best_ratio;
		e->order_valid = 0;
	} else if (e->order_next == n) {
		e->converged = 1;
	}
	return ST_OK;
}

/* Iterated local search: a converged climb restarts from the best state seen, moved
 * by greedy_kick random legal moves, and measured afresh (the best's own number was the
 * maximum of noisy ones).  The kick counts as one step.  A state where no move is legal
 * cannot be kicked: the environment is then stuck, and done for good. */
static st_status greedy_kick(run *r, envrun *e, st_error *err)
{
	st_status s = er_goto(r, e, &e->best, err);
	if (s)
		return s;
	unsigned made = 0;
	for (unsigned i = 0; i < r->o->greedy_kick; i++) {
		size_t n = e->env->n_moves(e->env->data);
		if (n == 0)
			break;
		if ((s = er_apply(r, e, st_rng_below(&r->rng, n), err)))
			return s;
		made++;
	}
	if (!made) {
		e->stuck = 1;
		return ST_OK;
	}
	r->steps++;
	e->res->steps++;
	e->res->restarts++;
	st_eval ev;
	if ((s = er_eval(r, e, r->o->eval_pairs, ST_EVAL_QUICK, &ev, err)) || (s = note_eval(r, e, &ev, err)))
		return s;
	if (ev.status != ST_OK)         /* a rejected kick: the next round kicks again */
		return er_goto(r, e, &e->best, err);
	e->cur_ratio = ev.ratio;
	e->converged = 0;
	e->order_valid = 0;
	progress(r, 0);
	return ST_OK;
}

/* ---- confirmation ------------------------------------------------------------------ */

/* The race's evaluator: go to candidate `cand`'s state and evaluate it. */
typedef struct race_ctx {
	run *r;
	envrun *e;
} race_ctx;

static st_status race_eval(void *ctx, size_t which, unsigned pairs, unsigned kind, st_eval *out, st_error *err)
{
	race_ctx *rc = ctx;
	st_status s = er_goto(rc->r, rc->e, &rc->e->cands[which].moves, err);
	if (!s && !(s = er_eval(rc->r, rc->e, pairs, kind, out, err)))
		rc->e->res->confirms++;
	return s;
}

/* Race the candidates (race.c): the survivor's fresh final batch is the reported estimate. */
static st_status finish(run *r, envrun *e, st_error *err)
{
	st_search_result *res = e->res;
	st_status s;
	res->best = e->best_ev;
	st_race_result rr = {.winner = SIZE_MAX};
	if (r->o->confirm_pairs && e->n_cands) {
		const st_race_opts ro = {.round_pairs = r->o->race_pairs, .final_pairs = r->o->confirm_pairs,
					 .min_lo = r->o->confirm_min};
		race_ctx rc = {r, e};
		if ((s = st_race_run(e->n_cands, race_eval, &rc, &ro, &rr, err)))
			return s;
		res->confirm_pairs_spent = rr.pairs_spent;
		res->race_candidates = (unsigned)e->n_cands;
		res->race_rounds = rr.rounds;
	}
	if (rr.winner == SIZE_MAX) {
		path origin = {0};
		return er_goto(r, e, &origin, err);
	}
	if ((s = er_goto(r, e, &e->cands[rr.winner].moves, err)))
		return s;
	res->accepted = 1;
	res->best = rr.final;
	res->schedule_json = e->cands[rr.winner].json;
	e->cands[rr.winner].json = NULL;
	return ST_OK;
}

/* ---- the entry point ---------------------------------------------------------------- */

static st_status check_env(const st_search_env *env, size_t i, int ppo, st_error *err)
{
	if (!env || !env->n_moves || !env->apply || !env->undo || !env->reset || !env->evaluate ||
	    (ppo && !env->features))
		return st_error_set(err, ST_EINVAL, "environment %zu lacks a callback the search needs "
				    "(n_moves, apply, undo, reset, evaluate%s)", i, ppo ? ", features" : "");
	return ST_OK;
}

static void run_free(run *r)
{
	for (size_t i = 0; r->er && i < r->n_er; i++) {
		envrun *e = &r->er[i];
		path_free(&e->cur);
		path_free(&e->best);
		for (size_t c = 0; c < e->n_cands; c++) {
			path_free(&e->cands[c].moves);
			free(e->cands[c].json);
		}
		free(e->cands);
		free(e->order);
		free(e->fstack);
		free(e->order_w);
	}
	free(r->er);
	free(r->feat);
	free(r->pick);
	if (r->pol)
		st_ppo_learner_free(&r->learn); /* joins a running update */
	free(r->act.theta);
	free(r->z);
	free(r->h);
	st_ppo_batch_free(&r->roll);
	free(r->w);
}

static st_status run_setup(run *r, const st_search_env *const *envs, size_t n_envs, st_policy *policy,
			   st_search_result *results, st_error *err)
{
	const st_search_opts *o = r->o;
	const int ppo = o->method == ST_SEARCH_PPO;
	r->er = calloc(n_envs, sizeof *r->er);
	if (!r->er)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	r->n_er = n_envs;
	for (size_t i = 0; i < n_envs; i++) {
		envrun *e = &r->er[i];
		e->env = envs[i];
		e->res = &results[i];
		r->aimed |= envs[i]->weight != NULL;
		e->best_ev = (st_eval){.status = ST_OK, .ratio = 1, .lo = 1, .hi = 1};
		e->cur_ratio = 1;
		e->cands = calloc(o->confirm_top, sizeof *e->cands);
		if (!e->cands)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		st_status s = er_reset(e, err);
		if (s)
			return s;
	}
	r->best_all = r->er[0].best_ev;
	if (!ppo)
		return ST_OK;
	r->pol = policy;
	r->actp = policy;
	st_status s = st_ppo_learner_init(&r->learn, policy, o, err);
	if (s)
		return s;
	size_t np = policy->n_params, T = o->rollout;
	r->roll.buf = malloc(T * sizeof *r->roll.buf);
	r->roll.cap = T;
	r->h = malloc(2 * policy->hidden * sizeof(double));
	if (o->async) {
		r->act = *policy;
		r->act.theta = malloc(np * sizeof(double));
		r->actp = &r->act;
		if (r->act.theta)
			memcpy(r->act.theta, policy->theta, np * sizeof(double));
	}
	if (!r->roll.buf || !r->h || (o->async && !r->act.theta))
		return st_error_set(err, ST_ENOMEM, "out of memory for PPO");
	return ST_OK;
}

st_status st_search_run(const st_search_env *const *envs, size_t n_envs, st_policy *policy,
			const st_search_opts *opts, st_search_result *results, st_error *err)
{
	if (!envs || !n_envs || !opts || !results)
		return st_error_set(err, ST_EINVAL, "st_search_run needs environments, options and results");
	memset(results, 0, n_envs * sizeof *results);
	st_error_clear(err);
	st_status s = opts_check(opts, err);
	if (s)
		return s;
	const int ppo = opts->method == ST_SEARCH_PPO;
	if (ppo && !policy)
		return st_error_set(err, ST_EINVAL, "the PPO search needs a policy (st_policy_new or st_policy_load)");
	for (size_t i = 0; i < n_envs; i++)
		if ((s = check_env(envs[i], i, ppo, err)))
			return s;
	run r = {.o = opts, .t0 = now_s()};
	st_rng_seed(&r.rng, opts->seed);
	if ((s = run_setup(&r, envs, n_envs, policy, results, err)))
		goto out;
	for (uint64_t round = 0; budget_ok(&r); round++) {
		envrun *e = &r.er[round % n_envs];
		if (opts->method == ST_SEARCH_GREEDY) {
			size_t live = 0;
			for (size_t i = 0; i < n_envs; i++)
				live += opts->greedy_kick ? !r.er[i].stuck : !r.er[i].converged;
			if (!live)
				break;
			if (e->converged && opts->greedy_kick && !e->stuck && (s = greedy_kick(&r, e, err)))
				goto out;
			if (!e->converged && (s = greedy_iter(&r, e, err)))
				goto out;
		} else if ((s = episode(&r, e, ppo, err))) {
			goto out;
		}
	}
	if (ppo && ((s = ppo_join(&r, err)) || (r.roll.n >= opts->minibatch && (s = ppo_update(&r, 0.0, 0, err)))))
		goto out;
	progress(&r, 1);
	for (size_t i = 0; i < n_envs; i++)
		if ((s = finish(&r, &r.er[i], err)))
			goto out;
	double el = now_s() - r.t0;
	for (size_t i = 0; i < n_envs; i++) {
		results[i].seconds = el;
		results[i].eval_seconds = r.eval_s;
		/* PPO's own work: on this thread (waits for the worker included), plus what the worker
		 * did while this thread went on (the overlapped part) */
		double overlapped = r.update_s > r.wait_s ? r.update_s - r.wait_s : 0;
		results[i].policy_seconds = r.policy_s + overlapped;
		results[i].policy_overlapped_seconds = overlapped;
	}
out:
	if (s)
		for (size_t i = 0; i < n_envs; i++) {
			st_search_result_free(&results[i]);
			results[i].accepted = 0;
		}
	run_free(&r);
	return s;
}
