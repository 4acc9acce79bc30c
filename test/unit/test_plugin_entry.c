/* The pass entry as a foreign flow sees it: libsasstune.so loaded with dlopen
 * (ST_BUILD_DIR from ctest), sasstune_plugin_info() checked, run() on a Triton
 * fixture cubin: a miss returns the input, a hit after inserting an entry
 * returns the tuned bytes; settings from the environment and options_json;
 * corrupt entries, a held tuning lock and bad arguments never crash. */
#include "testutil.h"
#include "sasstune/cache.h"
#include "sasstune/plugin.h"
#include "util/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
	void *handle;
	const st_plugin_info *info;
	char *dir;
	char options[1024];
	uint8_t *cubin;
	size_t size;
	char sha[65];
};

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static const char *const env_vars[] = {"SASSTUNE_CACHE_DIR", "SASSTUNE_MODE", "SASSTUNE_BUDGET", "SASSTUNE_POLICY",
				       "SASSTUNE_LOG",	     "SASSTUNE_RETUNE"};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	const char *build = getenv("ST_BUILD_DIR");
	if (!build || !*build) {
		fprintf(stderr, "test_plugin_entry: ST_BUILD_DIR is not set (ctest sets it)\n");
		free(f);
		return -1;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/libsasstune.so", build);
	f->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!f->handle) {
		fprintf(stderr, "test_plugin_entry: %s\n", dlerror());
		free(f);
		return -1;
	}
	for (size_t i = 0; i < sizeof env_vars / sizeof env_vars[0]; i++)
		unsetenv(env_vars[i]);
	f->dir = strdup("/tmp/st-plugin-test-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->options, sizeof f->options,
		 "{\"cache_dir\": \"%s\", \"gpu_name\": \"NVIDIA H200\", \"compute_capability\": \"9.0\", "
		 "\"driver_version\": \"580.65.06\"}",
		 f->dir);
	f->cubin = st_test_read("triton-sm90/add_f32_1M/sm_90.cubin", &f->size);
	st_cache_sha256_hex(f->cubin, f->size, f->sha);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f->dir);
	free(f->cubin);
	dlclose(f->handle);
	free(f);
	return 0;
}

static const st_plugin_info *info_of(struct fixture *f)
{
	void *sym = dlsym(f->handle, "sasstune_plugin_info");
	assert_non_null(sym);
	const st_plugin_info *(*entry)(void);
	memcpy(&entry, &sym, sizeof entry);
	return entry();
}

static void assert_one_line(const char *m)
{
	assert_true(strlen(m) > 0);
	for (; *m; m++)
		assert_true((unsigned char)*m >= 0x20 && *m != 0x7f);
}

/* Run the pass and check the output is `expect` (when given); returns the status. */
static st_plugin_status run(struct fixture *f, const char *kernel, const char *options, const uint8_t *expect,
			    size_t expect_size, const char *msg_part)
{
	const st_plugin_info *info = info_of(f);
	st_plugin_kernel k = {.kernel = kernel, .arch = "sm_90", .ptxas_version = "12.8.93", .options_json = options};
	st_plugin_result r;
	assert_int_equal(info->run(f->cubin, f->size, &k, &r), 0);
	assert_one_line(r.message);
	if (msg_part && !strstr(r.message, msg_part))
		fail_msg("message '%s' lacks '%s'", r.message, msg_part);
	if (expect) {
		assert_int_equal(r.cubin_size, expect_size);
		assert_memory_equal(r.cubin, expect, expect_size);
	}
	st_plugin_status s = r.status;
	info->free_result(&r);
	assert_null(r.cubin);
	info->free_result(&r); /* twice is harmless */
	return s;
}

static void insert(struct fixture *f, const char *driver, const uint8_t *tuned, size_t n)
{
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, f->dir, &err), ST_OK);
	st_cache_key_fields k = {.cubin_sha256 = f->sha, .kernel = "add_kernel", .gpu_name = "NVIDIA H200",
			.compute_capability = "9.0", .driver_version = driver, .ptxas_version = "12.8.93"};
	st_cache_record r = {.schedule_json = "{\"add_kernel\":{\"swaps\":[[10,11]]}}",
			     .verification_json = "{\"runs\":5}",
			     .speedup = 1.04, .speedup_low = 1.02, .speedup_high = 1.06,
			     .method = "test", .budget = "0s",
			     .tuned_cubin = tuned, .tuned_cubin_size = n};
	assert_int_equal(st_cache_store(c, &k, &r, &err), ST_OK);
	st_cache_free(c);
}

