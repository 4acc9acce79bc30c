/* Unit tests of the xblock family (plugin/sched/xblock.c, docs/sched.md "Across blocks") and of
 * the checker's own rule for it (check_xblock.c): which moves the fixtures offer (two
 * loop-invariant copies in layernorm, nothing elsewhere), apply/undo exactness and the frozen
 * blocks, the fix-ups, hand-made hazards (refused by the model, caught by the checker), schedule
 * replay, and random walks with every family on that the checker passes. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"
#include "sched_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LN "layernorm_f16_1024x1024"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) { return st_test_xorshift(&rng); }

static size_t count_kind(const st_sched *s, unsigned kind, st_move *first)
{
	size_t n = 0;
	for (size_t i = 0; i < st_sched_move_count(s); i++) {
		st_move m = st_sched_move(s, i);
		if (m.kind == kind && !n++ && first)
			*first = m;
	}
	return n;
}

static size_t violations(st_test_kernel *x, const st_cubin *t)
{
	size_t bad = 0;
	st_error err = {0};
	st_check_kernel(x->c, t, x->name, &x->o, NULL, NULL, &bad, &err);
	return bad;
}

typedef struct hits { const char *want; int hit; } hits;
static void on_violation(void *ctx, const char *kernel, uint32_t offset, const char *msg)
{
	hits *h = ctx;
	(void)kernel;
	(void)offset;
	if (strstr(msg, h->want))
		h->hit = 1;
}

/* The checker flags t with a message containing want. */
static void caught(st_test_kernel *x, const st_cubin *t, const char *want)
{
	hits h = {want, 0};
	size_t bad = 0;
	st_error err = {0};
	st_check_kernel(x->c, t, x->name, &x->o, on_violation, &h, &bad, &err);
	if (!bad || !h.hit)
		fail_msg("the checker did not report '%s' (%zu violations: %s)", want, bad, err.msg);
}

/* What the fixtures offer in their original state: the two `MOV R5, R2x` that ptxas re-copies
 * at the top of layernorm's loops (ptxas 12.8 and 13.5), nothing else. */
static void test_xblock_candidates(void **state_)
{
	(void)state_;
	static const char *const dirs[] = {"triton-sm90", "triton-sm90-ptxas13.5"};
	for (int d = 0; d < 2; d++)
		for (const char *const *f = st_test_triton_fixtures; *f; f++) {
			st_test_kernel x;
			st_test_kernel_open(&x, dirs[d], *f);
			st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK);
			size_t n = count_kind(s, ST_MOVE_XBLOCK, NULL);
			assert_int_equal(n, strcmp(*f, LN) ? 0 : 2);
			for (size_t i = 0; i < st_sched_move_count(s); i++) {
				st_move m = st_sched_move(s, i);
				char text[256];
				if (m.kind != ST_MOVE_XBLOCK)
					continue;
				st_sched_describe(s, m, text, sizeof text);
				assert_true(m.slot == 0x1c || m.slot == 0xc8);
				assert_non_null(strstr(text, "MOV, to the end of the block before"));
			}
			st_sched_free(s);
			st_test_kernel_close(&x);
		}
}

/* Apply: X lands on its block's first slot, L one lower; the stall of the instruction before X's
 * old slot grows by X's stall, the next takes X's waits; the model's block facts follow (X joins
 * A, H starts one slot later); A and H take swaps, hoists and control edits again (X8) but no
 * wait, sb or xblock move, and nothing moves X; undo restores order, control fields, the facts
 * and the move list exactly; the checker accepts the result. */
