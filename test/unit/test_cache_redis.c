/* The fleet tier (sasstune/cache_remote.h) against a real redis-server on loopback
 * (redis_server.h): URL parsing, a round trip, tampered and foreign values refused, two
 * processes racing for one key's tuning lock (exactly one tunes, the other gets its result), a
 * killed lock owner (the lock expires, another takes it), the refresher keeping a lock alive,
 * Redis killed or stopped mid-run (a bounded error, no hang, no crash), and Redis full (writes
 * refused with OOM while the local cache goes on). */
#include "testutil.h"
#include "redis_server.h"
#include "sasstune/cache_remote.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char SHA[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static st_cache_key_fields fields_of(const char *kernel)
{
	return (st_cache_key_fields){.cubin_sha256 = SHA, .kernel = kernel, .gpu_name = "NVIDIA H200",
				     .compute_capability = "9.0", .driver_version = "580.65.06",
				     .ptxas_version = "12.8.93"};
}

static st_cache_record record_of(const uint8_t *cubin, size_t n, const char *method)
{
	return (st_cache_record){.schedule_json = "{\"k\":{\"swaps\":[[1,2]]}}", .verification_json = "{\"runs\":5}",
				 .speedup = 1.04, .speedup_low = 1.02, .speedup_high = 1.06, .method = method,
				 .budget = "10s", .tuned_cubin = cubin, .tuned_cubin_size = n};
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int setup(void **state)
{
	st_test_redis *s = calloc(1, sizeof *s);
	if (st_test_redis_start(s, NULL) != 0) {
		free(s);
		return -1;
	}
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	st_test_redis_stop(*state);
	free(*state);
	return 0;
}

static void test_cache_redis__url(void **state)
{
	(void)state;
	st_remote_url u;
	assert_int_equal(st_remote_parse_url("redis://cache.example:6380/3", &u, NULL), ST_OK);
	assert_string_equal(u.host, "cache.example");
	assert_int_equal(u.port, 6380);
	assert_int_equal(u.db, 3);
	assert_int_equal(st_remote_parse_url("redis://:s3cret@10.0.0.1", &u, NULL), ST_OK);
	assert_string_equal(u.password, "s3cret");
	assert_int_equal(u.port, 6379);
	assert_int_equal(st_remote_parse_url("redis://bob:pw@[::1]:7000/", &u, NULL), ST_OK);
	assert_string_equal(u.host, "::1");
	assert_string_equal(u.user, "bob");
	assert_int_equal(u.port, 7000);
	const char *bad[] = {"", "http://h", "redis://", "redis://h:0", "redis://h:65536", "redis://h:x",
			     "redis://h/db", "redis://[::1", "redis://user@h", "redis://h o", "redis://h:1/-1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		st_error err = {0};
		if (st_remote_parse_url(bad[i], &u, &err) != ST_EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_non_null(strstr(err.msg, "Redis URL"));
	}
}

static void test_cache_redis__round_trip(void **state)
{
	st_test_redis *s = *state;
	st_cache_remote *r;
	st_error err = {0};
	assert_int_equal(st_cache_remote_open(&r, s->url, "t1:", 0, &err), ST_OK);
	st_cache_key_fields f = fields_of("add_kernel");
	uint8_t cubin[300];
	for (size_t i = 0; i < sizeof cubin; i++)
		cubin[i] = (uint8_t)(i * 7); /* NULs included: the value is binary-safe */
	st_cache_entry *e;
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_ENOTFOUND);
	st_cache_record rec = record_of(cubin, sizeof cubin, "ppo");
	assert_int_equal(st_cache_remote_store(r, &f, &rec, &err), ST_OK);
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_OK);
	const st_cache_info *i = st_cache_entry_info(e);
	assert_int_equal(i->tuned_cubin_size, sizeof cubin);
	assert_memory_equal(i->tuned_cubin, cubin, sizeof cubin);
	assert_string_equal(i->method, "ppo");
	assert_string_equal(st_cache_entry_schedule(e), "{\"k\":{\"swaps\":[[1,2]]}}");
	char key[65];
	assert_int_equal(st_cache_key(&f, key, NULL), ST_OK);
	st_cache_entry_free(e);
	/* a negative entry replaces it, with no cubin left behind */
	st_cache_record neg = {.method = "ppo", .budget = "10s", .negative = 1, .best_ratio = 0.99, .why = "none"};
	assert_int_equal(st_cache_remote_store(r, &f, &neg, &err), ST_OK);
	assert_int_equal(st_cache_remote_read(&e, r, key, &err), ST_OK);
	assert_true(st_cache_entry_info(e)->negative);
	st_cache_entry_free(e);
	char hk[200];
	snprintf(hk, sizeof hk, "t1:v1:%s", key);
	assert_int_equal(st_test_redis_cmd(s, "HEXISTS %s cubin", hk), 0);
	/* another prefix does not see it; remove removes it */
	st_cache_remote *other;
	assert_int_equal(st_cache_remote_open(&other, s->url, "t2:", 0, &err), ST_OK);
	assert_int_equal(st_cache_remote_lookup(&e, other, &f, &err), ST_ENOTFOUND);
	st_cache_remote_free(other);
	assert_int_equal(st_cache_remote_remove(r, key, &err), ST_OK);
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_ENOTFOUND);
	st_cache_remote_free(r);
}