/* A negative entry ("tuned with budget, nothing beat stock") or one made by another sasstune. */
static void insert_other(struct fixture *f, const char *kernel, const char *version, int negative, const char *budget,
			 const uint8_t *tuned, size_t n)
{
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, f->dir, &err), ST_OK);
	st_cache_key_fields k = {.cubin_sha256 = f->sha, .kernel = kernel, .gpu_name = "NVIDIA H200",
				 .compute_capability = "9.0", .driver_version = "580.65.06", .ptxas_version = "12.8.93",
				 .sasstune_version = version};
	st_cache_record r = {.schedule_json = "{}", .verification_json = "{}",
			     .speedup = 1.04, .speedup_low = 1.02, .speedup_high = 1.06,
			     .method = "ppo", .budget = budget, .date = "2026-12-01T10:00:00Z",
			     .tuned_cubin = tuned, .tuned_cubin_size = n,
			     .negative = negative, .best_ratio = 0.998, .why = "no schedule passed confirmation"};
	assert_int_equal(st_cache_store(c, &k, &r, &err), ST_OK);
	st_cache_free(c);
}

static void test_plugin_entry__negative_entries(void **state)
{
	struct fixture *f = *state;
	insert_other(f, "neg_kernel", NULL, 1, "300s", NULL, 0);
	/* served in every mode: the stock cubin, unchanged, the kernel is done */
	assert_int_equal(run(f, "neg_kernel", f->options, f->cubin, f->size,
			     "cached: nothing beat stock (tuned 2026-12-01T10:00:00Z, budget 300s"),
			 ST_PLUGIN_UNCHANGED);
	char opt[1400];
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"gpu_name\": \"NVIDIA H200\", \"compute_capability\": "
		 "\"9.0\", \"driver_version\": \"580.65.06\", \"mode\": \"cache-only\"}", f->dir);
	assert_int_equal(run(f, "neg_kernel", opt, f->cubin, f->size, "cached: nothing beat stock"), ST_PLUGIN_UNCHANGED);
	/* the same or a smaller budget: still served; a larger one: a miss, tuned again */
	setenv("SASSTUNE_BUDGET", "5m", 1);
	assert_int_equal(run(f, "neg_kernel", f->options, NULL, 0, "cached: nothing beat stock"), ST_PLUGIN_UNCHANGED);
	setenv("SASSTUNE_BUDGET", "10s", 1);
	assert_int_equal(run(f, "neg_kernel", f->options, NULL, 0, "cached: nothing beat stock"), ST_PLUGIN_UNCHANGED);
	setenv("SASSTUNE_BUDGET", "301", 1);
	assert_int_equal(run(f, "neg_kernel", opt, f->cubin, f->size, "retuning with 301s"), ST_PLUGIN_UNCHANGED);
	assert_int_equal(run(f, "neg_kernel", f->options, f->cubin, f->size, "tuning needs"), ST_PLUGIN_UNCHANGED);
	unsetenv("SASSTUNE_BUDGET");
	/* SASSTUNE_RETUNE=1: ignored; a bad value is an error naming the setting */
	setenv("SASSTUNE_RETUNE", "1", 1);
	assert_int_equal(run(f, "neg_kernel", opt, f->cubin, f->size, "negative entry ignored (SASSTUNE_RETUNE)"),
			 ST_PLUGIN_UNCHANGED);
	setenv("SASSTUNE_RETUNE", "maybe", 1);
	assert_int_equal(run(f, "neg_kernel", opt, f->cubin, f->size, "SASSTUNE_RETUNE"), ST_PLUGIN_ERROR);
	setenv("SASSTUNE_RETUNE", "off", 1);
	assert_int_equal(run(f, "neg_kernel", opt, f->cubin, f->size, "cached: nothing beat stock"), ST_PLUGIN_UNCHANGED);
	unsetenv("SASSTUNE_RETUNE");
}

