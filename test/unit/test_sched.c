/* Unit tests of the legality model (plugin/sched): random legal walks on every fixture pass the
 * independent checker, schedules replay to the same bytes, apply-then-undo restores everything,
 * the cached move list always equals a fresh computation. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sched/sched_internal.h"
#include "sched_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fx { const char *cubin, *sass; } fx;
static const fx fixtures[] = {
	{"triton-sm90/add_f32_1M/sm_90.cubin", "triton-sm90/add_f32_1M/sm_90.sass"},
	{"triton-sm90/attn_fwd_f16_bh4_n1024_d64_b128x64/sm_90.cubin", "triton-sm90/attn_fwd_f16_bh4_n1024_d64_b128x64/sm_90.sass"},
	{"triton-sm90/layernorm_f16_1024x1024/sm_90.cubin", "triton-sm90/layernorm_f16_1024x1024/sm_90.sass"},
	{"triton-sm90/matmul_f16_1024x1024x1024_b128x128x64_w4s4/sm_90.cubin",
	 "triton-sm90/matmul_f16_1024x1024x1024_b128x128x64_w4s4/sm_90.sass"},
	{"triton-sm90/matmul_f16_2048x2048x2048_b128x256x64_w8s3/sm_90.cubin",
	 "triton-sm90/matmul_f16_2048x2048x2048_b128x256x64_w8s3/sm_90.sass"},
	{"triton-sm90/matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu/sm_90.cubin",
	 "triton-sm90/matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu/sm_90.sass"},
	{"triton-sm90/softmax_f32_1024x1024/sm_90.cubin", "triton-sm90/softmax_f32_1024x1024/sm_90.sass"},
	{"cuda/branches.sm_80.cubin", "cuda/branches.sm_80.sass"},
	{"cuda/branches.sm_86.cubin", "cuda/branches.sm_86.sass"},
	{"cuda/branches.sm_90.cubin", "cuda/branches.sm_90.sass"},
	{"cuda/branches.rdc.sm_80.cubin", "cuda/branches.rdc.sm_80.sass"},
	{"cuda/branches.rdc.sm_90.cubin", "cuda/branches.rdc.sm_90.sass"},
	{"cuda/jumptable.sm_80.cubin", "cuda/jumptable.sm_80.sass"},
	{"cuda/jumptable.sm_90.cubin", "cuda/jumptable.sm_90.sass"},
	{"cuda/printf.sm_86.cubin", "cuda/printf.sm_86.sass"},
	{"cuda/printf.sm_90.cubin", "cuda/printf.sm_90.sass"},
	{"cuda/hopper.sm_90a.cubin", "cuda/hopper.sm_90a.sass"},
	{NULL, NULL},
};

static st_cubin *open_fx(const char *rel)
{
	size_t size;
	uint8_t *bytes = st_test_read(rel, &size);
	st_cubin *c = NULL;
	st_error err = {0};
	if (st_cubin_open_mem(bytes, size, rel, &c, &err))
		fail_msg("%s: %s", rel, err.msg);
	free(bytes);
	return c;
}

static st_sass_opts opts_for(const char *sass_rel, char **path)
{
	st_sass_opts o = {0};
	*path = st_test_fixture(sass_rel);
	o.listing = *path;
	return o;
}

static st_sass_kernel *decode(const st_cubin *c, const char *name, const st_sass_opts *o)
{
	st_sass_kernel *k = NULL;
	st_error err = {0};
	if (st_sass_decode(c, name, o, &k, &err))
		fail_msg("%s: %s", name, err.msg);
	return k;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return st_test_xorshift(&rng_state); }


/* A walk of `steps` random legal moves; then: the checker accepts the result, the schedule replays
 * (checked and raw) to the same bytes, and undoing everything restores the original state. */
