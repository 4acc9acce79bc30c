/* The pipe family's analysis (family 3 form 1, docs/pipeline.md "Form 1: rotation"): loop blocks B
 * with their H (Definitions, P1), load groups G with their feeders (P2, P3), interference (P4) and
 * guards with the predicate rename (P6).  Original indices throughout; the kernel is never changed. */
#include "pipe_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool pp_refuse(pp_why *why, const char *rule, uint32_t off, const char *fmt, ...)
{
	if (!why)
		return false;
	why->rule = rule;
	why->off = off;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof why->msg, fmt, ap);
	va_end(ap);
	return false;
}

static bool touches(const st_sass_reg *r, unsigned nr, unsigned file, unsigned reg)
{
	for (unsigned i = 0; i < nr; i++)
		if (r[i].file == file && reg >= r[i].index && reg < (unsigned)r[i].index + r[i].count)
			return true;
	return false;
}
bool pp_writes(const st_sass_insn *x, unsigned f, unsigned r) { return touches(x->defs, x->ndefs, f, r); }
bool pp_reads(const st_sass_insn *x, unsigned f, unsigned r) { return touches(x->uses, x->nuses, f, r); }

int64_t pp_last_writer(const pp_kern *x, uint32_t from, uint32_t before, unsigned f, unsigned r)
{
	for (uint32_t j = before; j-- > from;)
		if (pp_writes(&x->in[j], f, r))
			return j;
	return -1;
}

unsigned pp_writers(const pp_kern *x, const pp_loop *L, unsigned f, unsigned r)
{
	unsigned n = 0;
	for (uint32_t j = L->first; j <= L->bra; j++)
		n += pp_writes(&x->in[j], f, r);
	return n;
}

static bool in_list(const uint32_t *a, uint32_t n, uint32_t i)
{
	for (uint32_t k = 0; k < n; k++)
		if (a[k] == i)
			return true;
	return false;
}
bool pp_is_member(const pp_group *g, uint32_t i) { return in_list(g->mem, g->nmem, i); }
bool pp_is_feeder(const pp_group *g, uint32_t i) { return in_list(g->feed, g->nfeed, i); }
bool pp_is_load(const pp_group *g, uint32_t i) { return in_list(g->loads, g->nloads, i); }

static bool is_ldg(const st_sass_insn *x)
{
	bool rres = false;
	for (unsigned d = 0; d < x->ndefs; d++)
		rres |= x->defs[d].file == ST_RF_R;
	return !strncmp(x->opcode, "LDG", 3) && (x->flags & ST_F_LOAD) && (x->flags & ST_F_VARLAT) &&
	       x->space == ST_SPACE_GLOBAL && rres && !(x->flags & (ST_F_STORE | ST_F_ATOMIC | ST_F_ASYNC));
}

/* Fixed-latency ALU known to the tables, no scoreboard. */
static bool fixed_alu(const st_sass_insn *x)
{
	return x->cls == ST_CLASS_ALU && x->lat_op >= 0 && x->ctrl.wbar == ST_SB_NONE && x->ctrl.rbar == ST_SB_NONE &&
	       !(x->flags & (ST_F_VARLAT | ST_F_BRANCH | ST_F_LOAD | ST_F_STORE));
}

/* Nothing but B's back branch names B's first instruction (cubin references, else branch targets). */
static bool only_back_edge(const pp_kern *x, const pp_loop *L, pp_why *why)
{
	uint32_t t = x->in[L->first].offset;
	if (x->c) {
		for (size_t i = 0, nr = st_cubin_ref_count(x->c, x->ki); i < nr; i++) {
			const st_code_ref *r = st_cubin_ref(x->c, x->ki, i);
			if (r->target == t && !(r->kind == ST_REF_BRANCH && r->slot == (long)L->bra))
				return pp_refuse(why, "P1", t, "%s names the loop's first instruction", r->what);
		}
	}
	for (size_t i = 0; i < x->n; i++)
		if (x->in[i].target == (int64_t)t && i != L->bra)
			return pp_refuse(why, "P1", t, "%s at 0x%x names the loop's first instruction", x->in[i].opcode,
				      x->in[i].offset);
	return true;
}

