/* sasstune tune: glue from a cubin to a searched, confirmed, checked schedule.
 *
 *   cubin --sass--> kernel --sched--> state --env (+ cost model est_gain)--> st_search_run
 *                                       ^ evaluate: the cost model, or the GPU (verify, then time)
 *   accepted state --> tuned cubin --> independent checker --> [GPU: the fresh-session estimate:
 *   fresh inputs, a new worker, st_estimate_run as `sasstune compare`; reported and gated]
 *
 * Nothing here is global; every call owns what it opens.  docs/tune.md. */
#include "sasstune/tune.h"
#include "tune_aim.h"
#include "tune_internal.h"
#include "tune_pipe.h"
#include "tune_regs.h"
#include "sasstune/sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SM_COUNT_H200 132 /* SMs that share the grid (H100/H200 SXM) */

void st_tune_opts_init(st_tune_opts *o)
{
	memset(o, 0, sizeof *o);
	o->version = ST_TUNE_OPTS_VERSION;
	o->reward = ST_REWARD_MODEL;
	st_search_opts_init(&o->search);
	o->search.method = ST_TUNE_DEFAULT_METHOD; /* measured: docs/tune.md, "The default method" */
	st_runtime_options_init(&o->runtime);
	o->runtime.warmup_ms = 5; /* search-like: the GPU is kept busy between evaluations */
	o->est_gain = 1;
	o->hidden = ST_POLICY_HIDDEN_DEFAULT;
	o->aim_strength = 20;
	o->sched_flags = ST_SCHED_DEFAULT_FAMILIES; /* docs/sched.md, "Move families" */
}

void st_tune_result_free(st_tune_result *r)
{
	if (!r)
		return;
	free(r->cubin);
	free(r->schedule_json);
	free(r->verification_json);
	r->cubin = NULL;
	r->schedule_json = r->verification_json = NULL;
}

/* ---- the cost model's view of the launch ----------------------------------------------------- */
static unsigned reg_count(const st_cubin *c, size_t kidx)
{
	const st_kernel_info *ki = st_cubin_kernel(c, kidx);
	for (size_t i = 0; ki && i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->attr != 0x2f || r->size < 8) /* EIATTR_REGCOUNT: symbol, registers */
			continue;
		uint32_t sym, regs;
		memcpy(&sym, r->payload, 4);
		memcpy(&regs, r->payload + 4, 4);
		if (sym == ki->symbol)
			return regs;
	}
	return 0;
}

void st_tune_model_opts(const st_cubin *c, const char *kernel, const st_launch *launch, st_costmodel_opts *out)
{
	memset(out, 0, sizeof *out);
	out->warps = 2;
	out->cta_warps = 1;
	if (!launch)
		return;
	unsigned grid[3], block[3], shared;
	st_launch_dims(launch, grid, block, &shared);
	unsigned long threads = (unsigned long)block[0] * block[1] * block[2];
	unsigned long ctas = (unsigned long)grid[0] * grid[1] * grid[2];
	unsigned warps_cta = (unsigned)((threads + 31) / 32);
	if (!warps_cta)
		return;
	size_t kidx = c && kernel ? st_cubin_find_kernel(c, kernel) : ST_CUBIN_NONE;
	unsigned regs = kidx != ST_CUBIN_NONE ? reg_count(c, kidx) : 0;
	unsigned long per_sm = 32;                              /* resident CTAs per SM */
	if (2048 / (warps_cta * 32) < per_sm)
		per_sm = 2048 / (warps_cta * 32);
	if (regs) {
		unsigned long per_warp = ((unsigned long)regs * 32 + 255) / 256 * 256;
		unsigned long lim = 65536 / (per_warp * warps_cta);
		if (lim < per_sm)
			per_sm = lim;
	}
	if (shared && 233472 / (shared + 1024) < per_sm)       /* 228 KiB per SM, 1 KiB reserved a CTA */
		per_sm = 233472 / (shared + 1024);
	unsigned long wave = (ctas + SM_COUNT_H200 - 1) / SM_COUNT_H200;
	if (wave < per_sm)
		per_sm = wave;
	if (!per_sm)
		per_sm = 1;
	unsigned cta_warps = (warps_cta + 3) / 4;               /* a CTA's warps on one SMSP */
	unsigned long w = per_sm * cta_warps;
	out->warps = (unsigned)(w > 8 ? 8 : w); /* more behave alike in the model, and cost time */
	out->cta_warps = cta_warps > out->warps ? out->warps : cta_warps;
}

