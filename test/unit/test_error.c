/* The st_error helpers: codes pass through, messages are formatted and wrapped. */
#include "testutil.h"
#include "sasstune/error.h"
#include "sasstune/version.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_set_and_wrap(void **state)
{
	(void)state;
	st_error err;
	st_error_clear(&err);
	assert_int_equal(st_error_set(&err, ST_EFORMAT, "bad %s at %d", "magic", 4), ST_EFORMAT);
	assert_string_equal(err.msg, "bad magic at 4");
	assert_int_equal(st_error_wrap(&err, "file %s", "x.cubin"), ST_EFORMAT);
	assert_string_equal(err.msg, "file x.cubin: bad magic at 4");
	assert_int_equal(st_error_set(NULL, ST_EIO, "ignored"), ST_EIO);
	assert_string_equal(st_status_str(ST_EILLEGAL), "illegal move");
	assert_non_null(strstr(st_status_str(ST_ECONTAMINATED), "wrote outside its buffers"));
	assert_string_equal(st_version(), ST_VERSION_STRING);
}

/* wrap never turns a failure into success: with no err it cannot know the code */
static void test_wrap_never_ok(void **state)
{
	(void)state;
	assert_int_not_equal(st_error_wrap(NULL, "context"), ST_OK);
	assert_int_equal(st_error_wrap(NULL, "context %d", 1), ST_EINVAL);
	st_error err;
	st_error_clear(&err);
	assert_int_equal(st_error_wrap(&err, "nobody set it"), ST_EINVAL);
	assert_int_equal(err.code, ST_EINVAL);
	assert_string_equal(err.msg, "nobody set it");
	st_error_set(&err, ST_EDEVICE, "no GPU");
	assert_int_equal(st_error_wrap(&err, "worker"), ST_EDEVICE);
	assert_string_equal(err.msg, "worker: no GPU");
}

static void test_atomic_write_roundtrip(void **state)
{
	(void)state;
	char dir[] = "/tmp/st-test-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/f.bin", dir);
	st_error err;
	assert_int_equal(st_write_file_atomic(path, "hello", 5, &err), ST_OK);
	assert_int_equal(st_write_file_atomic(path, "world!", 6, &err), ST_OK);
	uint8_t *data;
	size_t size;
	assert_int_equal(st_read_file(path, &data, &size, &err), ST_OK);
	assert_int_equal(size, 6);
	assert_memory_equal(data, "world!", 6);
	free(data);
	unlink(path);
	rmdir(dir);
	assert_int_equal(st_read_file(path, &data, &size, &err), ST_EIO);
	assert_non_null(strstr(err.msg, "f.bin"));
}

static void test_buf_printf(void **state)
{
	(void)state;
	st_buf b = {0};
	for (int i = 0; i < 1000; i++)
		assert_int_equal(st_buf_printf(&b, "%d,", i), ST_OK);
	assert_int_equal(strncmp((char *)b.data, "0,1,2,", 6), 0);
	assert_int_equal(b.data[b.len], 0);
	st_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_and_wrap),
		cmocka_unit_test(test_wrap_never_ok),
		cmocka_unit_test(test_atomic_write_roundtrip),
		cmocka_unit_test(test_buf_printf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
