/* Unit tests of the sb family (plugin/sched/sb.c, docs/sched.md "Scoreboard re-assignment") and
 * of the checker's own reading of it (check.c, check_sb): listed moves change exactly the
 * producer's SB and the wait mask of the first wait on the old SB after it, the checker accepts
 * them, undo restores; the model refuses async copies, DEPBAR-named SBs (old and new), producers
 * whose wait is in another block, and SB changes as plain control edits; the checker catches
 * hand-made re-assignments without the new wait, with it past a consumer, onto a DEPBAR-named SB
 * and on an LDGSTS; random walks on both fixture sets pass the checker and replay; the cache
 * stays exact. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t walk_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return st_test_xorshift(&walk_rng); }

static size_t check_count(st_test_kernel *x, const st_cubin *t, const char *want, char *msg, size_t n)
{
	st_error err = {0};
	size_t bad = 0;
	st_check_kernel(x->c, t, x->name, &x->o, NULL, NULL, &bad, &err);
	if (want && bad)
		assert_non_null(strstr(err.msg, "broken"));
	if (msg)
		snprintf(msg, n, "%s", err.msg);
	return bad;
}

/* Listed SB moves: the fix-up is P's field j -> k plus k on Y's wait mask (S4), nothing else; the
 * checker accepts the result; undo restores every control field. */
static void test_sb_listed(void **state_)
{
	(void)state_;
	size_t seen = 0;
	for (const char *const *f = st_test_triton_fixtures; *f; f++) {
		st_test_kernel x;
		st_error err = {0};
		st_test_kernel_open(&x, "triton-sm90", *f);
		st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_SB);
		const st_sass_insn *in = st_sass_insns(x.k);
		for (size_t i = 0; i < st_sched_move_count(s); i++) {
			st_move mv = st_sched_move(s, i);
			if (mv.kind != ST_MOVE_SB)
				continue;
			sc_fix fix = {0, {{0}}};
			assert_int_equal(sc_check(s, mv, &fix, NULL, NULL, NULL), ST_OK);
			assert_int_equal(fix.n, 2);
			st_ctrl po = fix.chg[0].old, pn = fix.chg[0].now, yo = fix.chg[1].old, yn = fix.chg[1].now;
			unsigned k = mv.arg & 7, rd = mv.arg >> 3, j = rd ? po.rbar : po.wbar;
			assert_int_equal(rd ? pn.rbar : pn.wbar, k);
			assert_true(j < 6 && j != k && !(s->sb_reserved >> k & 1) && !(s->sb_reserved >> j & 1));
			assert_int_equal(yn.wait, yo.wait | 1u << k);
			assert_true(yo.wait >> j & 1);
			/* Y is the first wait on j after P in its block */
			uint32_t y = fix.chg[1].slot;
			assert_int_equal(in[y].block, in[mv.slot].block);
			for (uint32_t q = mv.slot + 1; q < y; q++)
				assert_false(in[q].ctrl.wait >> j & 1);
			char d[160];
			st_sched_describe(s, mv, d, sizeof d);
			assert_non_null(strstr(d, "sb 0x"));
			assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
			st_cubin *t = st_test_cubin_copy(x.c);
			assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
			char msg[ST_ERROR_MSG_MAX];
			if (check_count(&x, t, NULL, msg, sizeof msg))
				fail_msg("%s: %s: the checker refused it: %s", *f, d, msg);
			st_cubin_free(t);
			assert_int_equal(st_sched_undo(s, &err), ST_OK);
			assert_memory_equal(&s->ctrl[mv.slot], &in[mv.slot].ctrl, sizeof(st_ctrl));
			assert_memory_equal(&s->ctrl[y], &in[y].ctrl, sizeof(st_ctrl));
			seen++;
		}
		st_sched_free(s);
		st_test_kernel_close(&x);
	}
	print_message("  %zu listed sb moves checked\n", seen);
	assert_true(seen >= 50);
}

