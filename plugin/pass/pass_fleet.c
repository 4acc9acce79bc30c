/* The fleet tier within one run() call (docs/cache.md, "Fleet"): look a missed key up in Redis,
 * take the key's Redis tuning lock around tuning, publish what tuning stored locally.
 *
 * Faults never fail the call: Redis that cannot be reached, times out or errs is logged and the
 * call goes on with the local cache (and stock cubins).  A connection failure also writes a
 * marker, <cache dir>/redis-down-<hash of URL and prefix>, and while the marker is younger than
 * SASSTUNE_REDIS_RETRY (60 s) no call of any process using that cache folder tries Redis again
 * or logs about it: Redis down costs one timeout per window, and says so once per window.
 * The library keeps no state between calls: the marker is the memory. */
#include "pass_internal.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* <cache dir>/redis-down-<12 hex of SHA-256(url \n prefix)> */
static void marker_path(const st_pass_fleet *f, char *out, size_t n)
{
	char id[4400], sha[65];
	snprintf(id, sizeof id, "%s\n%s", f->set->redis.url, f->set->redis.prefix ? f->set->redis.prefix : "");
	st_cache_sha256_hex(id, strlen(id), sha);
	snprintf(out, n, "%s/redis-down-%.12s", st_cache_dir(f->cache), sha);
}

static int backing_off(const st_pass_fleet *f)
{
	char path[4400];
	struct stat st;
	marker_path(f, path, sizeof path);
	return stat(path, &st) == 0 && (int64_t)time(NULL) - (int64_t)st.st_mtime < f->set->redis.retry_s;
}

/* Redis failed: drop it for this call, and (unless already backing off) log once and mark. */
static void went_down(st_pass_fleet *f, const char *why)
{
	st_cache_remote_free(f->remote);
	f->remote = NULL;
	if (backing_off(f))
		return;
	char path[4400];
	marker_path(f, path, sizeof path);
	mkdir(st_cache_dir(f->cache), 0755); /* may not exist yet */
	st_write_file_atomic(path, why, strlen(why), NULL);
	st_pass__log(f->set, ST_LOG_WARN,
		     "%s: %s; going on with the local cache and stock cubins (Redis not tried again for %llds)", f->kernel,
		     why, (long long)f->set->redis.retry_s);
}

static st_cache_remote *connect_once(st_pass_fleet *f)
{
	if (f->remote || f->tried || !f->set->redis.url)
		return f->remote;
	f->tried = 1;
	if (backing_off(f)) {
		st_pass__log(f->set, ST_LOG_DEBUG, "%s: Redis failed lately, not tried", f->kernel);
		return NULL;
	}
	st_error err = {0};
	const st_pass_redis *s = &f->set->redis;
	if (st_cache_remote_open(&f->remote, s->url, s->prefix, s->timeout_ms, &err) != ST_OK)
		went_down(f, err.msg);
	return f->remote;
}

/* After a failed call: a connection failure ends Redis for the call; a refused command (e.g.
 * Redis full: OOM) is only logged. */
static void failed(st_pass_fleet *f, st_status rc, const char *what, const char *msg)
{
	if (rc == ST_EIO && strstr(msg, " refused ")) {
		st_pass__log(f->set, ST_LOG_WARN, "%s: %s: %s; going on with the local cache", f->kernel, what, msg);
		return;
	}
	went_down(f, msg);
}

st_status st_pass__fleet_lookup(st_pass_fleet *f, const st_cache_key_fields *fields, st_cache_entry **out)
{
	*out = NULL;
	if (!connect_once(f))
		return ST_ENOTFOUND;
	st_error err = {0};
	st_status rc = st_cache_remote_lookup(out, f->remote, fields, &err);
	if (rc == ST_EFORMAT)
		st_pass__log(f->set, ST_LOG_WARN, "%s: Redis entry refused: %s (a miss)", f->kernel, err.msg);
	else if (rc != ST_OK && rc != ST_ENOTFOUND)
		failed(f, rc, "Redis lookup", err.msg);
	return rc;
}

static void make_owner(char *out, size_t n)
{
	char host[64] = "?";
	gethostname(host, sizeof host - 1);
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	snprintf(out, n, "%.63s:%ld:%lx", host, (long)getpid(), (unsigned long)(t.tv_nsec ^ ((unsigned long)t.tv_sec << 20)));
}

st_pass_fleet_lock st_pass__fleet_lock(st_pass_fleet *f, const char *key)
{
	if (!connect_once(f))
		return ST_FLEET_OFF;
	const st_pass_redis *s = &f->set->redis;
	char owner[256];
	make_owner(owner, sizeof owner);
	/* wait: poll while held, at most the budget plus the lock's lifetime (a dead owner's expires) */
	int64_t polls = s->wait ? (f->set->budget_seconds + s->lock_ttl_s + 5) * 4 : 0;
	for (int64_t i = 0;; i++) {
		st_error err = {0};
		st_status rc = st_cache_remote_lock(&f->lock, f->remote, key, owner, s->lock_ttl_s * 1000, f->holder, &err);
		if (rc == ST_OK)
			return ST_FLEET_TAKEN;
		if (rc != ST_ETIMEOUT) {
			failed(f, rc, "Redis lock", err.msg);
			return ST_FLEET_OFF;
		}
		if (i >= polls)
			return ST_FLEET_HELD;
		if (i == 0)
			st_pass__log(f->set, ST_LOG_INFO, "%s: waiting for %s, who is tuning it (Redis lock)", f->kernel,
				     f->holder);
		int held;
		do { /* until the lock is gone: then try to take it */
			usleep(250 * 1000);
			held = st_cache_remote_locked(f->remote, key, &err);
		} while (held == 1 && ++i < polls);
		if (held < 0) {
			failed(f, (st_status)held, "Redis lock", err.msg);
			return ST_FLEET_OFF;
		}
	}
}

void st_pass__fleet_publish(st_pass_fleet *f, const st_cache_key_fields *fields, const char *unserved)
{
	st_cache_entry *e = NULL;
	if (f->remote && st_cache_lookup(&e, f->cache, fields, NULL) == ST_OK) {
		const st_cache_info *i = st_cache_entry_info(e);
		char id[96];
		snprintf(id, sizeof id, "%s %.64s", i->date, i->negative ? "negative" : i->tuned_sha256);
		st_cache_key_fields kf;
		st_cache_info_key_fields(i, &kf);
		st_cache_record rec;
		st_cache_entry_record(e, &rec);
		st_error err = {0};
		st_status rc = ST_OK;
		if (strcmp(id, unserved) != 0 && (rc = st_cache_remote_store(f->remote, &kf, &rec, &err)) == ST_OK)
			st_pass__log(f->set, ST_LOG_INFO, "%s: entry %.12s published to Redis", f->kernel, i->key);
		else if (rc != ST_OK)
			failed(f, rc, "not published to Redis", err.msg);
	}
	st_cache_entry_free(e);
	st_cache_remote_unlock(f->lock);
	f->lock = NULL;
}

void st_pass__fleet_end(st_pass_fleet *f)
{
	st_cache_remote_unlock(f->lock);
	f->lock = NULL;
	st_cache_remote_free(f->remote);
	f->remote = NULL;
}