/* P1: nothing in B but fixed-latency work and global loads with register results. */
static bool shape(const pp_kern *x, const pp_loop *L, pp_why *why)
{
	if (x->sm < 80 || x->sm > 90)
		return pp_refuse(why, "P1", x->in[L->first].offset, "sm_%d (form 1 is for sm_80..sm_90)", x->sm);
	for (uint32_t j = L->first; j < L->bra; j++) {
		const st_sass_insn *y = &x->in[j];
		unsigned bad = ST_F_STORE | ST_F_ATOMIC | ST_F_ASYNC | ST_F_BARRIER | ST_F_FENCE | ST_F_COLLECTIVE |
			       ST_F_BRANCH;
		if ((y->flags & bad) || y->cls == ST_CLASS_SYNC || y->cls == ST_CLASS_TENSOR ||
		    y->cls == ST_CLASS_CONTROL || (y->cls == ST_CLASS_MEMORY && !is_ldg(y)))
			return pp_refuse(why, "P1", y->offset, "%s in the loop", y->opcode);
	}
	return true;
}

bool pp_loop_at(const pp_kern *x, uint32_t b, pp_loop *L, pp_why *why)
{
	uint32_t first, count;
	int32_t succ[2];
	if (why)
		why->rule = NULL;
	if (b == 0 || b + 1 >= x->nb)
		return false;
	st_sass_block(x->k, b, &first, &count, succ);
	const st_sass_insn *br = &x->in[first + count - 1];
	if (!(br->flags & ST_F_BRANCH) || strcmp(br->opcode, "BRA") || br->target != (int64_t)x->in[first].offset)
		return false; /* not a single-block loop */
	memset(L, 0, sizeof *L);
	L->b = b;
	L->first = first;
	L->bra = first + count - 1;
	L->h = b - 1;
	uint32_t hc;
	st_sass_block(x->k, L->h, &L->hfirst, &hc, succ);
	if (br->guard < 0 && count == 1)
		return false; /* the self-branch after the last EXIT */
	if (br->guard < 0 || br->guard_file != ST_RF_P || strchr(br->operands, ','))
		return pp_refuse(why, "P1", br->offset, "the back branch is not guarded by a P register");
	L->pe = br->guard;
	L->pe_neg = br->guard_neg;
	const st_sass_insn *hl = &x->in[first - 1];
	if (hl->flags & ST_F_BRANCH)
		return pp_refuse(why, "P1", hl->offset, "the block before the loop ends in %s", hl->opcode);
	if (!only_back_edge(x, L, why) || !shape(x, L, why))
		return false;
	int64_t e = pp_last_writer(x, first, L->bra, ST_RF_P, (unsigned)L->pe);
	if (e < 0)
		return pp_refuse(why, "P1", br->offset, "no writer of P%d in the loop", L->pe);
	L->e = (uint32_t)e;
	L->exitlive = x->livein[b + 1];
	return true;
}

size_t pp_loop_loads(const pp_kern *x, const pp_loop *L, uint32_t *loads, size_t max)
{
	size_t n = 0;
	for (uint32_t j = L->first; j < L->bra && n < max; j++)
		if (is_ldg(&x->in[j]))
			loads[n++] = j;
	return n;
}