/* ---- the GPU reward ------------------------------------------------------------------------------ */
typedef struct gpu_ctx {
	st_session *sess;
	const st_cubin *orig;
	size_t kidx;
	uint64_t *vkey;   /* verification verdicts by cubin hash (open addressing) */
	int8_t *vval;
	size_t vcap, vn;
	unsigned device_errors; /* in a row */
	uint64_t verified, rejected;
} gpu_ctx;

static uint64_t fnv64(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h | 1;
}

static st_status materialise(const st_cubin *orig, size_t kidx, const st_sched *s, st_cubin **out, st_error *err)
{
	size_t size;
	const uint8_t *d = st_cubin_data(orig, &size);
	*out = NULL;
	st_status rc = st_cubin_open_mem(d, size, st_cubin_name(orig), out, err);
	if (!rc && (rc = st_sched_to_cubin(s, *out, kidx, err))) {
		st_cubin_free(*out);
		*out = NULL;
	}
	return rc;
}

static int8_t *verdict_slot(gpu_ctx *g, uint64_t h, int *found)
{
	if (g->vn * 10 >= g->vcap * 7) {
		memset(g->vkey, 0, g->vcap * sizeof *g->vkey);
		g->vn = 0;
	}
	size_t i = h & (g->vcap - 1);
	while (g->vkey[i] && g->vkey[i] != h)
		i = (i + 1) & (g->vcap - 1);
	*found = g->vkey[i] == h;
	if (!*found) {
		g->vkey[i] = h;
		g->vn++;
	}
	return &g->vval[i];
}

static st_status gpu_evaluate(void *ctx, const st_sched *s, unsigned pairs, st_eval *out, st_error *err)
{
	gpu_ctx *g = ctx;
	memset(out, 0, sizeof *out);
	st_cubin *c;
	st_status rc = materialise(g->orig, g->kidx, s, &c, err);
	if (rc)
		return rc;
	size_t size;
	const uint8_t *bytes = st_cubin_data(c, &size);
	int found;
	int8_t *v = verdict_slot(g, fnv64(bytes, size), &found);
	st_error e2 = {0};
	if (!found) {
		st_status vr = st_session_verify(g->sess, bytes, size, &e2);
		if (vr == ST_EDEVICE && ++g->device_errors >= 3) {
			st_cubin_free(c);
			return st_error_set(err, ST_EDEVICE, "the GPU failed three candidates in a row: %s", e2.msg);
		}
		if (vr != ST_OK && vr != ST_EMISMATCH && vr != ST_ECRASH && vr != ST_ETIMEOUT && vr != ST_EDEVICE) {
			st_cubin_free(c); /* the machinery, not the candidate */
			return st_error_set(err, vr, "verifying a candidate: %s", e2.msg);
		}
		if (vr != ST_EDEVICE)
			g->device_errors = 0;
		*v = (int8_t)(vr == ST_OK ? 0 : vr == ST_EMISMATCH ? 1 : vr == ST_ETIMEOUT ? 2 : 3);
		if (vr == ST_OK)
			g->verified++;
		else
			g->rejected++;
	}
	static const st_status verdicts[] = {ST_OK, ST_EMISMATCH, ST_ETIMEOUT, ST_ECRASH};
	out->status = verdicts[*v];
	if (out->status == ST_OK) {
		st_timing t;
		st_status tr = st_session_compare(g->sess, NULL, 0, bytes, size, pairs, &t, &e2);
		if (tr == ST_ECRASH || tr == ST_ETIMEOUT) {
			out->status = tr;
			*v = tr == ST_ETIMEOUT ? 2 : 3;
		} else if (tr) {
			st_cubin_free(c);
			return st_error_set(err, tr, "timing a candidate: %s", e2.msg);
		} else if (t.ratio > 0 && t.ci_lo > 0 && t.ci_hi > 0) {
			st_tune_timing_eval(&t, out);
		} else {
			out->status = ST_ECRASH;
		}
	}
	st_cubin_free(c);
	return ST_OK;
}

/* ---- one kernel, opened ------------------------------------------------------------------------- */
typedef struct tjob {
	st_cubin *cubin;
	size_t kidx;
	st_tune_regs rg; /* the register-count raise (tune_regs.c) */
	const char *kname;
	st_sass_opts so;
	st_sass_kernel *sk;
	st_sched *s;
	st_costmodel *m;
	st_search_env *senv, *wenv;
	gpu_ctx g;
} tjob;

static const st_search_env *job_env(const tjob *j) { return j->wenv ? j->wenv : j->senv; }

static void job_close(tjob *j)
{
	if (j->wenv)
		st_costmodel_env_free(j->wenv);
	if (j->senv)
		st_sched_env_free(j->senv);
	st_costmodel_free(j->m);
	st_sched_free(j->s);
	st_sass_free(j->sk);
	st_session_close(j->g.sess);
	free(j->g.vkey);
	free(j->g.vval);
	st_cubin_free(j->cubin);
	memset(j, 0, sizeof *j);
}

