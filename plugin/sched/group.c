/* The group form of hoist/sink (ST_MOVE_HOIST arg 8..15, docs/sched.md "Group hoist"): a
 * global/shared/constant load together with the address arithmetic of its block that feeds only
 * it moves by k slots as one move.  A group step moves every member one slot (up: top member
 * first, each passing the non-member just above it; down: the load first, each passing the
 * non-member just below it), so after k steps every member sits k slots from where it was, in the
 * same relative order, and the non-members keep theirs.  Every swap of every step is checked by
 * the swap rules in the state the previous ones left; the move is legal iff all are.  So, like a
 * single hoist, it adds no legality rule: which groups exist only decides which moves are offered.
 * Membership is a static dataflow fact (sc_group_prepare) plus the current slots of the block. */
#include "sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A load that may lead a group: global, shared or constant, not a store/atomic/async copy. */
static int group_load(const sc_model *m, uint32_t x)
{
	const st_sass_insn *in = &m->in[x];
	if ((m->si[x].flags & (SC_FIXED | SC_SPECIAL | SC_UNKNOWN)) || !(in->flags & ST_F_LOAD) ||
	    (in->flags & ST_F_ATOMIC) || ((in->flags & ST_F_STORE) && !(in->flags & ST_F_ASYNC)))
		return 0;
	return in->space == ST_SPACE_GLOBAL || in->space == ST_SPACE_SHARED || in->space == ST_SPACE_CONST;
}

/* A producer candidate: fixed-latency math whose every result is a R/UR/P/UP register. */
static int group_producer(const sc_model *m, uint32_t x)
{
	const st_sass_insn *in = &m->in[x];
	if (in->cls != ST_CLASS_ALU || !(m->si[x].flags & SC_ALU) ||
	    (m->si[x].flags & (SC_FIXED | SC_SPECIAL | SC_UNKNOWN | SC_VARLAT)) || !in->ndefs)
		return 0;
	for (unsigned d = 0; d < in->ndefs; d++)
		if (in->defs[d].file > ST_RF_UP)
			return 0;
	return 1;
}

static int reads_unit(const st_sass_insn *x, unsigned file, unsigned r)
{
	for (unsigned u = 0; u < x->nuses; u++)
		if (x->uses[u].file == file && r >= x->uses[u].index && r < (unsigned)x->uses[u].index + x->uses[u].count)
			return 1;
	return 0;
}

static int kills_unit(const st_sass_insn *x, unsigned file, unsigned r)
{
	if (x->guard >= 0)
		return 0; /* a guarded write may leave the old value */
	for (unsigned d = 0; d < x->ndefs; d++)
		if (x->defs[d].file == file && r >= x->defs[d].index && r < (unsigned)x->defs[d].index + x->defs[d].count)
			return 1;
	return 0;
}

/* Whether register (file, r), live at the end of block b, may be read on some path before an
 * unguarded write: a search over the successor blocks.  A block that ends in a branch other than
 * BRA/EXIT (BRX, RET, CALL, ...) counts as a reader (its successors are not known). */
static int read_after(const sc_model *m, size_t b0, unsigned file, unsigned r, uint8_t *seen, uint32_t *stack)
{
	size_t nb = st_sass_block_count(m->k), sp = 0;
	memset(seen, 0, nb);
	uint32_t first, count;
	int32_t succ[2];
	st_sass_block(m->k, b0, &first, &count, succ);
	const st_sass_insn *last = &m->in[first + count - 1];
	if ((last->flags & ST_F_BRANCH) && strncmp(last->opcode, "BRA", 3) && strncmp(last->opcode, "EXIT", 4))
		return 1;
	for (int t = 0; t < 2; t++)
		if (succ[t] >= 0 && !seen[succ[t]]++)
			stack[sp++] = (uint32_t)succ[t];
	while (sp) {
		size_t b = stack[--sp];
		st_sass_block(m->k, b, &first, &count, succ);
		int killed = 0;
		for (uint32_t i = first; i < first + count && !killed; i++) {
			if (reads_unit(&m->in[i], file, r))
				return 1;
			killed = kills_unit(&m->in[i], file, r);
		}
		last = &m->in[first + count - 1];
		if (!killed && (last->flags & ST_F_BRANCH) && strncmp(last->opcode, "BRA", 3) &&
		    strncmp(last->opcode, "EXIT", 4))
			return 1;
		for (int t = 0; t < 2 && !killed; t++)
			if (succ[t] >= 0 && !seen[succ[t]]++)
				stack[sp++] = (uint32_t)succ[t];
	}
	return 0;
}

/* The readers of x's results (every unit of every def, up to its next unguarded write), all in
 * x's block, at most SC_GROUP_MAX - 1 of them; 0 when x cannot be a producer. */
