/* Unit tests of the hoist family (plugin/sched/hoist.c, docs/sched.md "Hoist and sink"): a hoist is
 * exactly its chain of adjacent swaps (same order, same control fields), legal iff every swap of
 * the chain is in turn; random walks with hoists pass the independent checker and replay to the
 * same bytes; the cached move list stays exact; a refused hoist names the swap that stops it. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"
#include "sched_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) { return st_test_xorshift(&rng_state); }


/* A walk of random legal moves (hoists among them): the checker accepts the result, the schedule
 * replays (checked, raw) to the same bytes, reset restores the original move list. */
static unsigned walk(st_test_kernel *x, unsigned flags, unsigned steps)
{
	st_error err = {0};
	st_sched *s = st_test_sched_new(x, flags);
	size_t n0 = st_sched_move_count(s);
	unsigned hoists = 0;
	for (unsigned t = 0; t < steps && st_sched_move_count(s); t++) {
		st_move mv = st_sched_move(s, (size_t)(rnd() % st_sched_move_count(s)));
		hoists += mv.kind == ST_MOVE_HOIST;
		if (st_sched_apply(s, mv, &err))
			fail_msg("%s: a listed move was refused: %s", x->name, err.msg);
	}
	assert_true(st_sched_depth(s) <= steps);
	st_cubin *work = st_test_cubin_copy(x->c);
	assert_int_equal(st_sched_to_cubin(s, work, 0, &err), ST_OK);
	size_t bad = 0;
	if (st_check_kernel(x->c, work, x->name, &x->o, st_test_print_violation, NULL, &bad, &err) || bad)
		fail_msg("%s (flags %u): the checker refused a walk with %u hoists: %s", x->name, flags, hoists, err.msg);
	if (st_sched_depth(s))
		st_test_replays_to(x, s, work, x->name);
	st_sched_reset(s);
	assert_int_equal(st_sched_depth(s), 0);
	assert_int_equal(st_sched_move_count(s), n0);
	st_cubin_free(work);
	st_sched_free(s);
	return hoists;
}

static void test_hoist_walks_pass_check(void **state_)
{
	(void)state_;
	unsigned hoists = 0;
	for (const char *const *f = st_test_triton_fixtures; *f; f++)
		for (int d = 0; d < 2; d++) {
			st_test_kernel x;
			st_test_kernel_open(&x, d ? "triton-sm90-ptxas13.5" : "triton-sm90", *f);
			hoists += walk(&x, ST_SCHED_HOIST, 40);
			hoists += walk(&x, ST_SCHED_HOIST | ST_SCHED_WIDE, 40);
			hoists += walk(&x, ST_SCHED_HOIST | ST_SCHED_WIDE | ST_SCHED_NO_CTRL, 40);
			st_test_kernel_close(&x);
		}
	assert_true(hoists > 100);
}

/* Applying a hoist leaves exactly the state its swaps applied one by one leave; one undo reverts
 * it all; st_sched_depth counts it once. */
