/* Whether an entry found under the key is served: a tuned result (re-checked by the independent
 * checker when another sasstune version made it), a negative one ("nothing beat stock", unless a
 * retune is asked for or the current budget is larger than the one it was tuned with), or
 * neither (a miss, with why).  An entry from the fleet tier (Redis) is always re-checked and, when
 * served, copied into the local cache.  docs/cache.md, "Negative results", "Other sasstune
 * versions" and "Fleet". */
#include "pass_internal.h"
#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sasstune/version.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Every kernel of the tuned cubin against the original, by st_check_kernel.  ST_OK: no violation. */
static st_status recheck(const uint8_t *orig, size_t size, const st_cache_info *i, st_error *err)
{
	st_cubin *a = NULL, *b = NULL;
	st_status rc = st_cubin_open_mem(orig, size, "original", &a, err);
	if (!rc)
		rc = st_cubin_open_mem(i->tuned_cubin, i->tuned_cubin_size, "cached", &b, err);
	size_t n = rc ? 0 : st_cubin_kernel_count(b);
	for (size_t k = 0; !rc && k < n; k++) {
		size_t bad = 0;
		const char *name = st_cubin_kernel(b, k)->name;
		rc = st_check_kernel(a, b, name, NULL, NULL, NULL, &bad, err);
		if (rc == ST_EILLEGAL)
			st_error_wrap(err, "%s: %zu violation%s", name, bad, bad == 1 ? "" : "s");
	}
	st_cubin_free(a);
	st_cubin_free(b);
	return rc;
}

/* A negative entry is retuned when asked (retune) or when it was tuned with a smaller budget
 * than the current one; a budget it recorded that does not parse counts as not smaller. */
static int retune_due(const st_pass_settings *s, const st_cache_info *i, char *why, size_t n)
{
	int64_t then = 0;
	if (s->retune) {
		snprintf(why, n, "negative entry ignored (SASSTUNE_RETUNE)");
		return 1;
	}
	if (st_cache_parse_duration(i->budget, &then, NULL) == ST_OK && then < s->budget_seconds) {
		snprintf(why, n, "negative entry tuned with budget %.40s, retuning with %llds", i->budget,
			 (long long)s->budget_seconds);
		return 1;
	}
	return 0;
}

/* Store a served entry in the local cache as this version's (same key, variant kept). */
static int record_locally(st_cache *cache, st_cache_entry *e)
{
	st_cache_key_fields f;
	st_cache_info_key_fields(st_cache_entry_info(e), &f);
	f.sasstune_version = NULL; /* this library's: its checker passed it */
	st_cache_record rec;
	st_cache_entry_record(e, &rec);
	st_error se = {0};
	return st_cache_store(cache, &f, &rec, &se) == ST_OK;
}

/* remote: the entry came from the fleet tier (Redis): its tuned cubin is always re-checked, and
 * what is served is copied into the local cache. */
static st_pass_serve serve_entry(const st_pass_settings *s, st_cache *cache, st_cache_entry *e, const uint8_t *cubin,
				 size_t size, char *msg, size_t n, int remote)
{
	const st_cache_info *i = st_cache_entry_info(e);
	const char *from = remote ? "from Redis, " : "";
	msg[0] = '\0';
	if (i->negative) {
		if (retune_due(s, i, msg, n))
			return ST_SERVE_MISS;
		int copied = remote && record_locally(cache, e);
		snprintf(msg, n, "cached: " ST_PLUGIN_NEGATIVE " (%stuned %s, budget %.40s, best ratio %.4f; entry %.12s%s)",
			 from, i->date, i->budget, i->best_ratio, i->key, copied ? "; copied to the local cache" : "");
		return ST_SERVE_NEGATIVE;
	}
	if (!remote && !strcmp(i->sasstune_version, ST_VERSION_STRING))
		return ST_SERVE_TUNED;
	st_error err = {0};
	if (recheck(cubin, size, i, &err) != ST_OK) {
		/* A compile variant's cubin is not a rewrite of the stock one: the checker refuses it. */
		snprintf(msg, n, "entry %smade by sasstune %.40s not served: the checker refused it (%.300s%s%.40s)", from,
			 i->sasstune_version, err.msg, i->variant_ptxas_version ? "; made from a ptxas variant " : "",
			 i->variant_ptxas_version ? i->variant_ptxas_version : "");
		return ST_SERVE_MISS;
	}
	/* Passed: record it as ours (same key, variant kept), so that later hits need no re-check. */
	int stored = record_locally(cache, e);
	if (remote)
		snprintf(msg, n, "from Redis (made by sasstune %.40s), re-checked%s", i->sasstune_version,
			 stored ? " and copied to the local cache" : "");
	else
		snprintf(msg, n, "made by sasstune %.40s, re-checked%s", i->sasstune_version,
			 stored ? " and re-recorded" : "");
	return ST_SERVE_TUNED;
}

st_pass_serve st_pass__serve(const st_pass_settings *s, st_cache *cache, st_cache_entry *e, const uint8_t *cubin,
			     size_t size, char *msg, size_t n)
{
	return serve_entry(s, cache, e, cubin, size, msg, n, 0);
}

st_pass_serve st_pass__serve_remote(const st_pass_settings *s, st_cache *cache, st_cache_entry *e,
				    const uint8_t *cubin, size_t size, char *msg, size_t n)
{
	return serve_entry(s, cache, e, cubin, size, msg, n, 1);
}

st_status st_pass__check_budget(int64_t *seconds, const char *v, const char *from, st_error *err)
{
	st_error pe = {0};
	int64_t t = 0;
	if (st_cache_parse_duration(v, &t, &pe) != ST_OK)
		return st_error_set(err, ST_EINVAL, "%s: %s", from, pe.msg);
	if (t < 1)
		return st_error_set(err, ST_EINVAL, "%s: budget '%.40s' is not at least 1 s", from, v);
	*seconds = t;
	return ST_OK;
}

st_status st_pass__set_flag(int *flag, const char *v, const char *from, st_error *err)
{
	static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
	for (int i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i]) || !strcasecmp(v, no[i])) {
			*flag = !strcasecmp(v, yes[i]);
			return ST_OK;
		}
	}
	return st_error_set(err, ST_EINVAL, "%s: '%.40s' is not 1 or 0 (true/false, yes/no, on/off)", from, v);
}