static unsigned find_readers(const sc_model *m, uint32_t x, uint32_t *rd, uint8_t *seen, uint32_t *stack)
{
	const st_sass_insn *in = &m->in[x];
	unsigned n = 0;
	uint32_t end = m->blast[m->si[x].block];
	for (unsigned d = 0; d < in->ndefs; d++)
		for (unsigned r = in->defs[d].index; r < (unsigned)in->defs[d].index + in->defs[d].count; r++) {
			unsigned f = in->defs[d].file, killed = 0;
			for (uint32_t i = x + 1; i <= end && !killed; i++) {
				if (reads_unit(&m->in[i], f, r)) {
					unsigned k = 0;
					while (k < n && rd[k] != i)
						k++;
					if (k == n && n == SC_GROUP_MAX - 1)
						return 0;
					rd[k] = i;
					n += k == n;
				}
				killed = kills_unit(&m->in[i], f, r);
			}
			if (!killed && read_after(m, m->si[x].block, f, r, seen, stack))
				return 0; /* read in another block (or maybe) */
		}
	return n;
}

/* Static: per original index, the readers of its results (order of the original kernel; legal
 * moves keep every RAW/WAR/WAW order, so they are the readers in every reachable state). */
st_status sc_group_prepare(st_sched *s, st_error *err)
{
	const sc_model *m = &s->m;
	size_t nb = st_sass_block_count(m->k);
	s->gread = calloc((m->n ? m->n : 1) * (SC_GROUP_MAX - 1), sizeof *s->gread);
	s->ngread = calloc(m->n ? m->n : 1, 1);
	uint8_t *seen = malloc(nb ? nb : 1);
	uint32_t *stack = malloc((nb ? nb : 1) * sizeof *stack);
	if (!s->gread || !s->ngread || !seen || !stack) {
		free(seen);
		free(stack);
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	}
	for (uint32_t x = 0; x < m->n; x++)
		if (group_producer(m, x))
			s->ngread[x] = (uint8_t)find_readers(m, x, &s->gread[(size_t)x * (SC_GROUP_MAX - 1)], seen, stack);
	free(seen);
	free(stack);
	return ST_OK;
}

unsigned sc_group_members(const st_sched *s, uint32_t slot, uint32_t mem[SC_GROUP_MAX])
{
	const sc_model *m = &s->m;
	uint32_t L = s->at[slot], idx[SC_GROUP_MAX], n = 1;
	if (!s->ngread || !group_load(m, L))
		return 0;
	idx[0] = L;
	uint32_t first = m->bfirst[m->si[L].block];
	for (uint32_t q = slot; q-- > first && slot - q <= SC_HOIST_MAX && n < SC_GROUP_MAX;) {
		uint32_t P = s->at[q], nr = s->ngread[P], all = nr > 0;
		for (unsigned r = 0; r < nr && all; r++) {
			unsigned k = 0;
			while (k < n && idx[k] != s->gread[(size_t)P * (SC_GROUP_MAX - 1) + r])
				k++;
			all = k < n;
		}
		if (all)
			idx[n++] = P;
	}
	for (unsigned i = 0; n > 1 && i < n; i++)
		mem[i] = s->pos[idx[n - 1 - i]]; /* ascending slots, the load last */
	return n > 1 ? n : 0;
}

/* The swap of member i (of n, ascending slots) at step t: up, top member first; down, load first. */
static uint32_t step_swap(const uint32_t *mem, unsigned n, unsigned j, unsigned t, int dir)
{
	return dir < 0 ? mem[j] - t - 1 : mem[n - 1 - j] + t;
}

unsigned sc_group_reach(st_sched *s, const uint32_t *mem, unsigned nm, int dir, uint32_t *lo, uint32_t *hi,
			st_error *err)
{
	sc_fix fix[SC_GROUP_MAX * SC_HOIST_MAX];
	uint32_t at[SC_GROUP_MAX * SC_HOIST_MAX];
	unsigned n = 0, steps = 0, ok = 1;
	*lo = mem[0] < *lo ? mem[0] : *lo;
	for (; ok && steps < SC_HOIST_MAX; steps += ok)
		for (unsigned j = 0; j < nm && ok; j++) {
			uint32_t sw = step_swap(mem, nm, j, steps, dir), l, h;
			if (dir < 0 ? sw == UINT32_MAX : (size_t)sw + 1 >= s->m.n) {
				ok = 0;
				break;
			}
			st_move mv = {ST_MOVE_SWAP, 0, sw, {0}};
			st_status rc = sc_check(s, mv, &fix[n], &l, &h, err);
			*lo = l < *lo ? l : *lo;
			*hi = h > *hi ? h : *hi;
			if (rc)
				ok = 0;
			else {
				sc_swap_raw(s, sw, &fix[n]);
				at[n++] = sw;
			}
		}
	for (unsigned t = n; t-- > 0;)
		sc_unswap_raw(s, at[t], &fix[t]);
	return steps;
}

