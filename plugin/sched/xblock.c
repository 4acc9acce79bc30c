/* Moves across blocks (ST_MOVE_XBLOCK, family "xblock", docs/sched.md "Across blocks"): the
 * instruction X at `slot` of block H moves to the end of H's layout predecessor A, just before
 * H's first instruction L.  Two cases, one rule set:
 *  (a) A falls through into H, A's only successor is H, H's only predecessor is A (a split that
 *      joins nothing): X executes exactly as often as before;
 *  (b) loop-invariant code motion: H is a loop header entered only from A (every other
 *      predecessor of H lies in the loop: the blocks reaching one backwards without passing H,
 *      none of them the kernel's entry or a block without predecessors),
 *      X's sources are written nowhere in the loop (X included), X's destinations are written in
 *      the loop only by X and are not live into H: X computes the same value once in A that it
 *      computed on every iteration, and every reader sees that value.
 * Invariants (X1-X8 in docs/sched.md):
 *  X1 X is fixed-latency ALU: no memory, no scoreboard set, unpredicated, not collective, not
 *     special, shares no register with a tensor/special instruction; no fixed point lies between
 *     L and X in H; X is not H's last instruction and at most XB_DEPTH slots below L.
 *  X2 A's last instruction is not control (nothing branches or converges between A and L); L is
 *     not control, sync, barrier or fence; no BSSY or other non-branch reference names L.
 *  X3 X depends on none of the instructions it passes in H, L included (sc_ordered).
 *  X4 timing into X: every producer P in A at least sc_latency(P, X) (the full table) cycles
 *     before X's new issue; the distance from A's start at least the largest latency into X
 *     from anywhere (xlin); a wait bit of X at least 2 cycles after the latest setter in A.
 *  X5 timing out of X: every instruction of H within 30 cycles of X's new issue at least
 *     sc_latency(X, Q) after it; H holds 30 cycles after X (successors are then safe); and what
 *     lasts once H moves again (X8): X's stall plus each consumer C's own bound
 *     min(orig_t(C), lin(C)) covers the latency, and H is originally long enough for L's end rule.
 *  X6 variable-latency instructions that touch X's registers and may run before X: each SB they
 *     set is waited on after them, in A before X (or by X) or in their own block (static); one
 *     without a scoreboard, or on a DEPBAR-counted SB, refuses.
 *  X7 fix-up: the instruction before X's old slot takes X's stall (every distance across the
 *     gap is kept, on the back edge too), the one after takes X's wait mask, reuse flags next to
 *     both places are cleared.  A stall above 15 refuses.
 *  X8 after the move the model's block facts follow it (X joins A, H starts one slot later; X
 *     takes the full table latency against everything, keeps its stall and its place at A's end;
 *     L's end rule keeps H long enough), so A and H take swaps, hoists and control edits again;
 *     wait, sb, rename and further xblock moves stay out of both blocks.  Undo restores it all. */
#include "sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XB_DEPTH 16  /* X at most this many slots below L */
#define XB_AWIN 40   /* slots of A read before X's new place */
#define XB_HWIN 40   /* slots of H read after it */

/* X's facts before its move, and L's lout (restored by the undo; one move per block pair). */
struct sc_xsave {
	sc_info x;
	uint8_t lout_l;
};

static uint8_t sets(st_ctrl c)
{
	return (uint8_t)((c.wbar < 6 ? 1u << c.wbar : 0) | (c.rbar < 6 ? 1u << c.rbar : 0));
}

typedef struct xb_cfg {
	size_t nb;
	uint32_t *pstart, *plist; /* predecessors of block b: plist[pstart[b] .. pstart[b+1]) */
	uint8_t *mark;            /* scratch per block */
	uint32_t *stack;
} xb_cfg;

static void cfg_free(xb_cfg *g)
{
	free(g->pstart);
	free(g->plist);
	free(g->mark);
	free(g->stack);
}