/* The model's refusals, each naming its rule. */
static void test_sb_refused(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "matmul_f16_1024x1024x1024_b128x128x64_w4s4");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_SB), *off = st_test_sched_new(&x, ST_SCHED_WIDE);
	const st_sass_insn *in = st_sass_insns(x.k);
	assert_true(s->sb_reserved & 1); /* DEPBAR.LE SB0 and LDGSTS groups */
	size_t async = 0, named = 0, away = 0, ctrl = 0;
	for (uint32_t j = 0; j < st_sched_count(s); j++) {
		st_ctrl c = in[j].ctrl;
		for (unsigned rd = 0; rd < 2; rd++) {
			unsigned old = rd ? c.rbar : c.wbar;
			if (old > 5)
				continue;
			st_error e = {0};
			st_move to0 = {ST_MOVE_SB, (uint8_t)(8 * rd), j, {0}};
			if (old != 0) { /* SB0 is named by a DEPBAR: never a target */
				assert_int_equal(st_sched_check(s, to0, &e), ST_EILLEGAL);
				named += strstr(e.msg, "SB0 is named by a DEPBAR") != NULL;
			}
			st_move mv = {ST_MOVE_SB, (uint8_t)(8 * rd + (old == 5 ? 4 : 5)), j, {0}};
			e.msg[0] = 0;
			st_status rc = st_sched_check(s, mv, &e);
			if (strstr(in[j].opcode, "LDGSTS")) {
				assert_int_equal(rc, ST_EILLEGAL);
				async += strstr(e.msg, "not a plain") != NULL;
			}
			if (old == 0 && !strstr(in[j].opcode, "LDGSTS") && (s->m.si[j].flags & SC_VARLAT) &&
			    !(s->m.si[j].flags & (SC_FIXED | SC_SPECIAL))) {
				assert_int_equal(rc, ST_EILLEGAL);
				named += strstr(e.msg, "named by a DEPBAR") != NULL;
			}
			if (rc == ST_EILLEGAL && strstr(e.msg, "no wait on its"))
				away++;
			/* the family off: refused; as a control edit: scoreboards may not change */
			assert_int_equal(st_sched_check(off, mv, NULL), ST_EILLEGAL);
			st_ctrl n = c;
			if (rd)
				n.rbar = mv.arg & 7;
			else
				n.wbar = mv.arg & 7;
			st_move cm = {ST_MOVE_CTRL, 0, j, n};
			assert_int_equal(st_sched_check(s, cm, &e), ST_EILLEGAL);
			ctrl++;
		}
	}
	print_message("  refused: %zu async copies, %zu DEPBAR-named, %zu waited on elsewhere, %zu ctrl edits\n", async,
		      named, away, ctrl);
	assert_true(async > 0 && named > 0 && away > 0 && ctrl > 0);
	st_sched_free(s);
	st_sched_free(off);
	st_test_kernel_close(&x);
}

/* Hand-made hazards on the words themselves: a listed re-assignment without the new wait, with
 * the new wait past P's first consumer, onto SB0 (named by a DEPBAR), and on an LDGSTS. */