static void test_hoist_is_its_swaps(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", "matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu");
	st_sched *h = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE), *w = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE);
	size_t n = st_sched_count(h), tried = 0, far = 0;
	for (size_t i = 0; i < st_sched_move_count(h) && tried < 200; i++) {
		st_move mv = st_sched_move(h, i);
		if (mv.kind != ST_MOVE_HOIST || mv.arg >= SC_HOIST_VARIANTS) /* the group form: test_sched_group */
			continue;
		uint32_t X = st_sched_at(h, mv.slot);
		assert_int_equal(st_sched_apply(h, mv, &err), ST_OK);
		assert_int_equal(st_sched_depth(h), 1);
		uint32_t to = 0;
		while (st_sched_at(h, to) != X)
			to++;
		unsigned d = to > mv.slot ? to - mv.slot : mv.slot - to;
		static const unsigned want[3] = {2, 4, 8};
		if (mv.arg % 4 < 3)
			assert_int_equal(d, want[mv.arg % 4]);
		else
			far += d > 2 && d != 4 && d != 8 && d <= SC_HOIST_MAX;
		assert_true((mv.arg < 4) == (to < mv.slot));
		for (unsigned t = 0; t < d; t++) {
			st_move sw = {ST_MOVE_SWAP, 0, to < mv.slot ? mv.slot - 1 - t : mv.slot + t, {0}};
			if (st_sched_apply(w, sw, &err))
				fail_msg("swap %u of the hoist of 0x%x refused: %s", t, 16 * mv.slot, err.msg);
		}
		for (size_t j = 0; j < n; j++) {
			assert_int_equal(st_sched_at(h, j), st_sched_at(w, j));
			st_ctrl a = st_sched_ctrl(h, j), b = st_sched_ctrl(w, j);
			assert_memory_equal(&a, &b, sizeof a);
		}
		assert_int_equal(st_sched_undo(h, &err), ST_OK);
		assert_int_equal(st_sched_depth(h), 0);
		st_sched_reset(w);
		for (size_t j = 0; j < n; j++) {
			assert_int_equal(st_sched_at(h, j), j);
			st_ctrl a = st_sched_ctrl(h, j), b = st_sched_ctrl(w, j);
			assert_memory_equal(&a, &b, sizeof a);
		}
		tried++;
	}
	assert_true(tried >= 50);
	assert_true(far > 0);
	st_sched_free(h);
	st_sched_free(w);
	st_test_kernel_close(&x);
}

/* After every move, the cached bits (hoist variants included) equal a fresh evaluation. */
static void test_hoist_cache_is_exact(void **state_)
{
	(void)state_;
	static const char *const pick[] = {"softmax_f32_1024x1024", "layernorm_f16_1024x1024"};
	for (size_t p = 0; p < 2; p++) {
		st_test_kernel x;
		st_error err = {0};
		st_test_kernel_open(&x, "triton-sm90", pick[p]);
		st_sched *s = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE);
		for (unsigned t = 0; t < 25 && st_sched_move_count(s); t++) {
			st_move mv = st_sched_move(s, (size_t)(rnd() % st_sched_move_count(s)));
			assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
			size_t count = 0;
			for (uint32_t j = 0; j < st_sched_count(s); j++) {
				unsigned bits = st_test_base_bits(s, j);
				st_move q = {ST_MOVE_HOIST, 0, j, {0}};
				for (uint8_t a = 0; a < SC_HOIST_ARGS; a++) { /* 8..15: the group form */
					q.arg = a;
					int b = a < SC_HOIST_VARIANTS ? SC_LEGAL_HOIST + a : SC_LEGAL_GROUP + a - SC_HOIST_VARIANTS;
					bits |= sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 1u << b : 0;
				}
				if (bits != s->legal[j])
					fail_msg("%s after %u moves: slot %u cached 0x%x, fresh 0x%x", pick[p], t + 1, j, s->legal[j], bits);
				for (; bits; bits &= bits - 1)
					count++;
			}
			assert_int_equal(count, st_sched_move_count(s));
		}
		st_sched_free(s);
		st_test_kernel_close(&x);
	}
}

/* A refused hoist names the swap that stops its chain: the same message that swap gets when it is
 * checked alone in the state the legal part of the chain leaves (hand-checked: the hazard is the
 * one of the stopping swap, e.g. a RAW on the moving instruction's source). */
static void test_hoist_refusal_names_the_stop(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "softmax_f32_1024x1024");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE);
	unsigned found0 = 0, found1 = 0;
	for (uint32_t j = 1; j < st_sched_count(s); j++) {
		st_move h = {ST_MOVE_HOIST, 0, j, {0}}; /* up 2 */
		st_error e = {0}, e2 = {0};
		if (st_sched_check(s, h, &e) == ST_OK)
			continue;
		assert_int_equal(e.code, ST_EILLEGAL);
		assert_null(strchr(e.msg, '\n'));
		st_move sw = {ST_MOVE_SWAP, 0, j - 1, {0}};
		if (st_sched_check(s, sw, &e2) != ST_OK) { /* the first swap is refused */
			assert_non_null(strstr(e.msg, ": 0 swaps in a row legal; then "));
			assert_non_null(strstr(e.msg, e2.msg));
			found0++;
			continue;
		}
		/* the first swap is legal, the second is not: apply the first, check the second alone */
		st_error e3 = {0};
		assert_int_equal(st_sched_apply(s, sw, &e3), ST_OK);
		st_move sw2 = {ST_MOVE_SWAP, 0, j - 2, {0}};
		assert_int_not_equal(j, 1);
		assert_int_equal(st_sched_check(s, sw2, &e3), ST_EILLEGAL);
		assert_non_null(strstr(e.msg, ": 1 swap in a row legal; then "));
		assert_non_null(strstr(e.msg, e3.msg));
		assert_int_equal(st_sched_undo(s, &e3), ST_OK);
		found1++;
	}
	assert_true(found0 > 0 && found1 > 0);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* Off unless asked: no hoist is listed without ST_SCHED_HOIST, and one is refused. */