static void walk_one(const st_cubin *orig, const char *name, const st_sass_opts *o, unsigned flags, unsigned steps)
{
	st_error err = {0};
	st_sass_kernel *k = decode(orig, name, o);
	st_sched *s = NULL;
	if (st_sched_new(k, orig, flags, &s, &err))
		fail_msg("%s: %s", name, err.msg);
	size_t n0 = st_sched_move_count(s);
	st_move *first = malloc((n0 ? n0 : 1) * sizeof *first);
	for (size_t i = 0; i < n0; i++)
		first[i] = st_sched_move(s, i);
	for (unsigned t = 0; t < steps; t++) {
		size_t nm = st_sched_move_count(s);
		if (!nm)
			break;
		st_move mv = st_sched_move(s, (size_t)(rnd() % nm));
		if (st_sched_apply(s, mv, &err))
			fail_msg("%s: a listed move was refused: %s", name, err.msg);
	}
	size_t ki = st_cubin_find_kernel(orig, name);
	st_cubin *work = st_test_cubin_copy(orig);
	if (st_sched_to_cubin(s, work, ki, &err))
		fail_msg("%s: to_cubin: %s", name, err.msg);
	size_t bad = 0;
	st_status rc = st_check_kernel(orig, work, name, o, st_test_print_violation, NULL, &bad, &err);
	if (rc || bad)
		fail_msg("%s (flags %u): the checker refused a legal walk of %zu moves: %s", name, flags, st_sched_depth(s),
			 err.msg);
	/* the schedule: checked replay and raw application give the same bytes */
	st_schedule *sch = NULL;
	assert_int_equal(st_schedule_new(&sch, &err), ST_OK);
	assert_int_equal(st_sched_to_schedule(s, sch, &err), ST_OK);
	char *json = st_schedule_to_json(sch);
	assert_non_null(json);
	st_schedule *back = NULL;
	if (st_schedule_parse(json, strlen(json), "walk", &back, &err))
		fail_msg("%s: schedule does not parse: %s", name, err.msg);
	if (st_sched_depth(s)) {
		st_cubin *re = NULL;
		if (st_sched_rewrite(orig, back, o, &re, &err))
			fail_msg("%s: checked replay refused: %s", name, err.msg);
		assert_true(st_test_same_bytes(re, work));
		st_cubin_free(re);
		st_cubin *raw = st_test_cubin_copy(orig);
		if (st_schedule_apply(back, raw, &err))
			fail_msg("%s: raw apply: %s", name, err.msg);
		assert_true(st_test_same_bytes(raw, work));
		st_cubin_free(raw);
	}
	st_schedule_free(back);
	st_schedule_free(sch);
	free(json);
	/* undo everything: the original state, moves and bytes */
	st_sched_reset(s);
	assert_int_equal(st_sched_depth(s), 0);
	assert_int_equal(st_sched_move_count(s), n0);
	for (size_t i = 0; i < n0; i++) {
		st_move mv = st_sched_move(s, i);
		assert_true(mv.kind == first[i].kind && mv.slot == first[i].slot && mv.arg == first[i].arg);
	}
	st_cubin *again = st_test_cubin_copy(orig);
	assert_int_equal(st_sched_to_cubin(s, again, ki, &err), ST_OK);
	assert_true(st_test_same_bytes(again, orig));
	st_cubin_free(again);
	st_cubin_free(work);
	free(first);
	st_sched_free(s);
	st_sass_free(k);
}

static void test_walks_pass_check(void **state)
{
	(void)state;
	for (const fx *f = fixtures; f->cubin; f++) {
		st_cubin *c = open_fx(f->cubin);
		char *lp;
		st_sass_opts o = opts_for(f->sass, &lp);
		for (size_t k = 0; k < st_cubin_kernel_count(c); k++)
			for (unsigned flags = 0; flags < 3; flags++)
				walk_one(c, st_cubin_kernel(c, k)->name, &o, flags == 2 ? ST_SCHED_WIDE | ST_SCHED_NO_CTRL : flags,
					 flags ? 150 : 60);
		free(lp);
		st_cubin_free(c);
	}
}

/* The cached legal-move bits equal a fresh evaluation after every move (the local refresh misses
 * nothing), and apply + undo leaves them unchanged. */