/* The kernel to tune: k->kernel, else the launch spec's, else the only entry kernel. */
static st_status pick_kernel(const st_tune_kernel *k, const st_cubin *c, const char **out, st_error *err)
{
	const char *want = k->kernel ? k->kernel : k->launch ? st_launch_kernel(k->launch) : NULL;
	if (want) {
		if (st_cubin_find_kernel(c, want) == ST_CUBIN_NONE)
			return st_error_set(err, ST_ENOTFOUND, "%s: no kernel named '%s'", k->name, want);
		*out = st_cubin_kernel(c, st_cubin_find_kernel(c, want))->name;
		return ST_OK;
	}
	const char *found = NULL;
	for (size_t i = 0; i < st_cubin_kernel_count(c); i++)
		if (st_cubin_kernel(c, i)->entry) {
			if (found)
				return st_error_set(err, ST_EINVAL, "%s has several entry kernels ('%s', '%s', ...): pick one",
						    k->name, found, st_cubin_kernel(c, i)->name);
			found = st_cubin_kernel(c, i)->name;
		}
	if (!found)
		return st_error_set(err, ST_ENOTFOUND, "%s has no entry kernel", k->name);
	*out = found;
	return ST_OK;
}

static st_status job_open(tjob *j, const st_tune_kernel *k, const char *kname, const st_tune_opts *o, int gpu,
			  st_error *err)
{
	memset(j, 0, sizeof *j);
	if (!k || (!k->cubin && k->size))
		return st_error_set(err, ST_EINVAL, "st_tune: no cubin bytes");
	const char *name = k->name ? k->name : "cubin";
	/* an empty cubin is refused by the reader, which names the truncation like every command */
	st_status rc = st_cubin_open_mem(k->cubin ? k->cubin : (const uint8_t *)"", k->size, name, &j->cubin, err);
	st_tune_kernel kk = *k;
	kk.name = name;
	if (!rc && !kname)
		rc = pick_kernel(&kk, j->cubin, &kname, err);
	if (rc)
		goto fail;
	j->kname = kname;
	j->kidx = st_cubin_find_kernel(j->cubin, kname);
	if (j->kidx == ST_CUBIN_NONE) {
		rc = st_error_set(err, ST_ENOTFOUND, "%s: no kernel named '%s'", name, kname);
		goto fail;
	}
	j->so.listing = k->listing;
	st_costmodel_opts mo = o->model;
	if (!mo.warps || !mo.cta_warps) {
		st_costmodel_opts guess;
		st_tune_model_opts(j->cubin, kname, k->launch, &guess);
		if (!mo.warps)
			mo.warps = guess.warps;
		if (!mo.cta_warps)
			mo.cta_warps = guess.cta_warps;
	}
	if (gpu) { /* the GPU first: without one, say so before anything else can fail */
		if (!k->launch) {
			rc = st_error_set(err, ST_EINVAL, "the GPU reward needs a launch spec (--launch)");
			goto fail;
		}
		j->g.orig = j->cubin;
		j->g.kidx = j->kidx;
		j->g.vcap = 1u << 12;
		j->g.vkey = calloc(j->g.vcap, sizeof *j->g.vkey);
		j->g.vval = calloc(j->g.vcap, sizeof *j->g.vval);
		if (!j->g.vkey || !j->g.vval) {
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
			goto fail;
		}
		if ((rc = st_session_open(k->cubin, k->size, k->launch, &o->runtime, &j->g.sess, err)))
			goto fail;
	}
	if ((rc = st_sass_decode(j->cubin, kname, &j->so, &j->sk, err)) ||
	    (rc = st_sched_new(j->sk, j->cubin, o->sched_flags, &j->s, err)) ||
	    (rc = st_tune_regs_setup(&j->rg, j->s, j->cubin, j->kidx, k->launch, o->allow_occupancy_drop, err)) ||
	    (rc = st_costmodel_new(j->s, &mo, &j->m, err)))
		goto fail;
	if (gpu) {
		rc = st_sched_env_new(j->s, gpu_evaluate, &j->g, &j->senv, err);
	} else {
		rc = st_sched_env_new(j->s, st_costmodel_evaluate, j->m, &j->senv, err);
	}
	if (!rc && o->est_gain)
		rc = st_costmodel_wrap_env(j->senv, j->s, j->m, &j->wenv, err);
	if (rc)
		goto fail;
	return ST_OK;
fail:
	job_close(j);
	return rc;
}

