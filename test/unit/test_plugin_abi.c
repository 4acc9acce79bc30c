/* The plugin ABI across versions, against the built libsasstune.so (dlopen, as
 * a foreign flow): a caller built for API 1 (its own copy of the v1 structs
 * below, records allocated to their exact size so that ASan catches any read
 * past them) keeps working; run2 with a v2 record gives the same key as run
 * when variants do not apply, another key when they do, and reads nothing past
 * the size the caller says. */
#include "testutil.h"
#include "sasstune/cache.h"
#include "sasstune/plugin.h"

#include <dlfcn.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* API 1 as a caller built against it saw it (do not "fix" to use plugin.h). */
struct v1_kernel {
	const char *kernel, *arch, *ptxas_version, *launch_json, *options_json;
};
struct v1_info {
	uint32_t api_version;
	const char *name, *version, *stage;
	int (*run)(const uint8_t *cubin, size_t size, const struct v1_kernel *kernel, st_plugin_result *result);
	void (*free_result)(st_plugin_result *result);
};

struct fixture {
	void *handle;
	const st_plugin_info *info;
	char dir[64];
	char opts_off[512], opts_on[512];
	uint8_t *cubin, *tuned;
	size_t size;
};

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	char path[4096];
	snprintf(path, sizeof path, "%s/libsasstune.so", getenv("ST_BUILD_DIR") ? getenv("ST_BUILD_DIR") : ".");
	f->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!f->handle) {
		fprintf(stderr, "test_plugin_abi: %s\n", dlerror());
		return -1;
	}
	void *sym = dlsym(f->handle, "sasstune_plugin_info");
	const st_plugin_info *(*entry)(void);
	memcpy(&entry, &sym, sizeof entry);
	f->info = entry();
	snprintf(f->dir, sizeof f->dir, "/tmp/st-plugin-abi-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	const char *fmt = "{\"cache_dir\": \"%s\", \"mode\": \"cache-only\", \"gpu_name\": \"NVIDIA H200\", "
			  "\"compute_capability\": \"9.0\", \"driver_version\": \"580.65.06\", \"variants\": \"%s\"}";
	snprintf(f->opts_off, sizeof f->opts_off, fmt, f->dir, "off");
	snprintf(f->opts_on, sizeof f->opts_on, fmt, f->dir, "on");
	unsetenv("SASSTUNE_PTXAS"); /* discovery then finds only the record's own ptxas */
	f->cubin = st_test_read("triton-sm90/add_f32_1M/sm_90.cubin", &f->size);
	f->tuned = malloc(f->size);
	memcpy(f->tuned, f->cubin, f->size);
	f->tuned[f->size - 1] ^= 0x5a;
	/* an entry under the plain key (what API 1 callers ask for) */
	char sha[65];
	st_cache_sha256_hex(f->cubin, f->size, sha);
	st_cache *c;
	st_error err;
	st_cache_key_fields k = {.cubin_sha256 = sha, .kernel = "add_kernel", .gpu_name = "NVIDIA H200",
				 .compute_capability = "9.0", .driver_version = "580.65.06", .ptxas_version = "12.8.93"};
	st_cache_record r = {.schedule_json = "{}", .verification_json = "{}", .speedup = 1.04, .speedup_low = 1.02,
			     .speedup_high = 1.06, .tuned_cubin = f->tuned, .tuned_cubin_size = f->size};
	if (st_cache_open(&c, f->dir, &err) != ST_OK || st_cache_store(c, &k, &r, &err) != ST_OK)
		return -1;
	st_cache_free(c);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f->cubin);
	free(f->tuned);
	dlclose(f->handle);
	free(f);
	return 0;
}

static void test_plugin_abi__info_v2_layout(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(f->info->api_version, 2);
	assert_non_null(f->info->run2);
	/* the v1 part did not move */
	const struct v1_info *v1 = (const struct v1_info *)(const void *)f->info;
	assert_ptr_equal((const void *)v1->name, (const void *)f->info->name);
	assert_string_equal(v1->stage, "after-ptxas");
	assert_true(offsetof(st_plugin_info, run2) >= sizeof(struct v1_info));
	assert_int_equal(offsetof(st_plugin_kernel2, size), sizeof(struct v1_kernel));
}

static void test_plugin_abi__v1_caller(void **state)
{
	struct fixture *f = *state;
	const struct v1_info *v1 = (const struct v1_info *)(const void *)f->info;
	assert_true(v1->api_version >= 1);
	struct v1_kernel *k = malloc(sizeof *k); /* exact size: a read past it is an ASan error */
	*k = (struct v1_kernel){"add_kernel", "sm_90", "12.8.93", NULL, f->opts_on};
	st_plugin_result r;
	assert_int_equal(v1->run(f->cubin, f->size, k, &r), 0);
	assert_int_equal(r.status, ST_PLUGIN_CACHED); /* no PTX: variants do not apply, the plain key */
	assert_memory_equal(r.cubin, f->tuned, f->size);
	v1->free_result(&r);
	free(k);
}

