/* sasstune profile: warp stall samples per instruction (CUPTI PC sampling).
 *
 * A profile holds, per (function, instruction offset), how many warp program-counter
 * samples fell there for each stall reason.  Reasons use short names (long_sb, short_sb,
 * wait, barrier, mio_throttle, lg_throttle, math_pipe, not_selected, selected, ...);
 * CUPTI's "smsp__pcsamp_warps_issue_stalled_*" names are shortened on entry and its
 * "*_not_issued" subsets are left out, so one PC's reasons sum to its samples.  The
 * samples file (schema "sasstune-samples-1", docs/profile.md) is this data as JSON: what
 * `sasstune profile --samples-out` writes and `--samples-in` / `tune --aim` read.
 */
#ifndef SASSTUNE_PROFILE_H
#define SASSTUNE_PROFILE_H
#include "sasstune/error.h"
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#define ST_PROFILE_MAX_REASONS 64
#define ST_PROFILE_MAX_SAMPLES (1ull << 53) /* counts saturate here */

typedef struct st_profile st_profile;
typedef struct st_profile_meta {
	char device[128];
	char kernel[256];        /* the profiled launch's kernel ("" unknown) */
	unsigned launches;       /* kernel launches sampled */
	unsigned period;         /* log2 of the sampling period in cycles, 0: CUPTI's default */
	uint64_t total_samples;  /* CUPTI's count (all reasons, all functions, dropped included) */
	uint64_t dropped_samples;
	double cost_ms;          /* wall time of the sampling */
} st_profile_meta;

st_status st_profile_new(st_profile **out, st_error *err);
void st_profile_free(st_profile *p);
st_profile_meta *st_profile_meta_of(st_profile *p);
const st_profile_meta *st_profile_get_meta(const st_profile *p);

/* Add samples: reason is a CUPTI or a short name (a "_not_issued" subset is ignored); the count
 * of one (function, offset, reason) saturates at ST_PROFILE_MAX_SAMPLES. */
st_status st_profile_add(st_profile *p, const char *function, uint32_t offset, const char *reason,
			 uint64_t samples, st_error *err);
/* "smsp__pcsamp_warps_issue_stalled_long_scoreboard" -> "long_sb"; NULL for a _not_issued subset. */
const char *st_profile_short_name(const char *reason, char *buf, size_t n);

/* The samples file. */
st_status st_profile_parse(const char *json, size_t len, st_profile **out, st_error *err);
st_status st_profile_load(const char *path, st_profile **out, st_error *err);
char *st_profile_to_json(const st_profile *p); /* malloc'ed text, NULL when out of memory */

/* Queries.  Reasons are numbered 0..st_profile_reason_count()-1 in order of first use. */
size_t st_profile_reason_count(const st_profile *p);
const char *st_profile_reason(const st_profile *p, size_t r);
long st_profile_reason_find(const st_profile *p, const char *short_name); /* -1 absent */
/* Samples at (function, offset) for reason r (r = -1: all reasons). */
uint64_t st_profile_at(const st_profile *p, const char *function, uint32_t offset, long r);
/* Samples of a function for reason r (-1: all). */
uint64_t st_profile_function_total(const st_profile *p, const char *function, long r);

#ifdef __cplusplus
}
#endif
#endif
