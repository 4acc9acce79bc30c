/* Trip counts at a launch (loops.h): the back edge's ISETP compares an induction register (one
 * `IADD3 R, R, imm, RZ` / `VIADD R, R, imm` in the body) with a loop-invariant value; both start
 * values are evaluated from the last unpredicated write before the loop in layout order (MOV,
 * IMAD.MOV, CS2R, LDC of a parameter, IADD3, VIADD, IMAD.IADD, IMAD.SHL, SHF.L) and the passes are
 * counted.  The nearest conditional branch before the loop that jumps past it, if any, is
 * evaluated the same way: taken means the loop does not run at that launch.  Anything else
 * (thread-dependent values, other opcodes, a predicated write) leaves the count unknown, with
 * the reason.  Layout order stands in for dominance: a study aid, not a proof. */
#include "loops.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ev {
	const st_sass_kernel *k;
	const lp_params *p;
	char why[120];
} ev;

static int split(const char *s, char tok[6][48])
{
	int n = 0;
	while (*s && n < 6) {
		size_t len = strcspn(s, ",");
		snprintf(tok[n], 48, "%.*s", (int)(len < 47 ? len : 47), s);
		char *dot = strstr(tok[n], ".reuse");
		if (dot)
			*dot = 0;
		n++;
		s += len;
		while (*s == ',' || *s == ' ')
			s++;
	}
	return n;
}

static bool eval_insn(ev *e, uint32_t j, unsigned want, int depth, int64_t *v);

/* "R12" or "UR4" into r. */
static bool reg_tok(const char *t, st_sass_reg *r)
{
	unsigned idx;
	bool u = t[0] == 'U';
	if (sscanf(t + u, "R%u", &idx) != 1 || idx > 255)
		return false;
	*r = (st_sass_reg){(uint16_t)idx, (uint8_t)(u ? ST_RF_UR : ST_RF_R), 1, 0};
	return true;
}

static bool eval_tok(ev *e, const char *t, uint32_t before, int depth, int64_t *v)
{
	bool neg = *t == '-';
	t += neg;
	int64_t x;
	unsigned off;
	char *end;
	st_sass_reg r;
	if (!strcmp(t, "RZ") || !strcmp(t, "URZ")) {
		x = 0;
	} else if ((*t >= '0' && *t <= '9')) {
		x = strtoll(t, &end, 0);
	} else if (sscanf(t, "c[0x0][%x]", &off) == 1) {
		size_t i = 0;
		while (i < e->p->n && e->p->off[i] != off)
			i++;
		if (i == e->p->n)
			return snprintf(e->why, sizeof e->why, "c[0x0][0x%x] is not a known parameter", off), false;
		x = e->p->val[i];
	} else if (reg_tok(t, &r) && depth < 12) {
		const st_sass_insn *in = st_sass_insns(e->k);
		uint32_t j = before;
		while (j-- > 0 && !lp_overlap(in[j].defs, in[j].ndefs, &r, 1, true))
			;
		if (j == UINT32_MAX)
			return snprintf(e->why, sizeof e->why, "%s is not written before 0x%x", t, 16 * before), false;
		if (!eval_insn(e, j, r.index, depth + 1, &x))
			return false;
	} else {
		return snprintf(e->why, sizeof e->why, "operand %s", t), false;
	}
	*v = (int64_t)(int32_t)(uint32_t)(neg ? -x : x);
	return true;
}