static int cfg_build(const sc_model *m, xb_cfg *g)
{
	size_t nb = g->nb = st_sass_block_count(m->k), ne = 0;
	g->pstart = calloc(nb + 2, sizeof *g->pstart);
	g->plist = calloc(2 * nb + 1, sizeof *g->plist);
	g->mark = calloc(nb + 1, 1);
	g->stack = calloc(nb + 1, sizeof *g->stack);
	if (!g->pstart || !g->plist || !g->mark || !g->stack)
		return -1;
	for (size_t b = 0; b < nb; b++) {
		uint32_t f, c;
		int32_t su[2];
		st_sass_block(m->k, b, &f, &c, su);
		for (int e = 0; e < 2; e++)
			if (su[e] >= 0 && (size_t)su[e] < nb && !(e == 1 && su[1] == su[0]))
				g->pstart[su[e] + 1]++;
	}
	for (size_t b = 0; b < nb; b++)
		g->pstart[b + 1] += g->pstart[b];
	uint32_t *fill = calloc(nb + 1, sizeof *fill);
	if (!fill)
		return -1;
	for (size_t b = 0; b < nb; b++) {
		uint32_t f, c;
		int32_t su[2];
		st_sass_block(m->k, b, &f, &c, su);
		for (int e = 0; e < 2; e++)
			if (su[e] >= 0 && (size_t)su[e] < nb && !(e == 1 && su[1] == su[0]))
				g->plist[g->pstart[su[e]] + fill[su[e]]++] = (uint32_t)b, ne++;
	}
	free(fill);
	return 0;
}

/* mark[b] |= bit for every block that reaches one of the seeds backwards without passing `stop`
 * (UINT32_MAX: none); the seeds themselves included. */
static void reach_back(xb_cfg *g, const uint32_t *seed, size_t ns, uint32_t stop, uint8_t bit)
{
	size_t sp = 0;
	for (size_t i = 0; i < ns; i++)
		if (!(g->mark[seed[i]] & bit)) {
			g->mark[seed[i]] |= bit;
			g->stack[sp++] = seed[i];
		}
	while (sp) {
		uint32_t b = g->stack[--sp];
		if (b == stop)
			continue;
		for (uint32_t e = g->pstart[b]; e < g->pstart[b + 1]; e++) {
			uint32_t p = g->plist[e];
			if (!(g->mark[p] & bit)) {
				g->mark[p] |= bit;
				g->stack[sp++] = p;
			}
		}
	}
}

/* Is register (file, idx) read on some path from block h's start before an unpredicated write? */
static int live_in(const sc_model *m, xb_cfg *g, uint32_t h, unsigned file, unsigned idx)
{
	st_sass_reg r = {(uint16_t)idx, (uint8_t)file, 1, 0};
	size_t sp = 0;
	memset(g->mark, 0, g->nb);
	g->mark[h] = 1;
	g->stack[sp++] = h;
	while (sp) {
		uint32_t b = g->stack[--sp], f, c;
		int32_t su[2];
		st_sass_block(m->k, b, &f, &c, su);
		int killed = 0;
		for (uint32_t i = f; i < f + c && !killed; i++) {
			if (sc_regs_any(m->in[i].uses, m->in[i].nuses, &r, 1))
				return 1;
			killed = m->in[i].guard < 0 && sc_regs_any(m->in[i].defs, m->in[i].ndefs, &r, 1);
		}
		for (int e = 0; e < 2 && !killed; e++)
			if (su[e] >= 0 && (size_t)su[e] < g->nb && !g->mark[su[e]]) {
				g->mark[su[e]] = 1;
				g->stack[sp++] = (uint32_t)su[e];
			}
	}
	return 0;
}

/* X1 (static part): the instruction itself. */
static int movable(const sc_model *m, uint32_t x, const uint32_t *spec, size_t ns)
{
	const st_sass_insn *in = &m->in[x];
	const sc_info *si = &m->si[x];
	if (!(si->flags & SC_ALU) || (si->flags & (SC_FIXED | SC_VARLAT | SC_SPECIAL | SC_UNKNOWN | SC_NEEDS_CLAIM)) ||
	    si->mem_r || si->mem_w || in->cls != ST_CLASS_ALU || (in->flags & (ST_F_LOAD | ST_F_STORE | ST_F_ATOMIC |
	    ST_F_COLLECTIVE | ST_F_VARLAT)) || in->guard >= 0 || in->ctrl.wbar != ST_SB_NONE ||
	    in->ctrl.rbar != ST_SB_NONE || !in->ndefs)
		return 0;
	for (unsigned d = 0; d < in->ndefs; d++)
		if (in->defs[d].file == ST_RF_B)
			return 0;
	for (size_t t = 0; t < ns; t++)
		if (sc_insns_touch(&m->in[spec[t]], in) || sc_insns_touch(in, &m->in[spec[t]]))
			return 0;
	return 1;
}

