/* The compile-variants stage measures on the launch's device: the "device" setting reaches the
 * stage's runtime options (st_variants_opts.runtime.device), as it reaches the search's. */
#include "testutil.h"
#include "pass/pass_internal.h"
#include "sasstune/plugin.h"
#include "sasstune/variants.h"

#include <stdlib.h>
#include <string.h>

#define PTX ".version 8.7\n.target sm_90a\n.address_size 64\n"

static void clean_env(void)
{
	static const char *const vars[] = {"SASSTUNE_MODE", "SASSTUNE_VARIANTS", "SASSTUNE_PTXAS", "SASSTUNE_LOG",
					   "SASSTUNE_CACHE_DIR", "SASSTUNE_BUDGET", "SASSTUNE_POLICY"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
}

static st_plugin_kernel2 record(const char *ptx, const char *options_json)
{
	return (st_plugin_kernel2){.v1 = {.kernel = "add_kernel", .arch = "sm_90", .ptxas_version = "12.8.93",
					  .options_json = options_json},
				   .size = sizeof(st_plugin_kernel2),
				   .ptx = ptx,
				   .ptxas_path = "/nonexistent/ptxas",
				   .ptxas_options = "-lineinfo --gpu-name=sm_90a"};
}

static void test_pass_capture_key__device_reaches_the_variants_stage(void **state)
{
	(void)state;
	clean_env();
	st_pass_settings s;
	assert_int_equal(st_pass__settings_load(&s, "{\"device\": \"3\", \"variants\": \"on\"}", NULL), ST_OK);
	st_plugin_kernel2 k = record(PTX, NULL);
	st_pass_variants_key vk;
	st_cache_key_fields f = {0};
	st_pass__variants_key(&s, &k, &vk, &f);
	assert_true(vk.run);
	assert_int_equal(vk.device, 3);
	st_variants_opts o;
	st_pass__variants_opts(&k, &vk, &o);
	assert_int_equal(o.runtime.device, 3);
	assert_string_equal(o.stock_ptxas, "/nonexistent/ptxas");
	assert_string_equal(o.base_options, "-lineinfo --gpu-name=sm_90a");
	st_pass__settings_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_capture_key__device_reaches_the_variants_stage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
