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

/* The state as it will be after a move: order and control fields (docs/search.md: distances are
 * measured after the move). */
typedef struct view {
	const st_sched *s;
	uint32_t swap; /* slot of a swap, or UINT32_MAX */
	sc_fix fix;
} view;

static uint32_t vat(const view *v, uint32_t slot)
{
	if (v->swap != UINT32_MAX && slot == v->swap)
		return v->s->at[slot + 1];
	if (v->swap != UINT32_MAX && slot == v->swap + 1)
		return v->s->at[slot - 1];
	return v->s->at[slot];
}

static st_ctrl vctrl(const view *v, uint32_t idx)
{
	for (unsigned t = 0; t < v->fix.n; t++)
		if (v->fix.chg[t].idx == idx)
			return v->fix.chg[t].now;
	return v->s->ctrl[idx];
}

/* One-hot class as docs/search.md defines it: alu sfu mma ldg stg lds sts ctrl. */
static void class_onehot(const st_sass_insn *x, float *f)
{
	int k;
	unsigned fl = x->flags;
	if (x->cls == ST_CLASS_MEMORY) {
		if (fl & ST_F_ATOMIC)
			k = 4;
		else if (!strncmp(x->opcode, "LDGSTS", 6) || (fl & ST_F_ASYNC))
			k = 3;
		else if (x->space == ST_SPACE_SHARED)
			k = (fl & ST_F_STORE) ? 6 : 5;
		else
			k = (fl & ST_F_STORE) && !(fl & ST_F_LOAD) ? 4 : 3;
	} else if (x->cls == ST_CLASS_TENSOR) {
		k = 2;
	} else if (x->cls == ST_CLASS_VARLAT || (x->opcode[0] == 'D' && x->cls == ST_CLASS_ALU)) {
		k = 1; /* MUFU, conversions, S2R, fp64 */
	} else if (x->cls == ST_CLASS_ALU) {
		k = 0;
	} else {
		k = 7;
	}
	f[k] = 1;
}

/* prod_dist, prod_slack, cons_dist of the instruction at virtual slot `slot`. */
static void distances(const view *v, uint32_t slot, float *pdist, float *pslack, float *cdist)
{
	const sc_model *m = &v->s->m;
	uint32_t X = vat(v, slot), first = m->bfirst[m->si[X].block], last = m->blast[m->si[X].block];
	int d = 0, best_slack = 1 << 20;
	*pdist = 1;
	for (uint32_t j = slot; j-- > first && d < 32;) {
		uint32_t P = vat(v, j);
		d += vctrl(v, P).stall;
		int l = sc_latency((sc_model *)m, P, X, NULL, 0);
		if (l < 0)
			continue;
		if (*pdist == 1)
			*pdist = clip(d / 32.0);
		if (d - l < best_slack)
			best_slack = d - l;
	}
	*pslack = best_slack == 1 << 20 ? 1.0f : clip(best_slack / 8.0);
	d = vctrl(v, X).stall;
	*cdist = 1;
	for (uint32_t j = slot + 1; j <= last && d < 32; j++) {
		uint32_t C = vat(v, j);
		if (sc_latency((sc_model *)m, X, C, NULL, 0) >= 0) {
			*cdist = clip(d / 32.0);
			break;
		}
		d += vctrl(v, C).stall;
	}
}

/* The 17 per-instruction features (a.* or b.*) of the instruction at virtual slot `slot`. */
static void insn_features(const view *v, uint32_t slot, float *f)
{
	uint32_t X = vat(v, slot);
	const st_sass_insn *x = &v->s->m.in[X];
	st_ctrl c = vctrl(v, X);
	class_onehot(x, f);
	f[8] = c.stall / 15.0f;
	f[9] = (float)c.yield;
	f[10] = (c.wbar != ST_SB_NONE || c.rbar != ST_SB_NONE) ? 1.0f : 0.0f;
	f[11] = c.wait ? 1.0f : 0.0f;
	f[12] = (x->flags & ST_F_VARLAT) ? 1.0f : 0.0f;
	distances(v, slot, &f[13], &f[14], &f[15]);
	f[16] = clip(((double)slot - (double)X) / 16.0);
}

