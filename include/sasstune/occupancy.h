/* sasstune occupancy: resident blocks and warps per SM of an sm_90 kernel from its registers per
 * thread, threads per block and shared memory per block; pure arithmetic (plugin/sched/occupancy.c,
 * docs/sched.md "Raising the register count" cites the limits used). */
#ifndef SASSTUNE_OCCUPANCY_H
#define SASSTUNE_OCCUPANCY_H
#include "sasstune/error.h"
#include <stddef.h>

/* What caps the resident blocks (the first of equal limits in this order). */
typedef enum st_occ_limit { ST_OCC_WARPS, ST_OCC_BLOCKS, ST_OCC_REGS, ST_OCC_SHARED } st_occ_limit;
typedef struct st_occupancy {
	unsigned blocks, warps; /* resident per SM (0 blocks: the launch cannot run) */
	unsigned warps_max;     /* 64 on sm_90: warps / warps_max is the occupancy */
	st_occ_limit limit;
} st_occupancy;

/* regs 1..255, threads 1..1024, shared = static (.nv.shared.<k>) + dynamic bytes; ST_EINVAL outside. */
st_status st_occupancy_sm90(unsigned regs, unsigned threads, size_t shared, st_occupancy *out, st_error *err);
/* "warps", "blocks", "registers", "shared memory" */
const char *st_occupancy_limit_name(st_occ_limit l);
/* The highest register count (regs..255) with as many resident blocks as `regs` has; with
 * allow_drop any count up to 255 that still runs.  regs itself when threads is 0 (unknown). */
unsigned st_occupancy_max_regs(unsigned regs, unsigned threads, size_t shared, int allow_drop);
#endif
