/* The loop study behind `sasstune loops` (docs/pipeline.md): every natural loop of a decoded kernel
 * (the xblock family's definition: a back edge latch -> header with the header not after the latch
 * in layout order; the body is every block that reaches the latch backwards without passing the
 * header), its loads with their address slices and the static distance to their first consumer,
 * and its trip count at a launch where the exit test can be evaluated.  CLI-only analysis. */
#ifndef ST_LOOPS_H
#define ST_LOOPS_H

#include "sasstune/sass.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LP_SLICE_MAX 48
#define LP_NONE UINT32_MAX

typedef struct lp_load {
	uint32_t at;                  /* instruction index */
	uint32_t consumer;            /* first reader of a result register in the body (LP_NONE: none, async) */
	int dist;                     /* cycles from the load's issue to the consumer's (sum of stalls) */
	bool wraps;                   /* the consumer is reached across the back edge (next iteration) */
	uint32_t slice[LP_SLICE_MAX]; /* the body's instructions computing its address, latest first */
	size_t nslice;
	bool carried;                 /* the address depends on a value carried around the back edge */
	bool invariant;               /* no body instruction computes its address */
} lp_load;

typedef struct lp_loop {
	uint32_t header, latch;  /* blocks */
	uint32_t head;           /* the header's first instruction (index) */
	uint32_t first, last;    /* the body's first and last instruction (layout order) */
	uint8_t *in;             /* per block: 1 in the body */
	size_t nblocks, ninsns;
	int depth;               /* loops whose body holds this header (1: outermost) */
	bool natural;            /* the header dominates the body (no other block entered from outside) */
	int cycles;              /* sum of the body's stalls: static issue cycles of one pass over every block */
	lp_load *loads;
	size_t nloads;
	uint8_t sb_set;          /* scoreboards some body instruction sets (wbar/rbar) */
	long trips;              /* at the launch; -1 unknown */
	bool entered_known, entered;
	uint32_t skip_branch;    /* the branch that jumps past the loop (LP_NONE: none found) */
	char trip[400];          /* how the trip count was derived, or why not */
} lp_loop;

/* Values of c[0x0][off] at a launch (the kernel parameters, block and grid sizes). */
typedef struct lp_params {
	size_t n;
	uint32_t off[96];
	int64_t val[96];
} lp_params;

st_status lp_analyse(const st_sass_kernel *k, lp_loop **out, size_t *n, st_error *err);
void lp_free(lp_loop *l, size_t n);
/* Fill l->trips / entered / trip from the exit test at the back edge (loops_trip.c). */
void lp_trip(const st_sass_kernel *k, lp_loop *l, const lp_params *p);
/* R registers below `count` (R1, the stack pointer, excepted) that the loop neither reads nor
 * writes and that are dead on every exit from it (so not live across it): out[r] = 1; returns
 * how many.  Free for a prefetch. */
size_t lp_loop_free(const st_sass_kernel *k, const lp_loop *l, unsigned count, uint8_t *out);
/* Registers overlap (same file, index ranges meet). */
bool lp_overlap(const st_sass_reg *a, size_t na, const st_sass_reg *b, size_t nb, bool skip_guard);

#endif
