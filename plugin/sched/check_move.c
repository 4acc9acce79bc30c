/* Legality of one move in the current state, and the control edits a swap needs (docs/sched.md).
 * Every walk stops after SC_LIMIT cycles or SC_WINDOW instructions, and records the slots it
 * read, so that cached results can be refreshed locally after a move. */
#include "sched_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct walk {
	uint32_t lo, hi; /* slots read */
} walk;

static void touch(walk *w, uint32_t slot)
{
	if (slot < w->lo)
		w->lo = slot;
	if (slot > w->hi)
		w->hi = slot;
}

static uint8_t sets_of(st_ctrl c)
{
	return (uint8_t)((c.wbar < 6 ? 1u << c.wbar : 0) | (c.rbar < 6 ? 1u << c.rbar : 0));
}

static int first_bit(unsigned v)
{
	int k = 0;
	while (v && !(v >> k & 1))
		k++;
	return k;
}

static st_status illegal(st_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static st_status illegal(st_error *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		char buf[ST_ERROR_MSG_MAX];
		vsnprintf(buf, sizeof buf, fmt, ap);
		va_end(ap);
		st_error_set(err, ST_EILLEGAL, "%s", buf);
	}
	return ST_EILLEGAL;
}

static st_ctrl cur(const st_sched *s, uint32_t slot)
{
	return s->ctrl[s->at[slot]];
}

/* Required issue distance between producer p and consumer q (original indices, p issued first):
 * the table latency (or a barrier's distance to a later memory access, rule 9), but never more than
 * the original schedule had (ptxas is trusted there). */
static int required(const st_sched *s, uint32_t p, uint32_t q, char *what, size_t n)
{
	int l = sc_latency((sc_model *)&s->m, p, q, what, n);
	int sy = sc_sync_latency(&s->m, p, q);
	if (sy > l) {
		l = sy;
		if (what && n)
			snprintf(what, n, "the barrier distance (%s -> %s)", s->m.in[p].opcode, s->m.in[q].opcode);
	}
	if (l <= 0)
		return l;
	const sc_info *a = &s->m.si[p], *b = &s->m.si[q];
	if (a->block == b->block && !sc_xblock_moved(s, p) && !sc_xblock_moved(s, q)) {
		int32_t od = b->orig_t - a->orig_t;
		if (od >= 0 && od < l)
			l = od;
	}
	return l;
}

/* Set-to-wait: q waits (own mask `wait`, or as a DEPBAR) on an SB that p sets: at least 2 cycles,
 * or what the original had if less. */
static int sb_required(const st_sched *s, uint32_t p, uint32_t q, uint8_t wait, int *sb)
{
	uint8_t hit = sets_of(s->ctrl[p]) & (uint8_t)(wait | s->m.si[q].depbar);
	if (!hit)
		return -1;
	*sb = first_bit(hit);
	int l = 2;
	const sc_info *a = &s->m.si[p], *b = &s->m.si[q];
	if (a->block == b->block && !sc_xblock_moved(s, p) && !sc_xblock_moved(s, q)) {
		int32_t od = b->orig_t - a->orig_t;
		if (od >= 0 && od < l)
			l = od;
	}
	return l;
}

/* ---- swap ----------------------------------------------------------------------------------- */
/* Moved waits (docs/sched.md "Later waits"; the checker's check_waits): an instruction X whose
 * original wait on SB k a wait move dropped is covered, in the checker's reading, by the nearest
 * earlier wait on k in its block with no setter of k and no variable-latency instruction between
 * (or by a later wait).  A swap may not come between X and that earlier wait: (1) X moving down
 * past a setter of k or a variable-latency instruction that does not wait on k itself (one that
 * does becomes X's cover); (2) a setter of k or a variable-latency
 * instruction moving down past the instruction with the wait, when an X follows it with nothing
 * that ends the checker's upward scan between.  Conservative: refused even where a later wait
 * would cover X.  Found by the CPU dry run with group sinks (matmul 2048, an IADD3 whose SB3 wait
 * had moved, carried down past an LDGSTS). */
