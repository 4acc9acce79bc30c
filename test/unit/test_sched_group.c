/* Unit tests of the group form of hoist (plugin/sched/group.c, docs/sched.md "Group hoist"): a
 * group move is exactly its steps of adjacent swaps (every member k slots further, relative order
 * kept, the non-members' order kept), legal iff each swap is in turn, one move for depth and undo;
 * groups are a load with producers whose results only it (or another member) reads; the cache
 * stays exact; walks with group moves pass the independent checker and replay to the same bytes;
 * a hand-broken group (the load above its address producer) is refused by the model and caught
 * by the checker. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return st_test_xorshift(&rng_state); }


static const char *const sets[2] = {"triton-sm90", "triton-sm90-ptxas13.5"};

/* Whether register unit (file, r) is among x's defs / uses. */
static int has(const st_sass_reg *v, unsigned n, unsigned file, unsigned r)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i].file == file && r >= v[i].index && r < (unsigned)v[i].index + v[i].count)
			return 1;
	return 0;
}

/* The group of every listed group move, checked from the instructions themselves: a
 * global/shared/constant load last; producers are fixed-latency math above it in its block, and
 * in the original order every instruction of the block that reads one of a producer's results
 * before it is rewritten is a member. */
static unsigned check_groups(const st_test_kernel *x, st_sched *s)
{
	const st_sass_insn *in = st_sass_insns(x->k);
	unsigned groups = 0;
	for (size_t i = 0; i < st_sched_move_count(s); i++) {
		st_move mv = st_sched_move(s, i);
		if (mv.kind != ST_MOVE_HOIST || mv.arg < 8)
			continue;
		uint32_t mem[SC_GROUP_MAX];
		unsigned nm = sc_group_members(s, mv.slot, mem);
		assert_true(nm >= 2 && nm <= SC_GROUP_MAX);
		const st_sass_insn *L = &in[st_sched_at(s, mv.slot)];
		assert_int_equal(mem[nm - 1], mv.slot);
		assert_true(L->flags & ST_F_LOAD);
		assert_true(L->space == ST_SPACE_GLOBAL || L->space == ST_SPACE_SHARED || L->space == ST_SPACE_CONST);
		for (unsigned j = 0; j + 1 < nm; j++) {
			const st_sass_insn *P = &in[st_sched_at(s, mem[j])];
			assert_true(mem[j] < mem[j + 1] && mv.slot - mem[j] <= SC_HOIST_MAX);
			assert_int_equal(P->cls, ST_CLASS_ALU);
			assert_int_equal(P->block, L->block);
			for (unsigned d = 0; d < P->ndefs; d++)
				for (unsigned r = P->defs[d].index; r < (unsigned)P->defs[d].index + P->defs[d].count; r++)
					for (uint32_t q = P->index + 1; q < st_sass_count(x->k) && in[q].block == P->block; q++) {
						if (has(in[q].uses, in[q].nuses, P->defs[d].file, r)) {
							unsigned k = 0;
							while (k < nm && st_sched_at(s, mem[k]) != q)
								k++;
							if (k == nm)
								fail_msg("%s: 0x%x (%s) reads what group member 0x%x (%s) writes", x->name,
									 16 * q, in[q].opcode, 16 * P->index, P->opcode);
						}
						if (in[q].guard < 0 && has(in[q].defs, in[q].ndefs, P->defs[d].file, r))
							break;
					}
		}
		groups++;
	}
	return groups;
}

/* A group move leaves exactly the state its steps of swaps leave: every member d slots up (down),
 * same relative order; the others in their order; one undo reverts it. */
