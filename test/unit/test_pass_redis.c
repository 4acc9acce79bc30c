/* The pass with the fleet tier (SASSTUNE_REDIS) against a real redis-server (redis_server.h):
 * a local miss served from Redis (re-checked by the checker, copied locally, then a local hit);
 * a refused remote entry (checker, tampered bytes) is a miss; another machine's tuning lock
 * means stock, or with redis_locked=wait the other machine's result; Redis killed, stopped or
 * full: the stock cubin within the timeout, said once; bad settings name themselves. */
#include "testutil.h"
#include "redis_server.h"
#include "sasstune/cache_remote.h"
#include "sasstune/plugin.h"

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fx {
	st_test_redis redis;
	char dir[64], log[128], key[65], sha[65];
	uint8_t *cubin;
	size_t size;
	st_cache_key_fields fields;
};

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (st_test_redis_start(&f->redis, NULL) != 0)
		return -1;
	snprintf(f->dir, sizeof f->dir, "/tmp/st-pass-redis-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->log, sizeof f->log, "%s.log", f->dir);
	f->cubin = st_test_read("triton-sm90/add_f32_1M/sm_90.cubin", &f->size);
	st_cache_sha256_hex(f->cubin, f->size, f->sha);
	f->fields = (st_cache_key_fields){.cubin_sha256 = f->sha, .kernel = "add_kernel", .gpu_name = "NVIDIA H200",
					  .compute_capability = "9.0", .driver_version = "580.65.06",
					  .ptxas_version = "12.8.93"};
	st_cache_key(&f->fields, f->key, NULL);
	unsetenv("SASSTUNE_MODE");
	unsetenv("SASSTUNE_REDIS");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	st_test_redis_stop(&f->redis);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	unlink(f->log);
	free(f->cubin);
	free(f);
	return 0;
}

/* Run the pass (extra: more options_json members); returns the status, message in msg. */
static st_plugin_status run(struct fx *f, const char *extra, char msg[512])
{
	char opt[2048];
	snprintf(opt, sizeof opt,
		 "{\"cache_dir\": \"%s\", \"gpu_name\": \"NVIDIA H200\", \"compute_capability\": \"9.0\", "
		 "\"driver_version\": \"580.65.06\", \"redis\": \"%s\", \"log\": \"%s\"%s%s}",
		 f->dir, f->redis.url, f->log, extra ? ", " : "", extra ? extra : "");
	st_plugin_kernel k = {.kernel = "add_kernel", .arch = "sm_90", .ptxas_version = "12.8.93", .options_json = opt};
	st_plugin_result r;
	const st_plugin_info *info = sasstune_plugin_info();
	assert_int_equal(info->run(f->cubin, f->size, &k, &r), 0);
	snprintf(msg, 512, "%s", r.message);
	st_plugin_status s = r.status;
	if (s == ST_PLUGIN_CACHED)
		assert_true(r.cubin_size > 0);
	info->free_result(&r);
	return s;
}

static void put(struct fx *f, const uint8_t *tuned, size_t n)
{
	st_cache_remote *r;
	assert_int_equal(st_cache_remote_open(&r, f->redis.url, NULL, 0, NULL), ST_OK);
	st_cache_record rec = {.schedule_json = "{}", .verification_json = "{\"runs\":5}", .speedup = 1.04,
			       .speedup_low = 1.02, .speedup_high = 1.06, .method = "ppo", .budget = "10s",
			       .tuned_cubin = tuned, .tuned_cubin_size = n};
	assert_int_equal(st_cache_remote_store(r, &f->fields, &rec, NULL), ST_OK);
	st_cache_remote_free(r);
}