static st_status breaks_cover(const st_sched *s, uint32_t i, walk *w, st_error *err, const char *pre)
{
	const sc_model *m = &s->m;
	uint32_t A = s->at[i], B = s->at[i + 1], last = m->blast[m->si[A].block];
	int va = (m->in[A].flags & ST_F_VARLAT) != 0, vb = (m->in[B].flags & ST_F_VARLAT) != 0;
	unsigned miss_a = m->in[A].ctrl.wait & ~s->ctrl[A].wait & 0x3fu;
	for (int k = 0; k < 6; k++) {
		unsigned bit = 1u << k;
		if ((miss_a & bit) && !(s->ctrl[B].wait & bit) && (vb || (sets_of(s->ctrl[B]) & bit)))
			return illegal(err, "%s carries %s, whose wait on SB%d was moved, past %s: the earlier wait that covers it "
				       "would no longer reach it", pre, m->in[A].opcode, k, m->in[B].opcode);
		if (!(s->ctrl[B].wait & bit) || !(va || (sets_of(s->ctrl[A]) & bit)))
			continue;
		for (uint32_t q = i + 2; q <= last; q++) {
			uint32_t Y = s->at[q];
			touch(w, q);
			if (q >= i + 2 + SC_WINDOW || ((m->in[Y].ctrl.wait & ~s->ctrl[Y].wait) & bit))
				return illegal(err, "%s puts %s between the wait on SB%d of %s and %s at 0x%x, whose own wait on it "
					       "was moved", pre, m->in[A].opcode, k, m->in[B].opcode, m->in[Y].opcode, 16 * q);
			if ((s->ctrl[Y].wait & bit) || (sets_of(s->ctrl[Y]) & bit) || (m->in[Y].flags & ST_F_VARLAT))
				break;
		}
	}
	return ST_OK;
}

