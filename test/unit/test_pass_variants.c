/* The pass's compile-variants stage without a GPU: how the setting and the
 * record resolve into the cache key's variant part (no PTX or off: the plain
 * key; auto: on only with two ptxas versions; on: always), how a pick folds
 * into the stored record, and that the stage falls back to stock (with a log
 * line saying why) instead of failing. */
#include "testutil.h"
#include "pass/pass_internal.h"

#include <dlfcn.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTX ".version 8.7\n.target sm_90a\n.address_size 64\n"

static st_pass_settings settings(st_pass_variants v)
{
	st_pass_settings s;
	memset(&s, 0, sizeof s);
	s.variants = v;
	return s;
}

static st_plugin_kernel2 record(const char *ptx, const char *ptxas)
{
	return (st_plugin_kernel2){.v1 = {.kernel = "add_kernel", .ptxas_version = "12.8.93"},
				   .size = sizeof(st_plugin_kernel2), .ptx = ptx, .ptxas_path = ptxas,
				   .ptxas_options = "-lineinfo --gpu-name=sm_90a"};
}

static void test_pass_variants__key_resolution(void **state)
{
	(void)state;
	unsetenv("SASSTUNE_PTXAS");
	st_pass_variants_key vk;
	st_cache_key_fields f = {0};
	/* no PTX (an API 1 caller): nothing, silently */
	st_pass_settings s = settings(ST_VARIANTS_ON);
	st_plugin_kernel2 k = record(NULL, "/nonexistent/ptxas");
	st_pass__variants_key(&s, &k, &vk, &f);
	assert_false(vk.run);
	assert_string_equal(vk.why, "");
	assert_null(f.variants);
	/* off */
	s = settings(ST_VARIANTS_OFF);
	k = record(PTX, "/nonexistent/ptxas");
	st_pass__variants_key(&s, &k, &vk, &f);
	assert_false(vk.run);
	assert_non_null(strstr(vk.why, "off"));
	assert_null(f.variants);
	assert_null(f.ptxas_options);
	/* auto with no usable ptxas: not enough versions */
	s = settings(ST_VARIANTS_AUTO);
	st_pass__variants_key(&s, &k, &vk, &f);
	assert_false(vk.run);
	assert_non_null(strstr(vk.why, "need 2"));
	assert_null(f.variants);
	/* on: runs whatever was found, and says so in the key */
	s = settings(ST_VARIANTS_ON);
	st_pass__variants_key(&s, &k, &vk, &f);
	assert_true(vk.run);
	assert_string_equal(f.variants, "on:");
	assert_string_equal(f.ptxas_options, "-lineinfo --gpu-name=sm_90a");
}

/* Triton's bundled ptxas (12.8) has ptxas-blackwell (12.9) beside it: auto turns on. */
static void test_pass_variants__auto_with_triton_binaries(void **state)
{
	(void)state;
	const char *bin = getenv("ST_TRITON_BIN");
	char path[4096];
	snprintf(path, sizeof path, "%s/ptxas-blackwell", bin ? bin : "");
	if (!bin || access(path, X_OK) != 0)
		skip();
	snprintf(path, sizeof path, "%s/ptxas", bin);
	unsetenv("SASSTUNE_PTXAS");
	st_pass_settings s = settings(ST_VARIANTS_AUTO);
	st_plugin_kernel2 k = record(PTX, path);
	st_pass_variants_key vk;
	st_cache_key_fields f = {0};
	st_pass__variants_key(&s, &k, &vk, &f);
	assert_true(vk.run);
	assert_non_null(strstr(f.variants, "on:12.8.93,12.9."));
	/* the same call twice: the same key part (sorted, deterministic) */
	st_pass_variants_key vk2;
	st_cache_key_fields f2 = {0};
	st_pass__variants_key(&s, &k, &vk2, &f2);
	assert_string_equal(f.variants, f2.variants);
}

static void test_pass_variants__record_folding(void **state)
{
	(void)state;
	st_pass_variant_pick pick;
	memset(&pick, 0, sizeof pick);
	st_cache_record rec = {.speedup = 1.05, .speedup_low = 1.04, .speedup_high = 1.06};
	st_pass__variant_record(&pick, &rec); /* variants did not run: untouched */
	assert_true(rec.speedup == 1.05 && !rec.variant_ptxas_version);
	pick.ran = true;
	pick.speedup = 1.02;
	pick.lo = 1.01;
	pick.hi = 1.03;
	snprintf(pick.ptxas_version, sizeof pick.ptxas_version, "13.5.37");
	snprintf(pick.options, sizeof pick.options, "--register-usage-level 0");
	st_pass__variant_record(&pick, &rec);
	assert_float_equal(rec.speedup, 1.05 * 1.02, 1e-12);
	assert_float_equal(rec.speedup_low, 1.04 * 1.01, 1e-12);
	assert_float_equal(rec.speedup_high, 1.06 * 1.03, 1e-12);
	assert_string_equal(rec.variant_ptxas_version, "13.5.37");
	assert_string_equal(rec.variant_options, "--register-usage-level 0");
	/* a winner stored alone: the record's speedup is the winner's */
	st_cache_record alone = {0};
	st_pass__variant_record(&pick, &alone);
	assert_true(alone.speedup == 1.02 && alone.speedup_low == 1.01 && alone.speedup_high == 1.03);
	char *v = st_pass__variant_verification(&pick);
	assert_non_null(v);
	assert_non_null(strstr(v, "\"ptxas_version\":\"13.5.37\""));
	free(v);
}

static void test_pass_variants__stage_falls_back_to_stock(void **state)
{
	(void)state;
	st_pass_variants_key vk = {.run = false};
	snprintf(vk.why, sizeof vk.why, "variants off");
	st_plugin_kernel2 k = record(PTX, "/nonexistent/ptxas");
	uint8_t cubin[4] = {0x7f, 'E', 'L', 'F'};
	st_pass_variant_pick pick;
	st_pass__variants_run(&vk, &k, cubin, sizeof cubin, "add_kernel", NULL, &pick);
	assert_null(pick.cubin);
	assert_false(pick.ran);
	assert_non_null(strstr(pick.log, "variants off, stock cubin tuned"));
	vk.why[0] = '\0';
	st_pass__variants_run(&vk, &k, cubin, sizeof cubin, "add_kernel", NULL, &pick);
	assert_string_equal(pick.log, "");

	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (cuda) {
		dlclose(cuda);
		return; /* a driver here: the stage would really compile */
	}
	vk.run = true;
	st_pass__variants_run(&vk, &k, cubin, sizeof cubin, "add_kernel", NULL, &pick);
	assert_null(pick.cubin);
	assert_false(pick.ran);
	assert_non_null(strstr(pick.log, "no CUDA driver"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_variants__key_resolution),
		cmocka_unit_test(test_pass_variants__auto_with_triton_binaries),
		cmocka_unit_test(test_pass_variants__record_folding),
		cmocka_unit_test(test_pass_variants__stage_falls_back_to_stock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
