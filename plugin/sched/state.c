/* The st_sched state: current order and control fields, the applied moves (for undo and for
 * schedules), and the cache of legal moves, refreshed locally after each change. */
#include "sched_internal.h"
#include "schedule_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Fenwick tree over per-slot legal-move counts ------------------------------------------- */
static void fen_add(st_sched *s, size_t i, int v)
{
	for (size_t x = i + 1; x <= s->m.n; x += x & (~x + 1))
		s->fen[x - 1] += v;
}

/* Smallest slot whose prefix count exceeds k. */
static size_t fen_find(const st_sched *s, size_t k)
{
	size_t pos = 0, step = 1;
	while (step * 2 <= s->m.n)
		step *= 2;
	for (; step; step /= 2)
		if (pos + step <= s->m.n && (size_t)s->fen[pos + step - 1] <= k) {
			pos += step;
			k -= (size_t)s->fen[pos - 1];
		}
	return pos; /* 0-based slot */
}

static int popcount32(uint32_t v)
{
	int c = 0;
	for (; v; v &= v - 1)
		c++;
	return c;
}

static void recount(st_sched *s, uint32_t slot, uint32_t bits, uint32_t lo, uint32_t hi)
{
	int delta = popcount32(bits) - popcount32(s->legal[slot]);
	if (delta) {
		fen_add(s, slot, delta);
		s->nlegal = (size_t)((long)s->nlegal + delta);
	}
	s->legal[slot] = bits;
	s->rlo[slot] = lo;
	s->rhi[slot] = hi;
}

/* Bits of s->legal[slot]: 0 swap, 1 stall, 2 yield, 3..5 reuse a..c, 6..13 hoist variants, 14..19
 * wait on SB0..5, 20..27 group hoist variants (arg 8..15), 28..29 SB re-assignment of the write / read
 * SB, 30 xblock, 31 rename.  recompute() fills them for one slot, with the slots its checks read. */

/* The control-code edits of slot (stall, yield, reuse a..c) into *bits; the range [*lo, *hi]
 * widened by what their checks read. */
static void recompute_ctrl(st_sched *s, uint32_t slot, uint32_t *bits, uint32_t *lo, uint32_t *hi)
{
	uint32_t l, h;
	st_move mv = {ST_MOVE_STALL, 0, slot, {0}};
	if (!(s->m.flags & ST_SCHED_NO_CTRL)) {
		if (sc_check(s, mv, NULL, &l, &h, NULL) == ST_OK)
			*bits |= 2;
		*lo = l < *lo ? l : *lo;
		*hi = h > *hi ? h : *hi;
		mv.kind = ST_MOVE_YIELD;
		if (sc_check(s, mv, NULL, &l, &h, NULL) == ST_OK)
			*bits |= 4;
		*lo = l < *lo ? l : *lo;
		*hi = h > *hi ? h : *hi;
		mv.kind = ST_MOVE_REUSE;
		for (uint8_t f = 0; f < 3; f++) {
			mv.arg = f;
			if (sc_check(s, mv, NULL, &l, &h, NULL) == ST_OK)
				*bits |= (uint8_t)(8u << f);
			*lo = l < *lo ? l : *lo;
			*hi = h > *hi ? h : *hi;
		}
	}
}

/* The hoist family's variants of slot, single and group, into *bits (the same). */
static void recompute_hoist(st_sched *s, uint32_t slot, uint32_t *bits, uint32_t *lo, uint32_t *hi)
{
	uint32_t l;
	for (int d = 0; d < 2 && (s->m.flags & ST_SCHED_HOIST); d++) {
		unsigned reach = sc_hoist_reach(s, slot, d ? 1 : -1, lo, hi, NULL);
		for (unsigned v = 0; v < 4; v++)
			if (sc_hoist_dist(4 * (unsigned)d + v, reach))
				*bits |= 1u << (SC_LEGAL_HOIST + 4 * d + v);
	}
	if (s->m.flags & ST_SCHED_HOIST) { /* group variants: the same reading as sc_check_group's */
		uint32_t mem[SC_GROUP_MAX], first = s->m.bfirst[s->m.si[s->at[slot]].block];
		unsigned nm = sc_group_members(s, slot, mem);
		l = slot - first > SC_HOIST_MAX ? slot - SC_HOIST_MAX : first; /* membership reads these */
		*lo = l < *lo ? l : *lo;
		for (int d = 0; d < 2 && nm; d++) {
			unsigned reach = sc_group_reach(s, mem, nm, d ? 1 : -1, lo, hi, NULL);
			for (unsigned v = 0; v < 4; v++)
				if (sc_hoist_dist(v, reach))
					*bits |= 1u << (SC_LEGAL_GROUP + 4 * d + v);
		}
	}
}

