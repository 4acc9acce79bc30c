/* The independent checker's state (check.c), shared with its rule for moves across blocks
 * (check_xblock.c) and its reading of renamed registers (check_rename.c).  Nothing here is used by the move generator. */
#ifndef ST_CHECK_INTERNAL_H
#define ST_CHECK_INTERNAL_H

#include "sasstune/sched.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CK_LIMIT 30       /* cycles: longest constraint (tables top out at 28) */
#define CK_MAX_BLOCKS 16  /* blocks a cross-block walk may enter */
#define CK_CONSUMERS 8    /* consumers of a variable-latency result checked for coverage */

typedef struct ck {
	const st_sass_kernel *k;
	const st_sass_insn *in;  /* the original instructions with the rewrite's registers (renames) */
	const st_sass_insn *oin; /* as decoded from the original */
	st_sass_insn *tin;       /* owned copy behind `in` once a renamed word is seen */
	st_sass_reg *tregs;
	bool *renamed;           /* per original index: its register fields changed */
	size_t n;
	int sm;
	const char *name;
	const st_sass_opts *o; /* the caller's decode options (the pipe form-2 checker decodes the rewrite) */
	uint32_t *map, *inv;  /* map[tuned slot] = original index; inv[original] = tuned slot */
	st_ctrl *ct;          /* tuned control fields per tuned slot */
	int32_t *ot;          /* original issue cycle from block start, per original index */
	uint32_t *bfirst, *blast;
	int32_t (*bsucc)[2];
	size_t nb;
	bool *fixed, *refslot;
	uint32_t *seg;        /* segment (between fixed points) of each original slot */
	uint8_t counted;      /* SBs counted by some DEPBAR.LE with a count > 0 */
	uint8_t *depbar;      /* SBs each original instruction waits on as a DEPBAR */
	int *depcnt;          /* its count */
	st_check_report_fn report;
	void *ctx;
	size_t bad;
	/* moves across blocks (check_xblock.c): per original index, moved to the end of the block
	 * before / a block leader moved down one slot by such a move; per tuned slot its block in the
	 * tuned layout, and per block its tuned first and last slot */
	uint8_t *xmoved, *xleader;
	uint32_t *tblock, *tbfirst, *tblast;
} ck;

/* One violation at tuned slot `slot` (check.c). */
void ck_flag(ck *c, uint32_t slot, const char *msg);
/* Find and judge every move across blocks; accepted ones get the tuned layout (check_xblock.c). */
void ck_xblock(ck *c);
/* The register-count rules K1, K2 (check_regs.c). */
void ck_regcount(ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt);
/* A rewrite that used padding slots: judged as a pipe rewrite (family 3 form 1) alone, with c's
 * k, in, n, sm, name and report set (check_pipe*.c). */
void ck_pipe(ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt);
/* The checker's own reading: register runs a and b share a register (same file, intersecting
 * [index, index + count)). */
static inline bool ck_regs_meet(const st_sass_reg *a, const st_sass_reg *b)
{
	return a->file == b->file && a->index < b->index + b->count && b->index < a->index + a->count;
}

#endif