static void test_group_is_its_steps(void **state_)
{
	(void)state_;
	unsigned tried = 0, groups = 0, far = 0;
	for (const char *const *f = st_test_triton_fixtures; *f; f++) {
		st_test_kernel x;
		st_error err = {0};
		st_test_kernel_open(&x, "triton-sm90", *f);
		st_sched *h = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE), *w = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE);
		groups += check_groups(&x, h);
		size_t n = st_sched_count(h);
		uint32_t *before = malloc(n * sizeof *before);
		for (size_t i = 0; i < st_sched_move_count(h) && tried < 300; i++) {
			st_move mv = st_sched_move(h, i);
			if (mv.kind != ST_MOVE_HOIST || mv.arg < 8)
				continue;
			uint32_t mem[SC_GROUP_MAX], X[SC_GROUP_MAX];
			unsigned nm = sc_group_members(h, mv.slot, mem);
			for (unsigned j = 0; j < nm; j++)
				X[j] = st_sched_at(h, mem[j]);
			for (size_t j = 0; j < n; j++)
				before[j] = st_sched_at(h, j);
			assert_int_equal(st_sched_apply(h, mv, &err), ST_OK);
			assert_int_equal(st_sched_depth(h), 1);
			uint32_t to = 0;
			while (st_sched_at(h, to) != X[nm - 1])
				to++;
			int up = mv.arg < 12;
			unsigned d = up ? mv.slot - to : to - mv.slot;
			static const unsigned want[3] = {2, 4, 8};
			if (mv.arg % 4 < 3)
				assert_int_equal(d, want[mv.arg % 4]);
			else
				far += d > 2 && d != 4 && d != 8 && d <= SC_HOIST_MAX;
			for (unsigned j = 0; j < nm; j++) /* every member d further, so their order is kept */
				assert_int_equal(st_sched_at(h, up ? mem[j] - d : mem[j] + d), X[j]);
			size_t a = 0, b = 0; /* the non-members keep their relative order */
			for (; a < n; a++) {
				unsigned k = 0;
				while (k < nm && X[k] != st_sched_at(h, a))
					k++;
				if (k < nm)
					continue;
				for (;; b++) {
					unsigned k2 = 0;
					while (k2 < nm && X[k2] != before[b])
						k2++;
					if (k2 == nm)
						break;
				}
				assert_int_equal(st_sched_at(h, a), before[b++]);
			}
			for (unsigned t = 0; t < d; t++) /* the steps, swap by swap, on a second state */
				for (unsigned j = 0; j < nm; j++) {
					st_move sw = {ST_MOVE_SWAP, 0, up ? mem[j] - t - 1 : mem[nm - 1 - j] + t, {0}};
					if (st_sched_apply(w, sw, &err))
						fail_msg("%s: swap of step %u of the group move at 0x%x refused: %s", *f, t, 16 * mv.slot, err.msg);
				}
			for (size_t j = 0; j < n; j++) {
				assert_int_equal(st_sched_at(h, j), st_sched_at(w, j));
				st_ctrl c1 = st_sched_ctrl(h, j), c2 = st_sched_ctrl(w, j);
				assert_memory_equal(&c1, &c2, sizeof c1);
			}
			assert_int_equal(st_sched_undo(h, &err), ST_OK);
			assert_int_equal(st_sched_depth(h), 0);
			st_sched_reset(w);
			for (size_t j = 0; j < n; j++) {
				assert_int_equal(st_sched_at(h, j), j);
				st_ctrl c1 = st_sched_ctrl(h, j), c2 = st_sched_ctrl(w, j);
				assert_memory_equal(&c1, &c2, sizeof c1);
			}
			tried++;
		}
		free(before);
		st_sched_free(h);
		st_sched_free(w);
		st_test_kernel_close(&x);
	}
	print_message("  %u group moves listed in the original states, %u applied (%u far)\n", groups, tried, far);
	assert_true(tried >= 20);
}

