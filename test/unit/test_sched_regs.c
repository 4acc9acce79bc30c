/* Unit tests of the rename family's register-count raise and bank-aware targets
 * (plugin/sched/rename_regs.c) and of the checker's register-count and occupancy rules
 * (check_regs.c), on attention (208 registers, R0..R205 named: one free register below the count
 * without a raise) and matmul 2048 (docs/sched.md "Raising the register count"). */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/occupancy.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTN "attn_fwd_f16_bh4_n1024_d64_b128x64"
#define MM2048 "matmul_f16_2048x2048x2048_b128x256x64_w8s3"

static uint64_t rng = 0x51ed270b27e5a1c3ull;

static st_move rename_at_least(const st_sched *s, unsigned reg)
{
	for (size_t i = 0; i < st_sched_move_count(s); i++) {
		st_move m = st_sched_move(s, i);
		if (m.kind == ST_MOVE_RENAME && m.arg >= reg)
			return m;
	}
	st_move none = {ST_MOVE_SWAP, 0, UINT32_MAX, {0}};
	return none;
}

static void first_violation(void *ctx, const char *kernel, uint32_t offset, const char *msg)
{
	(void)kernel;
	char *out = ctx;
	if (!out[0])
		snprintf(out, 256, "0x%x: %s", offset, msg);
}

/* Without a limit the targets stay below R206 (count 208 less its reserve of 2); the limit is
 * refused below the count, above 255, after a move, or without the family; with 255 a rename
 * takes a register above R205, the state's count follows it, materialising writes it, the
 * checker accepts, and the schedule (with its {"regcount"}) replays checked and raw to the same
 * bytes; undo brings the count back. */
static void test_raise(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", ATTN);
	st_sched *plain = st_test_sched_new(&x, ST_SCHED_WIDE);
	assert_int_equal(st_sched_set_reglimit(plain, 255, &err), ST_EINVAL);
	assert_int_equal(st_sched_regcount(plain), 0);
	st_sched_free(plain);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
	assert_int_equal(st_sched_regcount(s), 208);
	assert_int_equal(rename_at_least(s, 206).slot, UINT32_MAX);
	st_move up = rename_at_least(s, 0);
	assert_int_not_equal(up.slot, UINT32_MAX);
	up.arg = 206;
	assert_int_equal(st_sched_check(s, up, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "below R206"));
	assert_int_equal(st_sched_set_reglimit(s, 207, &err), ST_EINVAL);
	assert_int_equal(st_sched_set_reglimit(s, 256, &err), ST_EINVAL);
	assert_int_equal(st_sched_set_reglimit(s, 255, &err), ST_OK);
	assert_int_equal(st_sched_check(s, up, &err), ST_OK);
	up.arg = 253; /* 253 + 1 + 2 > 255 */
	assert_int_equal(st_sched_check(s, up, &err), ST_EILLEGAL);
	up.arg = 252;
	assert_int_equal(st_sched_apply(s, up, &err), ST_OK);
	assert_int_equal(st_sched_regcount(s), 255);
	assert_int_equal(st_sched_set_reglimit(s, 255, &err), ST_EINVAL); /* moves applied */
	st_cubin *t = st_test_cubin_copy(x.c);
	assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
	assert_int_equal(st_cubin_regcount(t, 0), 255);
	size_t bad = 9;
	assert_int_equal(st_check_kernel(x.c, t, x.name, &x.o, st_test_print_violation, NULL, &bad, &err), ST_OK);
	assert_int_equal(bad, 0);
	st_test_replays_to(&x, s, t, "attention raised to 255");
	st_cubin_free(t);
	assert_int_equal(st_sched_undo(s, &err), ST_OK);
	assert_int_equal(st_sched_regcount(s), 208);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* Walks with renames above the count: every result passes the checker and the occupancy rule
 * (attention: 128 threads, 64 KiB dynamic shared: 2 blocks at 208 and at 255 registers). */
static void test_raise_walks(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", ATTN);
	unsigned limit = st_occupancy_max_regs(208, 128, 65536 + st_cubin_static_shared(x.c, 0), 0);
	assert_int_equal(limit, 255);
	size_t raised = 0, renames = 0;
	for (unsigned w = 0; w < 8; w++) {
		st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME | ST_SCHED_HOIST);
		assert_int_equal(st_sched_set_reglimit(s, limit, &err), ST_OK);
		for (unsigned t = 0; t < 24 && st_sched_move_count(s); t++) {
			st_move m = st_sched_move(s, (size_t)(st_test_xorshift(&rng) % st_sched_move_count(s)));
			st_move r = rename_at_least(s, 0);
			if (t % 2 && r.slot != UINT32_MAX)
				m = r;
			renames += m.kind == ST_MOVE_RENAME;
			assert_int_equal(st_sched_apply(s, m, &err), ST_OK);
		}
		raised += st_sched_regcount(s) > 208;
		st_cubin *t = st_test_cubin_copy(x.c);
		assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
		size_t bad = 0;
		if (st_check_kernel(x.c, t, x.name, &x.o, st_test_print_violation, NULL, &bad, &err))
			fail_msg("walk %u: %s", w, err.msg);
		assert_int_equal(st_check_occupancy(x.c, t, x.name, 128, 65536, 0, NULL, NULL, &bad, &err), ST_OK);
		st_cubin_free(t);
		st_sched_free(s);
	}
	print_message("  %zu renames, %zu of 8 walks raised the count\n", renames, raised);
	assert_true(raised > 4);
	st_test_kernel_close(&x);
}