/* The value instruction j writes to R`want`. */
static bool eval_insn(ev *e, uint32_t j, unsigned want, int depth, int64_t *v)
{
	const st_sass_insn *x = &st_sass_insns(e->k)[j];
	char t[6][48];
	int n = split(x->operands, t);
	int64_t a, b, c;
	const char *op = x->opcode;
	if (x->guard >= 0)
		return snprintf(e->why, sizeof e->why, "predicated write at 0x%x", x->offset), false;
	if ((!strcmp(op, "MOV") || !strcmp(op, "UMOV")) && n == 2)
		return eval_tok(e, t[1], j, depth, v);
	if ((!strcmp(op, "IMAD.MOV.U32") || !strcmp(op, "IMAD.MOV")) && n == 4)
		return eval_tok(e, t[3], j, depth, v);
	if (!strcmp(op, "CS2R") && n == 2 && !strcmp(t[1], "SRZ"))
		return *v = 0, true;
	unsigned base, off;
	if ((!strcmp(op, "LDC") || !strcmp(op, "LDC.64") || !strcmp(op, "ULDC") || !strcmp(op, "ULDC.64")) && n == 2 &&
	    sscanf(t[0] + (t[0][0] == 'U'), "R%u", &base) == 1 &&
	    sscanf(t[1], "c[0x0][%x]", &off) == 1) {
		char half[32];
		snprintf(half, sizeof half, "c[0x0][0x%x]", off + 4 * (want - base));
		return eval_tok(e, half, j, depth, v);
	}
	if (!strcmp(op, "HFMA2.MMA") && n == 5 && !strcmp(t[1], "-RZ") && !strcmp(t[2], "RZ") && !strcmp(t[3], "0") &&
	    !strcmp(t[4], "0"))
		return *v = 0, true;
	if ((!strcmp(op, "IADD3") || !strcmp(op, "UIADD3")) && n == 4 && t[1][0] != 'P' && strncmp(t[1], "UP", 2) &&
	    eval_tok(e, t[1], j, depth, &a) &&
	    eval_tok(e, t[2], j, depth, &b) && eval_tok(e, t[3], j, depth, &c))
		return *v = (int32_t)(uint32_t)(a + b + c), true;
	if (!strcmp(op, "VIADD") && n == 3 && eval_tok(e, t[1], j, depth, &a) && eval_tok(e, t[2], j, depth, &b))
		return *v = (int32_t)(uint32_t)(a + b), true;
	if (!strcmp(op, "IMAD.IADD") && n == 4 && eval_tok(e, t[1], j, depth, &a) && eval_tok(e, t[2], j, depth, &b) &&
	    eval_tok(e, t[3], j, depth, &c))
		return *v = (int32_t)(uint32_t)(a * b + c), true;
	if ((!strcmp(op, "IMAD.SHL.U32") || !strcmp(op, "SHF.L.U32")) && n == 4 && eval_tok(e, t[1], j, depth, &a) &&
	    eval_tok(e, t[2], j, depth, &b))
		return *v = (int32_t)(uint32_t)(op[0] == 'S' ? (uint64_t)a << (b & 31) : (uint64_t)(a * b)), true;
	if ((!strcmp(op, "SHF.R.S32.HI") || !strcmp(op, "SHF.R.U32.HI")) && n == 4 && !strcmp(t[1], "RZ") &&
	    eval_tok(e, t[2], j, depth, &b) && eval_tok(e, t[3], j, depth, &a))
		return *v = op[6] == 'S' ? (int32_t)a >> (b & 31) : (int32_t)((uint32_t)a >> (b & 31)), true;
	if (!strcmp(op, "LEA.HI") && n == 5 && !strcmp(t[3], "RZ") && eval_tok(e, t[1], j, depth, &a) &&
	    eval_tok(e, t[2], j, depth, &b) && eval_tok(e, t[4], j, depth, &c) && c > 0 && c < 32)
		return *v = (int32_t)(uint32_t)(b + ((uint32_t)a >> (32 - c))), true; /* b + ({RZ:a} >> (32 - c)) */
	if (!e->why[0] || !strstr(e->why, "0x"))
		snprintf(e->why, sizeof e->why, "%s %s at 0x%x", op, x->operands, x->offset);
	return false;
}

