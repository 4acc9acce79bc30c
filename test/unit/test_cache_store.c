/* The cache folder: hits and misses, stale keys, corrupt and foreign entries
 * (ignored, then replaced), tuned-cubin checks, listing, removal, the tuning
 * lock across processes, and N forked writers hammering one key while readers
 * check that every entry they see is complete and self-consistent. */
#include "testutil.h"
#include "cache/cache_internal.h"
#include "util/util.h"

#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHA_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static char *make_tmpdir(void)
{
	char *d = strdup("/tmp/st-cache-test-XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_rf(char *d)
{
	nftw(d, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(d);
}

static st_cache_key_fields fields(const char *driver)
{
	return (st_cache_key_fields){.cubin_sha256 = SHA_A, .kernel = "add_kernel", .gpu_name = "NVIDIA H200",
			.compute_capability = "9.0", .driver_version = driver, .ptxas_version = "12.8.93"};
}

static st_cache_record record(const uint8_t *cubin, size_t n, const char *method)
{
	return (st_cache_record){.schedule_json = "{\"moves\":[[3,4]]}",
				 .verification_json = "{\"runs\":3}",
				 .speedup = 1.05, .speedup_low = 1.01, .speedup_high = 1.09,
				 .method = method, .budget = "1m",
				 .tuned_cubin = cubin, .tuned_cubin_size = n};
}

static char *entry_path(const char *dir, const st_cache_key_fields *f, const char *file)
{
	char key[65];
	assert_int_equal(st_cache_key(f, key, NULL), ST_OK);
	char *p = malloc(strlen(dir) + strlen(file) + 80);
	sprintf(p, "%s/v1/%s/%s", dir, key, file);
	return p;
}

static void write_text(const char *path, const char *text)
{
	assert_int_equal(st_write_file_atomic(path, text, strlen(text), NULL), ST_OK);
}

static int count_suffix(const char *folder, const char *suffix)
{
	DIR *d = opendir(folder);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), s = strlen(suffix);
		n += l >= s && !strcmp(e->d_name + l - s, suffix);
	}
	closedir(d);
	return n;
}

static void test_cache_store__miss_store_hit(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, dir, &err), ST_OK);
	assert_string_equal(st_cache_dir(c), dir);
	st_cache_key_fields f = fields("580.65.06");
	st_cache_entry *e;
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_ENOTFOUND);
	assert_null(e);

	uint8_t cubin[300];
	for (size_t i = 0; i < sizeof cubin; i++)
		cubin[i] = (uint8_t)(i * 13);
	st_cache_record r = record(cubin, sizeof cubin, "ppo");
	assert_int_equal(st_cache_store(c, &f, &r, &err), ST_OK);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_OK);
	const st_cache_info *i = st_cache_entry_info(e);
	assert_int_equal(i->tuned_cubin_size, sizeof cubin);
	assert_memory_equal(i->tuned_cubin, cubin, sizeof cubin);
	assert_string_equal(i->driver_version, "580.65.06");
	assert_string_equal(i->sasstune_version, "0.1.0");
	assert_true(i->time > 1600000000 && i->time <= (int64_t)time(NULL));
	st_cache_entry_free(e);

	/* a stale key (another driver) is never used */
	st_cache_key_fields g = fields("580.65.07");
	assert_int_equal(st_cache_lookup(&e, c, &g, &err), ST_ENOTFOUND);

	/* replacing keeps the current tuned cubin and the previous one (a reader may be between
	 * reading the previous entry and opening its cubin); the one before goes */
	char *folder = entry_path(dir, &f, "");
	char sha[65], first[512];
	st_cache_sha256_hex(cubin, sizeof cubin, sha);
	snprintf(first, sizeof first, "%s/%s.cubin", folder, sha);
	cubin[0] ^= 1;
	assert_int_equal(st_cache_store(c, &f, &r, &err), ST_OK);
	assert_int_equal(count_suffix(folder, ".cubin"), 2);
	assert_int_equal(access(first, F_OK), 0);
	cubin[0] ^= 2;
	assert_int_equal(st_cache_store(c, &f, &r, &err), ST_OK);
	assert_int_equal(count_suffix(folder, ".cubin"), 2);
	assert_int_equal(access(first, F_OK), -1);
	assert_int_equal(count_suffix(folder, "entry.json"), 1);
	free(folder);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_OK);
	assert_int_equal(st_cache_entry_info(e)->tuned_cubin[0], cubin[0]);
	st_cache_entry_free(e);

	/* a bad record is refused and leaves the entry alone */
	r.speedup = -1;
	assert_int_equal(st_cache_store(c, &f, &r, &err), ST_EINVAL);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_OK);
	st_cache_entry_free(e);
	st_cache_free(c);
	rm_rf(dir);
}