/* The swaps of a hoist move (single or group), in order; 0 when it is not legal now. */
unsigned sc_hoist_swaps(const st_sched *s, st_move m, uint32_t sw[SC_GROUP_MAX * SC_HOIST_MAX])
{
	uint32_t lo = m.slot, hi = m.slot, mem[SC_GROUP_MAX] = {m.slot};
	int dir = m.arg % 8 < 4 ? -1 : 1;
	unsigned nm = m.arg < SC_HOIST_VARIANTS ? 1 : sc_group_members(s, m.slot, mem), d = 0, n = 0;
	if (nm == 1)
		d = sc_hoist_dist(m.arg, sc_hoist_reach((st_sched *)s, m.slot, dir, &lo, &hi, NULL));
	else if (nm)
		d = sc_hoist_dist(m.arg - SC_HOIST_VARIANTS, sc_group_reach((st_sched *)s, mem, nm, dir, &lo, &hi, NULL));
	for (unsigned t = 0; t < d; t++)
		for (unsigned j = 0; j < nm; j++)
			sw[n++] = step_swap(mem, nm, j, t, dir);
	return n;
}

/* Group variants (arg 8..15): legal when the load at m.slot has a group and the chain of steps the
 * variant names is legal; the refusal names the swap that stops it. */
st_status sc_check_group(const st_sched *s, st_move m, uint32_t *rlo, uint32_t *rhi, st_error *err)
{
	static const char *const v[4] = {"2", "4", "8", "far"};
	uint32_t lo = m.slot, hi = m.slot, mem[SC_GROUP_MAX];
	int dir = m.arg % 8 < 4 ? -1 : 1;
	const char *name = dir < 0 ? "group hoist" : "group sink", *op = s->m.in[s->at[m.slot]].opcode;
	unsigned nm = sc_group_members(s, m.slot, mem);
	uint32_t first = s->m.bfirst[s->m.si[s->at[m.slot]].block];
	lo = m.slot - first > SC_HOIST_MAX ? m.slot - SC_HOIST_MAX : first; /* membership reads these */
	st_error e2 = {0};
	unsigned reach = nm ? sc_group_reach((st_sched *)s, mem, nm, dir, &lo, &hi, err ? &e2 : NULL) : 0;
	if (rlo)
		*rlo = lo;
	if (rhi)
		*rhi = hi;
	if (!nm)
		return st_error_set(err, ST_EILLEGAL, "%s 0x%x (%s): not a global/shared/constant load with address "
				    "arithmetic that feeds only it", name, 16 * m.slot, op);
	if (sc_hoist_dist(m.arg - SC_HOIST_VARIANTS, reach))
		return ST_OK;
	return st_error_set(err, ST_EILLEGAL, "%s 0x%x %s %s (%s + %u): %u step%s in a row legal%s%s", name, 16 * m.slot,
			    dir < 0 ? "up" : "down", v[m.arg % 4], op, nm - 1, reach, reach == 1 ? "" : "s",
			    e2.msg[0] ? "; then " : "", e2.msg);
}

int sc_group_describe(const st_sched *s, st_move m, char *buf, size_t n)
{
	static const char *const v[4] = {"2", "4", "8", "far"};
	uint32_t sw[SC_GROUP_MAX * SC_HOIST_MAX], mem[SC_GROUP_MAX] = {0};
	int up = m.arg % 8 < 4;
	unsigned nm = sc_group_members(s, m.slot, mem), ns = nm ? sc_hoist_swaps(s, m, sw) : 0;
	const char *op = s->m.in[s->at[m.slot]].opcode;
	if (!ns)
		return snprintf(buf, n, "group %s 0x%x %s %s (%s; not legal now)", up ? "hoist" : "sink", 16 * m.slot,
				up ? "up" : "down", v[m.arg % 4], op);
	unsigned d = ns / nm;
	int len = snprintf(buf, n, "group %s 0x%x %s %s -> 0x%x (%s with", up ? "hoist" : "sink", 16 * m.slot,
			   up ? "up" : "down", v[m.arg % 4], 16 * (up ? m.slot - d : m.slot + d), op);
	for (unsigned i = 0; i + 1 < nm && len >= 0 && (size_t)len < n; i++)
		len += snprintf(buf + len, n - (size_t)len, " %s 0x%x", s->m.in[s->at[mem[i]]].opcode, 16 * mem[i]);
	if (len >= 0 && (size_t)len < n)
		len += snprintf(buf + len, n - (size_t)len, ")");
	return len;
}
