/* Form 2's rewrite (Q6-Q12): per loop, B's new layout (each chosen load replaced by its hand-over,
 * the prefetch block I, F and the φ-renamed members after the last one, every other member gone, the
 * non-members in place) and the peel before B.  The members' prefetch copies live in the members'
 * own slots (edited with st_cubin_set_regs, set_preds, set_ctrl, moved by st_cubin_permute); the
 * hand-overs, I, F and the peel are inserted through the padding (st_cubin_insert); the back branch
 * lands on B's new first instruction; the register count rises to regs_after.  Planned on the decoded
 * kernel, timed (pipe2_seq.c), written to a scratch copy, then to the cubin: all or nothing. */
#include "pipe2_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool refuse(pp_why *why, const char *rule, uint32_t off, const char *msg)
{
	why->rule = rule;
	why->off = off;
	snprintf(why->msg, sizeof why->msg, "%s", msg);
	return false;
}

static void clear_reuse(st_ctrl *c)
{
	if (st_ctrl_reuse_bits(*c))
		c->reuse = 0;
}

/* Candidate c checked again on this kernel; q gets its analysis. */
static bool recheck(const pp_kern *x, const st_pipe_cand *c, pq_cand *q, pp_why *why)
{
	const st_sass_insn *h = st_sass_at(x->k, c->header);
	pp_loop L;
	if (!h || !pq_loop_at(x, h->block, &L, why) || x->in[L.first].offset != c->header)
		return why->rule ? false : refuse(why, "Q1", c->header, "not the first instruction of a single-block loop");
	uint32_t loads[PP_MAX_LOADS];
	if (c->nloads == 0 || c->nloads > PP_MAX_LOADS)
		return refuse(why, "Q2", c->header, "a candidate names 1..8 loads");
	for (uint32_t i = 0; i < c->nloads; i++) {
		const st_sass_insn *y = st_sass_at(x->k, c->loads[i]);
		if (!y)
			return refuse(why, "Q2", c->loads[i], "no instruction at this offset");
		loads[i] = y->index;
	}
	if (!pq_build(x, &L, loads, c->nloads, c->regs_after > c->regs_before ? c->regs_after : 0, q, why))
		return false;
	st_pipe_cand t;
	pq_to_cand(x, q, &t);
	return pq_same(&t, c) || refuse(why, "Q2", c->header, "the candidate does not match its rewrite on this kernel");
}

/* The waits of B's instructions before i that do not precede i's copy in the peel (the feeders come
 * first, then the members): on entry they ran before i's first instance (a wait on an idle
 * scoreboard costs nothing). */
static uint8_t skipped_waits(const pp_kern *x, const pq_cand *q, uint32_t i)
{
	uint8_t w = 0;
	bool feed = pp_is_feeder(&q->g, i);
	for (uint32_t j = q->L.first; j < i; j++)
		if (pp_is_member(&q->g, j) ? feed : !pp_is_feeder(&q->g, j))
			w |= x->in[j].ctrl.wait;
	return w;
}

static pq_ent *new_ent(pq_loop *lp, st_ctrl ct)
{
	pq_ent *e = &lp->b[lp->nb++];
	e->orig = -1;
	e->edited = true;
	e->ctl = ct;
	clear_reuse(&e->ctl);
	return e;
}

/* The hand-overs of load X (Q6; `carry`: removed members' waits, Q10), and after the last load the
 * prefetch block (Q7). */