/* X6 (static part): variable-latency instructions outside A that touch X and reach A: each
 * SB they set must be waited on later in their own block (no move takes a wait out of a block or
 * a setter past its wait, so this holds in every state). */
static int outside_ok(const sc_model *m, xb_cfg *g, uint32_t x, uint32_t a)
{
	for (size_t b = 0; b < g->nb; b++) {
		if (!(g->mark[b] & 4) || b == a)
			continue;
		for (uint32_t v = m->bfirst[b]; v <= m->blast[b]; v++) {
			const st_sass_insn *iv = &m->in[v];
			if (!(m->si[v].flags & SC_VARLAT) || !sc_insns_touch(iv, &m->in[x]))
				continue;
			uint8_t need = sets(iv->ctrl), got = 0;
			if (!need || (need & m->counted_sbs))
				return 0;
			for (uint32_t q = v + 1; q <= m->blast[b]; q++)
				got |= m->in[q].ctrl.wait;
			if ((need & got) != need)
				return 0;
		}
	}
	return 1;
}

/* Loop facts for header h entered from a: 0 when the structure is refused; *loop = 1 when h has
 * predecessors other than a (then mark bit 2 holds the loop's blocks). */
static int loop_ok(const sc_model *m, xb_cfg *g, uint32_t h, uint32_t a, int *loop)
{
	uint32_t others[2 * 64];
	size_t no = 0;
	*loop = 0;
	for (uint32_t e = g->pstart[h]; e < g->pstart[h + 1]; e++)
		if (g->plist[e] != a) {
			if (no == sizeof others / sizeof *others)
				return 0;
			others[no++] = g->plist[e];
		}
	if (!no)
		return 1;
	*loop = 1;
	g->mark[h] |= 2;
	reach_back(g, others, no, h, 2);
	if (g->mark[a] & 2)
		return 0;
	/* The blocks marked are closed under predecessors (but at h), so the loop has no entry but h
	 * exactly when none of them is the kernel's entry or has no predecessor at all (the bench
	 * layernorm: a branch from the entry block straight to h, skipping a, is no back edge). */
	for (size_t b = 0; b < g->nb; b++)
		if ((g->mark[b] & 2) && b != h && (b == 0 || g->pstart[b] == g->pstart[b + 1]))
			return 0;
	(void)m;
	return 1;
}

/* Invariance (case b): X's sources written nowhere in the loop, its destinations only by X
 * there and not live into h. */
static int invariant(const sc_model *m, xb_cfg *g, uint32_t h, uint32_t x)
{
	const st_sass_insn *in = &m->in[x];
	for (size_t b = 0; b < g->nb; b++)
		if (g->mark[b] & 2)
			for (uint32_t i = m->bfirst[b]; i <= m->blast[b]; i++) {
				if (sc_regs_any(m->in[i].defs, m->in[i].ndefs, in->uses, in->nuses))
					return 0;
				if (i != x && sc_regs_any(m->in[i].defs, m->in[i].ndefs, in->defs, in->ndefs))
					return 0;
			}
	uint8_t *save = malloc(g->nb);
	if (!save)
		return 0;
	memcpy(save, g->mark, g->nb);
	int ok = 1;
	for (unsigned d = 0; d < in->ndefs && ok; d++)
		for (unsigned r = 0; r < in->defs[d].count && ok; r++)
			ok = !live_in(m, g, h, in->defs[d].file, in->defs[d].index + r);
	memcpy(g->mark, save, g->nb);
	free(save);
	return ok;
}

