/* Internals of the search module shared by its files and its unit tests
 * (not public API). */
#ifndef ST_SEARCH_INT_H
#define ST_SEARCH_INT_H

#include "sasstune/search.h"

#include <stddef.h>
#include <stdint.h>

/* ---- PRNG: xoshiro256** seeded through splitmix64 ------------------------- */
typedef struct st_rng {
	uint64_t s[4];
} st_rng;
void st_rng_seed(st_rng *r, uint64_t seed);
uint64_t st_rng_next(st_rng *r);
double st_rng_uniform(st_rng *r);          /* [0, 1) with 53 bits */
size_t st_rng_below(st_rng *r, size_t n);  /* uniform in [0, n), n > 0, no modulo bias */
double st_rng_normal(st_rng *r);           /* standard normal (Box-Muller, one value per call) */

/* ---- racing confirmation (race.c) ----------------------------------------- */
/* Evaluate candidate `cand` with `pairs` timing pairs; kind is ST_EVAL_RACE or ST_EVAL_FINAL. */
typedef st_status (*st_race_eval_fn)(void *ctx, size_t cand, unsigned pairs, unsigned kind, st_eval *out,
				     st_error *err);
typedef struct st_race_opts {
	unsigned round_pairs;   /* pairs per candidate in the first round; doubles every round */
	unsigned final_pairs;   /* the survivor's fresh final batch (the reported estimate) */
	double min_lo;          /* accept only if the final batch's 95 % low end is above this */
} st_race_opts;
typedef struct st_race_result {
	size_t chosen;          /* the race's survivor (SIZE_MAX: every candidate was rejected) */
	size_t winner;          /* chosen, if its final batch cleared min_lo; else SIZE_MAX */
	st_eval final;          /* the survivor's final batch (have_final) */
	int have_final;
	unsigned rounds;
	uint64_t evals, pairs_spent;
} st_race_result;
/* Successive halving over n candidates, then a fresh final batch for the survivor. */
st_status st_race_run(size_t n, st_race_eval_fn eval, void *ctx, const st_race_opts *o, st_race_result *out,
		      st_error *err);

/* ---- the policy ---------------------------------------------------------- */
/* The value head sees the mean of the legal moves' features plus these. */
#define ST_STATE_EXTRA 2
#define ST_STATE_NFEAT (ST_SEARCH_NFEAT + ST_STATE_EXTRA)
#define ST_POLICY_MAX_HIDDEN 1024
#define ST_POLICY_FORMAT "sasstune-policy"
#define ST_POLICY_VERSION 1

/* Offsets of one two-layer tanh MLP's parameters in the flat vector:
 * out = w3 . tanh(w2 tanh(w1 x + b1) + b2) + b3, w1 is hidden x in (row-major). */
typedef struct st_mlp {
	size_t in;
	size_t w1, b1, w2, b2, w3, b3, end;
} st_mlp;

struct st_policy {
	unsigned hidden;
	uint64_t trained_steps;
	st_mlp actor, critic;   /* actor: move features -> score; critic: state -> value */
	size_t n_params;
	double *theta;
};

/* The forward pass of an MLP; h1 and h2 (hidden doubles each) receive the
 * activations that st_mlp_backward needs. */
double st_mlp_forward(const st_policy *p, const st_mlp *m, const float *x, double *h1, double *h2);
/* Adds d(out)/d(theta) * dout to grad (n_params doubles). */
void st_mlp_backward(const st_policy *p, const st_mlp *m, const float *x, const double *h1,
		     const double *h2, double dout, double *grad);

/* Fills the value head's input from n move feature rows (stop row excluded). */
void st_state_features(const float *moves, size_t n, double step_frac, float out[ST_STATE_NFEAT]);
/* The stop action's feature row. */
void st_stop_features(float out[ST_SEARCH_NFEAT]);

/* ---- PPO ----------------------------------------------------------------- */
/* One recorded decision: n choices whose rows start at feat[feat_off]. */
typedef struct st_ppo_step {
	size_t feat_off, n, action;
	float state[ST_STATE_NFEAT];
	double logp, value, reward, adv, ret;
	int done;
} st_ppo_step;