static void test_sb_checker_catches(void **state_)
{
	(void)state_;
	size_t nowait = 0, late = 0;
	static const char *const pick[] = {"softmax_f32_1024x1024", "layernorm_f16_1024x1024", "add_f32_1M"};
	for (size_t p = 0; p < 3; p++) {
		st_test_kernel x;
		st_test_kernel_open(&x, "triton-sm90", pick[p]);
		st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_SB);
		const st_sass_insn *in = st_sass_insns(x.k);
		for (size_t i = 0; i < st_sched_move_count(s); i++) {
			st_move mv = st_sched_move(s, i);
			sc_fix fix = {0, {{0}}};
			if (mv.kind != ST_MOVE_SB || sc_check(s, mv, &fix, NULL, NULL, NULL))
				continue;
			uint32_t P = mv.slot, y = fix.chg[1].slot, last = y;
			unsigned k = mv.arg & 7;
			/* no wait on k at all */
			st_cubin *t = st_test_cubin_copy(x.c);
			st_test_set_ctrl(t, in, P, fix.chg[0].now);
			assert_true(check_count(&x, t, "broken", NULL, 0) > 0);
			st_cubin_free(t);
			nowait++;
			/* the wait on k one past the first instruction after Y that reads or writes P's
			 * registers (a consumer Y's wait on the old SB no longer guards) */
			for (uint32_t q = y; q <= s->m.blast[in[P].block]; q++) {
				int hit = 0;
				for (unsigned d = 0; d < in[P].ndefs; d++)
					for (unsigned u = 0; u < in[q].nuses; u++)
						hit |= in[P].defs[d].file == in[q].uses[u].file &&
						       in[P].defs[d].index < in[q].uses[u].index + in[q].uses[u].count &&
						       in[q].uses[u].index < in[P].defs[d].index + in[P].defs[d].count;
				if (hit) {
					last = q + 1;
					break;
				}
			}
			if (last == y || last > s->m.blast[in[P].block] || mv.arg >= 8)
				continue;
			t = st_test_cubin_copy(x.c);
			st_test_set_ctrl(t, in, P, fix.chg[0].now);
			st_ctrl cl = in[last].ctrl;
			cl.wait = (uint8_t)(cl.wait | 1u << k);
			st_test_set_ctrl(t, in, last, cl);
			if (!check_count(&x, t, "broken", NULL, 0))
				fail_msg("%s: SB%u wait of 0x%x moved past its consumer to 0x%x not caught", pick[p], k, 16 * P,
					 16 * last);
			st_cubin_free(t);
			late++;
		}
		st_sched_free(s);
		st_test_kernel_close(&x);
	}
	print_message("  caught %zu without the new wait, %zu with it past a consumer\n", nowait, late);
	assert_true(nowait >= 20 && late >= 5);

	/* matmul: SB0 is named by DEPBAR.LE; an LDGSTS counts groups */
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "matmul_f16_1024x1024x1024_b128x128x64_w4s4");
	const st_sass_insn *in = st_sass_insns(x.k);
	size_t named = 0, async = 0;
	for (uint32_t j = 0; j < st_sass_count(x.k) && (!named || !async); j++) {
		st_ctrl c = in[j].ctrl;
		int rd = c.wbar > 5, is_async = strstr(in[j].opcode, "LDGSTS") != NULL;
		unsigned old = rd ? c.rbar : c.wbar;
		if (old > 5 || !(in[j].flags & ST_F_VARLAT) || (is_async && async) || (!is_async && (named || old == 0)))
			continue;
		unsigned k = is_async ? (old == 5 ? 4 : 5) : 0;
		uint32_t y = j + 1;
		while (y < st_sass_count(x.k) && in[y].block == in[j].block && !(in[y].ctrl.wait >> old & 1))
			y++;
		if (y >= st_sass_count(x.k) || in[y].block != in[j].block)
			continue;
		st_cubin *t = st_test_cubin_copy(x.c);
		st_ctrl n = c, cy = in[y].ctrl;
		if (rd)
			n.rbar = (uint8_t)k;
		else
			n.wbar = (uint8_t)k;
		cy.wait = (uint8_t)(cy.wait | 1u << k);
		st_test_set_ctrl(t, in, j, n);
		st_test_set_ctrl(t, in, y, cy);
		assert_true(check_count(&x, t, "broken", NULL, 0) > 0);
		st_cubin_free(t);
		if (is_async)
			async++;
		else
			named++;
	}
	assert_true(named == 1 && async == 1);
	st_test_kernel_close(&x);
}

/* Random walks with the sb family (and wait; hoist on the 13.5 set) on both fixture sets, an sb
 * move whenever one is legal every other step: the checker accepts the result, the schedule
 * replays checked and raw to the same bytes. */
static void test_sb_walks(void **state_)
{
	(void)state_;
	size_t sbs = 0;
	for (const char *const *f = st_test_triton_fixtures; *f; f++)
		for (int d = 0; d < 2; d++) {
			st_test_kernel x;
			st_error err = {0};
			st_test_kernel_open(&x, d ? "triton-sm90-ptxas13.5" : "triton-sm90", *f);
			st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_SB | ST_SCHED_WAIT | (d ? ST_SCHED_HOIST : 0));
			for (unsigned t = 0; t < 60 && st_sched_move_count(s); t++) {
				size_t nm = st_sched_move_count(s);
				st_move mv = st_sched_move(s, (size_t)(rnd() % nm));
				if (rnd() % 2)
					for (size_t i = 0, r = rnd() % 4; i < nm; i++) {
						st_move c = st_sched_move(s, i);
						if ((c.kind == ST_MOVE_SB || c.kind == ST_MOVE_WAIT) && r-- == 0) {
							mv = c;
							break;
						}
					}
				sbs += mv.kind == ST_MOVE_SB;
				if (st_sched_apply(s, mv, &err))
					fail_msg("%s: a listed move was refused: %s", *f, err.msg);
			}
			st_cubin *t = st_test_cubin_copy(x.c);
			assert_int_equal(st_sched_to_cubin(s, t, 0, &err), ST_OK);
			char msg[ST_ERROR_MSG_MAX];
			if (check_count(&x, t, NULL, msg, sizeof msg))
				fail_msg("%s (%s): the checker refused a walk with sb moves: %s", *f, d ? "13.5" : "12.8", msg);
			st_test_replays_to(&x, s, t, *f);
			st_cubin_free(t);
			st_sched_free(s);
			st_test_kernel_close(&x);
		}
	print_message("  %zu sb moves in the walks\n", sbs);
	assert_true(sbs > 40);
}