static void test_hoist_off_by_default(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "layernorm_f16_1024x1024");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE), *h = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_HOIST);
	for (size_t i = 0; i < st_sched_move_count(s); i++)
		assert_int_not_equal(st_sched_move(s, i).kind, ST_MOVE_HOIST);
	size_t nh = 0;
	for (size_t i = 0; i < st_sched_move_count(h); i++) {
		st_move mv = st_sched_move(h, i);
		if (mv.kind != ST_MOVE_HOIST)
			continue;
		nh++;
		st_error e = {0};
		assert_int_equal(st_sched_check(s, mv, &e), ST_EILLEGAL);
		assert_non_null(strstr(e.msg, "not enabled"));
		char text[256];
		st_sched_describe(h, mv, text, sizeof text);
		const char *want = mv.arg >= 8 ? (mv.arg < 12 ? "group hoist 0x" : "group sink 0x") : mv.arg < 4 ? "hoist 0x" : "sink 0x";
		assert_true(!strncmp(text, want, strlen(want)));
		assert_non_null(strstr(text, " -> 0x"));
	}
	assert_int_equal(st_sched_move_count(h) - nh, st_sched_move_count(s)); /* the rest is unchanged */
	st_move bad = {ST_MOVE_HOIST, SC_HOIST_ARGS, 5, {0}};
	assert_int_equal(st_sched_check(h, bad, NULL), ST_EINVAL);
	st_sched_free(s);
	st_sched_free(h);
	st_test_kernel_close(&x);
}

/* The search features of a hoist are in range and mark it as a move of an instruction. */
static void test_hoist_features(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "softmax_f32_1024x1024");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_HOIST);
	st_error err = {0};
	size_t nh = 0;
	for (size_t i = 0; i < st_sched_move_count(s); i++) {
		if (st_sched_move(s, i).kind != ST_MOVE_HOIST)
			continue;
		float f[ST_SEARCH_NFEAT];
		assert_int_equal(st_sched_features(s, i, f, &err), ST_OK);
		for (size_t j = 0; j < ST_SEARCH_NFEAT; j++)
			assert_true(f[j] >= -1.0f && f[j] <= 1.0f);
		assert_float_equal(f[ST_F_SWAP], 1.0f, 0);
		assert_float_equal(f[ST_F_CTRL], 0.0f, 0);
		nh++;
	}
	assert_true(nh > 0);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* Rule 4, found on hoist walks: a write-scoreboard producer (LDC R56, W1, at 0x29f0 of matmul
 * 2048) may not pass a variable-latency instruction that reads registers late with no scoreboard
 * (STS.128 [R78+UR7], R72 at 0x29b0, R- W-): ptxas protects those reads through the LDC's SB1.
 * No hoist carries the LDC above the STS; other instructions still pass it. */
static void test_late_reader_keeps_its_protector(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "matmul_f16_2048x2048x2048_b128x256x64_w8s3");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_HOIST);
	const st_sass_insn *in = st_sass_insns(x.k);
	uint32_t sts = 0x29b0 / 16, ldc = 0x29f0 / 16;
	assert_string_equal(in[sts].opcode, "STS.128");
	assert_string_equal(in[ldc].opcode, "LDC");
	char why[192] = "";
	assert_true(sc_ordered(&s->m, sts, ldc, why, sizeof why));
	assert_non_null(strstr(why, "STS.128 reads its sources late without a scoreboard"));
	assert_false(sc_ordered(&s->m, sts, ldc - 1, NULL, 0)); /* an F2FP may pass it */
	for (uint8_t a = 0; a < 4; a++) {
		st_move h = {ST_MOVE_HOIST, a, ldc, {0}};
		uint32_t lo = ldc, hi = ldc;
		unsigned reach = sc_hoist_reach(s, ldc, -1, &lo, &hi, NULL);
		assert_true(reach < ldc - sts);
		if (st_sched_check(s, h, NULL) == ST_OK)
			assert_true(sc_hoist_dist(a, reach) < ldc - sts);
	}
	st_sched_free(s);
	st_test_kernel_close(&x);
}

