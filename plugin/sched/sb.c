/* Scoreboard re-assignment (ST_MOVE_SB, family "sb", docs/sched.md "Scoreboard re-assignment"):
 * a variable-latency producer P that sets SB j (write or read scoreboard) gets another SB k, and
 * the first wait on j after P in P's block also waits on k.  Then P's wait can move on its own
 * (the wait family) and waits on j no longer wait for P.  Invariants (S1-S6 in docs/sched.md):
 *  S1 neither j nor k is reserved: no DEPBAR names it (counted or not: a wait that counts setters
 *     in order is never changed), and SB0 in a kernel with async copies, LDGDEPBAR or ARRIVES.
 *  S2 P is variable-latency, not a fixed point (barriers, DEPBAR, LDGDEPBAR, WARPGROUP.*, GMMA,
 *     TMA), not special, tensor, unknown or an async copy (LDGSTS), and sets j in the named field.
 *  S3 Y, the first instruction after P in P's block (current order, within SC_WINDOW slots) that
 *     waits on j, exists; the move is refused otherwise (P's wait on j lies in another block).
 *  S4 the move changes P's field j -> k and adds k to Y's wait mask, nothing else.  P's completion
 *     is awaited exactly where it was (the wait on j at Y covered every setter of j before it, P
 *     included; later waits on j found P complete), order, stalls and the set-to-wait distance
 *     P -> Y are unchanged.  Any other wait on k may now also wait for P: only slower, never
 *     wrong (k is not counted, S1).  P is never outstanding at a block boundary (Y is in its
 *     block), so what the wait family computed as outstanding at block entries stays true.
 *  S5 legal for any k != j that S1 allows (schedule replay); the list offers one move per field:
 *     the lowest k that no instruction of P's block sets or waits on from SC_WINDOW slots before
 *     P up to Y (locally idle, so P gets an SB of its own there; every such k gives the same
 *     waits).  The read range is those slots, so the move cache stays local.
 *  S6 the rest of the model reads P's SBs from the current state (swap rule 5: P never crosses a
 *     wait on k; the stall rule; the wait family's guards).
 *  S7 set-to-wait (swap rule 7) holds with k: every wait on k from P up to Y is far enough from P,
 *     and Y from every other setter of k (s2w_short).  Listed moves always pass it (k is locally
 *     idle); a schedule naming another k may not (session 8). */
#include "sched_internal.h"

#include <string.h>

static uint8_t sets_of(st_ctrl c)
{
	return (uint8_t)((c.wbar < 6 ? 1u << c.wbar : 0) | (c.rbar < 6 ? 1u << c.rbar : 0));
}

void sc_sb_prepare(st_sched *s)
{
	const sc_model *m = &s->m;
	uint8_t res = m->counted_sbs;
	for (size_t i = 0; i < m->n; i++) {
		const st_sass_insn *x = &m->in[i];
		res |= m->si[i].depbar;
		if ((m->si[i].flags & SC_ASYNC_COPY) || !strncmp(x->opcode, "LDGDEPBAR", 9) || strstr(x->opcode, "ARRIVES") ||
		    strstr(x->operands, "ARRIVES"))
			res |= 1; /* the LDGSTS groups' counter */
	}
	s->sb_reserved = res;
}

static int first_free(uint8_t f)
{
	for (int k = 0; k < 6; k++)
		if (f >> k & 1)
			return k;
	return -1;
}

/* Y (slot) of S3, or UINT32_MAX. */
static uint32_t first_wait(const st_sched *s, uint32_t j, unsigned sb)
{
	uint32_t last = s->m.blast[s->m.si[s->at[j]].block];
	for (uint32_t y = j + 1; y <= last && y - j <= SC_WINDOW; y++)
		if (s->ctrl[s->at[y]].wait >> sb & 1)
			return y;
	return UINT32_MAX;
}

/* Set-to-wait with k (swap rule 7: 2 cycles, or the original distance if less): P at slot j now
 * sets k, Y at slot y now waits on it.  Every wait on k from j+1 up to Y must be far enough from P,
 * and Y from every other setter of k before it.  Listed moves pass (k is locally idle); a schedule
 * naming another k may fail it (session 8).  *lo: lowered to the lowest slot read. */
static int s2w_required(const st_sched *s, uint32_t p, uint32_t q)
{
	const sc_info *a = &s->m.si[p], *b = &s->m.si[q];
	int32_t od = b->orig_t - a->orig_t;
	bool same = a->block == b->block && !sc_xblock_moved(s, p) && !sc_xblock_moved(s, q);
	return same && od >= 0 && od < 2 ? od : 2;
}

static bool s2w_short(const st_sched *s, uint32_t j, uint32_t y, unsigned k, uint32_t *lo)
{
	uint32_t P = s->at[j], Y = s->at[y], first = s->m.bfirst[s->m.si[P].block];
	int d = s->ctrl[P].stall;
	for (uint32_t q = j + 1; q <= y && d < 2; q++) {
		uint32_t Q = s->at[q];
		if ((q == y || (s->ctrl[Q].wait >> k & 1)) && d < s2w_required(s, P, Q))
			return true;
		d += s->ctrl[Q].stall;
	}
	d = 0;
	for (uint32_t q = y; q-- > first;) {
		uint32_t Q = s->at[q];
		d += s->ctrl[Q].stall;
		*lo = q < *lo ? q : *lo;
		if (d >= 2)
			break;
		if (q != j && (sets_of(s->ctrl[Q]) >> k & 1) && d < s2w_required(s, Q, Y))
			return true;
	}
	return false;
}

