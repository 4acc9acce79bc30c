/* Unit tests of the wait family (plugin/sched/wait.c, docs/sched.md "Later waits") and of the
 * checker's own reading of it (check.c, check_waits): the model refuses every wait ptxas placed
 * (each sits on the first instruction that needs it); the checker catches hand-moved waits that
 * skip a consumer and dropped ones; waits that swaps copied onto instructions that do not need
 * them move, and the checker accepts the result; no wait moves past a GMMA register or on a
 * SB that a DEPBAR.LE counts; the cache stays exact; schedules replay. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>



static uint64_t walk_rng = 0x853c49e6748fea9bull;
static uint64_t wrnd(void) { return st_test_xorshift(&walk_rng); }

static int is_gmma(const st_sass_insn *x)
{
	return strstr(x->opcode, "GMMA") != NULL;
}

static int regs_meet(const st_sass_reg *a, const st_sass_reg *b)
{
	return a->file == b->file && a->index < b->index + b->count && b->index < a->index + a->count;
}

static int shares_reg(const st_sass_insn *p, const st_sass_insn *q)
{
	for (int pass = 0; pass < 4; pass++) {
		const st_sass_reg *a = pass & 1 ? p->uses : p->defs, *b = pass & 2 ? q->uses : q->defs;
		unsigned na = pass & 1 ? p->nuses : p->ndefs, nb = pass & 2 ? q->nuses : q->ndefs;
		for (unsigned i = 0; i < na; i++)
			for (unsigned j = 0; j < nb; j++)
				if (regs_meet(&a[i], &b[j]))
					return 1;
	}
	return 0;
}

/* In the original state no wait moves: ptxas put each one on the first instruction that needs it
 * (or on a stop); each refusal names why. */
static void test_wait_refused_in_original(void **state_)
{
	(void)state_;
	for (const char *const *f = st_test_triton_fixtures; *f; f++) {
		st_test_kernel x;
		st_test_kernel_open(&x, "triton-sm90", *f);
		st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_WAIT);
		size_t refused = 0;
		for (size_t i = 0; i < st_sched_move_count(s); i++)
			assert_int_not_equal(st_sched_move(s, i).kind, ST_MOVE_WAIT);
		for (uint32_t j = 0; j < st_sched_count(s); j++)
			for (uint8_t k = 0; k < 6; k++) {
				if (!(st_sched_ctrl(s, j).wait >> k & 1))
					continue;
				st_move mv = {ST_MOVE_WAIT, k, j, {0}};
				st_error e = {0};
				assert_int_equal(st_sched_check(s, mv, &e), ST_EILLEGAL);
				assert_true(strstr(e.msg, "needs what the SB guards") || strstr(e.msg, "last instruction") ||
					    strstr(e.msg, "fixed point") || strstr(e.msg, "DEPBAR.LE counts") ||
					    strstr(e.msg, "no earlier wait"));
				refused++;
			}
		assert_true(refused > 0);
		st_sched_free(s);
		st_test_kernel_close(&x);
	}
}

static size_t check_count(st_test_kernel *x, const st_cubin *t, const char *want)
{
	st_error err = {0};
	size_t bad = 0;
	st_check_kernel(x->c, t, x->name, &x->o, NULL, NULL, &bad, &err);
	if (want && bad)
		assert_non_null(strstr(err.msg, "broken"));
	return bad;
}

/* Hand-made hazards: a wait ptxas placed moved one instruction later (past its consumer), or
 * dropped with no later wait in the block: the model refuses both (as a wait move and as a control
 * edit), the checker reports both. */