st_status st_tune_nvdisasm_accepts(const st_cubin *t, const st_sass_opts *so, char *why, size_t n, st_error *err)
{
	st_sass_opts no = *so;
	no.listing = NULL; /* the listing given is the input's */
	char *text = NULL;
	size_t tlen = 0;
	st_error de = {0};
	st_status dr = st_sass_listing(t, &no, NULL, &text, &tlen, &de);
	free(text);
	why[0] = 0;
	if (dr == ST_ENOMEM)
		return st_error_set(err, dr, "%s", de.msg);
	if (dr && dr != ST_ENOTFOUND) /* skipped only where no nvdisasm can be found */
		snprintf(why, n, "%s", de.msg);
	return ST_OK;
}

/* The state's cubin, schedule and checker verdict into r (r->cubin stays the input on failure). */
static st_status job_output(tjob *j, const st_tune_kernel *k, st_tune_result *r, int *checked_ok, st_error *err)
{
	*checked_ok = 0;
	st_cubin *c = NULL;
	st_schedule *sch = NULL;
	st_status rc = materialise(j->cubin, j->kidx, j->s, &c, err);
	if (!rc)
		rc = st_schedule_new(&sch, err);
	if (!rc)
		rc = st_sched_to_schedule(j->s, sch, err);
	char *json = rc ? NULL : st_schedule_to_json(sch);
	if (!rc && !json)
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
	if (rc)
		goto done;
	size_t violations = 0;
	st_error ce = {0};
	st_status cr = st_sass_count(j->sk) && st_sched_depth(j->s)
			       ? st_check_kernel(j->cubin, c, j->kname, &j->so, NULL, NULL, &violations, &ce)
			       : ST_OK;
	if (!cr && st_sched_depth(j->s)) /* a raised register count keeps the occupancy rule */
		cr = st_tune_regs_check(&j->rg, j->cubin, c, j->kname, &violations, &ce);
	if (cr == ST_EILLEGAL) {
		snprintf(r->message, sizeof r->message,
			 "the independent checker found %zu violation%s in the tuned schedule (%.200s); input kept",
			 violations, violations == 1 ? "" : "s", ce.msg);
		free(json);
		goto done;
	}
	if (cr) {
		rc = st_error_set(err, cr, "checking the tuned kernel: %s", ce.msg);
		free(json);
		goto done;
	}
	char why[320] = "";
	if (st_sched_depth(j->s) && (rc = st_tune_nvdisasm_accepts(c, &j->so, why, sizeof why, err))) {
		free(json);
		goto done;
	}
	if (why[0]) {
		snprintf(r->message, sizeof r->message, "nvdisasm does not accept the tuned cubin (%.300s); input kept", why);
		free(json);
		goto done;
	}
	size_t size;
	const uint8_t *d = st_cubin_data(c, &size);
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy) {
		free(json);
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto done;
	}
	memcpy(copy, d, size);
	free(r->cubin);
	free(r->schedule_json);
	r->cubin = copy;
	r->cubin_size = size;
	r->schedule_json = json;
	r->improved = size != k->size || memcmp(copy, k->cubin, size) != 0;
	*checked_ok = 1;
done:
	st_schedule_free(sch);
	st_cubin_free(c);
	return rc;
}

static st_status copy_input(const st_tune_kernel *k, const char *kname, st_tune_result *r, st_error *err)
{
	free(r->cubin);
	free(r->schedule_json);
	r->cubin = malloc(k->size ? k->size : 1);
	r->schedule_json = malloc(64);
	if (!r->cubin || !r->schedule_json)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	memcpy(r->cubin, k->cubin, k->size);
	r->cubin_size = k->size;
	snprintf(r->schedule_json, 64, "{\"sasstune_schedule\": 1, \"kernels\": {}}");
	r->improved = 0;
	(void)kname;
	return ST_OK;
}

/* ---- tune ---------------------------------------------------------------------------------------- */
typedef struct note_ctx {
	tjob *j;
	void (*user)(const st_search_eval_note *n, void *data);
	void *user_data;
} note_ctx;

/* on_eval runs right after the evaluation, with the environment at the evaluated state. */
static void tune_note(const st_search_eval_note *n, void *data)
{
	note_ctx *c = data;
	st_search_eval_note m = *n;
	m.model_ratio = st_costmodel_ratio(c->j->m, c->j->s);
	c->user(&m, c->user_data);
}

