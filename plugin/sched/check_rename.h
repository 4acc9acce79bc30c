/* The independent checker's renamed-register reading and dataflow rule (check_rename.c), used by
 * check.c only.  Nothing here is shared with the move generator. */
#ifndef ST_CHECK_RENAME_H
#define ST_CHECK_RENAME_H

#include "sasstune/sass.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 1 when tuned word tw is original o with only register fields changed that the checker can
 * place (o's opcode a plain math form; control bits aside); *out gets o with the new registers
 * (its defs/uses in regs, room for o->ndefs + o->nuses).  0 otherwise (out undefined). */
int ckr_renamed(const st_sass_insn *o, const uint8_t tw[16], st_sass_insn *out, st_sass_reg *regs);

typedef struct ckr_blocks { size_t nb; const uint32_t *first, *last; const int32_t (*succ)[2]; } ckr_blocks;
typedef void (*ckr_report_fn)(void *ctx, uint32_t tuned_slot, const char *msg);
/* For every block: each register read of the rewrite (tin, in the order map gives: map[tuned
 * slot] = original index) is reached by the same definitions (or the same block-entry value) as
 * in the original (oin, original order), and every register live at the block's end in the
 * original holds the same definitions there.  Each difference goes to bad. */
void ckr_dataflow(const st_sass_insn *oin, const st_sass_insn *tin, size_t n, const uint32_t *map,
		  const ckr_blocks *bl, ckr_report_fn bad, void *ctx);
#endif
