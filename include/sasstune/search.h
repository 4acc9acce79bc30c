/* sasstune: search.  Finds a faster schedule by walking an environment's legal
 * moves (PPO policy, random walk, greedy hill climbing), and accepts a result
 * only after a racing confirmation: successive halving over the best candidates, then a fresh
 * final batch for the survivor whose 95 % interval must lie above confirm_min.
 * The environment (sched + a cost model or the GPU) is a set of callbacks.
 * Algorithm, feature meanings, settings and the policy file: docs/search.md. */
#ifndef SASSTUNE_SEARCH_H
#define SASSTUNE_SEARCH_H
#include "sasstune/error.h"
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Per-move features, schema ST_SEARCH_SCHEMA.  A = the instruction that moves
 * earlier (swap) or is edited (ctrl), B = the one it swaps with.  Values lie in
 * [-1, 1]; an unknown value is 0.  Changing this list changes the schema name. */
#define ST_SEARCH_SCHEMA "sasstune-features-1"
#define ST_SEARCH_FEATURES(X) \
	X(ST_F_SWAP, "move.swap") X(ST_F_CTRL, "move.ctrl") X(ST_F_STOP, "move.stop") \
	X(ST_F_STALL_DELTA, "move.stall_delta") X(ST_F_YIELD_FLIP, "move.yield_flip") \
	X(ST_F_REVERTS, "move.reverts_last") X(ST_F_EST_GAIN, "move.est_gain") \
	X(ST_F_LOAD_UP, "move.load_up") X(ST_F_SAME_CLASS, "move.same_class") \
	ST_SEARCH_INSN_FEATURES(X, A, "a.") ST_SEARCH_INSN_FEATURES(X, B, "b.") \
	X(ST_F_POS_IN_BLOCK, "pos.in_block") X(ST_F_BLOCK_LEN, "pos.block_len") \
	X(ST_F_IN_LOOP, "pos.in_loop") X(ST_F_LOOP_DEPTH, "pos.loop_depth")