static void result_counts(st_tune_result *r, const st_search_result *sr)
{
	r->steps = sr->steps;
	r->evals = sr->evals;
	r->rejected = sr->rejected;
	r->confirms = sr->confirms;
	r->restarts = sr->restarts;
	r->confirm_pairs_spent = sr->confirm_pairs_spent;
	r->race_candidates = sr->race_candidates;
	r->race_rounds = sr->race_rounds;
	r->seconds = sr->seconds;
	r->eval_seconds = sr->eval_seconds;
	r->policy_seconds = sr->policy_seconds;
	r->policy_overlapped_seconds = sr->policy_overlapped_seconds;
	r->steps_per_s = sr->seconds > 0 ? (double)sr->steps / sr->seconds : 0;
	r->best = sr->best;
}

/* The final estimate: a candidate (the race's survivor, or the pipe alternative) against the
 * original in a session opened anew (fresh inputs, both modules loaded fresh, samples of >=
 * ST_ESTIMATE_SAMPLE_US): the measurement `sasstune compare` makes (st_estimate_run), so that
 * the two agree. */
st_status st_tune_fresh_estimate(const st_tune_kernel *k, const st_tune_opts *o, unsigned pairs, const uint8_t *b,
				 size_t b_size, st_estimate *e, st_error *err)
{
	st_runtime_options ro = o->runtime, def;
	st_runtime_options_init(&def);
	ro.seed = o->runtime.seed * 0x9e3779b97f4a7c15ull + 0x5eed;
	/* compare's session shape: how many input sets a session holds moves the timed buffers, and
	 * that moved layernorm's ratio by ~0.2 % on the H200 (docs/runtime.md "Estimates"); the seed
	 * did not.  So the sets and the warm-up are compare's defaults, only the inputs are fresh. */
	ro.verify_sets = o->fresh_sets ? o->fresh_sets : def.verify_sets;
	ro.warmup_ms = def.warmup_ms;
	st_error e2 = {0};
	st_status rc = st_estimate_run(k->cubin, k->size, k->launch, &ro, b, b_size, true, pairs, e, &e2);
	if (rc)
		return st_error_set(err, rc, "the fresh-session estimate: %s", e2.msg);
	if (e->verdict == ST_OK && !(e->t.ratio > 0 && e->t.ci_lo > 0 && e->t.ci_hi > 0))
		e->verdict = ST_ECRASH;
	return ST_OK;
}

void st_tune_timing_eval(const st_timing *t, st_eval *out)
{
	out->ratio = 1.0 / t->ratio; /* runtime: time(B)/time(A); search: original/candidate */
	out->lo = 1.0 / t->ci_hi;
	out->hi = 1.0 / t->ci_lo;
	out->pairs = t->n;
}

/* The race's final batch becomes race_final; r->best becomes the fresh-session estimate
 * (original / output).  Returns whether it clears confirm_min. */
static int take_estimate(st_tune_result *r, const st_estimate *e, double confirm_min, st_eval *race_final)
{
	*race_final = r->best;
	if (e->verdict != ST_OK)
		return 0;
	st_tune_timing_eval(&e->t, &r->best);
	return r->best.lo > confirm_min;
}

