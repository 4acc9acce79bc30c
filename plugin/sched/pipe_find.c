/* The pipe family's public entries for finding candidates (st_pipe_find, st_pipe_explain,
 * st_pipe_describe): every single-block loop, each load alone and the largest legal set of its loads. */
#include "pipe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PP_SUBSET_LOADS 12 /* loads of a loop the subset search looks at */

st_status pp_open(const st_cubin *c, const char *kernel, const st_sass_opts *o, st_sass_kernel **k, pp_kern *x,
		  st_error *err)
{
	size_t ki = kernel ? st_cubin_find_kernel(c, kernel) : (st_cubin_kernel_count(c) == 1 ? 0 : ST_CUBIN_NONE);
	if (ki == ST_CUBIN_NONE)
		return st_error_set(err, ST_EINVAL, "pipe: %s: no kernel %s", st_cubin_name(c),
				    kernel ? kernel : "(the cubin has several: name one)");
	st_status rc = st_sass_decode(c, st_cubin_kernel(c, ki)->name, o, k, err);
	if (rc)
		return rc;
	if ((rc = pp_kern_init(x, *k, c, ki, err))) {
		st_sass_free(*k);
		*k = NULL;
	}
	return rc;
}

static void to_cand(const pp_kern *x, const pp_loop *L, const pp_group *g, st_pipe_cand *c)
{
	memset(c, 0, sizeof *c);
	c->header = x->in[L->first].offset;
	c->nloads = g->nloads;
	for (uint32_t i = 0; i < g->nloads; i++)
		c->loads[i] = x->in[g->loads[i]].offset;
	c->nmembers = g->nmem;
	c->npeel = g->nmem + g->nfeed;
	c->pred_from = g->pred_from;
	c->pred_to = g->pred_to;
	c->form = 1;
	c->sb = -1;
	c->regs_before = c->regs_after = (uint16_t)(x->c ? st_cubin_regcount(x->c, x->ki) : 0);
}

static bool fits(const pp_kern *x, const pp_group *g)
{
	return !x->c || g->nmem + g->nfeed <= st_cubin_insertable(x->c, x->ki);
}

/* The largest legal subset of loads[0..n) with more than one load whose peel fits the padding (the first
 * found in mask order), or 0. */
static uint32_t largest(const pp_kern *x, const pp_loop *L, const uint32_t *loads, size_t n, pp_group *g)
{
	uint32_t best = 0;
	int bestn = 1;
	for (uint32_t mask = 1; mask < (1u << n); mask++) {
		int pc = __builtin_popcount(mask);
		if (pc <= bestn || pc > PP_MAX_LOADS)
			continue;
		uint32_t sel[PP_MAX_LOADS];
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (mask >> i & 1)
				sel[k++] = loads[i];
		pp_group t;
		if (pp_group_build(x, L, sel, k, &t, NULL) && fits(x, &t)) {
			best = mask;
			bestn = pc;
			*g = t;
		}
	}
	return best;
}

st_status pp_push(st_pipe_cand **v, size_t *n, size_t *cap, const st_pipe_cand *c, st_error *err)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 8;
		st_pipe_cand *p = realloc(*v, nc * sizeof *p);
		if (!p)
			return st_error_set(err, ST_ENOMEM, "pipe: out of memory");
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = *c;
	return ST_OK;
}

static st_status loop_cands(const pp_kern *x, const pp_loop *L, st_pipe_cand **v, size_t *n, size_t *cap,
			    st_error *err)
{
	uint32_t loads[PP_SUBSET_LOADS];
	size_t nl = pp_loop_loads(x, L, loads, PP_SUBSET_LOADS);
	st_pipe_cand c;
	pp_group g;
	st_status rc = ST_OK;
	for (size_t i = 0; i < nl && !rc; i++)
		if (pp_group_build(x, L, &loads[i], 1, &g, NULL) && fits(x, &g)) {
			to_cand(x, L, &g, &c);
			rc = pp_push(v, n, cap, &c, err);
		}
	if (!rc && largest(x, L, loads, nl, &g)) {
		to_cand(x, L, &g, &c);
		rc = pp_push(v, n, cap, &c, err);
	}
	return rc;
}

