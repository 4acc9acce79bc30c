/* P8 timing of the pipe family's new code (pipe_timing.c). */
#ifndef ST_PIPE_TIMING_H
#define ST_PIPE_TIMING_H
#include "pipe_internal.h"

#include <stdint.h>
#include <stdio.h>

#define PA_SLOT_ANY 0xff /* an operand slot the tables do not name: any connector (the ISETP's new input) */
#define PA_NO_T INT32_MIN /* an entry with no original instance (a member's pass after the last) */
typedef struct pa_ins {
	const st_sass_insn *x; /* decoded, or an edited copy (guard, renamed/added predicates) */
	const st_sass_insn *o; /* the original instruction */
	st_ctrl *ct;           /* its control fields, shared by repeated entries */
	int32_t t0;            /* issue cycle of the same dynamic instance in the original code, or PA_NO_T */
} pa_ins;
int pa_latency(int sm, const st_sass_insn *p, const st_sass_insn *c);
/* Raise stalls of s so that every consumer s[j], j >= from, meets every producer before it: the full
 * latency, or for a dependence the original pair already had (at least as long, same instances, in
 * the same order) at most the original distance (ptxas's own distance is trusted, as in sched). */
bool pa_fix(int sm, pa_ins *s, size_t len, size_t from, pp_why *why);

#define PA_REGS 20

typedef struct pa_edit { st_sass_insn x; st_sass_reg defs[PA_REGS], uses[PA_REGS]; uint8_t w[16]; } pa_edit;

typedef struct pa_loop {
	pp_loop L;
	pp_group g;
	uint32_t *order;                   /* B's new order: original indices */
	pa_edit bed[PP_MAX_MEMBERS];       /* members as they read in B (parallel to g.mem) */
	pa_edit ped[2 * PP_MAX_MEMBERS];   /* the peel copies */
	st_ctrl pct[2 * PP_MAX_MEMBERS];
	uint32_t npeel;
} pa_loop;

typedef struct pa_plan {
	pp_kern x;
	st_ctrl *ct; /* per original index */
	pa_loop *lp;
	size_t n;
} pa_plan;

/* The timing of the plan (pipe_seq.c): wrap, entry (predecessors of H, H, the peel, the first pass)
 * and exit (the last pass into every path from the exit edge); stalls raised in P->ct and the peels. */
bool pa_time_loop(pa_plan *P, pa_loop *lp, pp_why *why);
#endif
