/* The pipe family's rewrite (P7, P8): per loop, B's non-members keep their order, the members follow
 * in original order with the P6 edits, then the back branch; the peel (feeders and members, original
 * order, rename only) is inserted before B's first instruction; stalls raised where a distance is
 * short (pipe_timing.c), reuse flags cleared on moved and copied instructions and wherever the next
 * instruction changed.  Everything is planned on the decoded kernel first, then written to a scratch
 * copy of the cubin, then to the cubin itself: all or nothing. */
#include "pipe2_internal.h"

#include <stdlib.h>
#include <string.h>

/* @[!]Pg polarity of the loads whose guard member i writes, -1 when it writes none. */
static int guard_polarity(const pp_kern *x, const pp_loop *L, const pp_group *g, uint32_t i)
{
	for (uint32_t l = 0; l < g->nloads; l++)
		if (pp_guard_writer(x, L, g->loads[l]) == (int64_t)i)
			return x->in[g->loads[l]].guard_neg;
	return -1;
}

void pp_member_word(const pp_kern *x, const pp_loop *L, const pp_group *g, uint32_t i, int in_b, uint8_t w[16])
{
	const st_sass_insn *y = &x->in[i];
	memcpy(w, y->word, 16);
	if (pp_is_load(g, i)) {
		int gd = y->guard, neg = y->guard_neg;
		if (gd >= 0 && gd == g->pred_from)
			gd = g->pred_to;
		if (in_b && y->guard < 0) {
			gd = L->pe;
			neg = L->pe_neg;
		}
		pp_guard_set(w, gd, neg);
	}
	int pol = guard_polarity(x, L, g, i);
	if (pol < 0)
		return;
	int dst = pp_isetp_dst(w);
	if (dst == g->pred_from)
		dst = g->pred_to;
	if (in_b) /* @!Pg: Pg = cmp OR exit; @Pg: Pg = cmp AND continue */
		pp_isetp_set(w, dst, pol ? PP_OP_OR : PP_OP_AND, L->pe, pol ? !L->pe_neg : L->pe_neg);
	else
		pp_isetp_set(w, dst, PP_OP_AND, -1, 0);
}

static void rename_regs(st_sass_reg *r, unsigned n, const pp_group *g)
{
	for (unsigned k = 0; k < n; k++)
		if (r[k].file == ST_RF_P && g->pred_from >= 0 && r[k].index == (unsigned)g->pred_from)
			r[k].index = (uint16_t)g->pred_to;
}

/* The decoded form of member/feeder i as it reads in B (in_b) or in the peel. */
static bool make_edit(const pp_kern *x, const pp_loop *L, const pp_group *g, uint32_t i, int in_b, pa_edit *e,
		      pp_why *why)
{
	const st_sass_insn *y = &x->in[i];
	e->x = *y;
	if (y->ndefs > PA_REGS || y->nuses + 1 > PA_REGS) {
		why->rule = "P8";
		why->off = y->offset;
		snprintf(why->msg, sizeof why->msg, "%s has too many operands to follow", y->opcode);
		return false;
	}
	memcpy(e->defs, y->defs, y->ndefs * sizeof *e->defs);
	memcpy(e->uses, y->uses, y->nuses * sizeof *e->uses);
	e->x.defs = e->defs;
	e->x.uses = e->uses;
	memcpy(e->w, y->word, 16);
	if (pp_is_feeder(g, i))
		return true;
	rename_regs(e->defs, y->ndefs, g);
	rename_regs(e->uses, y->nuses, g);
	pp_member_word(x, L, g, i, in_b, e->w);
	if (e->x.guard >= 0 && e->x.guard == g->pred_from && pp_is_load(g, i))
		e->x.guard = g->pred_to;
	bool add = in_b && ((pp_is_load(g, i) && y->guard < 0) || guard_polarity(x, L, g, i) >= 0);
	if (add) {
		e->uses[e->x.nuses++] = (st_sass_reg){(uint16_t)L->pe, ST_RF_P, 1,
						      (uint8_t)(pp_is_load(g, i) ? ST_SLOT_G : PA_SLOT_ANY)};
		if (pp_is_load(g, i)) {
			e->x.guard = (int8_t)L->pe;
			e->x.guard_neg = (uint8_t)L->pe_neg;
		}
	}
	memcpy(e->x.word, e->w, 16);
	return true;
}