/* Static candidates of block h (entered from its layout predecessor a). */
static void block_candidates(st_sched *s, xb_cfg *g, uint32_t h, const uint32_t *spec, size_t ns)
{
	sc_model *m = &s->m;
	uint32_t a = h - 1, f, c, L = m->bfirst[h];
	int32_t su[2];
	st_sass_block(m->k, a, &f, &c, su);
	const st_sass_insn *al = &m->in[m->blast[a]], *il = &m->in[L];
	if (su[0] != (int32_t)h || (su[1] >= 0 && su[1] != (int32_t)h) || m->blast[a] + 1 != L)
		return;
	if (al->cls == ST_CLASS_CONTROL || (al->flags & (ST_F_BRANCH | ST_F_PCREL)) || il->cls == ST_CLASS_CONTROL ||
	    il->cls == ST_CLASS_SYNC || (il->flags & (ST_F_BRANCH | ST_F_PCREL | ST_F_BARRIER | ST_F_FENCE)))
		return; /* X2 */
	for (size_t i = 0; i < m->n; i++)
		if (m->in[i].target == (int64_t)il->offset && !(m->in[i].flags & ST_F_BRANCH))
			return; /* a BSSY (or other non-branch reference) names L */
	memset(g->mark, 0, g->nb);
	int loop;
	if (!loop_ok(m, g, h, a, &loop))
		return;
	uint32_t seed = a;
	reach_back(g, &seed, 1, UINT32_MAX, 4);
	for (uint32_t x = L + 1; x < m->blast[h] && x - L <= XB_DEPTH && !(m->si[x].flags & SC_FIXED); x++) {
		if (!movable(m, x, spec, ns) || (loop && !invariant(m, g, h, x)) || !outside_ok(m, g, x, a))
			continue;
		int big = L - m->bfirst[a] > XB_AWIN, bad = 0;
		for (uint32_t v = m->bfirst[a]; big && v <= m->blast[a] && !bad; v++)
			bad = (m->si[v].flags & SC_VARLAT) && sc_insns_touch(&m->in[v], &m->in[x]);
		if (bad)
			continue; /* X6 reads only a window of a large A */
		/* xlin: producers outside A that reach it (and A's own when A lies on a cycle: their
		 * path round it passes A's start) */
		int lin = 0, cyc = (g->mark[h] & 4) != 0;
		for (uint32_t p = 0; p < m->n; p++) {
			uint32_t pb = m->si[p].block;
			if (p == x || !(g->mark[pb] & 4) || (pb == a && !cyc))
				continue;
			int l = sc_latency(m, p, x, NULL, 0);
			lin = l > lin ? l : lin;
		}
		s->xa[x] = a + 1;
		s->xlin[x] = (uint8_t)(lin > SC_LIMIT ? SC_LIMIT : lin);
	}
}

st_status sc_xblock_prepare(st_sched *s, st_error *err)
{
	sc_model *m = &s->m;
	size_t n = m->n, nb = st_sass_block_count(m->k), ns = 0;
	xb_cfg g = {0};
	s->xa = calloc(n ? n : 1, sizeof *s->xa);
	s->xlin = calloc(n ? n : 1, 1);
	s->xfroz = calloc(nb ? nb : 1, 1);
	s->xsave = calloc(n ? n : 1, sizeof *s->xsave);
	uint32_t *spec = malloc((n ? n : 1) * sizeof *spec);
	st_status rc = s->xa && s->xlin && s->xfroz && s->xsave && spec && !cfg_build(m, &g) ? ST_OK
		: st_error_set(err, ST_ENOMEM, "sched: out of memory");
	for (size_t i = 0; !rc && i < n; i++)
		if ((m->si[i].flags & SC_SPECIAL) || m->in[i].cls == ST_CLASS_TENSOR)
			spec[ns++] = (uint32_t)i;
	for (uint32_t h = 1; !rc && h < nb; h++)
		block_candidates(s, &g, h, spec, ns);
	free(spec);
	cfg_free(&g);
	return rc;
}