typedef struct st_ppo_hyper {
	double clip, ent_coef, vf_coef;
	/* NULL, or a logit offset per feature row (row = feat_off / NFEAT + j): the behaviour policy
	 * was softmax(actor + prior), as aimed proposals sample it (log of the move weight) */
	const double *prior;
} st_ppo_hyper;

/* Scratch for the loss (grown as needed). */
typedef struct st_ppo_work {
	double *z, *h;        /* logits, activations: per choice */
	size_t cap;
} st_ppo_work;
void st_ppo_work_free(st_ppo_work *w);

/* The clipped PPO loss, averaged over the steps idx[0..n): policy term with
 * steps[i].adv as given (already normalised), minus ent_coef x entropy, plus
 * vf_coef x 0.5 (V - ret)^2.  Adds its gradient to grad when not NULL. */
st_status st_ppo_loss(const st_policy *p, const float *feat, const st_ppo_step *steps,
		      const size_t *idx, size_t n, const st_ppo_hyper *h, st_ppo_work *w,
		      double *loss, double *grad, st_error *err);

/* Adam with global-norm gradient clipping. */
typedef struct st_adam {
	double *m, *v;
	size_t n;
	uint64_t t;
} st_adam;
st_status st_adam_init(st_adam *a, size_t n);
void st_adam_free(st_adam *a);
void st_adam_step(st_adam *a, double *theta, double *grad, double lr, double max_norm);

/* ---- the PPO learner (learn.c) ---------------------------------------------- */
/* One rollout: the decisions and the feature rows (and, aimed, the logit priors) they chose among. */
typedef struct st_ppo_batch {
	st_ppo_step *buf;
	size_t n, cap;           /* decisions; cap = ppo.rollout */
	float *feat;
	size_t feat_len, feat_cap;
	double *prior;           /* aimed PPO: one per row of feat (feat_cap / NFEAT rows), else unused */
	size_t prior_cap;
} st_ppo_batch;

/* Updates the policy from finished rollouts (GAE, epochs of minibatches, Adam), either in the
 * caller's thread or on a worker thread (ppo.async): st_ppo_learner_start takes the rollout (the
 * caller gets the learner's emptied batch back to fill) and returns at once; the caller acts with
 * its own copy of the weights until st_ppo_learner_join, which it calls at a fixed point of the
 * search (the next decision), never by timing, so a seed gives the same result.  Between start and
 * join only the learner touches the policy, its Adam state and its batch. */
typedef struct st_ppo_learner {
	st_policy *pol;
	const st_search_opts *o;
	st_adam adam;
	double *grad, *adv_raw;
	size_t *idx;
	st_ppo_work work;
	st_ppo_batch batch;      /* the rollout being learned from */
	st_rng rng;              /* async: the minibatch shuffles (seeded from the search's stream at start) */
	double lr, bootstrap, update_s;
	int prior, running;
	void *thread;            /* pthread_t, when running */
	st_status status;
	st_error err;
} st_ppo_learner;
st_status st_ppo_learner_init(st_ppo_learner *l, st_policy *pol, const st_search_opts *o, st_error *err);
void st_ppo_learner_free(st_ppo_learner *l);   /* joins a running update first */
/* The update over *b in this thread (shuffles from rng); empties *b. */
st_status st_ppo_learn(st_ppo_learner *l, st_ppo_batch *b, double lr, double bootstrap, int prior, st_rng *rng,
		       st_error *err);
/* Start the update over *b on a worker; *b and the learner's batch change places. */
st_status st_ppo_learner_start(st_ppo_learner *l, st_ppo_batch *b, double lr, double bootstrap, int prior,
			       uint64_t seed, st_error *err);
/* Wait for the running update (none: returns at once); *update_s += its time on the worker. */
st_status st_ppo_learner_join(st_ppo_learner *l, double *update_s, st_error *err);
void st_ppo_batch_free(st_ppo_batch *b);

/* Masked softmax helper: p[i] = softmax(z)[i]; returns log-sum-exp. */
double st_softmax(const double *z, size_t n, double *p);

#endif
