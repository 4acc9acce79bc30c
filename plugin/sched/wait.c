/* Later waits (ST_MOVE_WAIT, family "wait", docs/sched.md "Later waits"): the wait on scoreboard k
 * that instruction X carries moves to F, the first later instruction of X's block that needs
 * what SB k may guard or that SB k may also order.  Invariants (W1-W6 in docs/sched.md):
 *  W1 "needs": Q needs X's wait on SB k when it reads or writes a register that an instruction of
 *     O(X, k) writes or reads (RAW, WAW, WAR), where O(X, k) holds every instruction that sets SB k
 *     (write or read scoreboard) or is variable-latency without a write scoreboard (an unclaimed
 *     result, protected through whatever SB a later producer of its queue sets) and reaches X in
 *     the current order with no wait on SB k in between (back to the previous wait on SB k in the
 *     block, or else everything that may be outstanding when the block starts, through the CFG,
 *     loop back edges included); and when Q touches a register of any GMMA/tensor/special
 *     instruction of the kernel (sources read asynchronously: Triton PR #11781).
 *  W2 stops: fixed points (control flow, barriers, fences, DEPBAR, WARPGROUP.*, block entries),
 *     memory accesses, variable-latency, tensor, special and unknown instructions, and every
 *     instruction that sets SB k: the wait lands on the first of them at the latest.
 *  W3 X itself neither needs SB k nor is a stop, and is not its block's last instruction.
 *  W4 SBs counted by some DEPBAR.LE SBk, N>0 never move.
 *  W5 F is at most SC_WINDOW slots after X and never past X's block's last instruction.
 *  W6 the move changes only the two wait masks; stalls, yields and everything else stay. */
#include "sched_internal.h"

#include <stdlib.h>
#include <string.h>

static uint8_t sets_mask(st_ctrl c)
{
	return (uint8_t)((c.wbar < 6 ? 1u << c.wbar : 0) | (c.rbar < 6 ? 1u << c.rbar : 0));
}

/* The instructions that set SB k, and the variable-latency ones without a write scoreboard, from
 * which X (original index) is reached in the original with no wait on SB k in between: a
 * backward walk through the CFG from X (for X a block's first instruction: EO of its block). */
static st_status outstanding(st_sched *s, uint32_t X, unsigned k, uint32_t **list, size_t *n, size_t *cap,
			     uint8_t *seen, uint32_t *stack, const uint32_t *pstart, const uint32_t *plist)
{
	const sc_model *m = &s->m;
	size_t nb = st_sass_block_count(m->k), sp = 0;
	memset(seen, 0, nb);
	stack[sp++] = X; /* scan X-1 down to its block's start; a block b entered from its end is n + b */
	while (sp) {
		uint32_t from = stack[--sp], b = from < m->n ? m->si[from].block : (uint32_t)(from - m->n);
		uint32_t first = m->bfirst[b], i = from < m->n ? from : m->blast[b] + 1;
		int cleared = 0;
		while (i > first) {
			const st_sass_insn *y = &m->in[--i];
			uint8_t g = sets_mask(y->ctrl);
			if (((g >> k) & 1) || ((m->si[i].flags & SC_VARLAT) && y->ctrl.wbar == ST_SB_NONE)) {
				if (*n == *cap) {
					size_t c2 = *cap ? 2 * *cap : 256;
					uint32_t *l2 = realloc(*list, c2 * sizeof *l2);
					if (!l2)
						return ST_ENOMEM;
					*list = l2;
					*cap = c2;
				}
				(*list)[(*n)++] = i;
			}
			if (y->ctrl.wait >> k & 1) {
				cleared = 1;
				break;
			}
		}
		if (cleared)
			continue;
		for (uint32_t q = pstart[b]; q < pstart[b + 1]; q++) {
			uint32_t pb = plist[q];
			if (!seen[pb]) {
				seen[pb] = 1;
				stack[sp++] = (uint32_t)m->n + pb;
			}
		}
	}
	return ST_OK;
}