static st_status illegal(st_error *err, const st_sched *s, uint32_t j, const char *fmt, const char *why)
{
	const st_sass_insn *x = &s->m.in[s->at[j]];
	return st_error_set(err, ST_EILLEGAL, "xblock 0x%x (%s): %s%s", 16 * j, x->opcode, fmt, why ? why : "");
}

/* X4 and X6 over the window of A before X's new place t (slots [lo, t)). */
static st_status check_into(const st_sched *s, uint32_t j, uint32_t t, uint32_t a, uint32_t *rlo, st_error *err)
{
	sc_model *m = (sc_model *)&s->m;
	uint32_t X = s->at[j], lo = t - m->bfirst[a] > XB_AWIN ? t - XB_AWIN : m->bfirst[a];
	uint8_t xw = s->ctrl[X].wait, wacc = xw;
	int cyc = 0;
	char why[200];
	*rlo = lo;
	for (uint32_t q = t; q-- > lo;) {
		uint32_t P = s->at[q];
		cyc += s->ctrl[P].stall;
		int l = sc_latency(m, P, X, NULL, 0);
		if (l > 0 && cyc < l) {
			snprintf(why, sizeof why, "%s at 0x%x would be %d cycles before it, needs %d", m->in[P].opcode, 16 * q, cyc, l);
			return illegal(err, s, j, "", why);
		}
		if ((sets(s->ctrl[P]) & xw) && cyc < 2)
			return illegal(err, s, j, "set-to-wait under 2 cycles at the new place", NULL);
		if ((m->si[P].flags & SC_VARLAT) && sc_insns_touch(&m->in[P], &m->in[X])) {
			uint8_t need = sets(s->ctrl[P]);
			if (!need || (need & m->counted_sbs) || (need & wacc) != need) {
				snprintf(why, sizeof why, "%s at 0x%x touches its registers and is not waited on before it", m->in[P].opcode,
					 16 * q);
				return illegal(err, s, j, "", why);
			}
		}
		wacc |= s->ctrl[P].wait;
	}
	if (cyc < s->xlin[X] || (xw && cyc < 2)) {
		snprintf(why, sizeof why, "%d cycles from the start of the block before, needs %u", cyc, s->xlin[X]);
		return illegal(err, s, j, "", why);
	}
	return ST_OK;
}

/* X5: H after X's new place, in the new order, until 30 cycles. */
static st_status check_out(const st_sched *s, uint32_t j, uint32_t t, uint32_t h, uint32_t *rhi, st_error *err)
{
	sc_model *m = (sc_model *)&s->m;
	uint32_t X = s->at[j];
	int cyc = s->ctrl[X].stall;
	char why[200];
	for (uint32_t q = t, k = 0; cyc < SC_LIMIT; q++, k++) {
		if (q == j)
			continue;
		if (q > m->blast[h] || k > XB_HWIN)
			return illegal(err, s, j, "its block does not keep 30 cycles after the new place", NULL);
		*rhi = q;
		uint32_t Q = s->at[q];
		int l = sc_latency(m, X, Q, NULL, 0);
		if (l > 0 && cyc < l) {
			snprintf(why, sizeof why, "%s at 0x%x would be %d cycles after it, needs %d", m->in[Q].opcode, 16 * q, cyc, l);
			return illegal(err, s, j, "", why);
		}
		cyc += s->ctrl[Q].stall + (q + 1 == j ? s->ctrl[X].stall : 0);
	}
	return ST_OK;
}

/* X5, the lasting part: what keeps X's consumers far enough once H moves again (X8).  A consumer
 * C in H keeps t(C) >= min(orig_t(C), lin(C)) (rule 8, C's original facts: X7 kept its distance
 * from L), X keeps its stall (never lowered), so X's stall plus that bound must cover the latency;
 * beyond H, L's end rule (lout raised to the limit minus X's stall by the move) keeps H at least
 * that long, which needs H's original length from L to be that long.  Reads only static facts. */