static void test_checker_catches_moved_waits(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", "layernorm_f16_1024x1024");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_WAIT);
	const st_sass_insn *in = st_sass_insns(x.k);
	size_t moved = 0, dropped = 0;
	for (uint32_t j = 0; j + 1 < st_sched_count(s) && moved < 12; j++) {
		if (in[j].cls != ST_CLASS_ALU || in[j].block != in[j + 1].block || in[j + 1].ctrl.wait)
			continue;
		for (uint8_t k = 0; k < 6; k++) {
			if (!(in[j].ctrl.wait >> k & 1))
				continue;
			st_move wm = {ST_MOVE_WAIT, k, j, {0}};
			assert_int_equal(st_sched_check(s, wm, NULL), ST_EILLEGAL);
			st_ctrl cx = in[j].ctrl, cy = in[j + 1].ctrl;
			cx.wait = (uint8_t)(cx.wait & ~(1u << k));
			st_move cm = {ST_MOVE_CTRL, 0, j, cx};
			st_error e = {0};
			assert_int_equal(st_sched_check(s, cm, &e), ST_EILLEGAL);
			assert_non_null(strstr(e.msg, "drops waits"));
			cy.wait = (uint8_t)(cy.wait | 1u << k);
			st_cubin *t = st_test_cubin_copy(x.c);
			uint8_t w[16];
			memcpy(w, in[j].word, 16);
			assert_int_equal(st_ctrl_encode(w, cx, &err), ST_OK);
			assert_int_equal(st_cubin_set_ctrl(t, 0, j, w, &err), ST_OK);
			uint8_t w2[16];
			memcpy(w2, in[j + 1].word, 16);
			assert_int_equal(st_ctrl_encode(w2, cy, &err), ST_OK);
			assert_int_equal(st_cubin_set_ctrl(t, 0, j + 1, w2, &err), ST_OK);
			if (!check_count(&x, t, "broken"))
				fail_msg("the wait on SB%u of 0x%x (%s) moved to 0x%x was not caught", k, 16 * j, in[j].opcode,
					 16 * (j + 1));
			st_cubin_free(t);
			moved++;
			/* dropped: no later wait on k in the block */
			int later = 0;
			for (uint32_t q = j + 1; q < st_sched_count(s) && in[q].block == in[j].block; q++)
				later |= in[q].ctrl.wait >> k & 1;
			if (later)
				continue;
			t = st_test_cubin_copy(x.c);
			assert_int_equal(st_cubin_set_ctrl(t, 0, j, w, &err), ST_OK);
			assert_true(check_count(&x, t, "broken") > 0);
			st_cubin_free(t);
			dropped++;
		}
	}
	assert_true(moved >= 5);
	print_message("  %zu moved and %zu dropped waits caught\n", moved, dropped);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* A swap copies A's waits onto B (B moves up); where B does not need one, it moves back down to
 * the first instruction that may need it, and the checker accepts the result. */
static void test_wait_after_swap(void **state_)
{
	(void)state_;
	size_t legal = 0;
	static const char *const pick[] = {"softmax_f32_1024x1024", "layernorm_f16_1024x1024", "add_f32_1M"};
	for (size_t p = 0; p < 3; p++) {
		st_test_kernel x;
		st_error err = {0};
		st_test_kernel_open(&x, "triton-sm90", pick[p]);
		st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_WAIT);
		for (uint32_t j = 0; j + 1 < st_sched_count(s); j++) {
			st_move sw = {ST_MOVE_SWAP, 0, j, {0}};
			if (st_sched_apply(s, sw, NULL))
				continue;
			for (uint8_t k = 0; k < 6; k++) {
				st_move wm = {ST_MOVE_WAIT, k, j, {0}};
				if (st_sched_check(s, wm, NULL) != ST_OK)
					continue;
				assert_int_equal(st_sched_apply(s, wm, &err), ST_OK);
				assert_false(st_sched_ctrl(s, j).wait >> k & 1);
				st_cubin *t = st_test_cubin_copy(x.c);
				assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
				assert_int_equal(check_count(&x, t, NULL), 0);
				st_cubin_free(t);
				assert_int_equal(st_sched_undo(s, &err), ST_OK);
				legal++;
			}
			assert_int_equal(st_sched_undo(s, &err), ST_OK);
		}
		st_sched_free(s);
		st_test_kernel_close(&x);
	}
	assert_true(legal > 0);
}

/* Random walks with the wait (and hoist) family on every fixture of both sets: the checker accepts
 * them, the schedule replays checked and raw to the same bytes; no listed wait move is on a
 * DEPBAR-counted SB or passes an instruction that shares a register with a GMMA. */