static void test_xblock_apply_undo(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", LN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK | ST_SCHED_HOIST | ST_SCHED_WAIT);
	const st_sass_insn *in = st_sass_insns(x.k);
	size_t n = st_sched_count(s), before = st_sched_move_count(s), nb = st_sass_block_count(x.k);
	st_move m, *list = malloc(before * sizeof *list);
	sc_info *si = malloc(n * sizeof *si);
	uint32_t *bf = malloc(nb * sizeof *bf), *bl = malloc(nb * sizeof *bl);
	assert_true(list && si && bf && bl);
	for (size_t i = 0; i < before; i++)
		list[i] = st_sched_move(s, i);
	memcpy(si, s->m.si, n * sizeof *si);
	memcpy(bf, s->m.bfirst, nb * sizeof *bf);
	memcpy(bl, s->m.blast, nb * sizeof *bl);
	assert_true(count_kind(s, ST_MOVE_XBLOCK, &m) == 2);
	uint32_t j = m.slot, X = st_sched_at(s, j), t = 0x1b;
	assert_int_equal(in[X].block, in[t].block);
	assert_int_equal(st_sched_apply(s, m, &err), ST_OK);
	assert_int_equal(st_sched_at(s, t), X);
	assert_int_equal(st_sched_at(s, t + 1), t);
	assert_int_equal(st_sched_ctrl(s, j).stall, in[j - 1].ctrl.stall + in[X].ctrl.stall);
	assert_int_equal(st_sched_ctrl(s, j + 1).wait & in[X].ctrl.wait, in[X].ctrl.wait);
	uint32_t h = in[t].block;
	assert_int_equal(s->m.si[X].block, h - 1);
	assert_int_equal(s->m.bfirst[h], t + 1);
	assert_int_equal(s->m.blast[h - 1], t);
	assert_true(sc_xblock_moved(s, X) && !sc_xblock_moved(s, t));
	size_t in_h = 0, into_gap = 0;
	for (size_t i = 0; i < st_sched_move_count(s); i++) {
		st_move q = st_sched_move(s, i);
		uint32_t b = s->m.si[st_sched_at(s, q.slot)].block;
		if (b != h && b != h - 1)
			continue;
		in_h += b == h;
		assert_true(q.kind != ST_MOVE_WAIT && q.kind != ST_MOVE_SB && q.kind != ST_MOVE_XBLOCK);
		assert_false(q.kind == ST_MOVE_SWAP && (q.slot == t - 1 || q.slot == t)); /* X stays */
		if (q.kind == ST_MOVE_HOIST && q.arg % 8 == 3) { /* hoist up far: into the slots X left */
			char text[256];
			st_sched_describe(s, q, text, sizeof text);
			into_gap += strstr(text, "-> 0x1d0") != NULL;
		}
	}
	assert_true(in_h > 10);
	assert_true(into_gap > 0);
	assert_int_equal(count_kind(s, ST_MOVE_XBLOCK, NULL), 1);
	st_cubin *c = st_test_cubin_copy(x.c);
	assert_int_equal(st_sched_to_cubin(s, c, 0, &err), ST_OK);
	assert_int_equal(violations(&x, c), 0);
	st_cubin_free(c);
	assert_int_equal(st_sched_undo(s, &err), ST_OK);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(st_sched_at(s, i), i);
		st_ctrl a = st_sched_ctrl(s, i);
		assert_memory_equal(&a, &in[i].ctrl, sizeof a);
	}
	assert_int_equal(st_sched_move_count(s), before);
	for (size_t i = 0; i < before; i++) {
		st_move q = st_sched_move(s, i);
		assert_true(q.kind == list[i].kind && q.arg == list[i].arg && q.slot == list[i].slot);
	}
	assert_memory_equal(si, s->m.si, n * sizeof *si);
	assert_memory_equal(bf, s->m.bfirst, nb * sizeof *bf);
	assert_memory_equal(bl, s->m.blast, nb * sizeof *bl);
	free(list), free(si), free(bf), free(bl);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* X7's fix-ups by hand for X at slot x moving out from between j-1 and j+1: the instruction
 * before X's old slot takes X's stall, the one after takes its wait mask. */
static void x7_fixups(const st_sass_insn *in, uint32_t j, uint32_t x, st_ctrl out[2])
{
	out[0] = in[j - 1].ctrl;
	out[1] = in[j + 1].ctrl;
	out[0].stall = (uint8_t)(out[0].stall + in[x].ctrl.stall);
	out[1].wait |= in[x].ctrl.wait;
}

/* A copy of x's cubin with original slot j carried to slot t (the others between shift down one),
 * and control fields `ctrl` set on tuned slots `at` (n of them). */
