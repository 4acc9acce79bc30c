/* The PPO learner: GAE over a finished rollout, then epochs of shuffled minibatches of the clipped
 * loss (ppo.c) and Adam steps, in the caller's thread or overlapped on a worker thread.
 *
 * Asynchronous updates (ppo.async = 1, docs/search.md): when a rollout is full the search hands it
 * over (st_ppo_learner_start) and goes on acting with a copy of the weights from before the update;
 * it joins at its next decision, whatever the clock says, and copies the new weights.  So the one
 * decision made while the update runs is made with weights one update old (its recorded
 * log-probability is that of the weights it used, which PPO's ratio expects of a behaviour policy),
 * and the update overlaps that step's move and evaluation (the GPU's timing on the GPU reward).
 * The shuffles use their own stream, seeded from the search's at start: a seed gives one result. */
#include "search/search_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void st_ppo_batch_free(st_ppo_batch *b)
{
	free(b->buf);
	free(b->feat);
	free(b->prior);
	memset(b, 0, sizeof *b);
}

st_status st_ppo_learner_init(st_ppo_learner *l, st_policy *pol, const st_search_opts *o, st_error *err)
{
	memset(l, 0, sizeof *l);
	l->pol = pol;
	l->o = o;
	size_t np = pol->n_params, T = o->rollout;
	l->grad = malloc(np * sizeof(double));
	l->adv_raw = malloc(T * sizeof(double));
	l->idx = malloc(T * sizeof *l->idx);
	l->batch.buf = malloc(T * sizeof *l->batch.buf);
	l->batch.cap = T;
	if (!l->grad || !l->adv_raw || !l->idx || !l->batch.buf || st_adam_init(&l->adam, np))
		return st_error_set(err, ST_ENOMEM, "out of memory for PPO");
	return ST_OK;
}

void st_ppo_learner_free(st_ppo_learner *l)
{
	double t = 0;
	st_ppo_learner_join(l, &t, NULL);
	st_adam_free(&l->adam);
	free(l->grad);
	free(l->adv_raw);
	free(l->idx);
	st_ppo_work_free(&l->work);
	st_ppo_batch_free(&l->batch);
	memset(l, 0, sizeof *l);
}

/* Advantages (GAE, episode ends terminal) into adv_raw, returns into the steps. */
static void gae(st_ppo_learner *l, st_ppo_batch *b, double bootstrap)
{
	const st_search_opts *o = l->o;
	st_ppo_step *s = b->buf;
	double g = 0;
	for (size_t k = b->n; k-- > 0;) {
		double next = k + 1 < b->n ? s[k + 1].value : bootstrap;
		double nonterm = s[k].done ? 0.0 : 1.0;
		double delta = s[k].reward + o->gamma * next * nonterm - s[k].value;
		g = delta + o->gamma * o->lambda * nonterm * g;
		l->adv_raw[k] = g;
		s[k].ret = g + s[k].value;
	}
}

/* Per-minibatch advantage normalisation into the steps of mb[0..m). */
static void normalise(st_ppo_learner *l, st_ppo_step *s, const size_t *mb, size_t m)
{
	double mean = 0, var = 0;
	for (size_t k = 0; k < m; k++)
		mean += l->adv_raw[mb[k]];
	mean /= (double)m;
	for (size_t k = 0; k < m; k++)
		var += (l->adv_raw[mb[k]] - mean) * (l->adv_raw[mb[k]] - mean);
	double sd = m > 1 ? sqrt(var / (double)(m - 1)) : 0;
	for (size_t k = 0; k < m; k++)
		s[mb[k]].adv = (l->adv_raw[mb[k]] - mean) / (sd + 1e-8);
}

st_status st_ppo_learn(st_ppo_learner *l, st_ppo_batch *b, double lr, double bootstrap, int prior, st_rng *rng,
		       st_error *err)
{
	const st_search_opts *o = l->o;
	const size_t T = b->n;
	gae(l, b, bootstrap);
	const st_ppo_hyper hp = {.clip = o->clip, .ent_coef = o->ent_coef, .vf_coef = o->vf_coef,
				 .prior = prior ? b->prior : NULL};
	for (size_t k = 0; k < T; k++)
		l->idx[k] = k;
	for (unsigned ep = 0; ep < o->epochs; ep++) {
		for (size_t k = T; k > 1; k--) {
			size_t j = st_rng_below(rng, k), t = l->idx[k - 1];
			l->idx[k - 1] = l->idx[j];
			l->idx[j] = t;
		}
		for (size_t at = 0; at < T; at += o->minibatch) {
			size_t m = T - at < o->minibatch ? T - at : o->minibatch;
			normalise(l, b->buf, l->idx + at, m);
			memset(l->grad, 0, l->pol->n_params * sizeof(double));
			double loss;
			st_status s = st_ppo_loss(l->pol, b->feat, b->buf, l->idx + at, m, &hp, &l->work, &loss,
						  l->grad, err);
			if (s)
				return s;
			st_adam_step(&l->adam, l->pol->theta, l->grad, lr, o->max_grad_norm);
		}
	}
	l->pol->trained_steps += T;
	b->n = 0;
	b->feat_len = 0;
	return ST_OK;
}

static void *worker(void *arg)
{
	st_ppo_learner *l = arg;
	double t0 = now_s();
	l->status = st_ppo_learn(l, &l->batch, l->lr, l->bootstrap, l->prior, &l->rng, &l->err);
	l->update_s = now_s() - t0;
	return NULL;
}

st_status st_ppo_learner_start(st_ppo_learner *l, st_ppo_batch *b, double lr, double bootstrap, int prior,
			       uint64_t seed, st_error *err)
{
	if (l->running)
		return st_error_set(err, ST_EINVAL, "PPO: an update is already running");
	st_ppo_batch t = l->batch;   /* the rollout goes to the learner, its emptied batch comes back */
	l->batch = *b;
	*b = t;
	b->n = 0;
	b->feat_len = 0;
	l->lr = lr;
	l->bootstrap = bootstrap;
	l->prior = prior;
	st_rng_seed(&l->rng, seed);
	l->status = ST_OK;
	st_error_clear(&l->err);
	pthread_t *th = malloc(sizeof *th);
	if (!th)
		return st_error_set(err, ST_ENOMEM, "out of memory for the PPO worker");
	if (pthread_create(th, NULL, worker, l)) { /* no thread: learn here, same result */
		free(th);
		double t0 = now_s();
		l->status = st_ppo_learn(l, &l->batch, lr, bootstrap, prior, &l->rng, &l->err);
		l->update_s = now_s() - t0;
		l->thread = NULL;
	} else {
		l->thread = th;
	}
	l->running = 1;
	return ST_OK;
}

st_status st_ppo_learner_join(st_ppo_learner *l, double *update_s, st_error *err)
{
	if (!l->running)
		return ST_OK;
	if (l->thread) {
		pthread_join(*(pthread_t *)l->thread, NULL);
		free(l->thread);
		l->thread = NULL;
	}
	l->running = 0;
	*update_s += l->update_s;
	if (l->status && err)
		*err = l->err;
	return l->status;
}
