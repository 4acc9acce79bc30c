/* Loops, their loads, address slices and load-to-use distances (loops.h, docs/pipeline.md). */
#include "loops.h"

#include <stdlib.h>
#include <string.h>

bool lp_overlap(const st_sass_reg *a, size_t na, const st_sass_reg *b, size_t nb, bool skip_guard)
{
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++) {
			if (skip_guard && (a[i].slot == ST_SLOT_G || b[j].slot == ST_SLOT_G))
				continue;
			if (a[i].file == b[j].file && a[i].index < b[j].index + b[j].count &&
			    b[j].index < a[i].index + a[i].count)
				return true;
		}
	return false;
}

/* mark[b] = 1 for every block reaching the latch backwards without passing the header. */
static void body(const st_sass_kernel *k, size_t nb, uint32_t h, uint32_t latch, uint8_t *mark, uint32_t *stack)
{
	size_t sp = 0;
	mark[latch] = 1;
	stack[sp++] = latch;
	while (sp) {
		uint32_t b = stack[--sp];
		if (b == h)
			continue;
		for (size_t p = 0; p < nb; p++) { /* predecessors of b */
			uint32_t f, c;
			int32_t su[2];
			st_sass_block(k, p, &f, &c, su);
			if ((su[0] == (int32_t)b || su[1] == (int32_t)b) && !mark[p]) {
				mark[p] = 1;
				stack[sp++] = (uint32_t)p;
			}
		}
	}
	mark[h] = 1;
}

static bool in_body(const st_sass_kernel *k, const lp_loop *l, uint32_t i)
{
	return l->in[st_sass_insns(k)[i].block];
}

/* Body instruction j writes r (a predicate "written" by a memory instruction is its LDGSTS
 * zero-fill operand, which the decode lists among the defs: not a write here). */
static bool writes(const st_sass_kernel *k, const lp_loop *l, uint32_t j, const st_sass_reg *r)
{
	const st_sass_insn *x = &st_sass_insns(k)[j];
	if (!in_body(k, l, j) || ((r->file == ST_RF_P || r->file == ST_RF_UP) && x->cls == ST_CLASS_MEMORY))
		return false;
	return lp_overlap(x->defs, x->ndefs, r, 1, true);
}

/* Add the body instructions computing the registers x reads before index `at` (latest write in
 * layout order, else one later in the body: carried around the back edge). */
static void slice_of(const st_sass_kernel *k, const lp_loop *l, lp_load *ld, uint32_t at, int depth)
{
	const st_sass_insn *in = st_sass_insns(k), *x = &in[at];
	for (uint8_t u = 0; u < x->nuses && depth < 8; u++) {
		if (x->uses[u].slot == ST_SLOT_G)
			continue;
		uint32_t d = LP_NONE;
		for (uint32_t j = at; j-- > l->first && d == LP_NONE;)
			if (writes(k, l, j, &x->uses[u]))
				d = j;
		bool carried = false;
		for (uint32_t j = l->last + 1; j-- > at && d == LP_NONE;)
			if (writes(k, l, j, &x->uses[u]))
				d = j, carried = true;
		if (d == LP_NONE)
			continue;
		ld->carried |= carried;
		bool seen = false;
		for (size_t s = 0; s < ld->nslice; s++)
			seen |= ld->slice[s] == d;
		if (seen || ld->nslice == LP_SLICE_MAX)
			continue;
		ld->slice[ld->nslice++] = d;
		if (!carried)
			slice_of(k, l, ld, d, depth + 1);
	}
}

/* The first body instruction after the load (wrapping once around the back edge) reading one of
 * its result registers, and the stalls between. */
static void consumer_of(const st_sass_kernel *k, const lp_loop *l, lp_load *ld)
{
	const st_sass_insn *in = st_sass_insns(k), *x = &in[ld->at];
	st_sass_reg res[8]; /* the R / UR results (LDGSTS lists its predicate operand among its defs) */
	size_t nres = 0;
	ld->consumer = LP_NONE;
	for (uint8_t d = 0; d < x->ndefs && nres < 8; d++)
		if (x->defs[d].file == ST_RF_R || x->defs[d].file == ST_RF_UR)
			res[nres++] = x->defs[d];
	if (!nres)
		return;
	int t = x->ctrl.stall;
	uint32_t j = ld->at + 1;
	for (int pass = 0; pass < 2; pass++, j = l->first) {
		for (; j <= l->last; j++) {
			if (!in_body(k, l, j))
				continue;
			if (j == ld->at)
				return;
			if (lp_overlap(in[j].uses, in[j].nuses, res, nres, false)) {
				ld->consumer = j, ld->dist = t, ld->wraps = pass == 1;
				return;
			}
			t += in[j].ctrl.stall;
		}
	}
}