static st_status check_swap(const st_sched *s, uint32_t i, sc_fix *fix, walk *w, st_error *err)
{
	const sc_model *m = &s->m;
	if ((size_t)i + 1 >= m->n)
		return st_error_set(err, ST_EINVAL, "swap 0x%x: no instruction after it", 16 * i);
	uint32_t A = s->at[i], B = s->at[i + 1];
	const st_sass_insn *a = &m->in[A], *b = &m->in[B];
	const sc_info *ia = &m->si[A], *ib = &m->si[B];
	touch(w, i);
	touch(w, i + 1);
	char pre[64] = "";
	if (err)
		snprintf(pre, sizeof pre, "swap 0x%x/0x%x", 16 * i, 16 * (i + 1));
	if (ia->block != ib->block)
		return illegal(err, "%s crosses the block boundary at 0x%x (%s -> %s)", pre, 16 * (i + 1), a->opcode, b->opcode);
	if (i == m->bfirst[ia->block])
		return illegal(err, "%s moves the first instruction of a block (%s at 0x%x, a branch target or fall-through entry)",
			       pre, a->opcode, 16 * i);
	if (sc_xblock_moved(s, A) || sc_xblock_moved(s, B))
		return illegal(err, "%s moves %s, which an xblock move put at the end of its block (it stays there)", pre,
			       sc_xblock_moved(s, A) ? a->opcode : b->opcode);
	if (ia->flags & SC_FIXED)
		return illegal(err, "%s moves %s, a fixed point (control flow, barrier, fence, code reference or unknown)", pre,
			       a->opcode);
	if (ib->flags & SC_FIXED)
		return illegal(err, "%s moves %s, a fixed point (control flow, barrier, fence, code reference or unknown)", pre,
			       b->opcode);
	if (!(m->flags & ST_SCHED_WIDE) && !((ia->flags | ib->flags) & SC_PROTO))
		return illegal(err, "%s moves neither a load, a store nor an async copy (%s, %s): allowed only in the wide setting",
			       pre, a->opcode, b->opcode);
	char why[192] = "";
	if (sc_ordered((sc_model *)m, A, B, err ? why : NULL, sizeof why))
		return illegal(err, "%s breaks %s", pre, why);
	st_ctrl ca = s->ctrl[A], cb = s->ctrl[B];
	if (cb.wait & sets_of(ca))
		return illegal(err, "%s breaks a scoreboard wait: %s waits on SB%d, which %s sets", pre, b->opcode,
			       first_bit(cb.wait & sets_of(ca)), a->opcode);
	if (ca.wait & sets_of(cb))
		return illegal(err, "%s breaks a scoreboard wait: %s sets SB%d, which %s waits on", pre, b->opcode,
			       first_bit(ca.wait & sets_of(cb)), a->opcode);
	st_status rc = breaks_cover(s, i, w, err, pre);
	if (rc)
		return rc;
	uint32_t first = m->bfirst[ia->block], last = m->blast[ia->block];
	int need_pre = 0, need_a = 0;
	char wpre[320] = "", wa[320] = "";
	/* (a) producers before slot i now meet B earlier by stall(A); (d) B's distance to the block start */
	int d = 0;
	uint32_t steps = 0;
	int head_need = m->si[B].orig_t < m->si[B].lin ? m->si[B].orig_t : m->si[B].lin;
	for (uint32_t j = i; j-- > first;) {
		touch(w, j);
		d += cur(s, j).stall;
		uint32_t P = s->at[j];
		char what[160];
		int r = required(s, P, B, err ? what : NULL, sizeof what);
		if (r > d && r - d > need_pre) {
			need_pre = r - d;
			if (err)
				snprintf(wpre, sizeof wpre, "%s, %d cycles apart, needs %d", what, d, r);
		}
		int sb;
		/* B's waits after the fix-up, A's included: A may have met P's set-to-wait only because the
		 * original had A under 2 cycles after P (req = that distance), which B's own pair need not
		 * (the spill fixture: a wait copied up from an LEA 1 cycle after an STL's read SB) */
		r = sb_required(s, P, B, (uint8_t)(cb.wait | ca.wait), &sb);
		if (r > d && r - d > need_pre) {
			need_pre = r - d;
			if (err)
				snprintf(wpre, sizeof wpre, "set-to-wait on SB%d (%s -> %s), %d cycles apart, needs %d", sb,
					 m->in[P].opcode, b->opcode, d, r);
		}
		if (j == first) {
			if (d < head_need && head_need - d > need_pre) {
				need_pre = head_need - d;
				snprintf(wpre, sizeof wpre,
					 "the distance from the block start to %s (%d cycles, needs %d for producers in other blocks)",
					 b->opcode, d, head_need);
			}
			break;
		}
		if (d >= SC_LIMIT)
			break;
		if (++steps >= SC_WINDOW)
			return illegal(err, "%s: more than %d instructions within %d cycles before it (zero stalls); refused",
				       pre, SC_WINDOW, SC_LIMIT);
	}
	/* (b) consumers after slot i+1 now meet A earlier by stall(B); (c) A's distance to the block end */
	d = ca.stall;
	steps = 0;
	int end_need = m->si[A].orig_end < m->si[A].lout ? m->si[A].orig_end : m->si[A].lout;
	uint32_t j = i + 2;
	for (; j <= last && d < SC_LIMIT; j++) {
		touch(w, j);
		uint32_t C = s->at[j];
		char what[160];
		int r = required(s, A, C, err ? what : NULL, sizeof what);
		if (r > d && r - d > need_a) {
			need_a = r - d;
			if (err)
				snprintf(wa, sizeof wa, "%s, %d cycles apart, needs %d", what, d, r);
		}
		int sb;
		r = sb_required(s, A, C, s->ctrl[C].wait, &sb);
		if (r > d && r - d > need_a) {
			need_a = r - d;
			if (err)
				snprintf(wa, sizeof wa, "set-to-wait on SB%d (%s -> %s), %d cycles apart, needs %d", sb,
					 a->opcode, m->in[C].opcode, d, r);
		}
		d += s->ctrl[C].stall;
		if (++steps >= SC_WINDOW && d < SC_LIMIT)
			return illegal(err, "%s: more than %d instructions within %d cycles after it (zero stalls); refused",
				       pre, SC_WINDOW, SC_LIMIT);
	}
	if (j > last && d < end_need && end_need - d > need_a) { /* d is A's new distance to the block end */
		need_a = end_need - d;
		snprintf(wa, sizeof wa, "the distance from %s to the block end (%d cycles, needs %d for consumers in other blocks)",
			 a->opcode, d, end_need);
	}
	uint32_t X = s->at[i - 1];
	st_ctrl cx = s->ctrl[X];
	if (cx.stall + need_pre > 15)
		return illegal(err, "%s breaks %s: stall %d at 0x%x would be needed", pre, wpre, cx.stall + need_pre, 16 * (i - 1));
	if (ca.stall + need_a > 15)
		return illegal(err, "%s breaks %s: stall %d on %s would be needed", pre, wa, ca.stall + need_a, a->opcode);
	if (!fix)
		return ST_OK;
	/* fix-ups: B inherits A's waits; stalls only rise; reuse flags around the pair are cleared */
	st_ctrl nx = cx, na = ca, nb = cb;
	nb.wait |= ca.wait;
	st_ctrl *all[3] = {&nx, &nb, &na};
	for (int t = 0; t < 3; t++)
		if (all[t]->yield && all[t]->stall >= 1 && all[t]->stall <= 11)
			all[t]->reuse = 0;
	nx.stall = (uint8_t)(nx.stall + need_pre);
	na.stall = (uint8_t)(na.stall + need_a);
	for (int t = 0; t < 3; t++)
		if (all[t]->stall > 11 && all[t]->yield) {
			all[t]->yield = 0;
			all[t]->reuse = 0;
		}
	fix->n = 0;
	uint32_t idx[3] = {X, B, A}, slot[3] = {i - 1, i, i + 1};
	st_ctrl old[3] = {cx, cb, ca};
	for (int t = 0; t < 3; t++)
		if (memcmp(&old[t], all[t], sizeof old[t]))
			fix->chg[fix->n++] = (sc_change){idx[t], slot[t], old[t], *all[t]};
	return ST_OK;
}

