/* Internals of the pass entry (not public API): the per-call settings.
 *
 * Settings come from the environment, read on every call (no globals), and
 * the kernel's options_json overrides them key by key:
 *
 *   env                 options_json key      meaning
 *   SASSTUNE_CACHE_DIR  cache_dir             cache folder (see st_cache_open)
 *   SASSTUNE_MODE       mode                  tune | policy | cache-only | capture (default tune)
 *   SASSTUNE_BUDGET     budget                tuning budget, handed to the search
 *   SASSTUNE_POLICY     policy                policy file for mode policy
 *   SASSTUNE_LOG        log                   off|error|warn|info|debug, or a file path
 *   -                   gpu_name, compute_capability, driver_version   key fields ("unknown" if absent)
 *   -                   device                CUDA device ordinal to tune on (default "0"), as the
 *                                             calling process sees it (CUDA_VISIBLE_DEVICES applies)
 */
#ifndef ST_PASS_INTERNAL_H
#define ST_PASS_INTERNAL_H

#include "sasstune/error.h"

/* ST_PASS_CAPTURE: the flow records launches to tune later (sasstune tune --captures); the pass
 * itself then only looks up, like cache-only. */
typedef enum st_pass_mode { ST_PASS_TUNE, ST_PASS_POLICY, ST_PASS_CACHE_ONLY, ST_PASS_CAPTURE } st_pass_mode;
typedef enum st_log_level { ST_LOG_OFF, ST_LOG_ERROR, ST_LOG_WARN, ST_LOG_INFO, ST_LOG_DEBUG } st_log_level;

typedef struct st_pass_settings {
	st_pass_mode mode;
	char *cache_dir;         /* NULL: SASSTUNE_CACHE_DIR or its defaults */
	char *budget, *policy;   /* NULL when not set */
	st_log_level log_level;  /* default warn */
	char *log_path;          /* NULL: stderr */
	char *gpu_name, *compute_capability, *driver_version; /* NULL: unknown */
	int device;              /* 0 <= device <= 1023; default 0 */
	char unknown_option[64]; /* first options_json key we do not know, for a warning */
} st_pass_settings;

/* Read the environment, then options_json (NULL or a JSON object).  ST_EINVAL names
 * the bad setting; s is then freed. */
st_status st_pass__settings_load(st_pass_settings *s, const char *options_json, st_error *err);
void st_pass__settings_free(st_pass_settings *s);

const char *st_pass__mode_name(st_pass_mode mode);
/* "device": a decimal ordinal 0..1023 (pass_device.c). */
st_status st_pass__set_device(int *device, const char *v, const char *from, st_error *err);

#endif
