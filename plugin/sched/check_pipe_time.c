/* The pipe checker's timing (P8) and control-field rules on the tuned code (docs/sched.md "Checker:
 * pipe").  Every fixed-latency dependence between rewritten instructions (guard and predicate
 * edits included) is measured along the two paths a rotated loop has: H, the peel, the first
 * pass; and the end of a pass into the next one (the wrap).  A dependence the original already had
 * between the same two original instances (two kept instructions along the same original path, two
 * moved ones in one pass, two peel copies) needs no more than ptxas's original distance; a
 * late-read instruction's guard is read at issue (CP_GUARD_WAR). */
#include "check_pipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int res_of(unsigned f)
{
	return f == ST_RF_R ? ST_RES_GPR : f == ST_RF_UR ? ST_RES_UGPR : f == ST_RF_P ? ST_RES_PRED : ST_RES_UPRED;
}

static bool meet(const st_sass_reg *a, const st_sass_reg *b)
{
	return a->file != ST_RF_B && ck_regs_meet(a, b);
}

/* The smallest distance ptxas leaves between a guarded variable-latency instruction and the next
 * write of its guard predicate, over every fixture (1 cycle, 160 of 259 such pairs, e.g. bench
 * layernorm 0x360 `@!P1 LDG` -> 0x370 `LEA R14, P1, ...`; docs/sched.md "Checker: pipe"): the guard
 * is read at issue, not late like the register sources. */
#define CP_GUARD_WAR 1

/* Does the original pair oa -> ob (oa earlier) have a dependence of this kind on the same units
 * (same slots) as the tuned one (x of a, y of b)? */
static bool orig_has(const st_sass_insn *oa, const st_sass_insn *ob, int kind, const st_sass_reg *x, const st_sass_reg *y)
{
	const st_sass_reg *ox = kind == 2 ? oa->uses : oa->defs, *oy = kind == 0 ? ob->uses : ob->defs;
	unsigned nx = kind == 2 ? oa->nuses : oa->ndefs, ny = kind == 0 ? ob->nuses : ob->ndefs;
	for (unsigned i = 0; i < nx; i++)
		for (unsigned j = 0; j < ny; j++)
			if (ox[i].slot == x->slot && oy[j].slot == y->slot && meet(&ox[i], &oy[j]) && meet(&ox[i], x) &&
			    meet(&oy[j], y) && meet(&oy[j], x))
				return true;
	return false;
}

/* The issue distance one dependence of a on a later b asks (kind 0 RAW, 1 WAW, 2 WAR on x, y). */
static int need_one(const cp *p, const st_sass_insn *a, const st_sass_reg *x, const st_sass_insn *b, const st_sass_reg *y,
		    int kind)
{
	if (a->lat_op < 0 || b->lat_op < 0)
		return CK_LIMIT;
	int l = st_sass_latency(p->sm, a, x->slot, b, y->slot, (st_sass_res)res_of(x->file),
				kind == 0 ? ST_DEP_TRUE : kind == 1 ? ST_DEP_OUTPUT : ST_DEP_ANTI);
	if (l < 0)
		l = kind == 0 && !(a->flags & ST_F_VARLAT) ? CK_LIMIT : 0;
	if (kind == 2 && (a->flags & ST_F_VARLAT) && a->ctrl.rbar == ST_SB_NONE) /* read late, no read scoreboard */
		l = x->slot == ST_SLOT_G ? (l > CP_GUARD_WAR ? l : CP_GUARD_WAR) : CK_LIMIT;
	return l;
}

/* The issue distance the tables ask between a and a later b; -1 when independent.  od >= 0: the
 * original distance between the same two original instances oa, ob; a dependence the original pair
 * has too (same units, slots and kind) needs no more than od (ptxas's own distance). */
static int need(const cp *p, const st_sass_insn *a, const st_sass_insn *b, const st_sass_insn *oa,
		const st_sass_insn *ob, int od, char *what, size_t wn)
{
	int best = -1;
	for (int kind = 0; kind < 3; kind++) {
		const st_sass_reg *x = kind == 2 ? a->uses : a->defs, *y = kind == 0 ? b->uses : b->defs;
		unsigned nx = kind == 2 ? a->nuses : a->ndefs, ny = kind == 0 ? b->nuses : b->ndefs;
		for (unsigned i = 0; i < nx; i++)
			for (unsigned j = 0; j < ny; j++) {
				if (!meet(&x[i], &y[j]))
					continue;
				int l = need_one(p, a, &x[i], b, &y[j], kind);
				if (od >= 0 && od < l && orig_has(oa, ob, kind, &x[i], &y[j]))
					l = od;
				if (l > best) {
					char nm[16];
					st_sass_reg_str(nm, sizeof nm, y[j].file, y[j].index);
					snprintf(what, wn, "%s on %s (%s -> %s)", kind == 0 ? "RAW" : kind == 1 ? "WAW" : "WAR", nm,
						 a->opcode, b->opcode);
					best = l;
				}
			}
	}
	return best > CK_LIMIT ? CK_LIMIT : best;
}

