/* Cache keys (every field matters, unknowns are explicit), durations, dates,
 * and entry.json parsing: a formatted record reads back, and each kind of
 * corruption is refused with a message naming it. */
#include "testutil.h"
#include "cache/cache_internal.h"
#include "sasstune/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHA_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SHA_B "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static st_cache_key_fields base_fields(void)
{
	return (st_cache_key_fields){.cubin_sha256 = SHA_A, .kernel = "matmul_kernel", .gpu_name = "NVIDIA H200",
			.compute_capability = "9.0", .driver_version = "580.65.06", .ptxas_version = "12.8.93",
			.sasstune_version = "0.1.0"};
}

static void test_cache_key__each_field_changes_the_key(void **state)
{
	(void)state;
	st_cache_key_fields f = base_fields();
	char base[65], k[65];
	st_error err;
	assert_int_equal(st_cache_key(&f, base, &err), ST_OK);
	assert_true(st_cache__is_key(base));
	/* deterministic */
	assert_int_equal(st_cache_key(&f, k, &err), ST_OK);
	assert_string_equal(k, base);

	const char **slots[] = {&f.cubin_sha256,   &f.kernel,	     &f.gpu_name,	 &f.compute_capability,
				&f.driver_version, &f.ptxas_version, &f.sasstune_version};
	const char *other[] = {SHA_B, "matmul_kernel2", "NVIDIA H100", "9.1", "580.65.07", "12.8.94", "0.1.1"};
	char seen[7][65];
	for (int i = 0; i < 7; i++) {
		st_cache_key_fields g = base_fields();
		const char **s = (const char **)((char *)&g + ((char *)slots[i] - (char *)&f));
		*s = other[i];
		assert_int_equal(st_cache_key(&g, seen[i], &err), ST_OK);
		assert_string_not_equal(seen[i], base);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(seen[i], seen[j]);
	}
}

static void test_cache_key__fields_do_not_run_together(void **state)
{
	(void)state;
	st_cache_key_fields a = base_fields(), b = base_fields();
	/* "ab" + "c" and "a" + "bc" concatenate alike; the length prefixes tell them apart */
	a.gpu_name = "ab";
	a.compute_capability = "c";
	b.gpu_name = "a";
	b.compute_capability = "bc";
	char ka[65], kb[65];
	assert_int_equal(st_cache_key(&a, ka, NULL), ST_OK);
	assert_int_equal(st_cache_key(&b, kb, NULL), ST_OK);
	assert_string_not_equal(ka, kb);
}

static void test_cache_key__unknown_and_default_version(void **state)
{
	(void)state;
	st_cache_key_fields a = {.cubin_sha256 = SHA_A, .kernel = NULL, .gpu_name = NULL,
			.compute_capability = "", .driver_version = NULL, .ptxas_version = NULL};
	st_cache_key_fields b = {.cubin_sha256 = SHA_A, .kernel = "unknown", .gpu_name = "unknown",
			.compute_capability = "unknown", .driver_version = "unknown", .ptxas_version = "unknown",
			.sasstune_version = ST_VERSION_STRING};
	st_cache_key_fields c = {.cubin_sha256 = SHA_A, .kernel = "unknown", .gpu_name = "unknown",
			.compute_capability = "unknown", .driver_version = "unknown", .ptxas_version = "unknown",
			.sasstune_version = "9.9.9"};
	char ka[65], kb[65], kc[65];
	assert_int_equal(st_cache_key(&a, ka, NULL), ST_OK);
	assert_int_equal(st_cache_key(&b, kb, NULL), ST_OK);
	assert_int_equal(st_cache_key(&c, kc, NULL), ST_OK);
	assert_string_equal(ka, kb);
	assert_string_not_equal(ka, kc);
}

static void test_cache_key__bad_fields_refused(void **state)
{
	(void)state;
	st_error err;
	char k[65];
	st_cache_key_fields f = base_fields();
	f.cubin_sha256 = "0123";
	assert_int_equal(st_cache_key(&f, k, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "cubin_sha256"));
	f = base_fields();
	f.cubin_sha256 = "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_int_equal(st_cache_key(&f, k, &err), ST_EINVAL);
	f = base_fields();
	f.kernel = "bad\nname";
	assert_int_equal(st_cache_key(&f, k, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "kernel"));
	char *big = malloc(2000);
	memset(big, 'x', 1999);
	big[1999] = 0;
	f = base_fields();
	f.gpu_name = big;
	assert_int_equal(st_cache_key(&f, k, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "gpu_name"));
	free(big);
	assert_int_equal(st_cache_key(NULL, k, &err), ST_EINVAL);
}