static void test_plugin_entry__bad_budget_is_an_error(void **state)
{
	struct fixture *f = *state;
	setenv("SASSTUNE_BUDGET", "bogus", 1);
	assert_int_equal(run(f, "k", f->options, f->cubin, f->size, "SASSTUNE_BUDGET: duration 'bogus'"),
			 ST_PLUGIN_ERROR);
	unsetenv("SASSTUNE_BUDGET");
	char opt[1200];
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"budget\": \"0s\"}", f->dir);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "options_json \"budget\": budget '0s' is not at least 1 s"),
			 ST_PLUGIN_ERROR);
}

/* An entry made by another sasstune version is served only after the checker passes its cubin
 * again (and is then recorded as ours); one it refuses is a miss with a warning. */
static void test_plugin_entry__other_version_rechecked(void **state)
{
	struct fixture *f = *state;
	char nv[4096];
	snprintf(nv, sizeof nv, "%s/nvdisasm", getenv("ST_TRITON_BIN") ? getenv("ST_TRITON_BIN") : "");
	if (access(nv, X_OK) != 0)
		skip();
	setenv("SASSTUNE_NVDISASM", nv, 1);
	insert_other(f, "add_kernel", "0.0.9", 0, "1m", f->cubin, f->size);
	assert_int_equal(run(f, "add_kernel", f->options, f->cubin, f->size, "made by sasstune 0.0.9, re-checked and "
									   "re-recorded"),
			 ST_PLUGIN_CACHED);
	st_plugin_status s = run(f, "add_kernel", f->options, f->cubin, f->size, "cache hit");
	assert_int_equal(s, ST_PLUGIN_CACHED);
	/* a cubin of another kernel under this key: refused, a miss */
	size_t n;
	uint8_t *other = st_test_read("triton-sm90/softmax_f32_1024x1024/sm_90.cubin", &n);
	insert_other(f, "add_kernel", "0.0.9", 0, "1m", other, n);
	assert_int_equal(run(f, "add_kernel", f->options, f->cubin, f->size, "the checker refused it"),
			 ST_PLUGIN_UNCHANGED);
	free(other);
	unsetenv("SASSTUNE_NVDISASM");
}

static void test_plugin_entry__info_from_the_shared_library(void **state)
{
	struct fixture *f = *state;
	const st_plugin_info *info = info_of(f);
	assert_non_null(info);
	assert_int_equal(info->api_version, ST_PLUGIN_API_VERSION);
	assert_string_equal(info->name, "sasstune");
	assert_string_equal(info->stage, "after-ptxas");
	assert_non_null(info->version);
	assert_non_null(info->run);
	assert_non_null(info->free_result);
	Dl_info where;
	assert_true(dladdr((const void *)info, &where) != 0);
	assert_non_null(strstr(where.dli_fname, "libsasstune.so"));
}

static void test_plugin_entry__miss_then_hit(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(run(f, "add_kernel", f->options, f->cubin, f->size, "tuning needs"),
			 ST_PLUGIN_UNCHANGED);
	assert_int_equal(run(f, "add_kernel", f->options, NULL, 0, "cache miss"), ST_PLUGIN_UNCHANGED);

	uint8_t *tuned = malloc(f->size);
	memcpy(tuned, f->cubin, f->size);
	tuned[f->size - 1] ^= 0x5a; /* stands in for a rewritten cubin */
	insert(f, "580.65.06", tuned, f->size);
	assert_int_equal(run(f, "add_kernel", f->options, tuned, f->size, "cache hit"), ST_PLUGIN_CACHED);
	assert_int_equal(run(f, "add_kernel", f->options, NULL, 0, "1.040x"), ST_PLUGIN_CACHED);

	/* another driver, another kernel name, no GPU facts: stale or foreign keys are never used */
	char other[1200];
	snprintf(other, sizeof other, "{\"cache_dir\": \"%s\", \"gpu_name\": \"NVIDIA H200\", "
		 "\"compute_capability\": \"9.0\", \"driver_version\": \"580.65.07\"}", f->dir);
	assert_int_equal(run(f, "add_kernel", other, f->cubin, f->size, "cache miss"), ST_PLUGIN_UNCHANGED);
	assert_int_equal(run(f, "add_kernel2", f->options, f->cubin, f->size, NULL), ST_PLUGIN_UNCHANGED);
	snprintf(other, sizeof other, "{\"cache_dir\": \"%s\"}", f->dir);
	assert_int_equal(run(f, "add_kernel", other, f->cubin, f->size, NULL), ST_PLUGIN_UNCHANGED);

	/* the environment gives the cache folder when options_json does not */
	setenv("SASSTUNE_CACHE_DIR", f->dir, 1);
	const char *no_dir = "{\"gpu_name\": \"NVIDIA H200\", \"compute_capability\": \"9.0\", "
			     "\"driver_version\": \"580.65.06\"}";
	assert_int_equal(run(f, "add_kernel", no_dir, tuned, f->size, NULL), ST_PLUGIN_CACHED);
	unsetenv("SASSTUNE_CACHE_DIR");
	free(tuned);
}

