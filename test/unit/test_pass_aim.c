/* The pass's aim setting (docs/profile.md): SASSTUNE_AIM and options_json "aim" (auto or off;
 * default off; options_json wins over the environment); any other value is an error naming
 * where it came from. */
#include "testutil.h"
#include "pass/pass_internal.h"

#include <stdlib.h>
#include <string.h>

static void test_pass_aim_values(void **state)
{
	(void)state;
	unsetenv("SASSTUNE_AIM");
	st_pass_settings s;
	st_error err;
	assert_int_equal(st_pass__settings_load(&s, NULL, &err), ST_OK);
	assert_int_equal(s.aim, 0);
	st_pass__settings_free(&s);
	assert_int_equal(st_pass__settings_load(&s, "{\"aim\": \"auto\"}", &err), ST_OK);
	assert_int_equal(s.aim, 1);
	st_pass__settings_free(&s);
	setenv("SASSTUNE_AIM", "auto", 1);
	assert_int_equal(st_pass__settings_load(&s, NULL, &err), ST_OK);
	assert_int_equal(s.aim, 1);
	st_pass__settings_free(&s);
	assert_int_equal(st_pass__settings_load(&s, "{\"aim\": \"off\"}", &err), ST_OK);
	assert_int_equal(s.aim, 0); /* options_json wins */
	st_pass__settings_free(&s);
	setenv("SASSTUNE_AIM", "on", 1);
	assert_int_equal(st_pass__settings_load(&s, NULL, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "SASSTUNE_AIM"));
	assert_non_null(strstr(err.msg, "auto or off"));
	unsetenv("SASSTUNE_AIM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_aim_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