typedef struct path {
	uint32_t *s;      /* tuned slots in execution order */
	uint8_t *wrap;    /* 1: the second pass of the wrap path; 2: the exit block after the last pass */
	size_t n;
	int32_t *pre;     /* original cycles before each original index */
} path;

/* The original cycles between the original instances of path entries a and b, -1 when they are
 * not the same two instances in the same order: two kept instructions along the same original
 * path; two moved ones (the tail) in one pass; two peel copies (each stands for what it copies). */
static int orig_dist(const cp *p, const cp_loop *lo, const path *w, size_t a, size_t b)
{
	uint32_t A = p->src[w->s[a]], B = p->src[w->s[b]];
	uint8_t ka = p->kind[w->s[a]], kb = p->kind[w->s[b]];
	if (ka != kb || ka == CP_NEW) /* form 2's hand-overs, I and F are new: the tables */
		return -1;
	if (ka != CP_SAME) /* tail or peel: the same pass, original order */
		return w->wrap[a] == w->wrap[b] && A < B ? w->pre[B] - w->pre[A] : -1;
	if (w->wrap[a] == w->wrap[b] || w->wrap[b] == 2) /* same pass, or B into its exit: layout order */
		return A < B ? w->pre[B] - w->pre[A] : -1;
	return w->pre[lo->l + 1] - w->pre[A] + w->pre[B] - w->pre[lo->f];
}

static void judge(cp *p, const cp_loop *lo, const path *w, size_t a, size_t b, int dt)
{
	const st_sass_insn *x = &p->ti[w->s[a]], *y = &p->ti[w->s[b]];
	char what[160];
	int od = orig_dist(p, lo, w, a, b);
	int req = need(p, x, y, &p->in[p->src[w->s[a]]], &p->in[p->src[w->s[b]]], od, what, sizeof what);
	if (req > 0 && dt < req)
		cp_flag(p, w->s[b], "P8", "%s: %d cycles apart%s, needs %d", what, dt, w->wrap[b] && !w->wrap[a] ? " across the back edge" : "",
			req);
	uint8_t sb = (uint8_t)((x->ctrl.wbar < 6 ? 1u << x->ctrl.wbar : 0) | (x->ctrl.rbar < 6 ? 1u << x->ctrl.rbar : 0));
	if ((sb & y->ctrl.wait) && dt < (od >= 0 && od < 2 ? od : 2))
		cp_flag(p, w->s[b], "P8", "%s -> %s: set-to-wait on a scoreboard %d cycles apart, needs 2", x->opcode, y->opcode,
			dt);
}

/* Every consumer from index `from` on, against the producers within CK_LIMIT cycles before it. */
static void walk(cp *p, const cp_loop *lo, const path *w, size_t from)
{
	for (size_t b = from; b < w->n; b++) {
		if (p->src[w->s[b]] == CP_NONE)
			continue;
		int dt = 0;
		for (size_t a = b; a-- > 0;) {
			dt += p->ti[w->s[a]].ctrl.stall;
			if (dt >= CK_LIMIT)
				break;
			if (p->src[w->s[a]] != CP_NONE && (w->wrap[a] != w->wrap[b] || !w->wrap[b]))
				judge(p, lo, w, a, b, dt); /* in-pass pairs once, on the entry path; crossing ones */
		}
	}
}

/* The nearest instruction before path index b that the unit r of y depends on (a write of it; for
 * a write of y's, also a read by a variable-latency instruction): SB k must be waited on after it. */
static void cover_unit(cp *p, const path *w, size_t b, const st_sass_reg *r, bool is_def)
{
	const st_sass_insn *y = &p->ti[w->s[b]];
	uint8_t waited = y->ctrl.wait;
	for (size_t a = b; a-- > 0;) {
		uint32_t j = w->s[a];
		if (p->src[j] == CP_NONE)
			return;
		const st_sass_insn *x = &p->ti[j];
		bool wr = false, rd = false;
		for (unsigned d = 0; d < x->ndefs; d++)
			wr |= meet(&x->defs[d], r);
		for (unsigned u = 0; is_def && u < x->nuses; u++)
			rd |= x->uses[u].slot != ST_SLOT_G && meet(&x->uses[u], r); /* a guard is read at issue */
		if ((wr || rd) && (x->flags & ST_F_VARLAT)) {
			int k = wr ? x->ctrl.wbar : x->ctrl.rbar;
			if ((k < 6 && !(waited >> k & 1)) || (k >= 6 && wr)) {
				char nm[16];
				st_sass_reg_str(nm, sizeof nm, r->file, r->index);
				cp_flag(p, w->s[b], "P5", "%s at 0x%x: %s of %s at 0x%x is not waited on (SB%d)", y->opcode, 16 * w->s[b],
					wr ? "the write" : "the read", nm, 16 * j, k);
			}
		}
		if (wr)
			return;
		waited |= x->ctrl.wait;
	}
}