static bool plan_load(pq_plan *P, pq_loop *lp, uint32_t X, uint8_t carry, pp_why *why)
{
	const pp_kern *x = &P->x;
	pq_cand *q = &lp->q;
	const st_sass_insn *y = &x->in[X], *U = &x->in[q->u];
	for (unsigned k = 0; k < pq_width(y); k++) {
		st_ctrl ct = U->ctrl;
		ct.wbar = ct.rbar = ST_SB_NONE;
		ct.wait = (uint8_t)((k ? 0 : y->ctrl.wait | carry) | 1u << q->sb);
		pq_ent *e = new_ent(lp, ct);
		pq_hand_edit(x, q, y->defs[0].index + k, &e->ed);
		e->ed.x.ctrl = e->ctl;
	}
	if (X != q->g.loads[q->g.nloads - 1])
		return true;
	/* I and F run before U and E: on the first pass they also wait on whatever the instructions they
	 * now precede waited on (a producer before the loop of i or of E's other operand) */
	st_ctrl ci = U->ctrl, cf = x->in[q->e].ctrl;
	for (uint32_t j = X + 1; j < q->e; j++) {
		cf.wait |= x->in[j].ctrl.wait;
		ci.wait |= j < q->u ? x->in[j].ctrl.wait : 0;
	}
	pq_ent *e = new_ent(lp, ci);
	pq_i_edit(x, q, &e->ed);
	e->ed.x.ctrl = e->ctl;
	e = new_ent(lp, cf);
	pq_f_edit(x, q, &e->ed);
	e->ed.x.ctrl = e->ctl;
	for (uint32_t m = 0; m < q->g.nmem; m++) {
		uint32_t i = q->g.mem[m];
		e = &lp->b[lp->nb++];
		e->orig = (int32_t)i;
		e->edited = true;
		if (!pq_member_edit(x, q, i, 1, &e->ed, why))
			return false;
		if (pp_is_load(&q->g, i)) {
			P->ct[i].wbar = (uint8_t)q->sb;
			P->ct[i].rbar = ST_SB_NONE;
		}
		clear_reuse(&P->ct[i]);
		e->ed.x.ctrl = P->ct[i];
	}
	return true;
}

static bool plan_peel(pq_plan *P, pq_loop *lp, pp_why *why)
{
	const pp_kern *x = &P->x;
	const pq_cand *q = &lp->q;
	for (uint32_t t = 0; t < q->g.nfeed + q->g.nmem; t++) { /* Q8: the feeders, then the members */
		bool feed = t < q->g.nfeed;
		uint32_t i = feed ? q->g.feed[t] : q->g.mem[t - q->g.nfeed];
		pq_ent *e = &lp->peel[lp->np++];
		e->orig = -1;
		e->edited = true;
		if (feed)
			pq_copy_edit(&x->in[i], &e->ed);
		else if (!pq_member_edit(x, q, i, 0, &e->ed, why))
			return false;
		e->ctl = x->in[i].ctrl;
		e->ctl.wait |= skipped_waits(x, q, i);
		if (pp_is_load(&q->g, i)) {
			e->ctl.wbar = (uint8_t)q->sb;
			e->ctl.rbar = ST_SB_NONE;
		}
		clear_reuse(&e->ctl);
		e->ed.x.ctrl = e->ctl;
	}
	return true;
}

static bool plan_loop(pq_plan *P, pq_loop *lp, pp_why *why)
{
	const pp_kern *x = &P->x;
	const pq_cand *q = &lp->q;
	uint32_t len = q->L.bra - q->L.first + 1;
	lp->b = calloc(len + q->nhand + 2, sizeof *lp->b);
	lp->peel = calloc(q->npeel, sizeof *lp->peel);
	if (!lp->b || !lp->peel)
		return refuse(why, "Q8", x->in[q->L.first].offset, "out of memory");
	uint8_t carry = 0;
	for (uint32_t j = q->L.first; j <= q->L.bra; j++) {
		if (!pp_is_member(&q->g, j)) {
			P->ct[j].wait |= carry;
			carry = 0;
			lp->b[lp->nb++] = (pq_ent){.orig = (int32_t)j};
		} else if (!pp_is_load(&q->g, j)) {
			carry |= x->in[j].ctrl.wait;
		} else {
			if (!plan_load(P, lp, j, carry, why))
				return false;
			carry = 0;
		}
	}
	for (uint32_t k = 0; k + 1 < lp->nb; k++) { /* reuse flags before every changed neighbour */
		const pq_ent *e = &lp->b[k], *f = &lp->b[k + 1];
		if (e->orig >= 0 && (e->edited || f->edited || f->orig != e->orig + 1))
			clear_reuse(&P->ct[e->orig]);
	}
	clear_reuse(&P->ct[q->L.first - 1]); /* H's last instruction now precedes the peel */
	return plan_peel(P, lp, why);
}

/* The word now in slot i of kernel k. */
static void word_now(const st_cubin *c, size_t k, uint32_t i, uint8_t w[16])
{
	size_t size;
	memcpy(w, st_cubin_code(c, k, &size) + 16 * (size_t)i, 16);
}

