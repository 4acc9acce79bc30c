/* The fleet tier's settings (SASSTUNE_REDIS*, options_json "redis*"): outside input, each bad
 * value an error naming the setting.  The URL itself is checked here too, so a typo is an
 * error at once rather than a Redis that is never reached.  docs/cache.md, "Fleet". */
#include "pass_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_pass__redis_defaults(st_pass_redis *r)
{
	*r = (st_pass_redis){.timeout_ms = ST_REMOTE_TIMEOUT_MS, .lock_ttl_s = 30, .retry_s = 60};
}

void st_pass__redis_free(st_pass_redis *r)
{
	free(r->url);
	free(r->prefix);
	r->url = r->prefix = NULL;
}

static st_status set_text(char **slot, const char *v, st_error *err)
{
	char *p = strdup(v);
	if (!p)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	free(*slot);
	*slot = p;
	return ST_OK;
}

/* Milliseconds: "250" or "250ms", 1..60000. */
static st_status set_ms(int *out, const char *v, const char *from, st_error *err)
{
	char *end;
	long ms = strtol(v, &end, 10);
	if (end == v || (*end && strcmp(end, "ms")) || ms < 1 || ms > 60000)
		return st_error_set(err, ST_EINVAL, "%s: '%.40s' is not a timeout of 1 to 60000 ms", from, v);
	*out = (int)ms;
	return ST_OK;
}

st_status st_pass__redis_apply(st_pass_redis *r, const char *name, const char *v, const char *from, st_error *err)
{
	int64_t t = 0;
	st_error pe = {0};
	if (!strcmp(name, "redis")) {
		st_remote_url u;
		if (st_remote_parse_url(v, &u, &pe) != ST_OK)
			return st_error_set(err, ST_EINVAL, "%s: %s", from, pe.msg);
		return set_text(&r->url, v, err);
	}
	if (!strcmp(name, "redis_prefix")) {
		for (const char *p = v; *p; p++)
			if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e || p - v >= 200)
				return st_error_set(err, ST_EINVAL, "%s: a prefix is up to 200 printable characters", from);
		return set_text(&r->prefix, v, err);
	}
	if (!strcmp(name, "redis_timeout"))
		return set_ms(&r->timeout_ms, v, from, err);
	if (!strcmp(name, "redis_lock_ttl") || !strcmp(name, "redis_retry")) {
		if (st_cache_parse_duration(v, &t, &pe) != ST_OK || t < (name[6] == 'l' ? 1 : 0) || t > 86400)
			return st_error_set(err, ST_EINVAL, "%s: '%.40s' is not a duration of %s to 1 day", from, v,
					    name[6] == 'l' ? "1 s" : "0 s");
		if (name[6] == 'l')
			r->lock_ttl_s = (int)t;
		else
			r->retry_s = t;
		return ST_OK;
	}
	if (!strcmp(name, "redis_locked")) {
		if (strcmp(v, "stock") && strcmp(v, "wait"))
			return st_error_set(err, ST_EINVAL, "%s: '%.40s' is not stock or wait", from, v);
		r->wait = !strcmp(v, "wait");
		return ST_OK;
	}
	return ST_ENOTFOUND;
}