/* The wait, sb, rename and xblock moves of slot into *bits (the same). */
static void recompute_families(st_sched *s, uint32_t slot, uint32_t *bits, uint32_t *lo, uint32_t *hi)
{
	uint32_t l, h;
	for (uint8_t k = 0; k < 6 && (s->m.flags & ST_SCHED_WAIT); k++) {
		st_move w = {ST_MOVE_WAIT, k, slot, {0}};
		if (sc_check_wait(s, w, NULL, &l, &h, NULL) == ST_OK)
			*bits |= 1u << (SC_LEGAL_WAIT + k);
		*lo = l < *lo ? l : *lo;
		*hi = h > *hi ? h : *hi;
	}
	for (unsigned rd = 0; rd < 2 && (s->m.flags & ST_SCHED_SB); rd++) {
		int a = sc_sb_arg(s, slot, rd, lo, hi);
		st_move b = {ST_MOVE_SB, (uint8_t)(a < 0 ? 0 : a), slot, {0}};
		if (a >= 0 && sc_check_sb(s, b, NULL, &l, &h, NULL) == ST_OK)
			*bits |= 1u << (SC_LEGAL_SB + rd);
		*lo = a >= 0 && l < *lo ? l : *lo;
		*hi = a >= 0 && h > *hi ? h : *hi;
	}
	int target = s->rn ? sc_rename_target(s, slot) : -1;
	if (target >= 0) {
		st_move rn = {ST_MOVE_RENAME, (uint8_t)target, slot, {0}};
		if (sc_check_rename(s, rn, &l, &h, NULL) == ST_OK)
			*bits |= 1u << SC_LEGAL_RENAME;
		*lo = l < *lo ? l : *lo;
		*hi = h > *hi ? h : *hi;
	}
	if (s->m.flags & ST_SCHED_XBLOCK) {
		st_move x = {ST_MOVE_XBLOCK, 0, slot, {0}};
		if (sc_check_xblock(s, x, NULL, &l, &h, NULL) == ST_OK)
			*bits |= 1u << SC_LEGAL_XBLOCK;
		*lo = l < *lo ? l : *lo;
		*hi = h > *hi ? h : *hi;
	}
}

static void recompute(st_sched *s, uint32_t slot)
{
	uint32_t bits = 0;
	uint32_t lo = slot, hi = slot, l, h;
	st_move mv = {ST_MOVE_SWAP, 0, slot, {0}};
	if (sc_check(s, mv, NULL, &l, &h, NULL) == ST_OK)
		bits |= 1;
	lo = l < lo ? l : lo;
	hi = h > hi ? h : hi;
	recompute_ctrl(s, slot, &bits, &lo, &hi);
	recompute_hoist(s, slot, &bits, &lo, &hi);
	if (!sc_xblock_frozen(s, slot)) /* X8: no wait, sb, rename or xblock move where one moved */
		recompute_families(s, slot, &bits, &lo, &hi);
	recount(s, slot, bits, lo, hi);
}

void sc_refresh(st_sched *s, uint32_t lo, uint32_t hi)
{
	size_t n = s->m.n;
	/* a cached result reads at most SC_WINDOW (+ a hoist chain) slots either side of its own */
	size_t r = SC_WINDOW + 4 + (s->m.flags & ST_SCHED_HOIST ? 2 * SC_HOIST_MAX + 1 : 0); /* group: span + steps */
	size_t a = lo > r ? lo - r : 0;
	size_t b = (size_t)hi + r < n ? (size_t)hi + r : n - 1;
	for (size_t p = a; p <= b && n; p++)
		if ((p >= lo && p <= hi) || (s->rhi[p] >= lo && s->rlo[p] <= hi))
			recompute(s, (uint32_t)p);
}

void sc_refresh_all(st_sched *s)
{
	for (size_t p = 0; p < s->m.n; p++)
		recompute(s, (uint32_t)p);
}

/* ---- life cycle ------------------------------------------------------------------------------- */
void st_sched_free(st_sched *s)
{
	if (!s)
		return;
	sc_model_free(&s->m);
	free(s->at);
	free(s->pos);
	free(s->ctrl);
	free(s->undo);
	free(s->legal);
	free(s->rlo);
	free(s->rhi);
	free(s->fen);
	free(s->wneed);
	free(s->wo_off);
	free(s->wo);
	free(s->gread);
	free(s->ngread);
	free(s->xa);
	free(s->xlin);
	free(s->xfroz);
	free(s->xsave);
	sc_rename_free(s->rn);
	free(s);
}