/* Every loop's candidates of an opened kernel into *out (nothing on an error). */
static st_status find_all(const pp_kern *x, st_pipe_cand **out, size_t *n, st_error *err)
{
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	st_status rc = ST_OK;
	for (uint32_t b = 0; b < x->nb && !rc; b++) {
		pp_loop L;
		if (pp_loop_at(x, b, &L, NULL))
			rc = loop_cands(x, &L, out, n, &cap, err);
	}
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

st_status st_pipe_find(const st_cubin *c, const char *kernel, const st_sass_opts *o, st_pipe_cand **out, size_t *n,
		       st_error *err)
{
	*out = NULL;
	*n = 0;
	st_sass_kernel *k;
	pp_kern x;
	st_status rc = pp_open(c, kernel, o, &k, &x, err);
	if (rc)
		return rc;
	rc = find_all(&x, out, n, err);
	pp_kern_free(&x);
	st_sass_free(k);
	return rc;
}

st_status st_pipe_find_decoded(const st_cubin *c, const st_sass_kernel *k, st_pipe_cand **out, size_t *n,
			       st_error *err)
{
	*out = NULL;
	*n = 0;
	size_t ki = st_cubin_find_kernel(c, st_sass_name(k));
	if (ki == ST_CUBIN_NONE)
		return st_error_set(err, ST_EINVAL, "pipe: %s: no kernel %s", st_cubin_name(c), st_sass_name(k));
	pp_kern x;
	st_status rc = pp_kern_init(&x, k, c, ki, err);
	if (rc)
		return rc;
	rc = find_all(&x, out, n, err);
	pp_kern_free(&x);
	return rc;
}

void st_pipe_cands_free(st_pipe_cand *c) { free(c); }

int st_pipe_describe(const st_pipe_cand *c, char *buf, size_t n)
{
	int w = snprintf(buf, n, "loop 0x%x: %s%u load%s", c->header, c->form == 2 ? "prefetch " : "", c->nloads,
			 c->nloads == 1 ? "" : "s");
	for (uint32_t i = 0; i < c->nloads; i++)
		w += snprintf(buf + (w < (int)n ? w : (int)n), (size_t)w < n ? n - (size_t)w : 0, "%s0x%x", i ? "," : " ",
			      c->loads[i]);
	if (c->form == 2)
		return w + snprintf(buf + (w < (int)n ? w : (int)n), (size_t)w < n ? n - (size_t)w : 0,
				    ", %u members, %u inserted, %u -> %u registers", c->nmembers,
				    c->npeel + c->nhand + 2u, c->regs_before, c->regs_after);
	w += snprintf(buf + (w < (int)n ? w : (int)n), (size_t)w < n ? n - (size_t)w : 0, ", %u members, %u peeled",
		      c->nmembers, c->npeel);
	if (c->pred_from >= 0)
		w += snprintf(buf + (w < (int)n ? w : (int)n), (size_t)w < n ? n - (size_t)w : 0, ", P%d -> P%d",
			      c->pred_from, c->pred_to);
	return w;
}

st_status st_pipe_explain(const st_cubin *c, const char *kernel, const st_sass_opts *o, st_pipe_why_fn fn, void *ctx,
			  st_error *err)
{
	st_sass_kernel *k;
	pp_kern x;
	st_status rc = pp_open(c, kernel, o, &k, &x, err);
	if (rc)
		return rc;
	for (uint32_t b = 0; b < x.nb; b++) {
		pp_loop L;
		pp_why why;
		if (!pp_loop_at(&x, b, &L, &why)) {
			if (why.rule)
				fn(ctx, why.off, why.rule, why.msg);
			continue;
		}
		uint32_t loads[PP_SUBSET_LOADS];
		size_t nl = pp_loop_loads(&x, &L, loads, PP_SUBSET_LOADS);
		if (!nl)
			fn(ctx, x.in[L.first].offset, "P2", "the loop has no global load with a register result");
		pp_group g;
		for (size_t i = 0; i < nl; i++) {
			if (!pp_group_build(&x, &L, &loads[i], 1, &g, &why))
				fn(ctx, x.in[loads[i]].offset, why.rule, why.msg);
			else if (!fits(&x, &g))
				fn(ctx, x.in[loads[i]].offset, "P7", "the peel needs more slots than the padding has");
		}
	}
	pp_kern_free(&x);
	st_sass_free(k);
	return ST_OK;
}

st_status st_pipe_make(const st_cubin *c, const char *kernel, const st_sass_opts *o, uint32_t header,
		       const uint32_t *loads, size_t n, st_pipe_cand *out, st_error *err)
{
	st_sass_kernel *k;
	pp_kern x;
	st_status rc = pp_open(c, kernel, o, &k, &x, err);
	if (rc)
		return rc;
	const st_sass_insn *h = st_sass_at(k, header);
	pp_loop L;
	pp_group g;
	pp_why why = {0};
	uint32_t idx[PP_MAX_LOADS];
	bool ok = h && h->offset == header && pp_loop_at(&x, h->block, &L, &why) && x.in[L.first].offset == header;
	if (!ok && !why.rule)
		rc = st_error_set(err, ST_EILLEGAL, "pipe P1: 0x%x: not the first instruction of a single-block loop", header);
	else if (!ok)
		rc = st_error_set(err, ST_EILLEGAL, "pipe %s: 0x%x: %s", why.rule, why.off, why.msg);
	for (size_t i = 0; !rc && i < n && i < PP_MAX_LOADS; i++) {
		const st_sass_insn *y = st_sass_at(k, loads[i]);
		if (!y)
			rc = st_error_set(err, ST_EILLEGAL, "pipe P2: 0x%x: no instruction there", loads[i]);
		else
			idx[i] = y->index;
	}
	if (!rc && !pp_group_build(&x, &L, idx, n, &g, &why))
		rc = st_error_set(err, ST_EILLEGAL, "pipe %s: 0x%x: %s", why.rule, why.off, why.msg);
	if (!rc && !fits(&x, &g))
		rc = st_error_set(err, ST_EILLEGAL, "pipe P7: 0x%x: the peel needs %u slots, the padding has %zu", header,
				  g.nmem + g.nfeed, st_cubin_insertable(c, x.ki));
	if (!rc)
		to_cand(&x, &L, &g, out);
	pp_kern_free(&x);
	st_sass_free(k);
	return rc;
}
