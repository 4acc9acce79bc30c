/* Family 3 in tuning (tune_pipe.c; docs/tune.md "The pipe alternatives").  A rewrite of family 3
 * is not a move of the search's walk (it inserts code and is not combined with other moves): tune
 * builds one whole alternative per form before the search (form 1: each loop's largest legal load
 * set rotated; form 2: each loop's largest legal set prefetched into fresh registers), the
 * independent checker passes it (and the occupancy rule a raised register count) and nvdisasm
 * decodes it; with the GPU reward tune.c then times each against the input like the search's
 * result and keeps whichever clears the confirmation rule by most.  Internal to plugin/tune. */
#ifndef ST_TUNE_PIPE_H
#define ST_TUNE_PIPE_H
#include "sasstune/cubin.h"
#include "sasstune/sass.h"
#include "sasstune/search.h"
#include "sasstune/tune.h"
#include "tune_regs.h"

#include <stddef.h>
#include <stdint.h>

typedef struct st_tune_pipe {
	int form;              /* 1 rotation, 2 prefetch */
	size_t cands;          /* candidates st_pipe_find / st_pipe2_find listed (0: nothing to try) */
	size_t loops, loads;   /* of the alternative built */
	uint8_t *cubin;        /* the alternative, checked (malloc'ed); NULL when none was built */
	size_t size;
	char *schedule_json;   /* its schedule: {"pipe": [...]} for the kernel (malloc'ed) */
	unsigned regs_before, regs_after; /* the register count (form 2 may raise it) */
	char note[384];        /* one line: what was found and built, or why not */
} st_tune_pipe;

/* The occupancy rule of a raised register count (form 2): the launch's block size and dynamic shared
 * memory (threads 0: unknown, never raised), whether resident blocks may drop, and the most registers
 * that keep them (0: no raise). */
typedef struct st_tune_pipe_regs { st_tune_regs g; unsigned limit; } st_tune_pipe_regs;
/* Build the alternative of form `form` for kernel kname of c (the input, unmoved; decoded with so as
 * sk).  Finding no candidate, or the rewrite or checker refusing it, is no error: p->cubin stays
 * NULL, p->note says why.  Errors: out of memory, an unreadable kernel. */
st_status st_tune_pipe_build(const st_cubin *c, const char *kname, const st_sass_opts *so, const st_sass_kernel *sk,
			     int form, const st_tune_pipe_regs *rg, st_tune_pipe *p, st_error *err);
void st_tune_pipe_free(st_tune_pipe *p);

/* The alternatives in st_tune (tune_pipe_alt.c).  open: with ST_SCHED_PIPE in o->sched_flags build
 * both forms, and with the GPU reward time each against the input (st_tune_fresh_estimate,
 * so->confirm_pairs; the time it took leaves so->seconds); r->pipe says what happened.  take: after
 * the search (ok: its result is in r), the faster held alternative replaces r's output when it beat
 * the search's estimate; r->pipe and r->message say so. */
typedef struct st_tune_pipe_one {
	st_tune_pipe p;
	int held;     /* verified on fresh inputs, interval above confirm_min */
	st_eval est;  /* original / alternative, the fresh-session estimate */
	char *verification_json;
} st_tune_pipe_one;
typedef struct st_tune_pipe_alt { st_tune_pipe_one f[2]; /* form 1, form 2 */ } st_tune_pipe_alt;
st_status st_tune_pipe_alt_open(const st_tune_kernel *k, const st_cubin *c, const char *kname, const st_sass_opts *so,
				const st_sass_kernel *sk, const st_tune_opts *o, st_search_opts *sopts, st_tune_pipe_alt *a, st_tune_result *r,
				st_error *err);
st_status st_tune_pipe_alt_take(st_tune_pipe_alt *a, int ok, st_tune_result *r, st_error *err);
void st_tune_pipe_alt_free(st_tune_pipe_alt *a);
#endif
