/* The pipe checker's rules on the original reading (docs/sched.md "Checker: pipe"): P1 shape, P2
 * closure, P3 shift-correct inputs and feeders, P4 interference with its own liveness, P6 guards and
 * renames, P7 the peel.  Registers are judged one unit (file, index) at a time. */
#include "check_pipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has(const st_sass_reg *r, unsigned n, unsigned file, unsigned idx)
{
	for (unsigned i = 0; i < n; i++)
		if (r[i].file == file && idx >= r[i].index && idx < (unsigned)r[i].index + r[i].count)
			return true;
	return false;
}
bool cp_writes(const st_sass_insn *x, unsigned f, unsigned i) { return has(x->defs, x->ndefs, f, i); }
bool cp_reads(const st_sass_insn *x, unsigned f, unsigned i) { return has(x->uses, x->nuses, f, i); }

static void reg_name(char *b, size_t n, unsigned f, unsigned i)
{
	st_sass_reg_str(b, n, f, i);
}

/* The last instruction of B before `before` writing the unit, CP_NONE when none. */
static uint32_t last_writer(const cp *p, const cp_loop *lo, uint32_t before, unsigned f, unsigned i)
{
	for (uint32_t w = before; w-- > lo->f;)
		if (cp_writes(&p->in[w], f, i))
			return w;
	return CP_NONE;
}

/* How many instructions of B write the unit; *one: the first of them. */
static unsigned writers(const cp *p, const cp_loop *lo, unsigned f, unsigned i, uint32_t *one)
{
	unsigned n = 0;
	*one = CP_NONE;
	for (uint32_t w = lo->f; w <= lo->l; w++)
		if (cp_writes(&p->in[w], f, i) && !n++)
			*one = w;
	return n;
}

static bool fixed_alu(const st_sass_insn *x)
{
	return x->cls == ST_CLASS_ALU && x->lat_op >= 0 && !x->lat_cond && x->ctrl.wbar == ST_SB_NONE &&
	       x->ctrl.rbar == ST_SB_NONE && !(x->flags & (ST_F_VARLAT | ST_F_LOAD | ST_F_STORE | ST_F_ATOMIC | ST_F_ASYNC |
							  ST_F_BRANCH | ST_F_COLLECTIVE | ST_F_BARRIER | ST_F_FENCE));
}

static bool is_load(const st_sass_insn *x)
{
	return (x->flags & ST_F_LOAD) && (x->flags & ST_F_VARLAT) && x->space == ST_SPACE_GLOBAL &&
	       !strncmp(x->opcode, "LDG", 3) && (x->opcode[3] == 0 || x->opcode[3] == '.');
}

/* P3c: U the only writer of the unit in B, unguarded fixed-latency ALU whose inputs B never writes,
 * and every reader of the unit in B after U: U computes the same value every pass. */
static bool feeder(const cp *p, const cp_loop *lo, uint32_t U, unsigned f, unsigned i)
{
	uint32_t one;
	const st_sass_insn *u = &p->in[U];
	if (writers(p, lo, f, i, &one) != 1 || one != U || !fixed_alu(u) || u->guard >= 0)
		return false;
	for (unsigned k = 0; k < u->nuses; k++)
		for (unsigned x = 0; x < u->uses[k].count; x++)
			if (writers(p, lo, u->uses[k].file, u->uses[k].index + x, &one))
				return false;
	for (uint32_t r = lo->f; r <= U; r++)
		if (cp_reads(&p->in[r], f, i))
			return false;
	return true;
}