#define ST_SEARCH_INSN_FEATURES(X, I, P) \
	X(ST_F_##I##_ALU, P "class.alu") X(ST_F_##I##_SFU, P "class.sfu") \
	X(ST_F_##I##_MMA, P "class.mma") X(ST_F_##I##_LDG, P "class.ldg") \
	X(ST_F_##I##_STG, P "class.stg") X(ST_F_##I##_LDS, P "class.lds") \
	X(ST_F_##I##_STS, P "class.sts") X(ST_F_##I##_CTRL, P "class.ctrl") \
	X(ST_F_##I##_STALL, P "stall") X(ST_F_##I##_YIELD, P "yield") \
	X(ST_F_##I##_SETS_SB, P "sets_sb") X(ST_F_##I##_WAITS_SB, P "waits_sb") \
	X(ST_F_##I##_VAR_LAT, P "var_lat") X(ST_F_##I##_PROD_DIST, P "prod_dist") \
	X(ST_F_##I##_PROD_SLACK, P "prod_slack") X(ST_F_##I##_CONS_DIST, P "cons_dist") \
	X(ST_F_##I##_MOVED, P "moved")
#define ST_SEARCH_ENUM_(id, name) id,
enum { ST_SEARCH_FEATURES(ST_SEARCH_ENUM_) ST_SEARCH_NFEAT };
const char *st_search_feature_name(size_t i); /* NULL past the end */

/* One evaluation of the environment's current schedule against the original. */
typedef struct st_eval {
	st_status status;   /* ST_OK, or ST_ECRASH / ST_EMISMATCH / ST_ETIMEOUT / ST_EILLEGAL: rejected */
	double ratio;       /* original time / candidate time: > 1 is faster */
	double lo, hi;      /* its 95 % interval (lo == hi == ratio for a deterministic model) */
	unsigned pairs;     /* interleaved timing pairs behind it (0 for a cost model) */
} st_eval;

/* The environment.  Moves are numbered 0..n_moves-1 in the current state and
 * must be numbered the same way every time that state is reached.  undo()
 * reverts the latest apply() not yet undone, back to the last reset(). */
typedef struct st_search_env {
	void *data;
	const char *name;                                         /* for messages; may be NULL */
	size_t (*n_moves)(void *data);
	st_status (*features)(void *data, size_t move, float out[ST_SEARCH_NFEAT], st_error *err);
	st_status (*apply)(void *data, size_t move, st_error *err);
	st_status (*undo)(void *data, st_error *err);
	st_status (*reset)(void *data, st_error *err);            /* back to the original schedule */
	st_status (*evaluate)(void *data, unsigned pairs, st_eval *out, st_error *err);
	st_status (*schedule_json)(void *data, char **out, st_error *err); /* malloc'ed; may be NULL */
	/* Optional: the proposal weight (> 0, finite) of a move in the current state; NULL: uniform.
	 * Random walks sample moves in proportion, greedy tries them in a weighted random order,
	 * PPO adds log(weight) to the policy's logits (aimed proposals, st_aim below). */
	double (*weight)(void *data, size_t move);
} st_search_env;

typedef enum st_search_method { ST_SEARCH_PPO, ST_SEARCH_RANDOM, ST_SEARCH_GREEDY } st_search_method;
const char *st_search_method_name(st_search_method m); /* "ppo", "random", "greedy"; NULL if unknown */

/* Every evaluation, as it happens (opts.on_eval): the kind, the result, and the candidate's
 * descriptor = the sum of the feature rows of the moves applied since the original (each row as
 * the move saw its state), NULL when the environment has no features callback. */
enum { ST_EVAL_QUICK, ST_EVAL_START, ST_EVAL_RACE, ST_EVAL_FINAL };
typedef struct st_search_eval_note {
	size_t env;                 /* index into envs */
	unsigned kind;              /* ST_EVAL_* */
	st_eval ev;
	size_t n_moves;             /* moves since the original */
	const float *feat_sum;      /* ST_SEARCH_NFEAT floats, or NULL */
	double model_ratio;         /* filled by the tune module (the cost model's ratio), else 0 */
} st_search_eval_note;

typedef struct st_search_progress {
	uint64_t steps, evals, rejected;
	double steps_per_s, seconds_left;  /* seconds_left < 0: no time budget */
	st_eval best;                      /* best quick evaluation so far (ratio 1 = the original) */
} st_search_progress;

#define ST_SEARCH_OPTS_VERSION 1
typedef struct st_search_opts {
	unsigned version;
	st_search_method method;
	uint64_t seed, steps;               /* steps: budget of moves (0 = none) */
	double seconds;                     /* budget of wall-clock seconds (0 = none) */
	unsigned episode_len, eval_interval, eval_pairs, confirm_pairs, confirm_top, greedy_k;
	double start_best, reward_scale, crash_penalty;
	double confirm_min;                 /* accept only if the confirmation's 95 % low end > this */
	unsigned rollout, epochs, minibatch, anneal;                   /* PPO */
	double lr, gamma, lambda, clip, ent_coef, vf_coef, max_grad_norm;
	unsigned progress_every;
	int (*progress)(const st_search_progress *p, void *data);      /* nonzero: stop early */
	void *progress_data;
	unsigned race_pairs;                /* pairs a candidate gets in the race's first round */
	unsigned choices;                   /* PPO: moves scored per decision, a uniform sample (0 = all) */
	unsigned async;                     /* PPO: 1 = updates on a worker thread, joined at the next decision */
	void (*on_eval)(const st_search_eval_note *n, void *data);    /* may be NULL */
	void *on_eval_data;
	unsigned greedy_kick;               /* greedy: random moves of a restart from the best state once
					     * a local optimum is reached (0 = stop there) */
} st_search_opts;
void st_search_opts_init(st_search_opts *o);
/* Set one option by its docs/search.md name ("ppo.lr", "method", ...). */
st_status st_search_opts_set(st_search_opts *o, const char *name, const char *value, st_error *err);

typedef struct st_search_result {
	int accepted;           /* 1: env left at a confirmed faster schedule; 0: env reset to the original */
	st_eval best;           /* the accepted confirmation, else the best quick evaluation */
	uint64_t steps, evals, rejected, confirms;
	uint64_t confirm_pairs_spent;   /* pairs of the race and the final batch */
	unsigned race_candidates, race_rounds;
	double seconds;
	double eval_seconds;    /* of seconds, inside the environment's evaluate (the GPU's share) */
	double policy_seconds;  /* PPO's own work: features, forward passes, updates (on any thread) */
	double policy_overlapped_seconds; /* of policy_seconds, on the worker while the search went on */
	char *schedule_json;    /* the accepted schedule (when env has schedule_json), else NULL */
	uint64_t restarts;      /* greedy: kicks from the best state after a local optimum */
} st_search_result;
void st_search_result_free(st_search_result *r);

typedef struct st_policy st_policy;   /* shared-weight move scorer + value head */
#define ST_POLICY_HIDDEN_DEFAULT 16 /* 64 until issue 16: 4x the cost a step, no measured gain */
st_status st_policy_new(unsigned hidden, uint64_t seed, st_policy **out, st_error *err);
void st_policy_free(st_policy *p);
st_status st_policy_load(const char *path, st_policy **out, st_error *err);
st_status st_policy_from_json(const char *text, size_t len, st_policy **out, st_error *err);
st_status st_policy_save(const st_policy *p, const char *path, st_error *err);
st_status st_policy_to_json(const st_policy *p, char **out, st_error *err);
/* Take the policy's best move while its score beats the stop action's by
 * `margin`, at most max_steps times; no evaluation. */
st_status st_policy_apply(const st_policy *p, const st_search_env *env, unsigned max_steps,
			  double margin, unsigned *applied, st_error *err);

/* Search each environment (results[i] for envs[i]); PPO trains `policy` (required
 * for PPO, unused otherwise) across all of them, which is how `train` works.
 * On failure nothing is accepted and the environments' states are unspecified. */
st_status st_search_run(const st_search_env *const *envs, size_t n_envs, st_policy *policy,
			const st_search_opts *opts, st_search_result *results, st_error *err);

/* Static cost model (costmodel.c, docs/tune.md): issue timing of a st_sched state on one SM
 * sub-partition.  Options 0 = defaults.  evaluate has st_sched_eval_fn's shape (ctx = the model):
 * ratio = cycles(original) / cycles(now), lo = hi = ratio.  wrap_env fills move.est_gain. */
typedef struct st_sched st_sched;
typedef struct st_costmodel st_costmodel;
typedef struct st_costmodel_opts { unsigned warps, cta_warps, trip_count, yield_cycles, switch_cycles; } st_costmodel_opts;
st_status st_costmodel_new(const st_sched *s, const st_costmodel_opts *o, st_costmodel **out, st_error *err);
void st_costmodel_free(st_costmodel *m);
double st_costmodel_cycles(st_costmodel *m, const st_sched *s); /* weighted cycles of the state now */
double st_costmodel_ratio(st_costmodel *m, const st_sched *s);  /* cycles(original) / cycles(now) */
st_status st_costmodel_evaluate(void *model, const st_sched *s, unsigned pairs, st_eval *out, st_error *err);
st_status st_costmodel_wrap_env(st_search_env *inner, st_sched *s, st_costmodel *m, st_search_env **out,
				st_error *err); /* inner and m are borrowed; free with st_costmodel_env_free */
void st_costmodel_env_free(st_search_env *env);

/* Aimed proposals (aim.c, docs/profile.md): move weights from a stall profile of the kernel
 * (profile.h); strength 0 is uniform.  wrap_env borrows inner, s and a (free with st_aim_env_free). */
typedef struct st_aim st_aim;
struct st_profile;
st_status st_aim_new(const st_sched *s, const struct st_profile *p, double strength, st_aim **out, st_error *err);
void st_aim_free(st_aim *a);
double st_aim_heat(const st_aim *a, size_t index);          /* waiting share at original insn index */
double st_aim_producer_heat(const st_aim *a, size_t index); /* heat of what index's results feed */
double st_aim_hot_share(const st_aim *a);                   /* the kernel's waiting share, 0..1 */
double st_aim_weight(const st_aim *a, const st_sched *s, size_t move); /* >= 1 */
st_status st_aim_wrap_env(st_search_env *inner, const st_sched *s, const st_aim *a, st_search_env **out,
			  st_error *err);
void st_aim_env_free(st_search_env *env);

#ifdef __cplusplus
}
#endif
#endif
