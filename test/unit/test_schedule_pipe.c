/* Unit tests of the "pipe" form of schedule files (family 3 form 1 rotations, docs/cubin.md): parsing,
 * every malformed field, the builder, printing and reading back, and applying on the row-sum fixture
 * (checked by st_sched_rewrite and unchecked by st_schedule_apply) to the bytes st_pipe_apply makes. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/pipe.h"
#include "sasstune/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD "{\"sasstune_schedule\": 1, \"kernels\": {\"k\": "

static void parse_bad(const char *json, const char *needle)
{
	st_schedule *s = NULL;
	st_error err = {0};
	st_status rc = st_schedule_parse(json, strlen(json), "t.json", &s, &err);
	if (rc != ST_EFORMAT)
		fail_msg("%s: status %d, expected ST_EFORMAT (%s)", json, rc, err.msg);
	assert_null(s);
	if (!strstr(err.msg, needle))
		fail_msg("%s: message '%s' lacks '%s'", json, err.msg, needle);
}

static void test_parse_and_print(void **state)
{
	(void)state;
	const char *json = "{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"pipe\": [{\"loop\": 432, \"loads\": [528, "
			   "720]}, {\"loads\": [1024], \"loop\": 960}]}, \"e\": {\"pipe\": []}}}";
	st_schedule *s = st_test_schedule(json);
	assert_int_equal(st_schedule_kernel_count(s), 2);
	assert_int_equal(st_schedule_pipe_count(s, 0), 2);
	assert_int_equal(st_schedule_pipe_count(s, 1), 0);
	assert_int_equal(st_schedule_pipe_count(s, 2), 0);
	assert_int_equal(st_schedule_move_count(s, 0), 0);
	assert_false(st_schedule_is_permutation(s, 0));
	uint32_t h = 0, loads[8] = {0};
	size_t n = 0;
	assert_int_equal(st_schedule_pipe_at(s, 0, 0, &h, loads, &n), ST_OK);
	assert_int_equal(h, 432);
	assert_int_equal(n, 2);
	assert_int_equal(loads[0], 528);
	assert_int_equal(loads[1], 720);
	assert_int_equal(st_schedule_pipe_at(s, 0, 1, &h, loads, &n), ST_OK);
	assert_int_equal(h, 960);
	assert_int_equal(n, 1);
	assert_int_equal(loads[0], 1024);
	assert_int_equal(st_schedule_pipe_at(s, 0, 2, &h, loads, &n), ST_EINVAL);
	assert_int_equal(st_schedule_pipe_at(s, 1, 0, &h, loads, &n), ST_EINVAL);
	/* a kernel with rotations moves no slot */
	uint32_t perm[4];
	st_error err = {0};
	assert_int_equal(st_schedule_permutation(s, 0, 4, perm, &err), ST_OK);
	for (uint32_t j = 0; j < 4; j++)
		assert_int_equal(perm[j], j);
	char *text = st_schedule_to_json(s);
	assert_non_null(text);
	assert_string_equal(text, "{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"pipe\": [{\"loop\": 432, \"loads\": "
				  "[528, 720]}, {\"loop\": 960, \"loads\": [1024]}]}, \"e\": {\"pipe\": []}}}\n");
	st_schedule *t = st_test_schedule(text);
	char *again = st_schedule_to_json(t);
	assert_string_equal(again, text);
	free(again);
	free(text);
	st_schedule_free(t);
	st_schedule_free(s);
}

