/* sasstune pipe: family 3 of a single-block loop's loads: form 1 rotates a load group across the back
 * edge (docs/pipeline.md "Form 1: rotation", rules P1-P10), form 2 prefetches the next pass's loads
 * into fresh registers ("Form 2", rules Q1-Q12).  Part of the sched module (a legality family). */
#ifndef SASSTUNE_PIPE_H
#define SASSTUNE_PIPE_H
#include "sasstune/cubin.h"
#include "sasstune/sass.h"
#include <stddef.h>
#include <stdint.h>

typedef struct st_pipe_cand {
	uint32_t header;          /* byte offset of loop block B's first instruction (original kernel) */
	uint32_t nloads;
	uint32_t loads[8];        /* byte offsets of the loads rotated together (one group) */
	uint32_t nmembers, npeel; /* group size; slots the peel inserts (members + feeders) */
	int8_t pred_from, pred_to; /* form 1: P register renamed in the group (-1: none) */
	uint8_t form;             /* 1 rotation (0 reads as 1), 2 prefetch into fresh registers */
	int8_t sb;                /* form 2: the fresh scoreboard S' the prefetches set (-1: form 1) */
	uint16_t regs_before, regs_after; /* register count before/after (form 1: equal; form 2: Q9) */
	uint16_t nhand;           /* form 2: hand-over instructions; inserted = npeel + nhand + 2 */
} st_pipe_cand;
/* Legal candidates of kernel `kernel` of c (decoded with o): per loop, each single load that is
 * legal alone and the largest legal set of its loads (deduplicated), in loop order. */
st_status st_pipe_find(const st_cubin *c, const char *kernel, const st_sass_opts *o, st_pipe_cand **out, size_t *n,
		       st_error *err);
/* The same for kernel k, already decoded from c (no second nvdisasm run; tune's pipe stage). */
st_status st_pipe_find_decoded(const st_cubin *c, const st_sass_kernel *k, st_pipe_cand **out, size_t *n,
			       st_error *err);
void st_pipe_cands_free(st_pipe_cand *c);
/* Form 2 (Q1-Q12): the same lists and single candidates; reglimit: the most registers the rewrite may
 * use (the caller's occupancy rule, occupancy.h; 0 = the kernel's count: no raise). */
st_status st_pipe2_find(const st_cubin *c, const char *kernel, const st_sass_opts *o, unsigned reglimit,
			st_pipe_cand **out, size_t *n, st_error *err);
st_status st_pipe2_find_decoded(const st_cubin *c, const st_sass_kernel *k, unsigned reglimit, st_pipe_cand **out,
				size_t *n, st_error *err);
st_status st_pipe2_make(const st_cubin *c, const char *kernel, const st_sass_opts *o, unsigned reglimit,
			uint32_t header, const uint32_t *loads, size_t n, st_pipe_cand *out, st_error *err);
/* The candidate of exactly these loads (byte offsets) of the loop at `header`, or ST_EILLEGAL naming the
 * rule (for sets st_pipe_find does not list, e.g. `sasstune pipe --loads`). */
st_status st_pipe_make(const st_cubin *c, const char *kernel, const st_sass_opts *o, uint32_t header,
		       const uint32_t *loads, size_t n, st_pipe_cand *out, st_error *err);
/* Rewrite c in place: each of cands[0..n) (at most one per loop, found on this same unmodified kernel,
 * all of one form) is re-checked against the rules, then applied; form 2 raises the register count to
 * regs_after; all or nothing (ST_EILLEGAL naming the rule). */
st_status st_pipe_apply(st_cubin *c, const char *kernel, const st_sass_opts *o, const st_pipe_cand *cands,
			size_t n, st_error *err);
/* "loop 0x1b0: 3 loads 0x210,...", form 2 "loop 0x150: prefetch 2 loads 0x1d0,0x200, 7 members, 11
 * inserted, 21 -> 24 registers" */
int st_pipe_describe(const st_pipe_cand *c, char *buf, size_t n);
/* Why a loop or load is not a candidate (one call per refusal: offset, rule "P4", message). */
typedef void (*st_pipe_why_fn)(void *ctx, uint32_t offset, const char *rule, const char *msg);
st_status st_pipe_explain(const st_cubin *c, const char *kernel, const st_sass_opts *o, st_pipe_why_fn fn,
			  void *ctx, st_error *err);
/* Form 2's refusals: each loop refused as a whole and each load refused alone (rules "Q1".."Q10"). */
st_status st_pipe2_explain(const st_cubin *c, const char *kernel, const st_sass_opts *o, unsigned reglimit,
			   st_pipe_why_fn fn, void *ctx, st_error *err);
#endif