/* A kernel that spills (test/fixtures/spill: --maxrregcount 96, so EIATTR_MAXREG_COUNT 96): a
 * limit above it is lowered to it, the state's count never passes it and every walk with renames
 * materialises (st_cubin_set_regcount refuses a count above the cap) and passes the checker. */
static void test_raise_capped(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "spill", "attn_spill");
	assert_int_equal(st_cubin_maxregs(x.c, 0), 96);
	unsigned count = st_cubin_regcount(x.c, 0);
	assert_true(count <= 96);
	for (unsigned w = 0; w < 4; w++) {
		st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
		assert_int_equal(st_sched_set_reglimit(s, 255, &err), ST_OK);
		for (unsigned t = 0; t < 32 && st_sched_move_count(s); t++) {
			st_move r = rename_at_least(s, 0);
			st_move m = r.slot != UINT32_MAX ? r : st_sched_move(s, (size_t)(st_test_xorshift(&rng) % st_sched_move_count(s)));
			assert_int_equal(st_sched_apply(s, m, &err), ST_OK);
		}
		assert_true(st_sched_regcount(s) <= 96);
		st_cubin *t = st_test_cubin_copy(x.c);
		if (st_sched_to_cubin(s, t, 0, &err))
			fail_msg("walk %u: %s", w, err.msg);
		size_t bad = 0;
		if (st_check_kernel(x.c, t, x.name, &x.o, st_test_print_violation, NULL, &bad, &err))
			fail_msg("walk %u: %s", w, err.msg);
		st_cubin_free(t);
		st_sched_free(s);
	}
	st_test_kernel_close(&x);
}

/* Hand-made hazards the checker catches: a register above the count (the rename written, the
 * count not raised), a count lowered, a raise that lowers the resident blocks (layernorm: 32
 * registers, 256 threads: 8 blocks; 40 registers: 6), a raise with the block size unknown. */
