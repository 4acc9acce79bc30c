/* Cache keys: a SHA-256 over a canonical, length-prefixed serialisation of the
 * key fields, so that no two different field tuples share a key ("ab","c" and
 * "a","bc" serialise differently).  Also dates and durations. */
#include "cache_internal.h"
#include "sha256.h"
#include "sasstune/version.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *const field_names[] = {"cubin_sha256",   "kernel",        "gpu_name",        "compute_capability",
					  "driver_version", "ptxas_version", "sasstune_version"};

static const char *field_at(const st_cache_key_fields *f, int i)
{
	const char *v[] = {f->cubin_sha256,   f->kernel,	f->gpu_name,	   f->compute_capability,
			   f->driver_version, f->ptxas_version, f->sasstune_version};
	return v[i];
}

void st_cache_sha256_hex(const void *data, size_t size, char out[65])
{
	st_sha256 s;
	uint8_t d[ST_SHA256_SIZE];
	st_sha256_init(&s);
	st_sha256_update(&s, data, size);
	st_sha256_final(&s, d);
	st_sha256_hex(d, out);
}

int st_cache__is_key(const char *text)
{
	if (!text)
		return 0;
	for (int i = 0; i < 64; i++)
		if (!((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f')))
			return 0;
	return text[64] == '\0';
}

void st_cache__normalize(const st_cache_key_fields *in, st_cache_key_fields *out)
{
	*out = *in;
	const char **v[] = {&out->kernel, &out->gpu_name, &out->compute_capability, &out->driver_version,
			    &out->ptxas_version};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		if (!*v[i] || !**v[i])
			*v[i] = "unknown";
	if (!out->sasstune_version || !*out->sasstune_version)
		out->sasstune_version = ST_VERSION_STRING;
	if (out->variants && !*out->variants)
		out->variants = NULL; /* optional fields: "" is absent */
	if (out->ptxas_options && !*out->ptxas_options)
		out->ptxas_options = NULL;
}

/* "name=<length>:<value>\n" into the hash, after checking the value. */
static st_status hash_field(st_sha256 *s, const char *name, const char *v, st_error *err)
{
	size_t n = strnlen(v, ST_CACHE_FIELD_MAX + 1);
	if (n > ST_CACHE_FIELD_MAX)
		return st_error_set(err, ST_EINVAL, "cache key: %s is longer than %d bytes", name, ST_CACHE_FIELD_MAX);
	for (size_t j = 0; j < n; j++)
		if ((unsigned char)v[j] < 0x20 || v[j] == 0x7f)
			return st_error_set(err, ST_EINVAL, "cache key: %s has a control character at byte %zu", name, j);
	char head[64];
	int hn = snprintf(head, sizeof head, "%s=%zu:", name, n);
	st_sha256_update(s, head, (size_t)hn);
	st_sha256_update(s, v, n);
	st_sha256_update(s, "\n", 1);
	return ST_OK;
}

st_status st_cache_key(const st_cache_key_fields *fields, char key_out[65], st_error *err)
{
	key_out[0] = '\0';
	if (!fields)
		return st_error_set(err, ST_EINVAL, "cache key: no fields");
	if (!st_cache__is_key(fields->cubin_sha256))
		return st_error_set(err, ST_EINVAL, "cache key: cubin_sha256 is not 64 lowercase hex digits");
	st_cache_key_fields f;
	st_cache__normalize(fields, &f);

	st_sha256 s;
	st_sha256_init(&s);
	static const char tag[] = "sasstune-cache-key/1\n";
	st_sha256_update(&s, tag, sizeof tag - 1);
	st_status rc = ST_OK;
	for (int i = 0; rc == ST_OK && i < 7; i++)
		rc = hash_field(&s, field_names[i], field_at(&f, i), err);
	/* optional fields: hashed only when present, so keys made without them are unchanged */
	const char *opt[] = {fields->variants, fields->ptxas_options};
	static const char *const opt_names[] = {"variants", "ptxas_options"};
	for (int i = 0; rc == ST_OK && i < 2; i++)
		if (opt[i] && *opt[i])
			rc = hash_field(&s, opt_names[i], opt[i], err);
	if (rc != ST_OK)
		return rc;
	uint8_t d[ST_SHA256_SIZE];
	st_sha256_final(&s, d);
	st_sha256_hex(d, key_out);
	return ST_OK;
}

static int digits(const char *p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		*v = *v * 10 + (p[i] - '0');
	}
	return 1;
}

st_status st_cache__parse_date(const char *t, int64_t *time_out)
{
	int y, mo, d, h, mi, s;
	if (!t || strlen(t) != 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' ||
	    t[19] != 'Z' || !digits(t, 4, &y) || !digits(t + 5, 2, &mo) || !digits(t + 8, 2, &d) ||
	    !digits(t + 11, 2, &h) || !digits(t + 14, 2, &mi) || !digits(t + 17, 2, &s))
		return ST_EFORMAT;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return ST_EFORMAT;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = s};
	time_t tt = timegm(&tm);
	if (tt == (time_t)-1 || tm.tm_mday != d) /* timegm normalises 31 Feb into March */
		return ST_EFORMAT;
	*time_out = (int64_t)tt;
	return ST_OK;
}

void st_cache__format_date(int64_t t, char out[21])
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm) != 20)
		snprintf(out, 21, "1970-01-01T00:00:00Z");
}

st_status st_cache_parse_duration(const char *text, int64_t *seconds_out, st_error *err)
{
	if (!text || !*text)
		return st_error_set(err, ST_EINVAL, "empty duration (expected e.g. 30m, 12h, 7d)");
	int64_t n = 0;
	const char *p = text;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (INT64_MAX / 604800 - 9) / 10)
			return st_error_set(err, ST_EINVAL, "duration '%.40s' is too large", text);
		n = n * 10 + (*p - '0');
	}
	if (p == text)
		return st_error_set(err, ST_EINVAL, "duration '%.40s' does not start with a number", text);
	int64_t unit;
	switch (*p) {
	case '\0': case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	case 'w': unit = 604800; break;
	default:
		return st_error_set(err, ST_EINVAL, "duration '%.40s': unknown unit (use s, m, h, d or w)", text);
	}
	if (*p && p[1])
		return st_error_set(err, ST_EINVAL, "duration '%.40s': trailing characters after the unit", text);
	*seconds_out = n * unit;
	return ST_OK;
}
