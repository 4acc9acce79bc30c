/* Unit tests of the rename family (plugin/sched/rename.c, docs/sched.md "Register renaming") and
 * of the checker's own reading of it (check_rename.c): a rename makes a swap legal that a false
 * (WAR/WAW) dependence refused before, and the checker accepts the result; hand-made hazards (a
 * def renamed without its reads, a rename onto a live register, a range live out of its block)
 * are refused by the model and caught by the checker; walks with the family stay clean, replay
 * from schedules (checked and unchecked) to the same bytes, undo exactly; the cache is exact. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return st_test_xorshift(&rng); }

static size_t check_count(st_test_kernel *x, const st_cubin *t, char *first, size_t n)
{
	st_error err = {0};
	size_t bad = 0;
	st_check_kernel(x->c, t, x->name, &x->o, NULL, NULL, &bad, &err);
	if (first && n) { /* the message, cut to fit (no snprintf: -Wformat-truncation in Release) */
		size_t k = strnlen(err.msg, n - 1);
		memcpy(first, err.msg, k);
		first[k] = 0;
	}
	return bad;
}

static void report_first(void *ctx, const char *kernel, uint32_t offset, const char *msg)
{
	(void)kernel;
	char *out = ctx;
	if (!out[0])
		snprintf(out, 256, "0x%x: %s", offset, msg);
}

static st_move first_rename(const st_sched *s, size_t from)
{
	for (size_t i = from; i < st_sched_move_count(s); i++)
		if (st_sched_move(s, i).kind == ST_MOVE_RENAME)
			return st_sched_move(s, i);
	st_move none = {ST_MOVE_SWAP, 0, UINT32_MAX, {0}};
	return none;
}

/* The point of the family: some swap refused for a WAR or WAW on the renamed register becomes
 * legal after the rename; with it applied the checker accepts the rewrite, and the schedule
 * replays (checked and unchecked) to the same bytes. */
static void test_rename_makes_swap_legal(void **state_)
{
	(void)state_;
	static const char *const fx[] = {"matmul_f16_2048x2048x2048_b128x256x64_w8s3", "attn_fwd_f16_bh4_n1024_d64_b128x64"};
	size_t found = 0;
	for (size_t f = 0; f < 2; f++) {
		st_test_kernel x;
		st_error err = {0};
		st_test_kernel_open(&x, "triton-sm90", fx[f]);
		st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
		size_t nm = st_sched_move_count(s), done = 0;
		for (size_t i = 0; i < nm && !done; i++) {
			st_move rn = st_sched_move(s, i);
			if (rn.kind != ST_MOVE_RENAME)
				continue;
			uint32_t lo = rn.slot > 4 ? rn.slot - 4 : 0, hi = rn.slot + 24 < st_sched_count(s) ? rn.slot + 24 : (uint32_t)st_sched_count(s) - 1;
			static char why[40][600];
			memset(why, 0, sizeof why);
			for (uint32_t j = lo; j < hi; j++) {
				st_move sw = {ST_MOVE_SWAP, 0, j, {0}};
				st_error e = {0};
				if (st_sched_check(s, sw, &e) == ST_EILLEGAL)
					snprintf(why[j - lo], sizeof why[0], "%s", e.msg);
			}
			assert_int_equal(st_sched_apply(s, rn, &err), ST_OK);
			for (uint32_t j = lo; j < hi && !done; j++) {
				st_move sw = {ST_MOVE_SWAP, 0, j, {0}};
				if ((strstr(why[j - lo], "WAR on R") || strstr(why[j - lo], "WAW on R")) &&
				    st_sched_check(s, sw, NULL) == ST_OK) {
					print_message("  %s: %s; after rename 0x%x -> R%u legal\n", fx[f], why[j - lo], 16 * rn.slot, rn.arg);
					assert_int_equal(st_sched_apply(s, sw, &err), ST_OK);
					done = 1;
				}
			}
			if (!done)
				assert_int_equal(st_sched_undo(s, &err), ST_OK);
		}
		found += done;
		if (done) {
			st_cubin *t = st_test_cubin_copy(x.c);
			char first[256] = "";
			assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
			if (check_count(&x, t, first, sizeof first))
				fail_msg("%s: the checker refused a rename and the swap it allowed: %s", fx[f], first);
			st_test_replays_to(&x, s, t, fx[f]);
			/* the swap alone (without the rename) is illegal: replaying it first is refused */
			st_sched *s2 = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
			assert_int_equal(st_sched_check(s2, s->undo[s->nundo - 1].m, NULL), ST_EILLEGAL);
			st_sched_free(s2);
			st_cubin_free(t);
		}
		st_sched_free(s);
		st_test_kernel_close(&x);
	}
	assert_int_equal(found, 2);
}