static void test_plugin_entry__modes(void **state)
{
	struct fixture *f = *state;
	char opt[1200];
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"mode\": \"cache-only\"}", f->dir);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "cache-only"), ST_PLUGIN_UNCHANGED);
	/* mode capture: the flow records the launch; run() only looks up */
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"mode\": \"capture\"}", f->dir);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "; mode capture, stock cubin kept"), ST_PLUGIN_UNCHANGED);
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"mode\": \"policy\", \"policy\": \"p.bin\"}", f->dir);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "policy"), ST_PLUGIN_UNCHANGED);
	/* the environment, overridden by options_json */
	setenv("SASSTUNE_MODE", "bogus", 1);
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\"}", f->dir);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "SASSTUNE_MODE"), ST_PLUGIN_ERROR);
	setenv("SASSTUNE_MODE", "cache-only", 1);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "cache-only"), ST_PLUGIN_UNCHANGED);
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"mode\": \"tune\"}", f->dir);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "tuning needs"), ST_PLUGIN_UNCHANGED);
	unsetenv("SASSTUNE_MODE");
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"mode\": \"fast\\nplease\"}", f->dir);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "unknown mode"), ST_PLUGIN_ERROR);
}

static void test_plugin_entry__bad_options_and_arguments(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(run(f, "k", "[", f->cubin, f->size, "options_json"), ST_PLUGIN_ERROR);
	assert_int_equal(run(f, "k", "{\"mode\": 3}", f->cubin, f->size, "expected a string"), ST_PLUGIN_ERROR);
	assert_int_equal(run(f, "bad\nkernel", f->options, f->cubin, f->size, "control character"),
			 ST_PLUGIN_ERROR);
	setenv("SASSTUNE_LOG", "", 1); /* empty counts as unset */
	assert_int_equal(run(f, "k", f->options, f->cubin, f->size, NULL), ST_PLUGIN_UNCHANGED);
	unsetenv("SASSTUNE_LOG");

	const st_plugin_info *info = info_of(f);
	st_plugin_result r;
	st_plugin_kernel k = {.options_json = f->options};
	assert_int_not_equal(info->run(NULL, 10, &k, &r), 0);
	assert_int_equal(r.status, ST_PLUGIN_ERROR);
	assert_null(r.cubin);
	assert_int_not_equal(info->run(f->cubin, f->size, &k, NULL), 0);
	assert_int_equal(info->run(f->cubin, 0, &k, &r), 0);
	assert_int_equal(r.status, ST_PLUGIN_ERROR);
	assert_non_null(strstr(r.message, "empty"));
	info->free_result(&r);
	info->free_result(NULL);
	/* no kernel metadata at all: keyed as unknown, cache from the environment */
	setenv("SASSTUNE_CACHE_DIR", f->dir, 1);
	assert_int_equal(info->run(f->cubin, f->size, NULL, &r), 0);
	assert_int_equal(r.status, ST_PLUGIN_UNCHANGED);
	assert_memory_equal(r.cubin, f->cubin, f->size);
	info->free_result(&r);
	unsetenv("SASSTUNE_CACHE_DIR");
}

