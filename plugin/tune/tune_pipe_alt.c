/* The pipe alternatives inside st_tune (tune_pipe.h): built before the search (form 1, then form
 * 2), timed on the GPU like the search's result, the faster held one kept only when it beats it. */
#include "tune_internal.h"
#include "tune_pipe.h"
#include "sasstune/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void st_tune_pipe_alt_free(st_tune_pipe_alt *a)
{
	for (int f = 0; f < 2; f++) {
		st_tune_pipe_free(&a->f[f].p);
		free(a->f[f].verification_json);
		a->f[f].verification_json = NULL;
	}
}

/* The verification record of a timed alternative (the search's has the same estimate fields). */
static st_status record(st_tune_pipe_one *a, const st_estimate *e, st_error *err)
{
	char v[560];
	snprintf(v, sizeof v,
		 "{\"alternative\": \"pipe\", \"form\": %d, \"registers\": [%u, %u], \"loops\": %zu, \"loads\": %zu, "
		 "\"fresh_sets\": %u, \"fresh\": \"%s\", "
		 "\"checker\": \"ok\", \"confirm_pairs\": %u, \"estimate\": \"fresh-session\", \"estimate_sample_us\": %g, "
		 "\"estimate_reps\": %u, \"estimate_contaminations\": %u, \"stray_write\": %s}",
		 a->p.form, a->p.regs_before, a->p.regs_after, a->p.loops, a->p.loads, e->info.verify_sets, e->verdict == ST_OK ? "ok" : st_status_str(e->verdict),
		 e->t.n, e->sample_us, e->t.reps, e->info.contaminations, e->info.last_stray ? "true" : "false");
	if (!(a->verification_json = strdup(v)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	return ST_OK;
}

/* Time the built alternative against the input; a->held and r->pipe say how it went. */
static st_status time_it(const st_tune_kernel *k, const st_tune_opts *o, const st_search_opts *sopts,
			 st_tune_pipe_one *a, st_tune_result *r, st_error *err)
{
	st_estimate e;
	st_status rc = st_tune_fresh_estimate(k, o, sopts->confirm_pairs, a->p.cubin, a->p.size, &e, err);
	if (rc || (rc = record(a, &e, err)))
		return rc;
	size_t n = strlen(r->pipe);
	if (e.verdict != ST_OK) {
		snprintf(r->pipe + n, sizeof r->pipe - n, "; failed verification on fresh inputs (%s): not kept",
			 e.info.last_stray ? "it wrote outside its buffers" : st_status_str(e.verdict));
		return ST_OK;
	}
	st_tune_timing_eval(&e.t, &a->est);
	a->held = a->est.lo > sopts->confirm_min;
	snprintf(r->pipe + n, sizeof r->pipe - n, "; verified, %.4fx [%.4f, %.4f] over %u pairs in a fresh session%s",
		 a->est.ratio, a->est.lo, a->est.hi, a->est.pairs,
		 a->held ? "" : a->est.hi < 1.0 ? " (slower): not kept" : ", not above the confirmation rule: not kept");
	return ST_OK;
}

/* Build (and time) the alternative of one form; its account appended to r->pipe. */
static st_status one(const st_tune_kernel *k, const st_cubin *c, const char *kname, const st_sass_opts *so,
		     const st_sass_kernel *sk, const st_tune_opts *o, const st_search_opts *sopts,
		     const st_tune_pipe_regs *rg, int form, st_tune_pipe_one *a, st_tune_result *r, st_error *err)
{
	st_status rc = st_tune_pipe_build(c, kname, so, sk, form, rg, &a->p, err);
	if (rc)
		return rc;
	size_t n = strlen(r->pipe);
	snprintf(r->pipe + n, sizeof r->pipe - n, "%sform %d: %s", n ? "; " : "", form, a->p.note);
	n = strlen(r->pipe);
	if (a->p.cubin && o->reward != ST_REWARD_GPU)
		snprintf(r->pipe + n, sizeof r->pipe - n, "; not timed (the cost model does not rate family 3 rewrites): not kept");
	else if (a->p.cubin)
		rc = time_it(k, o, sopts, a, r, err);
	return rc;
}

st_status st_tune_pipe_alt_open(const st_tune_kernel *k, const st_cubin *c, const char *kname, const st_sass_opts *so,
				const st_sass_kernel *sk, const st_tune_opts *o, st_search_opts *sopts, st_tune_pipe_alt *a, st_tune_result *r,
				st_error *err)
{
	memset(a, 0, sizeof *a);
	snprintf(r->pipe, sizeof r->pipe, "off");
	if (!(o->sched_flags & ST_SCHED_PIPE))
		return ST_OK;
	r->pipe[0] = 0;
	double t0 = now_s();
	st_tune_pipe_regs rg; /* form 2's register limit: the most that keep the launch's resident blocks */
	rg.limit = st_tune_regs_rule(&rg.g, c, st_cubin_find_kernel(c, kname), k->launch, o->allow_occupancy_drop);
	st_status rc = ST_OK;
	for (int f = 0; f < 2 && !rc; f++)
		rc = one(k, c, kname, so, sk, o, sopts, &rg, f + 1, &a->f[f], r, err);
	if (rc)
		return rc;
	/* the search gets what is left, at least a second (as after the aim): finding candidates reads
	 * the decoded kernel; building, checking and timing a rewrite cost decodes and a session */
	double spent = now_s() - t0;
	if (sopts->seconds > 0)
		sopts->seconds = sopts->seconds - spent > 1 ? sopts->seconds - spent : 1;
	return ST_OK;
}

st_status st_tune_pipe_alt_take(st_tune_pipe_alt *all, int ok, st_tune_result *r, st_error *err)
{
	(void)err;
	st_tune_pipe_one *a = all->f[1].held && (!all->f[0].held || all->f[1].est.ratio > all->f[0].est.ratio)
				      ? &all->f[1] : all->f[0].held ? &all->f[0] : NULL;
	if (!a)
		return ST_OK;
	size_t n = strlen(r->pipe);
	if (ok && r->confirmed && r->best.ratio >= a->est.ratio) {
		snprintf(r->pipe + n, sizeof r->pipe - n, "; the search's schedule (%.4fx) was faster: not kept",
			 r->best.ratio);
		return ST_OK;
	}
	free(r->cubin);
	free(r->schedule_json);
	free(r->verification_json);
	r->cubin = a->p.cubin;
	r->cubin_size = a->p.size;
	r->schedule_json = a->p.schedule_json;
	r->verification_json = a->verification_json;
	a->p.cubin = NULL;
	a->p.schedule_json = a->verification_json = NULL;
	r->improved = r->confirmed = 1;
	r->best = a->est;
	r->model_ratio = 0;
	snprintf(r->pipe + n, sizeof r->pipe - n, "; form %d kept%s", a->p.form,
		 ok ? " (faster than the search's schedule)" : "");
	snprintf(r->message, sizeof r->message,
		 "confirmed on the GPU: the pipe %s (%zu loop%s, %zu load%s), %.4fx [%.4f, %.4f] over %u pairs in a "
		 "fresh session, verified on fresh inputs, checked",
		 a->p.form == 2 ? "prefetch" : "rotation", a->p.loops, a->p.loops == 1 ? "" : "s", a->p.loads,
		 a->p.loads == 1 ? "" : "s", r->best.ratio, r->best.lo, r->best.hi, r->best.pairs);
	return ST_OK;
}
