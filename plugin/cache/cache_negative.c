/* Negative entries: "tuned with these settings on this GPU, nothing beat stock".  They sit under
 * the same key as a tuned result would, hold no schedule and no cubin, and record the best
 * ratio seen and why nothing was kept (docs/cache.md).  Formatting and parsing of their
 * "negative" object; the rest of the entry (fields, provenance) is cache_entry.c's. */
#include "cache_internal.h"

#include <math.h>
#include <string.h>

#define WHY_MAX 1024 /* bytes of the reason kept */

static int printable(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (n >= WHY_MAX || (unsigned char)s[n] < 0x20 || s[n] == 0x7f)
			return 0;
	return 1;
}

static int ratio_ok(double r) { return isfinite(r) && r >= 0 && r < 1e6; }

st_status st_cache__format_negative(cJSON *root, const st_cache_record *rec, st_error *err)
{
	const char *why = rec->why && *rec->why ? rec->why : "unknown";
	if (!ratio_ok(rec->best_ratio))
		return st_error_set(err, ST_EINVAL, "cache record: best ratio %g is not a number in [0, 1e6)",
				    rec->best_ratio);
	if (!printable(why))
		return st_error_set(err, ST_EINVAL, "cache record: why is not a printable string of at most %d bytes",
				    WHY_MAX);
	cJSON *neg = cJSON_AddObjectToObject(root, "negative");
	if (!neg || !cJSON_AddNumberToObject(neg, "best_ratio", rec->best_ratio) ||
	    !cJSON_AddStringToObject(neg, "why", why))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	return ST_OK;
}

st_status st_cache__parse_negative(st_cache_entry *e, const cJSON *root, st_error *err)
{
	const cJSON *neg = cJSON_GetObjectItemCaseSensitive(root, "negative");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(neg, "best_ratio");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(neg, "why");
	if (!cJSON_IsObject(neg) || !cJSON_IsNumber(r) || !ratio_ok(r->valuedouble) || !cJSON_IsString(w) ||
	    !w->valuestring || !*w->valuestring || !printable(w->valuestring))
		return st_error_set(err, ST_EFORMAT, "negative entry needs a best_ratio in [0, 1e6) and a printable why");
	/* A negative entry names no cubin, no schedule and no variant (the variant a tuned cubin was
	 * made from): one that does is not ours. */
	if (cJSON_GetObjectItemCaseSensitive(root, "tuned_cubin") || cJSON_GetObjectItemCaseSensitive(root, "schedule") ||
	    cJSON_GetObjectItemCaseSensitive(root, "variant"))
		return st_error_set(err, ST_EFORMAT, "negative entry also has a schedule, a tuned cubin or a variant");
	e->info.negative = 1;
	e->info.best_ratio = r->valuedouble;
	e->info.why = w->valuestring;
	return ST_OK;
}
