/* Aimed proposals for one tune (internal; docs/profile.md "Aimed proposals"). */
#ifndef ST_TUNE_AIM_H
#define ST_TUNE_AIM_H
#include "sasstune/tune.h"

/* o->aim NULL or "off": nothing (*env = NULL).  "auto": sample the original kernel with CUPTI in
 * a worker of its own (GPU reward only) when 5 % of the time budget pays for it; a failure or a
 * budget too small is said in r->aim and the tune goes on uniform.  Else o->aim is a samples file
 * (schema sasstune-samples-1), whose errors are fatal.  With a profile, *env wraps inner with the
 * move weights (free with st_aim_env_free, then st_aim_free(*aim)); r->aim_ms is the cost. */
st_status st_tune_aim_open(const st_tune_kernel *k, const st_tune_opts *o, int gpu, const st_sched *s,
			   st_search_env *inner, st_aim **aim, st_search_env **env, st_tune_result *r, st_error *err);
#endif
