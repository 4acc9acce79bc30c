/* The pass's variants setting: SASSTUNE_VARIANTS and options_json "variants"
 * (on, off, auto; default auto; options_json wins over the environment); any
 * other value is an error naming where it came from and what is expected.
 * And SASSTUNE_CHECK_REFERENCE, read here for the runtime. */
#include "testutil.h"
#include "pass/pass_internal.h"

#include <stdlib.h>
#include <string.h>

static void test_pass_settings__variants_values(void **state)
{
	(void)state;
	unsetenv("SASSTUNE_VARIANTS");
	st_pass_settings s;
	st_error err;
	assert_int_equal(st_pass__settings_load(&s, NULL, &err), ST_OK);
	assert_int_equal(s.variants, ST_VARIANTS_AUTO);
	st_pass__settings_free(&s);
	static const struct {
		const char *json;
		st_pass_variants want;
	} cases[] = {{"{\"variants\": \"on\"}", ST_VARIANTS_ON},
		     {"{\"variants\": \"off\"}", ST_VARIANTS_OFF},
		     {"{\"variants\": \"auto\"}", ST_VARIANTS_AUTO}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(st_pass__settings_load(&s, cases[i].json, &err), ST_OK);
		assert_int_equal(s.variants, cases[i].want);
		assert_string_equal(s.unknown_option, ""); /* a known key */
		st_pass__settings_free(&s);
	}
}

static void test_pass_settings__variants_environment(void **state)
{
	(void)state;
	st_pass_settings s;
	st_error err;
	setenv("SASSTUNE_VARIANTS", "off", 1);
	assert_int_equal(st_pass__settings_load(&s, "{}", &err), ST_OK);
	assert_int_equal(s.variants, ST_VARIANTS_OFF);
	st_pass__settings_free(&s);
	assert_int_equal(st_pass__settings_load(&s, "{\"variants\": \"on\"}", &err), ST_OK);
	assert_int_equal(s.variants, ST_VARIANTS_ON); /* options_json wins */
	st_pass__settings_free(&s);
	setenv("SASSTUNE_VARIANTS", "", 1); /* empty counts as unset */
	assert_int_equal(st_pass__settings_load(&s, NULL, &err), ST_OK);
	assert_int_equal(s.variants, ST_VARIANTS_AUTO);
	st_pass__settings_free(&s);
	unsetenv("SASSTUNE_VARIANTS");
}

static void test_pass_settings__variants_bad_values(void **state)
{
	(void)state;
	st_pass_settings s;
	st_error err;
	setenv("SASSTUNE_VARIANTS", "yes", 1);
	assert_int_equal(st_pass__settings_load(&s, NULL, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "SASSTUNE_VARIANTS"));
	assert_non_null(strstr(err.msg, "'yes'"));
	assert_non_null(strstr(err.msg, "on, off or auto"));
	unsetenv("SASSTUNE_VARIANTS");
	assert_int_equal(st_pass__settings_load(&s, "{\"variants\": \"ON\"}", &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "options_json \"variants\""));
	assert_int_equal(st_pass__settings_load(&s, "{\"variants\": true}", &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "expected a string"));
}

/* SASSTUNE_CHECK_REFERENCE is read here (the runtime does not read it): anything but "" or "0" is
 * on; never an error; no options_json key turns it off. */
static void test_pass_settings__check_reference(void **state)
{
	(void)state;
	st_pass_settings s;
	st_error err;
	unsetenv("SASSTUNE_CHECK_REFERENCE");
	assert_int_equal(st_pass__settings_load(&s, NULL, &err), ST_OK);
	assert_false(s.check_reference);
	st_pass__settings_free(&s);
	static const struct {
		const char *v;
		int want;
	} cases[] = {{"1", 1}, {"yes", 1}, {"0", 0}, {"", 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		setenv("SASSTUNE_CHECK_REFERENCE", cases[i].v, 1);
		assert_int_equal(st_pass__settings_load(&s, "{\"mode\": \"tune\"}", &err), ST_OK);
		assert_int_equal(s.check_reference != 0, cases[i].want);
		st_pass__settings_free(&s);
	}
	unsetenv("SASSTUNE_CHECK_REFERENCE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_settings__variants_values),
		cmocka_unit_test(test_pass_settings__variants_environment),
		cmocka_unit_test(test_pass_settings__variants_bad_values),
		cmocka_unit_test(test_pass_settings__check_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
