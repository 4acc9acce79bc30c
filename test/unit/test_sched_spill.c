/* The spill fixture's model/checker disagreements (session 8 CPU dry run, `soundness --dry-run 2`
 * on test/fixtures/spill/attn_spill with every family, mode "new-first"; docs/sched.md "Spilling
 * kernels: model and checker agree").  Three cases, each a walk of that run:
 * - set-to-wait: a swap copies A's waits onto B, and B met them only at A's original distance
 *   (1 cycle after an STL's read SB); the model now raises the stall (it read only B's own waits);
 * - sb anchor: a re-assigned producer's new wait with an instruction between that issued before
 *   the producer's first wait in the original too; the checker no longer asks it (as check_waits);
 * - WAR through a read SB: an LDGSTS (no write SB, read SB4) guards its sources by SB4 only; the
 *   checker treated it as guarded by every SB.
 * Each: the checker's verdict on the walk, and the hazard the rule must still catch.  And sb rule
 * S7 (found alongside): a schedule's sb move onto a k set or waited on near Y keeps set-to-wait. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/schedule.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALL_FAMILIES (ST_SCHED_WIDE | ST_SCHED_HOIST | ST_SCHED_WAIT | ST_SCHED_SB | ST_SCHED_RENAME | ST_SCHED_XBLOCK)

static char msgs[8192]; /* every violation of the latest check, one a line */

static void keep_violation(void *ctx, const char *kernel, uint32_t offset, const char *msg)
{
	(void)ctx;
	size_t n = strlen(msgs);
	snprintf(msgs + n, sizeof msgs - n, "%s 0x%04x: %s\n", kernel, offset, msg);
	print_message("  %s 0x%04x: %s\n", kernel, offset, msg);
}

static size_t violations(const st_test_kernel *x, const st_cubin *t)
{
	st_error err = {0};
	size_t v = 0;
	msgs[0] = 0;
	st_check_kernel(x->c, t, x->name, &x->o, keep_violation, NULL, &v, &err);
	return v;
}

static st_schedule *load(const char *rel)
{
	char *path = st_test_fixture(rel);
	st_schedule *sch = NULL;
	st_error err = {0};
	if (st_schedule_load(path, &sch, &err))
		fail_msg("%s: %s", rel, err.msg);
	free(path);
	return sch;
}

/* The schedule applied raw (no model) to a copy of x's cubin. */
static st_cubin *raw(const st_test_kernel *x, const st_schedule *sch)
{
	st_error err = {0};
	st_cubin *t = st_test_cubin_copy(x->c);
	assert_int_equal(st_schedule_apply(sch, t, &err), ST_OK);
	return t;
}

/* Walk 367 up to its 240th move: the STL at 0x360 sets read SB5 (stall 1), the LEA.HI.X.SX32 R29 at
 * 0x370 (1 cycle after it in the original too) waits on SB1 and SB5; the LEA.HI.X.SX32 R21 at 0x380
 * (5 cycles after the STL in the original) waits on nothing.  Swapping 0x370/0x380 gives R21 the
 * waits at 1 cycle: the model must raise the STL's stall to 2 (before the fix it did not; the
 * checker: "set-to-wait on SB5 (STL -> LEA.HI.X.SX32): 1 cycles, needs 2"). */
static void test_swap_inherited_wait(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "spill", "attn_spill");
	st_schedule *sch = load("sched/spill-s2w-before.json");
	st_sched *s = st_test_sched_new(&x, ALL_FAMILIES);
	assert_int_equal(st_sched_replay(s, sch, 0, &err), ST_OK);
	const st_sass_insn *in = st_sass_insns(x.k);
	assert_string_equal(in[st_sched_at(s, 0x36)].opcode, "STL");
	assert_int_equal(st_sched_ctrl(s, 0x36).rbar, 5);
	assert_int_equal(st_sched_ctrl(s, 0x36).stall, 1);
	assert_int_equal(st_sched_ctrl(s, 0x37).wait, 0x22);
	assert_int_equal(st_sched_ctrl(s, 0x38).wait, 0);
	st_move mv = {ST_MOVE_SWAP, 0, 0x37, {0}};
	assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
	assert_int_equal(st_sched_ctrl(s, 0x37).wait, 0x22); /* R21 inherited both */
	assert_int_equal(st_sched_ctrl(s, 0x36).stall, 2);   /* the set-to-wait fix-up */
	st_cubin *work = st_test_cubin_copy(x.c);
	assert_int_equal(st_sched_to_cubin(s, work, 0, &err), ST_OK);
	assert_int_equal(violations(&x, work), 0);
	/* without the raise (the walk as the old model wrote it) the checker catches it */
	st_ctrl low = st_sched_ctrl(s, 0x36);
	low.stall = 1;
	st_cubin *bad = st_test_cubin_copy(x.c);
	assert_int_equal(st_sched_to_cubin(s, bad, 0, &err), ST_OK);
	st_schedule *edit = NULL;
	assert_int_equal(st_schedule_new(&edit, &err), ST_OK);
	assert_int_equal(st_schedule_add_ctrl(edit, x.name, 0x36, low, &err), ST_OK);
	assert_int_equal(st_schedule_apply(edit, bad, &err), ST_OK);
	assert_int_equal(violations(&x, bad), 1);
	assert_non_null(strstr(msgs, "0x0370: set-to-wait on SB5 (STL -> LEA.HI.X.SX32): 1 cycles, needs 2"));
	st_schedule_free(edit);
	st_cubin_free(bad);
	st_cubin_free(work);
	st_sched_free(s);
	st_schedule_free(sch);
	st_test_kernel_close(&x);
}

