/* The fleet tier's Redis client (hiredis): get, store, list, remove, and the tuning lock with
 * its refresher thread.  Every call waits at most the handle's timeout for a connection and for
 * each reply; after a connection failure the handle fails at once (no second wait).  Layout and
 * trust rules: sasstune/cache_remote.h, docs/cache.md "Fleet".  Without hiredis (ST_HAVE_HIREDIS
 * unset) open says so and nothing else is reachable. */
#include "cache_internal.h"
#include "sasstune/cache_remote.h"

#include <stdlib.h>
#include <string.h>

#ifndef ST_HAVE_HIREDIS
int st_cache_remote_available(void) { return 0; }
st_status st_cache_remote_open(st_cache_remote **out, const char *url, const char *prefix, int timeout_ms,
			       st_error *err)
{
	*out = NULL;
	return st_error_set(err, ST_EUNSUPPORTED,
			    "this sasstune was built without hiredis: the Redis tier (%.100s) cannot be used "
			    "(rebuild with libhiredis-dev installed)", url ? url : "");
}
void st_cache_remote_free(st_cache_remote *r) { (void)r; }
#define NO_REMOTE st_error_set(err, ST_EUNSUPPORTED, "this sasstune was built without hiredis")
st_status st_cache_remote_lookup(st_cache_entry **out, st_cache_remote *r, const st_cache_key_fields *f,
				 st_error *err) { *out = NULL; return NO_REMOTE; }
st_status st_cache_remote_read(st_cache_entry **out, st_cache_remote *r, const char *key, st_error *err)
{ *out = NULL; return NO_REMOTE; }
st_status st_cache_remote_store(st_cache_remote *r, const st_cache_key_fields *f, const st_cache_record *rec,
				st_error *err) { return NO_REMOTE; }
st_status st_cache_remote_list(st_cache_remote *r, st_cache_remote_list_cb cb, void *payload, st_error *err)
{ return NO_REMOTE; }
st_status st_cache_remote_remove(st_cache_remote *r, const char *key, st_error *err) { return NO_REMOTE; }
st_status st_cache_remote_lock(st_remote_lock **out, st_cache_remote *r, const char *key, const char *owner,
			       int ttl_ms, char holder[256], st_error *err) { *out = NULL; return NO_REMOTE; }
void st_cache_remote_unlock(st_remote_lock *lock) { (void)lock; }
int st_cache_remote_locked(st_cache_remote *r, const char *key, st_error *err) { return NO_REMOTE; }
#else

#include "cache_redis.h"

#include <errno.h>
#include <stdio.h>

int st_cache_remote_available(void) { return 1; }

struct timeval st_cache__tv(int ms) { return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000}; }

/* The connection failed: remember it, so that later calls fail at once. */
static st_status conn_failed(st_cache_remote *r, const char *what, st_error *err)
{
	const char *e = r->c && r->c->errstr[0] ? r->c->errstr : "no connection";
	int timeout = (r->c && r->c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)) ||
		      strstr(e, "timed out") || strstr(e, "Resource temporarily");
	r->broken = timeout ? ST_ETIMEOUT : ST_EIO;
	snprintf(r->why, sizeof r->why, "Redis %.100s: %.20s: %.100s%s", r->where, what, e,
		 timeout ? " (timed out)" : "");
	return st_error_set(err, r->broken, "%s", r->why);
}

/* One command; *out is the reply (freed by the caller), never an error reply. */
st_status st_cache__redis_cmd(st_cache_remote *r, redisReply **out, int argc, const char **argv,
			      const size_t *lens, st_error *err)
{
	*out = NULL;
	if (r->broken)
		return st_error_set(err, r->broken, "%s", r->why);
	redisReply *rep = redisCommandArgv(r->c, argc, argv, lens);
	if (!rep)
		return conn_failed(r, argv[0], err);
	if (rep->type == REDIS_REPLY_ERROR) {
		st_error_set(err, ST_EIO, "Redis %s refused %s: %.200s", r->where, argv[0], rep->str ? rep->str : "");
		freeReplyObject(rep);
		return ST_EIO;
	}
	*out = rep;
	return ST_OK;
}

