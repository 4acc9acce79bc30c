/* Unit tests of schedule files: parsing, every malformed field, expansion to permutations,
 * printing, and applying (all or nothing). */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void parse_bad(const char *json, st_status code, const char *needle)
{
	st_schedule *s = NULL;
	st_error err = {0};
	st_status rc = st_schedule_parse(json, strlen(json), "t.json", &s, &err);
	if (rc != code)
		fail_msg("%s: status %d, expected %d (%s)", json, rc, code, err.msg);
	assert_null(s);
	if (!strstr(err.msg, needle))
		fail_msg("%s: message '%s' lacks '%s'", json, err.msg, needle);
	assert_null(strchr(err.msg, '\n'));
}

static void test_parse(void **state)
{
	(void)state;
	st_schedule *s = st_test_schedule("{\"sasstune_schedule\": 1, \"kernels\": {\"a\": {\"swaps\": [1, 0, 1]},"
				  " \"b\": {\"permutation\": [2, 0, 1]}}}");
	assert_int_equal(st_schedule_kernel_count(s), 2);
	assert_string_equal(st_schedule_kernel_name(s, 0), "a");
	assert_string_equal(st_schedule_kernel_name(s, 1), "b");
	assert_null(st_schedule_kernel_name(s, 2));
	uint32_t p[4];
	st_error err = {0};
	/* swaps 1, 0, 1 on [0 1 2 3]: [0 2 1 3] -> [2 0 1 3] -> [2 1 0 3] */
	assert_int_equal(st_schedule_permutation(s, 0, 4, p, &err), ST_OK);
	assert_int_equal(p[0], 2);
	assert_int_equal(p[1], 1);
	assert_int_equal(p[2], 0);
	assert_int_equal(p[3], 3);
	assert_int_equal(st_schedule_permutation(s, 1, 3, p, &err), ST_OK);
	assert_int_equal(p[0], 2);
	assert_int_equal(p[1], 0);
	assert_int_equal(p[2], 1);
	/* needs a slot after 1 */
	assert_int_equal(st_schedule_permutation(s, 0, 2, p, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "kernels.a.swaps[0]: slot 1 has no next slot"));
	assert_int_equal(st_schedule_permutation(s, 1, 4, p, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "kernels.b.permutation: 3 entries, the kernel has 4 slots"));
	st_schedule_free(s);

	s = st_test_schedule("{\"kernels\": {}, \"sasstune_schedule\": 1}");
	assert_int_equal(st_schedule_kernel_count(s), 0);
	st_schedule_free(s);
}

static void test_malformed(void **state)
{
	(void)state;
	parse_bad("", ST_EFORMAT, "not valid JSON");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {", ST_EFORMAT, "not valid JSON");
	parse_bad("[1, 2]", ST_EFORMAT, "expected a JSON object");
	parse_bad("{\"kernels\": {}}", ST_EFORMAT, "missing \"sasstune_schedule\"");
	parse_bad("{\"sasstune_schedule\": 2, \"kernels\": {}}", ST_EUNSUPPORTED, "sasstune_schedule: version");
	parse_bad("{\"sasstune_schedule\": \"1\", \"kernels\": {}}", ST_EUNSUPPORTED, "not a number");
	parse_bad("{\"sasstune_schedule\": 1}", ST_EFORMAT, "kernels: expected an object");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": []}", ST_EFORMAT, "kernels: expected an object");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {}, \"extra\": 0}", ST_EFORMAT, "unknown field \"extra\"");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": 3}}", ST_EFORMAT, "kernels.k: expected an object");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {}}}", ST_EFORMAT, "kernels.k: give exactly one");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"swaps\": [], \"permutation\": []}}}", ST_EFORMAT,
		  "kernels.k: give exactly one");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"swap\": []}}}", ST_EFORMAT,
		  "kernels.k: unknown field \"swap\"");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"swaps\": 4}}}", ST_EFORMAT, "kernels.k.swaps:");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"swaps\": [1, -1]}}}", ST_EFORMAT,
		  "kernels.k.swaps[1]: expected a non-negative integer");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"permutation\": [0, 0.5]}}}", ST_EFORMAT,
		  "kernels.k.permutation[1]: expected a non-negative integer");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"permutation\": [\"0\"]}}}", ST_EFORMAT,
		  "kernels.k.permutation[0]");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"swaps\": [1]}, \"k\": {\"swaps\": [2]}}}",
		  ST_EFORMAT, "kernels.k: given twice");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\\n2\": 3}}", ST_EFORMAT, "kernels.k?2");

	st_schedule *s = st_test_schedule("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"permutation\": [1, 1, 0]}}}");
	uint32_t p[3];
	st_error err = {0};
	assert_int_equal(st_schedule_permutation(s, 0, 3, p, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "kernels.k.permutation[1]: slot 1 appears twice"));
	st_schedule_free(s);
	s = st_test_schedule("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"permutation\": [0, 7, 1]}}}");
	assert_int_equal(st_schedule_permutation(s, 0, 3, p, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "kernels.k.permutation[1]: slot 7 is past the last slot 2"));
	st_schedule_free(s);
}