/* LDG, LDS, LDSM, LDGSTS, TMA (UTMALDG, UBLKCP) and generic LD: the loads family 3 is about. */
static bool is_loop_load(const st_sass_insn *x)
{
	static const char *const pre[] = {"LDG", "LDS", "UTMALDG", "UBLKCP", "LD.", NULL};
	if (x->cls != ST_CLASS_MEMORY) /* LDGSTS and TMA also write shared memory (ST_F_STORE) */
		return false;
	for (const char *const *p = pre; *p; p++)
		if (!strncmp(x->opcode, *p, strlen(*p)))
			return true;
	return !strcmp(x->opcode, "LD");
}

/* Natural: every body block but the header is entered only from the body. */
static bool natural(const st_sass_kernel *k, const lp_loop *l, size_t nb)
{
	if (l->in[0] && l->header != 0)
		return false;
	for (size_t p = 0; p < nb; p++) {
		uint32_t f, c;
		int32_t su[2];
		st_sass_block(k, p, &f, &c, su);
		for (int e = 0; e < 2; e++)
			if (!l->in[p] && su[e] >= 0 && (uint32_t)su[e] != l->header && l->in[su[e]])
				return false;
	}
	return true;
}

static void fill(const st_sass_kernel *k, lp_loop *l, size_t nb)
{
	const st_sass_insn *in = st_sass_insns(k);
	l->natural = natural(k, l, nb);
	for (size_t b = 0; b < nb; b++) {
		if (!l->in[b])
			continue;
		uint32_t f, c;
		int32_t su[2];
		st_sass_block(k, b, &f, &c, su);
		l->nblocks++;
		l->ninsns += c;
		if (f < l->first)
			l->first = f;
		if (f + c - 1 > l->last)
			l->last = f + c - 1;
		for (uint32_t i = f; i < f + c; i++) {
			l->cycles += in[i].ctrl.stall;
			l->sb_set |= (uint8_t)((in[i].ctrl.wbar < 6 ? 1u << in[i].ctrl.wbar : 0) |
					       (in[i].ctrl.rbar < 6 ? 1u << in[i].ctrl.rbar : 0));
			l->nloads += is_loop_load(&in[i]);
		}
	}
	l->loads = calloc(l->nloads ? l->nloads : 1, sizeof *l->loads);
	size_t n = 0;
	for (uint32_t i = l->first; l->loads && i <= l->last; i++)
		if (in_body(k, l, i) && is_loop_load(&in[i])) {
			lp_load *ld = &l->loads[n++];
			ld->at = i;
			slice_of(k, l, ld, i, 0);
			ld->invariant = ld->nslice == 0;
			consumer_of(k, l, ld);
		}
	if (!l->loads)
		l->nloads = 0;
}