st_status st_sched_new(const st_sass_kernel *k, const st_cubin *c, unsigned flags, st_sched **out, st_error *err)
{
	*out = NULL;
	if (!k)
		return st_error_set(err, ST_EINVAL, "sched: no kernel");
	int sm = st_sass_sm(k);
	if (sm != 80 && sm != 86 && sm != 87 && sm != 89 && sm != 90)
		return st_error_set(err, ST_EUNSUPPORTED, "sched: kernel %s is sm_%d; the latency model covers sm_80/86/89/90",
				    st_sass_name(k), sm);
	st_sched *s = calloc(1, sizeof *s);
	if (!s)
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	st_status rc = sc_model_build(&s->m, k, c, flags, err);
	if (rc) {
		free(s);
		return rc;
	}
	size_t n = s->m.n, n1 = n ? n : 1;
	s->at = malloc(n1 * sizeof *s->at);
	s->pos = malloc(n1 * sizeof *s->pos);
	s->ctrl = malloc(n1 * sizeof *s->ctrl);
	s->legal = calloc(n1, sizeof *s->legal);
	s->rlo = calloc(n1, sizeof *s->rlo);
	s->rhi = calloc(n1, sizeof *s->rhi);
	s->fen = calloc(n1, sizeof *s->fen);
	if (!s->at || !s->pos || !s->ctrl || !s->legal || !s->rlo || !s->rhi || !s->fen) {
		st_sched_free(s);
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		s->at[i] = s->pos[i] = (uint32_t)i;
		s->ctrl[i] = s->m.in[i].ctrl;
	}
	s->last_swap = UINT32_MAX;
	if ((flags & ST_SCHED_RENAME) && (rc = sc_rename_prepare(s, c, err))) {
		st_sched_free(s);
		return rc;
	}
	if (((flags & ST_SCHED_WAIT) && (rc = sc_wait_prepare(s, err))) ||
	    ((flags & ST_SCHED_HOIST) && (rc = sc_group_prepare(s, err))) ||
	    ((flags & ST_SCHED_XBLOCK) && (rc = sc_xblock_prepare(s, err)))) {
		st_sched_free(s);
		return rc;
	}
	if (flags & ST_SCHED_SB)
		sc_sb_prepare(s);
	sc_refresh_all(s);
	*out = s;
	return ST_OK;
}

/* ---- queries ----------------------------------------------------------------------------------- */
size_t st_sched_count(const st_sched *s) { return s->m.n; }
uint32_t st_sched_at(const st_sched *s, size_t slot) { return slot < s->m.n ? s->at[slot] : UINT32_MAX; }
const st_sass_kernel *st_sched_kernel(const st_sched *s) { return s->m.k; }
size_t st_sched_depth(const st_sched *s) { return s->nmoves; }
size_t st_sched_move_count(const st_sched *s) { return s->nlegal; }

st_ctrl st_sched_ctrl(const st_sched *s, size_t slot)
{
	st_ctrl z = {0};
	return slot < s->m.n ? s->ctrl[s->at[slot]] : z;
}

st_move st_sched_move(const st_sched *s, size_t i)
{
	st_move mv = {0};
	if (i >= s->nlegal)
		return mv;
	size_t slot = fen_find(s, i);
	/* i minus the moves of the slots before */
	size_t before = 0;
	for (size_t x = slot; x > 0; x -= x & (~x + 1))
		before += (size_t)s->fen[x - 1];
	size_t k = i - before;
	uint32_t bits = s->legal[slot];
	unsigned b = 0;
	for (;; b++)
		if (bits >> b & 1) {
			if (!k)
				break;
			k--;
		}
	mv.slot = (uint32_t)slot;
	uint32_t sl = mv.slot, sh = mv.slot;
	mv.kind = b == 0 ? ST_MOVE_SWAP : b == 1 ? ST_MOVE_STALL : b == 2 ? ST_MOVE_YIELD
		: b < SC_LEGAL_HOIST ? ST_MOVE_REUSE : b < SC_LEGAL_WAIT ? ST_MOVE_HOIST : b < SC_LEGAL_GROUP ? ST_MOVE_WAIT
		: b < SC_LEGAL_SB ? ST_MOVE_HOIST : b < SC_LEGAL_XBLOCK ? ST_MOVE_SB : b < SC_LEGAL_RENAME ? ST_MOVE_XBLOCK
		: ST_MOVE_RENAME;
	mv.arg = (uint8_t)(b >= SC_LEGAL_RENAME ? (unsigned)sc_rename_target(s, mv.slot) : b >= SC_LEGAL_XBLOCK ? 0
			   : b >= SC_LEGAL_SB ? (unsigned)sc_sb_arg(s, mv.slot, b - SC_LEGAL_SB, &sl, &sh)
			   : b >= SC_LEGAL_GROUP ? b - SC_LEGAL_GROUP + SC_HOIST_VARIANTS : b >= SC_LEGAL_WAIT ? b - SC_LEGAL_WAIT
			   : b >= SC_LEGAL_HOIST ? b - SC_LEGAL_HOIST : b >= 3 ? b - 3 : 0);
	return mv;
}

st_status st_sched_check(const st_sched *s, st_move m, st_error *err)
{
	return sc_check(s, m, NULL, NULL, NULL, err);
}

