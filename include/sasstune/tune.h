/* sasstune tune: one kernel through sched + search with a reward (the static cost model or the
 * GPU runtime), the confirmation rule, fresh-input verification and the independent checker;
 * training a policy over several kernels; applying a policy with no GPU.  docs/tune.md. */
#ifndef SASSTUNE_TUNE_H
#define SASSTUNE_TUNE_H
#include "sasstune/cubin.h"
#include "sasstune/runtime.h"
#include "sasstune/search.h"
#include <stddef.h>
#include <stdint.h>

/* With the GPU reward a result is kept only if its confirmation interval lies above this
 * (search option confirm_min, when left at 1.0): gains under 0.5 % are not resolved. */
#define ST_TUNE_GPU_CONFIRM_MIN 1.005

/* The method st_tune_opts_init picks (sasstune tune, the pass): the one that won most often at equal
 * GPU time on the H200 bench kernels (docs/tune.md, "The default method"): greedy hill climbing. */
#define ST_TUNE_DEFAULT_METHOD ST_SEARCH_GREEDY

typedef enum st_reward { ST_REWARD_MODEL, ST_REWARD_GPU } st_reward;

typedef struct st_tune_kernel {
	const uint8_t *cubin; size_t size; /* the original cubin (borrowed) */
	const char *name;                  /* for messages, e.g. its path */
	const char *kernel;                /* NULL: the launch spec's, else the only entry kernel */
	const char *listing;               /* its `nvdisasm -hex -c` listing; NULL: run nvdisasm */
	const st_launch *launch;           /* required for the GPU reward; sizes the cost model */
} st_tune_kernel;

#define ST_TUNE_OPTS_VERSION 1
typedef struct st_tune_opts {
	unsigned version;
	st_reward reward;
	st_search_opts search;          /* method, seed, budget, progress; confirm_pairs >= 200 on the GPU */
	unsigned sched_flags;           /* ST_SCHED_WIDE, ST_SCHED_NO_CTRL */
	st_costmodel_opts model;        /* zeros: from the launch spec and the cubin's register count */
	st_runtime_options runtime;     /* the GPU reward's session (warm-up 5 ms by default here) */
	unsigned est_gain;              /* fill move.est_gain from the cost model (default 1) */
	unsigned fresh_sets;            /* input sets of the fresh-session estimate (0: compare's, 2) */
	unsigned hidden;                /* width of a new PPO policy (default ST_POLICY_HIDDEN_DEFAULT) */
	/* Aimed proposals (docs/profile.md): NULL or "off" uniform (the default); "auto" profile the
	 * kernel with CUPTI at the start (GPU reward; at most 5 % of the budget, which it counts);
	 * else a samples file.  aim_strength: the weight of a wait (default 20; 0 = uniform). */
	const char *aim;
	double aim_strength;
	/* With the rename family and a launch spec, renames may raise the register count while the
	 * resident blocks per SM stay (occupancy.h); allow_occupancy_drop lets them fall (default 0). */
	int allow_occupancy_drop;
} st_tune_opts;
void st_tune_opts_init(st_tune_opts *o);

typedef struct st_tune_result {
	char kernel[256];
	int improved;              /* the output cubin differs from the input */
	int confirmed;             /* GPU: passed confirmation, fresh inputs and the checker; model: 0 */
	st_eval best;              /* original / output, 95 % interval (model: lo = hi; GPU: the fresh-session
				      estimate, st_estimate_run, the race's final batch in verification_json) */
	double model_ratio;        /* the cost model's ratio for the output */
	uint64_t steps, evals, rejected, confirms;
	uint64_t restarts;                 /* greedy_kick: restarts from the best state */
	uint64_t confirm_pairs_spent;      /* the racing confirmation's pairs (rounds + final batch) */
	unsigned race_candidates, race_rounds;
	double seconds, steps_per_s;
	double eval_seconds, policy_seconds; /* of seconds: in evaluations (GPU/model), PPO's own work */
	double policy_overlapped_seconds;    /* of policy_seconds: updates on the worker beside the search */
	uint8_t *cubin; size_t cubin_size;   /* the output (malloc'ed): tuned, or a copy of the input */
	char *schedule_json;                 /* the output's moves (docs/cubin.md), malloc'ed */
	char *verification_json;             /* GPU: what was verified, malloc'ed; else NULL */
	char device[128];
	char message[512];                   /* one line: what happened, or why the input was kept */
	char aim[256];                       /* "off", "file", "auto", or "auto: off (why)" */
	double aim_ms;                       /* what getting the profile cost (counted in the budget) */
	double aim_hot_share;                /* the profile's share of waits a schedule can address */
	/* Family 3 (docs/tune.md "The pipe alternatives"): "off", or per form ("form 1: ...; form 2: ...")
	 * what its alternative found, and on the GPU how it timed and whether it was kept ("form N kept":
	 * the output is that rewrite, schedule_json holds "pipe", model_ratio is 0). */
	char pipe[512];
} st_tune_result;
void st_tune_result_free(st_tune_result *r);

/* Search a faster schedule for one kernel.  policy: PPO's (trained online), may be NULL for the
 * baselines; a fresh one is made for PPO when NULL.  ST_EDEVICE when the GPU reward has no GPU. */
st_status st_tune(const st_tune_kernel *k, const st_tune_opts *o, st_policy *policy, st_tune_result *r,
		  st_error *err);
/* Train `policy` over n kernels (round robin, nothing accepted); results[i] reports kernel i. */
st_status st_tune_train(const st_tune_kernel *ks, size_t n, const st_tune_opts *o, st_policy *policy,
			st_tune_result *results, st_error *err);
/* Apply a policy greedily to kernel k->kernel (NULL: every entry kernel) with no GPU, then run
 * the checker; a kernel that fails it is left unchanged (and said so in r->message).  flags:
 * ST_SCHED_* | ST_TUNE_MODEL_GATE (keep only the prefix of the policy's moves the cost model
 * rates best, none if it rates none above the original). */
enum { ST_TUNE_MODEL_GATE = 1 << 8 };
st_status st_tune_apply_policy(const st_tune_kernel *k, const st_policy *p, unsigned max_steps, double margin,
			       unsigned flags, st_tune_result *r, st_error *err);
/* The cost model's settings for kernel `kernel` of a cubin under a launch spec (NULL: guesses). */
void st_tune_model_opts(const st_cubin *c, const char *kernel, const st_launch *launch, st_costmodel_opts *out);
#endif