static void test_cache_is_exact(void **state)
{
	(void)state;
	static const int pick[] = {0, 2, 5, 6, 16};
	for (size_t p = 0; p < sizeof pick / sizeof pick[0]; p++) {
		const fx *f = &fixtures[pick[p]];
		st_cubin *c = open_fx(f->cubin);
		char *lp;
		st_sass_opts o = opts_for(f->sass, &lp);
		st_sass_kernel *k = decode(c, st_cubin_kernel(c, 0)->name, &o);
		st_sched *s = NULL;
		st_error err = {0};
		assert_int_equal(st_sched_new(k, c, ST_SCHED_WIDE, &s, &err), ST_OK);
		for (unsigned t = 0; t < 40; t++) {
			size_t nm = st_sched_move_count(s);
			if (!nm)
				break;
			st_move mv = st_sched_move(s, (size_t)(rnd() % nm));
			assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
			size_t count = 0;
			for (uint32_t j = 0; j < st_sched_count(s); j++) {
				uint8_t bits = (uint8_t)st_test_base_bits(s, j);
				if (bits != s->legal[j])
					fail_msg("%s after %u moves: slot %u cached 0x%x, fresh 0x%x", f->cubin, t + 1, j, s->legal[j], bits);
				for (; bits; bits &= (uint8_t)(bits - 1))
					count++;
			}
			assert_int_equal(count, st_sched_move_count(s));
			/* apply + undo of a random legal move changes nothing */
			if (st_sched_move_count(s)) {
				size_t before = st_sched_move_count(s);
				st_move q = st_sched_move(s, (size_t)(rnd() % before));
				assert_int_equal(st_sched_apply(s, q, &err), ST_OK);
				assert_int_equal(st_sched_undo(s, &err), ST_OK);
				assert_int_equal(st_sched_move_count(s), before);
			}
		}
		st_sched_free(s);
		st_sass_free(k);
		free(lp);
		st_cubin_free(c);
	}
}

/* Every listed move is legal by st_sched_check; refused ones give one line naming a reason. */
static void test_listing_agrees_with_check(void **state)
{
	(void)state;
	const fx *f = &fixtures[6];
	st_cubin *c = open_fx(f->cubin);
	char *lp;
	st_sass_opts o = opts_for(f->sass, &lp);
	st_sass_kernel *k = decode(c, "softmax_kernel", &o);
	st_sched *s = NULL;
	st_error err = {0};
	assert_int_equal(st_sched_new(k, c, 0, &s, &err), ST_OK);
	for (size_t i = 0; i < st_sched_move_count(s); i++)
		assert_int_equal(st_sched_check(s, st_sched_move(s, i), NULL), ST_OK);
	for (uint32_t j = 0; j + 1 < st_sched_count(s); j++) {
		st_move q = {ST_MOVE_SWAP, 0, j, {0}};
		st_error e = {0};
		if (st_sched_check(s, q, &e) == ST_EILLEGAL) {
			assert_true(strstr(e.msg, "swap 0x") == e.msg);
			assert_null(strchr(e.msg, '\n'));
		}
	}
	/* the prototype's setting is a subset of the wide one */
	st_sched *w = NULL;
	assert_int_equal(st_sched_new(k, c, ST_SCHED_WIDE, &w, &err), ST_OK);
	assert_true(st_sched_move_count(w) > st_sched_move_count(s));
	for (size_t i = 0; i < st_sched_move_count(s); i++)
		assert_int_equal(st_sched_check(w, st_sched_move(s, i), NULL), ST_OK);
	st_sched_free(w);
	st_sched_free(s);
	st_sass_free(k);
	free(lp);
	st_cubin_free(c);
}

