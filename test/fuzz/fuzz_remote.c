/* Fuzz the fleet tier's outside input (sasstune/cache_remote.h): the Redis URL of SASSTUNE_REDIS
 * and the values read from Redis.  Input: a first byte 'U' then a URL, or anything else then a
 * value: 64 bytes of key, the entry text, and after a "\n--cubin--\n" line the cubin bytes (none:
 * no cubin field).  Besides not crashing: a parsed URL has a host, a port in 1..65535 and parses
 * again the same from its own parts; an accepted value has the key asked for, is not stale, and
 * its cubin (tuned entries) has the recorded size and SHA-256, or (negative ones) there is none. */
#include "cache/cache_internal.h"
#include "sasstune/cache_remote.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void url(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	st_remote_url u;
	st_error err;
	if (st_remote_parse_url(text, &u, &err) == ST_OK) {
		CHECK(u.host[0] && u.port >= 1 && u.port <= 65535 && u.db >= 0);
		char again[1200];
		int v6 = strchr(u.host, ':') != NULL; /* an IPv6 host goes back in brackets */
		snprintf(again, sizeof again, "redis://%s%s%s%s%s%s%s:%d/%d", u.user, u.password[0] ? ":" : "", u.password,
			 u.user[0] || u.password[0] ? "@" : "", v6 ? "[" : "", u.host, v6 ? "]" : "", u.port, u.db);
		st_remote_url v;
		CHECK(st_remote_parse_url(again, &v, &err) == ST_OK);
		CHECK(!strcmp(u.host, v.host) && u.port == v.port && u.db == v.db && !strcmp(u.password, v.password));
	} else {
		CHECK(err.msg[0] != '\0');
	}
	free(text);
}

static void value(const uint8_t *data, size_t size)
{
	if (size < 64)
		return;
	char key[65];
	memcpy(key, data, 64);
	key[64] = '\0';
	const char *json = (const char *)data + 64, *end = (const char *)data + size;
	static const char sep[] = "\n--cubin--\n";
	const char *cut = memmem(json, (size_t)(end - json), sep, sizeof sep - 1);
	const uint8_t *cubin = cut ? (const uint8_t *)cut + sizeof sep - 1 : NULL;
	size_t jsize = (size_t)((cut ? cut : end) - json), csize = cubin ? (size_t)(end - (const char *)cubin) : 0;
	st_cache_entry *e;
	st_error err;
	if (st_cache_remote_parse(&e, key, json, jsize, cubin, csize, &err) != ST_OK) {
		CHECK(e == NULL && err.msg[0] != '\0');
		return;
	}
	const st_cache_info *i = st_cache_entry_info(e);
	CHECK(!strcmp(i->key, key) && !i->stale);
	if (i->negative) {
		CHECK(!cubin && !i->tuned_cubin);
	} else {
		char sha[65];
		CHECK(i->tuned_cubin && i->tuned_cubin_size == csize);
		st_cache_sha256_hex(i->tuned_cubin, i->tuned_cubin_size, sha);
		CHECK(!strcmp(sha, i->tuned_sha256) && !memcmp(i->tuned_cubin, cubin, csize));
	}
	st_cache_entry_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size && data[0] == 'U')
		url(data + 1, size - 1);
	else if (size)
		value(data + 1, size - 1);
	return 0;
}
