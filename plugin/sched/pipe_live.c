/* CFG liveness of R/UR/P/UP registers for the pipe family (rule P4, the free predicate of P6).
 * Conservative: a guarded write kills nothing (nor does one under @!PT); a block ending in a branch
 * other than BRA/EXIT with known successors (BRX, JMX, CALL, RET, a BRA without a target) has
 * everything live at its end. */
#include "pipe_internal.h"

#include <stdlib.h>
#include <string.h>

bool pp_set_has(const pp_set *s, unsigned file, unsigned i)
{
	switch (file) {
	case ST_RF_R: return i < 256 && (s->r[i / 64] >> (i % 64) & 1);
	case ST_RF_UR: return i < 64 && (s->ur >> i & 1);
	case ST_RF_P: return i < 8 && (s->p >> i & 1);
	case ST_RF_UP: return i < 8 && (s->up >> i & 1);
	default: return false;
	}
}

void pp_set_put(pp_set *s, unsigned file, unsigned i, bool on)
{
	uint64_t *w = NULL;
	uint8_t *b = NULL;
	unsigned bit = i;
	if (file == ST_RF_R && i < 256) {
		w = &s->r[i / 64];
		bit = i % 64;
	} else if (file == ST_RF_UR && i < 64) {
		w = &s->ur;
	} else if (file == ST_RF_P && i < 8) {
		b = &s->p;
	} else if (file == ST_RF_UP && i < 8) {
		b = &s->up;
	}
	if (w)
		*w = on ? *w | (uint64_t)1 << bit : *w & ~((uint64_t)1 << bit);
	if (b)
		*b = (uint8_t)(on ? *b | 1u << bit : *b & ~(1u << bit));
}

static void set_or(pp_set *a, const pp_set *b)
{
	for (int i = 0; i < 4; i++)
		a->r[i] |= b->r[i];
	a->ur |= b->ur;
	a->p |= b->p;
	a->up |= b->up;
}

static bool set_eq(const pp_set *a, const pp_set *b)
{
	return !memcmp(a->r, b->r, sizeof a->r) && a->ur == b->ur && a->p == b->p && a->up == b->up;
}

static bool known_end(const st_sass_insn *x)
{
	if (!(x->flags & ST_F_BRANCH))
		return true;
	if (!strncmp(x->opcode, "EXIT", 4))
		return true;
	return !strncmp(x->opcode, "BRA", 3) && x->target >= 0;
}

/* Live at the start of block b given live at its end. */
static void through_block(const pp_kern *x, uint32_t first, uint32_t count, pp_set *live)
{
	for (uint32_t i = first + count; i-- > first;) {
		const st_sass_insn *in = &x->in[i];
		if (in->guard < 0 && !in->guard_neg) /* @!PT never runs: it kills nothing either */
			for (unsigned d = 0; d < in->ndefs; d++)
				for (unsigned r = 0; r < in->defs[d].count; r++)
					pp_set_put(live, in->defs[d].file, in->defs[d].index + r, false);
		for (unsigned u = 0; u < in->nuses; u++)
			for (unsigned r = 0; r < in->uses[u].count; r++)
				pp_set_put(live, in->uses[u].file, in->uses[u].index + r, true);
	}
}

st_status pp_kern_init(pp_kern *x, const st_sass_kernel *k, const st_cubin *c, size_t ki, st_error *err)
{
	memset(x, 0, sizeof *x);
	x->k = k;
	x->in = st_sass_insns(k);
	x->n = st_sass_count(k);
	x->nb = st_sass_block_count(k);
	x->sm = st_sass_sm(k);
	x->c = c;
	x->ki = ki;
	x->livein = calloc(x->nb ? x->nb : 1, sizeof *x->livein);
	if (!x->livein)
		return st_error_set(err, ST_ENOMEM, "pipe: out of memory");
	pp_set all;
	memset(&all, 0xff, sizeof all);
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t b = x->nb; b-- > 0;) {
			uint32_t first, count;
			int32_t succ[2];
			st_sass_block(k, b, &first, &count, succ);
			pp_set live;
			memset(&live, 0, sizeof live);
			if (!known_end(&x->in[first + count - 1]))
				live = all;
			for (int s = 0; s < 2; s++)
				if (succ[s] >= 0)
					set_or(&live, &x->livein[succ[s]]);
			through_block(x, first, count, &live);
			if (!set_eq(&live, &x->livein[b])) {
				x->livein[b] = live;
				changed = true;
			}
		}
	}
	return ST_OK;
}

void pp_kern_free(pp_kern *x)
{
	free(x->livein);
	x->livein = NULL;
}