static void test_cache_key__durations(void **state)
{
	(void)state;
	int64_t s;
	st_error err;
	assert_int_equal(st_cache_parse_duration("7d", &s, &err), ST_OK);
	assert_int_equal(s, 7 * 86400);
	assert_int_equal(st_cache_parse_duration("12h", &s, &err), ST_OK);
	assert_int_equal(s, 12 * 3600);
	assert_int_equal(st_cache_parse_duration("30m", &s, &err), ST_OK);
	assert_int_equal(s, 1800);
	assert_int_equal(st_cache_parse_duration("2w", &s, &err), ST_OK);
	assert_int_equal(s, 2 * 604800);
	assert_int_equal(st_cache_parse_duration("45", &s, &err), ST_OK);
	assert_int_equal(s, 45);
	assert_int_equal(st_cache_parse_duration("0s", &s, &err), ST_OK);
	assert_int_equal(s, 0);
	const char *bad[] = {"", "d", "7x", "7dd", "-1d", "99999999999999999999d", " 7d"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(st_cache_parse_duration(bad[i], &s, &err), ST_EINVAL);
	assert_int_equal(st_cache_parse_duration(NULL, &s, &err), ST_EINVAL);
}

static void test_cache_key__dates(void **state)
{
	(void)state;
	int64_t t;
	assert_int_equal(st_cache__parse_date("1970-01-01T00:00:00Z", &t), ST_OK);
	assert_int_equal(t, 0);
	assert_int_equal(st_cache__parse_date("2024-02-29T12:34:56Z", &t), ST_OK);
	assert_int_equal(t, 1709210096);
	char out[21];
	st_cache__format_date(t, out);
	assert_string_equal(out, "2024-02-29T12:34:56Z");
	const char *bad[] = {"2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01 00:00:00Z",
			     "2024-01-01T00:00:00", "2024-01-01T24:00:00Z", "1969-12-31T23:59:59Z", "x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(st_cache__parse_date(bad[i], &t), ST_EFORMAT);
}

static const uint8_t tuned[] = {1, 2, 3, 4, 5};

static st_cache_record base_record(void)
{
	return (st_cache_record){.schedule_json = "{\"kernels\":{\"k\":{\"perm\":[1,0,2]}}}",
				 .verification_json = "{\"runs\":5,\"max_abs_err\":0}",
				 .speedup = 1.07,
				 .speedup_low = 1.05,
				 .speedup_high = 1.09,
				 .method = "ppo",
				 .budget = "5m",
				 .date = "2025-06-01T10:00:00Z",
				 .tuned_cubin = tuned,
				 .tuned_cubin_size = sizeof tuned};
}

static void test_cache_key__entry_roundtrip(void **state)
{
	(void)state;
	st_cache_key_fields f = base_fields();
	st_cache_record r = base_record();
	char *json, key[65];
	st_error err;
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_OK);
	assert_int_equal(st_cache_key(&f, key, &err), ST_OK);
	st_cache_entry *e;
	assert_int_equal(st_cache__parse_entry(&e, json, strlen(json), key, &err), ST_OK);
	const st_cache_info *i = st_cache_entry_info(e);
	assert_string_equal(i->key, key);
	assert_string_equal(i->kernel, "matmul_kernel");
	assert_string_equal(i->gpu_name, "NVIDIA H200");
	assert_string_equal(i->ptxas_version, "12.8.93");
	assert_string_equal(st_cache_entry_schedule(e), "{\"kernels\":{\"k\":{\"perm\":[1,0,2]}}}");
	assert_string_equal(st_cache_entry_verification(e), "{\"runs\":5,\"max_abs_err\":0}");
	assert_ptr_equal(st_cache_entry_schedule(e), st_cache_entry_schedule(e)); /* made once */
	assert_true(i->speedup == 1.07 && i->speedup_low == 1.05 && i->speedup_high == 1.09);
	assert_string_equal(i->method, "ppo");
	assert_string_equal(i->budget, "5m");
	assert_string_equal(i->date, "2025-06-01T10:00:00Z");
	assert_int_equal(i->tuned_cubin_size, sizeof tuned);
	char sha[65];
	st_cache_sha256_hex(tuned, sizeof tuned, sha);
	assert_string_equal(i->tuned_sha256, sha);
	assert_null(i->tuned_cubin);
	st_cache_entry_free(e);
	/* stored under another key: refused */
	char other[65];
	memcpy(other, key, 65);
	other[0] = other[0] == '0' ? '1' : '0';
	assert_int_equal(st_cache__parse_entry(&e, json, strlen(json), other, &err), ST_EFORMAT);
	assert_null(e);
	assert_non_null(strstr(err.msg, "stored under"));
	free(json);
}

static void test_cache_key__bad_records_refused(void **state)
{
	(void)state;
	st_cache_key_fields f = base_fields();
	char *json;
	st_error err;
	st_cache_record r = base_record();
	r.schedule_json = "[1,2]";
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "schedule"));
	r = base_record();
	r.verification_json = "{";
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_EINVAL);
	r = base_record();
	r.speedup_low = 1.08;
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_EINVAL);
	r = base_record();
	r.tuned_cubin_size = 0;
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_EINVAL);
	r = base_record();
	r.date = "yesterday";
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_EINVAL);
	r = base_record();
	r.method = "a\tb";
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_EINVAL);
	assert_null(json);
}