static st_status check_lasting(const st_sched *s, uint32_t j, uint32_t t, uint32_t h, st_error *err)
{
	sc_model *m = (sc_model *)&s->m;
	uint32_t X = s->at[j], L = s->at[t];
	int st = s->ctrl[X].stall;
	char why[200];
	if (m->si[L].orig_end + st < SC_LIMIT) {
		snprintf(why, sizeof why, "its block is %d cycles long originally, under %d after it", m->si[L].orig_end,
			 SC_LIMIT - st);
		return illegal(err, s, j, "", why);
	}
	for (uint32_t q = t; q <= m->blast[h]; q++) {
		uint32_t C = s->at[q];
		int keep = m->si[C].orig_t < m->si[C].lin ? m->si[C].orig_t : m->si[C].lin;
		int l = C == X || keep >= SC_LIMIT ? SC_LAT_NONE : sc_latency(m, X, C, NULL, 0);
		if (l > 0 && st + keep < l) {
			snprintf(why, sizeof why, "%s at 0x%x may come %d cycles after it once its block moves, needs %d",
				 m->in[C].opcode, 16 * q, st + keep, l);
			return illegal(err, s, j, "", why);
		}
	}
	return ST_OK;
}

/* X7: the control edits (new slots: X at t, the one before its old slot at j, the one after at
 * j + 1, A's last at t - 1). */
static st_status fixup(const st_sched *s, uint32_t j, uint32_t t, sc_fix *fix, st_error *err)
{
	uint32_t X = s->at[j], pv = s->at[j - 1], nx = s->at[j + 1], al = s->at[t - 1];
	st_ctrl x = s->ctrl[X], p = s->ctrl[pv], nc = s->ctrl[nx], ac = s->ctrl[al];
	st_ctrl x2 = x, p2 = p, n2 = nc, a2 = ac;
	unsigned st = (unsigned)p.stall + x.stall;
	if (st > 15)
		return illegal(err, s, j, "the instruction before it would need a stall above 15", NULL);
	p2.stall = (uint8_t)st;
	if (p.yield) {
		p2.reuse = 0;
		if (st > 11) {
			if (s->m.si[pv].flags & SC_NO_YIELD)
				return illegal(err, s, j, "the stall before it needs the yield bit cleared, which is left alone there", NULL);
			p2.yield = 0;
		}
	}
	if (x.yield)
		x2.reuse = 0;
	if (ac.yield)
		a2.reuse = 0;
	n2.wait |= x.wait;
	if (st_ctrl_check(p2, NULL))
		return illegal(err, s, j, "the stall before it cannot be encoded", NULL);
	if (!fix)
		return ST_OK;
	fix->n = 0;
	st_ctrl ol[4] = {x, p, nc, ac}, nw[4] = {x2, p2, n2, a2};
	uint32_t idx[4] = {X, pv, nx, al}, sl[4] = {t, j, j + 1, t - 1};
	for (int i = 0; i < 4; i++)
		if (memcmp(&ol[i], &nw[i], sizeof ol[i]))
			fix->chg[fix->n++] = (sc_change){idx[i], sl[i], ol[i], nw[i]};
	return ST_OK;
}

uint32_t sc_xblock_target(const st_sched *s, uint32_t slot)
{
	return s->m.bfirst[s->m.si[s->at[slot]].block];
}

st_status sc_check_xblock(const st_sched *s, st_move mv, sc_fix *fix, uint32_t *rlo, uint32_t *rhi, st_error *err)
{
	sc_model *m = (sc_model *)&s->m;
	uint32_t j = mv.slot, X = s->at[j], h = m->si[X].block, t = m->bfirst[h], lo = j, hi = j;
	char why[200];
	st_status rc = ST_OK;
	if (rlo)
		*rlo = j;
	if (rhi)
		*rhi = j;
	if (!(m->flags & ST_SCHED_XBLOCK) || !s->xa)
		return illegal(err, s, j, "the xblock family is not enabled", NULL);
	if (!s->xa[X])
		return illegal(err, s, j, "not a candidate (rules X1, X2, loop invariance, liveness, waits outside)", NULL);
	uint32_t a = s->xa[X] - 1;
	if (sc_xblock_moved(s, X))
		return illegal(err, s, j, "it already moved to the end of the block before", NULL);
	if (s->xfroz[a] || s->xfroz[h])
		return illegal(err, s, j, "its block or the one before already took an xblock move", NULL);
	if (j <= t || j - t > XB_DEPTH || j >= m->blast[h])
		return illegal(err, s, j, "not within the first slots of its block (or its last)", NULL);
	for (uint32_t q = t; q < j; q++) /* L included */
		if ((q > t && (m->si[s->at[q]].flags & SC_FIXED)) || sc_ordered(m, s->at[q], X, why, sizeof why))
			return illegal(err, s, j, "it depends on what it would pass: ", why);
	if (!(rc = check_into(s, j, t, a, &lo, err)) && !(rc = check_out(s, j, t, h, &hi, err)) &&
	    !(rc = check_lasting(s, j, t, h, err)))
		rc = fixup(s, j, t, fix, err);
	if (rlo)
		*rlo = lo < j ? lo : j;
	if (rhi)
		*rhi = hi > j + 1 ? hi : j + 1;
	return rc;
}