/* P2: the closure of the moved loads, feeders marked apart. */
void cp_closure(cp *p, cp_loop *lo)
{
	uint32_t *work = malloc((lo->l - lo->f + 1) * sizeof *work), nw = 0; /* each B position pushed once */
	if (!work) {
		cp_flag(p, lo->tp, "P2", "out of memory");
		return;
	}
	for (uint32_t i = lo->f; i < lo->l; i++)
		if (lo->mem[i - lo->f] && is_load(&p->in[i]))
			lo->clo[i - lo->f] = 1, work[nw++] = i;
	while (nw) {
		uint32_t q = work[--nw];
		const st_sass_insn *x = &p->in[q];
		for (unsigned pass = 0; pass < 2; pass++) {
			const st_sass_reg *r = pass ? x->defs : x->uses;
			unsigned n = pass ? (x->guard >= 0 ? x->ndefs : 0) : x->nuses;
			for (unsigned k = 0; k < n; k++)
				for (unsigned u = 0; u < r[k].count; u++) {
					uint32_t w = last_writer(p, lo, q, r[k].file, r[k].index + u);
					if (w == CP_NONE || lo->clo[w - lo->f])
						continue;
					if (feeder(p, lo, w, r[k].file, r[k].index + u)) {
						lo->feed[w - lo->f] = 1;
					} else {
						lo->clo[w - lo->f] = 1, work[nw++] = w;
					}
				}
		}
	}
	free(work);
	unsigned count = 0;
	for (uint32_t i = lo->f; i < lo->l; i++) {
		const st_sass_insn *x = &p->in[i];
		uint8_t m = lo->mem[i - lo->f], c = lo->clo[i - lo->f];
		count += m;
		if (m && !c)
			cp_flag(p, p->inv[i], "P2", "%s from 0x%x moved but is not in the closure of the moved loads", x->opcode, 16 * i);
		else if (c && !m)
			cp_flag(p, p->inv[i], "P2", "%s at 0x%x is in the closure of the moved loads but was not moved", x->opcode,
				16 * i);
		else if (m && !is_load(x) && !fixed_alu(x))
			cp_flag(p, p->inv[i], "P2", "%s from 0x%x is neither an LDG nor fixed-latency ALU", x->opcode, 16 * i);
		if (m && i > lo->p)
			lo->p = i;
	}
	if (count > CP_MAX_MEMBERS)
		cp_flag(p, lo->tp, "P2", "loop 0x%x: %u instructions moved (at most %d)", 16 * lo->f, count, CP_MAX_MEMBERS);
	if (!count)
		cp_flag(p, lo->tp, "P2", "loop 0x%x: a peel but no load moved", 16 * lo->f);
}

/* P1: what B may hold. */
void cp_shape(cp *p, cp_loop *lo)
{
	if (p->sm < 80 || p->sm > 90)
		cp_flag(p, lo->tp, "P1", "sm_%d: only sm_80..sm_90", p->sm);
	for (uint32_t i = lo->f; i < lo->l; i++) {
		const st_sass_insn *x = &p->in[i];
		bool mem = x->cls == ST_CLASS_MEMORY || (x->flags & (ST_F_LOAD | ST_F_STORE | ST_F_ATOMIC));
		if ((x->flags & (ST_F_STORE | ST_F_ATOMIC | ST_F_ASYNC | ST_F_BARRIER | ST_F_FENCE | ST_F_COLLECTIVE |
				 ST_F_BRANCH)) ||
		    x->cls == ST_CLASS_SYNC || x->cls == ST_CLASS_TENSOR || x->cls == ST_CLASS_CONTROL ||
		    (mem && !(is_load(x) && x->ndefs && x->defs[0].file == ST_RF_R)))
			cp_flag(p, p->inv[i], "P1", "%s at 0x%x: loop 0x%x holds more than fixed-latency ALU and global loads",
				x->opcode, 16 * i, 16 * lo->f);
	}
	uint32_t e = last_writer(p, lo, lo->l, ST_RF_P, (unsigned)lo->pe);
	lo->e = e;
	if (e == CP_NONE)
		cp_flag(p, p->inv[lo->l], "P1", "loop 0x%x: its branch predicate is not written in the loop", 16 * lo->f);
	else if (lo->mem[e - lo->f])
		cp_flag(p, p->inv[e], "P2", "the exit compare %s from 0x%x moved", p->in[e].opcode, 16 * e);
}