static void test_cache_store__corrupt_entries_ignored_then_replaced(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, dir, &err), ST_OK);
	st_cache_key_fields f = fields("1"), other = fields("2");
	uint8_t cubin[64] = {7};
	st_cache_record r = record(cubin, sizeof cubin, "greedy");
	assert_int_equal(st_cache_store(c, &f, &r, &err), ST_OK);
	assert_int_equal(st_cache_store(c, &other, &r, &err), ST_OK);
	char *epath = entry_path(dir, &f, "entry.json");
	char *opath = entry_path(dir, &other, "entry.json");
	char sha[65], cname[80];
	st_cache_sha256_hex(cubin, sizeof cubin, sha);
	snprintf(cname, sizeof cname, "%s.cubin", sha);
	char *cpath = entry_path(dir, &f, cname);
	uint8_t *good;
	size_t good_n;
	assert_int_equal(st_read_file(epath, &good, &good_n, NULL), ST_OK);

	static const struct {
		const char *text, *why;
	} bad[] = {
		{"{ \"schema\": 1, \"key\": ", "not a JSON object"},
		{"", "not a JSON object"},
		{"{\"schema\": 2}", "schema 2"},
		{"[]", "not a JSON object"},
	};
	st_cache_entry *e;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		write_text(epath, bad[i].text);
		assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_EFORMAT);
		assert_null(e);
		if (!strstr(err.msg, bad[i].why))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].why);
	}
	/* a foreign entry: another key's valid entry copied here */
	uint8_t *foreign;
	size_t fn;
	assert_int_equal(st_read_file(opath, &foreign, &fn, NULL), ST_OK);
	assert_int_equal(st_write_file_atomic(epath, foreign, fn, NULL), ST_OK);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "stored under"));
	free(foreign);

	/* tuned cubin altered, or missing */
	assert_int_equal(st_write_file_atomic(epath, good, good_n, NULL), ST_OK);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_OK);
	st_cache_entry_free(e);
	uint8_t evil[64] = {8};
	assert_int_equal(st_write_file_atomic(cpath, evil, sizeof evil, NULL), ST_OK);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "SHA-256"));
	unlink(cpath);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "missing"));

	/* a FIFO in place of the entry is refused, not waited on */
	unlink(epath);
	assert_int_equal(mkfifo(epath, 0644), 0);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "not a regular file"));
	unlink(epath);

	/* the next store replaces whatever was there */
	write_text(epath, "garbage");
	assert_int_equal(st_cache_store(c, &f, &r, &err), ST_OK);
	assert_int_equal(st_cache_lookup(&e, c, &f, &err), ST_OK);
	st_cache_entry_free(e);

	free(good);
	free(epath);
	free(opath);
	free(cpath);
	st_cache_free(c);
	rm_rf(dir);
}

struct listing {
	int valid, invalid, calls, stop_after;
	char last[65];
};

static int on_entry(const char *key, const st_cache_entry *e, const char *problem, int64_t mtime, void *payload)
{
	struct listing *l = payload;
	assert_true(strcmp(key, l->last) > 0); /* sorted */
	strcpy(l->last, key);
	assert_true(mtime > 0);
	if (e) {
		assert_null(problem);
		assert_string_equal(st_cache_entry_info(e)->key, key);
		l->valid++;
	} else {
		assert_non_null(problem);
		l->invalid++;
	}
	return ++l->calls == l->stop_after;
}

