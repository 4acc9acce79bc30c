/* Aimed proposals for one tune: where the profile comes from and what it cost (tune_aim.h). */
#include "tune_aim.h"
#include "sasstune/profile.h"
#include "sasstune/sched.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define AIM_SHARE 0.05      /* of the time budget, at most, for the profile */
#define AIM_MIN_COST_S 3.0  /* what a profile costs at least (worker start, CUPTI set-up, launches) */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Sample the original kernel in a worker of its own, so that the timing worker never had CUPTI. */
static st_status sample(const st_tune_kernel *k, const st_tune_opts *o, double budget_s, st_profile **p,
			st_error *err)
{
	st_runtime_options ro = o->runtime;
	ro.verify_sets = 1;
	double target_ms = budget_s > 0 ? 1000 * budget_s * AIM_SHARE / 40 : 50;
	st_session *s = NULL;
	st_status rc = st_session_open(k->cubin, k->size, k->launch, &ro, &s, err);
	if (rc == ST_OK)
		rc = st_session_profile(s, NULL, 0, 0, target_ms < 50 ? target_ms : 50, 500, p, err);
	st_session_close(s);
	return rc;
}

st_status st_tune_aim_open(const st_tune_kernel *k, const st_tune_opts *o, int gpu, const st_sched *s,
			   st_search_env *inner, st_aim **aim, st_search_env **env, st_tune_result *r, st_error *err)
{
	*aim = NULL;
	*env = NULL;
	const char *how = o->aim;
	if (!how || !*how || !strcmp(how, "off")) {
		snprintf(r->aim, sizeof r->aim, "off");
		return ST_OK;
	}
	st_profile *p = NULL;
	st_status rc = ST_OK;
	double t0 = now_ms(), budget_s = o->search.seconds;
	if (!strcmp(how, "auto")) {
		st_error e2 = {0};
		if (!gpu)
			snprintf(r->aim, sizeof r->aim, "auto: off (no GPU reward)");
		else if (budget_s > 0 && budget_s * AIM_SHARE < AIM_MIN_COST_S)
			snprintf(r->aim, sizeof r->aim, "auto: off (5%% of a %.0f s budget cannot pay for a profile)",
				 budget_s);
		else if (sample(k, o, budget_s, &p, &e2) != ST_OK)
			snprintf(r->aim, sizeof r->aim, "auto: off (%.200s)", e2.msg);
		else
			snprintf(r->aim, sizeof r->aim, "auto");
	} else if ((rc = st_profile_load(how, &p, err)) == ST_OK) {
		snprintf(r->aim, sizeof r->aim, "file");
	}
	r->aim_ms = now_ms() - t0;
	if (rc == ST_OK && p)
		rc = st_aim_new(s, p, o->aim_strength, aim, err);
	if (rc == ST_OK && *aim) {
		r->aim_hot_share = st_aim_hot_share(*aim);
		rc = st_aim_wrap_env(inner, s, *aim, env, err);
	}
	st_profile_free(p);
	if (rc != ST_OK) {
		st_aim_free(*aim);
		*aim = NULL;
	}
	return rc;
}
