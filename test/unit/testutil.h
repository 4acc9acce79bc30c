/* Helpers for the cmocka unit tests. */
#ifndef ST_TESTUTIL_H
#define ST_TESTUTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sasstune/cubin.h"
#include "sasstune/sass.h"
#include "sasstune/runtime.h"
#include "sasstune/sched.h"
#include "sasstune/schedule.h"
#include "sasstune/tune.h"

/* Path of a file under test/fixtures (ST_FIXTURES from ctest, else the source tree).
 * Returns a static-storage-free malloc'ed string; free it. */
char *st_test_fixture(const char *rel);

/* Read a whole fixture file; fails the test if it cannot.  _path: any file (size may be NULL);
 * both NUL-terminate what they read, so a text file is a string. */
uint8_t *st_test_read(const char *rel, size_t *size);
uint8_t *st_test_read_path(const char *path, size_t *size);

/* Names of the Triton sm_90 fixtures, NULL-terminated. */
extern const char *const st_test_triton_fixtures[];

/* Folder with Triton's bundled nvdisasm/ptxas (ST_TRITON_BIN), or NULL. */
const char *st_test_triton_bin(void);

/* A fixture's first kernel: its cubin (test/fixtures/DIR/FIXTURE/sm_90.cubin), listing and decode. */
typedef struct st_test_kernel {
	st_cubin *c;
	st_sass_kernel *k;
	st_sass_opts o;
	char *listing;
	const char *name;
} st_test_kernel;
void st_test_kernel_open(st_test_kernel *x, const char *dir, const char *fixture); /* fails the test */
void st_test_kernel_close(st_test_kernel *x);
st_sched *st_test_sched_new(const st_test_kernel *x, unsigned flags);                /* fails the test */

/* A cubin opened again from c's bytes (fails the test); whether two cubins have the same bytes. */
st_cubin *st_test_cubin_copy(const st_cubin *c);
int st_test_same_bytes(const st_cubin *a, const st_cubin *b);
/* The tests' xorshift generator: the next value of *state (each test file keeps its own seed). */
uint64_t st_test_xorshift(uint64_t *state);
/* Kernel 0's original slot j of t (a copy, order unchanged) gets control fields c (fails the test). */
void st_test_set_ctrl(st_cubin *t, const st_sass_insn *in, uint32_t j, st_ctrl c);
/* A checker report callback that prints each violation (ctx unused). */
void st_test_print_violation(void *ctx, const char *kernel, uint32_t offset, const char *msg);
/* The moves applied to s (on x), written as a schedule, replay checked (st_sched_rewrite) and raw
 * (st_schedule_apply) on x's cubin to the bytes of `want`; `what` names the case in a failure. */
void st_test_replays_to(const st_test_kernel *x, const st_sched *s, const st_cubin *want, const char *what);

/* The runtime tests' mock CUDA driver: the build folder (ST_BUILD_DIR, else dflt), its
 * sasstune-worker and test/libcuda_mock.so; options with short timings (1 ms warm-up, 60 pairs,
 * 0.5 s timeout); the add_kernel launch (two 16 KiB fp32 inputs) of test/mock/cuda_mock.c. */
typedef struct st_test_mock { char bindir[2048], worker[2100], libcuda[2100]; } st_test_mock;
void st_test_mock_init(st_test_mock *m, const char *dflt);
void st_test_mock_options(const st_test_mock *m, st_runtime_options *o);
extern const char st_test_mock_spec_json[];
st_launch *st_test_mock_spec(void); /* fails the test */
/* A mock cubin (test/mock/cuda_mock.c's text format) of add_kernel running BODY, and its size. */
#define ST_TEST_MOCK_CUBIN(body) ((const uint8_t *)("MOCKCUBIN\nkernel add_kernel\n" body "end\n"))
#define ST_TEST_MOCK_SIZE(p) strlen((const char *)(p))

/* A schedule parsed from JSON text (fails the test, naming the text, when it does not parse). */
st_schedule *st_test_schedule(const char *json);
/* A tune result against its input (cubin bytes, listing path): the independent checker finds no
 * violation in r->cubin, and r->schedule_json replayed by st_sched_rewrite gives r->cubin's bytes. */
void st_test_tune_replays(const uint8_t *cubin, size_t size, const char *listing, const st_tune_result *r);
#endif