static void test_cache_store__list_read_remove(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, dir, &err), ST_OK);
	struct listing l = {0};
	assert_int_equal(st_cache_list(c, on_entry, &l, &err), ST_OK); /* no folder yet */
	assert_int_equal(l.calls, 0);
	uint8_t cubin[16] = {1};
	st_cache_record r = record(cubin, sizeof cubin, "ppo");
	char keys[3][65];
	for (int i = 0; i < 3; i++) {
		char drv[8];
		snprintf(drv, sizeof drv, "%d", i);
		st_cache_key_fields f = fields(drv);
		assert_int_equal(st_cache_store(c, &f, &r, &err), ST_OK);
		st_cache_key(&f, keys[i], NULL);
	}
	char *junk = malloc(strlen(dir) + 100);
	sprintf(junk, "%s/v1/not-a-key", dir);
	assert_int_equal(mkdir(junk, 0755), 0);
	sprintf(junk, "%s/v1/%s/entry.json", dir, keys[1]);
	write_text(junk, "{}");
	free(junk);

	memset(&l, 0, sizeof l);
	assert_int_equal(st_cache_list(c, on_entry, &l, &err), ST_OK);
	assert_int_equal(l.valid, 2);
	assert_int_equal(l.invalid, 1);
	memset(&l, 0, sizeof l);
	l.stop_after = 1;
	assert_int_equal(st_cache_list(c, on_entry, &l, &err), ST_OK);
	assert_int_equal(l.calls, 1);

	st_cache_entry *e;
	char prefix[13];
	snprintf(prefix, sizeof prefix, "%.12s", keys[0]);
	assert_int_equal(st_cache_read(&e, c, prefix, &err), ST_OK);
	assert_string_equal(st_cache_entry_info(e)->key, keys[0]);
	st_cache_entry_free(e);
	assert_int_equal(st_cache_read(&e, c, keys[2], &err), ST_OK);
	st_cache_entry_free(e);
	assert_int_equal(st_cache_read(&e, c, keys[1], &err), ST_EFORMAT);
	assert_int_equal(st_cache_read(&e, c, "abc", &err), ST_EINVAL);
	assert_int_equal(st_cache_read(&e, c, "ABCD", &err), ST_EINVAL);
	assert_int_equal(st_cache_read(&e, c, "../../etc", &err), ST_EINVAL);
	/* an unused prefix */
	char unused[5] = "0000";
	for (int i = 0; i < 16; i++) {
		unused[0] = "0123456789abcdef"[i];
		int used = 0;
		for (int k = 0; k < 3; k++)
			used |= !strncmp(keys[k], unused, 4);
		if (!used)
			break;
	}
	assert_int_equal(st_cache_read(&e, c, unused, &err), ST_ENOTFOUND);
	/* an ambiguous prefix: two folders sharing one */
	char *twin = malloc(strlen(dir) + 100);
	sprintf(twin, "%s/v1/%.60sffff", dir, keys[0]);
	if (strcmp(twin + strlen(dir) + 4, keys[0]) != 0) {
		assert_int_equal(mkdir(twin, 0755), 0);
		assert_int_equal(st_cache_read(&e, c, prefix, &err), ST_EINVAL);
		assert_non_null(strstr(err.msg, "matches 2"));
		rmdir(twin);
	}
	free(twin);

	assert_int_equal(st_cache_remove(c, keys[0], &err), ST_OK);
	assert_int_equal(st_cache_remove(c, keys[0], &err), ST_ENOTFOUND);
	assert_int_equal(st_cache_remove(c, "../x", &err), ST_EINVAL);
	memset(&l, 0, sizeof l);
	assert_int_equal(st_cache_list(c, on_entry, &l, &err), ST_OK);
	assert_int_equal(l.calls, 2);
	st_cache_free(c);
	rm_rf(dir);
}