/* ISETP.<cmp>[.U32].AND P, PT, a, b, PT at index j: its comparison on values. */
static bool compare(const char *opcode, int64_t a, int64_t b, bool *out)
{
	bool u = strstr(opcode, ".U32") != NULL;
	int64_t x = u ? (int64_t)(uint32_t)a : (int64_t)(int32_t)a, y = u ? (int64_t)(uint32_t)b : (int64_t)(int32_t)b;
	const char *c = opcode + 6;
	if (strncmp(opcode, "ISETP.", 6) || strstr(opcode, ".EX") || !strstr(opcode, ".AND"))
		return false;
	*out = !strncmp(c, "GE", 2) ? x >= y : !strncmp(c, "GT", 2) ? x > y : !strncmp(c, "LE", 2) ? x <= y
	     : !strncmp(c, "LT", 2) ? x < y : !strncmp(c, "EQ", 2) ? x == y : x != y;
	return !strncmp(c, "GE", 2) || !strncmp(c, "GT", 2) || !strncmp(c, "LE", 2) || !strncmp(c, "LT", 2) ||
	       !strncmp(c, "EQ", 2) || !strncmp(c, "NE", 2);
}

/* The ISETP writing the guard of branch j, scanning back to `lo`; LP_NONE when not one. */
static uint32_t guard_def(const st_sass_kernel *k, uint32_t j, uint32_t lo)
{
	const st_sass_insn *in = st_sass_insns(k);
	st_sass_reg g = {(uint16_t)in[j].guard, in[j].guard_file, 1, 0};
	for (uint32_t i = j; i-- > lo;)
		if (lp_overlap(in[i].defs, in[i].ndefs, &g, 1, true))
			return !strncmp(in[i].opcode, "ISETP.", 6) && in[i].guard < 0 ? i : LP_NONE;
	return LP_NONE;
}

/* Is the conditional branch j taken?  false with e->why when it cannot be told. */
static bool taken(ev *e, uint32_t j, bool *out)
{
	const st_sass_insn *in = st_sass_insns(e->k);
	uint32_t d = guard_def(e->k, j, 0);
	char t[6][48];
	int64_t a, b;
	if (d == LP_NONE)
		return snprintf(e->why, sizeof e->why, "the guard of 0x%x is not an ISETP", in[j].offset), false;
	if (split(in[d].operands, t) != 5 || strcmp(t[1], "PT") || strcmp(t[4], "PT") ||
	    !eval_tok(e, t[2], d, 0, &a) || !eval_tok(e, t[3], d, 0, &b) || !compare(in[d].opcode, a, b, out)) {
		if (!e->why[0])
			snprintf(e->why, sizeof e->why, "%s %s at 0x%x", in[d].opcode, in[d].operands, in[d].offset);
		return false;
	}
	*out ^= in[j].guard_neg;
	return true;
}

/* Does the loop run at all: the nearest conditional branch before it that jumps past it. */
static void entry(ev *e, lp_loop *l)
{
	const st_sass_insn *in = st_sass_insns(e->k);
	for (uint32_t j = l->first; j-- > 0 && l->first - j <= 64;) {
		if (in[j].flags & ST_F_BRANCH && in[j].guard < 0)
			break; /* reached only by a jump: not the entry path */
		if (strncmp(in[j].opcode, "BRA", 3) || in[j].guard < 0 || in[j].target <= (int64_t)in[l->last].offset)
			continue;
		bool t;
		e->why[0] = 0;
		l->skip_branch = j;
		if (taken(e, j, &t)) {
			l->entered_known = true;
			l->entered = !t;
		}
		return;
	}
	l->entered_known = true, l->entered = true; /* no branch around it */
}

/* The induction register among the ISETP's operands: one body write `IADD3 R, R, imm, RZ` or
 * `VIADD R, R, imm`; *which is 2 or 3 (the operand), *step its increment, *at the write. */