/* Predecessor lists of every block (CSR: plist[pstart[b] .. pstart[b+1])). */
static st_status preds(const sc_model *m, uint32_t **pstart, uint32_t **plist)
{
	size_t nb = st_sass_block_count(m->k);
	*pstart = calloc(nb + 2, sizeof **pstart);
	*plist = malloc((2 * nb + 1) * sizeof **plist);
	if (!*pstart || !*plist)
		return ST_ENOMEM;
	for (size_t b = 0; b < nb; b++) {
		uint32_t f, c;
		int32_t sc[2];
		st_sass_block(m->k, b, &f, &c, sc);
		for (int t = 0; t < 2; t++)
			if (sc[t] >= 0)
				(*pstart)[sc[t] + 1]++;
	}
	for (size_t b = 0; b < nb; b++)
		(*pstart)[b + 1] += (*pstart)[b];
	uint32_t *fill = calloc(nb + 1, sizeof *fill);
	if (!fill)
		return ST_ENOMEM;
	for (size_t b = 0; b < nb; b++) {
		uint32_t f, c;
		int32_t sc[2];
		st_sass_block(m->k, b, &f, &c, sc);
		for (int t = 0; t < 2; t++)
			if (sc[t] >= 0)
				(*plist)[(*pstart)[sc[t]] + fill[sc[t]]++] = (uint32_t)b;
	}
	free(fill);
	return ST_OK;
}

/* wneed[i]: bit 6 a stop for every SB (W2, setters aside), bit 7 touches a special's registers.
 * wo_*: EO(b, k), what may be outstanding on SB k when block b starts (invariant under the moves:
 * setters never cross a wait on their SB, and no wait leaves its block). */
st_status sc_wait_prepare(st_sched *s, st_error *err)
{
	const sc_model *m = &s->m;
	size_t n = m->n, nb = st_sass_block_count(m->k), cap = 0, no = 0;
	uint32_t *pstart = NULL, *plist = NULL, *stack = malloc((nb + 2) * sizeof *stack), *spec = malloc((n ? n : 1) * sizeof *spec);
	uint8_t *seen = malloc(nb + 1);
	s->wneed = calloc(n ? n : 1, 1);
	s->wo_off = calloc(6 * (nb ? nb : 1) + 1, sizeof *s->wo_off);
	st_status rc = stack && spec && seen && s->wneed && s->wo_off ? preds(m, &pstart, &plist) : ST_ENOMEM;
	size_t ns = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		const sc_info *si = &m->si[i];
		const st_sass_insn *x = &m->in[i];
		if (si->flags & SC_SPECIAL || x->cls == ST_CLASS_TENSOR)
			spec[ns++] = (uint32_t)i;
		if (si->flags & (SC_FIXED | SC_VARLAT | SC_SPECIAL | SC_UNKNOWN) || si->mem_r || si->mem_w ||
		    x->cls != ST_CLASS_ALU)
			s->wneed[i] |= 0x40;
	}
	for (size_t i = 0; !rc && i < n; i++)
		for (size_t t = 0; t < ns && !(s->wneed[i] & 0x80); t++)
			if (spec[t] != i && sc_insns_touch(&m->in[spec[t]], &m->in[i]))
				s->wneed[i] |= 0x80;
	for (size_t b = 0; !rc && b < nb; b++) /* EO(b, k): outstanding on entry to block b */
		for (unsigned k = 0; k < 6; k++) {
			s->wo_off[6 * b + k] = (uint32_t)no;
			if (outstanding(s, m->bfirst[b], k, &s->wo, &no, &cap, seen, stack, pstart, plist))
				rc = ST_ENOMEM;
		}
	if (!rc)
		s->wo_off[6 * nb] = (uint32_t)no;
	free(pstart);
	free(plist);
	free(stack);
	free(spec);
	free(seen);
	return rc ? st_error_set(err, rc, "sched: out of memory") : ST_OK;
}

/* O(j, k) in the current state: what the wait on SB k at slot j guards (W1): the setters of SB k
 * (by their current scoreboards: the sb family re-assigns them; EO stays a superset, sb.c S4)
 * and unclaimed variable-latency instructions of j's block before j, back to the previous wait on
 * SB k, and EO(block, k) when there is none.  ok = 0 when that walk would leave SC_WINDOW. */
typedef struct guard { uint32_t dyn[SC_WINDOW]; size_t nd; uint32_t eo_lo, eo_hi; int ok; } guard;

static void guarded(const st_sched *s, uint32_t j, unsigned k, guard *g, uint32_t *lo)
{
	const sc_model *m = &s->m;
	uint32_t b = m->si[s->at[j]].block, first = m->bfirst[b], i = j;
	g->nd = 0;
	g->eo_lo = g->eo_hi = 0;
	g->ok = 1;
	while (i > first) {
		if (j - i >= SC_WINDOW) {
			g->ok = 0;
			break;
		}
		uint32_t Y = s->at[--i];
		*lo = i < *lo ? i : *lo;
		if ((sets_mask(s->ctrl[Y]) >> k & 1) || ((m->si[Y].flags & SC_VARLAT) && m->in[Y].ctrl.wbar == ST_SB_NONE))
			g->dyn[g->nd++] = Y;
		if (s->ctrl[Y].wait >> k & 1)
			return;
	}
	*lo = first < *lo ? first : *lo;
	g->eo_lo = s->wo_off[6 * b + k];
	g->eo_hi = s->wo_off[6 * b + k + 1];
}

