/* The fleet tier's parts that need no Redis: the URL parser and the check of a remote value
 * (both outside input; test/fuzz/fuzz_remote.c).  cache_redis.c talks to the server. */
#include "cache_internal.h"
#include "sasstune/cache_remote.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Copy [s, s+n) into out (size cap) when printable and non-empty unless empty_ok. */
static int take(char *out, size_t cap, const char *s, size_t n, int empty_ok)
{
	if (n >= cap || (!n && !empty_ok))
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return 0;
	memcpy(out, s, n);
	out[n] = '\0';
	return 1;
}

/* Decimal in [lo, hi] spelled by exactly [s, s+n). */
static int number(const char *s, size_t n, long lo, long hi, int *out)
{
	if (!n || n > 7)
		return 0;
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	if (v < lo || v > hi)
		return 0;
	*out = (int)v;
	return 1;
}

/* A host name or IPv4 address (letters, digits, '.', '-', '_'), or, bracketed, an IPv6 address (hex
 * digits, ':', '.'; at least one ':'): what a reader can write back as redis://host or redis://[host]. */
static int host_ok(const char *h, int v6)
{
	const char *set = v6 ? "0123456789abcdefABCDEF:." : "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_";
	return h[0] && strspn(h, set) == strlen(h) && (!v6 || strchr(h, ':'));
}

#define BADURL(why) st_error_set(err, ST_EINVAL, "Redis URL '%.200s': %s (expected redis://host:port/db)", url, why)

/* host[:port] in [s, e): a name or IPv4 address, or [IPv6]. */
static st_status parse_hostport(const char *url, const char *s, const char *e, st_remote_url *o, st_error *err)
{
	const char *colon;
	if (*s == '[') {
		const char *close = memchr(s, ']', (size_t)(e - s));
		if (!close || !take(o->host, sizeof o->host, s + 1, (size_t)(close - s - 1), 0) || !host_ok(o->host, 1))
			return BADURL("bad [IPv6] host");
		colon = close + 1 < e ? close + 1 : NULL;
		if (colon && *colon != ':')
			return BADURL("junk after ]");
	} else {
		colon = memchr(s, ':', (size_t)(e - s));
		if (!take(o->host, sizeof o->host, s, (size_t)((colon ? colon : e) - s), 0) || !host_ok(o->host, 0))
			return BADURL("no host, or a bad one");
	}
	if (colon && !number(colon + 1, (size_t)(e - colon - 1), 1, 65535, &o->port))
		return BADURL("port is not 1..65535");
	return ST_OK;
}

st_status st_remote_parse_url(const char *url, st_remote_url *o, st_error *err)
{
	memset(o, 0, sizeof *o);
	o->port = 6379;
	if (!url)
		return st_error_set(err, ST_EINVAL, "no Redis URL");
	size_t len = strnlen(url, 2048);
	if (len >= 2048)
		return st_error_set(err, ST_EINVAL, "Redis URL longer than 2047 bytes");
	if (strncmp(url, "redis://", 8) != 0)
		return BADURL("not redis://");
	const char *s = url + 8, *end = url + len;
	const char *slash = memchr(s, '/', (size_t)(end - s));
	const char *hend = slash ? slash : end;
	const char *at = NULL;
	for (const char *p = s; p < hend; p++)
		if (*p == '@')
			at = p; /* the last '@' before the path ends the credentials */
	if (at) {
		const char *c = memchr(s, ':', (size_t)(at - s));
		if (!c)
			return BADURL("credentials need user:password or :password");
		if (!take(o->user, sizeof o->user, s, (size_t)(c - s), 1) ||
		    !take(o->password, sizeof o->password, c + 1, (size_t)(at - c - 1), 0))
			return BADURL("bad user or password");
		s = at + 1;
	}
	if (s == hend)
		return BADURL("no host");
	st_status rc = parse_hostport(url, s, hend, o, err);
	if (rc != ST_OK)
		return rc;
	if (slash && slash + 1 < end && !number(slash + 1, (size_t)(end - slash - 1), 0, 999999, &o->db))
		return BADURL("db is not a number 0..999999");
	return ST_OK;
}

st_status st_cache_remote_parse(st_cache_entry **out, const char *key, const void *json, size_t json_size,
				const void *cubin, size_t cubin_size, st_error *err)
{
	*out = NULL;
	if (!json)
		return st_error_set(err, ST_EFORMAT, "remote entry %.12s...: no entry part", key);
	if (json_size > ST_CACHE_ENTRY_MAX || cubin_size > ST_CACHE_CUBIN_MAX)
		return st_error_set(err, ST_EFORMAT, "remote entry %.12s...: too large", key);
	st_cache_entry *e;
	st_status rc = st_cache__parse_entry(&e, json, json_size, key, err); /* key = SHA-256 of its fields */
	if (rc != ST_OK)
		return rc;
	if (e->info.stale) {
		st_error_set(err, ST_EFORMAT, "remote entry %.12s...: legality version %.20s is not this library's (%s)",
			     key, e->info.legality_version, st_cache__legality_version());
		st_cache_entry_free(e);
		return ST_EFORMAT;
	}
	if (e->info.negative) {
		if (cubin) {
			st_cache_entry_free(e);
			return st_error_set(err, ST_EFORMAT, "remote entry %.12s...: negative but has a cubin", key);
		}
		*out = e;
		return ST_OK;
	}
	char sha[65];
	if (cubin)
		st_cache_sha256_hex(cubin, cubin_size, sha);
	if (!cubin || cubin_size != e->info.tuned_cubin_size || strcmp(sha, e->info.tuned_sha256) != 0) {
		st_cache_entry_free(e);
		return st_error_set(err, ST_EFORMAT, "remote entry %.12s...: tuned cubin %s its recorded SHA-256", key,
				    cubin ? "does not match" : "missing, expected by");
	}
	e->cubin = malloc(cubin_size ? cubin_size : 1);
	if (!e->cubin) {
		st_cache_entry_free(e);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	memcpy(e->cubin, cubin, cubin_size);
	e->info.tuned_cubin = e->cubin;
	*out = e;
	return ST_OK;
}