int st_sched_describe(const st_sched *s, st_move m, char *buf, size_t n)
{
	if (m.slot >= s->m.n)
		return snprintf(buf, n, "move at slot %u (out of range)", m.slot);
	const st_sass_insn *a = &s->m.in[s->at[m.slot]];
	switch (m.kind) {
	case ST_MOVE_SWAP:
		if ((size_t)m.slot + 1 >= s->m.n)
			return snprintf(buf, n, "swap 0x%x/-", 16 * m.slot);
		return snprintf(buf, n, "swap 0x%x/0x%x (%s <-> %s)", 16 * m.slot, 16 * (m.slot + 1), a->opcode,
				s->m.in[s->at[m.slot + 1]].opcode);
	case ST_MOVE_STALL:
		return snprintf(buf, n, "stall 0x%x %u->%u (%s)", 16 * m.slot, s->ctrl[s->at[m.slot]].stall,
				s->ctrl[s->at[m.slot]].stall - 1u, a->opcode);
	case ST_MOVE_YIELD:
		return snprintf(buf, n, "yield 0x%x %u->%u (%s)", 16 * m.slot, s->ctrl[s->at[m.slot]].yield,
				s->ctrl[s->at[m.slot]].yield ^ 1u, a->opcode);
	case ST_MOVE_REUSE:
		return snprintf(buf, n, "reuse 0x%x %c (%s)", 16 * m.slot, 'a' + (m.arg < 3 ? m.arg : 0), a->opcode);
	case ST_MOVE_WAIT:
		if (sc_check_wait(s, m, NULL, NULL, NULL, NULL))
			return snprintf(buf, n, "wait 0x%x SB%u (%s; not legal now)", 16 * m.slot, m.arg, a->opcode);
		return snprintf(buf, n, "wait 0x%x SB%u -> 0x%x (%s -> %s)", 16 * m.slot, m.arg, 16 * sc_wait_target(s, m),
				a->opcode, s->m.in[s->at[sc_wait_target(s, m)]].opcode);
	case ST_MOVE_SB: {
		st_ctrl c = s->ctrl[s->at[m.slot]];
		unsigned rd = m.arg >> 3 & 1, old = rd ? c.rbar : c.wbar;
		if (sc_check_sb(s, m, NULL, NULL, NULL, NULL))
			return snprintf(buf, n, "sb 0x%x %s SB -> SB%u (%s; not legal now)", 16 * m.slot, rd ? "read" : "write",
					m.arg & 7u, a->opcode);
		uint32_t y = sc_sb_target(s, m);
		return snprintf(buf, n, "sb 0x%x %s SB%u -> SB%u, wait at 0x%x (%s -> %s)", 16 * m.slot, rd ? "read" : "write",
				old, m.arg & 7u, 16 * y, a->opcode, s->m.in[s->at[y]].opcode);
	}
	case ST_MOVE_XBLOCK: {
		uint32_t t = sc_xblock_target(s, m.slot);
		if (sc_check_xblock(s, m, NULL, NULL, NULL, NULL))
			return snprintf(buf, n, "xblock 0x%x (%s; not legal now)", 16 * m.slot, a->opcode);
		return snprintf(buf, n, "xblock 0x%x -> 0x%x (%s, to the end of the block before %s)", 16 * m.slot, 16 * t,
				a->opcode, s->m.in[s->at[t]].opcode);
	}
	case ST_MOVE_RENAME: {
		st_error e = {0};
		if (sc_check_rename(s, m, NULL, NULL, &e))
			return snprintf(buf, n, "rename 0x%x -> R%u (%s; not legal now)", 16 * m.slot, m.arg, a->opcode);
		for (unsigned d = 0; d < a->ndefs; d++)
			if (a->defs[d].file == ST_RF_R)
				return snprintf(buf, n, "rename 0x%x R%u -> R%u (%s)", 16 * m.slot, a->defs[d].index, m.arg,
						a->opcode);
		return snprintf(buf, n, "rename 0x%x -> R%u (%s)", 16 * m.slot, m.arg, a->opcode);
	}
	case ST_MOVE_HOIST: {
		if (m.arg >= SC_HOIST_VARIANTS && m.arg < SC_HOIST_ARGS && (s->m.flags & ST_SCHED_HOIST))
			return sc_group_describe(s, m, buf, n);
		uint32_t lo = m.slot, hi = m.slot;
		int up = m.arg % 8 < 4;
		unsigned d = m.arg < SC_HOIST_VARIANTS && (s->m.flags & ST_SCHED_HOIST)
			? sc_hoist_dist(m.arg, sc_hoist_reach((st_sched *)s, m.slot, up ? -1 : 1, &lo, &hi, NULL)) : 0;
		static const char *const v[4] = {"2", "4", "8", "far"};
		if (!d)
			return snprintf(buf, n, "%s%s 0x%x %s %s (%s; not legal now)", m.arg >= SC_HOIST_VARIANTS ? "group " : "",
					up ? "hoist" : "sink", 16 * m.slot, up ? "up" : "down", v[m.arg % 4], a->opcode);
		return snprintf(buf, n, "%s 0x%x %s %s -> 0x%x (%s)", up ? "hoist" : "sink", 16 * m.slot, up ? "up" : "down",
				v[m.arg % 4], 16 * (up ? m.slot - d : m.slot + d), a->opcode);
	}
	default:
		return snprintf(buf, n, "ctrl 0x%x stall %u yield %u W%u R%u wait 0x%x reuse %u (%s)", 16 * m.slot,
				m.ctrl.stall, m.ctrl.yield, m.ctrl.wbar, m.ctrl.rbar, m.ctrl.wait, m.ctrl.reuse, a->opcode);
	}
}