/* Walk 759: LDL.LU R26 (0x4250) re-assigned SB3 -> SB1, its SB1 wait moved to 0x4490, then the
 * LDL.LU R90 (0x43e0, before the first SB3 wait after 0x4250, the FMUL at 0x4410, in the original
 * too) carried down between: the checker accepts it now (it flagged the LDL.LU as a memory
 * instruction before the wait).  What it must still catch: the same re-assignment with the SB1 wait
 * put after the FMUL R25, R26 at 0x4500, which reads the load's result and issued after that SB3
 * wait in the original. */
static void test_sb_anchor(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "spill", "attn_spill");
	st_schedule *sch = load("sched/spill-sb-anchor.json");
	st_cubin *t = raw(&x, sch);
	assert_int_equal(violations(&x, t), 0);
	const st_sass_insn *in = st_sass_insns(x.k);
	assert_string_equal(in[0x425].opcode, "LDL.LU");
	assert_int_equal(in[0x425].ctrl.wbar, 3);
	assert_true(in[0x441].ctrl.wait >> 3 & 1);
	assert_string_equal(in[0x450].opcode, "FMUL");
	assert_non_null(strstr(in[0x450].operands, "R26"));
	st_cubin *bad = st_test_cubin_copy(x.c);
	st_ctrl p = in[0x425].ctrl, y = in[0x451].ctrl;
	p.wbar = 1;
	y.wait = (uint8_t)(y.wait | 1u << 1);
	st_test_set_ctrl(bad, in, 0x425, p);
	st_test_set_ctrl(bad, in, 0x451, y);
	assert_true(violations(&x, bad) >= 1);
	/* the coverage rule and check_sb both name the FMUL that reads R26 */
	assert_non_null(strstr(msgs, "0x4500: FMUL reads or writes what LDL.LU (0x4250) produces before the wait on SB1"));
	assert_non_null(strstr(msgs, "0x4500: FMUL issues before the wait on SB1 (at 0x4510) of LDL.LU (0x4250, was SB3)"));
	st_cubin_free(bad);
	st_cubin_free(t);
	st_schedule_free(sch);
	st_test_kernel_close(&x);
}

/* Walk 47: MUFU.EX2 (0x1b10) re-assigned read SB1 -> SB5, the FMNMX at 0x1c20 overwriting R2
 * before the SB5 wait; R2 is a source of the LDGSTS at 0xc90 (no write SB, read SB4), whose read
 * SB4 the path waits on: accepted now (it was read as guarded by every SB).  What it must still
 * catch: the SB4 wait of the IMAD.WIDE R14 at 0x3d60, which overwrites a source of the LDGSTS at
 * 0x3d20 (read SB4), moved onto the LDGDEPBAR after it. */