/* Whether Q may need what the guard covers (W1). */
static int needs(const st_sched *s, const guard *g, uint32_t Q)
{
	if (s->wneed[Q] & 0x80)
		return 1;
	for (size_t t = 0; t < g->nd; t++)
		if (g->dyn[t] != Q && sc_insns_touch(&s->m.in[g->dyn[t]], &s->m.in[Q]))
			return 1;
	for (uint32_t t = g->eo_lo; t < g->eo_hi; t++)
		if (s->wo[t] != Q && sc_insns_touch(&s->m.in[s->wo[t]], &s->m.in[Q]))
			return 1;
	return 0;
}

/* Q ends the move of a wait on SB k (W1, W2). */
static int stops(const st_sched *s, const guard *g, unsigned k, uint32_t Q)
{
	return (s->wneed[Q] & 0x40) || (sets_mask(s->ctrl[Q]) >> k & 1) || needs(s, g, Q);
}

st_status sc_check_wait(const st_sched *s, st_move mv, sc_fix *fix, uint32_t *rlo, uint32_t *rhi, st_error *err)
{
	const sc_model *m = &s->m;
	uint32_t j = mv.slot, X = s->at[j], last = m->blast[m->si[X].block], F = j;
	unsigned k = mv.arg;
	st_ctrl c = s->ctrl[X];
	if (rlo)
		*rlo = j;
	if (rhi)
		*rhi = j;
	if (!(m->flags & ST_SCHED_WAIT))
		return st_error_set(err, ST_EILLEGAL, "wait 0x%x: the wait family is not enabled", 16 * j);
	if (k > 5)
		return st_error_set(err, ST_EINVAL, "wait 0x%x: SB%u (0..5)", 16 * j, k);
	if (!(c.wait >> k & 1))
		return st_error_set(err, ST_EILLEGAL, "wait 0x%x SB%u (%s): it does not wait on that SB", 16 * j, k,
				    m->in[X].opcode);
	if (m->counted_sbs >> k & 1)
		return st_error_set(err, ST_EILLEGAL, "wait 0x%x SB%u (%s): a DEPBAR.LE counts SB%u", 16 * j, k, m->in[X].opcode, k);
	guard g;
	uint32_t lo = j;
	guarded(s, j, k, &g, &lo);
	if (rlo)
		*rlo = lo;
	if (!g.ok)
		return st_error_set(err, ST_EILLEGAL, "wait 0x%x SB%u (%s): no earlier wait on SB%u within %d slots", 16 * j, k,
				    m->in[X].opcode, k, SC_WINDOW);
	if (stops(s, &g, k, X) || j == last)
		return st_error_set(err, ST_EILLEGAL, "wait 0x%x SB%u (%s): %s", 16 * j, k, m->in[X].opcode,
				    j == last ? "the last instruction of its block"
				    : needs(s, &g, X) ? "it needs what the SB guards"
						      : "it is a fixed point, memory, variable-latency or special instruction, or sets the SB");
	while (F < last && F - j < SC_WINDOW) {
		F++;
		if (stops(s, &g, k, s->at[F]) || (s->ctrl[s->at[F]].wait >> k & 1))
			break;
	}
	if (rhi)
		*rhi = F;
	if (fix) {
		st_ctrl cx = c, cf = s->ctrl[s->at[F]];
		cx.wait = (uint8_t)(cx.wait & ~(1u << k));
		fix->chg[fix->n++] = (sc_change){X, j, c, cx};
		if (!(cf.wait >> k & 1)) {
			st_ctrl nf = cf;
			nf.wait = (uint8_t)(nf.wait | 1u << k);
			fix->chg[fix->n++] = (sc_change){s->at[F], F, cf, nf};
		}
	}
	return ST_OK;
}

/* The slot the wait lands on (the move must be legal), for descriptions. */
uint32_t sc_wait_target(const st_sched *s, st_move mv)
{
	sc_fix fix = {0, {{0}}};
	if (sc_check_wait(s, mv, &fix, NULL, NULL, NULL) || !fix.n)
		return mv.slot;
	if (fix.n == 2)
		return fix.chg[1].slot;
	uint32_t F = mv.slot; /* the target already waited on the SB */
	while (!(s->ctrl[s->at[++F]].wait >> mv.arg & 1))
		;
	return F;
}
