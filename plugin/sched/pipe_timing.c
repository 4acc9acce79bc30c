/* P8 for the pipe family: every fixed-latency dependence of the new code holds (st_sass_latency over
 * R/UR/P/UP, RAW/WAW/WAR), stalls raised where a distance is short, never lowered.  A sequence is a
 * list of instructions in issue order; entries may share control fields (the wrap repeats B). */
#include "pipe_timing.h"

#define PA_LIMIT 30 /* cycles: no dependence is longer (sched_internal.h SC_LIMIT) */

static int res_of(unsigned f)
{
	return f == ST_RF_R ? ST_RES_GPR : f == ST_RF_UR ? ST_RES_UGPR : f == ST_RF_P ? ST_RES_PRED : ST_RES_UPRED;
}

static bool meet(const st_sass_reg *a, const st_sass_reg *b)
{
	return a->file == b->file && a->file != ST_RF_B && a->index < b->index + b->count &&
	       b->index < a->index + a->count;
}

static int slot_of(const st_sass_reg *r) { return r->slot == PA_SLOT_ANY ? -1 : r->slot; }

/* The issue distance c (after p) needs, -1 when they share no register. */
int pa_latency(int sm, const st_sass_insn *p, const st_sass_insn *c)
{
	bool unknown = p->lat_op < 0 || c->lat_op < 0, pv = (p->flags & ST_F_VARLAT) != 0;
	int best = -1;
	for (unsigned d = 0; d < p->ndefs; d++) {
		for (unsigned u = 0; u < c->nuses; u++) {
			if (!meet(&p->defs[d], &c->uses[u]))
				continue;
			int l = unknown ? PA_LIMIT : st_sass_latency(sm, p, slot_of(&p->defs[d]), c, slot_of(&c->uses[u]),
								    (st_sass_res)res_of(p->defs[d].file), ST_DEP_TRUE);
			l = l >= 0 ? l : pv ? 0 : PA_LIMIT;
			best = l > best ? l : best;
		}
		for (unsigned e = 0; e < c->ndefs; e++) {
			if (!meet(&p->defs[d], &c->defs[e]))
				continue;
			int l = unknown ? PA_LIMIT : st_sass_latency(sm, p, slot_of(&p->defs[d]), c, slot_of(&c->defs[e]),
								    (st_sass_res)res_of(p->defs[d].file), ST_DEP_OUTPUT);
			best = (l > 0 ? l : 0) > best ? (l > 0 ? l : 0) : best;
		}
	}
	for (unsigned u = 0; u < p->nuses; u++)
		for (unsigned e = 0; e < c->ndefs; e++) {
			if (!meet(&p->uses[u], &c->defs[e]))
				continue;
			/* a variable-latency reader without a read scoreboard reads its registers late; its guard and
			 * predicate operands at issue (ptxas writes `@!P1 LDG`'s P1 one cycle later: bench 0x370) */
			bool late = pv && p->ctrl.rbar == ST_SB_NONE && (p->uses[u].file == ST_RF_R || p->uses[u].file == ST_RF_UR);
			int l = unknown || late
					? PA_LIMIT
					: st_sass_latency(sm, p, slot_of(&p->uses[u]), c, slot_of(&c->defs[e]),
							  (st_sass_res)res_of(p->uses[u].file), ST_DEP_ANTI);
			best = (l > 0 ? l : 0) > best ? (l > 0 ? l : 0) : best;
		}
	return best > PA_LIMIT ? PA_LIMIT : best;
}

static int distance(const pa_ins *s, size_t i, size_t j)
{
	int d = 0;
	for (size_t k = i; k < j; k++)
		d += s[k].ct->stall;
	return d;
}

/* Raise stalls in s[i..j) by need cycles, the instruction before j first; false if they cannot. */
static bool raise(pa_ins *s, size_t i, size_t j, int need)
{
	for (size_t k = j; k-- > i && need > 0;) {
		st_ctrl *c = s[k].ct;
		int cap = (c->yield || st_ctrl_reuse_bits(*c)) ? 11 : 15;
		int add = cap - c->stall < need ? cap - c->stall : need;
		if (add > 0) {
			c->stall = (uint8_t)(c->stall + add);
			need -= add;
		}
	}
	return need <= 0;
}

/* Scoreboards x sets. */
static unsigned sets(const st_sass_insn *x)
{
	return (x->ctrl.wbar < 6 ? 1u << x->ctrl.wbar : 0) | (x->ctrl.rbar < 6 ? 1u << x->ctrl.rbar : 0);
}

/* The distance s[j] needs after s[i] (a wait on a scoreboard s[i] sets: 2 cycles, set-to-wait). */
static int required(int sm, const pa_ins *s, size_t i, size_t j)
{
	int l = pa_latency(sm, s[i].x, s[j].x);
	if ((sets(s[i].x) & s[j].ct->wait) && l < 2)
		l = 2;
	if (l <= 0 || s[i].t0 == PA_NO_T || s[j].t0 == PA_NO_T || s[j].t0 <= s[i].t0)
		return l;
	int was = pa_latency(sm, s[i].o, s[j].o), d0 = s[j].t0 - s[i].t0;
	return was >= l && d0 < l ? d0 : l;
}

bool pa_fix(int sm, pa_ins *s, size_t len, size_t from, pp_why *why)
{
	for (size_t j = from; j < len; j++)
		for (size_t i = j; i-- > 0;) {
			int d = distance(s, i, j);
			if (d >= PA_LIMIT)
				break;
			int l = required(sm, s, i, j);
			if (l <= d)
				continue;
			if (!raise(s, i, j, l - d)) {
				why->rule = "P8";
				why->off = s[j].x->offset;
				snprintf(why->msg, sizeof why->msg, "%s needs %d cycles after %s (0x%x); the stalls cannot reach it",
					 s[j].x->opcode, l, s[i].x->opcode, s[i].x->offset);
				return false;
			}
		}
	return true;
}