/* ---- apply / undo ------------------------------------------------------------------------------- */
static sc_undo *push_undo(st_sched *s, st_move m, uint8_t cont, const sc_fix *fix, st_error *err)
{
	if (s->nundo == s->capundo) {
		size_t cap = s->capundo ? 2 * s->capundo : 64;
		sc_undo *u = realloc(s->undo, cap * sizeof *u);
		if (!u) {
			st_error_set(err, ST_ENOMEM, "sched: out of memory");
			return NULL;
		}
		s->undo = u;
		s->capundo = cap;
	}
	sc_undo *u = &s->undo[s->nundo++];
	memset(u, 0, sizeof *u);
	u->m = m;
	u->cont = cont;
	u->nchg = fix->n;
	memcpy(u->chg, fix->chg, fix->n * sizeof *fix->chg);
	return u;
}

/* The rotation of an xblock move from slot j to t, and the refresh range: both blocks whole (their
 * facts changed). */
static void xblock_raw(st_sched *s, uint32_t j, uint32_t t, int dir, uint32_t *lo, uint32_t *hi)
{
	uint32_t h = s->m.si[s->at[j]].block;
	sc_xblock_rotate(s, j, t, dir);
	*lo = s->m.bfirst[h - 1] < *lo ? s->m.bfirst[h - 1] : *lo;
	*hi = s->m.blast[h] > *hi ? s->m.blast[h] : *hi;
}

/* Apply one checked move's record (swap or control edit) to the state; widen [*lo, *hi]. */
static void apply_record(st_sched *s, const sc_undo *u, uint32_t *lo, uint32_t *hi)
{
	sc_fix fix = {u->nchg, {{0}}};
	memcpy(fix.chg, u->chg, u->nchg * sizeof *u->chg);
	if (u->m.kind == ST_MOVE_SWAP) {
		sc_swap_raw(s, u->m.slot, &fix);
		s->last_swap = u->m.slot;
		*hi = u->m.slot + 1 > *hi ? u->m.slot + 1 : *hi;
	} else if (u->m.kind == ST_MOVE_XBLOCK) {
		xblock_raw(s, u->m.slot, u->aux, 1, lo, hi);
		for (unsigned t = 0; t < fix.n; t++)
			s->ctrl[fix.chg[t].idx] = fix.chg[t].now;
	} else {
		for (unsigned t = 0; t < fix.n; t++)
			s->ctrl[fix.chg[t].idx] = fix.chg[t].now;
	}
	*lo = u->m.slot < *lo ? u->m.slot : *lo;
	for (unsigned t = 0; t < fix.n; t++) {
		*lo = fix.chg[t].slot < *lo ? fix.chg[t].slot : *lo;
		*hi = fix.chg[t].slot > *hi ? fix.chg[t].slot : *hi;
	}
}

static void undo_record(st_sched *s, uint32_t *lo, uint32_t *hi)
{
	sc_undo *u = &s->undo[--s->nundo];
	sc_fix fix = {u->nchg, {{0}}};
	memcpy(fix.chg, u->chg, u->nchg * sizeof *u->chg);
	*lo = u->m.slot < *lo ? u->m.slot : *lo;
	*hi = u->m.slot + 1 > *hi ? u->m.slot + 1 : *hi;
	for (unsigned t = 0; t < fix.n; t++) {
		*lo = fix.chg[t].slot < *lo ? fix.chg[t].slot : *lo;
		*hi = fix.chg[t].slot > *hi ? fix.chg[t].slot : *hi;
	}
	if (u->m.kind == ST_MOVE_SWAP)
		sc_unswap_raw(s, u->m.slot, &fix);
	else if (u->m.kind == ST_MOVE_RENAME)
		sc_undo_rename(s);
	else
		for (unsigned t = fix.n; t-- > 0;)
			s->ctrl[fix.chg[t].idx] = fix.chg[t].old;
	if (u->m.kind == ST_MOVE_XBLOCK)
		xblock_raw(s, u->m.slot, u->aux, -1, lo, hi);
}

/* A hoist (single or group): its chain of swaps, each checked in the state the previous ones left
 * (the same checks sc_check_hoist made), pushed as one move (the later records marked `cont`). */
static st_status apply_hoist(st_sched *s, st_move m, uint32_t *lo, uint32_t *hi, st_error *err)
{
	uint32_t seq[SC_GROUP_MAX * SC_HOIST_MAX];
	st_status rc = sc_check_hoist(s, m, NULL, NULL, err);
	if (rc)
		return rc;
	unsigned d = sc_hoist_swaps(s, m, seq);
	for (unsigned t = 0; t < d; t++) {
		st_move sw = {ST_MOVE_SWAP, 0, seq[t], {0}};
		sc_fix fix;
		sc_undo *u = NULL;
		if ((rc = sc_check(s, sw, &fix, NULL, NULL, err)) || !(u = push_undo(s, sw, t > 0, &fix, err))) {
			while (t--) /* not reached: the chain was just checked */
				undo_record(s, lo, hi);
			return rc ? rc : ST_ENOMEM;
		}
		apply_record(s, u, lo, hi);
	}
	return ST_OK;
}

