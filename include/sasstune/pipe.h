/* sasstune pipe: family 3 form 1, rotating a load group of a single-block loop across its back edge
 * (docs/pipeline.md "Form 1: rotation"; rules P1-P10).  Part of the sched module (a legality family). */
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
	int8_t pred_from, pred_to; /* P register renamed in the group (-1: none) */
} st_pipe_cand;
/* Legal candidates of kernel `kernel` of c (decoded with o): per loop, each single load that is
 * legal alone and the largest legal set of its loads (deduplicated), in loop order. */
st_status st_pipe_find(const st_cubin *c, const char *kernel, const st_sass_opts *o, st_pipe_cand **out, size_t *n,
		       st_error *err);
/* The same for kernel k, already decoded from c (no second nvdisasm run; tune's pipe stage). */
st_status st_pipe_find_decoded(const st_cubin *c, const st_sass_kernel *k, st_pipe_cand **out, size_t *n,
			       st_error *err);
void st_pipe_cands_free(st_pipe_cand *c);
/* The candidate of exactly these loads (byte offsets) of the loop at `header`, or ST_EILLEGAL naming the
 * rule (for sets st_pipe_find does not list, e.g. `sasstune pipe --loads`). */
st_status st_pipe_make(const st_cubin *c, const char *kernel, const st_sass_opts *o, uint32_t header,
		       const uint32_t *loads, size_t n, st_pipe_cand *out, st_error *err);
/* Rewrite c in place: each of cands[0..n) (at most one per loop, found on this same unmodified kernel)
 * is re-checked against the rules, then applied; all or nothing (ST_EILLEGAL naming the rule). */
st_status st_pipe_apply(st_cubin *c, const char *kernel, const st_sass_opts *o, const st_pipe_cand *cands,
			size_t n, st_error *err);
int st_pipe_describe(const st_pipe_cand *c, char *buf, size_t n); /* "loop 0x1b0: 3 loads 0x210,... " */
/* Why a loop or load is not a candidate (one call per refusal: offset, rule "P4", message). */
typedef void (*st_pipe_why_fn)(void *ctx, uint32_t offset, const char *rule, const char *msg);
st_status st_pipe_explain(const st_cubin *c, const char *kernel, const st_sass_opts *o, st_pipe_why_fn fn,
			  void *ctx, st_error *err);
#endif