/* No member before q writes the unit: m reads it as an input. */
static bool input(const cp *p, const cp_loop *lo, uint32_t q, unsigned f, unsigned i)
{
	for (uint32_t w = lo->f; w < q; w++)
		if (lo->mem[w - lo->f] && cp_writes(&p->in[w], f, i))
			return false;
	return true;
}

/* P3: every input of every member is invariant, read before its one update, or fed. */
static void inputs(cp *p, cp_loop *lo)
{
	for (uint32_t q = lo->f; q < lo->l; q++) {
		const st_sass_insn *x = &p->in[q];
		for (unsigned k = 0; lo->mem[q - lo->f] && k < x->nuses; k++)
			for (unsigned u = 0; u < x->uses[k].count; u++) {
				unsigned f = x->uses[k].file, i = x->uses[k].index + u;
				uint32_t U;
				unsigned nw = writers(p, lo, f, i, &U);
				if (!input(p, lo, q, f, i) || !nw || (nw == 1 && (U > q || lo->mem[U - lo->f])))
					continue; /* (a), (b); a member writing an input is P4's */
				if (nw == 1 && feeder(p, lo, U, f, i))
					continue; /* (c) */
				char nm[16];
				reg_name(nm, sizeof nm, f, i);
				if (nw == 1)
					cp_flag(p, p->inv[q], "P3", "%s from 0x%x reads %s after its update at 0x%x (not shift-correct)",
						x->opcode, 16 * q, nm, 16 * U);
				else
					cp_flag(p, p->inv[q], "P3", "%s from 0x%x reads %s, written %u times in the loop", x->opcode,
						16 * q, nm, nw);
			}
	}
}

/* The fall-through block after B. */
static size_t exit_block(const cp *p, const cp_loop *lo)
{
	for (size_t b = 0; b < p->nb; b++)
		if (p->bfirst[b] == lo->l + 1)
			return b;
	return (size_t)-1;
}

/* P4 for one unit r the group writes. */
static void interference(cp *p, cp_loop *lo, unsigned f, unsigned i, size_t bx)
{
	char nm[16];
	reg_name(nm, sizeof nm, f, i);
	for (uint32_t q = lo->f; q <= lo->p; q++) {
		const st_sass_insn *x = &p->in[q];
		bool w = cp_writes(x, f, i), r = cp_reads(x, f, i);
		if (!lo->mem[q - lo->f] && (w || r))
			cp_flag(p, p->inv[q], "P4", "%s written by the group is %s by %s at 0x%x before the last member", nm,
				r ? "read" : "written", x->opcode, 16 * q);
		if (lo->mem[q - lo->f] && r && input(p, lo, q, f, i))
			cp_flag(p, p->inv[q], "P4", "%s written by the group is read by member %s at 0x%x from the pass before",
				nm, x->opcode, 16 * q);
	}
	if (cp_reads(&p->in[lo->l], f, i))
		cp_flag(p, p->inv[lo->l], "P4", "%s written by the group is read by the back branch", nm);
	uint32_t at = CP_NONE;
	if (bx == (size_t)-1 || cp_live_into(p, bx, f, i, &at))
		cp_flag(p, p->inv[lo->l], "P4", "%s written by the group is live on the exit of loop 0x%x (read at 0x%x)", nm,
			16 * lo->f, at == CP_NONE ? 0 : 16 * at);
}

/* W: every unit a member writes, an ISETP's renamed destination under its new name; each judged once. */
static void check_w(cp *p, cp_loop *lo)
{
	unsigned seen[256][2], ns = 0;
	size_t bx = exit_block(p, lo);
	for (uint32_t q = lo->f; q < lo->l; q++) {
		const st_sass_insn *x = &p->in[q];
		for (unsigned d = 0; lo->mem[q - lo->f] && d < x->ndefs; d++)
			for (unsigned u = 0; u < x->defs[d].count; u++) {
				unsigned f = x->defs[d].file, i = x->defs[d].index + u, s;
				if (f == ST_RF_P && i < 8 && lo->ren[i] >= 0 && !strncmp(x->opcode, "ISETP", 5))
					continue; /* renamed: its own P6 rule */
				for (s = 0; s < ns && (seen[s][0] != f || seen[s][1] != i); s++)
					;
				if (s < ns || ns == 256)
					continue;
				seen[ns][0] = f, seen[ns++][1] = i;
				interference(p, lo, f, i, bx);
			}
	}
}