static char *read_log(struct fx *f)
{
	size_t n = 0;
	FILE *fp = fopen(f->log, "r");
	char *s = calloc(1, 1 << 16);
	if (fp) {
		n = fread(s, 1, (1 << 16) - 1, fp);
		fclose(fp);
	}
	s[n] = '\0';
	return s;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static int need_nvdisasm(void)
{
	static char nv[4096];
	snprintf(nv, sizeof nv, "%s/nvdisasm", getenv("ST_TRITON_BIN") ? getenv("ST_TRITON_BIN") : "");
	if (access(nv, X_OK) != 0)
		return 0;
	setenv("SASSTUNE_NVDISASM", nv, 1);
	return 1;
}

static void test_pass_redis__served_from_redis_then_local(void **state)
{
	struct fx *f = *state;
	char msg[512];
	if (!need_nvdisasm())
		skip();
	assert_int_equal(run(f, "\"mode\": \"cache-only\"", msg), ST_PLUGIN_UNCHANGED); /* nothing anywhere */
	put(f, f->cubin, f->size);
	assert_int_equal(run(f, "\"mode\": \"cache-only\"", msg), ST_PLUGIN_CACHED);
	if (!strstr(msg, "from Redis") || !strstr(msg, "re-checked and copied to the local cache"))
		fail_msg("%s", msg);
	st_test_redis_kill(&f->redis); /* the local copy serves from now on */
	assert_int_equal(run(f, NULL, msg), ST_PLUGIN_CACHED);
	assert_null(strstr(msg, "Redis"));
}

static void test_pass_redis__refused_entries_are_misses(void **state)
{
	struct fx *f = *state;
	char msg[512];
	if (!need_nvdisasm())
		skip();
	size_t n;
	uint8_t *other = st_test_read("triton-sm90/softmax_f32_1024x1024/sm_90.cubin", &n);
	put(f, other, n); /* well-formed, but not a rewrite of this kernel: the checker refuses it */
	assert_int_equal(run(f, "\"mode\": \"cache-only\"", msg), ST_PLUGIN_UNCHANGED);
	assert_non_null(strstr(msg, "cache miss"));
	put(f, f->cubin, f->size);
	char hk[128];
	snprintf(hk, sizeof hk, "sasstune:v1:%s", f->key);
	assert_int_equal(st_test_redis_cmd(&f->redis, "HSET %s cubin %b", hk, other, n), 0); /* bytes swapped */
	assert_int_equal(run(f, "\"mode\": \"cache-only\"", msg), ST_PLUGIN_UNCHANGED);
	char *log = read_log(f);
	assert_int_equal(count(log, "from Redis, made by sasstune"), 1);
	assert_int_equal(count(log, "the checker refused it"), 1);
	assert_int_equal(count(log, "Redis entry refused"), 1);
	assert_int_equal(count(log, "does not match its recorded SHA-256"), 1);
	free(log);
	free(other);
}

static void test_pass_redis__lock_held_by_another_machine(void **state)
{
	struct fx *f = *state;
	char msg[512];
	st_cache_remote *r;
	st_remote_lock *lock;
	assert_int_equal(st_cache_remote_open(&r, f->redis.url, NULL, 0, NULL), ST_OK);
	assert_int_equal(st_cache_remote_lock(&lock, r, f->key, "gpu-box-7:4242", 30000, NULL, NULL), ST_OK);
	assert_int_equal(run(f, "\"mode\": \"tune\"", msg), ST_PLUGIN_UNCHANGED);
	if (!strstr(msg, "another machine is tuning this kernel (Redis lock held by gpu-box-7:4242), stock cubin kept"))
		fail_msg("%s", msg);
	st_cache_remote_unlock(lock);
	/* free: this process takes it (and, with no GPU here, keeps the stock cubin), then frees it */
	assert_int_equal(run(f, "\"mode\": \"tune\"", msg), ST_PLUGIN_UNCHANGED);
	assert_null(strstr(msg, "another machine"));
	assert_int_equal(st_cache_remote_locked(r, f->key, NULL), 0);
	st_cache_remote_free(r);
}

/* redis_locked=wait: a process that finds another tuning waits for its result. */
static void test_pass_redis__wait_gets_the_other_result(void **state)
{
	struct fx *f = *state;
	char msg[512];
	if (!need_nvdisasm())
		skip();
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	if (pid == 0) { /* the other machine: holds the lock, "tunes" 0.5 s, stores, unlocks */
		st_cache_remote *r;
		st_remote_lock *lock;
		if (st_cache_remote_open(&r, f->redis.url, NULL, 0, NULL) != ST_OK ||
		    st_cache_remote_lock(&lock, r, f->key, "tuner-box", 5000, NULL, NULL) != ST_OK)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		usleep(500 * 1000);
		put(f, f->cubin, f->size);
		st_cache_remote_unlock(lock);
		st_cache_remote_free(r);
		_exit(0);
	}
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(run(f, "\"mode\": \"tune\", \"redis_locked\": \"wait\", \"budget\": \"5s\"", msg),
			 ST_PLUGIN_CACHED);
	assert_non_null(strstr(msg, "from Redis"));
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char *log = read_log(f);
	assert_non_null(strstr(log, "waiting for tuner-box"));
	free(log);
	close(ready[0]);
	close(ready[1]);
}

/* Redis gone or stalled: the stock cubin within the timeout, the failure said once, then Redis
 * is left alone for redis_retry. */
static void test_pass_redis__redis_down_or_stalled(void **state)
{
	struct fx *f = *state;
	char msg[512];
	assert_int_equal(kill(f->redis.pid, SIGSTOP), 0);
	double t0 = now_s();
	assert_int_equal(run(f, "\"mode\": \"tune\", \"redis_timeout\": \"200ms\"", msg), ST_PLUGIN_UNCHANGED);
	assert_true(now_s() - t0 < 3.0); /* one 0.2 s timeout, then none: a generous bound */
	st_test_redis_kill(&f->redis);
	for (int i = 0; i < 3; i++)
		assert_int_equal(run(f, "\"mode\": \"tune\"", msg), ST_PLUGIN_UNCHANGED);
	char *log = read_log(f);
	assert_int_equal(count(log, "going on with the local cache and stock cubins"), 1);
	assert_non_null(strstr(log, "timed out"));
	free(log);
	/* with no back-off each call tries (and says so) again */
	assert_int_equal(run(f, "\"mode\": \"tune\", \"redis_retry\": \"0\"", msg), ST_PLUGIN_UNCHANGED);
	log = read_log(f);
	assert_int_equal(count(log, "going on with the local cache and stock cubins"), 2);
	assert_non_null(strstr(log, "connect"));
	free(log);
}

static void test_pass_redis__full(void **state)
{
	struct fx *f = *state;
	char msg[512];
	st_test_redis_stop(&f->redis);
	const char *const extra[] = {"--maxmemory", "1mb", "--maxmemory-policy", "noeviction", NULL};
	assert_int_equal(st_test_redis_start(&f->redis, extra), 0);
	for (int i = 0; i < 20; i++)
		st_test_redis_cmd(&f->redis, "SET fill%d %b", i, f->cubin, f->size);
	assert_int_equal(run(f, "\"mode\": \"tune\"", msg), ST_PLUGIN_UNCHANGED);
	assert_null(strstr(msg, "another machine"));
	char *log = read_log(f);
	assert_non_null(strstr(log, "OOM"));
	assert_non_null(strstr(log, "going on with the local cache"));
	free(log);
}

static void test_pass_redis__bad_settings(void **state)
{
	struct fx *f = *state;
	char msg[512];
	setenv("SASSTUNE_REDIS", "http://cache:6379", 1);
	st_plugin_kernel k = {.kernel = "add_kernel", .options_json = NULL};
	st_plugin_result r;
	assert_int_equal(sasstune_plugin_info()->run(f->cubin, f->size, &k, &r), 0);
	assert_int_equal(r.status, ST_PLUGIN_ERROR);
	assert_non_null(strstr(r.message, "SASSTUNE_REDIS: Redis URL 'http://cache:6379': not redis://"));
	sasstune_plugin_info()->free_result(&r);
	unsetenv("SASSTUNE_REDIS");
	assert_int_equal(run(f, "\"redis_timeout\": \"soon\"", msg), ST_PLUGIN_ERROR);
	assert_non_null(strstr(msg, "options_json \"redis_timeout\""));
	assert_int_equal(run(f, "\"redis_locked\": \"maybe\"", msg), ST_PLUGIN_ERROR);
	assert_int_equal(run(f, "\"redis_lock_ttl\": \"0\"", msg), ST_PLUGIN_ERROR);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_pass_redis__served_from_redis_then_local), T(test_pass_redis__refused_entries_are_misses),
		T(test_pass_redis__lock_held_by_another_machine), T(test_pass_redis__wait_gets_the_other_result),
		T(test_pass_redis__redis_down_or_stalled),	   T(test_pass_redis__full),
		T(test_pass_redis__bad_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
