/* Internals of schedule files (include/sasstune/schedule.h): schedule.c (swaps, moves, permutations)
 * and schedule_pipe.c (the "pipe" form: family 3 form 1 rotations, docs/pipeline.md). */
#ifndef ST_SCHEDULE_INTERNAL_H
#define ST_SCHEDULE_INTERNAL_H
#include "sasstune/schedule.h"
#include "util/util.h"

#include <cJSON.h>
#include <stdbool.h>

/* One rewrite of family 3: the loop whose block starts at byte `header`, its loads[0..n) (1..8,
 * distinct), all byte offsets in the original kernel and multiples of 16 (st_pipe_cand.header/.loads);
 * form 1 (rotation) or 2 (prefetch into fresh registers, which may use up to `regs` registers; 0: the
 * kernel's count). */
typedef struct sched_pipe {
	uint32_t header, n, loads[8];
	uint8_t form;
	uint16_t regs;
} sched_pipe;

typedef struct sched_kernel {
	char *name;
	bool is_perm; /* v holds a permutation, else a list of swaps */
	bool is_pipe; /* pipe[0..npipe) holds rotations (one per loop) and v nothing: the forms exclude each other */
	uint32_t *v;
	size_t n, cap;
	st_ctrl *ctrl; /* per entry of v when isc[j] == 1: a control edit of slot v[j], not a swap; for a
	                * rename (isc 2) ctrl.wbar holds nothing and aux the register; a field edit
	                * (isc 3): aux = field << 8 | register; a register count (isc 4): aux, slot 0 */
	uint8_t *isc;
	uint16_t *aux;
	size_t nctrl;
	sched_pipe *pipe;
	size_t npipe;
} sched_kernel;

struct st_schedule {
	sched_kernel *k;
	size_t n, cap;
};

/* schedule.c: kernel `name` of s, added (empty) when create and it is missing; NULL when missing or
 * out of memory. */
sched_kernel *sp_kernel(st_schedule *s, const char *name, bool create);

/* schedule_pipe.c */
st_status sp_parse_pipe(const char *name, const char *kname, const cJSON *arr, sched_kernel *k, st_error *err);
st_status sp_pipe_json(st_buf *b, const sched_kernel *k);
/* Rotate schedule kernel i's loops in c (which must hold that kernel unmodified) through st_pipe_make
 * (each entry, the rules re-checked) and one st_pipe_apply: all or nothing. */
st_status sp_apply_pipe(const st_schedule *s, size_t i, st_cubin *c, const st_sass_opts *o, st_error *err);
/* st_sched_rewrite's part: every pipe kernel of s rotated in work (a copy of orig, those kernels not yet
 * modified), then judged against orig by the independent checker (ST_EILLEGAL naming the violation). */
st_status sp_rewrite_pipes(const st_cubin *orig, const st_schedule *s, const st_sass_opts *o, st_cubin *work,
			   st_error *err);
#endif
