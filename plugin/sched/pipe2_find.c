/* Form 2's public entries for finding candidates (st_pipe2_find, st_pipe2_find_decoded, st_pipe2_make,
 * st_pipe2_explain):
 * per single-block loop, each load legal alone and the largest legal set of its loads whose code fits
 * the padding (ties: the smallest load offsets, compared in order). */
#include "pipe2_internal.h"

#include <stdlib.h>
#include <string.h>

#define PQ_SUBSET_LOADS 12 /* loads of a loop the subset search looks at */

/* a's loads before b's (both sorted, the same count): the smaller offsets first. */
static bool earlier(const uint32_t *a, const uint32_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i];
	return false;
}

/* The largest legal set of more than one load (ties: the smallest offsets), into *best; false: none. */
static bool largest(const pp_kern *x, const pp_loop *L, const uint32_t *loads, size_t n, unsigned reglimit,
		    pq_cand *best, pq_cand *t)
{
	int bestn = 1;
	for (uint32_t mask = 1; mask < (1u << n); mask++) {
		int pc = __builtin_popcount(mask);
		if (pc < bestn || pc == 1 || pc > PP_MAX_LOADS)
			continue;
		uint32_t sel[PP_MAX_LOADS];
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (mask >> i & 1)
				sel[k++] = loads[i];
		if (pc == bestn && !earlier(sel, best->g.loads, k))
			continue;
		if (pq_build(x, L, sel, k, reglimit, t, NULL)) {
			*best = *t;
			bestn = pc;
		}
	}
	return bestn > 1;
}

static st_status loop_cands(const pp_kern *x, const pp_loop *L, unsigned reglimit, st_pipe_cand **v, size_t *n,
			    size_t *cap, st_error *err)
{
	uint32_t loads[PQ_SUBSET_LOADS];
	size_t nl = pp_loop_loads(x, L, loads, PQ_SUBSET_LOADS);
	pq_cand *q = malloc(2 * sizeof *q);
	if (!q)
		return st_error_set(err, ST_ENOMEM, "pipe2: out of memory");
	st_pipe_cand c;
	st_status rc = ST_OK;
	for (size_t i = 0; i < nl && !rc; i++)
		if (pq_build(x, L, &loads[i], 1, reglimit, q, NULL)) {
			pq_to_cand(x, q, &c);
			rc = pp_push(v, n, cap, &c, err);
		}
	if (!rc && largest(x, L, loads, nl, reglimit, &q[0], &q[1])) {
		pq_to_cand(x, &q[0], &c);
		rc = pp_push(v, n, cap, &c, err);
	}
	free(q);
	return rc;
}