st_status st_sched_features(const st_sched *s, size_t move, float out[ST_SEARCH_NFEAT], st_error *err)
{
	if (move >= s->nlegal)
		return st_error_set(err, ST_EINVAL, "sched: move %zu of %zu", move, s->nlegal);
	memset(out, 0, ST_SEARCH_NFEAT * sizeof *out);
	st_move mv = st_sched_move(s, move);
	const sc_model *m = &s->m;
	view v = {s, mv.kind == ST_MOVE_SWAP ? mv.slot : UINT32_MAX, {0}};
	st_status rc = sc_check(s, mv, &v.fix, NULL, NULL, err);
	if (rc)
		return rc;
	uint32_t a = mv.slot; /* virtual slot of A: the one moving earlier, or the edited one */
	uint32_t A = vat(&v, a), blk = m->si[A].block, first = m->bfirst[blk], last = m->blast[blk];
	const sc_undo *prev = s->nundo ? &s->undo[s->nundo - 1] : NULL;
	out[ST_F_POS_IN_BLOCK] = (float)(a - first) / (float)(last - first + 1);
	out[ST_F_BLOCK_LEN] = clip(log2(1.0 + (last - first + 1)) / 12.0);
	out[ST_F_IN_LOOP] = m->loop[blk] ? 1.0f : 0.0f;
	out[ST_F_LOOP_DEPTH] = clip(m->loop[blk] / 3.0);
	int raise = 0;
	for (unsigned t = 0; t < v.fix.n; t++)
		raise += v.fix.chg[t].now.stall - v.fix.chg[t].old.stall;
	const st_sass_insn *ia = &m->in[A];
	if (mv.kind == ST_MOVE_SWAP) {
		const st_sass_insn *ib = &m->in[vat(&v, a + 1)];
		out[ST_F_SWAP] = 1;
		out[ST_F_REVERTS] = prev && prev->m.kind == ST_MOVE_SWAP && prev->m.slot == mv.slot ? 1.0f : 0.0f;
		out[ST_F_LOAD_UP] = ia->cls == ST_CLASS_MEMORY && (ia->flags & ST_F_LOAD) ? 1.0f : 0.0f;
		out[ST_F_SAME_CLASS] = ia->cls == ib->cls ? 1.0f : 0.0f;
		/* crude static estimate, cycles / 16: a variable-latency op starts earlier by B's
		 * stall, a raised stall costs its cycles */
		double gain = 0;
		if (ia->flags & ST_F_VARLAT)
			gain += s->ctrl[s->at[mv.slot]].stall;
		if (ib->flags & ST_F_VARLAT)
			gain -= s->ctrl[A].stall;
		out[ST_F_EST_GAIN] = clip((gain - raise) / 16.0);
	} else if (mv.kind == ST_MOVE_XBLOCK) { /* the moving insn; its fix-up keeps every distance (gain 0) */
		out[ST_F_SWAP] = 1;
	} else if (mv.kind == ST_MOVE_HOIST) { /* features of the moving insn in the current state */
		out[ST_F_SWAP] = 1;
		out[ST_F_LOAD_UP] = mv.arg % 8 < 4 && ia->cls == ST_CLASS_MEMORY && (ia->flags & ST_F_LOAD) ? 1.0f : 0.0f;
	} else if (mv.kind == ST_MOVE_RENAME) { /* changes no timing itself: it frees swaps (WAR/WAW) */
		out[ST_F_CTRL] = 1;
	} else {
		out[ST_F_CTRL] = 1;
		out[ST_F_STALL_DELTA] = clip(raise / 15.0);
		out[ST_F_YIELD_FLIP] = mv.kind == ST_MOVE_YIELD ? 1.0f : 0.0f;
		out[ST_F_REVERTS] = mv.kind == ST_MOVE_YIELD && prev && prev->m.kind == ST_MOVE_YIELD &&
					    prev->m.slot == mv.slot ? 1.0f : 0.0f;
		out[ST_F_EST_GAIN] = clip(-raise / 16.0); /* a lowered stall: one cycle */
	}
	insn_features(&v, a, &out[ST_F_A_ALU]);
	if (a + 1 < m->n && m->si[vat(&v, a + 1)].block == blk)
		insn_features(&v, a + 1, &out[ST_F_B_ALU]);
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
