/* The cache's optional compile-variant parts: the key fields "variants" and
 * "ptxas_options" (absent = the key as before them, pinned here against an
 * independent SHA-256 of the documented serialisation) and the entry's
 * "variant" object: round trip, refusal of malformed ones, lookups that must
 * not cross between keys with and without them. */
#include "testutil.h"
#include "cache/cache_internal.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHA_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define VSET "on:12.8.93,13.5.37"
#define VOPTS "-lineinfo --gpu-name=sm_90a"

static st_cache_key_fields base_fields(void)
{
	return (st_cache_key_fields){.cubin_sha256 = SHA_A, .kernel = "matmul_kernel", .gpu_name = "NVIDIA H200",
				     .compute_capability = "9.0", .driver_version = "580.65.06",
				     .ptxas_version = "12.8.93", .sasstune_version = "0.1.0"};
}

static const uint8_t tuned[] = {9, 8, 7};

static st_cache_record base_record(void)
{
	return (st_cache_record){.schedule_json = "{}", .verification_json = "{\"runs\":1}", .speedup = 1.03,
				 .speedup_low = 1.01, .speedup_high = 1.05, .method = "ppo", .budget = "5m",
				 .date = "2026-12-01T10:00:00Z", .tuned_cubin = tuned, .tuned_cubin_size = sizeof tuned};
}

static void test_cache_variant__key_pinned_with_and_without(void **state)
{
	(void)state;
	st_cache_key_fields f = base_fields();
	char k[65];
	/* python3: sha256 of "sasstune-cache-key/1\ncubin_sha256=64:...\n...sasstune_version=5:0.1.0\n" */
	assert_int_equal(st_cache_key(&f, k, NULL), ST_OK);
	assert_string_equal(k, "f9dea2bfd108978a1f5b70d3e556cab3e965acfe37080f0aa71060ccc3a3e220");
	f.variants = "";
	f.ptxas_options = ""; /* "" is absent */
	assert_int_equal(st_cache_key(&f, k, NULL), ST_OK);
	assert_string_equal(k, "f9dea2bfd108978a1f5b70d3e556cab3e965acfe37080f0aa71060ccc3a3e220");
	/* ... + "variants=18:on:12.8.93,13.5.37\nptxas_options=27:-lineinfo --gpu-name=sm_90a\n" */
	f.variants = VSET;
	f.ptxas_options = VOPTS;
	assert_int_equal(st_cache_key(&f, k, NULL), ST_OK);
	assert_string_equal(k, "6d92b6271e5a6df67a18eed60bd678520a97c240260fb683242922f47d23164b");
}

static void test_cache_variant__each_part_changes_the_key(void **state)
{
	(void)state;
	const char *vals[][2] = {{NULL, NULL},   {VSET, NULL},  {NULL, VSET},	{VSET, VOPTS},
				 {"on:12.8.93", VOPTS}, {VSET, "-lineinfo"}, {"a", "bc"}, {"ab", "c"}};
	size_t n = sizeof vals / sizeof vals[0];
	char keys[8][65];
	for (size_t i = 0; i < n; i++) {
		st_cache_key_fields f = base_fields();
		f.variants = vals[i][0];
		f.ptxas_options = vals[i][1];
		assert_int_equal(st_cache_key(&f, keys[i], NULL), ST_OK);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(keys[i], keys[j]))
				fail_msg("cases %zu and %zu share a key", i, j);
	}
	st_cache_key_fields f = base_fields();
	st_error err;
	f.ptxas_options = "-lineinfo\n";
	assert_int_equal(st_cache_key(&f, keys[0], &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "ptxas_options"));
}

static void test_cache_variant__entry_roundtrip(void **state)
{
	(void)state;
	st_cache_key_fields f = base_fields();
	f.variants = VSET;
	f.ptxas_options = VOPTS;
	st_cache_record r = base_record();
	r.variant_ptxas_version = "13.5.37";
	r.variant_options = "--register-usage-level 0";
	char *json, key[65];
	st_error err;
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_OK);
	assert_int_equal(st_cache_key(&f, key, NULL), ST_OK);
	st_cache_entry *e;
	assert_int_equal(st_cache__parse_entry(&e, json, strlen(json), key, &err), ST_OK);
	const st_cache_info *i = st_cache_entry_info(e);
	assert_string_equal(i->variants, VSET);
	assert_string_equal(i->ptxas_options, VOPTS);
	assert_string_equal(i->variant_ptxas_version, "13.5.37");
	assert_string_equal(i->variant_options, "--register-usage-level 0");
	st_cache_entry_free(e);
	free(json);

	/* without them: nothing in the entry, NULL in the info */
	f = base_fields();
	r = base_record();
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_OK);
	assert_null(strstr(json, "variant"));
	assert_int_equal(st_cache_key(&f, key, NULL), ST_OK);
	assert_int_equal(st_cache__parse_entry(&e, json, strlen(json), key, &err), ST_OK);
	i = st_cache_entry_info(e);
	assert_true(!i->variants && !i->ptxas_options && !i->variant_ptxas_version && !i->variant_options);
	st_cache_entry_free(e);
	free(json);
}