/* After every move of a walk, the cached bits (group variants included) equal a fresh check. */
static void test_group_cache_is_exact(void **state_)
{
	(void)state_;
	static const char *const pick[] = {"softmax_f32_1024x1024", "layernorm_f16_1024x1024",
					   "attn_fwd_f16_bh4_n1024_d64_b128x64"};
	for (size_t p = 0; p < 3; p++) {
		st_test_kernel x;
		st_error err = {0};
		st_test_kernel_open(&x, "triton-sm90", pick[p]);
		st_sched *s = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE);
		for (unsigned t = 0; t < 15 && st_sched_move_count(s); t++) {
			st_move mv = st_sched_move(s, (size_t)(rnd() % st_sched_move_count(s)));
			assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
			for (uint32_t j = 0; j < st_sched_count(s); j++) {
				unsigned bits = 0;
				for (uint8_t a = 0; a < SC_HOIST_ARGS; a++) {
					st_move q = {ST_MOVE_HOIST, a, j, {0}};
					unsigned b = a < 8 ? SC_LEGAL_HOIST + a : SC_LEGAL_GROUP + a - 8;
					bits |= sc_check(s, q, NULL, NULL, NULL, NULL) == ST_OK ? 1u << b : 0;
				}
				unsigned mask = 0xffu << SC_LEGAL_HOIST | 0xffu << SC_LEGAL_GROUP;
				if (bits != (s->legal[j] & mask))
					fail_msg("%s after %u moves: slot %u cached 0x%x, fresh 0x%x", pick[p], t + 1, j,
						 s->legal[j] & mask, bits);
			}
		}
		st_sched_free(s);
		st_test_kernel_close(&x);
	}
}

/* Walks of random legal moves with group moves picked often, on every fixture of both sets: the
 * checker accepts each result, the schedule (the constituent swaps) replays checked and raw to
 * the same bytes, reset restores the move list. */
static unsigned walk(st_test_kernel *x, unsigned flags, unsigned steps)
{
	st_error err = {0};
	st_sched *s = st_test_sched_new(x, flags);
	size_t n0 = st_sched_move_count(s);
	unsigned groups = 0;
	for (unsigned t = 0; t < steps && st_sched_move_count(s); t++) {
		size_t nm = st_sched_move_count(s), pick = (size_t)(rnd() % nm);
		for (size_t i = 0, k = rnd() % 8; i < nm && t % 2 == 0; i++) { /* every other step: a group if any */
			st_move q = st_sched_move(s, (i + k) % nm);
			if (q.kind == ST_MOVE_HOIST && q.arg >= 8) {
				pick = (i + k) % nm;
				break;
			}
		}
		st_move mv = st_sched_move(s, pick);
		groups += mv.kind == ST_MOVE_HOIST && mv.arg >= 8;
		if (st_sched_apply(s, mv, &err))
			fail_msg("%s: a listed move was refused: %s", x->name, err.msg);
	}
	st_cubin *work = st_test_cubin_copy(x->c);
	assert_int_equal(st_sched_to_cubin(s, work, 0, &err), ST_OK);
	size_t bad = 0;
	if (st_check_kernel(x->c, work, x->name, &x->o, st_test_print_violation, NULL, &bad, &err) || bad)
		fail_msg("%s (flags %u): the checker refused a walk with %u group moves: %s", x->name, flags, groups, err.msg);
	if (st_sched_depth(s))
		st_test_replays_to(x, s, work, x->name);
	st_sched_reset(s);
	assert_int_equal(st_sched_move_count(s), n0);
	st_cubin_free(work);
	st_sched_free(s);
	return groups;
}

static void test_group_walks_pass_check(void **state_)
{
	(void)state_;
	unsigned groups = 0;
	for (const char *const *f = st_test_triton_fixtures; *f; f++)
		for (int d = 0; d < 2; d++) {
			st_test_kernel x;
			st_test_kernel_open(&x, sets[d], *f);
			groups += walk(&x, ST_SCHED_HOIST | ST_SCHED_WIDE, 30);
			groups += walk(&x, ST_SCHED_HOIST | ST_SCHED_WIDE | ST_SCHED_NO_CTRL | ST_SCHED_WAIT, 30);
			groups += walk(&x, ST_SCHED_HOIST, 30);
			st_test_kernel_close(&x);
		}
	print_message("  %u group moves in the walks\n", groups);
	assert_true(groups > 50);
}