/* P6, the guard writer I of a moved load guarded by P g: a moved ISETP the rules may combine. */
static bool guard_writer_ok(cp *p, cp_loop *lo, uint32_t X, uint32_t I)
{
	const st_sass_insn *x = &p->in[X];
	if (I == CP_NONE || !lo->mem[I - lo->f]) {
		cp_flag(p, p->inv[X], "P6", "%s from 0x%x: its guard is not written by a moved instruction in the loop", x->opcode,
			16 * X);
		return false;
	}
	const st_sass_insn *s = &p->in[I];
	const uint8_t *w = p->ocode + 16 * I;
	if (strncmp(s->opcode, "ISETP", 5) || strstr(s->opcode, ".EX") || s->guard >= 0 || cp_bits(w, 84, 3) != 7 ||
	    cp_bits(w, 87, 4) != 7 || cp_bits(w, 74, 2) != 0) {
		cp_flag(p, p->inv[I], "P6", "%s from 0x%x writes the guard of 0x%x but is not ISETP.<cmp>.AND Pg, PT, a, b, PT",
			s->opcode, 16 * I, 16 * X);
		return false;
	}
	return true;
}

/* P6: the rename Pg -> Pf the tuned ISETP shows, when it is one: Pf free in B and dead on the exit. */
static void rename_rule(cp *p, cp_loop *lo, uint32_t I, unsigned g)
{
	unsigned t = cp_bits(p->tcode + 16 * p->inv[I], 81, 3);
	if (t == g || t >= 7)
		return;
	if (lo->ren[g] >= 0 && (unsigned)lo->ren[g] != t) {
		cp_flag(p, p->inv[I], "P6", "P%u renamed to two predicates in one loop", g);
		return;
	}
	lo->ren[g] = (int8_t)t;
	for (uint32_t q = lo->f; q <= lo->l; q++)
		if (cp_reads(&p->in[q], ST_RF_P, t) || cp_writes(&p->in[q], ST_RF_P, t)) {
			cp_flag(p, p->inv[I], "P6", "P%u renamed to P%u, which %s at 0x%x touches in the loop", g, t, p->in[q].opcode,
				16 * q);
			return;
		}
	for (uint32_t q = I + 1; q <= lo->l; q++) { /* nothing outside the group reads I's value under the old name */
		if (!lo->mem[q - lo->f] && cp_reads(&p->in[q], ST_RF_P, g) && last_writer(p, lo, q, ST_RF_P, g) == I)
			cp_flag(p, p->inv[q], "P6", "P%u renamed to P%u, but %s at 0x%x reads the value the ISETP at 0x%x wrote", g, t,
				p->in[q].opcode, 16 * q, 16 * I);
	}
	size_t bx = exit_block(p, lo);
	uint32_t at = CP_NONE;
	if (last_writer(p, lo, lo->l + 1, ST_RF_P, g) == I && (bx == (size_t)-1 || cp_live_into(p, bx, ST_RF_P, g, &at)))
		cp_flag(p, p->inv[I], "P6", "P%u renamed to P%u, but the old name is live on the exit of loop 0x%x (read at 0x%x)",
			g, t, 16 * lo->f, at == CP_NONE ? 0 : 16 * at);
	if (bx == (size_t)-1 || cp_live_into(p, bx, ST_RF_P, t, &at))
		cp_flag(p, p->inv[I], "P6", "P%u renamed to P%u, which is live on the exit of loop 0x%x (read at 0x%x)", g, t,
			16 * lo->f, at == CP_NONE ? 0 : 16 * at);
}

