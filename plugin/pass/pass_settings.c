/* The pass's settings: environment first, then options_json.  Both are outside
 * input; a bad value is an error naming the setting, never a crash. */
#include "pass_internal.h"
#include "util/util.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPTIONS_MAX (1u << 20)

const char *st_pass__mode_name(st_pass_mode m)
{
	return m == ST_PASS_POLICY ? "policy" : m == ST_PASS_CACHE_ONLY ? "cache-only" : m == ST_PASS_CAPTURE ? "capture" : "tune";
}

void st_pass__settings_free(st_pass_settings *s)
{
	free(s->cache_dir);
	free(s->budget);
	free(s->policy);
	free(s->log_path);
	free(s->gpu_name);
	free(s->compute_capability);
	free(s->driver_version);
	st_pass__redis_free(&s->redis);
	memset(s, 0, sizeof *s);
}

static st_status set_mode(st_pass_settings *s, const char *v, const char *from, st_error *err)
{
	if (!strcmp(v, "tune"))
		s->mode = ST_PASS_TUNE;
	else if (!strcmp(v, "policy"))
		s->mode = ST_PASS_POLICY;
	else if (!strcmp(v, "cache-only"))
		s->mode = ST_PASS_CACHE_ONLY;
	else if (!strcmp(v, "capture"))
		s->mode = ST_PASS_CAPTURE;
	else
		return st_error_set(err, ST_EINVAL, "%s: unknown mode '%.40s' (expected tune, policy, cache-only or capture)",
				    from, v);
	return ST_OK;
}

static st_status set_variants(st_pass_settings *s, const char *v, const char *from, st_error *err)
{
	if (!strcmp(v, "auto"))
		s->variants = ST_VARIANTS_AUTO;
	else if (!strcmp(v, "on"))
		s->variants = ST_VARIANTS_ON;
	else if (!strcmp(v, "off"))
		s->variants = ST_VARIANTS_OFF;
	else
		return st_error_set(err, ST_EINVAL, "%s: unknown value '%.40s' (expected on, off or auto)", from, v);
	return ST_OK;
}

/* A level name, or else a file path (messages at level info). */
static st_status set_log(st_pass_settings *s, const char *v, const char *from, st_error *err)
{
	static const char *const levels[] = {"off", "error", "warn", "info", "debug"};
	for (int i = 0; i < 5; i++)
		if (!strcmp(v, levels[i])) {
			s->log_level = (st_log_level)i;
			free(s->log_path);
			s->log_path = NULL;
			return ST_OK;
		}
	if (!*v)
		return st_error_set(err, ST_EINVAL, "%s: empty (expected a level or a file path)", from);
	char *p = strdup(v);
	if (!p)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	free(s->log_path);
	s->log_path = p;
	s->log_level = ST_LOG_INFO;
	return ST_OK;
}

static st_status set_string(char **slot, const char *v, st_error *err)
{
	char *p = strdup(v);
	if (!p)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	free(*slot);
	*slot = p;
	return ST_OK;
}