static bool induction(const st_sass_kernel *k, const lp_loop *l, char t[6][48], int *which, int64_t *step,
		      uint32_t *at)
{
	const st_sass_insn *in = st_sass_insns(k);
	for (int o = 2; o <= 3; o++) {
		st_sass_reg r;
		if (!reg_tok(t[o], &r))
			continue;
		uint32_t w = LP_NONE, nw = 0;
		for (uint32_t i = l->first; i <= l->last; i++)
			if (l->in[in[i].block] && lp_overlap(in[i].defs, in[i].ndefs, &r, 1, true))
				w = i, nw++;
		if (nw != 1 || in[w].guard >= 0)
			continue;
		char u[6][48];
		int n = split(in[w].operands, u);
		bool iadd = (!strcmp(in[w].opcode, "IADD3") && n == 4 && !strcmp(u[3], "RZ")) ||
			    (!strcmp(in[w].opcode, "UIADD3") && n == 4 && !strcmp(u[3], "URZ"));
		bool viadd = !strcmp(in[w].opcode, "VIADD") && n == 3;
		if ((!iadd && !viadd) || strcmp(u[0], t[o]) || strcmp(u[1], t[o]) || (u[2][0] != '0' && u[2][0] != '-'))
			continue;
		*which = o, *at = w, *step = strtoll(u[2], NULL, 0);
		return true;
	}
	return false;
}

void lp_trip(const st_sass_kernel *k, lp_loop *l, const lp_params *p)
{
	const st_sass_insn *in = st_sass_insns(k);
	ev e = {k, p, {0}};
	l->skip_branch = LP_NONE;
	if (!l->natural) {
		snprintf(l->trip, sizeof l->trip, "unknown: not a natural loop (a body block is entered from outside)");
		return;
	}
	entry(&e, l);
	char head[80] = "";
	if (l->skip_branch != LP_NONE)
		snprintf(head, sizeof head, "%s by the branch at 0x%x; ",
			 !l->entered_known ? "entry unknown" : l->entered ? "entered" : "skipped",
			 in[l->skip_branch].offset);
	uint32_t f, c;
	int32_t su[2];
	st_sass_block(k, l->latch, &f, &c, su);
	uint32_t br = f + c - 1, d;
	char t[6][48];
	int which;
	int64_t step, init, bound;
	uint32_t inc;
	if (strncmp(in[br].opcode, "BRA", 3) || in[br].guard < 0 || in[br].target != (int64_t)in[l->head].offset) {
		snprintf(l->trip, sizeof l->trip, "unknown: the back edge at 0x%x is not a conditional BRA", in[br].offset);
		return;
	}
	if ((d = guard_def(k, br, l->first)) == LP_NONE || split(in[d].operands, t) != 5 || strcmp(t[4], "PT") ||
	    !induction(k, l, t, &which, &step, &inc)) {
		snprintf(l->trip, sizeof l->trip, "unknown: no ISETP on an IADD3-stepped register guards 0x%x",
			 in[br].offset);
		return;
	}
	if (!eval_tok(&e, t[which], l->first, 0, &init) || !eval_tok(&e, t[5 - which], l->first, 0, &bound)) {
		snprintf(l->trip, sizeof l->trip, "unknown: %s", e.why);
		return;
	}
	long n = 0;
	bool go = true, r;
	for (int64_t v = init; go && n < (1L << 24); n++) {
		int64_t nv = (int32_t)(uint32_t)(v + step), cv = inc < d ? nv : v;
		if (!compare(in[d].opcode, which == 2 ? cv : bound, which == 2 ? bound : cv, &r))
			break;
		go = r ^ in[br].guard_neg;
		v = nv;
	}
	bool skipped = l->entered_known && !l->entered;
	l->trips = skipped ? 0 : go ? -1 : n;
	snprintf(l->trip, sizeof l->trip, "%s%s from %" PRId64 " by %" PRId64 ", exit test %s %s at 0x%x (%s = %" PRId64 ")%s",
		 head, t[which], init, step, in[d].opcode, in[d].operands, in[d].offset, t[5 - which], bound,
		 go ? "; no exit within 2^24 passes" : "");
}
