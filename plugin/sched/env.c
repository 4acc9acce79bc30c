/* What the search sees of a st_sched state: per-move features (search.h, schema
 * sasstune-features-1) and the st_search_env callbacks.  Feature meanings: docs/sched.md. */
#include "sched_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float clip(double v)
{
	return v > 1 ? 1.0f : v < -1 ? -1.0f : (float)v;
}

static void class_onehot(const st_sass_insn *x, float *f)
{
	/* alu sfu mma ldg stg lds sts ctrl */
	int k = -1;
	bool ld = (x->flags & ST_F_LOAD) != 0, st = (x->flags & (ST_F_STORE | ST_F_ATOMIC)) != 0;
	if (x->cls == ST_CLASS_MEMORY) {
		bool shared = x->space == ST_SPACE_SHARED;
		if (!strncmp(x->opcode, "LDGSTS", 6))
			k = 3;
		else if (shared)
			k = st ? 6 : 5;
		else
			k = st && !ld ? 4 : 3;
	} else if (x->cls == ST_CLASS_ALU) {
		k = 0;
	} else if (x->cls == ST_CLASS_VARLAT) {
		k = 1;
	} else if (x->cls == ST_CLASS_TENSOR) {
		k = 2;
	} else {
		k = 7;
	}
	f[k] = 1;
}

/* Cycles from the nearest earlier instruction slot `slot` depends on, and that pair's slack. */
static void producer_dist(const st_sched *s, uint32_t slot, float *dist, float *slack)
{
	const sc_model *m = &s->m;
	uint32_t X = s->at[slot], first = m->bfirst[m->si[X].block];
	int d = 0;
	*dist = 1;
	*slack = 1;
	for (uint32_t j = slot; j-- > first && d < 32;) {
		d += s->ctrl[s->at[j]].stall;
		int l = sc_latency((sc_model *)m, s->at[j], X, NULL, 0);
		if (l >= 0) {
			*dist = clip(d / 32.0);
			*slack = clip((d - l) / 32.0);
			return;
		}
	}
}

static float consumer_dist(const st_sched *s, uint32_t slot)
{
	const sc_model *m = &s->m;
	uint32_t X = s->at[slot], last = m->blast[m->si[X].block];
	int d = s->ctrl[X].stall;
	for (uint32_t j = slot + 1; j <= last && d < 32; j++) {
		if (sc_latency((sc_model *)m, X, s->at[j], NULL, 0) >= 0)
			return clip(d / 32.0);
		d += s->ctrl[s->at[j]].stall;
	}
	return 1;
}

static void insn_features(const st_sched *s, uint32_t slot, st_ctrl c, float *f)
{
	const st_sass_insn *x = &s->m.in[s->at[slot]];
	class_onehot(x, f); /* 8 class features */
	f[8] = c.stall / 15.0f;
	f[9] = (float)c.yield;
	f[10] = (c.wbar != ST_SB_NONE || c.rbar != ST_SB_NONE) ? 1.0f : 0.0f;
	f[11] = c.wait ? 1.0f : 0.0f;
	f[12] = (x->flags & ST_F_VARLAT) ? 1.0f : 0.0f;
	producer_dist(s, slot, &f[13], &f[14]);
	f[15] = consumer_dist(s, slot);
	f[16] = clip(((double)slot - (double)s->at[slot]) / 16.0);
}