static void test_build_and_print(void **state)
{
	(void)state;
	st_schedule *s = NULL;
	st_error err = {0};
	assert_int_equal(st_schedule_new(&s, &err), ST_OK);
	assert_int_equal(st_schedule_add_swap(s, "with \"quote\"", 3, &err), ST_OK);
	assert_int_equal(st_schedule_add_swap(s, "with \"quote\"", 5, &err), ST_OK);
	uint32_t perm[] = {1, 0, 2};
	assert_int_equal(st_schedule_set_permutation(s, "p", perm, 3, &err), ST_OK);
	assert_int_equal(st_schedule_add_swap(s, "p", 1, &err), ST_EINVAL);
	char *text = st_schedule_to_json(s);
	assert_non_null(text);
	st_schedule *t = st_test_schedule(text);
	assert_int_equal(st_schedule_kernel_count(t), 2);
	assert_string_equal(st_schedule_kernel_name(t, 0), "with \"quote\"");
	uint32_t a[8], b[8];
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(st_schedule_permutation(s, i, i ? 3 : 8, a, &err), ST_OK);
		assert_int_equal(st_schedule_permutation(t, i, i ? 3 : 8, b, &err), ST_OK);
		assert_memory_equal(a, b, (i ? 3 : 8) * sizeof a[0]);
	}
	free(text);
	st_schedule_free(t);
	st_schedule_free(s);
}

static void test_apply(void **state)
{
	(void)state;
	size_t size;
	uint8_t *bytes = st_test_read("cuda/branches.rdc.sm_90.cubin", &size);
	st_cubin *c = NULL;
	st_error err = {0};
	assert_int_equal(st_cubin_open_mem(bytes, size, "rdc", &c, &err), ST_OK);
	/* two kernels moved: the second one's swap is of its entry, so nothing may change */
	st_schedule *s = st_test_schedule("{\"sasstune_schedule\": 1, \"kernels\": {\"_Z4pickii\": {\"swaps\": [3]},"
				  " \"branches\": {\"swaps\": [0]}}}");
	assert_int_equal(st_schedule_apply(s, c, &err), ST_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "entry instruction"));
	size_t out_size;
	const uint8_t *out = st_cubin_data(c, &out_size);
	assert_int_equal(out_size, size);
	assert_memory_equal(out, bytes, size);
	st_schedule_free(s);
	/* an unknown kernel */
	s = st_test_schedule("{\"sasstune_schedule\": 1, \"kernels\": {\"nosuch\": {\"swaps\": [3]}}}");
	assert_int_equal(st_schedule_apply(s, c, &err), ST_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no kernel named 'nosuch'"));
	st_schedule_free(s);
	/* both fine: the file changes, and swapping again restores it */
	s = st_test_schedule("{\"sasstune_schedule\": 1, \"kernels\": {\"_Z4pickii\": {\"swaps\": [3]},"
		     " \"branches\": {\"swaps\": [5]}}}");
	assert_int_equal(st_schedule_apply(s, c, &err), ST_OK);
	out = st_cubin_data(c, &out_size);
	assert_true(memcmp(out, bytes, size) != 0);
	assert_int_equal(st_schedule_apply(s, c, &err), ST_OK);
	out = st_cubin_data(c, &out_size);
	assert_memory_equal(out, bytes, size);
	st_schedule_free(s);
	st_cubin_free(c);
	free(bytes);
}

