/* Internals of the pass entry (not public API): the per-call settings.
 *
 * Settings come from the environment, read on every call (no globals), and
 * the kernel's options_json overrides them key by key:
 *
 *   env                 options_json key      meaning
 *   SASSTUNE_CACHE_DIR  cache_dir             cache folder (see st_cache_open)
 *   SASSTUNE_MODE       mode                  tune | policy | cache-only (default tune)
 *   SASSTUNE_BUDGET     budget                tuning budget, handed to the search
 *   SASSTUNE_POLICY     policy                policy file for mode policy
 *   SASSTUNE_LOG        log                   off|error|warn|info|debug, or a file path
 *   SASSTUNE_RETUNE     retune                1/0 (true/false, yes/no, on/off): ignore negative entries
 *   -                   gpu_name, compute_capability, driver_version   key fields ("unknown" if absent)
 */
#ifndef ST_PASS_INTERNAL_H
#define ST_PASS_INTERNAL_H

#include "sasstune/cache.h"
#include "sasstune/error.h"
#include "sasstune/plugin.h"

#include <stddef.h>
#include <stdint.h>

typedef enum st_pass_mode { ST_PASS_TUNE, ST_PASS_POLICY, ST_PASS_CACHE_ONLY } st_pass_mode;
typedef enum st_log_level { ST_LOG_OFF, ST_LOG_ERROR, ST_LOG_WARN, ST_LOG_INFO, ST_LOG_DEBUG } st_log_level;

typedef struct st_pass_settings {
	st_pass_mode mode;
	char *cache_dir;         /* NULL: SASSTUNE_CACHE_DIR or its defaults */
	char *budget, *policy;   /* NULL when not set */
	int64_t budget_seconds;  /* budget, checked when read (default 300) */
	int retune;              /* ignore negative entries */
	st_log_level log_level;  /* default warn */
	char *log_path;          /* NULL: stderr */
	char *gpu_name, *compute_capability, *driver_version; /* NULL: unknown */
	char unknown_option[64]; /* first options_json key we do not know, for a warning */
} st_pass_settings;

#define ST_PASS_BUDGET_DEFAULT 300 /* seconds of tuning per kernel when SASSTUNE_BUDGET is not set */

/* Read the environment, then options_json (NULL or a JSON object).  ST_EINVAL names
 * the bad setting; s is then freed. */
st_status st_pass__settings_load(st_pass_settings *s, const char *options_json, st_error *err);
void st_pass__settings_free(st_pass_settings *s);

const char *st_pass__mode_name(st_pass_mode mode);
/* A budget (a duration, st_cache_parse_duration, of at least 1 s) and a 1/0 flag; ST_EINVAL names "from". */
st_status st_pass__check_budget(int64_t *seconds, const char *v, const char *from, st_error *err);
st_status st_pass__set_flag(int *flag, const char *v, const char *from, st_error *err);

/* What to do with the entry under the key (pass_serve.c): serve its tuned cubin (msg: a note when
 * another sasstune version made it and the checker passed it again, else empty), serve the stock
 * cubin as a negative hit (msg: the message), or treat it as a miss (msg: why). */
typedef enum st_pass_serve { ST_SERVE_TUNED, ST_SERVE_NEGATIVE, ST_SERVE_MISS } st_pass_serve;
st_pass_serve st_pass__serve(const st_pass_settings *s, st_cache *cache, st_cache_entry *e, const uint8_t *cubin,
			     size_t size, char *msg, size_t n);

#endif