static void guards(cp *p, cp_loop *lo)
{
	for (uint32_t X = lo->f; X < lo->l; X++) {
		const st_sass_insn *x = &p->in[X];
		if (!lo->mem[X - lo->f] || (x->guard < 0 && !is_load(x)))
			continue;
		if (!is_load(x) || (x->guard >= 0 && x->guard_file != ST_RF_P)) {
			cp_flag(p, p->inv[X], "P6", "%s from 0x%x: a guarded member other than a load under a P guard", x->opcode,
				16 * X);
			continue;
		}
		if (x->guard < 0) {
			lo->comb[X - lo->f] = CP_GUARD_CONT;
			continue;
		}
		unsigned g = (unsigned)x->guard;
		uint32_t I = last_writer(p, lo, X, ST_RF_P, g);
		if (!guard_writer_ok(p, lo, X, I))
			continue;
		uint8_t want = x->guard_neg ? CP_OR_BREAK : CP_AND_CONT;
		if (lo->comb[I - lo->f] && lo->comb[I - lo->f] != want)
			cp_flag(p, p->inv[I], "P6", "%s from 0x%x guards loads both as @P%u and @!P%u", p->in[I].opcode, 16 * I, g, g);
		lo->comb[I - lo->f] = want;
		for (uint32_t q = I + 1; q < lo->l; q++)
			if (lo->mem[q - lo->f] && cp_reads(&p->in[q], ST_RF_P, g) && !(is_load(&p->in[q]) && p->in[q].guard == (int)g &&
										  last_writer(p, lo, q, ST_RF_P, g) == I))
				cp_flag(p, p->inv[q], "P6", "%s from 0x%x reads P%u other than as a load's guard", p->in[q].opcode,
					16 * q, g);
		rename_rule(p, lo, I, g);
	}
}

/* P7: the peel holds copies of the feeders and members, in original order. */
static void peel(cp *p, cp_loop *lo)
{
	uint32_t want = 0;
	for (uint32_t i = lo->f; i < lo->l; i++)
		want += lo->mem[i - lo->f] || lo->feed[i - lo->f];
	if (want != lo->L) {
		cp_flag(p, lo->tp, "P7", "loop 0x%x: a peel of %u instructions, the moved ones and their feeders are %u",
			16 * lo->f, lo->L, want);
		lo->bad = true;
		return;
	}
	uint32_t j = lo->tp;
	for (uint32_t i = lo->f; i < lo->l; i++)
		if (lo->mem[i - lo->f] || lo->feed[i - lo->f])
			p->src[j++] = i;
	for (j = lo->tp; j < lo->tp + lo->L; j++) {
		uint32_t i = p->src[j];
		uint8_t w[16];
		memcpy(w, p->tcode + 16 * j, 16); /* the fields P6 may edit, put back */
		cp_set_bits(w, 12, 4, cp_bits(p->ocode + 16 * i, 12, 4));
		if (!strncmp(p->in[i].opcode, "ISETP", 5)) {
			cp_set_bits(w, 74, 2, cp_bits(p->ocode + 16 * i, 74, 2));
			cp_set_bits(w, 81, 3, cp_bits(p->ocode + 16 * i, 81, 3));
			cp_set_bits(w, 87, 4, cp_bits(p->ocode + 16 * i, 87, 4));
		}
		if (!cp_same_word(p->ocode + 16 * i, w, false) || (lo->feed[i - lo->f] && !cp_same_word(p->ocode + 16 * i, p->tcode + 16 * j, false))) {
			cp_flag(p, j, "P7", "the peel's slot 0x%x is not a copy of %s at 0x%x (a copy missing, extra or out of order)",
				16 * j, p->in[i].opcode, 16 * i);
			p->src[j] = CP_NONE;
		}
	}
}

void cp_check_rules(cp *p, cp_loop *lo)
{
	cp_shape(p, lo);
	cp_closure(p, lo);
	guards(p, lo);
	inputs(p, lo);
	check_w(p, lo);
	peel(p, lo);
}