static void test_war_read_sb(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "spill", "attn_spill");
	st_schedule *sch = load("sched/spill-war-readsb.json");
	st_cubin *t = raw(&x, sch);
	assert_int_equal(violations(&x, t), 0);
	const st_sass_insn *in = st_sass_insns(x.k);
	assert_non_null(strstr(in[0x3d2].opcode, "LDGSTS"));
	assert_int_equal(in[0x3d2].ctrl.rbar, 4);
	assert_int_equal(in[0x3d2].ctrl.wbar, 7);
	assert_string_equal(in[0x3d6].opcode, "IMAD.WIDE");
	assert_int_equal(in[0x3d6].ctrl.wait, 1u << 4);
	assert_string_equal(in[0x3d7].opcode, "LDGDEPBAR");
	st_cubin *bad = st_test_cubin_copy(x.c);
	st_ctrl a = in[0x3d6].ctrl, b = in[0x3d7].ctrl;
	a.wait = 0;
	b.wait = (uint8_t)(b.wait | 1u << 4);
	st_test_set_ctrl(bad, in, 0x3d6, a);
	st_test_set_ctrl(bad, in, 0x3d7, b);
	assert_true(violations(&x, bad) >= 1);
	/* the coverage rule, and check_waits (which names the first reason it finds) */
	assert_non_null(strstr(msgs, "0x3d60: IMAD.WIDE overwrites a source of what LDGSTS.E.BYPASS.128 (0x3d20) produces"));
	assert_non_null(strstr(msgs, "0x3d60: IMAD.WIDE issues before the wait on SB4"));
	st_cubin_free(bad);
	st_cubin_free(t);
	st_schedule_free(sch);
	st_test_kernel_close(&x);
}

/* An sb move naming a k that another instruction sets or waits on near P's wait (only a schedule
 * can: the list offers a locally idle k) must keep set-to-wait: the model refuses it (sb.c,
 * session 8), and the same edit made raw is what the checker calls a set-to-wait violation.  The
 * original has no such case (ptxas's own distances are the requirement there): random walks bring
 * setters and waits together. */
static uint64_t rng = 0x5eed5011ull;

static int find_s2w(const st_sched *s, st_move *out, uint32_t *y)
{
	st_error err = {0};
	for (uint32_t j = 0; j < st_sched_count(s); j++)
		for (unsigned a = 0; a < 14; a++) {
			st_move mv = {ST_MOVE_SB, (uint8_t)(a < 6 ? a : a + 2), j, {0}};
			if (st_sched_check(s, mv, &err) != ST_EILLEGAL || !strstr(err.msg, "set-to-wait"))
				continue;
			st_ctrl c = st_sched_ctrl(s, j);
			unsigned old = a < 6 ? c.wbar : c.rbar;
			uint32_t q = j + 1;
			while (!(st_sched_ctrl(s, q).wait >> old & 1))
				q++;
			print_message("  %s (wait at 0x%x)\n", err.msg, 16 * q);
			*out = mv;
			*y = q;
			return 1;
		}
	return 0;
}

static void test_sb_set_to_wait(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "spill", "attn_spill");
	st_sched *s = st_test_sched_new(&x, ALL_FAMILIES);
	st_move mv;
	uint32_t y = 0;
	int found = find_s2w(s, &mv, &y);
	assert_int_equal(found, 0);
	for (int step = 1; step <= 600 && !found; step++) {
		size_t n = st_sched_move_count(s);
		assert_true(n > 0);
		assert_int_equal(st_sched_apply(s, st_sched_move(s, st_test_xorshift(&rng) % n), &err), ST_OK);
		if (step % 25 == 0)
			found = find_s2w(s, &mv, &y);
	}
	assert_int_equal(found, 1);
	st_cubin *t = st_test_cubin_copy(x.c);
	assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
	assert_int_equal(violations(&x, t), 0);
	unsigned k = mv.arg & 7;
	st_ctrl p = st_sched_ctrl(s, mv.slot), c = st_sched_ctrl(s, y);
	if (mv.arg >> 3)
		p.rbar = (uint8_t)k;
	else
		p.wbar = (uint8_t)k;
	c.wait = (uint8_t)(c.wait | 1u << k);
	st_schedule *edit = NULL;
	assert_int_equal(st_schedule_new(&edit, &err), ST_OK);
	assert_int_equal(st_schedule_add_ctrl(edit, x.name, mv.slot, p, &err), ST_OK);
	assert_int_equal(st_schedule_add_ctrl(edit, x.name, y, c, &err), ST_OK);
	assert_int_equal(st_schedule_apply(edit, t, &err), ST_OK);
	assert_true(violations(&x, t) >= 1);
	char want[64];
	snprintf(want, sizeof want, "set-to-wait on SB%u", k);
	assert_non_null(strstr(msgs, want));
	st_schedule_free(edit);
	st_cubin_free(t);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swap_inherited_wait),
		cmocka_unit_test(test_sb_anchor),
		cmocka_unit_test(test_war_read_sb),
		cmocka_unit_test(test_sb_set_to_wait),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