static st_status add_loop(const st_sass_kernel *k, size_t nb, uint32_t h, uint32_t latch, uint32_t *stack,
			  lp_loop **v, size_t *n, st_error *err)
{
	for (size_t i = 0; i < *n; i++) /* a second latch of the same header: one loop */
		if ((*v)[i].header == h) {
			body(k, nb, h, latch, (*v)[i].in, stack);
			(*v)[i].latch = latch > (*v)[i].latch ? latch : (*v)[i].latch;
			return ST_OK;
		}
	lp_loop *g = realloc(*v, (*n + 1) * sizeof **v);
	if (!g)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	*v = g;
	lp_loop *l = &g[(*n)++];
	memset(l, 0, sizeof *l);
	l->header = h, l->latch = latch, l->trips = -1;
	if (!(l->in = calloc(nb, 1)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	body(k, nb, h, latch, l->in, stack);
	return ST_OK;
}

st_status lp_analyse(const st_sass_kernel *k, lp_loop **out, size_t *n, st_error *err)
{
	size_t nb = st_sass_block_count(k);
	lp_loop *v = NULL;
	*n = 0;
	uint32_t *stack = calloc(nb + 1, sizeof *stack);
	if (!stack)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	st_status rc = ST_OK;
	for (size_t b = 0; b < nb && !rc; b++) {
		uint32_t f, c;
		int32_t su[2];
		st_sass_block(k, b, &f, &c, su);
		const st_sass_insn *last = &st_sass_insns(k)[f + c - 1];
		if (su[0] == (int32_t)b && c == 1 && last->guard < 0 && last->target == (int64_t)last->offset)
			continue; /* the trap `BRA` to itself after the last EXIT: never entered */
		for (int e = 0; e < 2 && !rc; e++)
			if (su[e] >= 0 && (size_t)su[e] <= b && !(e == 1 && su[1] == su[0]))
				rc = add_loop(k, nb, (uint32_t)su[e], (uint32_t)b, stack, &v, n, err);
	}
	free(stack);
	for (size_t i = 0; i < *n && !rc; i++) {
		uint32_t f, c;
		int32_t su[2];
		st_sass_block(k, v[i].header, &f, &c, su);
		v[i].head = v[i].first = v[i].last = f;
		fill(k, &v[i], nb);
		for (size_t j = 0; j < *n; j++)
			v[i].depth += v[j].in[v[i].header];
	}
	if (rc) {
		lp_free(v, *n);
		v = NULL, *n = 0;
	}
	*out = v;
	return rc;
}

void lp_free(lp_loop *l, size_t n)
{
	for (size_t i = 0; l && i < n; i++) {
		free(l[i].in);
		free(l[i].loads);
	}
	free(l);
}

/* Is R`r` read on some path from the start of block b before an unpredicated write? */
static bool live_from(const st_sass_kernel *k, size_t nb, uint32_t b0, unsigned r, uint8_t *seen, uint32_t *stack)
{
	const st_sass_insn *in = st_sass_insns(k);
	st_sass_reg reg = {(uint16_t)r, ST_RF_R, 1, 0};
	size_t sp = 0;
	memset(seen, 0, nb);
	seen[b0] = 1;
	stack[sp++] = b0;
	while (sp) {
		uint32_t b = stack[--sp], f, c;
		int32_t su[2];
		st_sass_block(k, b, &f, &c, su);
		bool killed = false;
		for (uint32_t i = f; i < f + c && !killed; i++) {
			if (lp_overlap(in[i].uses, in[i].nuses, &reg, 1, false))
				return true;
			killed = in[i].guard < 0 && lp_overlap(in[i].defs, in[i].ndefs, &reg, 1, false);
		}
		for (int e = 0; e < 2 && !killed; e++)
			if (su[e] >= 0 && (size_t)su[e] < nb && !seen[su[e]])
				seen[su[e]] = 1, stack[sp++] = (uint32_t)su[e];
	}
	return false;
}

size_t lp_loop_free(const st_sass_kernel *k, const lp_loop *l, unsigned count, uint8_t *out)
{
	const st_sass_insn *in = st_sass_insns(k);
	size_t nb = st_sass_block_count(k), n = 0;
	uint8_t *seen = calloc(nb + 1, 1);
	uint32_t *stack = calloc(nb + 1, sizeof *stack);
	memset(out, 0, count);
	for (unsigned r = 0; r < count && seen && stack; r++) {
		st_sass_reg reg = {(uint16_t)r, ST_RF_R, 1, 0};
		bool ok = r != 1; /* R1, the stack pointer, is kept */
		for (uint32_t i = l->first; i <= l->last && ok; i++)
			ok = !l->in[in[i].block] || (!lp_overlap(in[i].uses, in[i].nuses, &reg, 1, false) &&
						     !lp_overlap(in[i].defs, in[i].ndefs, &reg, 1, false));
		for (size_t b = 0; b < nb && ok; b++) { /* not live into the loop's exits */
			uint32_t f, c;
			int32_t su[2];
			st_sass_block(k, b, &f, &c, su);
			for (int e = 0; e < 2 && ok && l->in[b]; e++)
				if (su[e] >= 0 && (size_t)su[e] < nb && !l->in[su[e]])
					ok = !live_from(k, nb, (uint32_t)su[e], r, seen, stack);
		}
		out[r] = ok;
		n += ok;
	}
	free(seen);
	free(stack);
	return n;
}