static void test_malformed(void **state)
{
	(void)state;
	parse_bad(HEAD "{\"pipe\": 3}}}", "kernels.k.pipe: expected an array");
	parse_bad(HEAD "{\"pipe\": [3]}}}", "kernels.k.pipe[0]: expected {\"loop\"");
	parse_bad(HEAD "{\"pipe\": [{\"loads\": [16]}]}}}", "kernels.k.pipe[0]: missing \"loop\"");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16}]}}}", "kernels.k.pipe[0]: missing \"loads\"");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": -16, \"loads\": [16]}]}}}", "kernels.k.pipe[0].loop: expected a non-negative");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16.5, \"loads\": [16]}]}}}", "kernels.k.pipe[0].loop: expected a non-negative");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": \"16\", \"loads\": [16]}]}}}", "kernels.k.pipe[0].loop: expected");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 4294967312, \"loads\": [16]}]}}}", "kernels.k.pipe[0].loop: expected");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 24, \"loads\": [16]}]}}}", "kernels.k.pipe[0].loop: 24 (0x18) is not a multiple of 16");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": 32}]}}}", "kernels.k.pipe[0].loads: expected an array");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": []}]}}}", "kernels.k.pipe[0].loads: empty");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [16, 32, 48, 64, 80, 96, 112, 128, 144]}]}}}",
		  "kernels.k.pipe[0].loads: more than 8 loads");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32, -1]}]}}}", "kernels.k.pipe[0].loads[1]: expected a non-negative");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32, 40]}]}}}", "kernels.k.pipe[0].loads[1]: 40 (0x28) is not a multiple");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32, 32]}]}}}", "kernels.k.pipe[0].loads[1]: 0x20 given twice");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32]}, {\"loop\": 16, \"loads\": [48]}]}}}",
		  "kernels.k.pipe[1].loop: loop 0x10 given twice");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32], \"peel\": 3}]}}}", "kernels.k.pipe[0]: unknown field \"peel\"");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loop\": 32, \"loads\": [32]}]}}}", "kernels.k.pipe[0]: repeated field \"loop\"");
	parse_bad(HEAD "{\"pipe\": [], \"swaps\": [1]}}}", "kernels.k: \"pipe\" cannot be mixed with \"swaps\"");
	parse_bad(HEAD "{\"moves\": [1], \"pipe\": []}}}", "kernels.k: \"pipe\" cannot be mixed with \"moves\"");
	parse_bad(HEAD "{\"permutation\": [0], \"pipe\": []}}}", "kernels.k: \"pipe\" cannot be mixed with \"permutation\"");
}

static void expect_einval(st_status rc, const st_error *err, const char *needle)
{
	assert_int_equal(rc, ST_EINVAL);
	if (!strstr(err->msg, needle))
		fail_msg("message '%s' lacks '%s'", err->msg, needle);
}

static void test_build(void **state)
{
	(void)state;
	st_schedule *s = NULL;
	st_error err = {0};
	assert_int_equal(st_schedule_new(&s, &err), ST_OK);
	const uint32_t loads[9] = {512, 560, 16, 32, 48, 64, 80, 96, 112};
	assert_int_equal(st_schedule_add_pipe(s, "k", 336, loads, 2, &err), ST_OK);
	assert_int_equal(st_schedule_add_pipe(s, "k", 1024, loads + 2, 1, &err), ST_OK);
	expect_einval(st_schedule_add_pipe(s, "k", 336, loads + 2, 1, &err), &err, "loop 0x150 already has a rotation");
	expect_einval(st_schedule_add_pipe(s, "k", 48, loads, 0, &err), &err, "1..8 loads, not 0");
	expect_einval(st_schedule_add_pipe(s, "k", 48, loads, 9, &err), &err, "1..8 loads, not 9");
	expect_einval(st_schedule_add_pipe(s, "k", 40, loads, 1, &err), &err, "loop 0x28 is not a multiple of 16");
	const uint32_t odd[2] = {32, 33}, twice[2] = {32, 32};
	expect_einval(st_schedule_add_pipe(s, "k", 48, odd, 2, &err), &err, "load 0x21 is not a multiple of 16");
	expect_einval(st_schedule_add_pipe(s, "k", 48, twice, 2, &err), &err, "load 0x20 given twice");
	/* the forms exclude each other, both ways */
	expect_einval(st_schedule_add_swap(s, "k", 3, &err), &err, "kernels.k already holds pipe rotations");
	expect_einval(st_schedule_add_regcount(s, "k", 40, &err), &err, "already holds pipe rotations");
	st_ctrl c = {1, 0, 7, 7, 0, 0};
	expect_einval(st_schedule_add_ctrl(s, "k", 3, c, &err), &err, "already holds pipe rotations");
	const uint32_t perm[2] = {1, 0};
	expect_einval(st_schedule_set_permutation(s, "k", perm, 2, &err), &err, "already holds pipe rotations");
	assert_int_equal(st_schedule_add_swap(s, "sw", 3, &err), ST_OK);
	expect_einval(st_schedule_add_pipe(s, "sw", 336, loads, 1, &err), &err, "kernels.sw already holds swaps or moves");
	assert_int_equal(st_schedule_set_permutation(s, "pm", perm, 2, &err), ST_OK);
	expect_einval(st_schedule_add_pipe(s, "pm", 336, loads, 1, &err), &err, "kernels.pm already holds a permutation");
	char *text = st_schedule_to_json(s);
	assert_string_equal(text, "{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"pipe\": [{\"loop\": 336, \"loads\": "
				  "[512, 560]}, {\"loop\": 1024, \"loads\": [16]}]}, \"sw\": {\"swaps\": [3]}, \"pm\": "
				  "{\"permutation\": [1, 0]}}}\n");
	free(text);
	st_schedule_free(s);
}

