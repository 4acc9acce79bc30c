/* sasstune: the fleet tier of the schedule cache, on Redis through hiredis.  docs/cache.md, "Fleet".
 *
 * A remote entry is the local entry's bytes: the hash <prefix>v1:<key> with fields "entry" (the
 * entry.json text) and "cubin" (the tuned cubin; absent for a negative entry), written by one
 * HSET, so a reader sees both parts of one store.  A read is refused (ST_EFORMAT, why) unless the
 * entry parses, its key is the SHA-256 of its own fields and the key asked for, the fields equal
 * the ones asked for, its legality version is this library's, and the cubin has the recorded size
 * and SHA-256.  The caller still re-checks the cubin with the checker before serving it (the pass
 * does, plugin/pass/pass_serve.c).  The tuning lock is <prefix>v1:<key>:lock, taken with
 * SET NX PX and kept alive by a thread of its own until unlocked; it expires if its owner dies.
 * Every call has a timeout (connect and each reply); a failed connection is ST_EIO or
 * ST_ETIMEOUT, a reply error (e.g. Redis full) ST_EIO naming it.  A handle is not thread-safe.
 * Built without hiredis, open fails with ST_EUNSUPPORTED ("built without hiredis"). */
#ifndef SASSTUNE_CACHE_REMOTE_H
#define SASSTUNE_CACHE_REMOTE_H

#include "sasstune/cache.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ST_REMOTE_TIMEOUT_MS 200      /* default connect and reply timeout */
#define ST_REMOTE_PREFIX "sasstune:"  /* default key prefix */
#define ST_REMOTE_VALUE_MAX (256u << 20) /* bytes of one remote value (entry or cubin) */

/* redis://[[user]:password@]host[:port][/db]; host a name, IPv4, or [IPv6]; port 1..65535
 * (default 6379); db 0..999999 (default 0).  Outside input: ST_EINVAL says what is wrong. */
typedef struct st_remote_url {
	char host[256], user[128], password[256];
	int port, db;
} st_remote_url;
st_status st_remote_parse_url(const char *url, st_remote_url *out, st_error *err);

typedef struct st_cache_remote st_cache_remote;
typedef struct st_remote_lock st_remote_lock;

/* Connect, authenticate, select the db.  prefix NULL: ST_REMOTE_PREFIX; timeout_ms <= 0: default. */
st_status st_cache_remote_open(st_cache_remote **out, const char *url, const char *prefix, int timeout_ms,
			       st_error *err);
void st_cache_remote_free(st_cache_remote *r);
int st_cache_remote_available(void); /* 1 when built with hiredis */

/* As st_cache_lookup: ST_OK, ST_ENOTFOUND, ST_EFORMAT (refused: err says why), ST_EIO/ST_ETIMEOUT. */
st_status st_cache_remote_lookup(st_cache_entry **out, st_cache_remote *r, const st_cache_key_fields *fields,
				 st_error *err);
st_status st_cache_remote_read(st_cache_entry **out, st_cache_remote *r, const char *key, st_error *err);
/* Check a remote value (both parts as fetched; cubin NULL for none) as a read does. */
st_status st_cache_remote_parse(st_cache_entry **out, const char *key, const void *json, size_t json_size,
				const void *cubin, size_t cubin_size, st_error *err);
st_status st_cache_remote_store(st_cache_remote *r, const st_cache_key_fields *fields, const st_cache_record *rec,
				st_error *err);
/* Every remote key under the prefix (SCAN), sorted; entry NULL when invalid (problem says why). */
typedef int (*st_cache_remote_list_cb)(const char *key, const st_cache_entry *entry, const char *problem,
				       void *payload);
st_status st_cache_remote_list(st_cache_remote *r, st_cache_remote_list_cb cb, void *payload, st_error *err);
st_status st_cache_remote_remove(st_cache_remote *r, const char *key, st_error *err);

/* Take the key's tuning lock for owner (printable, <= 200 bytes) for ttl_ms, refreshed every
 * ttl_ms/3 by a thread on its own connection until unlocked.  ST_ETIMEOUT: another owner holds it
 * (holder, when not NULL, gets its name).  Unlock deletes the lock only while it is still ours. */
st_status st_cache_remote_lock(st_remote_lock **out, st_cache_remote *r, const char *key, const char *owner,
			       int ttl_ms, char holder[256], st_error *err);
void st_cache_remote_unlock(st_remote_lock *lock);
/* 1 while someone holds the key's lock, 0 when none, < 0 (a status) on failure. */
int st_cache_remote_locked(st_cache_remote *r, const char *key, st_error *err);

#ifdef __cplusplus
}
#endif
#endif