static void clear_reuse(st_ctrl *c)
{
	if (st_ctrl_reuse_bits(*c))
		c->reuse = 0;
}

static bool refuse(pp_why *why, const char *rule, uint32_t off, const char *msg)
{
	why->rule = rule;
	why->off = off;
	snprintf(why->msg, sizeof why->msg, "%s", msg);
	return false;
}

/* The loop and group of candidate c, checked again; false with why when it is not legal now. */
static bool recheck(const pp_kern *x, const st_pipe_cand *c, pa_loop *lp, pp_why *why)
{
	const st_sass_insn *h = st_sass_at(x->k, c->header);
	if (!h || !pp_loop_at(x, h->block, &lp->L, why) || x->in[lp->L.first].offset != c->header)
		return why->rule ? false : refuse(why, "P1", c->header, "not the first instruction of a single-block loop");
	uint32_t loads[PP_MAX_LOADS];
	if (c->nloads == 0 || c->nloads > PP_MAX_LOADS)
		return refuse(why, "P2", c->header, "a candidate names 1..8 loads");
	for (uint32_t i = 0; i < c->nloads; i++) {
		const st_sass_insn *y = st_sass_at(x->k, c->loads[i]);
		if (!y)
			return refuse(why, "P2", c->loads[i], "no instruction at this offset");
		loads[i] = y->index;
	}
	if (!pp_group_build(x, &lp->L, loads, c->nloads, &lp->g, why))
		return false;
	if (lp->g.nmem != c->nmembers || lp->g.nmem + lp->g.nfeed != c->npeel || lp->g.pred_from != c->pred_from ||
	    lp->g.pred_to != c->pred_to)
		return refuse(why, "P2", c->header, "the candidate does not match its group on this kernel");
	return true;
}

/* The waits of B's instructions before i that the peel does not copy: on the first pass they ran
 * between H and i, so a copy of i in the peel waits on their scoreboards too (a wait on an idle
 * scoreboard costs nothing; P5: no wait the original made before i is lost). */
static uint8_t skipped_waits(const pp_kern *x, const pp_loop *L, const pp_group *g, uint32_t i)
{
	uint8_t w = 0;
	for (uint32_t j = L->first; j < i; j++)
		if (!pp_is_member(g, j) && !pp_is_feeder(g, j))
			w |= x->in[j].ctrl.wait;
	return w;
}

/* B's new order, the edited members and the peel; reuse flags cleared where P8 says. */
static bool plan_loop(pa_plan *P, pa_loop *lp, pp_why *why)
{
	const pp_kern *x = &P->x;
	const pp_loop *L = &lp->L;
	const pp_group *g = &lp->g;
	uint32_t len = L->bra - L->first + 1, q = 0;
	if (!(lp->order = malloc(len * sizeof *lp->order)))
		return refuse(why, "P7", x->in[L->first].offset, "out of memory");
	for (uint32_t j = L->first; j < L->bra; j++)
		if (!pp_is_member(g, j))
			lp->order[q++] = j;
	for (uint32_t m = 0; m < g->nmem; m++) {
		lp->order[q++] = g->mem[m];
		if (!make_edit(x, L, g, g->mem[m], 1, &lp->bed[m], why))
			return false;
		clear_reuse(&P->ct[g->mem[m]]);
	}
	lp->order[q] = L->bra;
	for (uint32_t a = 0, b = 0; a < g->nmem || b < g->nfeed;) {
		bool feed = b < g->nfeed && (a == g->nmem || g->feed[b] < g->mem[a]);
		uint32_t i = feed ? g->feed[b++] : g->mem[a++];
		if (!make_edit(x, L, g, i, 0, &lp->ped[lp->npeel], why))
			return false;
		lp->pct[lp->npeel] = x->in[i].ctrl;
		lp->pct[lp->npeel].wait |= skipped_waits(x, L, g, i);
		clear_reuse(&lp->pct[lp->npeel++]);
	}
	for (uint32_t k = 0; k + 1 < len; k++)
		if (lp->order[k + 1] != lp->order[k] + 1)
			clear_reuse(&P->ct[lp->order[k]]);
	clear_reuse(&P->ct[L->first - 1]); /* H's last instruction now precedes the peel */
	return true;
}