/* ---- lowering a stall by delta ------------------------------------------------------------ */
static st_status check_stall(const st_sched *s, uint32_t j, int delta, walk *w, st_error *err)
{
	const sc_model *m = &s->m;
	uint32_t X = s->at[j];
	const st_sass_insn *x = &m->in[X];
	const sc_info *ix = &m->si[X];
	st_ctrl c = s->ctrl[X];
	touch(w, j);
	char pre[96] = "";
	if (err)
		snprintf(pre, sizeof pre, "stall of 0x%x (%s) %u -> %d", 16 * j, x->opcode, c.stall, c.stall - delta);
	if (sets_of(c))
		return illegal(err, "%s: it sets SB%d; stalls on scoreboard-setting instructions are never lowered", pre,
			       first_bit(sets_of(c)));
	if (!(ix->flags & SC_ALU))
		return illegal(err, "%s: only fixed-latency math instructions have their stall lowered", pre);
	if (c.stall - delta < 1)
		return illegal(err, "%s: stalls are not lowered below 1", pre);
	uint32_t first = m->bfirst[ix->block], last = m->blast[ix->block];
	const int horizon = SC_LIMIT + delta;
	/* E: cycles from slot j+1 to the block end (exact when it ends below the horizon) */
	int E = 0;
	for (uint32_t q = j + 1, k = 0; q <= last && E < horizon && k < SC_WINDOW; q++, k++) {
		touch(w, q);
		E += s->ctrl[s->at[q]].stall;
	}
	/* H: cycles from the block start to slot j+1 (the same) */
	int H = 0;
	for (uint32_t p = j + 1, k = 0; p-- > first && H < horizon && k < SC_WINDOW; k++) {
		touch(w, p);
		H += s->ctrl[s->at[p]].stall;
	}
	/* every pair P <= j < C loses delta cycles */
	int dp = 0; /* cycles from P to slot j+1 */
	uint32_t steps = 0;
	for (uint32_t p = j + 1; p-- > first;) {
		touch(w, p);
		uint32_t P = s->at[p];
		dp += s->ctrl[P].stall;
		int dc = 0;
		uint32_t csteps = 0;
		for (uint32_t q = j + 1; q <= last && dp + dc - delta < SC_LIMIT; q++) {
			touch(w, q);
			uint32_t C = s->at[q];
			char what[160];
			int r = required(s, P, C, err ? what : NULL, sizeof what);
			if (r > dp + dc - delta)
				return illegal(err, "%s breaks %s: %d cycles, needs %d", pre, what, dp + dc - delta, r);
			int sb;
			r = sb_required(s, P, C, s->ctrl[C].wait, &sb);
			if (r > dp + dc - delta)
				return illegal(err, "%s breaks set-to-wait on SB%d (%s -> %s): %d cycles, needs %d", pre, sb,
					       m->in[P].opcode, m->in[C].opcode, dp + dc - delta, r);
			dc += s->ctrl[C].stall;
			if (++csteps >= SC_WINDOW && dp + dc - delta < SC_LIMIT)
				return illegal(err, "%s: more than %d instructions within %d cycles (zero stalls); refused", pre,
					       SC_WINDOW, SC_LIMIT);
		}
		int need = m->si[P].orig_end < m->si[P].lout ? m->si[P].orig_end : m->si[P].lout;
		if (dp + E - delta < need)
			return illegal(err, "%s: %s would be %d cycles from the block end, needs %d (consumers in other blocks)", pre,
				       m->in[P].opcode, dp + E - delta, need);
		if (dp - delta >= SC_LIMIT)
			break;
		if (++steps >= SC_WINDOW)
			return illegal(err, "%s: more than %d instructions within %d cycles (zero stalls); refused", pre, SC_WINDOW,
				       SC_LIMIT);
	}
	/* instructions after j come closer to the block start */
	int dc = 0;
	for (uint32_t q = j + 1, k = 0; q <= last && H + dc - delta < SC_LIMIT; q++, k++) {
		touch(w, q);
		uint32_t C = s->at[q];
		int need = m->si[C].orig_t < m->si[C].lin ? m->si[C].orig_t : m->si[C].lin;
		if (H + dc - delta < need)
			return illegal(err, "%s: %s would be %d cycles from the block start, needs %d (producers in other blocks)",
				       pre, m->in[C].opcode, H + dc - delta, need);
		dc += s->ctrl[C].stall;
		if (k + 1 >= SC_WINDOW)
			return illegal(err, "%s: more than %d instructions within %d cycles (zero stalls); refused", pre, SC_WINDOW,
				       SC_LIMIT);
	}
	return ST_OK;
}

