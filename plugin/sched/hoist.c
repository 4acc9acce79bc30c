/* Hoist / sink (ST_MOVE_HOIST, docs/sched.md "Hoist and sink"): one instruction moves k slots
 * within its block in one move.  The move IS the chain of k adjacent swaps that carries it there,
 * each checked by the swap rules (check_move.c) in the state the previous ones left and applied
 * with its own fix-ups; it is legal iff every swap of the chain is.  So a hoist adds no legality
 * rule of its own: what it can reach is exactly what a walk of swaps could reach, in one step.
 * Checking a chain applies it tentatively to the state and restores it exactly before returning. */
#include "sched_internal.h"

#include <stdio.h>
#include <string.h>

void sc_swap_raw(st_sched *s, uint32_t slot, const sc_fix *fix)
{
	uint32_t a = s->at[slot], b = s->at[slot + 1];
	s->at[slot] = b;
	s->at[slot + 1] = a;
	s->pos[a] = slot + 1;
	s->pos[b] = slot;
	for (unsigned t = 0; fix && t < fix->n; t++)
		s->ctrl[fix->chg[t].idx] = fix->chg[t].now;
}

void sc_unswap_raw(st_sched *s, uint32_t slot, const sc_fix *fix)
{
	for (unsigned t = fix ? fix->n : 0; t-- > 0;)
		s->ctrl[fix->chg[t].idx] = fix->chg[t].old;
	uint32_t a = s->at[slot], b = s->at[slot + 1];
	s->at[slot] = b;
	s->at[slot + 1] = a;
	s->pos[a] = slot + 1;
	s->pos[b] = slot;
}

unsigned sc_hoist_reach(st_sched *s, uint32_t slot, int dir, uint32_t *lo, uint32_t *hi, st_error *err)
{
	sc_fix fix[SC_HOIST_MAX];
	uint32_t at[SC_HOIST_MAX];
	unsigned n = 0;
	uint32_t p = slot;
	while (n < SC_HOIST_MAX && (dir < 0 ? p > 0 : (size_t)p + 1 < s->m.n)) {
		uint32_t sw = dir < 0 ? p - 1 : p, l, h;
		st_move mv = {ST_MOVE_SWAP, 0, sw, {0}};
		st_status rc = sc_check(s, mv, &fix[n], &l, &h, err);
		*lo = l < *lo ? l : *lo;
		*hi = h > *hi ? h : *hi;
		if (rc)
			break;
		sc_swap_raw(s, sw, &fix[n]);
		at[n++] = sw;
		p = dir < 0 ? p - 1 : p + 1;
	}
	for (unsigned t = n; t-- > 0;)
		sc_unswap_raw(s, at[t], &fix[t]);
	return n;
}

unsigned sc_hoist_dist(unsigned arg, unsigned reach)
{
	static const unsigned k[3] = {2, 4, 8};
	unsigned v = arg % 4;
	if (arg >= SC_HOIST_VARIANTS)
		return 0;
	if (v < 3)
		return reach >= k[v] ? k[v] : 0;
	return reach >= 3 && reach != 4 && reach != 8 ? reach : 0; /* "far": not a duplicate of another move */
}

/* Legal when the chain the variant names is; *dist (may be NULL) gets its length.  The state is
 * const to callers: the tentative chain is undone before this returns. */
st_status sc_check_hoist(const st_sched *s, st_move m, uint32_t *rlo, uint32_t *rhi, st_error *err)
{
	uint32_t lo = m.slot, hi = m.slot;
	if (!(s->m.flags & ST_SCHED_HOIST))
		return st_error_set(err, ST_EILLEGAL, "hoist 0x%x: the hoist family is not enabled", 16 * m.slot);
	if (m.arg >= SC_HOIST_ARGS)
		return st_error_set(err, ST_EINVAL, "hoist 0x%x: variant %u (0..%d)", 16 * m.slot, m.arg, SC_HOIST_ARGS - 1);
	if (m.arg >= SC_HOIST_VARIANTS) /* the group form, group.c */
		return sc_check_group(s, m, rlo, rhi, err);
	int dir = m.arg < 4 ? -1 : 1;
	st_error e2 = {0};
	unsigned reach = sc_hoist_reach((st_sched *)s, m.slot, dir, &lo, &hi, err ? &e2 : NULL);
	if (rlo)
		*rlo = lo;
	if (rhi)
		*rhi = hi;
	if (sc_hoist_dist(m.arg, reach))
		return ST_OK;
	if (err) {
		static const char *const v[4] = {"2", "4", "8", "far"};
		st_error_set(err, ST_EILLEGAL, "%s 0x%x %s %s (%s): %u swap%s in a row legal%s%s",
			     dir < 0 ? "hoist" : "sink", 16 * m.slot, dir < 0 ? "up" : "down", v[m.arg % 4],
			     s->m.in[s->at[m.slot]].opcode, reach, reach == 1 ? "" : "s", e2.msg[0] ? "; then " : "", e2.msg);
	}
	return ST_EILLEGAL;
}

/* ---- families ------------------------------------------------------------------------------------ */
/* The opt-in move families in the order of their names ("swap" and "ctrl" come first). */
static const struct {
	const char *name;
	unsigned flag;
} family_bits[] = {{"hoist", ST_SCHED_HOIST}, {"wait", ST_SCHED_WAIT},     {"sb", ST_SCHED_SB},
		   {"rename", ST_SCHED_RENAME}, {"xblock", ST_SCHED_XBLOCK}, {"pipe", ST_SCHED_PIPE}};

const char *st_sched_families(unsigned flags, char *buf, size_t n)
{
	/* every name at once is "swap,ctrl,hoist,wait,sb,rename,xblock,pipe": 43 bytes with its NUL */
	if (!n)
		return buf;
	int len = snprintf(buf, n, "%s", flags & ST_SCHED_NO_CTRL ? "swap" : "swap,ctrl");
	for (size_t b = 0; b < sizeof family_bits / sizeof family_bits[0] && len > 0 && (size_t)len < n; b++)
		if (flags & family_bits[b].flag)
			len += snprintf(buf + len, n - (size_t)len, ",%s", family_bits[b].name);
	return buf;
}

st_status st_sched_parse_families(const char *list, unsigned *flags, st_error *err)
{
	unsigned f = *flags | ST_SCHED_NO_CTRL;
	for (size_t b = 0; b < sizeof family_bits / sizeof family_bits[0]; b++)
		f &= ~family_bits[b].flag;
	int swap = 0;
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ","), b = 0, nb = sizeof family_bits / sizeof family_bits[0];
		while (b < nb && !(strlen(family_bits[b].name) == n && !strncmp(p, family_bits[b].name, n)))
			b++;
		if (n == 4 && !strncmp(p, "swap", 4))
			swap = 1;
		else if (n == 4 && !strncmp(p, "ctrl", 4))
			f &= ~(unsigned)ST_SCHED_NO_CTRL;
		else if (b < nb)
			f |= family_bits[b].flag;
		else
			return st_error_set(err, ST_EINVAL,
					    "families: unknown family '%.*s' (swap, ctrl, hoist, wait, sb, rename, xblock, pipe)",
					    (int)n, p);
		p += n + (p[n] == ',');
	}
	if (!swap)
		return st_error_set(err, ST_EINVAL, "families: '%s' lacks swap (every family list includes it)", list ? list : "");
	*flags = f;
	return ST_OK;
}
