/* sasstune cache --redis URL list|show KEY|clear: the fleet tier (docs/cache.md, "Fleet").  Values
 * that a lookup would refuse (foreign, tampered, stale) are listed as invalid, like the folder's. */
#include "cli.h"
#include "cmd_cache.h"
#include "sasstune/cache_remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct rstate {
	const struct opts *o;
	cJSON *entries;
	int valid, invalid, negative, stale, oom;
	int64_t now, older; /* clear: older < 0 means all */
	char (*keys)[65];
	size_t n;
};

static int on_entry(const char *key, const st_cache_entry *e, const char *problem, void *payload)
{
	struct rstate *s = payload;
	const st_cache_info *i = st_cache_entry_info(e);
	e ? s->valid++ : s->invalid++;
	s->negative += i && i->negative;
	if (!strcmp(s->o->sub, "list"))
		return s->oom = st_cache_cli_list_entry(s->o->json, s->entries, key, i, problem);
	/* show (a key prefix) and clear collect keys; clear keeps the young (invalid ones are old) */
	if (!strcmp(s->o->sub, "show") ? strncmp(key, s->o->key, strlen(s->o->key)) != 0
				       : (s->older >= 0 && i && s->now - i->time <= s->older))
		return 0;
	char(*k)[65] = realloc(s->keys, (s->n + 1) * sizeof *k);
	if (!k)
		return s->oom = 1;
	s->keys = k;
	memcpy(s->keys[s->n++], key, 65);
	return 0;
}

static int show(st_cache_remote *r, struct rstate *s)
{
	if (s->n != 1) {
		st_cli_error("cache", s->n ? "key prefix %s is ambiguous in Redis" : "no entry %s in Redis", s->o->key);
		return ST_EXIT_FAIL;
	}
	st_cache_entry *e;
	st_error err = {0};
	st_status rc = st_cache_remote_read(&e, r, s->keys[0], &err);
	if (rc != ST_OK) {
		st_cli_error("cache", "%s", err.msg);
		return ST_EXIT_FAIL;
	}
	int code = s->o->json ? st_cache_cli_show_json(e) : st_cache_cli_show_text(e);
	st_cache_entry_free(e);
	return code;
}

static int clear(st_cache_remote *r, struct rstate *s, const char *where)
{
	st_error err = {0};
	int code = ST_EXIT_OK;
	cJSON *root = s->o->json ? cJSON_CreateObject() : NULL, *keys = root ? cJSON_AddArrayToObject(root, "removed") : NULL;
	for (size_t k = 0; k < s->n; k++) {
		if (st_cache_remote_remove(r, s->keys[k], &err) != ST_OK)
			code = st_cli_fail("cache", &err);
		else if (keys)
			cJSON_AddItemToArray(keys, cJSON_CreateString(s->keys[k]));
	}
	int kept = s->valid + s->invalid - (int)s->n;
	if (!root) {
		printf("removed %zu %s, kept %d, in %s\n", s->n, s->n == 1 ? "entry" : "entries", kept, where);
		return code;
	}
	cJSON_AddNumberToObject(root, "kept", kept);
	cJSON_AddStringToObject(root, "redis", where);
	int pc = st_cache_cli_print_json(root);
	return code != ST_EXIT_OK ? code : pc;
}

int st_cache_cli_remote(const struct opts *o)
{
	struct rstate s = {.o = o, .now = (int64_t)time(NULL), .older = -1};
	st_error err = {0};
	if (o->older && st_cache_parse_duration(o->older, &s.older, &err) != ST_OK) {
		st_cli_error("cache", "--older-than: %s", err.msg);
		return ST_EXIT_USAGE;
	}
	const char *prefix = o->prefix ? o->prefix : getenv("SASSTUNE_REDIS_PREFIX");
	const char *tm = getenv("SASSTUNE_REDIS_TIMEOUT");
	st_cache_remote *r;
	if (st_cache_remote_open(&r, o->redis, prefix && *prefix ? prefix : NULL, tm ? atoi(tm) : 0, &err) != ST_OK)
		return st_cli_fail("cache", &err);
	char where[2300];
	snprintf(where, sizeof where, "%.2000s (prefix %.200s)", o->redis, prefix && *prefix ? prefix : ST_REMOTE_PREFIX);
	cJSON *root = NULL;
	if (o->json && !strcmp(o->sub, "list")) {
		root = cJSON_CreateObject();
		s.entries = cJSON_AddArrayToObject(root, "entries");
		cJSON_AddStringToObject(root, "redis", where);
	}
	int code;
	if (st_cache_remote_list(r, on_entry, &s, &err) != ST_OK || s.oom || (o->json && !strcmp(o->sub, "list") && !s.entries)) {
		cJSON_Delete(root);
		code = s.oom || !err.msg[0] ? (st_cli_error("cache", "out of memory"), ST_EXIT_FAIL) : st_cli_fail("cache", &err);
	} else if (!strcmp(o->sub, "show")) {
		code = show(r, &s);
	} else if (!strcmp(o->sub, "clear")) {
		code = clear(r, &s, where);
	} else if (root) {
		code = st_cache_cli_print_json(root);
		code = code != ST_EXIT_OK ? code : s.invalid ? ST_EXIT_FAIL : ST_EXIT_OK;
	} else {
		printf("%d %s (%d negative, %d invalid) in %s\n", s.valid + s.invalid,
		       s.valid + s.invalid == 1 ? "entry" : "entries", s.negative, s.invalid, where);
		code = s.invalid ? ST_EXIT_FAIL : ST_EXIT_OK;
	}
	free(s.keys);
	st_cache_remote_free(r);
	return code;
}