static void test_families(void **state_)
{
	(void)state_;
	char fam[ST_SCHED_FAMILIES_MAX];
	st_error err = {0};
	unsigned f = ST_SCHED_WIDE;
	assert_string_equal(st_sched_families(ST_SCHED_DEFAULT_FAMILIES, fam, sizeof fam), ST_SCHED_MOVE_FAMILIES); /* the default, keyed */
	assert_string_equal(st_sched_families(ST_SCHED_NO_CTRL, fam, sizeof fam), "swap");
	assert_string_equal(st_sched_families(ST_SCHED_HOIST | ST_SCHED_WIDE, fam, sizeof fam), "swap,ctrl,hoist");
	assert_string_equal(st_sched_families(ST_SCHED_HOIST | ST_SCHED_NO_CTRL, fam, sizeof fam), "swap,hoist");
	assert_int_equal(st_sched_parse_families("swap,ctrl,hoist", &f, &err), ST_OK);
	assert_int_equal(f, ST_SCHED_WIDE | ST_SCHED_HOIST);
	assert_int_equal(st_sched_parse_families("hoist,swap", &f, &err), ST_OK);
	assert_int_equal(f, ST_SCHED_WIDE | ST_SCHED_HOIST | ST_SCHED_NO_CTRL);
	assert_string_equal(st_sched_families(f, fam, sizeof fam), "swap,hoist");
	assert_int_equal(st_sched_parse_families("swap,ctrl", &f, &err), ST_OK);
	assert_int_equal(f, ST_SCHED_WIDE);
	assert_int_equal(st_sched_parse_families("ctrl,hoist", &f, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "lacks swap"));
	assert_int_equal(st_sched_parse_families("swap,hoister", &f, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "'hoister'"));
	assert_int_equal(st_sched_parse_families("swap,later", &f, &err), ST_EINVAL);
	assert_int_equal(f, ST_SCHED_WIDE); /* unchanged by a refused list */
	assert_int_equal(st_sched_parse_families("swap,ctrl,hoist,wait", &f, &err), ST_OK);
	assert_int_equal(f, ST_SCHED_WIDE | ST_SCHED_HOIST | ST_SCHED_WAIT);
	assert_string_equal(st_sched_families(f, fam, sizeof fam), "swap,ctrl,hoist,wait");
	assert_int_equal(st_sched_parse_families("swap,wait", &f, &err), ST_OK);
	assert_string_equal(st_sched_families(f, fam, sizeof fam), "swap,wait");
	/* family 3 form 1 (tune's pipe alternative) by name, last; a short buffer is cut, not overrun */
	assert_int_equal(st_sched_parse_families("swap,ctrl,pipe", &f, &err), ST_OK);
	assert_int_equal(f, ST_SCHED_WIDE | ST_SCHED_PIPE);
	assert_string_equal(st_sched_families(f | ST_SCHED_XBLOCK, fam, sizeof fam), "swap,ctrl,xblock,pipe");
	assert_string_equal(st_sched_families(ST_SCHED_DEFAULT_FAMILIES, fam, 10), "swap,ctrl");
	assert_string_equal(st_sched_families(ST_SCHED_DEFAULT_FAMILIES, fam, 8), "swap,ct");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_late_reader_keeps_its_protector),
		cmocka_unit_test(test_hoist_off_by_default),
		cmocka_unit_test(test_hoist_refusal_names_the_stop),
		cmocka_unit_test(test_hoist_features),
		cmocka_unit_test(test_hoist_is_its_swaps),
		cmocka_unit_test(test_hoist_cache_is_exact),
		cmocka_unit_test(test_hoist_walks_pass_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