static void test_plugin_entry__corrupt_entry_and_log_file(void **state)
{
	struct fixture *f = *state;
	insert(f, "580.65.06", f->cubin, f->size);
	char key[65];
	st_cache_key_fields k = {.cubin_sha256 = f->sha, .kernel = "add_kernel", .gpu_name = "NVIDIA H200",
			.compute_capability = "9.0", .driver_version = "580.65.06", .ptxas_version = "12.8.93"};
	assert_int_equal(st_cache_key(&k, key, NULL), ST_OK);
	char path[2048], log[2048];
	snprintf(path, sizeof path, "%s/v1/%s/entry.json", f->dir, key);
	FILE *fp = fopen(path, "w");
	fputs("{\"schema\": 1, \"key\": \"trunc", fp);
	fclose(fp);
	snprintf(log, sizeof log, "%s/pass.log", f->dir);
	setenv("SASSTUNE_LOG", log, 1);
	char opt[1400];
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"gpu_name\": \"NVIDIA H200\", \"compute_capability\": "
		 "\"9.0\", \"driver_version\": \"580.65.06\", \"frobnicate\": [1]}", f->dir);
	assert_int_equal(run(f, "add_kernel", opt, f->cubin, f->size, "entry ignored"), ST_PLUGIN_UNCHANGED);
	unsetenv("SASSTUNE_LOG");
	size_t n;
	uint8_t *data;
	assert_int_equal(st_read_file(log, &data, &n, NULL), ST_OK);
	char *text = (char *)data;
	if (!strstr(text, "warning: add_kernel: options_json key 'frobnicate' is not known") ||
	    !strstr(text, "warning: add_kernel: cache entry ignored: entry is not a JSON object") ||
	    !strstr(text, "info: add_kernel: unchanged: cache miss"))
		fail_msg("log lacks the expected lines:\n%s", text);
	free(text);
	/* a tuner stores a good entry: the next run hits */
	insert(f, "580.65.06", f->cubin, f->size);
	assert_int_equal(run(f, "add_kernel", opt, f->cubin, f->size, "cache hit"), ST_PLUGIN_CACHED);
}

static void test_plugin_entry__tuning_lock_held_elsewhere(void **state)
{
	struct fixture *f = *state;
	char key[65];
	st_cache_key_fields k = {.cubin_sha256 = f->sha, .kernel = "locked_kernel", .gpu_name = "NVIDIA H200",
			.compute_capability = "9.0", .driver_version = "580.65.06", .ptxas_version = "12.8.93"};
	assert_int_equal(st_cache_key(&k, key, NULL), ST_OK);
	st_cache *c;
	st_cache_lock *lock;
	assert_int_equal(st_cache_open(&c, f->dir, NULL), ST_OK);
	assert_int_equal(st_cache_lock_tune(&lock, c, key, 0, NULL), ST_OK);
	assert_int_equal(run(f, "locked_kernel", f->options, f->cubin, f->size, "another process is tuning"),
			 ST_PLUGIN_UNCHANGED);
	st_cache_unlock(lock);
	assert_int_equal(run(f, "locked_kernel", f->options, f->cubin, f->size, "tuning needs"),
			 ST_PLUGIN_UNCHANGED);
	st_cache_free(c);
}

/* options_json "device" reaches the runtime: with the mock driver reporting one device, a
 * launch on device 1 is refused by the worker naming ordinal 1 (device 0 would open). */