/* The row sum's largest candidate (loop 0x150, loads 0x200 and 0x230), applied by st_pipe_apply. */
static st_cubin *rowsum_rotated(const st_test_kernel *x, st_pipe_cand *cand)
{
	st_pipe_cand *all = NULL;
	size_t n = 0;
	st_error err = {0};
	if (st_pipe_find(x->c, x->name, &x->o, &all, &n, &err))
		fail_msg("%s", err.msg);
	assert_true(n >= 1);
	*cand = all[0];
	for (size_t i = 1; i < n; i++)
		if (all[i].header == cand->header && all[i].nloads > cand->nloads)
			*cand = all[i];
	st_pipe_cands_free(all);
	assert_int_equal(cand->header, 0x150);
	assert_int_equal(cand->nloads, 2);
	st_cubin *want = st_test_cubin_copy(x->c);
	if (st_pipe_apply(want, x->name, &x->o, cand, 1, &err))
		fail_msg("%s", err.msg);
	return want;
}

static void test_apply_rowsum(void **state)
{
	(void)state;
	const char *bin = st_test_triton_bin();
	if (!bin)
		skip();
	char nvdisasm[2048];
	snprintf(nvdisasm, sizeof nvdisasm, "%s/nvdisasm", bin);
	setenv("SASSTUNE_NVDISASM", nvdisasm, 1); /* for st_schedule_apply's default options */
	st_test_kernel x;
	st_test_kernel_open(&x, "pipe", "rowsum_f32_256x4096");
	st_pipe_cand cand;
	st_cubin *want = rowsum_rotated(&x, &cand);
	st_schedule *s = NULL;
	st_error err = {0};
	assert_int_equal(st_schedule_new(&s, &err), ST_OK);
	assert_int_equal(st_schedule_add_pipe(s, x.name, cand.header, cand.loads, cand.nloads, &err), ST_OK);
	st_cubin *out = NULL;
	if (st_sched_rewrite(x.c, s, &x.o, &out, &err)) /* checked: the rules, then the checker */
		fail_msg("%s", err.msg);
	assert_true(st_test_same_bytes(out, want));
	st_cubin_free(out);
	st_cubin *raw = st_test_cubin_copy(x.c);
	if (st_schedule_apply(s, raw, &err)) /* unchecked */
		fail_msg("%s", err.msg);
	assert_true(st_test_same_bytes(raw, want));
	st_cubin_free(raw);
	/* all or nothing: a later kernel the cubin lacks leaves it untouched after the rotation */
	assert_int_equal(st_schedule_add_swap(s, "nope", 0, &err), ST_OK);
	raw = st_test_cubin_copy(x.c);
	assert_int_equal(st_schedule_apply(s, raw, &err), ST_ENOTFOUND);
	assert_true(st_test_same_bytes(raw, x.c));
	st_cubin_free(raw);
	st_schedule_free(s);
	/* a load that is not a candidate alone: refused with its rule, nothing written */
	assert_int_equal(st_schedule_new(&s, &err), ST_OK);
	assert_int_equal(st_schedule_add_pipe(s, x.name, cand.header, cand.loads, 1, &err), ST_OK);
	assert_int_equal(st_sched_rewrite(x.c, s, &x.o, &out, &err), ST_EILLEGAL);
	assert_null(out);
	assert_non_null(strstr(err.msg, "kernels.rowsum.pipe[0]: pipe P4"));
	raw = st_test_cubin_copy(x.c);
	assert_int_equal(st_schedule_apply(s, raw, &err), ST_EILLEGAL);
	assert_true(st_test_same_bytes(raw, x.c));
	st_cubin_free(raw);
	st_schedule_free(s);
	st_cubin_free(want);
	st_test_kernel_close(&x);
}