/* Replace the first occurrence of from by to in a copy of s. */
static char *replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	assert_non_null(at);
	size_t n = strlen(s) - strlen(from) + strlen(to);
	char *out = malloc(n + 1);
	size_t pre = (size_t)(at - s);
	memcpy(out, s, pre);
	strcpy(out + pre, to);
	strcat(out, at + strlen(from));
	return out;
}

static void test_cache_key__corrupt_entries_refused(void **state)
{
	(void)state;
	st_cache_key_fields f = base_fields();
	st_cache_record r = base_record();
	char *json, key[65];
	st_error err;
	assert_int_equal(st_cache__format_entry(&json, &f, &r, &err), ST_OK);
	assert_int_equal(st_cache_key(&f, key, &err), ST_OK);
	static const struct {
		const char *from, *to, *why;
	} cases[] = {
		{"\"schema\":\t1", "\"schema\":\t2", "schema 2"},
		{"\"schema\":\t1", "\"schemb\":\t1", "no schema"},
		{"\"kernel\":\t\"matmul_kernel\"", "\"kernel\":\t\"matmul_kernel3\"", "does not match its fields"},
		{"\"driver_version\":\t\"580.65.06\"", "\"driver_version\":\t7", "driver_version"},
		{"\"estimate\":\t1.07", "\"estimate\":\t1.2", "speedup"},
		{"\"date\":\t\"2025-06-01T10:00:00Z\"", "\"date\":\t\"June\"", "date"},
		{"\"size\":\t5", "\"size\":\t5.5", "tuned_cubin"},
		{"\"size\":\t5", "\"size\":\t-5", "tuned_cubin"},
		{"\"schedule\":\t{", "\"schedule\":\t[{", "JSON object"}, /* also breaks the JSON */
		{"\"verification\":\t{", "\"verification\": 0, \"x\":\t{", "verification"},
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
	/* truncated at every length: never accepted, never crashes */
	size_t n = strlen(json);
	for (size_t cut = 0; cut < n - 1; cut++) {
		st_cache_entry *e;
		assert_int_equal(st_cache__parse_entry(&e, json, cut, key, &err), ST_EFORMAT);
	}
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_key__each_field_changes_the_key),
		cmocka_unit_test(test_cache_key__fields_do_not_run_together),
		cmocka_unit_test(test_cache_key__unknown_and_default_version),
		cmocka_unit_test(test_cache_key__bad_fields_refused),
		cmocka_unit_test(test_cache_key__durations),
		cmocka_unit_test(test_cache_key__dates),
		cmocka_unit_test(test_cache_key__entry_roundtrip),
		cmocka_unit_test(test_cache_key__bad_records_refused),
		cmocka_unit_test(test_cache_key__corrupt_entries_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