static void test_checker_rules(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	char first[256] = "";
	st_test_kernel_open(&x, "triton-sm90", ATTN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
	assert_int_equal(st_sched_set_reglimit(s, 255, &err), ST_OK);
	st_move up = rename_at_least(s, 0);
	up.arg = 230;
	assert_int_equal(st_sched_apply(s, up, &err), ST_OK);
	st_cubin *t = st_test_cubin_copy(x.c);
	assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
	assert_int_equal(st_cubin_set_regcount(t, 0, 208, &err), ST_OK); /* the raise undone by hand */
	size_t bad = 0;
	assert_int_equal(st_check_kernel(x.c, t, x.name, &x.o, first_violation, first, &bad, &err), ST_EILLEGAL);
	print_message("  %s\n", first);
	assert_non_null(strstr(first, "R230 is named but the register count is 208"));
	assert_int_equal(st_cubin_set_regcount(t, 0, 232, &err), ST_OK); /* 230 + 1 + reserve 2 = 233 */
	assert_int_equal(st_check_kernel(x.c, t, x.name, &x.o, NULL, NULL, &bad, &err), ST_EILLEGAL);
	assert_int_equal(st_cubin_set_regcount(t, 0, 233, &err), ST_OK);
	assert_int_equal(st_check_kernel(x.c, t, x.name, &x.o, NULL, NULL, &bad, &err), ST_OK);
	assert_int_equal(st_check_occupancy(x.c, t, x.name, 0, 0, 0, NULL, NULL, &bad, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "block size unknown"));
	st_cubin_free(t);
	st_sched_free(s);
	t = st_test_cubin_copy(x.c);
	assert_int_equal(st_cubin_set_regcount(t, 0, 200, &err), ST_OK);
	first[0] = 0;
	assert_int_equal(st_check_kernel(x.c, t, x.name, &x.o, first_violation, first, &bad, &err), ST_EILLEGAL);
	assert_non_null(strstr(first, "208 in the original"));
	st_cubin_free(t);
	st_test_kernel_close(&x);

	st_test_kernel_open(&x, "triton-sm90", "layernorm_f16_1024x1024");
	t = st_test_cubin_copy(x.c);
	assert_int_equal(st_cubin_set_regcount(t, 0, 40, &err), ST_OK);
	first[0] = 0;
	assert_int_equal(st_check_occupancy(x.c, t, x.name, 256, 32, 0, first_violation, first, &bad, &err), ST_EILLEGAL);
	print_message("  %s\n", first);
	assert_non_null(strstr(first, "blocks per SM 8 -> 6"));
	assert_int_equal(st_check_occupancy(x.c, t, x.name, 256, 32, 1, NULL, NULL, &bad, &err), ST_OK); /* allowed */
	assert_int_equal(st_check_occupancy(x.c, x.c, x.name, 0, 0, 0, NULL, NULL, &bad, &err), ST_OK);   /* unchanged */
	st_cubin_free(t);
	st_test_kernel_close(&x);
}

/* Bank-aware targets: with a raise on attention many registers are free; where a range's reader
 * is an FFMA/FMUL/FADD/IMAD with other register sources, the target avoids their bank (2 banks:
 * the register's parity) where the lowest free register would share it; with banks 0 the lowest
 * free register is taken.  Every chosen target is legal. */
static void test_banks(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", ATTN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
	assert_int_equal(st_sched_set_reglimit(s, 255, &err), ST_OK);
	size_t differ = 0, legal = 0;
	int *lowest = calloc(st_sched_count(s), sizeof *lowest);
	st_sched_set_banks(s, 0);
	for (uint32_t j = 0; j < st_sched_count(s); j++)
		lowest[j] = sc_rename_target(s, j);
	st_sched_set_banks(s, 2);
	for (uint32_t j = 0; j < st_sched_count(s); j++) {
		int t = sc_rename_target(s, j);
		assert_true(t >= 0 && lowest[j] >= 0);
		st_move m = {ST_MOVE_RENAME, (uint8_t)t, j, {0}};
		if (st_sched_check(s, m, NULL) != ST_OK)
			continue;
		legal++;
		if (t != lowest[j]) {
			assert_int_not_equal(t % 2, lowest[j] % 2); /* the other bank, not a farther register of the same */
			if (!differ)
				print_message("  slot %u (%s): R%d instead of R%d\n", j, st_sass_insns(x.k)[st_sched_at(s, j)].opcode, t,
					      lowest[j]);
			differ++;
		}
	}
	print_message("  %zu legal renames, %zu with a bank-aware target\n", legal, differ);
	assert_true(differ > 0);
	free(lowest);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raise),
		cmocka_unit_test(test_raise_walks),
		cmocka_unit_test(test_raise_capped),
		cmocka_unit_test(test_checker_rules),
		cmocka_unit_test(test_banks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