/* X8: the model's block facts after the move describe the new layout.  X joins A (A ends one
 * slot later, H starts one later); X's facts: no original distance to anything (orig_t = the
 * limit, pairs with X take the full table: sc_xblock_moved), lin = the latency into it from
 * anywhere before A's end (xlin, 2 with a wait), orig_end = its stall now and lout = the limit
 * (its stall is never lowered: every consumer in H was checked against it, X5); L's lout at
 * least the limit minus X's stall (H keeps the cycles that put X's consumers beyond H 30 cycles
 * away).  Every other fact is the original's and stays true: X7 keeps every distance in H, and
 * A only grew. */
static void facts(st_sched *s, uint32_t X, uint32_t L, int dir)
{
	sc_model *m = &s->m;
	uint32_t h = m->si[L].block, a = h - 1;
	sc_info *x = &m->si[X], *l = &m->si[L];
	if (dir < 0) {
		*x = s->xsave[X].x;
		l->lout = s->xsave[X].lout_l;
		m->bfirst[h]--;
		m->blast[a]--;
		return;
	}
	s->xsave[X].x = *x;
	s->xsave[X].lout_l = l->lout;
	unsigned st = s->ctrl[X].stall, lin = s->xlin[X];
	x->block = a;
	x->orig_t = SC_LIMIT;
	x->orig_end = (int32_t)st;
	x->lin = (uint8_t)(s->ctrl[X].wait && lin < 2 ? 2 : lin);
	x->lout = SC_LIMIT;
	if (l->lout < SC_LIMIT - st)
		l->lout = (uint8_t)(SC_LIMIT - st);
	m->bfirst[h]++;
	m->blast[a]++;
}

/* Apply (dir 1) or undo (dir -1) the rotation: X from slot j to t (the others shift down). */
void sc_xblock_rotate(st_sched *s, uint32_t j, uint32_t t, int dir)
{
	if (dir > 0) {
		uint32_t X = s->at[j];
		memmove(&s->at[t + 1], &s->at[t], (j - t) * sizeof *s->at);
		s->at[t] = X;
	} else {
		facts(s, s->at[t], s->at[t + 1], -1);
		uint32_t X = s->at[t];
		memmove(&s->at[t], &s->at[t + 1], (j - t) * sizeof *s->at);
		s->at[j] = X;
	}
	for (uint32_t q = t; q <= j; q++)
		s->pos[s->at[q]] = q;
	uint32_t L = dir > 0 ? s->at[t + 1] : s->at[t], h = s->m.si[L].block, a = h - 1;
	if (dir > 0)
		facts(s, s->at[t], L, 1);
	s->xfroz[a] = (uint8_t)(s->xfroz[a] + dir);
	s->xfroz[h] = (uint8_t)(s->xfroz[h] + dir);
}

int sc_xblock_frozen(const st_sched *s, uint32_t slot)
{
	return s->xfroz && s->xfroz[s->m.si[s->at[slot]].block];
}

int sc_xblock_moved(const st_sched *s, uint32_t i)
{
	return s->xa && s->xa[i] && s->m.si[i].block + 1 == s->xa[i];
}