/* The search environment over a state: features in [-1, 1], apply/undo/reset, schedule JSON. */
static void test_env(void **state)
{
	(void)state;
	const fx *f = &fixtures[5];
	st_cubin *c = open_fx(f->cubin);
	char *lp;
	st_sass_opts o = opts_for(f->sass, &lp);
	st_sass_kernel *k = decode(c, "matmul_kernel", &o);
	st_sched *s = NULL;
	st_error err = {0};
	assert_int_equal(st_sched_new(k, c, ST_SCHED_WIDE, &s, &err), ST_OK);
	st_search_env *env = NULL;
	assert_int_equal(st_sched_env_new(s, NULL, NULL, &env, &err), ST_OK);
	size_t n = env->n_moves(env->data);
	assert_int_equal(n, st_sched_move_count(s));
	float feat[ST_SEARCH_NFEAT];
	int swaps = 0, ctrls = 0;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(env->features(env->data, i, feat, &err), ST_OK);
		for (size_t j = 0; j < ST_SEARCH_NFEAT; j++)
			assert_true(feat[j] >= -1.0f && feat[j] <= 1.0f);
		assert_true(feat[ST_F_SWAP] + feat[ST_F_CTRL] == 1.0f);
		if (feat[ST_F_SWAP] == 1.0f) { /* measured after the move: A one slot earlier, B one later */
			assert_float_equal(feat[ST_F_A_MOVED], -1.0f / 16, 1e-6);
			assert_float_equal(feat[ST_F_B_MOVED], 1.0f / 16, 1e-6);
			assert_float_equal(feat[ST_F_STALL_DELTA], 0.0f, 0);
		} else {
			assert_float_equal(feat[ST_F_A_MOVED], 0.0f, 0);
		}
		assert_float_equal(feat[ST_F_STOP], 0.0f, 0);
		swaps += feat[ST_F_SWAP] == 1.0f;
		ctrls += feat[ST_F_CTRL] == 1.0f;
	}
	assert_true(swaps > 0 && ctrls > 0);
	assert_int_equal(env->apply(env->data, 0, &err), ST_OK);
	assert_int_equal(env->apply(env->data, n / 2, &err), ST_OK);
	char *json = NULL;
	assert_int_equal(env->schedule_json(env->data, &json, &err), ST_OK);
	assert_non_null(strstr(json, "\"matmul_kernel\""));
	free(json);
	assert_int_equal(env->undo(env->data, &err), ST_OK);
	assert_int_equal(env->reset(env->data, &err), ST_OK);
	assert_int_equal(st_sched_depth(s), 0);
	assert_int_equal(env->n_moves(env->data), n);
	st_eval ev;
	assert_int_equal(env->evaluate(env->data, 0, &ev, &err), ST_EUNSUPPORTED);
	assert_int_equal(env->apply(env->data, n, &err), ST_EINVAL);
	st_sched_env_free(env);
	st_sched_free(s);
	st_sass_free(k);
	free(lp);
	st_cubin_free(c);
}

/* st_sched_peek: inside fn the order and control fields are those st_sched_apply makes (fix-ups
 * included); afterwards the state, its legal moves among them, is as before. */
typedef struct snap {
	size_t n;
	uint32_t *at;
	st_ctrl *ctrl;
} snap;

static st_status take_snap(void *ctx, const st_sched *s, st_error *err)
{
	(void)err;
	snap *p = ctx;
	for (size_t i = 0; i < p->n; i++) {
		p->at[i] = st_sched_at(s, i);
		p->ctrl[i] = st_sched_ctrl(s, i);
	}
	return ST_OK;
}

static void snap_init(snap *p, size_t n)
{
	p->n = n;
	p->at = calloc(n, sizeof *p->at);
	p->ctrl = calloc(n, sizeof *p->ctrl);
	assert_non_null(p->at);
	assert_non_null(p->ctrl);
}