/* A command of NUL-terminated words. */
st_status st_cache__redis_cmdv(st_cache_remote *r, redisReply **out, int argc, const char **argv, st_error *err)
{
	size_t lens[8];
	for (int i = 0; i < argc && i < 8; i++)
		lens[i] = strlen(argv[i]);
	return st_cache__redis_cmd(r, out, argc, argv, lens, err);
}

static st_status login(st_cache_remote *r, const st_remote_url *u, st_error *err)
{
	redisReply *rep = NULL;
	st_status rc = ST_OK;
	if (u->password[0]) {
		const char *a[] = {"AUTH", u->user, u->password};
		rc = u->user[0] ? st_cache__redis_cmdv(r, &rep, 3, a, err) : st_cache__redis_cmdv(r, &rep, 2, (const char *[]){"AUTH", u->password}, err);
		freeReplyObject(rep);
	}
	if (rc == ST_OK && u->db) {
		char db[16];
		snprintf(db, sizeof db, "%d", u->db);
		rc = st_cache__redis_cmdv(r, &rep, 2, (const char *[]){"SELECT", db}, err);
		freeReplyObject(rep);
	}
	return rc;
}

st_status st_cache_remote_open(st_cache_remote **out, const char *url, const char *prefix, int timeout_ms,
			       st_error *err)
{
	*out = NULL;
	st_remote_url u;
	st_status rc = st_remote_parse_url(url, &u, err);
	if (rc != ST_OK)
		return rc;
	st_cache_remote *r = calloc(1, sizeof *r);
	if (!r || !(r->url = strdup(url)) || !(r->prefix = strdup(prefix ? prefix : ST_REMOTE_PREFIX))) {
		st_cache_remote_free(r);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	r->timeout_ms = timeout_ms > 0 ? timeout_ms : ST_REMOTE_TIMEOUT_MS;
	snprintf(r->where, sizeof r->where, "%s:%d/%d", u.host, u.port, u.db);
	r->c = redisConnectWithTimeout(u.host, u.port, st_cache__tv(r->timeout_ms));
	if (!r->c || r->c->err)
		rc = conn_failed(r, "connect", err);
	else if (redisSetTimeout(r->c, st_cache__tv(r->timeout_ms)) != REDIS_OK)
		rc = conn_failed(r, "set timeout", err);
	else
		rc = login(r, &u, err);
	memset(&u, 0, sizeof u); /* the password */
	if (rc != ST_OK) {
		st_cache_remote_free(r);
		return rc;
	}
	*out = r;
	return ST_OK;
}

void st_cache_remote_free(st_cache_remote *r)
{
	if (!r)
		return;
	if (r->c)
		redisFree(r->c);
	free(r->url);
	free(r->prefix);
	free(r);
}

/* <prefix>v1:<key>[suffix] */
void st_cache__redis_key(const st_cache_remote *r, const char *key, const char *suffix, char *out, size_t n)
{
	snprintf(out, n, "%s%s:%s%s", r->prefix, "v1", key, suffix);
}

st_status st_cache_remote_read(st_cache_entry **out, st_cache_remote *r, const char *key, st_error *err)
{
	*out = NULL;
	if (!st_cache__is_key(key))
		return st_error_set(err, ST_EINVAL, "'%.80s' is not a cache key (64 hex digits)", key);
	char k[1400];
	st_cache__redis_key(r, key, "", k, sizeof k);
	redisReply *rep;
	st_status rc = st_cache__redis_cmdv(r, &rep, 4, (const char *[]){"HMGET", k, "entry", "cubin"}, err);
	if (rc != ST_OK)
		return rc;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
		rc = st_error_set(err, ST_EFORMAT, "remote entry %.12s...: not a sasstune hash", key);
	} else {
		const redisReply *j = rep->element[0], *c = rep->element[1];
		if (j->type == REDIS_REPLY_NIL)
			rc = st_error_set(err, ST_ENOTFOUND, "no remote entry %.12s...", key);
		else if (j->type != REDIS_REPLY_STRING || (c->type != REDIS_REPLY_STRING && c->type != REDIS_REPLY_NIL))
			rc = st_error_set(err, ST_EFORMAT, "remote entry %.12s...: not a sasstune hash", key);
		else
			rc = st_cache_remote_parse(out, key, j->str, j->len, c->type == REDIS_REPLY_STRING ? c->str : NULL,
						   c->type == REDIS_REPLY_STRING ? c->len : 0, err);
	}
	freeReplyObject(rep);
	return rc;
}