/* Word i of the cubin now (slot i: nothing has moved yet) with control fields ct. */
static st_status word_with(const st_cubin *c, size_t k, uint32_t i, st_ctrl ct, uint8_t w[16], st_error *err)
{
	size_t size;
	const uint8_t *code = st_cubin_code(c, k, &size);
	memcpy(w, code + 16 * (size_t)i, 16);
	return st_ctrl_encode(w, ct, err);
}

static int by_first_desc(const void *a, const void *b)
{
	const pa_loop *x = a, *y = b;
	return x->L.first < y->L.first ? 1 : x->L.first > y->L.first ? -1 : 0;
}

/* Write the plan into c: predicate edits, control fields, the permutation, the back branches, the peels. */
static st_status materialise(const pa_plan *P, st_cubin *c, st_error *err)
{
	size_t k = P->x.ki, n = P->x.n;
	st_status rc = ST_OK;
	uint8_t w[16];
	for (size_t l = 0; l < P->n && !rc; l++)
		for (uint32_t m = 0; m < P->lp[l].g.nmem && !rc; m++) {
			uint32_t i = P->lp[l].g.mem[m];
			memcpy(w, P->lp[l].bed[m].w, 16);
			if (memcmp(w, P->x.in[i].word, 16))
				rc = st_cubin_set_preds(c, k, i, w, err);
		}
	for (uint32_t i = 0; i < n && !rc; i++)
		if (memcmp(&P->ct[i], &P->x.in[i].ctrl, sizeof P->ct[i]) && !(rc = word_with(c, k, i, P->ct[i], w, err)))
			rc = st_cubin_set_ctrl(c, k, i, w, err);
	uint32_t *perm = rc ? NULL : malloc(n * sizeof *perm);
	if (!rc && !perm)
		rc = st_error_set(err, ST_ENOMEM, "pipe: out of memory");
	for (uint32_t j = 0; j < n && !rc; j++)
		perm[j] = j;
	for (size_t l = 0; l < P->n && !rc; l++)
		memcpy(perm + P->lp[l].L.first, P->lp[l].order, (P->lp[l].L.bra - P->lp[l].L.first + 1) * sizeof *perm);
	if (!rc)
		rc = st_cubin_permute(c, k, perm, n, err);
	free(perm);
	for (size_t l = 0; l < P->n && !rc; l++) /* the back branch lands on B's new first instruction */
		if (P->lp[l].order[0] != P->lp[l].L.first)
			rc = st_cubin_set_branch(c, k, P->lp[l].L.bra, P->lp[l].L.first, err);
	for (size_t l = 0; l < P->n && !rc; l++) /* P->lp is sorted by B, last first: slots below stay put */
		for (uint32_t t = 0; t < P->lp[l].npeel && !rc; t++) {
			memcpy(w, P->lp[l].ped[t].w, 16);
			if (!(rc = st_ctrl_encode(w, P->lp[l].pct[t], err)))
				rc = st_cubin_insert(c, k, P->lp[l].L.first + t, w, err);
		}
	return rc;
}

static st_status illegal(st_error *err, const pp_why *why)
{
	return st_error_set(err, ST_EILLEGAL, "pipe %s: 0x%x: %s", why->rule ? why->rule : "P1", why->off, why->msg);
}