st_status st_sched_apply(st_sched *s, st_move m, st_error *err)
{
	uint32_t lo = m.slot, hi = m.slot;
	st_status rc;
	if (m.kind == ST_MOVE_HOIST) {
		if ((rc = apply_hoist(s, m, &lo, &hi, err)))
			return rc;
	} else if (m.kind == ST_MOVE_RENAME) {
		sc_fix none = {0};
		if ((rc = sc_apply_rename(s, m, err)))
			return rc;
		if (!push_undo(s, m, 0, &none, err)) {
			sc_undo_rename(s);
			return ST_ENOMEM;
		}
		lo = 0, hi = s->m.n ? (uint32_t)s->m.n - 1 : 0; /* the register census changed: every slot */
	} else {
		sc_fix fix;
		sc_undo *u;
		if ((rc = sc_check(s, m, &fix, NULL, NULL, err)))
			return rc;
		if (!(u = push_undo(s, m, 0, &fix, err)))
			return ST_ENOMEM;
		if (m.kind == ST_MOVE_XBLOCK)
			u->aux = sc_xblock_target(s, m.slot);
		apply_record(s, u, &lo, &hi);
	}
	s->nmoves++;
	sc_refresh(s, lo, hi);
	return ST_OK;
}

st_status st_sched_undo(st_sched *s, st_error *err)
{
	if (!s->nundo)
		return st_error_set(err, ST_EINVAL, "sched: nothing to undo");
	uint32_t lo = s->undo[s->nundo - 1].m.slot, hi = lo;
	while (s->nundo && s->undo[s->nundo - 1].cont)
		undo_record(s, &lo, &hi);
	if (s->undo[s->nundo - 1].m.kind == ST_MOVE_RENAME)
		lo = 0, hi = s->m.n ? (uint32_t)s->m.n - 1 : 0;
	undo_record(s, &lo, &hi);
	s->nmoves--;
	s->last_swap = UINT32_MAX;
	for (size_t i = s->nundo; i-- > 0;)
		if (s->undo[i].m.kind == ST_MOVE_SWAP) {
			s->last_swap = s->undo[i].m.slot;
			break;
		}
	sc_refresh(s, lo, hi);
	return ST_OK;
}

void st_sched_reset(st_sched *s)
{
	while (s->nmoves)
		st_sched_undo(s, NULL);
}

/* ---- materialising ------------------------------------------------------------------------------ */
st_status st_sched_to_cubin(const st_sched *s, st_cubin *c, size_t k, st_error *err)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	if (!ki || ki->insn_count != s->m.n)
		return st_error_set(err, ST_EINVAL, "sched: cubin kernel %zu is not %s (%zu slots)", k, st_sass_name(s->m.k),
				    s->m.n);
	const uint8_t *code = st_cubin_code(c, k, NULL);
	for (size_t i = 0; i < s->m.n; i++)
		if (memcmp(code + 16 * i, s->m.in[i].word, 16))
			return st_error_set(err, ST_EINVAL,
					    "sched: %s: the cubin's word at 0x%zx is not the decoded one (already rewritten?)",
					    st_sass_name(s->m.k), 16 * i);
	st_status rc = st_cubin_permute(c, k, s->at, s->m.n, err);
	for (size_t j = 0; !rc && j < s->m.n; j++) {
		uint32_t x = s->at[j];
		const uint8_t *renamed = sc_rename_word(s, x);
		if (renamed)
			rc = st_cubin_set_regs(c, k, j, renamed, err);
		if (rc || !memcmp(&s->ctrl[x], &s->m.in[x].ctrl, sizeof(st_ctrl)))
			continue;
		uint8_t word[16];
		memcpy(word, st_cubin_code(c, k, NULL) + 16 * j, 16);
		if (!(rc = st_ctrl_encode(word, s->ctrl[x], err)))
			rc = st_cubin_set_ctrl(c, k, j, word, err);
	}
	return rc || !s->rn ? rc : sc_rename_count_to_cubin(s, c, k, err);
}