st_status st_sched_features(const st_sched *s, size_t move, float out[ST_SEARCH_NFEAT], st_error *err)
{
	if (move >= s->nlegal)
		return st_error_set(err, ST_EINVAL, "sched: move %zu of %zu", move, s->nlegal);
	memset(out, 0, ST_SEARCH_NFEAT * sizeof *out);
	st_move mv = st_sched_move(s, move);
	const sc_model *m = &s->m;
	uint32_t j = mv.slot, X = s->at[j];
	const sc_info *ix = &m->si[X];
	uint32_t first = m->bfirst[ix->block], last = m->blast[ix->block];
	out[ST_F_POS_IN_BLOCK] = last > first ? (float)(j - first) / (float)(last - first) : 0;
	out[ST_F_BLOCK_LEN] = clip(log2(1.0 + last - first + 1) / 16.0);
	out[ST_F_IN_LOOP] = m->loop[ix->block] ? 1.0f : 0.0f;
	out[ST_F_LOOP_DEPTH] = clip(m->loop[ix->block] / 4.0);
	if (mv.kind == ST_MOVE_SWAP) {
		sc_fix fix;
		st_status rc = sc_check(s, mv, &fix, NULL, NULL, err);
		if (rc)
			return rc;
		uint32_t up = j + 1; /* the instruction that moves earlier is "a" */
		const st_sass_insn *a = &m->in[s->at[up]], *b = &m->in[X];
		int raise = 0;
		for (unsigned t = 0; t < fix.n; t++)
			raise += fix.chg[t].now.stall - fix.chg[t].old.stall;
		out[ST_F_SWAP] = 1;
		out[ST_F_STALL_DELTA] = clip(raise / 15.0);
		out[ST_F_REVERTS] = s->last_swap == j ? 1.0f : 0.0f;
		out[ST_F_LOAD_UP] = (a->flags & ST_F_LOAD) && a->cls == ST_CLASS_MEMORY ? 1.0f : 0.0f;
		out[ST_F_SAME_CLASS] = a->cls == b->cls ? 1.0f : 0.0f;
		/* crude static estimate: starting a variable-latency op earlier helps, raising stalls costs */
		double gain = ((a->flags & ST_F_VARLAT) ? 0.5 : 0) - ((b->flags & ST_F_VARLAT) ? 0.5 : 0) - raise / 8.0;
		out[ST_F_EST_GAIN] = clip(gain);
		insn_features(s, up, s->ctrl[s->at[up]], &out[ST_F_A_ALU]);
		insn_features(s, j, s->ctrl[X], &out[ST_F_B_ALU]);
		out[ST_F_A_MOVED] = clip(((double)j - (double)s->at[up]) / 16.0); /* where it goes */
		out[ST_F_B_MOVED] = clip(((double)up - (double)X) / 16.0);
	} else {
		out[ST_F_CTRL] = 1;
		if (mv.kind == ST_MOVE_STALL) {
			out[ST_F_STALL_DELTA] = -1.0f / 15;
			out[ST_F_EST_GAIN] = 1.0f / 15;
		}
		if (mv.kind == ST_MOVE_YIELD)
			out[ST_F_YIELD_FLIP] = 1;
		insn_features(s, j, s->ctrl[X], &out[ST_F_A_ALU]);
	}
	return ST_OK;
}

/* ---- the environment ---------------------------------------------------------------------------- */
typedef struct sched_env {
	st_search_env env; /* first: st_sched_env_free gets it back */
	st_sched *s;
	st_sched_eval_fn eval;
	void *ctx;
	char name[128];
} sched_env;

static size_t env_n_moves(void *d) { return st_sched_move_count(((sched_env *)d)->s); }

static st_status env_features(void *d, size_t move, float out[ST_SEARCH_NFEAT], st_error *err)
{
	return st_sched_features(((sched_env *)d)->s, move, out, err);
}

static st_status env_apply(void *d, size_t move, st_error *err)
{
	sched_env *e = d;
	if (move >= st_sched_move_count(e->s))
		return st_error_set(err, ST_EINVAL, "sched: move %zu of %zu", move, st_sched_move_count(e->s));
	return st_sched_apply(e->s, st_sched_move(e->s, move), err);
}

static st_status env_undo(void *d, st_error *err) { return st_sched_undo(((sched_env *)d)->s, err); }

static st_status env_reset(void *d, st_error *err)
{
	(void)err;
	st_sched_reset(((sched_env *)d)->s);
	return ST_OK;
}

static st_status env_evaluate(void *d, unsigned pairs, st_eval *out, st_error *err)
{
	sched_env *e = d;
	if (!e->eval)
		return st_error_set(err, ST_EUNSUPPORTED, "sched: no evaluator for %s", e->name);
	return e->eval(e->ctx, e->s, pairs, out, err);
}

static st_status env_json(void *d, char **out, st_error *err)
{
	sched_env *e = d;
	st_schedule *sch = NULL;
	*out = NULL;
	st_status rc = st_schedule_new(&sch, err);
	if (!rc)
		rc = st_sched_to_schedule(e->s, sch, err);
	if (!rc && !(*out = st_schedule_to_json(sch)))
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
	st_schedule_free(sch);
	return rc;
}

st_status st_sched_env_new(st_sched *s, st_sched_eval_fn evaluate, void *ctx, st_search_env **out, st_error *err)
{
	sched_env *e = calloc(1, sizeof *e);
	*out = NULL;
	if (!e)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	e->s = s;
	e->eval = evaluate;
	e->ctx = ctx;
	snprintf(e->name, sizeof e->name, "%s", st_sass_name(s->m.k));
	e->env.data = e;
	e->env.name = e->name;
	e->env.n_moves = env_n_moves;
	e->env.features = env_features;
	e->env.apply = env_apply;
	e->env.undo = env_undo;
	e->env.reset = env_reset;
	e->env.evaluate = env_evaluate;
	e->env.schedule_json = env_json;
	*out = &e->env;
	return ST_OK;
}

void st_sched_env_free(st_search_env *env)
{
	free(env); /* env is the first member of its sched_env */
}