/* Write register byte `byte` of the instruction in `slot` of t's kernel 0. */
static void patch(st_cubin *t, uint32_t slot, unsigned byte, unsigned v)
{
	st_error err = {0};
	uint8_t w[16];
	memcpy(w, st_cubin_code(t, 0, NULL) + 16 * slot, 16);
	w[byte] = (uint8_t)v;
	assert_int_equal(st_cubin_set_regs(t, 0, slot, w, &err), ST_OK);
}

/* Hand-made hazards on matmul 2048, each refused by the model and caught by the checker: (1) the
 * def renamed, its reads not; (2) a def and its reads renamed onto a register the kernel uses;
 * (3) a def and its in-block reads renamed while the register is live at the block's end. */
static void test_rename_hazards(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", "matmul_f16_2048x2048x2048_b128x256x64_w8s3");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
	st_move rn = first_rename(s, 0);
	assert_int_not_equal(rn.slot, UINT32_MAX);
	const st_sass_insn *in = st_sass_insns(x.k);
	/* (1) the def alone */
	st_cubin *t = st_test_cubin_copy(x.c);
	char first[256] = "";
	patch(t, rn.slot, 2, rn.arg);
	st_check_kernel(x.c, t, x.name, &x.o, report_first, first, NULL, &err);
	print_message("  def renamed, reads not: %s\n", first);
	assert_non_null(strstr(first, "from another definition"));
	st_cubin_free(t);
	/* (2) the model's rename, but onto R0 (used): the model refuses, the checker catches */
	st_move bad = rn;
	bad.arg = 0;
	assert_int_equal(st_sched_check(s, bad, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "never names"));
	assert_int_equal(st_sched_apply(s, rn, &err), ST_OK);
	/* a register a reader of the range also reads: live there */
	unsigned other = 256;
	for (uint32_t i = rn.slot + 1; i < st_sched_count(s) && other == 256; i++)
		for (unsigned u = 0; sc_rename_word(s, i) && u < in[i].nuses; u++)
			if (in[i].uses[u].file == ST_RF_R && s->m.in[i].uses[u].index == in[i].uses[u].index)
				other = in[i].uses[u].index;
	assert_true(other < 255);
	t = st_test_cubin_copy(x.c);
	for (uint32_t i = 0; i < st_sched_count(s); i++) {
		const uint8_t *w = sc_rename_word(s, i);
		for (unsigned b = 2; w && b <= 8; b++)
			if (w[b] != in[i].word[b])
				patch(t, i, b, other); /* a live register instead of the free one */
	}
	first[0] = 0;
	st_check_kernel(x.c, t, x.name, &x.o, report_first, first, NULL, &err);
	print_message("  renamed onto R%u: %s\n", other, first);
	assert_true(first[0] != 0);
	st_cubin_free(t);
	assert_int_equal(st_sched_undo(s, &err), ST_OK);
	/* (3) a def the model refuses because its register is live at the block's end */
	size_t live = 0;
	for (uint32_t j = 0; j < st_sched_count(s) && !live; j++) {
		st_move m = {ST_MOVE_RENAME, rn.arg, j, {0}};
		st_error e = {0};
		if (st_sched_check(s, m, &e) != ST_EILLEGAL || !strstr(e.msg, "live at the end"))
			continue;
		unsigned v = 0;
		for (unsigned d = 0; d < in[j].ndefs; d++)
			if (in[j].defs[d].file == ST_RF_R)
				v = in[j].defs[d].index;
		t = st_test_cubin_copy(x.c);
		patch(t, j, 2, rn.arg);
		for (uint32_t q = j + 1; q < st_sched_count(s) && in[q].block == in[j].block; q++)
			for (unsigned u = 0; u < in[q].nuses; u++)
				if (in[q].uses[u].file == ST_RF_R && in[q].uses[u].index == v && sc_rename_byte(in[q].uses[u].slot) > 0)
					patch(t, q, (unsigned)sc_rename_byte(in[q].uses[u].slot), rn.arg);
		first[0] = 0;
		st_check_kernel(x.c, t, x.name, &x.o, report_first, first, NULL, &err);
		print_message("  live-out range renamed: %s (%s)\n", first, e.msg);
		assert_true(first[0] != 0);
		st_cubin_free(t);
		live++;
	}
	assert_int_equal(live, 1);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* The GPU failure of issue 15 (walk 763 of the session 5 campaign on matmul 2048): `rename 0x650
 * R4 -> R186` whose one reader, IMAD.HI.U32 R4, R5, R7, R4 at 0x700, reads the pair {R5:R4}
 * (docs/sass.md "Hidden register groups"); renamed, the hardware read {R187:R186}, R187 a live
 * pointer half.  The model no longer lists it and says why (the pair); the checker flags the
 * hand-made rewrite (def at slot 101 and field c of slot 112 set to R186). */
static void test_rename_imad_hi_pair(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", "matmul_f16_2048x2048x2048_b128x256x64_w8s3");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
	const st_sass_insn *in = st_sass_insns(x.k);
	assert_string_equal(in[101].opcode, "IMAD.MOV.U32");
	assert_string_equal(in[112].opcode, "IMAD.HI.U32");
	assert_int_equal(in[112].word[8], 4); /* Rc */
	assert_int_equal(sc_rename_target(s, 101), 186);
	for (size_t i = 0; i < st_sched_move_count(s); i++) {
		st_move m = st_sched_move(s, i);
		assert_false(m.kind == ST_MOVE_RENAME && (m.slot == 101 || m.slot == 112));
	}
	st_move rn = {ST_MOVE_RENAME, 186, 101, {0}};
	assert_int_equal(st_sched_check(s, rn, &err), ST_EILLEGAL);
	print_message("  %s\n", err.msg);
	assert_non_null(strstr(err.msg, "IMAD.HI.U32 at 0x700 as part of the pair R4..R5"));
	/* the target: every register of every group the kernel names is taken (N3), the high
	 * halves included (in this kernel each is also named alone somewhere) */
	st_move ok = first_rename(s, 0);
	assert_int_not_equal(ok.slot, UINT32_MAX);
	size_t groups = 0;
	for (size_t i = 0; i < st_sass_count(x.k); i++)
		for (unsigned k = 0; k < (unsigned)in[i].ndefs + in[i].nuses; k++) {
			const st_sass_reg *g = k < in[i].ndefs ? &in[i].defs[k] : &in[i].uses[k - in[i].ndefs];
			if (g->file != ST_RF_R || g->count < 2 || g->count > 4)
				continue;
			groups++;
			for (unsigned v = g->index; v < (unsigned)g->index + g->count && v < 255; v++) {
				st_move m = ok;
				m.arg = (uint8_t)v;
				assert_int_equal(st_sched_check(s, m, &err), ST_EILLEGAL);
				assert_non_null(strstr(err.msg, "never names"));
			}
		}
	assert_true(groups > 10);
	/* the checker: the failing walk's rewrite is flagged */
	st_cubin *t = st_test_cubin_copy(x.c);
	char first[256] = "";
	patch(t, 101, 2, 186);
	patch(t, 112, 8, 186);
	st_check_kernel(x.c, t, x.name, &x.o, report_first, first, NULL, &err);
	print_message("  checker: %s\n", first);
	assert_true(first[0] != 0);
	assert_non_null(strstr(first, "0x700"));
	st_cubin_free(t);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* Refusals name their reason: predicated or multi-register defs, forms not re-encoded. */
static void test_rename_refusals(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "attn_fwd_f16_bh4_n1024_d64_b128x64");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
	int target = sc_rename_target(s, 0); /* one free register (R204): every slot's */
	assert_true(target >= 0);
	size_t form = 0, never = 0, other = 0, ok = 0;
	for (uint32_t j = 0; j < st_sched_count(s); j++) {
		st_move m = {ST_MOVE_RENAME, (uint8_t)target, j, {0}};
		st_error e = {0};
		if (st_sched_check(s, m, &e) == ST_OK)
			ok++;
		else if (strstr(e.msg, "not an unpredicated"))
			form++;
		else if (strstr(e.msg, "a form the rename does not re-encode"))
			never++;
		else
			other++;
	}
	print_message("  attention: %zu renames legal, %zu defs not renamable, %zu ranges with a reader it cannot re-encode, %zu other\n",
		      ok, form, never, other);
	assert_true(ok > 0 && form > 0 && never > 0);
	/* without the family: refused */
	st_sched *s0 = st_test_sched_new(&x, ST_SCHED_WIDE);
	st_move m = first_rename(s, 0);
	st_error e = {0};
	assert_int_equal(st_sched_check(s0, m, &e), ST_EILLEGAL);
	assert_non_null(strstr(e.msg, "not enabled"));
	st_sched_free(s0);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* Random walks with the family on (and hoist, wait) over every fixture of both ptxas versions:
 * the checker flags none, schedules replay to the same bytes, a reset gives the original back. */
static void test_rename_walks(void **state_)
{
	(void)state_;
	static const char *const dirs[] = {"triton-sm90", "triton-sm90-ptxas13.5"};
	size_t renames = 0;
	for (size_t d = 0; d < 2; d++)
		for (const char *const *f = st_test_triton_fixtures; *f; f++) {
			st_test_kernel x;
			st_error err = {0};
			st_test_kernel_open(&x, dirs[d], *f);
			unsigned flags = ST_SCHED_WIDE | ST_SCHED_RENAME | (rnd() % 2 ? ST_SCHED_WAIT : 0);
			st_sched *s = st_test_sched_new(&x, flags);
			for (unsigned w = 0; w < 3; w++) {
				for (unsigned t = 0; t < 40 && st_sched_move_count(s); t++) {
					size_t nm = st_sched_move_count(s);
					st_move mv = st_sched_move(s, (size_t)(rnd() % nm));
					if (rnd() % 3 == 0) {
						st_move r = first_rename(s, (size_t)(rnd() % nm));
						mv = r.slot != UINT32_MAX ? r : mv;
					}
					renames += mv.kind == ST_MOVE_RENAME;
					if (st_sched_apply(s, mv, &err))
						fail_msg("%s: a listed move was refused: %s", *f, err.msg);
				}
				st_cubin *t = st_test_cubin_copy(x.c);
				char first[256] = "";
				assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
				if (check_count(&x, t, first, sizeof first))
					fail_msg("%s/%s: the checker refused a walk with renames: %s", dirs[d], *f, first);
				st_test_replays_to(&x, s, t, *f);
				st_cubin_free(t);
				st_sched_reset(s);
				t = st_test_cubin_copy(x.c);
				assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
				assert_true(st_test_same_bytes(t, x.c));
				st_cubin_free(t);
			}
			st_sched_free(s);
			st_test_kernel_close(&x);
		}
	print_message("  %zu renames in the walks\n", renames);
	assert_true(renames > 10);
}

/* After every move the cached rename bits equal a fresh evaluation. */
static void test_rename_cache_is_exact(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", "matmul_f16_2048x2048x2048_b128x256x64_w8s3");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_RENAME);
	for (unsigned t = 0; t < 30 && st_sched_move_count(s); t++) {
		st_move mv = st_sched_move(s, (size_t)(rnd() % st_sched_move_count(s)));
		if (t % 3 == 0 && first_rename(s, 0).slot != UINT32_MAX)
			mv = first_rename(s, 0);
		assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
		if (t % 5 == 4)
			assert_int_equal(st_sched_undo(s, &err), ST_OK);
		for (uint32_t j = 0; j < st_sched_count(s); j++) {
			int target = sc_rename_target(s, j);
			st_move q = {ST_MOVE_RENAME, (uint8_t)(target < 0 ? 0 : target), j, {0}};
			uint32_t bit = target >= 0 && sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 1u << SC_LEGAL_RENAME : 0;
			if (bit != (s->legal[j] & (1u << SC_LEGAL_RENAME)))
				fail_msg("after %u moves: slot %u cached 0x%x, fresh 0x%x", t + 1, j, s->legal[j], bit);
		}
	}
	st_sched_free(s);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rename_makes_swap_legal),
		cmocka_unit_test(test_rename_hazards),
		cmocka_unit_test(test_rename_imad_hi_pair),
		cmocka_unit_test(test_rename_refusals),
		cmocka_unit_test(test_rename_walks),
		cmocka_unit_test(test_rename_cache_is_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