st_status st_sched_to_schedule(const st_sched *s, st_schedule *out, st_error *err)
{
	const char *name = st_sass_name(s->m.k);
	st_status rc = ST_OK;
	uint32_t *at = NULL, *pos = NULL; /* order while the records replay (renames name slots of then) */
	size_t nren = 0;
	if (sc_rename_count(s)) {
		at = malloc(s->m.n * sizeof *at);
		pos = malloc(s->m.n * sizeof *pos);
		if (!at || !pos) {
			free(at), free(pos);
			return st_error_set(err, ST_ENOMEM, "sched: out of memory");
		}
		for (uint32_t i = 0; i < s->m.n; i++)
			at[i] = pos[i] = i;
	}
	for (size_t i = 0; i < s->nundo && !rc; i++) {
		const sc_undo *u = &s->undo[i];
		if (u->m.kind == ST_MOVE_SWAP && at) {
			uint32_t a = at[u->m.slot], b = at[u->m.slot + 1];
			at[u->m.slot] = b, at[u->m.slot + 1] = a;
			pos[a] = u->m.slot + 1, pos[b] = u->m.slot;
		}
		if (u->m.kind == ST_MOVE_RENAME)
			rc = sc_rename_to_schedule(s, nren++, u->m, pos, out, err);
		if (u->m.kind == ST_MOVE_SWAP)
			rc = st_schedule_add_swap(out, name, u->m.slot, err);
		if (u->m.kind == ST_MOVE_XBLOCK) /* its rotation as adjacent swaps up to the block start */
			for (uint32_t p = u->m.slot, t = u->aux; p-- > t && !rc;)
				rc = st_schedule_add_swap(out, name, p, err);
		for (unsigned t = 0; t < u->nchg && !rc; t++)
			rc = st_schedule_add_ctrl(out, name, u->chg[t].slot, u->chg[t].now, err);
	}
	free(at), free(pos);
	if (!rc && s->rn && st_sched_regcount(s) != sc_rename_origcount(s)) /* a raise: recorded last */
		rc = st_schedule_add_regcount(out, name, st_sched_regcount(s), err);
	return rc;
}

/* With the xblock family: how many schedule moves from j are the swaps of one xblock move (0: none). */
static size_t xblock_run(const st_sched *s, const st_schedule *sch, size_t i, size_t j)
{
	st_schedule_move sm = st_schedule_move_at(sch, i, j);
	if (!(s->m.flags & ST_SCHED_XBLOCK) || (size_t)sm.slot + 1 >= s->m.n)
		return 0;
	uint32_t t = sc_xblock_target(s, sm.slot + 1), nm = (uint32_t)st_schedule_move_count(sch, i);
	if (t > sm.slot || j + (sm.slot - t) >= nm)
		return 0;
	for (uint32_t d = 0; d <= sm.slot - t; d++) {
		st_schedule_move x = st_schedule_move_at(sch, i, j + d);
		if (x.is_ctrl || x.slot != sm.slot - d)
			return 0;
	}
	st_move x = {ST_MOVE_XBLOCK, 0, sm.slot + 1, {0}};
	return sc_check_xblock(s, x, NULL, NULL, NULL, NULL) == ST_OK ? sm.slot - t + 1 : 0;
}

st_status st_sched_replay(st_sched *s, const st_schedule *sch, size_t i, st_error *err)
{
	const char *kn = st_schedule_kernel_name(sch, i);
	if (!kn)
		return st_error_set(err, ST_EINVAL, "schedule kernel index %zu out of range", i);
	if (st_schedule_is_permutation(sch, i))
		return st_error_set(err, ST_EUNSUPPORTED,
				    "kernels.%s: a permutation cannot be replayed move by move (give swaps or moves)", kn);
	if (st_schedule_pipe_count(sch, i))
		return st_error_set(err, ST_EUNSUPPORTED, "kernels.%s: pipe rotations are not moves to replay (st_sched_rewrite applies them)", kn);
	size_t nm = st_schedule_move_count(sch, i);
	st_status rc0 = sc_rename_replay_limit(s, sch, i, err);
	if (rc0)
		return st_error_wrap(err, "kernels.%s", kn);
	for (size_t j = 0; j < nm; j++) {
		st_schedule_move sm = st_schedule_move_at(sch, i, j);
		st_move mv = {sm.is_ctrl ? ST_MOVE_CTRL : ST_MOVE_SWAP, 0, sm.slot, sm.ctrl};
		if (sm.is_ctrl == ST_SCHEDULE_REGCOUNT) { /* the raise the renames before it needed */
			if (st_sched_regcount(s) != sm.reg)
				return st_error_set(err, ST_EILLEGAL, "kernels.%s.moves[%zu]: register count %u is not the %u the renames need",
						    kn, j, sm.reg, st_sched_regcount(s));
			continue;
		}
		if (sm.is_ctrl == ST_SCHEDULE_FIELD) { /* a rename's effect: the model must have made it */
			static const uint8_t byte[4] = {2, 3, 4, 8};
			if (sm.slot >= s->m.n || sc_rename_field(s, s->at[sm.slot], byte[sm.field & 3]) != sm.reg)
				return st_error_set(err, ST_EILLEGAL, "kernels.%s.moves[%zu]: register field %c of slot %u is not R%u after the rename before it",
						    kn, j, "dabc"[sm.field & 3], sm.slot, sm.reg);
			continue;
		}
		if (sm.is_ctrl == ST_SCHEDULE_RENAME)
			mv = (st_move){ST_MOVE_RENAME, sm.reg, sm.slot, {0}};
		size_t run = sm.is_ctrl ? 0 : xblock_run(s, sch, i, j);
		if (run) { /* swaps p, p-1, ..., t carrying slot p+1 to its block start: one xblock move */
			st_move x = {ST_MOVE_XBLOCK, 0, sm.slot + 1, {0}};
			if (st_sched_apply(s, x, err))
				return st_error_wrap(err, "kernels.%s.moves[%zu]", kn, j);
			j += run - 1;
			continue;
		}
		if (sm.is_ctrl == 1 && sm.slot < s->m.n && (s->m.flags & ST_SCHED_WAIT)) {
			/* waits it drops: each must be a legal wait move (whose own fix-up adds the later wait) */
			unsigned drop = s->ctrl[s->at[sm.slot]].wait & ~sm.ctrl.wait & 0x3fu;
			for (uint8_t k = 0; k < 6 && drop; k++) {
				st_move w = {ST_MOVE_WAIT, k, sm.slot, {0}};
				if ((drop >> k & 1) && st_sched_apply(s, w, err))
					return st_error_wrap(err, "kernels.%s.moves[%zu]", kn, j);
			}
		}
		if (sm.is_ctrl == 1 && sm.slot < s->m.n && (s->m.flags & ST_SCHED_SB)) {
			/* a changed write or read SB: a legal SB move (whose fix-up adds the wait on the new SB) */
			st_ctrl now = s->ctrl[s->at[sm.slot]];
			for (unsigned rd = 0; rd < 2; rd++) {
				unsigned was = rd ? now.rbar : now.wbar, to = rd ? sm.ctrl.rbar : sm.ctrl.wbar;
				st_move b = {ST_MOVE_SB, (uint8_t)(8 * rd + (to & 7)), sm.slot, {0}};
				if (was != to && was < 6 && to < 6 && st_sched_apply(s, b, err))
					return st_error_wrap(err, "kernels.%s.moves[%zu]", kn, j);
			}
		}
		if (sm.is_ctrl == 1 && sm.slot < s->m.n && !memcmp(&s->ctrl[s->at[sm.slot]], &sm.ctrl, sizeof sm.ctrl))
			continue; /* a fix-up the model already made */
		st_status rc = st_sched_apply(s, mv, err);
		if (rc)
			return st_error_wrap(err, "kernels.%s.moves[%zu]", kn, j);
	}
	return ST_OK;
}