/* GPU: the search's output (in r) re-measured in a fresh session; *ok falls when it does not hold. */
static st_status search_estimate(tjob *j, const st_tune_kernel *k, const st_tune_opts *o, const st_search_opts *so,
				 st_tune_result *r, int *ok, st_error *err)
{
	st_estimate e;
	st_eval race;
	st_status rc = st_tune_fresh_estimate(k, o, so->confirm_pairs, r->cubin, r->cubin_size, &e, err);
	if (rc)
		return rc;
	int held = take_estimate(r, &e, so->confirm_min, &race);
	st_session_info si;
	st_session_get_info(j->g.sess, &si); /* contaminations: the search's session, then the estimate's */
	char v[768];
	snprintf(v, sizeof v,
		 "{\"search_verified\": %llu, \"search_rejected\": %llu, \"fresh_sets\": %u, \"fresh\": \"%s\", "
		 "\"checker\": \"ok\", \"confirm_pairs\": %u, \"confirm\": \"race\", \"race_candidates\": %u, "
		 "\"race_rounds\": %u, \"race_pairs_spent\": %llu, \"race_final\": [%.6f, %.6f, %.6f], "
		 "\"estimate\": \"fresh-session\", \"estimate_sample_us\": %g, \"estimate_reps\": %u, "
		 "\"contaminations\": %u, \"estimate_contaminations\": %u, \"stray_write\": %s}",
		 (unsigned long long)j->g.verified, (unsigned long long)j->g.rejected, e.info.verify_sets,
		 e.verdict == ST_OK ? "ok" : st_status_str(e.verdict), r->best.pairs, r->race_candidates, r->race_rounds,
		 (unsigned long long)r->confirm_pairs_spent, race.ratio, race.lo, race.hi, e.sample_us, e.t.reps,
		 si.contaminations, e.info.contaminations, e.info.last_stray ? "true" : "false");
	if (!(r->verification_json = strdup(v)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	if (e.verdict != ST_OK) {
		*ok = 0;
		snprintf(r->message, sizeof r->message, "the confirmed schedule failed verification on fresh inputs (%s); input kept",
			 e.info.last_stray ? "it wrote outside its buffers" : st_status_str(e.verdict));
	} else if (!held) {
		*ok = 0;
		snprintf(r->message, sizeof r->message,
			 "the race's survivor (%.4fx [%.4f, %.4f]) did not hold in a fresh session: %.4fx [%.4f, %.4f], "
			 "not above %.3f; input kept",
			 race.ratio, race.lo, race.hi, r->best.ratio, r->best.lo, r->best.hi, so->confirm_min);
	}
	return ST_OK;
}

/* r's message and output when the search's result is kept (ok) or the input is (not ok). */
static st_status finish(tjob *j, const st_tune_kernel *k, int gpu, const st_search_opts *so, int ok,
			st_tune_result *r, st_error *err)
{
	if (!ok) {
		if (!r->message[0] && gpu)
			snprintf(r->message, sizeof r->message,
				 "no schedule passed confirmation (race of %u, final %u pairs, 95 %% interval above %.3f); input kept",
				 r->race_candidates, so->confirm_pairs, so->confirm_min);
		else if (!r->message[0])
			snprintf(r->message, sizeof r->message, "the cost model found nothing faster; input kept");
		st_sched_reset(j->s);
		return copy_input(k, j->kname, r, err);
	}
	r->confirmed = gpu;
	if (gpu)
		snprintf(r->message, sizeof r->message,
			 "confirmed on the GPU: %.4fx [%.4f, %.4f] over %u pairs in a fresh session, verified on fresh "
			 "inputs, checked",
			 r->best.ratio, r->best.lo, r->best.hi, r->best.pairs);
	else
		snprintf(r->message, sizeof r->message,
			 "UNCONFIRMED: the cost model predicts %.4fx; the independent checker passed it, no GPU timed it",
			 r->best.ratio);
	return ST_OK;
}

/* The search itself (after the aim and the pipe alternative, whose time its budget lost). */
static st_status search(tjob *j, const st_tune_kernel *k, const st_tune_opts *o, st_search_opts *so,
			st_policy *policy, st_tune_result *r, int *accepted, st_error *err)
{
	st_aim *aim = NULL;
	st_search_env *aenv = NULL; /* aimed proposals (tune_aim.c): the profile's cost counts in the budget */
	int gpu = o->reward == ST_REWARD_GPU;
	st_status rc = st_tune_aim_open(k, o, gpu, j->s, (st_search_env *)job_env(j), &aim, &aenv, r, err);
	if (rc)
		return rc;
	if (so->seconds > 0)
		so->seconds = so->seconds - r->aim_ms / 1000 > 1 ? so->seconds - r->aim_ms / 1000 : 1;
	const st_search_env *env = aenv ? aenv : job_env(j);
	st_search_result sr = {0};
	note_ctx nc = {.j = j, .user = so->on_eval, .user_data = so->on_eval_data};
	if (so->on_eval) { /* the caller's log gets the cost model's ratio of each evaluated state too */
		so->on_eval = tune_note;
		so->on_eval_data = &nc;
	}
	rc = st_search_run(&env, 1, policy, so, &sr, err);
	st_aim_env_free(aenv);
	st_aim_free(aim);
	if (rc)
		return rc;
	result_counts(r, &sr);
	st_search_result_free(&sr);
	*accepted = sr.accepted;
	return ST_OK;
}

st_status st_tune(const st_tune_kernel *k, const st_tune_opts *o, st_policy *policy, st_tune_result *r,
		  st_error *err)
{
	memset(r, 0, sizeof *r);
	if (!o || o->version != ST_TUNE_OPTS_VERSION)
		return st_error_set(err, ST_EINVAL, "st_tune_opts version mismatch (call st_tune_opts_init)");
	int gpu = o->reward == ST_REWARD_GPU;
	st_search_opts so = o->search;
	if (gpu && so.confirm_pairs < 200)
		return st_error_set(err, ST_EINVAL, "the GPU reward confirms with at least 200 pairs (confirm_pairs %u)",
				    so.confirm_pairs);
	/* Two loads of the same bytes differ by up to ~0.4 % on the H200 (module placement,
	 * docs/gpu-tests.md), so with the GPU reward a gain is claimed only when the
	 * confirmation's 95 % interval clears 0.5 %, unless confirm_min was set. */
	if (gpu && so.confirm_min == 1.0)
		so.confirm_min = ST_TUNE_GPU_CONFIRM_MIN;
	tjob j;
	st_status rc = job_open(&j, k, NULL, o, gpu, err);
	if (rc)
		return rc;
	snprintf(r->kernel, sizeof r->kernel, "%s", j.kname);
	if (gpu) {
		st_session_info info;
		st_session_get_info(j.g.sess, &info);
		snprintf(r->device, sizeof r->device, "%s", info.device);
	}
	st_policy *own = NULL;
	st_tune_pipe_alt pa;
	memset(&pa, 0, sizeof pa);
	int accepted = 0, ok = 0;
	if (so.method == ST_SEARCH_PPO && !policy &&
	    (rc = st_policy_new(o->hidden ? o->hidden : ST_POLICY_HIDDEN_DEFAULT, so.seed, &own, err)))
		goto out;
	if ((rc = st_tune_pipe_alt_open(k, j.cubin, j.kname, &j.so, j.sk, o, &so, &pa, r, err)) ||
	    (rc = search(&j, k, o, &so, own ? own : policy, r, &accepted, err)))
		goto out;
	if (accepted && (rc = job_output(&j, k, r, &ok, err)))
		goto out;
	if (accepted && ok && gpu && (rc = search_estimate(&j, k, o, &so, r, &ok, err)))
		goto out;
	if ((rc = finish(&j, k, gpu, &so, ok, r, err)))
		goto out;
	r->model_ratio = st_costmodel_ratio(j.m, j.s);
	rc = st_tune_pipe_alt_take(&pa, ok, r, err);
out:
	st_tune_pipe_alt_free(&pa);
	st_policy_free(own);
	job_close(&j);
	if (rc)
		st_tune_result_free(r);
	return rc;
}

/* ---- train --------------------------------------------------------------------------------------- */
st_status st_tune_train(const st_tune_kernel *ks, size_t n, const st_tune_opts *o, st_policy *policy,
			st_tune_result *results, st_error *err)
{
	if (!o || o->version != ST_TUNE_OPTS_VERSION)
		return st_error_set(err, ST_EINVAL, "st_tune_opts version mismatch (call st_tune_opts_init)");
	if (!n || !policy)
		return st_error_set(err, ST_EINVAL, "training needs kernels and a policy");
	tjob *jobs = calloc(n, sizeof *jobs);
	const st_search_env **envs = calloc(n, sizeof *envs);
	st_search_result *sr = calloc(n, sizeof *sr);
	st_status rc = jobs && envs && sr ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
	size_t opened = 0;
	for (; !rc && opened < n; opened++) {
		memset(&results[opened], 0, sizeof results[opened]);
		if ((rc = job_open(&jobs[opened], &ks[opened], NULL, o, o->reward == ST_REWARD_GPU, err))) {
			const char *nm = ks[opened].name ? ks[opened].name : "cubin";
			if (err && strncmp(err->msg, nm, strlen(nm))) /* name the cubin once */
				st_error_wrap(err, "%s", nm);
			break;
		}
		envs[opened] = job_env(&jobs[opened]);
	}
	st_search_opts so = o->search;
	so.method = ST_SEARCH_PPO;
	so.confirm_pairs = 0; /* training: nothing is accepted */
	if (!rc)
		rc = st_search_run(envs, n, policy, &so, sr, err);
	for (size_t i = 0; !rc && i < n; i++) {
		st_tune_result *r = &results[i];
		snprintf(r->kernel, sizeof r->kernel, "%s", jobs[i].kname);
		result_counts(r, &sr[i]);
		r->model_ratio = 1.0;
		snprintf(r->message, sizeof r->message, "trained on (best quick evaluation %.4f)", sr[i].best.ratio);
	}
	for (size_t i = 0; sr && i < n; i++)
		st_search_result_free(&sr[i]);
	for (size_t i = 0; jobs && i < opened && i < n; i++)
		job_close(&jobs[i]);
	free(jobs);
	free(envs);
	free(sr);
	return rc;
}

/* ---- apply a policy ---------------------------------------------------------------------------- */
/* Keep the first `*applied` policy moves' best prefix by the cost model (re-applied: the policy is
 * deterministic, so the same state gives the same moves). */
static st_status model_gate(tjob *j, const st_policy *p, double margin, unsigned *applied, st_error *err)
{
	const st_search_env *env = job_env(j);
	double best = 1.0;
	unsigned best_d = 0;
	st_status rc = ST_OK;
	for (unsigned d = *applied; d > 0 && !rc; d--) {
		double r = st_costmodel_ratio(j->m, j->s);
		if (r > best || (r == best && d < best_d))
			best = r, best_d = d;
		rc = env->undo(env->data, err);
	}
	if (rc)
		return rc;
	*applied = 0;
	return best_d ? st_policy_apply(p, env, best_d, margin, applied, err) : ST_OK;
}

st_status st_tune_apply_policy(const st_tune_kernel *k, const st_policy *p, unsigned max_steps, double margin,
			       unsigned flags, st_tune_result *r, st_error *err)
{
	memset(r, 0, sizeof *r);
	if (!k || !k->cubin || !p)
		return st_error_set(err, ST_EINVAL, "applying a policy needs a cubin and a policy");
	st_cubin *c = NULL, *work = NULL;
	st_schedule *all = NULL;
	const char *name = k->name ? k->name : "cubin";
	st_status rc = st_cubin_open_mem(k->cubin, k->size, name, &c, err);
	if (!rc)
		rc = st_cubin_open_mem(k->cubin, k->size, name, &work, err);
	if (!rc)
		rc = st_schedule_new(&all, err);
	if (!rc && k->kernel && st_cubin_find_kernel(c, k->kernel) == ST_CUBIN_NONE)
		rc = st_error_set(err, ST_ENOTFOUND, "%s: no kernel named '%s'", name, k->kernel);
	st_tune_opts o;
	st_tune_opts_init(&o);
	o.sched_flags = flags & (ST_SCHED_WIDE | ST_SCHED_NO_CTRL);
	size_t gated = 0;
	size_t done = 0, changed = 0, refused = 0;
	unsigned total_moves = 0;
	char refused_msg[256] = "";
	for (size_t i = 0; !rc && i < st_cubin_kernel_count(c); i++) {
		const st_kernel_info *ki = st_cubin_kernel(c, i);
		if (k->kernel ? strcmp(k->kernel, ki->name) != 0 : !ki->entry)
			continue;
		tjob j;
		if ((rc = job_open(&j, k, ki->name, &o, 0, err)))
			break;
		if (!r->kernel[0]) /* named even when nothing changes; a changed kernel's name wins below */
			snprintf(r->kernel, sizeof r->kernel, "%s", ki->name);
		unsigned applied = 0;
		rc = st_policy_apply(p, job_env(&j), max_steps, margin, &applied, err);
		unsigned before = applied;
		if (!rc && applied && (flags & ST_TUNE_MODEL_GATE))
			rc = model_gate(&j, p, margin, &applied, err);
		gated += !rc && applied < before;
		int ok = 0;
		st_tune_result one = {0};
		if (!rc && applied)
			rc = job_output(&j, k, &one, &ok, err);
		if (!rc && applied && !ok) {
			refused++;
			snprintf(refused_msg, sizeof refused_msg, "%s: %.200s", ki->name, one.message);
		}
		if (!rc && applied && ok) {
			rc = st_sched_to_cubin(j.s, work, st_cubin_find_kernel(work, ki->name), err);
			if (!rc)
				rc = st_sched_to_schedule(j.s, all, err);
			if (!rc) {
				changed++;
				total_moves += applied;
				r->model_ratio = st_costmodel_ratio(j.m, j.s); /* the last kernel's */
				snprintf(r->kernel, sizeof r->kernel, "%s", ki->name);
			}
		}
		st_tune_result_free(&one);
		job_close(&j);
		done++;
	}
	if (!rc && !done)
		rc = st_error_set(err, ST_ENOTFOUND, "%s has no entry kernel", name);
	if (!rc) {
		size_t size;
		const uint8_t *d = st_cubin_data(work, &size);
		r->cubin = malloc(size ? size : 1);
		r->schedule_json = st_schedule_to_json(all);
		if (!r->cubin || !r->schedule_json) {
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
		} else {
			memcpy(r->cubin, d, size);
			r->cubin_size = size;
			r->improved = changed > 0;
			r->steps = total_moves;
			r->best.ratio = r->best.lo = r->best.hi = changed ? r->model_ratio : 1.0;
			if (!changed)
				r->model_ratio = 1.0;
			if (refused)
				snprintf(r->message, sizeof r->message, "%zu of %zu kernels changed; %zu refused by the checker (%s)",
					 changed, done, refused, refused_msg);
			else
				snprintf(r->message, sizeof r->message,
					 "%zu of %zu kernels changed by %u policy moves%s; UNCONFIRMED (no GPU timing), checked",
					 changed, done, total_moves,
					 gated ? " (cut to the cost model's best prefix)" : "");
		}
	}
	st_schedule_free(all);
	st_cubin_free(work);
	st_cubin_free(c);
	if (rc)
		st_tune_result_free(r);
	return rc;
}