/* Replace the first occurrence of from by to in a copy of s. */
static char *replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	assert_non_null(at);
	char *out = malloc(strlen(s) - strlen(from) + strlen(to) + 1);
	memcpy(out, s, (size_t)(at - s));
	strcpy(out + (at - s), to);
	strcat(out, at + strlen(from));
	return out;
}

static void test_cache_variant__malformed_refused(void **state)
{
	(void)state;
	st_cache_key_fields f = base_fields();
	f.variants = VSET;
	st_cache_record r = base_record();
	r.variant_ptxas_version = "13.5.37";
	char *json, key[65];
	st_error err;
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_OK);
	assert_non_null(strstr(json, "\"options\":\t\"\"")); /* NULL options are stored as "" */
	assert_int_equal(st_cache_key(&f, key, NULL), ST_OK);
	static const struct {
		const char *from, *to, *why;
	} cases[] = {
		{"\"variants\":\t\"" VSET "\"", "\"variants\":\t3", "variants"},
		{"\"variants\":\t\"" VSET "\"", "\"variants\":\t\"\"", "variants"},
		{"\"variants\":\t\"" VSET "\"", "\"variants\":\t\"on:12.8.93\"", "does not match its fields"},
		{"\"ptxas_version\":\t\"13.5.37\"", "\"ptxas_versio\":\t\"13.5.37\"", "variant needs"},
		{"\"options\":\t\"\"", "\"options\":\tnull", "variant needs"},
		{"\"variant\":\t{", "\"variant\":\t\"x\", \"y\":\t{", "variant needs"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *bad = replace(json, cases[i].from, cases[i].to);
		st_cache_entry *e = (st_cache_entry *)1;
		assert_int_equal(st_cache__parse_entry(&e, bad, strlen(bad), key, &err), ST_EFORMAT);
		assert_null(e);
		if (!strstr(err.msg, cases[i].why))
			fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg, cases[i].why);
		free(bad);
	}
	free(json);
	r.variant_options = "a\nb";
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "variant"));
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

static void test_cache_variant__lookups_do_not_cross(void **state)
{
	(void)state;
	char dir[] = "/tmp/st-cache-variant-XXXXXX";
	assert_non_null(mkdtemp(dir));
	st_cache *c;
	st_error err;
	assert_int_equal(st_cache_open(&c, dir, &err), ST_OK);
	st_cache_key_fields with = base_fields(), plain = base_fields(), other = base_fields();
	with.variants = VSET;
	with.ptxas_options = VOPTS;
	other.variants = "on:12.8.93,12.9.86,13.5.37"; /* a new ptxas was installed */
	other.ptxas_options = VOPTS;
	st_cache_record r = base_record();
	r.variant_ptxas_version = "13.5.37";
	r.variant_options = "";
	assert_int_equal(st_cache_store(c, &with, &r, &err), ST_OK);
	st_cache_entry *e;
	assert_int_equal(st_cache_lookup(&e, c, &with, &err), ST_OK);
	assert_string_equal(st_cache_entry_info(e)->variant_ptxas_version, "13.5.37");
	assert_memory_equal(st_cache_entry_info(e)->tuned_cubin, tuned, sizeof tuned);
	st_cache_entry_free(e);
	assert_int_equal(st_cache_lookup(&e, c, &plain, &err), ST_ENOTFOUND);
	assert_int_equal(st_cache_lookup(&e, c, &other, &err), ST_ENOTFOUND);
	st_cache_free(c);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_variant__key_pinned_with_and_without),
		cmocka_unit_test(test_cache_variant__each_part_changes_the_key),
		cmocka_unit_test(test_cache_variant__entry_roundtrip),
		cmocka_unit_test(test_cache_variant__malformed_refused),
		cmocka_unit_test(test_cache_variant__lookups_do_not_cross),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
