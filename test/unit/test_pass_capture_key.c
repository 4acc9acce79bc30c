/* Capture mode and the compile-variants stage agree with the pass (no GPU):
 * - the launch's device ("device" setting) reaches the variants stage's runtime options, as it
 *   reaches the search's;
 * - st_capture_run_key (what the Triton adapter names a capture by, and what `tune --captures`
 *   keys it with) is the key run2() itself looks up, with and without the variant fields, and it
 *   reads only what the record's size covers;
 * - capture.json's ptxas path/options and variants setting are read, checked and passed on. */
#include "testutil.h"
#include "pass/capture.h"
#include "pass/pass_internal.h"
#include "sasstune/plugin.h"
#include "sasstune/variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PTX ".version 8.7\n.target sm_90a\n.address_size 64\n"

static const uint8_t CUBIN[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};

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

/* The key run2() looked up, from its "cache miss KEY12" message (mode cache-only). */
static void run2_key(const st_plugin_kernel2 *k, char out[13])
{
	const st_plugin_info *info = sasstune_plugin_info();
	st_plugin_result r;
	assert_int_equal(info->run2(CUBIN, sizeof CUBIN, k, &r), 0);
	assert_int_equal(r.status, ST_PLUGIN_UNCHANGED);
	assert_int_equal(strncmp(r.message, "cache miss ", 11), 0);
	memcpy(out, r.message + 11, 12);
	out[12] = '\0';
	info->free_result(&r);
}

static void test_pass_capture_key__capture_key_is_the_pass_key(void **state)
{
	(void)state;
	clean_env();
	char dir[] = "/tmp/st_capture_key_XXXXXX", opt[3][600];
	assert_non_null(mkdtemp(dir));
	const char *modes[] = {"off", "on", "auto"};
	for (int i = 0; i < 3; i++)
		snprintf(opt[i], sizeof opt[i], "{\"mode\": \"cache-only\", \"cache_dir\": \"%s\", \"variants\": \"%s\"}",
			 dir, modes[i]);
	char keys[4][65], seen[13];
	const st_plugin_kernel2 recs[4] = {record(NULL, opt[1]), record(PTX, opt[0]), record(PTX, opt[1]),
					   record(PTX, opt[2])};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(st_capture_run_key(CUBIN, sizeof CUBIN, &recs[i], keys[i], NULL), ST_OK);
		run2_key(&recs[i], seen);
		assert_memory_equal(keys[i], seen, 12);
	}
	assert_string_equal(keys[0], keys[1]); /* no PTX, or variants off: the plain key */
	assert_string_not_equal(keys[1], keys[2]); /* on: the variant fields are in the key */
	assert_string_equal(keys[0], keys[3]);  /* auto with no ptxas found: off */
	/* a caller whose record ends before ptx: the PTX is not read, the plain key */
	st_plugin_kernel2 shorter = record(PTX, opt[1]);
	shorter.size = offsetof(st_plugin_kernel2, ptx);
	char key[65];
	assert_int_equal(st_capture_run_key(CUBIN, sizeof CUBIN, &shorter, key, NULL), ST_OK);
	assert_string_equal(key, keys[0]);
	/* a bad setting is an error naming it, as run2() would report */
	st_plugin_kernel2 bad = record(PTX, "{\"variants\": \"maybe\"}");
	st_error err = {0};
	assert_int_equal(st_capture_run_key(CUBIN, sizeof CUBIN, &bad, key, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "maybe"));
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_pass_capture_key__meta_carries_the_record(void **state)
{
	(void)state;
	clean_env();
	const char *json = "{\"v\": 1, \"kernel\": \"add_kernel\", \"arch\": \"sm_90\", \"ptxas_version\": \"12.8.93\","
			   " \"device\": \"1\", \"ptxas_path\": \"/opt/bin/ptxas\", \"ptxas_options\": \"-lineinfo\","
			   " \"variants\": \"on\"}";
	st_capture_meta m;
	assert_int_equal(st_capture_meta_parse(json, strlen(json), &m, NULL), ST_OK);
	assert_string_equal(m.ptxas_path, "/opt/bin/ptxas");
	assert_string_equal(m.ptxas_options, "-lineinfo");
	assert_string_equal(m.variants, "on");
	char *opt = NULL;
	assert_int_equal(st_capture_options(&m, "5s", "/c", &opt, NULL), ST_OK);
	assert_non_null(strstr(opt, "\"variants\":\"on\""));
	assert_non_null(strstr(opt, "\"device\":\"1\""));
	assert_non_null(strstr(opt, "\"mode\":\"tune\""));
	st_plugin_kernel2 k;
	st_capture_record(&m, PTX, "{}", opt, &k);
	assert_int_equal(k.size, sizeof k);
	assert_string_equal(k.ptx, PTX);
	assert_string_equal(k.ptxas_path, "/opt/bin/ptxas");
	assert_string_equal(k.ptxas_options, "-lineinfo");
	assert_string_equal(k.v1.kernel, "add_kernel");
	assert_ptr_equal(k.v1.options_json, opt);
	free(opt);
	st_capture_meta_free(&m);
	/* settings the pass would refuse are refused when the capture is read */
	const char *bad[] = {"{\"v\": 1, \"kernel\": \"k\", \"variants\": \"sometimes\"}",
			     "{\"v\": 1, \"kernel\": \"k\", \"device\": \"-1\"}",
			     "{\"v\": 1, \"kernel\": \"k\", \"device\": \"1024\"}"};
	for (size_t i = 0; i < 3; i++) {
		st_error err = {0};
		assert_int_not_equal(st_capture_meta_parse(bad[i], strlen(bad[i]), &m, &err), ST_OK);
		assert_null(m.kernel);
		assert_true(err.msg[0] != '\0');
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_capture_key__device_reaches_the_variants_stage),
		cmocka_unit_test(test_pass_capture_key__capture_key_is_the_pass_key),
		cmocka_unit_test(test_pass_capture_key__meta_carries_the_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