/* Rename moves and register-field edits (docs/sched.md "Register renaming"): parsed, read back,
 * printed and re-parsed; malformed ones refused; they move nothing in a permutation. */
static void test_rename_entries(void **state)
{
	(void)state;
	st_schedule *s = st_test_schedule("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"moves\": [3, {\"slot\": 4, \"rename\": 9}, "
				  "{\"slot\": 4, \"field\": \"d\", \"reg\": 9}, {\"slot\": 6, \"field\": \"c\", \"reg\": 9}]}}}");
	assert_int_equal(st_schedule_move_count(s, 0), 4);
	st_schedule_move m = st_schedule_move_at(s, 0, 1);
	assert_int_equal(m.is_ctrl, ST_SCHEDULE_RENAME);
	assert_int_equal(m.slot, 4);
	assert_int_equal(m.reg, 9);
	m = st_schedule_move_at(s, 0, 3);
	assert_int_equal(m.is_ctrl, ST_SCHEDULE_FIELD);
	assert_int_equal(m.field, 3);
	assert_int_equal(m.reg, 9);
	uint32_t perm[8];
	st_error err = {0};
	assert_int_equal(st_schedule_permutation(s, 0, 8, perm, &err), ST_OK);
	assert_int_equal(perm[3], 4); /* the swap only */
	assert_int_equal(perm[4], 3);
	assert_int_equal(perm[6], 6);
	char *text = st_schedule_to_json(s);
	assert_non_null(strstr(text, "{\"slot\": 4, \"rename\": 9}, {\"slot\": 4, \"field\": \"d\", \"reg\": 9}"));
	st_schedule *t = st_test_schedule(text);
	assert_int_equal(st_schedule_move_count(t, 0), 4);
	free(text);
	st_schedule_free(t);
	st_schedule_free(s);
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"moves\": [{\"slot\": 4, \"rename\": 255}]}}}", ST_EFORMAT, "rename");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"moves\": [{\"slot\": 4, \"field\": \"e\", \"reg\": 1}]}}}", ST_EFORMAT, "field");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"moves\": [{\"slot\": 4, \"rename\": 1, \"stall\": 1}]}}}", ST_EFORMAT, "rename");
}

/* A register count ({"regcount": n}, after renames that raised it; docs/sched.md "Raising the
 * register count"): parsed, read back, printed, re-parsed; out of range or with other keys refused;
 * it moves nothing in a permutation. */
static void test_regcount_entry(void **state)
{
	(void)state;
	st_schedule *s = st_test_schedule("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"moves\": [3, {\"regcount\": 210}]}}}");
	assert_int_equal(st_schedule_move_count(s, 0), 2);
	st_schedule_move m = st_schedule_move_at(s, 0, 1);
	assert_int_equal(m.is_ctrl, ST_SCHEDULE_REGCOUNT);
	assert_int_equal(m.reg, 210);
	uint32_t perm[8];
	st_error err = {0};
	assert_int_equal(st_schedule_permutation(s, 0, 8, perm, &err), ST_OK);
	assert_int_equal(perm[0], 0);
	assert_int_equal(perm[3], 4);
	char *text = st_schedule_to_json(s);
	assert_non_null(strstr(text, "[3, {\"regcount\": 210}]"));
	st_schedule *t = st_test_schedule(text);
	assert_int_equal(st_schedule_move_at(t, 0, 1).reg, 210);
	free(text);
	st_schedule_free(t);
	st_schedule_free(s);
	assert_int_equal(st_schedule_new(&s, &err), ST_OK);
	assert_int_equal(st_schedule_add_regcount(s, "k", 0, &err), ST_EINVAL);
	assert_int_equal(st_schedule_add_regcount(s, "k", 255, &err), ST_OK);
	st_schedule_free(s);
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"moves\": [{\"regcount\": 256}]}}}", ST_EFORMAT, "regcount");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"moves\": [{\"regcount\": 0}]}}}", ST_EFORMAT, "regcount");
	parse_bad("{\"sasstune_schedule\": 1, \"kernels\": {\"k\": {\"moves\": [{\"regcount\": 9, \"slot\": 1}]}}}", ST_EFORMAT, "regcount");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_build_and_print),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_rename_entries),
		cmocka_unit_test(test_regcount_entry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