static int known(const char *name)
{
	static const char *const names[] = {"mode",	"log",	    "cache_dir",	  "budget",	    "policy",
					    "gpu_name", "compute_capability", "driver_version", "retune", "device",
					    "variants", "redis", "redis_prefix", "redis_timeout", "redis_lock_ttl",
					    "redis_locked", "redis_retry", "aim"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

/* Apply one setting by its options_json name; "from" names its origin in messages. */
static st_status apply(st_pass_settings *s, const char *name, const char *v, const char *from, st_error *err)
{
	if (!strcmp(name, "mode"))
		return set_mode(s, v, from, err);
	if (!strcmp(name, "log"))
		return set_log(s, v, from, err);
	if (!strcmp(name, "retune"))
		return st_pass__set_flag(&s->retune, v, from, err);
	if (!strcmp(name, "budget") && st_pass__check_budget(&s->budget_seconds, v, from, err) != ST_OK)
		return ST_EINVAL;
	if (!strcmp(name, "device"))
		return st_pass__set_device(&s->device, v, from, err);
	if (!strcmp(name, "variants"))
		return set_variants(s, v, from, err);
	if (!strncmp(name, "redis", 5)) /* the fleet tier: pass_redis_settings.c */
		return st_pass__redis_apply(&s->redis, name, v, from, err);
	if (!strcmp(name, "aim")) { /* aimed proposals (docs/profile.md) */
		if (strcmp(v, "auto") && strcmp(v, "off"))
			return st_error_set(err, ST_EINVAL, "%s: unknown value '%.40s' (expected auto or off)", from, v);
		s->aim = !strcmp(v, "auto");
		return ST_OK;
	}
	char **slot = !strcmp(name, "cache_dir")	  ? &s->cache_dir
		      : !strcmp(name, "budget")		  ? &s->budget
		      : !strcmp(name, "policy")		  ? &s->policy
		      : !strcmp(name, "gpu_name")	  ? &s->gpu_name
		      : !strcmp(name, "compute_capability") ? &s->compute_capability
		      : !strcmp(name, "driver_version")	  ? &s->driver_version
							  : NULL;
	if (!slot)
		return ST_OK; /* callers check known() first */
	return set_string(slot, v, err);
}

st_status st_pass__settings_load(st_pass_settings *s, const char *options_json, st_error *err)
{
	static const struct {
		const char *env, *name;
	} envs[] = {{"SASSTUNE_MODE", "mode"},
		    {"SASSTUNE_BUDGET", "budget"},
		    {"SASSTUNE_POLICY", "policy"},
		    {"SASSTUNE_LOG", "log"},
		    {"SASSTUNE_RETUNE", "retune"},
		    {"SASSTUNE_VARIANTS", "variants"},
		    {"SASSTUNE_REDIS", "redis"},
		    {"SASSTUNE_REDIS_PREFIX", "redis_prefix"},
		    {"SASSTUNE_REDIS_TIMEOUT", "redis_timeout"},
		    {"SASSTUNE_REDIS_LOCK_TTL", "redis_lock_ttl"},
		    {"SASSTUNE_REDIS_LOCKED", "redis_locked"},
		    {"SASSTUNE_REDIS_RETRY", "redis_retry"},
		    {"SASSTUNE_AIM", "aim"}};
	memset(s, 0, sizeof *s);
	s->mode = ST_PASS_TUNE;
	s->budget_seconds = ST_PASS_BUDGET_DEFAULT;
	s->log_level = ST_LOG_WARN;
	st_pass__redis_defaults(&s->redis);
	s->check_reference = st_env_on("SASSTUNE_CHECK_REFERENCE"); /* no options_json key; never an error */
	st_status rc = ST_OK;
	for (size_t i = 0; rc == ST_OK && i < sizeof envs / sizeof envs[0]; i++) {
		const char *v = getenv(envs[i].env);
		if (v && *v)
			rc = apply(s, envs[i].name, v, envs[i].env, err);
	}
	if (rc == ST_OK && options_json) {
		size_t n = strnlen(options_json, OPTIONS_MAX + 1);
		cJSON *o = n > OPTIONS_MAX ? NULL : cJSON_ParseWithLength(options_json, n);
		if (!cJSON_IsObject(o)) {
			rc = st_error_set(err, ST_EINVAL, "options_json is not a JSON object of at most %u bytes",
					  OPTIONS_MAX);
		} else {
			const cJSON *item;
			cJSON_ArrayForEach(item, o)
			{
				char from[80];
				snprintf(from, sizeof from, "options_json \"%.40s\"", item->string ? item->string : "");
				if (!item->string)
					continue;
				if (!known(item->string)) {
					if (!s->unknown_option[0])
						snprintf(s->unknown_option, sizeof s->unknown_option, "%s",
							 item->string);
					continue;
				}
				if (!cJSON_IsString(item) || !item->valuestring) {
					rc = st_error_set(err, ST_EINVAL, "%s: expected a string", from);
					break;
				}
				if ((rc = apply(s, item->string, item->valuestring, from, err)) != ST_OK)
					break;
			}
		}
		cJSON_Delete(o);
	}
	if (rc != ST_OK)
		st_pass__settings_free(s);
	return rc;
}