/* Rules by hand on the fixtures whose loads have groups.  For every load with a group: (a) model:
 * where the load alone cannot pass the producer right above it, the refusal is a RAW; a legal
 * group hoist that carries it further than it can go alone is counted; a refused group variant
 * names the swap that stops it; (b) checker: each legal
 * group hoist's result passes, and the same with the load moved by hand above the member it reads
 * (the one right above it) is caught. */
static void hazards(const char *fixture, unsigned *accepted, unsigned *past, unsigned *refused, unsigned *caught)
{
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", fixture);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE);
	size_t n = st_sched_count(s);
	for (uint32_t j = 0; j < n; j++) {
		uint32_t mem[SC_GROUP_MAX];
		unsigned nm = sc_group_members(s, j, mem);
		if (!nm)
			continue;
		st_move one = {ST_MOVE_HOIST, 0, j, {0}}, grp = {ST_MOVE_HOIST, 8, j, {0}};
		st_error e1 = {0}, e2 = {0}, e3 = {0};
		if (mem[nm - 2] == j - 1) { /* its producer right above it: the load alone is refused */
			assert_int_equal(st_sched_check(s, one, &e1), ST_EILLEGAL);
			assert_non_null(strstr(e1.msg, "RAW"));
		}
		uint32_t lo = j, hi = j;
		unsigned alone = sc_hoist_reach(s, j, -1, &lo, &hi, NULL), with = sc_group_reach(s, mem, nm, -1, &lo, &hi, NULL);
		st_move top = {ST_MOVE_SWAP, 0, mem[0] - 1, {0}};
		if (st_sched_check(s, grp, &e2) != ST_OK) {
			assert_int_equal(e2.code, ST_EILLEGAL);
			assert_non_null(strstr(e2.msg, "group hoist 0x"));
			if (st_sched_check(s, top, &e3) != ST_OK) { /* the first swap of the first step */
				assert_non_null(strstr(e2.msg, ": 0 steps in a row legal; then "));
				assert_non_null(strstr(e2.msg, e3.msg));
				(*refused)++;
			}
			continue;
		}
		*past += with > alone;
		assert_int_equal(st_sched_apply(s, grp, &err), ST_OK);
		st_cubin *good = st_test_cubin_copy(x.c), *bad = st_test_cubin_copy(x.c);
		assert_int_equal(st_sched_to_cubin(s, good, 0, &err), ST_OK);
		size_t v = 0;
		assert_int_equal(st_check_kernel(x.c, good, x.name, &x.o, st_test_print_violation, NULL, &v, &err), ST_OK);
		assert_int_equal(v, 0);
		(*accepted)++;
		/* by hand: the load (now at j - 2) one slot above the member right above it */
		uint32_t *perm = malloc(n * sizeof *perm), p = mem[nm - 2] - 2, l = j - 2;
		for (uint32_t q = 0; q < n; q++)
			perm[q] = st_sched_at(s, q);
		for (uint32_t q = l; q > p; q--)
			perm[q] = perm[q - 1];
		perm[p] = st_sched_at(s, l);
		assert_int_equal(st_cubin_permute(bad, 0, perm, n, &err), ST_OK);
		v = 0;
		assert_int_equal(st_check_kernel(x.c, bad, x.name, &x.o, NULL, NULL, &v, &err), ST_EILLEGAL);
		assert_true(v > 0);
		(*caught)++;
		free(perm);
		st_cubin_free(good);
		st_cubin_free(bad);
		assert_int_equal(st_sched_undo(s, &err), ST_OK);
	}
	st_sched_free(s);
	st_test_kernel_close(&x);
}