static void test_cache_store__default_folder(void **state)
{
	(void)state;
	st_cache *c;
	st_error err;
	char *keep[3];
	const char *vars[3] = {"SASSTUNE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
	for (int i = 0; i < 3; i++)
		keep[i] = getenv(vars[i]) ? strdup(getenv(vars[i])) : NULL;
	setenv("SASSTUNE_CACHE_DIR", "/x/explicit", 1);
	setenv("XDG_CACHE_HOME", "/x/xdg", 1);
	setenv("HOME", "/x/home", 1);
	assert_int_equal(st_cache_open(&c, NULL, &err), ST_OK);
	assert_string_equal(st_cache_dir(c), "/x/explicit");
	st_cache_free(c);
	assert_int_equal(st_cache_open(&c, "/x/given", &err), ST_OK);
	assert_string_equal(st_cache_dir(c), "/x/given");
	st_cache_free(c);
	unsetenv("SASSTUNE_CACHE_DIR");
	assert_int_equal(st_cache_open(&c, NULL, &err), ST_OK);
	assert_string_equal(st_cache_dir(c), "/x/xdg/sasstune");
	st_cache_free(c);
	setenv("XDG_CACHE_HOME", "relative", 1); /* the XDG spec says to ignore relative paths */
	assert_int_equal(st_cache_open(&c, NULL, &err), ST_OK);
	assert_string_equal(st_cache_dir(c), "/x/home/.cache/sasstune");
	st_cache_free(c);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_int_equal(st_cache_open(&c, NULL, &err), ST_ENOTFOUND);
	assert_null(c);
	assert_non_null(strstr(err.msg, "SASSTUNE_CACHE_DIR"));
	for (int i = 0; i < 3; i++) {
		if (keep[i])
			setenv(vars[i], keep[i], 1);
		else
			unsetenv(vars[i]);
		free(keep[i]);
	}
}

static void test_cache_store__tune_lock_across_processes(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, dir, &err), ST_OK);
	char key[65];
	st_cache_key_fields f = fields("1");
	st_cache_key(&f, key, NULL);
	/* fork before locking: a child forked while the lock is held shares it until it exits */
	int go[2], done[2];
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	char b = 'x';
	if (pid == 0) {
		/* child: refused at once, then waits for the parent to release */
		st_cache_lock *l;
		if (read(go[0], &b, 1) != 1)
			_exit(9);
		int code = st_cache_lock_tune(&l, c, key, 0, NULL) == ST_ETIMEOUT ? 0 : 1;
		if (write(done[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(9);
		if (code == 0 && st_cache_lock_tune(&l, c, key, 5000, NULL) != ST_OK)
			code = 2;
		_exit(code);
	}
	st_cache_lock *lock, *again;
	assert_int_equal(st_cache_lock_tune(&lock, c, key, 0, &err), ST_OK);
	/* a second claim, even from this process, is refused */
	assert_int_equal(st_cache_lock_tune(&again, c, key, 30, &err), ST_ETIMEOUT);
	assert_null(again);
	assert_non_null(strstr(err.msg, "tune.lock"));
	assert_int_equal(write(go[1], &b, 1), 1);
	assert_int_equal(read(done[0], &b, 1), 1);
	assert_int_equal(write(go[1], &b, 1), 1);
	struct timespec nap = {0, 100 * 1000000};
	nanosleep(&nap, NULL);
	st_cache_unlock(lock);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the child exited holding it, as a crashed tuner would: the lock file stays, unheld */
	char *folder = malloc(strlen(dir) + 80);
	sprintf(folder, "%s/v1/%s", dir, key);
	struct stat st;
	assert_int_equal(stat(folder, &st), 0);
	assert_int_equal(st_cache_lock_tune(&lock, c, key, 0, &err), ST_OK);
	/* a proper unlock removes the lock-only folder */
	st_cache_unlock(lock);
	assert_int_equal(stat(folder, &st), -1);
	free(folder);
	st_cache_unlock(NULL);
	assert_int_equal(st_cache_lock_tune(&lock, c, "nokey", 0, &err), ST_EINVAL);
	close(go[0]); close(go[1]); close(done[0]); close(done[1]);
	st_cache_free(c);
	rm_rf(dir);
}

/* ---- N writers, M readers, one key ------------------------------------------------- */

#define WRITERS 6
#define STORES 25
#define READERS 3

static size_t cubin_size_for(int w, int i) { return 1000 + (size_t)w * 37 + (size_t)i; }

static int writer(st_cache *c, const st_cache_key_fields *f, int w)
{
	uint8_t *buf = malloc(cubin_size_for(WRITERS, STORES));
	for (int i = 0; i < STORES; i++) {
		size_t n = cubin_size_for(w, i);
		memset(buf, (w * 31 + i) & 255, n);
		char method[32], sched[64];
		snprintf(method, sizeof method, "writer-%d-%d", w, i);
		snprintf(sched, sizeof sched, "{\"w\":%d,\"i\":%d}", w, i);
		st_cache_record r = record(buf, n, method);
		r.schedule_json = sched;
		st_error err;
		if (st_cache_store(c, f, &r, &err) != ST_OK) {
			fprintf(stderr, "writer %d: %s\n", w, err.msg);
			free(buf);
			return 1;
		}
	}
	free(buf);
	return 0;
}

/* Reads until flag exists; every entry seen must be complete and consistent. */
static int reader(st_cache *c, const st_cache_key_fields *f, const char *flag)
{
	int hits = 0, seen = 0;
	for (;;) {
		int last = access(flag, F_OK) == 0;
		st_cache_entry *e;
		st_error err;
		st_status rc = st_cache_lookup(&e, c, f, &err);
		if (rc == ST_ENOTFOUND && !seen)
			goto next;
		if (rc != ST_OK) {
			fprintf(stderr, "reader: %s (%s)\n", st_status_str(rc), err.msg);
			return 1;
		}
		seen = 1;
		const st_cache_info *in = st_cache_entry_info(e);
		int w, i;
		char sched[64];
		int ok = sscanf(in->method, "writer-%d-%d", &w, &i) == 2 && w >= 0 && w < WRITERS && i >= 0 &&
			 i < STORES;
		if (ok) {
			snprintf(sched, sizeof sched, "{\"w\":%d,\"i\":%d}", w, i);
			ok = !strcmp(st_cache_entry_schedule(e), sched) && in->tuned_cubin_size == cubin_size_for(w, i);
			for (size_t k = 0; ok && k < in->tuned_cubin_size; k++)
				ok = in->tuned_cubin[k] == ((w * 31 + i) & 255);
		}
		st_cache_entry_free(e);
		if (!ok) {
			fprintf(stderr, "reader: inconsistent entry\n");
			return 1;
		}
		hits++;
	next:
		if (last)
			break;
	}
	return hits > 0 ? 0 : 1;
}

static void test_cache_store__concurrent_writers_and_readers(void **state)
{
	(void)state;
	char *dir = make_tmpdir();
	st_cache *c;
	assert_int_equal(st_cache_open(&c, dir, NULL), ST_OK);
	st_cache_key_fields f = fields("concurrent");
	char *flag = malloc(strlen(dir) + 16);
	sprintf(flag, "%s/done", dir);
	pid_t pids[WRITERS + READERS];
	for (int p = 0; p < WRITERS + READERS; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0)
			_exit(p < WRITERS ? writer(c, &f, p) : reader(c, &f, flag));
	}
	int failed = 0;
	for (int p = 0; p < WRITERS; p++) {
		int st;
		assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	write_text(flag, "done");
	for (int p = WRITERS; p < WRITERS + READERS; p++) {
		int st;
		assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	assert_int_equal(failed, 0);
	/* what is left: one entry, its tuned cubin and the previous one, no temporaries */
	st_cache_entry *e;
	assert_int_equal(st_cache_lookup(&e, c, &f, NULL), ST_OK);
	st_cache_entry_free(e);
	char *folder = entry_path(dir, &f, "");
	assert_true(count_suffix(folder, ".cubin") <= 2);
	DIR *d = opendir(folder);
	struct dirent *de;
	while ((de = readdir(d)))
		assert_null(strstr(de->d_name, ".tmp."));
	closedir(d);
	free(folder);
	free(flag);
	st_cache_free(c);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_store__miss_store_hit),
		cmocka_unit_test(test_cache_store__corrupt_entries_ignored_then_replaced),
		cmocka_unit_test(test_cache_store__list_read_remove),
		cmocka_unit_test(test_cache_store__default_folder),
		cmocka_unit_test(test_cache_store__tune_lock_across_processes),
		cmocka_unit_test(test_cache_store__concurrent_writers_and_readers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