static bool bit_of(const uint8_t w[16], unsigned b) { return (w[b / 8] >> (b % 8)) & 1; }

/* Original slot i takes word nw with control ct: register fields, predicate fields, control fields. */
static st_status edit_slot(st_cubin *c, size_t k, uint32_t i, const uint8_t nw[16], st_ctrl ct, st_error *err)
{
	static const int rb[] = {2, 3, 4, 8};
	uint8_t w[16];
	bool regs = false, preds = false;
	st_status rc = ST_OK;
	word_now(c, k, i, w);
	for (int b = 0; b < 4; b++) {
		regs |= w[rb[b]] != nw[rb[b]];
		w[rb[b]] = nw[rb[b]];
	}
	if (regs && (rc = st_cubin_set_regs(c, k, i, w, err)))
		return rc;
	for (unsigned b = 0; b < 105; b++)
		if (((b >= 12 && b <= 15) || (b >= 74 && b <= 75) || (b >= 81 && b <= 90)) && bit_of(w, b) != bit_of(nw, b)) {
			w[b / 8] ^= (uint8_t)(1u << (b % 8));
			preds = true;
		}
	if (preds && (rc = st_cubin_set_preds(c, k, i, w, err)))
		return rc;
	for (unsigned b = 0; b < 105; b++)
		if (bit_of(w, b) != bit_of(nw, b))
			return st_error_set(err, ST_EUNSUPPORTED, "pipe2: the word for 0x%x differs in bit %u, which no edit writes",
					    16 * i, b);
	if ((rc = st_ctrl_encode(w, ct, err)))
		return rc;
	return st_cubin_set_ctrl(c, k, i, w, err);
}

/* Every original slot's new word or control fields. */
static st_status edit_slots(const pq_plan *P, st_cubin *c, st_error *err)
{
	size_t k = P->x.ki;
	st_status rc = ST_OK;
	uint8_t w[16];
	for (size_t l = 0; l < P->n && !rc; l++)
		for (uint32_t t = 0; t < P->lp[l].nb && !rc; t++) {
			const pq_ent *e = &P->lp[l].b[t];
			if (e->orig >= 0 && e->edited)
				rc = edit_slot(c, k, (uint32_t)e->orig, e->ed.w, P->ct[e->orig], err);
		}
	for (uint32_t i = 0; i < P->x.n && !rc; i++) {
		bool member = false;
		for (size_t l = 0; l < P->n; l++)
			member |= pp_is_member(&P->lp[l].q.g, i);
		if (member || !memcmp(&P->ct[i], &P->x.in[i].ctrl, sizeof P->ct[i]))
			continue;
		word_now(c, k, i, w);
		if (!(rc = st_ctrl_encode(w, P->ct[i], err)))
			rc = st_cubin_set_ctrl(c, k, i, w, err);
	}
	return rc;
}

static st_status insert_ent(st_cubin *c, size_t k, size_t slot, const pq_ent *e, st_error *err)
{
	uint8_t w[16];
	memcpy(w, e->ed.w, 16);
	st_status rc = st_ctrl_encode(w, e->ctl, err);
	return rc ? rc : st_cubin_insert(c, k, slot, w, err);
}