static st_cubin *rotated(st_test_kernel *x, uint32_t j, uint32_t t, const uint32_t *at, const st_ctrl *ctrl, int n)
{
	st_error err = {0};
	size_t cnt = st_sass_count(x->k);
	uint32_t *perm = malloc(cnt * sizeof *perm);
	assert_non_null(perm);
	for (uint32_t i = 0; i < cnt; i++)
		perm[i] = i;
	memmove(&perm[t + 1], &perm[t], (j - t) * sizeof *perm);
	perm[t] = j;
	st_cubin *c = st_test_cubin_copy(x->c);
	assert_int_equal(st_cubin_permute(c, 0, perm, cnt, &err), ST_OK);
	for (int i = 0; i < n; i++) {
		uint8_t w[16];
		memcpy(w, st_cubin_code(c, 0, NULL) + 16 * at[i], 16);
		assert_int_equal(st_ctrl_encode(w, ctrl[i], &err), ST_OK);
		assert_int_equal(st_cubin_set_ctrl(c, 0, at[i], w, &err), ST_OK);
	}
	free(perm);
	return c;
}

/* Hand-made hazards in layernorm's first loop (header 0x1b0, preheader ends at 0x1a0): each
 * instruction the model refuses (not a candidate), moved there by hand with the model's fix-ups,
 * is reported by the checker with its rule; the legal move made by hand passes. */