/* ---- reuse flag ------------------------------------------------------------------------------- */
static const st_sass_reg *slot_reg(const st_sass_insn *x, int slot)
{
	const st_sass_reg *r = NULL;
	for (unsigned u = 0; u < x->nuses; u++)
		if (x->uses[u].slot == slot) {
			if (r)
				return NULL; /* two runs in one slot (an address): not a plain operand */
			r = &x->uses[u];
		}
	return r && r->file == ST_RF_R ? r : NULL;
}

static st_status check_reuse(const st_sched *s, uint32_t j, unsigned f, walk *w, st_error *err)
{
	const sc_model *m = &s->m;
	touch(w, j);
	if (f > 2)
		return st_error_set(err, ST_EINVAL, "reuse flag %u: expected 0 (a), 1 (b) or 2 (c)", f);
	uint32_t X = s->at[j];
	const st_sass_insn *x = &m->in[X];
	st_ctrl c = s->ctrl[X];
	if (!(c.yield && c.stall >= 1 && c.stall <= 11))
		return illegal(err, "reuse %c on 0x%x (%s): the encoding needs yield set and stall 1..11", 'a' + f, 16 * j,
			       x->opcode);
	if (c.reuse >> f & 1)
		return illegal(err, "reuse %c on 0x%x (%s): already set", 'a' + f, 16 * j, x->opcode);
	if ((size_t)j + 1 >= m->n || m->si[s->at[j + 1]].block != m->si[X].block)
		return illegal(err, "reuse %c on 0x%x (%s): no next instruction in the block", 'a' + f, 16 * j, x->opcode);
	touch(w, j + 1);
	const st_sass_insn *y = &m->in[s->at[j + 1]];
	if (!(m->si[X].flags & SC_ALU) || !(m->si[s->at[j + 1]].flags & SC_ALU) || strchr(x->operands, '[') ||
	    strchr(y->operands, '['))
		return illegal(err, "reuse %c on 0x%x (%s): both it and the next instruction must be register-operand math", 'a' + f,
			       16 * j, x->opcode);
	const st_sass_reg *rx = slot_reg(x, ST_SLOT_A + (int)f), *ry = slot_reg(y, ST_SLOT_A + (int)f);
	if (!rx || !ry || rx->index != ry->index || rx->count != ry->count)
		return illegal(err, "reuse %c on 0x%x (%s): the next instruction (%s) does not read the same register in slot %c",
			       'a' + f, 16 * j, x->opcode, y->opcode, 'a' + f);
	for (unsigned d = 0; d < x->ndefs; d++)
		if (sc_regs_meet(&x->defs[d], rx))
			return illegal(err, "reuse %c on 0x%x (%s): it writes the register it would keep", 'a' + f, 16 * j, x->opcode);
	const char *unproven = !(m->si[X].reuse_ok >> f & 1) ? x->opcode : !(m->si[s->at[j + 1]].reuse_ok >> f & 1) ? y->opcode : NULL;
	if (unproven)
		return illegal(err, "reuse %c on 0x%x (%s): ptxas's code does not show that %s's reuse bit %c is the operand in slot %c",
			       'a' + f, 16 * j, x->opcode, unproven, 'a' + f, 'a' + f);
	return ST_OK;
}