st_status st_cache_remote_lookup(st_cache_entry **out, st_cache_remote *r, const st_cache_key_fields *fields,
				 st_error *err)
{
	*out = NULL;
	char key[65];
	st_status rc = st_cache_key(fields, key, err);
	if (rc == ST_OK)
		rc = st_cache_remote_read(out, r, key, err);
	if (rc == ST_OK && !st_cache__fields_match(fields, &(*out)->info)) {
		st_cache_entry_free(*out);
		*out = NULL;
		rc = st_error_set(err, ST_EFORMAT, "remote entry %.12s...: its fields differ from the ones looked up", key);
	}
	return rc;
}

/* MULTI: DEL, HSET entry [cubin], EXEC, pipelined: the hash is replaced as one, so a reader never
 * sees one store's entry with another's cubin (a negative entry has no cubin field).  A full
 * Redis refuses the queued HSET and EXEC aborts (scripts would bypass maxmemory). */
static st_status store_tx(st_cache_remote *r, const char *k, const char *json, const st_cache_record *rec,
			  st_error *err)
{
	const char *multi[] = {"MULTI"}, *exec[] = {"EXEC"}, *del[] = {"DEL", k};
	const char *hset[] = {"HSET", k, "entry", json, "cubin", (const char *)rec->tuned_cubin};
	size_t one[] = {5}, four[] = {4}, dl[] = {3, strlen(k)};
	size_t hl[] = {4, strlen(k), 5, strlen(json), 5, rec->negative ? 0 : rec->tuned_cubin_size};
	if (r->broken)
		return st_error_set(err, r->broken, "%s", r->why);
	redisAppendCommandArgv(r->c, 1, multi, one);
	redisAppendCommandArgv(r->c, 2, del, dl);
	redisAppendCommandArgv(r->c, rec->negative ? 4 : 6, hset, hl);
	redisAppendCommandArgv(r->c, 1, exec, four);
	st_status rc = ST_OK;
	for (int i = 0; i < 4; i++) {
		redisReply *rep = NULL;
		if (redisGetReply(r->c, (void **)&rep) != REDIS_OK || !rep)
			return conn_failed(r, "HSET", err);
		if (rep->type == REDIS_REPLY_ERROR && rc == ST_OK)
			rc = st_error_set(err, ST_EIO, "Redis %.100s refused HSET: %.200s", r->where, rep->str ? rep->str : "");
		freeReplyObject(rep);
	}
	return rc;
}

st_status st_cache_remote_store(st_cache_remote *r, const st_cache_key_fields *fields, const st_cache_record *rec,
				st_error *err)
{
	char key[65], k[1400], *json = NULL;
	st_status rc = st_cache_key(fields, key, err);
	if (rc == ST_OK)
		rc = st_cache__format_entry(&json, fields, rec, err);
	if (rc != ST_OK)
		return rc;
	st_cache__redis_key(r, key, "", k, sizeof k);
	rc = store_tx(r, k, json, rec, err);
	free(json);
	return rc;
}

st_status st_cache_remote_remove(st_cache_remote *r, const char *key, st_error *err)
{
	if (!st_cache__is_key(key))
		return st_error_set(err, ST_EINVAL, "'%.80s' is not a cache key (64 hex digits)", key);
	char k[1400], l[1400];
	st_cache__redis_key(r, key, "", k, sizeof k);
	st_cache__redis_key(r, key, ":lock", l, sizeof l);
	redisReply *rep;
	st_status rc = st_cache__redis_cmdv(r, &rep, 3, (const char *[]){"DEL", k, l}, err);
	freeReplyObject(rep);
	return rc;
}

int st_cache_remote_locked(st_cache_remote *r, const char *key, st_error *err)
{
	char l[1400];
	st_cache__redis_key(r, key, ":lock", l, sizeof l);
	redisReply *rep;
	st_status rc = st_cache__redis_cmdv(r, &rep, 2, (const char *[]){"EXISTS", l}, err);
	int held = rc == ST_OK && rep->type == REDIS_REPLY_INTEGER && rep->integer > 0;
	freeReplyObject(rep);
	return rc != ST_OK ? (int)rc : held;
}

#endif
