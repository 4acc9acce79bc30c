/* Helpers for the cmocka unit tests. */
#ifndef ST_TESTUTIL_H
#define ST_TESTUTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Path of a file under test/fixtures (ST_FIXTURES from ctest, else the source tree).
 * Returns a static-storage-free malloc'ed string; free it. */
char *st_test_fixture(const char *rel);

/* Read a whole fixture file; fails the test if it cannot. */
uint8_t *st_test_read(const char *rel, size_t *size);

/* Names of the Triton sm_90 fixtures, NULL-terminated. */
extern const char *const st_test_triton_fixtures[];

/* Folder with Triton's bundled nvdisasm/ptxas (ST_TRITON_BIN), or NULL. */
const char *st_test_triton_bin(void);
#endif