/* ---- a full control-field edit (schedule replay) ----------------------------------------------- */
static st_status check_ctrl(const st_sched *s, uint32_t j, st_ctrl t, walk *w, st_error *err)
{
	st_status rc = st_ctrl_check(t, err);
	if (rc)
		return rc;
	touch(w, j);
	uint32_t X = s->at[j];
	const st_sass_insn *x = &s->m.in[X];
	st_ctrl c = s->ctrl[X];
	if (t.wbar != c.wbar || t.rbar != c.rbar)
		return illegal(err, "control edit of 0x%x (%s) changes its scoreboards (W%u R%u -> W%u R%u)", 16 * j, x->opcode,
			       c.wbar, c.rbar, t.wbar, t.rbar);
	if ((t.wait & c.wait) != c.wait)
		return illegal(err, "control edit of 0x%x (%s) drops waits (0x%x -> 0x%x)", 16 * j, x->opcode, c.wait, t.wait);
	int reuse_mode = c.yield && c.stall >= 1 && c.stall <= 11;
	if (!reuse_mode && c.reuse && t.reuse != c.reuse)
		return illegal(err, "control edit of 0x%x (%s) changes its batch bits", 16 * j, x->opcode);
	for (unsigned f = 0; f < 3; f++)
		if ((t.reuse >> f & 1) && !(c.reuse >> f & 1) && (rc = check_reuse(s, j, f, w, err)))
			return rc;
	if (t.stall < c.stall && (rc = check_stall(s, j, c.stall - t.stall, w, err)))
		return rc;
	return ST_OK;
}