static int count_cb(const char *key, const st_cache_entry *e, const char *problem, void *payload)
{
	int *n = payload;
	n[e ? 0 : 1]++;
	(void)key; (void)problem;
	return 0;
}

/* A value changed in Redis is refused, whatever part was changed. */
static void test_cache_redis__tampered(void **state)
{
	st_test_redis *s = *state;
	st_cache_remote *r;
	st_error err = {0};
	assert_int_equal(st_cache_remote_open(&r, s->url, NULL, 0, &err), ST_OK);
	st_cache_key_fields f = fields_of("k");
	uint8_t cubin[64] = {1, 2, 3};
	st_cache_record rec = record_of(cubin, sizeof cubin, "ppo");
	assert_int_equal(st_cache_remote_store(r, &f, &rec, &err), ST_OK);
	char key[65], hk[200];
	st_cache_key(&f, key, NULL);
	snprintf(hk, sizeof hk, "sasstune:v1:%s", key);
	st_cache_entry *e;
	/* the cubin */
	assert_int_equal(st_test_redis_cmd(s, "HSET %s cubin %b", hk, "\x01\x02\x04", (size_t)3), 0);
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "does not match its recorded SHA-256"));
	/* the entry: a field edited (the key no longer is its hash) */
	assert_int_equal(st_cache_remote_store(r, &f, &rec, &err), ST_OK);
	assert_int_equal(st_test_redis_cmd(s, "EVAL %s 1 %s", "local j = redis.call('hget', KEYS[1], 'entry') "
						      "redis.call('hset', KEYS[1], 'entry', (string.gsub(j, '580.65.06', '580.65.07'))) return 1",
					  hk),
			 1);
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "does not match its fields"));
	/* foreign values: garbage, a hash without entry, another key's entry, a plain string */
	assert_int_equal(st_test_redis_cmd(s, "HSET %s entry garbage", hk), 0);
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_EFORMAT);
	st_cache_key_fields g = fields_of("other");
	assert_int_equal(st_cache_remote_store(r, &g, &rec, &err), ST_OK);
	char gk[65];
	st_cache_key(&g, gk, NULL);
	assert_true(st_test_redis_cmd(s, "EVAL %s 2 sasstune:v1:%s %s", "redis.call('copy', KEYS[1], KEYS[2], 'REPLACE') return 1",
				      gk, hk) == 1);
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_EFORMAT);
	/* an entry of other legality rules: never served */
	st_cache_key_fields old = fields_of("k");
	old.legality_version = "0";
	assert_int_equal(st_cache_remote_store(r, &old, &rec, &err), ST_OK);
	char ok[65];
	st_cache_key(&old, ok, NULL);
	assert_int_equal(st_cache_remote_read(&e, r, ok, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "legality version 0"));
	int n[2] = {0, 0};
	assert_int_equal(st_cache_remote_list(r, count_cb, n, &err), ST_OK);
	assert_int_equal(n[0], 1); /* "other" */
	assert_int_equal(n[1], 2); /* the copied one, the stale one */
	assert_int_equal(st_test_redis_cmd(s, "DEL %s", hk), 1);
	assert_int_equal(st_test_redis_cmd(s, "SET %s plain", hk), 0);
	assert_int_not_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_OK);
	st_cache_remote_free(r);
}

/* One racer: look up; on a miss take the lock; the winner "tunes" (stores its pid in the result)
 * while the loser polls until the result appears.  Exit status: 10 tuned, 20 got the result,
 * 1 anything else.  Bounded: at most 200 polls of 25 ms. */