static st_status find_all(const pp_kern *x, unsigned reglimit, st_pipe_cand **out, size_t *n, st_error *err)
{
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	st_status rc = ST_OK;
	for (uint32_t b = 0; b < x->nb && !rc; b++) {
		pp_loop L;
		if (pq_loop_at(x, b, &L, NULL))
			rc = loop_cands(x, &L, reglimit, out, n, &cap, err);
	}
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

st_status st_pipe2_find(const st_cubin *c, const char *kernel, const st_sass_opts *o, unsigned reglimit,
			st_pipe_cand **out, size_t *n, st_error *err)
{
	*out = NULL;
	*n = 0;
	st_sass_kernel *k;
	pp_kern x;
	st_status rc = pp_open(c, kernel, o, &k, &x, err);
	if (rc)
		return rc;
	rc = find_all(&x, reglimit, out, n, err);
	pp_kern_free(&x);
	st_sass_free(k);
	return rc;
}

st_status st_pipe2_find_decoded(const st_cubin *c, const st_sass_kernel *k, unsigned reglimit, st_pipe_cand **out,
				size_t *n, st_error *err)
{
	*out = NULL;
	*n = 0;
	size_t ki = st_cubin_find_kernel(c, st_sass_name(k));
	if (ki == ST_CUBIN_NONE)
		return st_error_set(err, ST_EINVAL, "pipe2: %s: no kernel %s", st_cubin_name(c), st_sass_name(k));
	pp_kern x;
	st_status rc = pp_kern_init(&x, k, c, ki, err);
	if (rc)
		return rc;
	rc = find_all(&x, reglimit, out, n, err);
	pp_kern_free(&x);
	return rc;
}

/* The candidate of exactly loads[0..n) of the loop at header on an opened kernel. */
static st_status make(const pp_kern *x, unsigned reglimit, uint32_t header, const uint32_t *loads, size_t n,
		      st_pipe_cand *out, st_error *err)
{
	const st_sass_insn *h = st_sass_at(x->k, header);
	pp_loop L;
	pp_why why = {0};
	uint32_t idx[PP_MAX_LOADS];
	if (!h || h->offset != header || !pq_loop_at(x, h->block, &L, &why) || x->in[L.first].offset != header)
		return why.rule ? st_error_set(err, ST_EILLEGAL, "pipe2 %s: 0x%x: %s", why.rule, why.off, why.msg)
				: st_error_set(err, ST_EILLEGAL, "pipe2 Q1: 0x%x: not the first instruction of a single-block "
						   "loop", header);
	if (n == 0 || n > PP_MAX_LOADS)
		return st_error_set(err, ST_EILLEGAL, "pipe2 Q2: 0x%x: %zu loads (1..%d)", header, n, PP_MAX_LOADS);
	for (size_t i = 0; i < n; i++) {
		const st_sass_insn *y = st_sass_at(x->k, loads[i]);
		if (!y)
			return st_error_set(err, ST_EILLEGAL, "pipe2 Q2: 0x%x: no instruction there", loads[i]);
		idx[i] = y->index;
	}
	pq_cand *q = malloc(sizeof *q);
	if (!q)
		return st_error_set(err, ST_ENOMEM, "pipe2: out of memory");
	st_status rc = ST_OK;
	if (!pq_build(x, &L, idx, n, reglimit, q, &why))
		rc = st_error_set(err, ST_EILLEGAL, "pipe2 %s: 0x%x: %s", why.rule, why.off, why.msg);
	else
		pq_to_cand(x, q, out);
	free(q);
	return rc;
}

st_status st_pipe2_make(const st_cubin *c, const char *kernel, const st_sass_opts *o, unsigned reglimit,
			uint32_t header, const uint32_t *loads, size_t n, st_pipe_cand *out, st_error *err)
{
	st_sass_kernel *k;
	pp_kern x;
	st_status rc = pp_open(c, kernel, o, &k, &x, err);
	if (rc)
		return rc;
	rc = make(&x, reglimit, header, loads, n, out, err);
	pp_kern_free(&x);
	st_sass_free(k);
	return rc;
}

st_status st_pipe2_explain(const st_cubin *c, const char *kernel, const st_sass_opts *o, unsigned reglimit,
			   st_pipe_why_fn fn, void *ctx, st_error *err)
{
	st_sass_kernel *k;
	pp_kern x;
	st_status rc = pp_open(c, kernel, o, &k, &x, err);
	if (rc)
		return rc;
	pq_cand *q = malloc(sizeof *q);
	if (!q)
		rc = st_error_set(err, ST_ENOMEM, "pipe2: out of memory");
	for (uint32_t b = 0; !rc && b < x.nb; b++) {
		pp_loop L;
		pp_why why = {0};
		if (!pq_loop_at(&x, b, &L, &why)) {
			if (why.rule)
				fn(ctx, why.off, why.rule, why.msg);
			continue;
		}
		uint32_t loads[PQ_SUBSET_LOADS];
		size_t nl = pp_loop_loads(&x, &L, loads, PQ_SUBSET_LOADS);
		if (!nl)
			fn(ctx, x.in[L.first].offset, "Q1", "the loop has no global load with a register result");
		for (size_t i = 0; i < nl; i++)
			if (!pq_build(&x, &L, &loads[i], 1, reglimit, q, &why))
				fn(ctx, x.in[loads[i]].offset, why.rule, why.msg);
	}
	free(q);
	pp_kern_free(&x);
	st_sass_free(k);
	return rc;
}
