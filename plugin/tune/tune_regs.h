/* The rename family's register-count raise in tuning (tune_regs.c, docs/sched.md "Raising the
 * register count"): the block size and shared memory from the launch spec, the limit the occupancy
 * rule allows, and the rule checked again on the output.  Internal to plugin/tune. */
#ifndef ST_TUNE_REGS_H
#define ST_TUNE_REGS_H
#include "sasstune/runtime.h"
#include "sasstune/sched.h"

typedef struct st_tune_regs {
	unsigned threads; /* a block's (0: no launch spec: never raised) */
	size_t shared;    /* the launch's dynamic shared memory, bytes */
	int allow_drop;
} st_tune_regs;
/* Fill g from the launch (may be NULL); the most registers kernel k of c may take under the rule (its
 * count when it may not rise; 0 when the block size or the count is unknown). */
unsigned st_tune_regs_rule(st_tune_regs *g, const st_cubin *c, size_t k, const st_launch *launch, int allow_drop);
/* Fill g from the launch (may be NULL) and let s raise kernel k's count as far as the rule allows. */
st_status st_tune_regs_setup(st_tune_regs *g, st_sched *s, const st_cubin *c, size_t k, const st_launch *launch,
			     int allow_drop, st_error *err);
/* The occupancy rule on the tuned cubin t (st_check_occupancy); ST_EILLEGAL with *violations. */
st_status st_tune_regs_check(const st_tune_regs *g, const st_cubin *orig, const st_cubin *t, const char *kernel,
			     size_t *violations, st_error *err);
#endif