st_status sc_check_sb(const st_sched *s, st_move mv, sc_fix *fix, uint32_t *rlo, uint32_t *rhi, st_error *err)
{
	const sc_model *m = &s->m;
	uint32_t j = mv.slot, P = s->at[j];
	unsigned k = mv.arg & 7, rd = mv.arg >> 3 & 1;
	const char *f = rd ? "read" : "write", *op = m->in[P].opcode;
	if (rlo)
		*rlo = j;
	if (rhi)
		*rhi = j;
	if (!(m->flags & ST_SCHED_SB))
		return st_error_set(err, ST_EILLEGAL, "sb 0x%x: the sb family is not enabled", 16 * j);
	if (k > 5 || mv.arg > 15)
		return st_error_set(err, ST_EINVAL, "sb 0x%x: arg %u (k or 8 + k, k 0..5)", 16 * j, mv.arg);
	st_ctrl c = s->ctrl[P];
	unsigned old = rd ? c.rbar : c.wbar;
	uint16_t fl = m->si[P].flags;
	if (old > 5)
		return st_error_set(err, ST_EILLEGAL, "sb 0x%x (%s): it sets no %s scoreboard", 16 * j, op, f);
	if (!(fl & SC_VARLAT) || (fl & (SC_FIXED | SC_SPECIAL | SC_UNKNOWN | SC_ASYNC_COPY)) ||
	    m->in[P].cls == ST_CLASS_TENSOR)
		return st_error_set(err, ST_EILLEGAL,
				    "sb 0x%x (%s): not a plain variable-latency producer (fixed, special, tensor, unknown or async copy)",
				    16 * j, op);
	if (s->sb_reserved >> old & 1)
		return st_error_set(err, ST_EILLEGAL, "sb 0x%x (%s): its %s SB%u is named by a DEPBAR (or counts LDGSTS groups)",
				    16 * j, op, f, old);
	uint32_t y = first_wait(s, j, old);
	if (rhi)
		*rhi = y == UINT32_MAX ? m->blast[m->si[P].block] : y;
	if (y == UINT32_MAX)
		return st_error_set(err, ST_EILLEGAL,
				    "sb 0x%x (%s): no wait on its %s SB%u after it in its block (within %d slots)", 16 * j, op, f,
				    old, SC_WINDOW);
	if (k == old || (s->sb_reserved >> k & 1))
		return st_error_set(err, ST_EILLEGAL, "sb 0x%x (%s): SB%u is %s", 16 * j, op, k,
				    k == old ? "the one it sets" : "named by a DEPBAR (or counts LDGSTS groups)");
	uint32_t lo = j;
	bool shrt = s2w_short(s, j, y, k, &lo);
	if (rlo)
		*rlo = lo;
	if (shrt)
		return st_error_set(err, ST_EILLEGAL, "sb 0x%x (%s): SB%u would be waited on under 2 cycles after it is set "
				    "(set-to-wait)", 16 * j, op, k);
	if (fix) {
		uint32_t Y = s->at[y];
		st_ctrl np = c, ny = s->ctrl[Y];
		if (rd)
			np.rbar = (uint8_t)k;
		else
			np.wbar = (uint8_t)k;
		ny.wait = (uint8_t)(ny.wait | 1u << k);
		fix->n = 2;
		fix->chg[0] = (sc_change){P, j, c, np};
		fix->chg[1] = (sc_change){Y, y, s->ctrl[Y], ny};
	}
	return ST_OK;
}

/* The slot of the wait the move adds (the move must be legal), for descriptions. */
uint32_t sc_sb_target(const st_sched *s, st_move mv)
{
	st_ctrl c = s->ctrl[s->at[mv.slot]];
	unsigned old = mv.arg >> 3 & 1 ? c.rbar : c.wbar;
	return old < 6 ? first_wait(s, mv.slot, old) : UINT32_MAX;
}

/* The arg of the listed SB move of field rd (0 write, 1 read) at slot j (S5): the lowest SB that
 * no instruction of the block sets or waits on from SC_WINDOW slots before j up to Y; -1 when
 * the move is refused or none is idle.  [*lo, *hi] widens to the slots read. */
int sc_sb_arg(const st_sched *s, uint32_t j, unsigned rd, uint32_t *lo, uint32_t *hi)
{
	const sc_model *m = &s->m;
	st_ctrl c = s->ctrl[s->at[j]];
	unsigned old = rd ? c.rbar : c.wbar;
	uint32_t first = m->bfirst[m->si[s->at[j]].block], y;
	if (old > 5 || !(m->si[s->at[j]].flags & SC_VARLAT))
		return -1;
	y = first_wait(s, j, old);
	if (y == UINT32_MAX)
		return -1;
	uint32_t from = j - first > SC_WINDOW ? j - SC_WINDOW : first;
	uint8_t busy = (uint8_t)(s->sb_reserved | 1u << old);
	for (uint32_t q = from; q <= y; q++)
		busy |= (uint8_t)(sets_of(s->ctrl[s->at[q]]) | s->ctrl[s->at[q]].wait);
	*lo = from < *lo ? from : *lo;
	*hi = y > *hi ? y : *hi;
	int k = first_free((uint8_t)(~busy & 0x3f));
	return k < 0 ? -1 : (int)(8 * rd) + k;
}