static void test_plugin_entry__device_reaches_the_worker(void **state)
{
	struct fixture *f = *state;
	const char *build = getenv("ST_BUILD_DIR");
	char mock[4096], worker[4096], opt[1400];
	snprintf(mock, sizeof mock, "%s/test/libcuda_mock.so", build);
	snprintf(worker, sizeof worker, "%s/sasstune-worker", build);
	setenv("SASSTUNE_LIBCUDA", mock, 1);
	setenv("SASSTUNE_WORKER", worker, 1);
	setenv("MOCK_CUDA_DEVICES", "1", 1);
	size_t launch_size;
	uint8_t *launch = st_test_read("triton-sm90/add_f32_1M/launch.json", &launch_size);
	const st_plugin_info *info = info_of(f);
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"mode\": \"tune\", \"budget\": \"1s\", \"device\": \"1\"}",
		 f->dir);
	st_plugin_kernel k = {.kernel = "add_kernel", .arch = "sm_90", .ptxas_version = "12.8.93",
			      .launch_json = (const char *)launch, .options_json = opt};
	st_plugin_result r;
	assert_int_equal(info->run(f->cubin, f->size, &k, &r), 0);
	if (r.status != ST_PLUGIN_UNCHANGED || !strstr(r.message, "no CUDA device 1 (this machine has 1)"))
		fail_msg("status %d: %s", r.status, r.message);
	info->free_result(&r);
	/* not an ordinal: an error naming the setting */
	snprintf(opt, sizeof opt, "{\"cache_dir\": \"%s\", \"device\": \"cuda:1\"}", f->dir);
	assert_int_equal(run(f, "k", opt, f->cubin, f->size, "options_json \"device\""), ST_PLUGIN_ERROR);
	unsetenv("SASSTUNE_LIBCUDA");
	unsetenv("SASSTUNE_WORKER");
	unsetenv("MOCK_CUDA_DEVICES");
	free(launch);
}

/* ---- several threads of one process (Triton compiles on worker threads) ---------------- */

struct thread_arg {
	struct fixture *f;
	const st_plugin_info *info;
	const uint8_t *tuned;
	int id, bad;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	for (int i = 0; i < 20; i++) {
		/* even: the cached kernel; odd: one miss key shared by all threads (tune locks collide) */
		int hit = (i + a->id) % 2 == 0;
		st_plugin_kernel k = {.kernel = hit ? "add_kernel" : "shared_miss", .ptxas_version = "12.8.93",
				      .options_json = a->f->options};
		st_plugin_result r;
		if (a->info->run(a->f->cubin, a->f->size, &k, &r) != 0) {
			a->bad++;
			continue;
		}
		const uint8_t *want = hit ? a->tuned : a->f->cubin;
		if (r.status != (hit ? ST_PLUGIN_CACHED : ST_PLUGIN_UNCHANGED) || r.cubin_size != a->f->size ||
		    memcmp(r.cubin, want, a->f->size) != 0 ||
		    (!hit && !strstr(r.message, "tuning needs") && !strstr(r.message, "another process")))
			a->bad++;
		a->info->free_result(&r);
	}
	return NULL;
}

static void test_plugin_entry__threads(void **state)
{
	struct fixture *f = *state;
	uint8_t *tuned = malloc(f->size);
	memcpy(tuned, f->cubin, f->size);
	tuned[0] ^= 0x11;
	insert(f, "580.65.06", tuned, f->size);
	struct thread_arg args[4];
	pthread_t th[4];
	for (int t = 0; t < 4; t++) {
		args[t] = (struct thread_arg){.f = f, .info = info_of(f), .tuned = tuned, .id = t};
		assert_int_equal(pthread_create(&th[t], NULL, thread_main, &args[t]), 0);
	}
	for (int t = 0; t < 4; t++) {
		assert_int_equal(pthread_join(th[t], NULL), 0);
		assert_int_equal(args[t].bad, 0);
	}
	free(tuned);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugin_entry__info_from_the_shared_library),
		cmocka_unit_test(test_plugin_entry__miss_then_hit),
		cmocka_unit_test(test_plugin_entry__modes),
		cmocka_unit_test(test_plugin_entry__bad_options_and_arguments),
		cmocka_unit_test(test_plugin_entry__corrupt_entry_and_log_file),
		cmocka_unit_test(test_plugin_entry__tuning_lock_held_elsewhere),
		cmocka_unit_test(test_plugin_entry__device_reaches_the_worker),
		cmocka_unit_test(test_plugin_entry__threads),
		cmocka_unit_test(test_plugin_entry__negative_entries),
		cmocka_unit_test(test_plugin_entry__bad_budget_is_an_error),
		cmocka_unit_test(test_plugin_entry__other_version_rechecked),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