/* P3c: U (original index) computes the same value every pass and every reader comes after it. */
static bool feeder_ok(const pp_kern *x, const pp_loop *L, uint32_t u)
{
	const st_sass_insn *y = &x->in[u];
	if (y->guard >= 0 || !(fixed_alu(y) || (!strcmp(y->opcode, "MOV") && y->cls == ST_CLASS_ALU)))
		return false;
	for (unsigned k = 0; k < y->nuses; k++)
		for (unsigned r = 0; r < y->uses[k].count; r++)
			if (pp_writers(x, L, y->uses[k].file, y->uses[k].index + r))
				return false;
	for (unsigned d = 0; d < y->ndefs; d++)
		for (unsigned r = 0; r < y->defs[d].count; r++) {
			unsigned f = y->defs[d].file, reg = y->defs[d].index + r;
			if (pp_writers(x, L, f, reg) != 1)
				return false;
			for (uint32_t j = L->first; j <= u; j++)
				if (pp_reads(&x->in[j], f, reg))
					return false;
		}
	return true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Registers (f, r) of member m that P2/P3 follow: its reads, and its writes when it is guarded. */
typedef bool (*pp_reg_fn)(const pp_kern *x, const pp_loop *L, pp_group *g, uint32_t m, unsigned f, unsigned r,
			  pp_why *why);
static bool each_input_reg(const pp_kern *x, const pp_loop *L, pp_group *g, uint32_t m, pp_reg_fn fn, pp_why *why)
{
	const st_sass_insn *y = &x->in[m];
	for (unsigned k = 0; k < y->nuses; k++)
		for (unsigned r = 0; r < y->uses[k].count; r++)
			if (y->uses[k].file != ST_RF_B && !fn(x, L, g, m, y->uses[k].file, y->uses[k].index + r, why))
				return false;
	if (y->guard >= 0)
		for (unsigned k = 0; k < y->ndefs; k++)
			for (unsigned r = 0; r < y->defs[k].count; r++)
				if (y->defs[k].file != ST_RF_B && !fn(x, L, g, m, y->defs[k].file, y->defs[k].index + r, why))
					return false;
	return true;
}

/* P2: pull the latest writer of (f, r) before m into G (or into the feeders). */
static bool close_reg(const pp_kern *x, const pp_loop *L, pp_group *g, uint32_t m, unsigned f, unsigned r, pp_why *why)
{
	int64_t w = pp_last_writer(x, L->first, m, f, r);
	if (w < 0 || pp_is_member(g, (uint32_t)w) || pp_is_feeder(g, (uint32_t)w))
		return true;
	if (feeder_ok(x, L, (uint32_t)w)) {
		if (g->nfeed == PP_MAX_MEMBERS)
			return pp_refuse(why, "P2", x->in[m].offset, "more than %d feeders", PP_MAX_MEMBERS);
		g->feed[g->nfeed++] = (uint32_t)w;
		return true;
	}
	if (is_ldg(&x->in[w]))
		return pp_refuse(why, "P2", x->in[m].offset, "the group needs the load at 0x%x too", x->in[w].offset);
	if (g->nmem == PP_MAX_MEMBERS)
		return pp_refuse(why, "P2", x->in[m].offset, "the group has more than %d members", PP_MAX_MEMBERS);
	g->mem[g->nmem++] = (uint32_t)w;
	return true;
}

static bool closure(const pp_kern *x, const pp_loop *L, pp_group *g, pp_why *why)
{
	for (uint32_t i = 0; i < g->nmem; i++) /* g->nmem grows while we go */
		if (!each_input_reg(x, L, g, g->mem[i], close_reg, why))
			return false;
	qsort(g->mem, g->nmem, sizeof *g->mem, cmp_u32);
	qsort(g->feed, g->nfeed, sizeof *g->feed, cmp_u32);
	g->p = g->mem[g->nmem - 1];
	for (uint32_t i = 0; i < g->nmem; i++) {
		const st_sass_insn *y = &x->in[g->mem[i]];
		if (pp_is_load(g, g->mem[i]))
			continue;
		if (!fixed_alu(y))
			return pp_refuse(why, "P2", y->offset, "member %s is not fixed-latency ALU", y->opcode);
		if (y->guard >= 0)
			return pp_refuse(why, "P6", y->offset, "member %s is guarded", y->opcode);
	}
	return true;
}

bool pp_written_before_in_g(const pp_kern *x, const pp_group *g, uint32_t m, unsigned f, unsigned r)
{
	for (uint32_t i = 0; i < g->nmem && g->mem[i] < m; i++)
		if (pp_writes(&x->in[g->mem[i]], f, r))
			return true;
	return false;
}

/* P3 for one input register of member m. */
static bool input_reg(const pp_kern *x, const pp_loop *L, pp_group *g, uint32_t m, unsigned f, unsigned r, pp_why *why)
{
	if (pp_written_before_in_g(x, g, m, f, r))
		return true;
	pp_set_put(&g->in, f, r, true);
	unsigned nw = pp_writers(x, L, f, r);
	int64_t lw = pp_last_writer(x, L->first, m, f, r);
	if (nw == 0 || (lw >= 0 && pp_is_feeder(g, (uint32_t)lw)))
		return true;
	if (nw == 1 && lw < 0) { /* the writer after m: fixed latency (a variable-latency one would need a new wait) */
		int64_t u = pp_last_writer(x, m, L->bra + 1, f, r);
		if (u >= 0 && !pp_is_member(g, (uint32_t)u) && !(x->in[u].flags & ST_F_VARLAT))
			return true;
	}
	char name[16];
	st_sass_reg_str(name, sizeof name, f, r);
	return pp_refuse(why, "P3", x->in[m].offset, "%s read by %s is not shift-correct (%u writers in the loop)", name,
		      x->in[m].opcode, nw);
}

static bool inputs(const pp_kern *x, const pp_loop *L, pp_group *g, pp_why *why)
{
	memset(&g->in, 0, sizeof g->in);
	for (uint32_t i = 0; i < g->nmem; i++)
		if (!each_input_reg(x, L, g, g->mem[i], input_reg, why))
			return false;
	return true;
}

/* The ISETP writing load X's guard, or -1 (X unguarded). */
int64_t pp_guard_writer(const pp_kern *x, const pp_loop *L, uint32_t X)
{
	const st_sass_insn *y = &x->in[X];
	return y->guard < 0 ? -1 : pp_last_writer(x, L->first, X, ST_RF_P, (unsigned)y->guard);
}

/* P6 for load X: its guard's writer is a member ISETP ... PT, ..., PT with op AND; Pg read in G only as
 * load guards; one polarity per writer. */
static bool guard_ok(const pp_kern *x, const pp_loop *L, const pp_group *g, uint32_t X, pp_why *why)
{
	const st_sass_insn *y = &x->in[X];
	if (y->guard < 0)
		return true;
	if (y->guard_file != ST_RF_P)
		return pp_refuse(why, "P6", y->offset, "guarded by a uniform predicate");
	int64_t I = pp_guard_writer(x, L, X);
	if (I < 0 || !pp_is_member(g, (uint32_t)I))
		return pp_refuse(why, "P6", y->offset, "P%d is not written by the group", y->guard);
	const st_sass_insn *s = &x->in[I];
	int neg;
	int pc = pp_isetp_pc(s->word, &neg);
	if (strncmp(s->opcode, "ISETP", 5) || strstr(s->opcode, ".EX") || !pp_is_isetp_word(s->word) ||
	    pp_isetp_dst(s->word) != y->guard || pp_isetp_dst2(s->word) != 7 || pc != 7 || neg ||
	    pp_isetp_op(s->word) != PP_OP_AND)
		return pp_refuse(why, "P6", s->offset, "guard writer %s is not ISETP.<cmp>.AND P, PT, a, b, PT", s->opcode);
	for (uint32_t i = 0; i < g->nmem; i++) {
		const st_sass_insn *m = &x->in[g->mem[i]];
		bool load = pp_is_load(g, g->mem[i]);
		if (load && m->guard == y->guard && pp_guard_writer(x, L, g->mem[i]) == I && m->guard_neg != y->guard_neg)
			return pp_refuse(why, "P6", s->offset, "P%d guards loads with both polarities", y->guard);
		if (!load && pp_reads(m, ST_RF_P, (unsigned)y->guard) && g->mem[i] > (uint32_t)I)
			return pp_refuse(why, "P6", m->offset, "P%d is read by %s in the group", y->guard, m->opcode);
		if (!load && g->mem[i] != (uint32_t)I && pp_writes(m, ST_RF_P, (unsigned)y->guard) &&
		    g->mem[i] > (uint32_t)I && g->mem[i] < X)
			return pp_refuse(why, "P6", m->offset, "P%d is rewritten by %s before the load", y->guard, m->opcode);
	}
	return true;
}

/* y reads (f, r) only as its guard (read at issue: the timing keeps 30 cycles, pipe_timing.c). */
static bool only_guard(const st_sass_insn *y, unsigned f, unsigned r)
{
	if (f != ST_RF_P || y->guard_file != ST_RF_P || y->guard != (int)r)
		return false;
	for (unsigned u = 0; u < y->nuses; u++)
		if (y->uses[u].file == f && y->uses[u].index == r && y->uses[u].slot != ST_SLOT_G)
			return false;
	return true;
}

/* In B's new order, an instruction after non-member n and up to the first member writing (f, r) waits
 * on scoreboard sb (the non-members after n come first, then the members in order). */
static bool waited(const pp_kern *x, const pp_loop *L, const pp_group *g, uint32_t n, unsigned sb, unsigned f,
		   unsigned r)
{
	if (sb >= 6)
		return false;
	for (uint32_t j = n + 1; j < L->bra; j++)
		if (!pp_is_member(g, j) && (x->in[j].ctrl.wait >> sb & 1))
			return true;
	for (uint32_t i = 0; i < g->nmem; i++) {
		if (x->in[g->mem[i]].ctrl.wait >> sb & 1)
			return true;
		if (pp_writes(&x->in[g->mem[i]], f, r))
			return false;
	}
	return false;
}

/* Register (f, r), written by the group, breaks P4; *at gets the offset of the culprit. */
static const char *interferes(const pp_kern *x, const pp_loop *L, const pp_group *g, unsigned f, unsigned r,
			      uint32_t *at)
{
	*at = x->in[g->p].offset;
	for (uint32_t j = L->first; j < L->bra; j++) {
		if (pp_is_member(g, j))
			continue;
		const st_sass_insn *y = &x->in[j];
		*at = y->offset;
		if (j <= g->p && pp_reads(y, f, r))
			return "is read at 0x%x before the last load";
		if (j <= g->p && pp_writes(y, f, r))
			return "is written at 0x%x before the last load";
		if (j > g->p && (y->flags & ST_F_VARLAT) && y->ctrl.rbar != ST_SB_NONE && pp_reads(y, f, r) &&
		    !only_guard(y, f, r) && !waited(x, L, g, j, y->ctrl.rbar, f, r))
			return "is read at 0x%x with a read scoreboard no instruction waits on before the group writes it";
		if (j > g->p && (y->flags & ST_F_VARLAT) && pp_writes(y, f, r) && !waited(x, L, g, j, y->ctrl.wbar, f, r))
			return "is written at 0x%x by a variable-latency instruction no instruction waits on before the group";
	}
	*at = x->in[L->bra].offset;
	if (pp_reads(&x->in[L->bra], f, r))
		return "is read by the back branch at 0x%x";
	if (pp_set_has(&g->in, f, r))
		return "is carried into the group from the pass before (0x%x)";
	if (pp_set_has(&L->exitlive, f, r))
		return "is live on the loop's exit edge (0x%x)";
	return NULL;
}

static bool rename_pred(const pp_kern *x, const pp_loop *L, pp_group *g, pp_why *why)
{
	int need = -1;
	for (uint32_t i = 0; i < g->nloads; i++) {
		const st_sass_insn *y = &x->in[g->loads[i]];
		uint32_t at;
		if (y->guard < 0 || y->guard == need || !interferes(x, L, g, ST_RF_P, (unsigned)y->guard, &at))
			continue;
		if (need >= 0)
			return pp_refuse(why, "P6", y->offset, "both P%d and P%d would need a rename", need, y->guard);
		need = y->guard;
	}
	g->pred_from = g->pred_to = -1;
	if (need < 0)
		return true;
	for (uint32_t i = 0; i < g->nmem; i++) {
		uint32_t m = g->mem[i];
		const st_sass_insn *y = &x->in[m];
		bool load = pp_is_load(g, m), writer = false;
		for (uint32_t l = 0; l < g->nloads; l++)
			writer |= pp_guard_writer(x, L, g->loads[l]) == (int64_t)m;
		if ((pp_writes(y, ST_RF_P, (unsigned)need) && !writer) ||
		    (pp_reads(y, ST_RF_P, (unsigned)need) && !(load && y->guard == need)))
			return pp_refuse(why, "P6", y->offset, "P%d is used by %s other than as a load guard", need, y->opcode);
	}
	for (int q = 0; q < 7; q++) {
		bool used = pp_set_has(&L->exitlive, ST_RF_P, (unsigned)q);
		for (uint32_t j = L->first; j <= L->bra && !used; j++)
			used = pp_reads(&x->in[j], ST_RF_P, (unsigned)q) || pp_writes(&x->in[j], ST_RF_P, (unsigned)q);
		if (!used) {
			g->pred_from = (int8_t)need;
			g->pred_to = (int8_t)q;
			return true;
		}
	}
	return pp_refuse(why, "P6", x->in[L->first].offset, "P%d needs a rename and no predicate is free", need);
}

static bool no_interference(const pp_kern *x, const pp_loop *L, const pp_group *g, pp_why *why)
{
	for (uint32_t i = 0; i < g->nmem; i++) {
		const st_sass_insn *y = &x->in[g->mem[i]];
		for (unsigned d = 0; d < y->ndefs; d++)
			for (unsigned k = 0; k < y->defs[d].count; k++) {
				unsigned f = y->defs[d].file, r = y->defs[d].index + k;
				if (f == ST_RF_P && (int)r == g->pred_from)
					r = (unsigned)g->pred_to;
				uint32_t at;
				const char *fmt = interferes(x, L, g, f, r, &at);
				if (!fmt)
					continue;
				char name[16], m[96];
				st_sass_reg_str(name, sizeof name, f, r);
				snprintf(m, sizeof m, fmt, at);
				return pp_refuse(why, "P4", at, "%s written by the group %s", name, m);
			}
	}
	return true;
}

/* The register dependence of later member m on variable-latency member v that a scoreboard covers: the
 * scoreboard to wait on (v's write SB for RAW/WAW, its read SB for WAR on an R/UR register), or 7. */
static unsigned sb_dep(const st_sass_insn *v, const st_sass_insn *m)
{
	for (unsigned d = 0; d < v->ndefs; d++)
		for (unsigned k = 0; k < v->defs[d].count; k++) {
			unsigned f = v->defs[d].file, r = v->defs[d].index + k;
			if (f != ST_RF_B && (pp_reads(m, f, r) || pp_writes(m, f, r)))
				return v->ctrl.wbar;
		}
	for (unsigned u = 0; u < v->nuses; u++)
		for (unsigned k = 0; k < v->uses[u].count; k++) {
			unsigned f = v->uses[u].file, r = v->uses[u].index + k;
			if ((f == ST_RF_R || f == ST_RF_UR) && pp_writes(m, f, r) && v->ctrl.rbar != ST_SB_NONE)
				return v->ctrl.rbar;
		}
	return ST_SB_NONE;
}

/* P5: within the group (the members now adjacent), every scoreboard dependence between members is still
 * waited on by a member between them; the original may have waited at a non-member in between. */
static bool group_waits(const pp_kern *x, const pp_group *g, pp_why *why)
{
	for (uint32_t a = 0; a < g->nmem; a++) {
		const st_sass_insn *v = &x->in[g->mem[a]];
		if (!(v->flags & ST_F_VARLAT))
			continue;
		for (uint32_t b = a + 1; b < g->nmem; b++) {
			unsigned sb = sb_dep(v, &x->in[g->mem[b]]), seen = 0;
			for (uint32_t q = a + 1; q <= b && sb < 6; q++)
				seen |= x->in[g->mem[q]].ctrl.wait >> sb & 1;
			if (sb < 6 && !seen)
				return pp_refuse(why, "P5", x->in[g->mem[b]].offset,
					      "%s needs a wait on SB%u for 0x%x, which no member between makes",
					      x->in[g->mem[b]].opcode, sb, v->offset);
		}
	}
	return true;
}

/* P2 alone (form 2's Q2, pipe2.c): the loads, their closure and feeders, sorted; no P3-P6. */
bool pp_group_close(const pp_kern *x, const pp_loop *L, const uint32_t *loads, size_t n, pp_group *g, pp_why *why)
{
	memset(g, 0, sizeof *g);
	g->pred_from = g->pred_to = -1;
	if (n == 0 || n > PP_MAX_LOADS)
		return pp_refuse(why, "P2", x->in[L->first].offset, "%zu loads (1..%d)", n, PP_MAX_LOADS);
	for (size_t i = 0; i < n; i++) {
		if (loads[i] < L->first || loads[i] >= L->bra || !is_ldg(&x->in[loads[i]]) || pp_is_load(g, loads[i]))
			return pp_refuse(why, "P2", loads[i] < x->n ? x->in[loads[i]].offset : 0, "not a global load of the loop");
		g->loads[g->nloads++] = g->mem[g->nmem++] = loads[i];
	}
	qsort(g->loads, g->nloads, sizeof *g->loads, cmp_u32);
	return closure(x, L, g, why);
}

bool pp_group_build(const pp_kern *x, const pp_loop *L, const uint32_t *loads, size_t n, pp_group *g, pp_why *why)
{
	memset(g, 0, sizeof *g);
	g->pred_from = g->pred_to = -1;
	if (n == 0 || n > PP_MAX_LOADS)
		return pp_refuse(why, "P2", x->in[L->first].offset, "%zu loads (1..%d)", n, PP_MAX_LOADS);
	for (size_t i = 0; i < n; i++) {
		if (loads[i] < L->first || loads[i] >= L->bra || !is_ldg(&x->in[loads[i]]))
			return pp_refuse(why, "P2", loads[i] < x->n ? x->in[loads[i]].offset : 0, "not a global load of the loop");
		g->loads[g->nloads++] = g->mem[g->nmem++] = loads[i];
	}
	qsort(g->loads, g->nloads, sizeof *g->loads, cmp_u32);
	if (!closure(x, L, g, why) || !inputs(x, L, g, why))
		return false;
	if (pp_is_member(g, L->e))
		return pp_refuse(why, "P6", x->in[L->e].offset, "the back branch's predicate writer is in the group");
	for (uint32_t i = 0; i < g->nloads; i++)
		if (!guard_ok(x, L, g, g->loads[i], why))
			return false;
	return rename_pred(x, L, g, why) && no_interference(x, L, g, why) && group_waits(x, g, why);
}

bool pp_is_ldg(const st_sass_insn *x) { return is_ldg(x); }
bool pp_fixed_alu(const st_sass_insn *x) { return fixed_alu(x); }
bool pp_feeder_ok(const pp_kern *x, const pp_loop *L, uint32_t u) { return feeder_ok(x, L, u); }