/* Scoreboard cover of every rewritten or copied instruction and of every reader of a moved load. */
static void cover(cp *p, const path *w, size_t from)
{
	for (size_t b = from; b < w->n; b++) {
		uint32_t j = w->s[b];
		if (p->src[j] == CP_NONE)
			continue;
		const st_sass_insn *y = &p->ti[j];
		for (unsigned u = 0; u < y->nuses; u++)
			if (y->uses[u].file != ST_RF_B)
				cover_unit(p, w, b, &y->uses[u], false);
		for (unsigned d = 0; d < y->ndefs; d++)
			if (y->defs[d].file != ST_RF_B)
				cover_unit(p, w, b, &y->defs[d], true);
	}
}

void cp_check_timing(cp *p, cp_loop *lo)
{
	uint32_t nb = lo->tn ? lo->tn : lo->l - lo->f + 1, tb = lo->tp + lo->L, tend = tb + nb - 1;
	uint32_t start = lo->tp > 256 ? lo->tp - 256 : 0;
	size_t cap = (size_t)(tend - start + 1) + 2 * nb;
	path w = {malloc(cap * sizeof *w.s), calloc(cap, 1), 0, calloc(p->n + 1, sizeof *w.pre)};
	if (!w.s || !w.wrap || !w.pre) {
		cp_flag(p, lo->tp, "P8", "out of memory");
		free(w.s), free(w.wrap), free(w.pre);
		return;
	}
	for (uint32_t i = 0; i < p->n; i++)
		w.pre[i + 1] = w.pre[i] + p->in[i].ctrl.stall;
	for (uint32_t j = start; j <= tend; j++) /* entry: what lies before in layout, the peel, the first pass */
		w.s[w.n++] = j;
	walk(p, lo, &w, lo->tp - start);
	cover(p, &w, lo->tp - start);
	w.n = 0;
	for (int pass = 0; pass < 2; pass++) /* the wrap: a pass into the next */
		for (uint32_t j = tb; j <= tend; j++)
			w.wrap[w.n] = (uint8_t)pass, w.s[w.n++] = j;
	walk(p, lo, &w, nb);
	cover(p, &w, nb);
	w.n = 0;
	for (uint32_t j = tb; j <= tend; j++) /* the last pass into what follows it */
		w.wrap[w.n] = 0, w.s[w.n++] = j;
	for (uint32_t j = tend + 1; j < p->n && j <= tend + nb && p->lp[j] == 0; j++)
		w.wrap[w.n] = 2, w.s[w.n++] = j;
	walk(p, lo, &w, nb);
	if (lo->e != CP_NONE && p->src[p->inv[lo->e]] != CP_NONE) {
		int od = w.pre[lo->l] - w.pre[lo->e], dt = 0;
		for (uint32_t j = p->inv[lo->e]; j < tend; j++)
			dt += p->ti[j].ctrl.stall;
		if (dt < od)
			cp_flag(p, tend, "P8", "the exit compare at 0x%x is %d cycles before the back branch, %d in the original",
				16 * p->inv[lo->e], dt, od);
	}
	free(w.s), free(w.wrap), free(w.pre);
}

static bool reuse_mode(st_ctrl c)
{
	return c.yield && c.stall >= 1 && c.stall <= 11;
}

/* Control fields: only stall raises and reuse clears; reuse cleared where the next instruction
 * changed (a moved or copied instruction, or one followed by another than before). */
void cp_check_ctrl(cp *p)
{
	for (uint32_t j = 0; j < p->n; j++) {
		if (p->src[j] == CP_NONE)
			continue;
		st_error e = {0};
		st_ctrl o = p->in[p->src[j]].ctrl, t = st_ctrl_decode(p->tcode + 16 * j);
		const char *op = p->in[p->src[j]].opcode;
		bool moved = p->kind[j] != CP_SAME || j + 1 >= p->n || p->src[j + 1] != p->src[j] + 1 ||
			     p->kind[j + 1] != CP_SAME;
		if (st_ctrl_check(t, &e))
			cp_flag(p, j, "P8", "%s: %s", op, e.msg);
		if (t.wbar != o.wbar || t.rbar != o.rbar || t.wait != o.wait || t.yield != o.yield)
			cp_flag(p, j, "P5", "%s from 0x%x: scoreboards, wait mask or yield changed", op, 16 * p->src[j]);
		if (t.stall < o.stall)
			cp_flag(p, j, "P8", "%s from 0x%x: stall lowered %u -> %u", op, 16 * p->src[j], o.stall, t.stall);
		bool ro = reuse_mode(o), rt = reuse_mode(t);
		if ((!ro && !rt && t.reuse != o.reuse) || (rt && (t.reuse & ~(ro ? o.reuse : 0))) || (ro && !rt && t.reuse) ||
		    (rt && moved && t.reuse))
			cp_flag(p, j, "P8", "%s from 0x%x: reuse bits %u -> %u%s", op, 16 * p->src[j], o.reuse, t.reuse,
				moved ? " (its next instruction changed: clear them)" : "");
	}
}