static void test_group_hazards(void **state_)
{
	(void)state_;
	unsigned accepted = 0, past = 0, refused = 0, caught = 0;
	hazards("layernorm_f16_1024x1024", &accepted, &past, &refused, &caught);
	hazards("matmul_f16_2048x2048x2048_b128x256x64_w8s3", &accepted, &past, &refused, &caught);
	hazards("attn_fwd_f16_bh4_n1024_d64_b128x64", &accepted, &past, &refused, &caught);
	print_message("  %u group hoists accepted (%u of loads that go further up with their group), %u refused, "
		      "%u hand-broken caught\n", accepted, past, refused, caught);
	assert_true(accepted > 0 && past > 0 && refused > 0 && caught == accepted);
}

/* Off unless the hoist family is on; a load without a group gets the reason. */
static void test_group_off_and_reasons(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "layernorm_f16_1024x1024");
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE), *h = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_HOIST);
	size_t ng = 0, nothing = 0;
	for (size_t i = 0; i < st_sched_move_count(h); i++) {
		st_move mv = st_sched_move(h, i);
		if (mv.kind != ST_MOVE_HOIST || mv.arg < 8)
			continue;
		ng++;
		st_error e = {0};
		assert_int_equal(st_sched_check(s, mv, &e), ST_EILLEGAL);
		assert_non_null(strstr(e.msg, "not enabled"));
		char text[256];
		st_sched_describe(h, mv, text, sizeof text);
		assert_true(!strncmp(text, mv.arg < 12 ? "group hoist 0x" : "group sink 0x", mv.arg < 12 ? 14 : 13));
		assert_non_null(strstr(text, " -> 0x"));
		assert_non_null(strstr(text, " with "));
	}
	for (uint32_t j = 0; j < st_sched_count(h); j++) {
		uint32_t mem[SC_GROUP_MAX];
		st_move mv = {ST_MOVE_HOIST, 11, j, {0}};
		st_error e = {0};
		if (sc_group_members(h, j, mem))
			continue;
		assert_int_equal(st_sched_check(h, mv, &e), ST_EILLEGAL);
		assert_non_null(strstr(e.msg, "address arithmetic that feeds only it"));
		nothing++;
	}
	assert_true(ng > 0 && nothing > 0);
	st_move bad = {ST_MOVE_HOIST, SC_HOIST_ARGS, 5, {0}};
	assert_int_equal(st_sched_check(h, bad, NULL), ST_EINVAL);
	st_sched_free(s);
	st_sched_free(h);
	st_test_kernel_close(&x);
}

/* CPU measure (docs/sched.md "Group hoist"): per fixture, in the original state (wide setting),
 * the loads, the loads with a group and its mean size, the listed group moves, and how far the
 * grouped loads can move up alone (single hoist reach) and with their group (group reach).  The
 * assertion: on some fixture a group carries a load further up than the load can go alone. */