static void test_xblock_hazards(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", LN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK);
	const st_sass_insn *in = st_sass_insns(x.k);
	static const struct { uint32_t j; const char *op, *why; } bad[] = {
		{0x1d, "LEA", "shares a register with the block's first instruction"}, /* reads R7 (IADD3 at 0x1b0) */
		{0x22, "IADD3", "a source is written in the loop"},                    /* R26 (IADD3 at 0x370) */
		{0x28, "CS2R", "a destination is written elsewhere in the loop"},     /* R8: the LDG at 0x2d0 */
		{0x21, "LDG", "not a fixed-latency ALU"},                              /* a load */
	};
	for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
		uint32_t j = bad[b].j, t = 0x1b;
		assert_non_null(strstr(in[j].opcode, bad[b].op));
		st_move m = {ST_MOVE_XBLOCK, 0, j, {0}};
		st_error e = {0};
		assert_int_equal(st_sched_check(s, m, &e), ST_EILLEGAL);
		assert_non_null(strstr(e.msg, "not a candidate"));
		st_ctrl pv = in[j - 1].ctrl;
		pv.stall = (uint8_t)(pv.stall + in[j].ctrl.stall > 15 ? 15 : pv.stall + in[j].ctrl.stall);
		if (pv.stall > 11)
			pv.yield = 0, pv.reuse = 0;
		uint32_t at[1] = {j};
		st_cubin *c = rotated(&x, j, t, at, &pv, 1);
		caught(&x, c, bad[b].why);
		st_cubin_free(c);
	}
	/* the legal move by hand (MOV R5, R23 at 0x1c0): with the fix-ups it passes; without the
	 * stall fix-up the loop's back edge brings 0x1b0 -> 0x1d0 (RAW R7) too close; with X's
	 * wait on the LDC R23 dropped (kept on the next instruction) the LDC is not waited on */
	uint32_t j = 0x1c, t = 0x1b;
	st_ctrl xc = in[j].ctrl, good[3];
	x7_fixups(in, j, j, good);
	if (xc.yield)
		xc.reuse = 0;
	good[2] = xc;
	uint32_t at[3] = {j, j + 1, t};
	st_cubin *c = rotated(&x, j, t, at, good, 3);
	assert_int_equal(violations(&x, c), 0);
	st_cubin_free(c);
	c = rotated(&x, j, t, at + 1, good + 1, 2);
	assert_true(violations(&x, c) > 0);
	st_cubin_free(c);
	assert_true(xc.wait != 0);
	good[2].wait = 0;
	c = rotated(&x, j, t, at, good, 3);
	caught(&x, c, "not waited on before it");
	st_cubin_free(c);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* X8 lifted: after the move the model refuses a swap that moves X (the checker's shape: X ends A)
 * and a lower stall on X (its consumers in H were checked against it), and wait moves in A and
 * H; it accepts a hoist into the slots X left, which the checker passes, and a schedule of both
 * replays to the same bytes.  The checker catches X moved up inside A by hand. */
static void test_xblock_unfrozen(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", LN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK | ST_SCHED_HOIST | ST_SCHED_WAIT);
	const st_sass_insn *in = st_sass_insns(x.k);
	uint32_t j = 0x1c, t = 0x1b, X = j;
	st_move xm = {ST_MOVE_XBLOCK, 0, j, {0}};
	assert_int_equal(st_sched_apply(s, xm, &err), ST_OK);
	st_move q = {ST_MOVE_SWAP, 0, t - 1, {0}};
	st_error e = {0};
	assert_int_equal(st_sched_check(s, q, &e), ST_EILLEGAL);
	assert_non_null(strstr(e.msg, "stays there"));
	q = (st_move){ST_MOVE_CTRL, 0, t, st_sched_ctrl(s, t)};
	q.ctrl.stall--;
	assert_int_equal(st_sched_check(s, q, &e), ST_EILLEGAL);
	assert_non_null(strstr(e.msg, "block end"));
	q = (st_move){ST_MOVE_WAIT, 0, t + 2, {0}};
	assert_int_equal(st_sched_check(s, q, &e), ST_EILLEGAL);
	assert_non_null(strstr(e.msg, "no wait, sb or rename move there"));
	q = (st_move){ST_MOVE_HOIST, 3, 0x23, {0}}; /* IADD3 R25 up far: to 0x1d0, right after L */
	assert_int_equal(st_sched_apply(s, q, &err), ST_OK);
	assert_int_equal(st_sched_at(s, t + 2), 0x23);
	st_cubin *c = st_test_cubin_copy(x.c), *got = NULL;
	assert_int_equal(st_sched_to_cubin(s, c, 0, &err), ST_OK);
	assert_int_equal(violations(&x, c), 0);
	st_schedule *sch = NULL;
	assert_int_equal(st_schedule_new(&sch, &err), ST_OK);
	assert_int_equal(st_sched_to_schedule(s, sch, &err), ST_OK);
	assert_int_equal(st_sched_rewrite(x.c, sch, &x.o, &got, &err), ST_OK);
	assert_true(st_test_same_bytes(c, got));
	st_cubin_free(got);
	st_schedule_free(sch);
	st_cubin_free(c);
	st_sched_reset(s);
	for (uint32_t i = 0; i < st_sched_count(s); i++)
		assert_int_equal(st_sched_at(s, i), i);
	/* by hand: X carried one slot further up, into A (the model's fix-ups otherwise) */
	st_ctrl good[2];
	x7_fixups(in, j, X, good);
	uint32_t at[2] = {j, j + 1};
	c = rotated(&x, j, t - 1, at, good, 2);
	caught(&x, c, "crossed a block boundary");
	st_cubin_free(c);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* A loop header's other predecessor must be a back edge.  The bench layernorm's reduction block
 * (.L_x_0, 0x960) is entered from the block before (A) and by a branch from the kernel's first
 * block that skips the row loop (0x170, the zero-column case): no loop, yet the walk backwards
 * from that branch stopped nowhere and the "second entry" test passed (it only looked at
 * predecessors of the blocks it had marked, which all are).  Moving `MOV R20, RZ` (0xa10) to the
 * end of A would leave R20 unset on the skipping path.  The model refuses it now and the checker
 * catches it by hand, with the fix-ups the model would make. */
static void test_xblock_entry_path(void **state_)
{
	(void)state_;
	st_test_kernel x;
	size_t size;
	st_error err = {0};
	memset(&x, 0, sizeof x);
	uint8_t *bytes = st_test_read("bench/layernorm.sm_90.cubin", &size);
	assert_int_equal(st_cubin_open_mem(bytes, size, "bench layernorm", &x.c, &err), ST_OK);
	free(bytes);
	x.listing = st_test_fixture("bench/layernorm.sm_90.sass");
	x.o.listing = x.listing;
	x.name = st_cubin_kernel(x.c, 0)->name;
	assert_int_equal(st_sass_decode(x.c, x.name, &x.o, &x.k, &err), ST_OK);
	const st_sass_insn *in = st_sass_insns(x.k);
	uint32_t j = 0xa1, t = 0x96;
	assert_string_equal(in[j].opcode, "MOV");
	assert_int_equal(in[t].flags & ST_F_LEADER, ST_F_LEADER);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK);
	assert_int_equal(count_kind(s, ST_MOVE_XBLOCK, NULL), 2); /* 0x230 and 0xcc0, as in the fixture */
	st_move m = {ST_MOVE_XBLOCK, 0, j, {0}};
	assert_int_equal(st_sched_check(s, m, NULL), ST_EILLEGAL);
	st_ctrl fix[2];
	x7_fixups(in, j, j, fix);
	uint32_t at[2] = {j, j + 1};
	st_cubin *c = rotated(&x, j, t, at, fix, 2);
	caught(&x, c, "a path from the kernel's entry reaches it without passing the block before");
	st_cubin_free(c);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* X5's lasting part, white-box (no fixture needs it: hazards made by editing the model's facts):
 * with H's original length from L under 30 minus X's stall, or with a consumer of X in H whose
 * own start bound plus X's stall is under the latency, the move is refused; restored, legal. */
static void test_xblock_lasting(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", LN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK);
	uint32_t j = 0x1c, t = 0x1b, C = 0x1e; /* MOV R5, R23; L = IADD3 R7; ISETP.GE.AND P2 reads R5 */
	st_move m = {ST_MOVE_XBLOCK, 0, j, {0}};
	st_error e = {0};
	assert_int_equal(st_sched_check(s, m, NULL), ST_OK);
	sc_info keep_l = s->m.si[t], keep_c = s->m.si[C];
	s->m.si[t].orig_end = 20;
	assert_int_equal(st_sched_check(s, m, &e), ST_EILLEGAL);
	assert_non_null(strstr(e.msg, "cycles long originally"));
	s->m.si[t] = keep_l;
	s->m.si[C].orig_t = 1; /* as if ISETP sat 1 cycle after L originally */
	assert_int_equal(st_sched_check(s, m, &e), ST_EILLEGAL);
	assert_non_null(strstr(e.msg, "ISETP.GE.AND at 0x1e0 may come 3 cycles after it once its block moves"));
	s->m.si[C] = keep_c;
	assert_int_equal(st_sched_check(s, m, NULL), ST_OK);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* Walks that take both xblock moves first, then moves with every other pick inside the four
 * blocks they changed (A and H of each): the move cache equals a full recomputation every 8
 * moves, the checker flags none, undo restores the original. */
static void test_xblock_walks_after(void **state_)
{
	(void)state_;
	static const char *const dirs[] = {"triton-sm90", "triton-sm90-ptxas13.5"};
	size_t inside = 0;
	for (int d = 0; d < 2; d++) {
		st_test_kernel x;
		st_error err = {0};
		st_test_kernel_open(&x, dirs[d], LN);
		st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK | ST_SCHED_HOIST | ST_SCHED_WAIT | ST_SCHED_SB);
		for (int w = 0; w < 12; w++) {
			st_sched_reset(s);
			st_move m;
			while (count_kind(s, ST_MOVE_XBLOCK, &m))
				assert_int_equal(st_sched_apply(s, m, &err), ST_OK);
			for (int step = 0; step < 48 && st_sched_move_count(s); step++) {
				size_t nm = st_sched_move_count(s), k = 0, pick;
				size_t *near = malloc(nm * sizeof *near);
				assert_non_null(near);
				for (size_t i = 0; i < nm; i++)
					if (s->xfroz[s->m.si[st_sched_at(s, st_sched_move(s, i).slot)].block])
						near[k++] = i;
				pick = k && rnd() % 2 ? near[rnd() % k] : (size_t)(rnd() % nm);
				m = st_sched_move(s, pick);
				inside += s->xfroz[s->m.si[st_sched_at(s, m.slot)].block] != 0;
				free(near);
				assert_int_equal(st_sched_apply(s, m, &err), ST_OK);
				if (step % 8 == 7) { /* the cache after local refreshes equals a full recomputation */
					size_t n = st_sched_count(s);
					uint32_t *was = malloc(n * sizeof *was);
					assert_non_null(was);
					memcpy(was, s->legal, n * sizeof *was);
					sc_refresh_all(s);
					for (size_t q = 0; q < n; q++)
						if (was[q] != s->legal[q])
							fail_msg("walk %d step %d: slot %zu cached 0x%x, fresh 0x%x", w, step, q, was[q], s->legal[q]);
					free(was);
				}
			}
			st_cubin *c = st_test_cubin_copy(x.c);
			assert_int_equal(st_sched_to_cubin(s, c, 0, &err), ST_OK);
			if (violations(&x, c))
				caught(&x, c, "(none expected)");
			st_cubin_free(c);
		}
		st_sched_reset(s);
		for (uint32_t i = 0; i < st_sched_count(s); i++)
			assert_int_equal(st_sched_at(s, i), i);
		st_sched_free(s);
		st_test_kernel_close(&x);
	}
	assert_true(inside > 200);
	print_message("  %zu moves inside the blocks of an xblock move\n", inside);
}

/* Blocks after control flow (layernorm: after a branch or a predicated EXIT): moving an ALU
 * instruction to the end of the block before is refused by the model and caught by the checker. */
static void test_xblock_after_control(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", LN);
	const st_sass_insn *in = st_sass_insns(x.k);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK);
	size_t tried = 0;
	for (uint32_t L = 1; L + 2 < st_sass_count(x.k) && tried < 4; L++) {
		uint32_t j = L + 1;
		if (!(in[L].flags & ST_F_LEADER) || in[L - 1].cls != ST_CLASS_CONTROL || in[j].cls != ST_CLASS_ALU ||
		    (in[j].flags & ST_F_LEADER) || in[j].block != in[L].block || in[L].cls != ST_CLASS_ALU)
			continue;
		st_move m = {ST_MOVE_XBLOCK, 0, j, {0}};
		assert_int_equal(st_sched_check(s, m, NULL), ST_EILLEGAL);
		st_cubin *c = rotated(&x, j, L, NULL, NULL, 0);
		caught(&x, c, "to the end of the block before");
		st_cubin_free(c);
		tried++;
	}
	assert_true(tried > 0);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* Schedules: the xblock move is written as its swaps and fix-ups; a checked rewrite replays it
 * (as one xblock move) and gives the same bytes as the state; so does an unchecked one. */
static void test_xblock_schedule(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", LN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK);
	st_move m;
	int took = 0;
	for (int step = 0; step < 40; step++) {
		if (count_kind(s, ST_MOVE_XBLOCK, &m) && step % 7 == 3) {
			assert_int_equal(st_sched_apply(s, m, &err), ST_OK);
			took++;
			continue;
		}
		assert_int_equal(st_sched_apply(s, st_sched_move(s, rnd() % st_sched_move_count(s)), &err), ST_OK);
	}
	assert_true(took >= 1);
	st_schedule *sch = NULL;
	assert_int_equal(st_schedule_new(&sch, &err), ST_OK);
	assert_int_equal(st_sched_to_schedule(s, sch, &err), ST_OK);
	st_cubin *want = st_test_cubin_copy(x.c), *got = NULL, *raw = st_test_cubin_copy(x.c);
	assert_int_equal(st_sched_to_cubin(s, want, 0, &err), ST_OK);
	assert_int_equal(st_sched_rewrite(x.c, sch, &x.o, &got, &err), ST_OK);
	assert_true(st_test_same_bytes(want, got));
	assert_int_equal(st_schedule_apply(sch, raw, &err), ST_OK);
	assert_true(st_test_same_bytes(want, raw));
	assert_int_equal(violations(&x, want), 0);
	st_cubin_free(want);
	st_cubin_free(got);
	st_cubin_free(raw);
	st_schedule_free(sch);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* Random walks with every family on, over every fixture (both ptxas): the checker flags none; on
 * layernorm some walks take xblock moves (new first: one whenever legal). */
static void test_xblock_walks(void **state_)
{
	(void)state_;
	static const char *const dirs[] = {"triton-sm90", "triton-sm90-ptxas13.5"};
	size_t taken = 0;
	for (int d = 0; d < 2; d++)
		for (const char *const *f = st_test_triton_fixtures; *f; f++) {
			st_test_kernel x;
			st_error err = {0};
			st_test_kernel_open(&x, dirs[d], *f);
			st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK | ST_SCHED_WAIT);
			for (int w = 0; w < 3; w++) {
				st_sched_reset(s);
				for (int step = 0; step < 40 && st_sched_move_count(s); step++) {
					st_move m;
					if (!(count_kind(s, ST_MOVE_XBLOCK, &m) && rnd() % 2))
						m = st_sched_move(s, rnd() % st_sched_move_count(s));
					taken += m.kind == ST_MOVE_XBLOCK;
					assert_int_equal(st_sched_apply(s, m, &err), ST_OK);
				}
				st_cubin *c = st_test_cubin_copy(x.c);
				assert_int_equal(st_sched_to_cubin(s, c, 0, &err), ST_OK);
				if (violations(&x, c))
					caught(&x, c, "(none expected)");
				st_cubin_free(c);
			}
			st_sched_free(s);
			st_test_kernel_close(&x);
		}
	assert_true(taken >= 4);
	print_message("  %zu xblock moves in the walks\n", taken);
}

static void test_xblock_families(void **state_)
{
	(void)state_;
	char fam[ST_SCHED_FAMILIES_MAX];
	unsigned f = 0;
	st_error err = {0};
	assert_int_equal(st_sched_parse_families("swap,ctrl,xblock", &f, &err), ST_OK);
	assert_true(f & ST_SCHED_XBLOCK);
	assert_string_equal(st_sched_families(f, fam, sizeof fam), "swap,ctrl,xblock");
	assert_string_equal(st_sched_families(ST_SCHED_HOIST | ST_SCHED_WAIT | ST_SCHED_XBLOCK, fam, sizeof fam), "swap,ctrl,hoist,wait,xblock");
	assert_int_equal(st_sched_parse_families("swap,xblocks", &f, &err), ST_EINVAL);
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", LN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE);
	st_move m = {ST_MOVE_XBLOCK, 0, 0x1c, {0}};
	st_error e = {0};
	assert_int_equal(st_sched_check(s, m, &e), ST_EILLEGAL);
	assert_non_null(strstr(e.msg, "not enabled"));
	st_sched_free(s);
	st_test_kernel_close(&x);
}

/* The move cache stays exact: after every move of walks that take the xblock moves (layernorm),
 * each slot's cached bits equal a fresh evaluation (sc_check of every kind; frozen slots none). */
static void test_xblock_cache_is_exact(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", LN);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_XBLOCK);
	size_t took = 0;
	for (unsigned t = 0; t < 30 && st_sched_move_count(s); t++) {
		st_move mv;
		if (!(count_kind(s, ST_MOVE_XBLOCK, &mv) && rnd() % 3 == 0))
			mv = st_sched_move(s, (size_t)(rnd() % st_sched_move_count(s)));
		int undo = t % 10 == 9 && st_sched_depth(s);
		took += !undo && mv.kind == ST_MOVE_XBLOCK;
		assert_int_equal(undo ? st_sched_undo(s, &err) : st_sched_apply(s, mv, &err), ST_OK);
		size_t count = 0;
		for (uint32_t j = 0; j < st_sched_count(s); j++) {
			unsigned bits = st_test_base_bits(s, j);
			st_move q = {ST_MOVE_XBLOCK, 0, j, {0}};
			bits |= sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 1u << SC_LEGAL_XBLOCK : 0;
			if (bits != s->legal[j])
				fail_msg("after %u moves: slot %u cached 0x%x, fresh 0x%x", t + 1, j, s->legal[j], bits);
			for (; bits; bits &= bits - 1)
				count++;
		}
		assert_int_equal(count, st_sched_move_count(s));
	}
	assert_true(took > 0);
	st_sched_free(s);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xblock_candidates),   cmocka_unit_test(test_xblock_apply_undo),
		cmocka_unit_test(test_xblock_hazards),      cmocka_unit_test(test_xblock_after_control),
		cmocka_unit_test(test_xblock_schedule),     cmocka_unit_test(test_xblock_walks),
		cmocka_unit_test(test_xblock_families),     cmocka_unit_test(test_xblock_cache_is_exact),
		cmocka_unit_test(test_xblock_unfrozen),     cmocka_unit_test(test_xblock_walks_after),
		cmocka_unit_test(test_xblock_entry_path),   cmocka_unit_test(test_xblock_lasting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
