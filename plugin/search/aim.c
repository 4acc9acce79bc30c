/* Aimed proposals (docs/profile.md): a per-move weight from a stall profile, which every search
 * method uses as its proposal distribution (random: sampled in proportion; greedy: a weighted
 * order; PPO: log weight added to the policy's logits).
 *
 * heat[i]: the share of the kernel's samples at original instruction i that wait on something a
 * schedule can move (long_sb, short_sb, wait, barrier).  prod[i]: the heat of the instructions
 * whose operands instruction i produces (the nearest earlier definition of each register they
 * read), i.e. how hot the waits are that moving i earlier shortens.  A move's weight is
 * 1 + strength * (what it does for hot waits): a swap that lifts Y over X gets prod[Y] (its
 * consumers wait less) + heat[X] (Y fills a slot in front of a hot wait); a control edit of X gets
 * heat[X] + prod[X] + heat of the instruction after it.  Weights >= 1, so every legal move stays
 * possible; strength 0 is uniform. */
#include "sasstune/profile.h"
#include "sasstune/sched.h"
#include "sasstune/search.h"

#include <stdlib.h>
#include <string.h>

#define PRODUCER_WINDOW 256 /* instructions searched back for a register's definition */

struct st_aim {
	size_t n;
	double *heat, *prod;
	double strength, hot_share;
};

static int overlaps(const st_sass_reg *a, const st_sass_reg *b)
{
	return a->file == b->file && a->index < b->index + b->count && b->index < a->index + a->count;
}

/* prod[p] += heat[c] for the nearest earlier definition p of each register c reads. */
static void spread_to_producers(const st_sass_insn *ins, size_t c, double *prod, double heat)
{
	for (unsigned u = 0; u < ins[c].nuses; u++) {
		const st_sass_reg *use = &ins[c].uses[u];
		for (size_t back = 1; back <= PRODUCER_WINDOW && back <= c; back++) {
			const st_sass_insn *p = &ins[c - back];
			int found = 0;
			for (unsigned d = 0; d < p->ndefs && !found; d++)
				found = overlaps(&p->defs[d], use);
			if (found) {
				prod[c - back] += heat;
				break;
			}
		}
	}
}

static int is_waiting(const char *reason)
{
	return !strcmp(reason, "long_sb") || !strcmp(reason, "short_sb") || !strcmp(reason, "wait") ||
	       !strcmp(reason, "barrier");
}

st_status st_aim_new(const st_sched *s, const st_profile *p, double strength, st_aim **out, st_error *err)
{
	*out = NULL;
	if (!(strength >= 0 && strength <= 1e6))
		return st_error_set(err, ST_EINVAL, "aim strength must be 0 to 1e6");
	const st_sass_kernel *k = st_sched_kernel(s);
	const st_sass_insn *ins = st_sass_insns(k);
	size_t n = st_sass_count(k);
	const char *fn = st_sass_name(k);
	st_aim *a = calloc(1, sizeof *a);
	if (!a || !(a->heat = calloc(n + 1, sizeof *a->heat)) || !(a->prod = calloc(n + 1, sizeof *a->prod))) {
		st_aim_free(a);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	a->n = n;
	a->strength = strength;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += st_profile_at(p, fn, ins[i].offset, -1);
	for (size_t r = 0; total && r < st_profile_reason_count(p); r++) {
		if (!is_waiting(st_profile_reason(p, r)))
			continue;
		for (size_t i = 0; i < n; i++)
			a->heat[i] += (double)st_profile_at(p, fn, ins[i].offset, (long)r) / (double)total;
	}
	for (size_t i = 0; i < n; i++) {
		a->hot_share += a->heat[i];
		if (a->heat[i] > 0)
			spread_to_producers(ins, i, a->prod, a->heat[i]);
	}
	*out = a;
	return ST_OK;
}

void st_aim_free(st_aim *a)
{
	if (!a)
		return;
	free(a->heat);
	free(a->prod);
	free(a);
}

double st_aim_heat(const st_aim *a, size_t index) { return index < a->n ? a->heat[index] : 0; }
double st_aim_producer_heat(const st_aim *a, size_t index) { return index < a->n ? a->prod[index] : 0; }
double st_aim_hot_share(const st_aim *a) { return a->hot_share; }

double st_aim_weight(const st_aim *a, const st_sched *s, size_t move)
{
	st_move m = st_sched_move(s, move);
	size_t slots = st_sched_count(s);
	if (m.slot >= slots)
		return 1;
	uint32_t x = st_sched_at(s, m.slot), y = m.slot + 1 < slots ? st_sched_at(s, m.slot + 1) : UINT32_MAX;
	double gain;
	if (m.kind == ST_MOVE_SWAP)
		gain = st_aim_producer_heat(a, y) + st_aim_heat(a, x);
	else
		gain = st_aim_heat(a, x) + st_aim_producer_heat(a, x) + (y != UINT32_MAX ? st_aim_heat(a, y) : 0);
	return 1 + a->strength * gain;
}

/* ---- the environment wrapper: every callback forwarded, weight added ---- */
typedef struct aim_env {
	st_search_env env; /* first */
	st_search_env *inner;
	const st_sched *s;
	const st_aim *a;
} aim_env;

#define INNER(d) (((aim_env *)(d))->inner)
static size_t ae_n_moves(void *d) { return INNER(d)->n_moves(INNER(d)->data); }
static st_status ae_features(void *d, size_t m, float out[ST_SEARCH_NFEAT], st_error *err)
{
	return INNER(d)->features(INNER(d)->data, m, out, err);
}
static st_status ae_apply(void *d, size_t m, st_error *err) { return INNER(d)->apply(INNER(d)->data, m, err); }
static st_status ae_undo(void *d, st_error *err) { return INNER(d)->undo(INNER(d)->data, err); }
static st_status ae_reset(void *d, st_error *err) { return INNER(d)->reset(INNER(d)->data, err); }
static st_status ae_evaluate(void *d, unsigned pairs, st_eval *out, st_error *err)
{
	return INNER(d)->evaluate(INNER(d)->data, pairs, out, err);
}
static st_status ae_json(void *d, char **out, st_error *err) { return INNER(d)->schedule_json(INNER(d)->data, out, err); }
static double ae_weight(void *d, size_t m)
{
	aim_env *e = d;
	return st_aim_weight(e->a, e->s, m);
}
#undef INNER

st_status st_aim_wrap_env(st_search_env *inner, const st_sched *s, const st_aim *a, st_search_env **out,
			  st_error *err)
{
	*out = NULL;
	if (!inner || !s || !a)
		return st_error_set(err, ST_EINVAL, "aim: wrapping needs an environment, its state and an aim");
	aim_env *e = calloc(1, sizeof *e);
	if (!e)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	e->inner = inner;
	e->s = s;
	e->a = a;
	e->env = *inner;
	e->env.data = e;
	e->env.n_moves = ae_n_moves;
	e->env.features = inner->features ? ae_features : NULL;
	e->env.apply = ae_apply;
	e->env.undo = ae_undo;
	e->env.reset = ae_reset;
	e->env.evaluate = ae_evaluate;
	e->env.schedule_json = inner->schedule_json ? ae_json : NULL;
	e->env.weight = ae_weight;
	*out = &e->env;
	return ST_OK;
}

void st_aim_env_free(st_search_env *env) { free(env); }