static int racer(const char *url, int go_fd)
{
	char c;
	if (read(go_fd, &c, 1) != 1)
		return 1;
	st_cache_remote *r;
	if (st_cache_remote_open(&r, url, "race:", 1000, NULL) != ST_OK)
		return 1;
	st_cache_key_fields f = fields_of("race_kernel");
	char key[65], me[32];
	st_cache_key(&f, key, NULL);
	snprintf(me, sizeof me, "racer-%ld", (long)getpid());
	st_cache_entry *e;
	st_remote_lock *lock;
	int rc = 1;
	if (st_cache_remote_lookup(&e, r, &f, NULL) == ST_ENOTFOUND &&
	    st_cache_remote_lock(&lock, r, key, me, 5000, NULL, NULL) == ST_OK) {
		usleep(300 * 1000); /* tuning */
		st_cache_record rec = record_of((const uint8_t *)me, strlen(me), me);
		rc = st_cache_remote_store(r, &f, &rec, NULL) == ST_OK ? 10 : 1;
		st_cache_remote_unlock(lock);
	} else {
		for (int i = 0; i < 200 && rc == 1; i++) {
			if (st_cache_remote_lookup(&e, r, &f, NULL) == ST_OK) {
				const st_cache_info *in = st_cache_entry_info(e);
				rc = in->tuned_cubin_size == strlen(in->method) &&
						     !memcmp(in->tuned_cubin, in->method, in->tuned_cubin_size) &&
						     strcmp(in->method, me)
					     ? 20
					     : 1;
				st_cache_entry_free(e);
			} else {
				usleep(25 * 1000);
			}
		}
	}
	st_cache_remote_free(r);
	return rc;
}

static void test_cache_redis__two_processes_race(void **state)
{
	st_test_redis *s = *state;
	for (int round = 0; round < 3; round++) {
		assert_true(st_test_redis_cmd(s, "FLUSHDB") == 0);
		int go[2];
		assert_int_equal(pipe(go), 0);
		pid_t pid[2];
		for (int i = 0; i < 2; i++) {
			pid[i] = fork();
			if (pid[i] == 0) {
				close(go[1]);
				_exit(racer(s->url, go[0]));
			}
		}
		close(go[0]);
		assert_int_equal(write(go[1], "gg", 2), 2); /* both start together */
		close(go[1]);
		int tuned = 0, got = 0;
		for (int i = 0; i < 2; i++) {
			int st;
			assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
			assert_true(WIFEXITED(st));
			tuned += WEXITSTATUS(st) == 10;
			got += WEXITSTATUS(st) == 20;
		}
		assert_int_equal(tuned, 1);
		assert_int_equal(got, 1);
	}
}

/* The owner dies holding the lock: another cannot take it at once, but can once it expired. */
static void test_cache_redis__killed_lock_owner(void **state)
{
	st_test_redis *s = *state;
	char key[65];
	st_cache_key_fields f = fields_of("dead_owner");
	st_cache_key(&f, key, NULL);
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	if (pid == 0) {
		st_cache_remote *r;
		st_remote_lock *lock;
		if (st_cache_remote_open(&r, s->url, NULL, 0, NULL) != ST_OK ||
		    st_cache_remote_lock(&lock, r, key, "doomed-owner", 1000, NULL, NULL) != ST_OK)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause(); /* killed here, the refresher thread with it */
		_exit(1);
	}
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(kill(pid, SIGKILL), 0);
	waitpid(pid, NULL, 0);
	st_cache_remote *r;
	st_remote_lock *lock = NULL;
	char holder[256];
	assert_int_equal(st_cache_remote_open(&r, s->url, NULL, 0, NULL), ST_OK);
	assert_int_equal(st_cache_remote_lock(&lock, r, key, "heir", 1000, holder, NULL), ST_ETIMEOUT);
	assert_string_equal(holder, "doomed-owner");
	assert_int_equal(st_cache_remote_locked(r, key, NULL), 1);
	st_status rc = ST_ETIMEOUT;
	for (int i = 0; i < 100 && rc == ST_ETIMEOUT; i++) { /* expires within 1 s; at most 5 s */
		usleep(50 * 1000);
		rc = st_cache_remote_lock(&lock, r, key, "heir", 1000, holder, NULL);
	}
	assert_int_equal(rc, ST_OK);
	st_cache_remote_unlock(lock);
	assert_int_equal(st_cache_remote_locked(r, key, NULL), 0); /* released by its owner */
	st_cache_remote_free(r);
	close(ready[0]);
	close(ready[1]);
}

/* A live owner's lock outlives its ttl: the refresher extends it (ttl 1.5 s, held 4 s). */
static void test_cache_redis__lock_refreshed(void **state)
{
	st_test_redis *s = *state;
	char key[65];
	st_cache_key_fields f = fields_of("long_tuning");
	st_cache_key(&f, key, NULL);
	st_cache_remote *r;
	st_remote_lock *lock, *other = NULL;
	assert_int_equal(st_cache_remote_open(&r, s->url, NULL, 0, NULL), ST_OK);
	assert_int_equal(st_cache_remote_lock(&lock, r, key, "tuner", 1500, NULL, NULL), ST_OK);
	for (int i = 0; i < 8; i++) {
		usleep(500 * 1000);
		assert_int_equal(st_cache_remote_lock(&other, r, key, "other", 1500, NULL, NULL), ST_ETIMEOUT);
	}
	st_cache_remote_unlock(lock);
	assert_int_equal(st_cache_remote_lock(&other, r, key, "other", 1500, NULL, NULL), ST_OK);
	st_cache_remote_unlock(other);
	st_cache_remote_free(r);
}