/* Each candidate checked again, P10 between them, the peels against the padding. */
static st_status check_all(pa_plan *P, const st_pipe_cand *cands, size_t n, st_error *err)
{
	pp_why why = {0};
	uint32_t peel = 0;
	for (size_t l = 0; l < n; l++) {
		if (!recheck(&P->x, &cands[l], &P->lp[l], &why))
			return illegal(err, &why);
		peel += P->lp[l].g.nmem + P->lp[l].g.nfeed;
		for (size_t m = 0; m < l; m++) {
			uint32_t a = P->lp[l].L.b, b = P->lp[m].L.b;
			if ((a > b ? a - b : b - a) <= 2)
				return st_error_set(err, ST_EILLEGAL, "pipe P10: 0x%x: %s loop at 0x%x", cands[l].header,
						    a == b ? "a second candidate for the" : "too close to the", cands[m].header);
		}
	}
	if (P->x.c && peel > st_cubin_insertable(P->x.c, P->x.ki))
		return st_error_set(err, ST_EILLEGAL, "pipe P7: the peels need %u slots, the padding has %zu", peel,
				    st_cubin_insertable(P->x.c, P->x.ki));
	return ST_OK;
}

static st_status plan_all(pa_plan *P, st_error *err)
{
	pp_why why = {0};
	bool ok = true;
	qsort(P->lp, P->n, sizeof *P->lp, by_first_desc);
	for (size_t l = 0; l < P->n && ok; l++)
		ok = plan_loop(P, &P->lp[l], &why);
	for (size_t l = 0; l < P->n && ok; l++)
		ok = pa_time_loop(P, &P->lp[l], &why);
	return ok ? ST_OK : illegal(err, &why);
}

st_ctrl *pp_ctrl_copy(const pp_kern *x)
{
	st_ctrl *ct = malloc((x->n ? x->n : 1) * sizeof *ct);
	for (size_t i = 0; ct && i < x->n; i++)
		ct[i] = x->in[i].ctrl;
	return ct;
}

st_status pp_write_all_or_nothing(st_cubin *c, st_status (*write)(void *plan, st_cubin *t, st_error *err), void *plan,
				  st_error *err)
{
	size_t size;
	const uint8_t *data = st_cubin_data(c, &size);
	st_cubin *scratch = NULL;
	st_status rc = st_cubin_open_mem(data, size, st_cubin_name(c), &scratch, err);
	if (!rc && !(rc = write(plan, scratch, err)))
		rc = write(plan, c, err);
	st_cubin_free(scratch);
	return rc;
}

static st_status write_plan(void *plan, st_cubin *t, st_error *err) { return materialise(plan, t, err); }

st_status st_pipe_apply(st_cubin *c, const char *kernel, const st_sass_opts *o, const st_pipe_cand *cands, size_t n,
			st_error *err)
{
	if (n == 0)
		return ST_OK;
	for (size_t l = 1; l < n; l++)
		if ((cands[l].form == 2) != (cands[0].form == 2))
			return st_error_set(err, ST_EILLEGAL, "pipe Q12: 0x%x: a rewrite is all form 1 or all form 2",
					    cands[l].header);
	if (cands[0].form == 2)
		return pq_apply(c, kernel, o, cands, n, err); /* pipe2_apply.c */
	pa_plan P = {0};
	st_sass_kernel *k;
	st_status rc = pp_open(c, kernel, o, &k, &P.x, err);
	if (rc)
		return rc;
	P.n = n;
	P.ct = pp_ctrl_copy(&P.x);
	P.lp = calloc(n, sizeof *P.lp);
	if (!P.ct || !P.lp)
		rc = st_error_set(err, ST_ENOMEM, "pipe: out of memory");
	if (!rc && !(rc = check_all(&P, cands, n, err)) && !(rc = plan_all(&P, err)))
		rc = pp_write_all_or_nothing(c, write_plan, &P, err);
	for (size_t l = 0; P.lp && l < n; l++)
		free(P.lp[l].order);
	free(P.lp);
	free(P.ct);
	pp_kern_free(&P.x);
	st_sass_free(k);
	return rc;
}