static void test_wait_walks(void **state_)
{
	(void)state_;
	size_t waits = 0;
	for (const char *const *f = st_test_triton_fixtures; *f; f++)
		for (int d = 0; d < 2; d++) {
			st_test_kernel x;
			st_error err = {0};
			st_test_kernel_open(&x, d ? "triton-sm90-ptxas13.5" : "triton-sm90", *f);
			st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_WAIT | (d ? ST_SCHED_HOIST : 0));
			const st_sass_insn *in = st_sass_insns(x.k);
			for (unsigned t = 0; t < 80 && st_sched_move_count(s); t++) {
				size_t nm = st_sched_move_count(s);
				for (size_t i = 0; i < nm; i++) {
					st_move mv = st_sched_move(s, i);
					if (mv.kind != ST_MOVE_WAIT)
						continue;
					assert_false(s->m.counted_sbs >> mv.arg & 1);
					sc_fix fix = {0, {{0}}};
					assert_int_equal(sc_check(s, mv, &fix, NULL, NULL, NULL), ST_OK);
					uint32_t to = fix.n == 2 ? fix.chg[1].slot : mv.slot + 1;
					/* W5: F stays in X's block, at most SC_WINDOW later; W6: only the wait masks change */
					assert_int_equal(in[st_sched_at(s, to)].block, in[st_sched_at(s, mv.slot)].block);
					assert_true(to > mv.slot && to - mv.slot <= SC_WINDOW);
					for (unsigned c = 0; c < fix.n; c++) {
						st_ctrl o = fix.chg[c].old, nw = fix.chg[c].now;
						o.wait = nw.wait = 0;
						assert_memory_equal(&o, &nw, sizeof o);
					}
					for (uint32_t q = mv.slot; q < to; q++) {
						const st_sass_insn *y = &in[st_sched_at(s, q)];
						assert_int_equal(y->cls, ST_CLASS_ALU);
						for (size_t g = 0; g < st_sass_count(x.k); g++)
							if (is_gmma(&in[g]) && shares_reg(&in[g], y))
								fail_msg("wait moved past 0x%x (%s), which shares a register with %s", 16 * q,
									 y->opcode, in[g].opcode);
					}
				}
				/* prefer a wait move when there is one (they appear after swaps) */
				st_move mv = st_sched_move(s, (size_t)(wrnd() % nm));
				for (size_t i = 0; i < nm; i++)
					if (st_sched_move(s, i).kind == ST_MOVE_WAIT && wrnd() % 2) {
						mv = st_sched_move(s, i);
						break;
					}
				waits += mv.kind == ST_MOVE_WAIT;
				if (st_sched_apply(s, mv, &err))
					fail_msg("%s: a listed move was refused: %s", *f, err.msg);
			}
			st_cubin *t = st_test_cubin_copy(x.c);
			assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
			if (check_count(&x, t, NULL))
				fail_msg("%s (%s): the checker refused a walk with wait moves", *f, d ? "ptxas 13.5" : "12.8");
			st_test_replays_to(&x, s, t, *f);
			st_cubin_free(t);
			st_sched_free(s);
			st_test_kernel_close(&x);
		}
	print_message("  %zu wait moves in the walks\n", waits);
	assert_true(waits > 20);
}

/* After every move the cached bits (wait moves included) equal a fresh evaluation. */
static void test_wait_cache_is_exact(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", "softmax_f32_1024x1024");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_WAIT);
	for (unsigned t = 0; t < 40 && st_sched_move_count(s); t++) {
		st_move mv = st_sched_move(s, (size_t)(wrnd() % st_sched_move_count(s)));
		assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
		for (uint32_t j = 0; j < st_sched_count(s); j++) {
			uint32_t bits = 0;
			for (uint8_t k = 0; k < 6; k++) {
				st_move q = {ST_MOVE_WAIT, k, j, {0}};
				bits |= sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 1u << (SC_LEGAL_WAIT + k) : 0;
			}
			if (bits != (s->legal[j] & (0x3fu << SC_LEGAL_WAIT)))
				fail_msg("after %u moves: slot %u cached 0x%x, fresh 0x%x", t + 1, j, s->legal[j], bits);
		}
	}
	st_sched_free(s);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_refused_in_original),
		cmocka_unit_test(test_checker_catches_moved_waits),
		cmocka_unit_test(test_wait_after_swap),
		cmocka_unit_test(test_wait_cache_is_exact),
		cmocka_unit_test(test_wait_walks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