static void test_peek(void **state)
{
	(void)state;
	const fx *f = &fixtures[5];
	st_cubin *c = open_fx(f->cubin);
	char *lp;
	st_sass_opts o = opts_for(f->sass, &lp);
	st_sass_kernel *k = decode(c, "matmul_kernel", &o);
	st_sched *s = NULL;
	st_error err = {0};
	assert_int_equal(st_sched_new(k, c, ST_SCHED_WIDE, &s, &err), ST_OK);
	const size_t N = st_sched_count(s), n = st_sched_move_count(s);
	snap before, in, applied;
	snap_init(&before, N);
	snap_init(&in, N);
	snap_init(&applied, N);
	take_snap(&before, s, NULL);
	size_t swaps = 0;
	for (size_t i = 0; i < n; i += 5) {
		st_move mv = st_sched_move(s, i);
		assert_int_equal(st_sched_peek(s, mv, take_snap, &in, &err), ST_OK);
		take_snap(&applied, s, NULL); /* the state is back */
		assert_memory_equal(applied.at, before.at, N * sizeof *before.at);
		assert_memory_equal(applied.ctrl, before.ctrl, N * sizeof *before.ctrl);
		assert_int_equal(st_sched_move_count(s), n);
		st_move again = st_sched_move(s, i);
		assert_true(again.kind == mv.kind && again.arg == mv.arg && again.slot == mv.slot);
		assert_int_equal(st_sched_apply(s, mv, &err), ST_OK);
		take_snap(&applied, s, NULL);
		assert_memory_equal(in.at, applied.at, N * sizeof *in.at);
		assert_memory_equal(in.ctrl, applied.ctrl, N * sizeof *in.ctrl);
		assert_int_equal(st_sched_undo(s, &err), ST_OK);
		swaps += mv.kind == ST_MOVE_SWAP;
	}
	assert_true(swaps > 0);
	assert_int_equal(st_sched_peek(s, st_sched_move(s, 0), NULL, NULL, &err), ST_EINVAL);
	free(before.at), free(before.ctrl), free(in.at), free(in.ctrl), free(applied.at), free(applied.ctrl);
	st_sched_free(s);
	st_sass_free(k);
	free(lp);
	st_cubin_free(c);
}

/* st_cubin_set_ctrl: only bits 105..124 may change, and the edit follows its instruction. */
static void test_set_ctrl(void **state)
{
	(void)state;
	st_cubin *c = open_fx(fixtures[6].cubin);
	st_error err = {0};
	uint8_t w[16];
	memcpy(w, st_cubin_code(c, 0, NULL) + 16 * 5, 16);
	w[0] ^= 1;
	assert_int_equal(st_cubin_set_ctrl(c, 0, 5, w, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "outside the control fields"));
	w[0] ^= 1;
	w[15] ^= 0x80; /* bit 127: outside 105..124 */
	assert_int_equal(st_cubin_set_ctrl(c, 0, 5, w, &err), ST_EINVAL);
	w[15] ^= 0x80;
	st_ctrl ctl = st_ctrl_decode(w);
	ctl.stall = 9;
	ctl.yield = 0;
	assert_int_equal(st_ctrl_encode(w, ctl, &err), ST_OK);
	assert_int_equal(st_cubin_set_ctrl(c, 0, 5, w, &err), ST_OK);
	assert_memory_equal(st_cubin_code(c, 0, NULL) + 16 * 5, w, 16);
	size_t n = st_cubin_kernel(c, 0)->insn_count;
	uint32_t *perm = malloc(n * sizeof *perm);
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	perm[5] = 6;
	perm[6] = 5;
	assert_int_equal(st_cubin_permute(c, 0, perm, n, &err), ST_OK);
	assert_memory_equal(st_cubin_code(c, 0, NULL) + 16 * 6, w, 16);
	assert_int_equal(st_cubin_permute(c, 0, perm, n, &err), ST_OK); /* swap back */
	assert_memory_equal(st_cubin_code(c, 0, NULL) + 16 * 5, w, 16);
	assert_int_equal(st_cubin_set_ctrl(c, 0, n, w, &err), ST_EINVAL);
	free(perm);
	st_cubin_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_ctrl),
		cmocka_unit_test(test_listing_agrees_with_check),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_peek),
		cmocka_unit_test(test_cache_is_exact),
		cmocka_unit_test(test_walks_pass_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
