/* The Redis tier's tuning lock (SET NX PX, kept alive by a refresher thread) and its listing
 * (SCAN).  sasstune/cache_remote.h. */
#ifdef ST_HAVE_HIREDIS
#include "cache_internal.h"
#include "cache_redis.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Only the owner may extend or delete the lock: a lock that expired and was taken by another
 * process is left alone. */
static const char REFRESH_LUA[] =
	"if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
static const char UNLOCK_LUA[] =
	"if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

struct st_remote_lock {
	st_cache_remote *conn; /* the refresher's own connection (NULL: none could be made) */
	char key[1400], owner[256], ttl[24];
	int ttl_ms;
	pthread_t thread;
	int running, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static st_status run_script(st_remote_lock *l, const char *script, long long *result)
{
	if (!l->conn)
		return ST_EIO;
	redisReply *rep;
	st_status rc = st_cache__redis_cmdv(l->conn, &rep, 6, (const char *[]){"EVAL", script, "1", l->key, l->owner, l->ttl},
					    NULL);
	if (rc == ST_OK)
		*result = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
	freeReplyObject(rep);
	return rc;
}

/* Every ttl/3 extend the lock; stop when told, when the lock is no longer ours or Redis fails. */
static void *refresher(void *p)
{
	st_remote_lock *l = p;
	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		long ns = t.tv_nsec + (long)(l->ttl_ms / 3 % 1000) * 1000000L;
		t.tv_sec += l->ttl_ms / 3 / 1000 + ns / 1000000000L;
		t.tv_nsec = ns % 1000000000L;
		int w = 0;
		while (!l->stop && w != ETIMEDOUT)
			w = pthread_cond_timedwait(&l->cv, &l->mu, &t);
		if (l->stop)
			break;
		long long kept = 0;
		if (run_script(l, REFRESH_LUA, &kept) != ST_OK || !kept)
			break; /* lost: it will expire, or already belongs to another */
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

static st_status held_by(st_cache_remote *r, const char *lkey, char holder[256], st_error *err)
{
	redisReply *rep;
	if (holder)
		snprintf(holder, 256, "someone");
	if (holder && st_cache__redis_cmdv(r, &rep, 2, (const char *[]){"GET", lkey}, NULL) == ST_OK) {
		if (rep->type == REDIS_REPLY_STRING)
			snprintf(holder, 256, "%.*s", (int)(rep->len < 200 ? rep->len : 200), rep->str);
		freeReplyObject(rep);
	}
	return st_error_set(err, ST_ETIMEOUT, "another process holds the Redis tuning lock (%s)",
			    holder ? holder : "someone");
}

st_status st_cache_remote_lock(st_remote_lock **out, st_cache_remote *r, const char *key, const char *owner,
			       int ttl_ms, char holder[256], st_error *err)
{
	*out = NULL;
	if (!st_cache__is_key(key) || !owner || !*owner || strlen(owner) > 200 || ttl_ms < 3)
		return st_error_set(err, ST_EINVAL, "remote lock: bad key, owner or ttl");
	st_remote_lock *l = calloc(1, sizeof *l);
	if (!l)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	st_cache__redis_key(r, key, ":lock", l->key, sizeof l->key);
	snprintf(l->owner, sizeof l->owner, "%s", owner);
	snprintf(l->ttl, sizeof l->ttl, "%d", ttl_ms);
	l->ttl_ms = ttl_ms;
	redisReply *rep;
	st_status rc = st_cache__redis_cmdv(r, &rep, 6, (const char *[]){"SET", l->key, owner, "NX", "PX", l->ttl}, err);
	int taken = rc == ST_OK && rep->type == REDIS_REPLY_STATUS;
	freeReplyObject(rep);
	if (rc == ST_OK && !taken)
		rc = held_by(r, l->key, holder, err);
	if (rc != ST_OK) {
		free(l);
		return rc;
	}
	/* The refresher's connection; without one the lock still holds for ttl_ms. */
	if (st_cache_remote_open(&l->conn, r->url, r->prefix, r->timeout_ms, NULL) == ST_OK) {
		pthread_mutex_init(&l->mu, NULL);
		pthread_cond_init(&l->cv, NULL);
		l->running = pthread_create(&l->thread, NULL, refresher, l) == 0;
	}
	*out = l;
	return ST_OK;
}

void st_cache_remote_unlock(st_remote_lock *l)
{
	if (!l)
		return;
	if (l->running) {
		pthread_mutex_lock(&l->mu);
		l->stop = 1;
		pthread_cond_signal(&l->cv);
		pthread_mutex_unlock(&l->mu);
		pthread_join(l->thread, NULL);
	}
	if (l->conn) {
		long long gone = 0;
		run_script(l, UNLOCK_LUA, &gone);
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
		st_cache_remote_free(l->conn);
	}
	free(l);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The keys under the prefix: SCAN until the cursor comes back to 0 (bounded). */
static st_status scan_keys(st_cache_remote *r, char ***keys, size_t *n, st_error *err)
{
	char match[1400], cursor[32] = "0";
	st_cache__redis_key(r, "*", "", match, sizeof match);
	size_t plen = strlen(match) - 1, cap = 0;
	*keys = NULL;
	*n = 0;
	for (int round = 0; round < 1000000; round++) {
		redisReply *rep;
		st_status rc = st_cache__redis_cmdv(
			r, &rep, 6, (const char *[]){"SCAN", cursor, "MATCH", match, "COUNT", "1000"}, err);
		if (rc != ST_OK)
			return rc;
		if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 || rep->element[0]->type != REDIS_REPLY_STRING) {
			freeReplyObject(rep);
			return st_error_set(err, ST_EFORMAT, "Redis %s: unexpected SCAN reply", r->where);
		}
		snprintf(cursor, sizeof cursor, "%.*s", (int)rep->element[0]->len, rep->element[0]->str);
		const redisReply *ks = rep->element[1];
		for (size_t i = 0; ks->type == REDIS_REPLY_ARRAY && i < ks->elements; i++) {
			const redisReply *k = ks->element[i];
			if (k->type != REDIS_REPLY_STRING || k->len != plen + 64 || !st_cache__is_key(k->str + plen))
				continue; /* locks and foreign keys */
			if (*n == cap) {
				char **grown = realloc(*keys, (cap = cap ? 2 * cap : 64) * sizeof *grown);
				if (!grown) {
					freeReplyObject(rep);
					return st_error_set(err, ST_ENOMEM, "out of memory");
				}
				*keys = grown;
			}
			if (!((*keys)[*n] = strdup(k->str + plen))) {
				freeReplyObject(rep);
				return st_error_set(err, ST_ENOMEM, "out of memory");
			}
			(*n)++;
		}
		freeReplyObject(rep);
		if (!strcmp(cursor, "0"))
			break;
	}
	if (*n)
		qsort(*keys, *n, sizeof **keys, cmp_str);
	return ST_OK;
}

st_status st_cache_remote_list(st_cache_remote *r, st_cache_remote_list_cb cb, void *payload, st_error *err)
{
	char **keys;
	size_t n;
	st_status rc = scan_keys(r, &keys, &n, err);
	int stop = 0;
	for (size_t i = 0; rc == ST_OK && i < n && !stop; i++) {
		st_cache_entry *e = NULL;
		st_error pe = {0};
		st_status x = st_cache_remote_read(&e, r, keys[i], &pe);
		if (x == ST_OK || x == ST_EFORMAT)
			stop = cb(keys[i], e, x == ST_OK ? NULL : pe.msg, payload);
		else if (x != ST_ENOTFOUND) /* removed meanwhile: skip */
			rc = st_error_set(err, x, "%s", pe.msg);
		st_cache_entry_free(e);
	}
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return rc;
}
#else
typedef int st_cache_redis_lock_unused; /* ISO C: no empty translation unit */
#endif