/* After every move the cached sb bits equal a fresh evaluation. */
static void test_sb_cache_is_exact(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", "softmax_f32_1024x1024");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_SB | ST_SCHED_WAIT | ST_SCHED_HOIST);
	for (unsigned t = 0; t < 80 && st_sched_move_count(s); t++) {
		size_t nm = st_sched_move_count(s);
		st_move mv = st_sched_move(s, (size_t)(rnd() % nm));
		for (size_t i = 0, r = rnd() % 3, go = rnd() % 2; go && i < nm; i++) { /* sb and wait moves often */
			st_move c = st_sched_move(s, i);
			if ((c.kind == ST_MOVE_SB || c.kind == ST_MOVE_WAIT) && r-- == 0) {
				mv = c;
				break;
			}
		}
		assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
		for (uint32_t j = 0; j < st_sched_count(s); j++) {
			uint32_t bits = 0, lo = j, hi = j;
			for (unsigned rd = 0; rd < 2; rd++) {
				int a = sc_sb_arg(s, j, rd, &lo, &hi);
				st_move q = {ST_MOVE_SB, (uint8_t)(a < 0 ? 0 : a), j, {0}};
				bits |= a >= 0 && sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 1u << (SC_LEGAL_SB + rd) : 0;
			}
			if (bits != (s->legal[j] & (3u << SC_LEGAL_SB)))
				fail_msg("after %u moves: slot %u cached 0x%x, fresh 0x%x", t + 1, j, s->legal[j], bits);
		}
		/* every kind (the wait family's bits read the SBs an sb move changed) */
		uint32_t *was = malloc(st_sched_count(s) * sizeof *was);
		assert_non_null(was);
		memcpy(was, s->legal, st_sched_count(s) * sizeof *was);
		sc_refresh_all(s);
		for (uint32_t j = 0; j < st_sched_count(s); j++)
			if (was[j] != s->legal[j])
				fail_msg("after %u moves (last %u at 0x%x): slot %u cached 0x%x, fresh 0x%x", t + 1, mv.kind,
					 16 * mv.slot, j, was[j], s->legal[j]);
		free(was);
	}
	st_sched_free(s);
	st_test_kernel_close(&x);
}

static void test_sb_families(void **state_)
{
	(void)state_;
	char fam[ST_SCHED_FAMILIES_MAX];
	unsigned f = 0;
	st_error err = {0};
	assert_int_equal(st_sched_parse_families("swap,ctrl,sb", &f, &err), ST_OK);
	assert_int_equal(f, ST_SCHED_SB);
	assert_string_equal(st_sched_families(f, fam, sizeof fam), "swap,ctrl,sb");
	assert_string_equal(st_sched_families(ST_SCHED_SB | ST_SCHED_WAIT | ST_SCHED_HOIST, fam, sizeof fam), "swap,ctrl,hoist,wait,sb");
	assert_string_equal(st_sched_families(ST_SCHED_SB | ST_SCHED_NO_CTRL, fam, sizeof fam), "swap,sb");
	assert_int_equal(ST_MOVE_SB, 7);
	assert_int_equal(ST_SCHED_SB, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sb_families),
		cmocka_unit_test(test_sb_listed),
		cmocka_unit_test(test_sb_refused),
		cmocka_unit_test(test_sb_checker_catches),
		cmocka_unit_test(test_sb_cache_is_exact),
		cmocka_unit_test(test_sb_walks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