st_status sc_check(const st_sched *s, st_move mv, sc_fix *fix, uint32_t *rlo, uint32_t *rhi, st_error *err)
{
	walk w = {UINT32_MAX, 0};
	st_status rc;
	if (fix)
		fix->n = 0;
	if (mv.slot >= s->m.n)
		return st_error_set(err, ST_EINVAL, "move at slot %u: the kernel has %zu slots", mv.slot, s->m.n);
	/* X8: after an xblock move its two blocks take swaps and control edits again (the model's block
	 * facts were moved with it); wait, sb and rename moves stay out (their static facts are not) */
	if ((mv.kind == ST_MOVE_WAIT || mv.kind == ST_MOVE_SB || mv.kind == ST_MOVE_RENAME) && sc_xblock_frozen(s, mv.slot))
		return st_error_set(err, ST_EILLEGAL, "move at 0x%x: its block took an xblock move (no wait, sb or rename move there)",
				    16 * mv.slot);
	if (mv.kind == ST_MOVE_XBLOCK) /* xblock.c */
		return sc_check_xblock(s, mv, fix, rlo, rhi, err);
	if (mv.kind == ST_MOVE_HOIST) /* a chain of swaps (hoist.c); its fix-ups are the swaps' own */
		return sc_check_hoist(s, mv, rlo, rhi, err);
	if (mv.kind == ST_MOVE_WAIT) /* wait.c */
		return sc_check_wait(s, mv, fix, rlo, rhi, err);
	if (mv.kind == ST_MOVE_SB) /* sb.c */
		return sc_check_sb(s, mv, fix, rlo, rhi, err);
	if (mv.kind == ST_MOVE_RENAME) /* rename.c: no fix-up but cleared reuse flags, made by its apply */
		return sc_check_rename(s, mv, rlo, rhi, err);
	uint32_t j = mv.slot, X = s->at[j];
	st_ctrl c = s->ctrl[X];
	switch (mv.kind) {
	case ST_MOVE_SWAP:
		rc = check_swap(s, j, fix, &w, err);
		break;
	case ST_MOVE_STALL:
		rc = check_stall(s, j, 1, &w, err);
		if (!rc && fix) {
			st_ctrl n = c;
			n.stall--;
			fix->chg[fix->n++] = (sc_change){X, j, c, n};
		}
		break;
	case ST_MOVE_YIELD: {
		touch(&w, j);
		st_ctrl n = c;
		n.yield ^= 1;
		if (n.yield == 0 && c.reuse)
			n.reuse = 0;
		if (s->m.si[X].flags & SC_NO_YIELD)
			rc = illegal(err, "yield of 0x%x (%s): left alone on control, barrier and batch instructions", 16 * j,
				     s->m.in[X].opcode);
		else if (n.yield && (n.stall < 1 || n.stall > 11))
			rc = illegal(err, "yield of 0x%x (%s): stall %u cannot be encoded with the yield bit set", 16 * j,
				     s->m.in[X].opcode, n.stall);
		else
			rc = ST_OK;
		if (!rc && fix)
			fix->chg[fix->n++] = (sc_change){X, j, c, n};
		break;
	}
	case ST_MOVE_REUSE:
		rc = check_reuse(s, j, mv.arg, &w, err);
		if (!rc && fix) {
			st_ctrl n = c;
			n.reuse = (uint8_t)(n.reuse | 1u << mv.arg);
			fix->chg[fix->n++] = (sc_change){X, j, c, n};
		}
		break;
	case ST_MOVE_CTRL:
		rc = check_ctrl(s, j, mv.ctrl, &w, err);
		if (!rc && fix && memcmp(&c, &mv.ctrl, sizeof c))
			fix->chg[fix->n++] = (sc_change){X, j, c, mv.ctrl};
		break;
	default:
		rc = st_error_set(err, ST_EINVAL, "unknown move kind %u", mv.kind);
	}
	if (rlo)
		*rlo = w.lo == UINT32_MAX ? j : w.lo;
	if (rhi)
		*rhi = w.hi;
	return rc;
}