/* Redis killed, or stopped (a slow Redis), mid-run: every call fails within its timeout, the
 * handle then fails at once, a fresh open fails fast; nothing hangs or crashes. */
static void test_cache_redis__redis_dies_or_stalls(void **state)
{
	st_test_redis *s = *state;
	st_cache_key_fields f = fields_of("k");
	st_cache_entry *e;
	st_cache_remote *r;
	st_error err = {0};
	assert_int_equal(st_cache_remote_open(&r, s->url, NULL, 200, &err), ST_OK);
	assert_int_equal(kill(s->pid, SIGSTOP), 0);
	double t0 = now_s();
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_ETIMEOUT);
	assert_non_null(strstr(err.msg, "timed out"));
	assert_int_equal(st_cache_remote_lookup(&e, r, &f, &err), ST_ETIMEOUT); /* at once, no second wait */
	assert_true(now_s() - t0 < 3.0);                                         /* 0.2 s, generous bound */
	st_cache_remote_free(r);
	kill(s->pid, SIGCONT);
	assert_int_equal(st_cache_remote_open(&r, s->url, NULL, 200, &err), ST_OK);
	st_test_redis_kill(s);
	t0 = now_s();
	uint8_t cubin[8] = {0};
	st_cache_record rec = record_of(cubin, sizeof cubin, "ppo");
	assert_int_not_equal(st_cache_remote_store(r, &f, &rec, &err), ST_OK);
	st_remote_lock *lock;
	char key[65];
	st_cache_key(&f, key, NULL);
	assert_int_not_equal(st_cache_remote_lock(&lock, r, key, "me", 1000, NULL, &err), ST_OK);
	st_cache_remote_free(r);
	assert_int_equal(st_cache_remote_open(&r, s->url, NULL, 200, &err), ST_EIO);
	assert_non_null(strstr(err.msg, "connect"));
	assert_true(now_s() - t0 < 3.0);
}

/* Redis full (maxmemory 1mb, noeviction): stores and locks are refused with Redis's OOM
 * error; reads still work and the local cache still takes the entry. */
static void test_cache_redis__full(void **state)
{
	(void)state;
	st_test_redis s;
	const char *const extra[] = {"--maxmemory", "1mb", "--maxmemory-policy", "noeviction", NULL};
	assert_int_equal(st_test_redis_start(&s, extra), 0);
	st_cache_remote *r;
	st_error err = {0};
	assert_int_equal(st_cache_remote_open(&r, s.url, NULL, 0, &err), ST_OK);
	size_t n = 256 << 10;
	uint8_t *big = calloc(1, n);
	st_status rc = ST_OK;
	char name[32];
	for (int i = 0; i < 40 && rc == ST_OK; i++) {
		snprintf(name, sizeof name, "fill%d", i);
		st_cache_key_fields f = fields_of(name);
		st_cache_record rec = record_of(big, n, "ppo");
		rc = st_cache_remote_store(r, &f, &rec, &err);
	}
	assert_int_equal(rc, ST_EIO);
	assert_non_null(strstr(err.msg, "OOM"));
	st_cache_key_fields f = fields_of("fill0");
	st_cache_entry *e;
	st_status got = st_cache_remote_lookup(&e, r, &f, &err); /* reads still work */
	assert_true(got == ST_OK || got == ST_ENOTFOUND); /* (1mb may be full before the first store) */
	st_cache_entry_free(e);
	char key[65];
	st_cache_key(&f, key, NULL);
	st_remote_lock *lock;
	assert_int_equal(st_cache_remote_lock(&lock, r, key, "me", 1000, NULL, &err), ST_EIO);
	st_cache_remote_free(r);
	/* the local tier is not affected */
	char dir[] = "/tmp/st-redis-full-XXXXXX";
	assert_non_null(mkdtemp(dir));
	st_cache *c;
	assert_int_equal(st_cache_open(&c, dir, NULL), ST_OK);
	st_cache_record rec = record_of(big, 64, "ppo");
	assert_int_equal(st_cache_store(c, &f, &rec, NULL), ST_OK);
	assert_int_equal(st_cache_remove(c, key, NULL), ST_OK);
	st_cache_free(c);
	rmdir(dir);
	free(big);
	st_test_redis_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_redis__url),
		cmocka_unit_test_setup_teardown(test_cache_redis__round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_redis__tampered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_redis__two_processes_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_redis__killed_lock_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_redis__lock_refreshed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_redis__redis_dies_or_stalls, setup, teardown),
		cmocka_unit_test(test_cache_redis__full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