/* Write the plan into c: slot edits, B's order, the inserted words, the back branches, the count. */
static st_status materialise(const pq_plan *P, st_cubin *c, st_error *err)
{
	size_t k = P->x.ki, n = P->x.n;
	st_status rc = edit_slots(P, c, err);
	uint32_t *perm = rc ? NULL : malloc(n * sizeof *perm);
	if (!rc && !perm)
		rc = st_error_set(err, ST_ENOMEM, "pipe2: out of memory");
	for (uint32_t j = 0; j < n && !rc; j++)
		perm[j] = j;
	for (size_t l = 0; l < P->n && !rc; l++)
		for (uint32_t t = 0, q = P->lp[l].q.L.first; t < P->lp[l].nb; t++)
			if (P->lp[l].b[t].orig >= 0)
				perm[q++] = (uint32_t)P->lp[l].b[t].orig;
	if (!rc)
		rc = st_cubin_permute(c, k, perm, n, err);
	free(perm);
	unsigned regs = 0;
	for (size_t l = 0; l < P->n && !rc; l++) { /* last loop first: the slots of those before stay put */
		const pq_loop *lp = &P->lp[l];
		uint32_t first = lp->q.L.first;
		for (uint32_t t = 0; t < lp->nb && !rc; t++)
			if (lp->b[t].orig < 0)
				rc = insert_ent(c, k, first + t, &lp->b[t], err);
		for (uint32_t t = 0; t < lp->np && !rc; t++)
			rc = insert_ent(c, k, first + t, &lp->peel[t], err);
		if (!rc)
			rc = st_cubin_set_branch(c, k, first + lp->np + lp->nb - 1, first + lp->np, err);
		regs = lp->q.regs_after > regs ? lp->q.regs_after : regs;
	}
	if (!rc && regs > st_cubin_regcount(c, k))
		rc = st_cubin_set_regcount(c, k, regs, err);
	return rc;
}

static st_status illegal(st_error *err, const pp_why *why)
{
	return st_error_set(err, ST_EILLEGAL, "pipe2 %s: 0x%x: %s", why->rule ? why->rule : "Q1", why->off, why->msg);
}

static int by_first_desc(const void *a, const void *b)
{
	const pq_loop *x = a, *y = b;
	return x->q.L.first < y->q.L.first ? 1 : x->q.L.first > y->q.L.first ? -1 : 0;
}

/* Each candidate checked again, Q12 between them, the inserted slots against the padding; planned
 * and timed. */
static st_status plan_all(pq_plan *P, const st_pipe_cand *cands, size_t n, st_error *err)
{
	pp_why why = {0};
	uint32_t ins = 0;
	for (size_t l = 0; l < n; l++) {
		if (!recheck(&P->x, &cands[l], &P->lp[l].q, &why))
			return illegal(err, &why);
		ins += P->lp[l].q.npeel + P->lp[l].q.nhand + 2;
		for (size_t m = 0; m < l; m++) {
			uint32_t a = P->lp[l].q.L.b, b = P->lp[m].q.L.b;
			if ((a > b ? a - b : b - a) <= 2)
				return st_error_set(err, ST_EILLEGAL, "pipe2 Q12: 0x%x: %s loop at 0x%x", cands[l].header,
						    a == b ? "a second candidate for the" : "too close to the", cands[m].header);
		}
	}
	if (P->x.c && ins > st_cubin_insertable(P->x.c, P->x.ki))
		return st_error_set(err, ST_EILLEGAL, "pipe2 Q8: the rewrite inserts %u slots, the padding has %zu", ins,
				    st_cubin_insertable(P->x.c, P->x.ki));
	qsort(P->lp, P->n, sizeof *P->lp, by_first_desc);
	bool ok = true;
	for (size_t l = 0; l < P->n && ok; l++)
		ok = plan_loop(P, &P->lp[l], &why);
	for (size_t l = 0; l < P->n && ok; l++)
		ok = pq_time_loop(P, &P->lp[l], &why);
	return ok ? ST_OK : illegal(err, &why);
}

static st_status write_plan(void *plan, st_cubin *t, st_error *err) { return materialise(plan, t, err); }

st_status pq_apply(st_cubin *c, const char *kernel, const st_sass_opts *o, const st_pipe_cand *cands, size_t n,
		   st_error *err)
{
	pq_plan P = {0};
	st_sass_kernel *k;
	st_status rc = pp_open(c, kernel, o, &k, &P.x, err);
	if (rc)
		return rc;
	P.n = n;
	P.ct = pp_ctrl_copy(&P.x);
	P.lp = calloc(n, sizeof *P.lp);
	if (!P.ct || !P.lp)
		rc = st_error_set(err, ST_ENOMEM, "pipe2: out of memory");
	if (!rc && !(rc = plan_all(&P, cands, n, err)))
		rc = pp_write_all_or_nothing(c, write_plan, &P, err);
	for (size_t l = 0; P.lp && l < n; l++) {
		free(P.lp[l].b);
		free(P.lp[l].peel);
	}
	free(P.lp);
	free(P.ct);
	pp_kern_free(&P.x);
	st_sass_free(k);
	return rc;
}