/* run2 with a record of `size` bytes (allocated to exactly that); returns the status. */
static st_plugin_status run2(struct fixture *f, size_t size, const char *opts, const char *ptx)
{
	st_plugin_kernel2 full = {.v1 = {.kernel = "add_kernel", .arch = "sm_90", .ptxas_version = "12.8.93",
					 .options_json = opts},
				  .size = size, .ptx = ptx, .ptxas_path = "/nonexistent/ptxas",
				  .ptxas_options = "-lineinfo --gpu-name=sm_90a"};
	st_plugin_kernel2 *k = malloc(size);
	memcpy(k, &full, size);
	st_plugin_result r;
	assert_int_equal(f->info->run2(f->cubin, f->size, k, &r), 0);
	free(k);
	if (r.status == ST_PLUGIN_CACHED)
		assert_memory_equal(r.cubin, f->tuned, f->size);
	else
		assert_memory_equal(r.cubin, f->cubin, f->size);
	st_plugin_status s = r.status;
	f->info->free_result(&r);
	return s;
}

static void test_plugin_abi__v2_records(void **state)
{
	struct fixture *f = *state;
	const char *ptx = ".version 8.7\n.target sm_90a\n.address_size 64\n";
	/* variants off, or no PTX: the same key as API 1 */
	assert_int_equal(run2(f, sizeof(st_plugin_kernel2), f->opts_off, ptx), ST_PLUGIN_CACHED);
	assert_int_equal(run2(f, sizeof(st_plugin_kernel2), f->opts_on, NULL), ST_PLUGIN_CACHED);
	assert_int_equal(run2(f, sizeof(st_plugin_kernel2), f->opts_on, ""), ST_PLUGIN_CACHED);
	/* variants on with PTX: the key names the variant set and base options, so a miss */
	assert_int_equal(run2(f, sizeof(st_plugin_kernel2), f->opts_on, ptx), ST_PLUGIN_UNCHANGED);
	/* a record whose size ends before ptx: ptx is absent (and never read) */
	assert_int_equal(run2(f, offsetof(st_plugin_kernel2, ptx), f->opts_on, ptx), ST_PLUGIN_CACHED);
	assert_int_equal(run2(f, sizeof(struct v1_kernel) + sizeof(size_t), f->opts_on, ptx), ST_PLUGIN_CACHED);
	/* NULL record: as run() with NULL */
	st_plugin_result r;
	assert_int_equal(f->info->run2(f->cubin, f->size, NULL, &r), 0);
	assert_true(r.status == ST_PLUGIN_UNCHANGED || r.status == ST_PLUGIN_ERROR);
	f->info->free_result(&r);
	assert_int_not_equal(f->info->run2(f->cubin, f->size, NULL, NULL), 0);
}

/* The key with variants on: stored under it, found by run2 with the same record only. */
static void test_plugin_abi__v2_variant_key_hits(void **state)
{
	struct fixture *f = *state;
	const char *ptx = ".version 8.7\n.target sm_90a\n.address_size 64\n";
	char sha[65];
	st_cache_sha256_hex(f->cubin, f->size, sha);
	/* what st_pass__variants_key makes for a record whose ptxas cannot be run: no version */
	st_cache_key_fields k = {.cubin_sha256 = sha, .kernel = "add_kernel", .gpu_name = "NVIDIA H200",
				 .compute_capability = "9.0", .driver_version = "580.65.06", .ptxas_version = "12.8.93",
				 .variants = "on:", .ptxas_options = "-lineinfo --gpu-name=sm_90a"};
	st_cache_record rec = {.schedule_json = "{}", .verification_json = "{}", .speedup = 1.1, .speedup_low = 1.05,
			       .speedup_high = 1.15, .tuned_cubin = f->tuned, .tuned_cubin_size = f->size,
			       .variant_ptxas_version = "12.8.93", .variant_options = ""};
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, f->dir, &err), ST_OK);
	assert_int_equal(st_cache_store(c, &k, &rec, &err), ST_OK);
	st_cache_free(c);
	assert_int_equal(run2(f, sizeof(st_plugin_kernel2), f->opts_on, ptx), ST_PLUGIN_CACHED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plugin_abi__info_v2_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plugin_abi__v1_caller, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plugin_abi__v2_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plugin_abi__v2_variant_key_hits, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