st_status st_sched_rewrite(const st_cubin *c, const st_schedule *sch, const st_sass_opts *o, st_cubin **out,
			   st_error *err)
{
	*out = NULL;
	size_t nk = st_schedule_kernel_count(sch);
	st_sass_kernel **ks = calloc(nk ? nk : 1, sizeof *ks);
	st_sched **ss = calloc(nk ? nk : 1, sizeof *ss);
	st_cubin *work = NULL;
	st_status rc = ks && ss ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
	for (size_t i = 0; i < nk && !rc; i++) {
		const char *kn = st_schedule_kernel_name(sch, i);
		if (st_cubin_find_kernel(c, kn) == ST_CUBIN_NONE)
			rc = st_error_set(err, ST_ENOTFOUND, "%s: no kernel named '%s' (kernels.%s of the schedule)",
					  st_cubin_name(c), kn, kn);
		else if (!(rc = st_sass_decode(c, kn, o, &ks[i], err)) && !st_schedule_is_permutation(sch, i) &&
			 !st_schedule_pipe_count(sch, i) && !(rc = st_sched_new(ks[i], c, ST_SCHED_WIDE | ST_SCHED_WAIT | ST_SCHED_SB | ST_SCHED_RENAME | ST_SCHED_XBLOCK, &ss[i], err)))
			rc = st_sched_replay(ss[i], sch, i, err);
	}
	if (!rc) {
		size_t size;
		const uint8_t *data = st_cubin_data(c, &size);
		rc = st_cubin_open_mem(data, size, st_cubin_name(c), &work, err);
	}
	if (!rc) /* rotations first, on still unmodified kernels; the checker judges each */
		rc = sp_rewrite_pipes(c, sch, o, work, err);
	for (size_t i = 0; i < nk && !rc; i++) {
		const char *kn = st_schedule_kernel_name(sch, i);
		size_t k = st_cubin_find_kernel(work, kn);
		if (ss[i] || st_schedule_pipe_count(sch, i)) {
			rc = ss[i] ? st_sched_to_cubin(ss[i], work, k, err) : ST_OK;
			continue;
		}
		/* a permutation: apply it, then the independent checker judges the result */
		size_t n = st_cubin_kernel(work, k)->insn_count;
		uint32_t *perm = malloc((n ? n : 1) * sizeof *perm);
		rc = perm ? st_schedule_permutation(sch, i, n, perm, err) : st_error_set(err, ST_ENOMEM, "out of memory");
		if (!rc)
			rc = st_cubin_permute(work, k, perm, n, err);
		free(perm);
		size_t bad = 0;
		st_error e2 = {0};
		if (!rc && st_check_kernel(c, work, kn, o, NULL, NULL, &bad, &e2))
			rc = st_error_set(err, e2.code ? e2.code : ST_EILLEGAL, "kernels.%s.permutation: %s", kn, e2.msg);
	}
	for (size_t i = 0; i < nk; i++) {
		st_sched_free(ss ? ss[i] : NULL);
		st_sass_free(ks ? ks[i] : NULL);
	}
	free(ss);
	free(ks);
	if (rc) {
		st_cubin_free(work);
		return rc;
	}
	*out = work;
	return ST_OK;
}