/* Form 2 entries: "form": 2 and "regs" parsed, printed back, read by st_schedule_pipe_form; form 1
 * prints neither key; a bad form or register limit is refused by name, in files and in the builder. */
static void test_form2(void **state)
{
	(void)state;
	const char *json = HEAD "{\"pipe\": [{\"loop\": 336, \"loads\": [464, 512], \"form\": 2, \"regs\": 24}, "
			   "{\"form\": 1, \"loop\": 960, \"loads\": [1024]}]}}}";
	st_schedule *s = st_test_schedule(json);
	unsigned form = 0, regs = 9;
	assert_int_equal(st_schedule_pipe_form(s, 0, 0, &form, &regs), ST_OK);
	assert_int_equal(form, 2);
	assert_int_equal(regs, 24);
	assert_int_equal(st_schedule_pipe_form(s, 0, 1, &form, &regs), ST_OK);
	assert_int_equal(form, 1);
	assert_int_equal(regs, 0);
	assert_int_equal(st_schedule_pipe_form(s, 0, 2, &form, &regs), ST_EINVAL);
	char *text = st_schedule_to_json(s);
	assert_string_equal(text, "{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"pipe\": [{\"loop\": 336, \"loads\": "
				  "[464, 512], \"form\": 2, \"regs\": 24}, {\"loop\": 960, \"loads\": [1024]}]}}}\n");
	free(text);
	st_schedule_free(s);
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32], \"form\": 3}]}}}", "kernels.k.pipe[0].form: expected 1");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32], \"form\": \"2\"}]}}}", "kernels.k.pipe[0].form: expected");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32], \"regs\": 24}]}}}",
		  "kernels.k.pipe[0].regs: only form 2 takes a register limit");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32], \"form\": 2, \"regs\": 256}]}}}",
		  "kernels.k.pipe[0].regs: expected an integer 0..255");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32], \"form\": 2, \"regs\": 2.5}]}}}",
		  "kernels.k.pipe[0].regs: expected an integer");
	parse_bad(HEAD "{\"pipe\": [{\"loop\": 16, \"loads\": [32], \"form\": 2, \"form\": 2}]}}}",
		  "kernels.k.pipe[0]: repeated field \"form\"");
	st_error err = {0};
	assert_int_equal(st_schedule_new(&s, &err), ST_OK);
	const uint32_t loads[1] = {32};
	expect_einval(st_schedule_add_pipe_form(s, "k", 3, 0, 16, loads, 1, &err), &err, "form 3 (1 rotation, 2 prefetch)");
	expect_einval(st_schedule_add_pipe_form(s, "k", 1, 24, 16, loads, 1, &err), &err, "register limit 24 (form 2 only");
	expect_einval(st_schedule_add_pipe_form(s, "k", 2, 256, 16, loads, 1, &err), &err, "register limit 256");
	assert_int_equal(st_schedule_add_pipe_form(s, "k", 2, 30, 16, loads, 1, &err), ST_OK);
	text = st_schedule_to_json(s);
	assert_non_null(strstr(text, "{\"loop\": 16, \"loads\": [32], \"form\": 2, \"regs\": 30}"));
	free(text);
	st_schedule_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_print),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_form2),
		cmocka_unit_test(test_apply_rowsum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