static void test_group_reach_measure(void **state_)
{
	(void)state_;
	unsigned beyond_all = 0;
	print_message("  | set | fixture | loads | groups | mean size | group moves (up/down) | mean up, alone | mean up, group | group further |\n");
	for (int d = 0; d < 2; d++)
		for (const char *const *f = st_test_triton_fixtures; *f; f++) {
			st_test_kernel x;
			st_test_kernel_open(&x, sets[d], *f);
			st_sched *s = st_test_sched_new(&x, ST_SCHED_HOIST | ST_SCHED_WIDE);
			const st_sass_insn *in = st_sass_insns(x.k);
			unsigned loads = 0, groups = 0, size = 0, up = 0, down = 0, alone = 0, with = 0, beyond = 0;
			for (uint32_t j = 0; j < st_sched_count(s); j++) {
				const st_sass_insn *L = &in[st_sched_at(s, j)];
				if ((L->flags & ST_F_LOAD) && !(L->flags & ST_F_ATOMIC) && (!(L->flags & ST_F_STORE) || (L->flags & ST_F_ASYNC)) &&
				    (L->space == ST_SPACE_GLOBAL || L->space == ST_SPACE_SHARED || L->space == ST_SPACE_CONST))
					loads++;
				uint32_t mem[SC_GROUP_MAX], lo = j, hi = j;
				unsigned nm = sc_group_members(s, j, mem);
				if (!nm)
					continue;
				groups++;
				size += nm;
				unsigned r1 = sc_hoist_reach(s, j, -1, &lo, &hi, NULL), rg = sc_group_reach(s, mem, nm, -1, &lo, &hi, NULL);
				alone += r1;
				with += rg;
				beyond += rg > r1;
			}
			for (size_t i = 0; i < st_sched_move_count(s); i++) {
				st_move mv = st_sched_move(s, i);
				up += mv.kind == ST_MOVE_HOIST && mv.arg >= 8 && mv.arg < 12;
				down += mv.kind == ST_MOVE_HOIST && mv.arg >= 12;
			}
			print_message("  | %s | %s | %u | %u | %.2f | %u/%u | %.2f | %.2f | %u |\n", d ? "13.5" : "12.8", *f, loads,
				      groups, groups ? (double)size / groups : 0.0, up, down, groups ? (double)alone / groups : 0.0,
				      groups ? (double)with / groups : 0.0, beyond);
			beyond_all += beyond;
			st_sched_free(s);
			st_test_kernel_close(&x);
		}
	assert_true(beyond_all > 0);
}

/* Swap rule W7 (docs/sched.md "Later waits"), found by the group-hoist dry run: the walk in
 * test/fixtures/sched/mm2048-moved-wait-cover.json, applied raw, is flagged by the checker (an
 * IADD3 whose SB3 wait moved, carried past an LDGSTS away from its earlier cover); replayed
 * through the model it is refused by W7 and the state before the refused move passes the checker. */
static void test_moved_wait_cover(void **state_)
{
	(void)state_;
	st_test_kernel x;
	st_error err = {0};
	st_test_kernel_open(&x, "triton-sm90", "matmul_f16_2048x2048x2048_b128x256x64_w8s3");
	char *path = st_test_fixture("sched/mm2048-moved-wait-cover.json");
	st_schedule *sch = NULL;
	assert_int_equal(st_schedule_load(path, &sch, &err), ST_OK);
	st_cubin *raw = st_test_cubin_copy(x.c);
	assert_int_equal(st_schedule_apply(sch, raw, &err), ST_OK);
	size_t v = 0;
	assert_int_equal(st_check_kernel(x.c, raw, x.name, &x.o, NULL, NULL, &v, &err), ST_EILLEGAL);
	assert_int_equal(v, 1);
	st_sched *s = st_test_sched_new(&x, ST_SCHED_WIDE | ST_SCHED_HOIST | ST_SCHED_WAIT);
	assert_int_equal(st_sched_replay(s, sch, 0, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "whose wait on SB3 was moved, past LDGSTS"));
	assert_true(st_sched_depth(s) > 0); /* the moves before it were legal and stay applied */
	st_cubin *work = st_test_cubin_copy(x.c);
	assert_int_equal(st_sched_to_cubin(s, work, 0, &err), ST_OK);
	v = 0;
	assert_int_equal(st_check_kernel(x.c, work, x.name, &x.o, st_test_print_violation, NULL, &v, &err), ST_OK);
	assert_int_equal(v, 0);
	st_cubin_free(work);
	st_cubin_free(raw);
	st_sched_free(s);
	st_schedule_free(sch);
	free(path);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moved_wait_cover),
		cmocka_unit_test(test_group_off_and_reasons),
		cmocka_unit_test(test_group_hazards),
		cmocka_unit_test(test_group_reach_measure),
		cmocka_unit_test(test_group_is_its_steps),
		cmocka_unit_test(test_group_cache_is_exact),
		cmocka_unit_test(test_group_walks_pass_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
