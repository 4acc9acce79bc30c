/* Fixed latencies: match two instructions against nvdisasm's tables (latency_tables.c). */
#include "latency.h"
#include "sass_internal.h"

#include <string.h>

const struct st_lat_model *st_lat_model_for(int sm)
{
	int want = sm == 80 ? 80 : (sm == 86 || sm == 87 || sm == 89) ? 86 : sm == 90 ? 90 : 0;
	for (size_t i = 0; st_lat_models[i]; i++)
		if (st_lat_models[i]->sm == want)
			return st_lat_models[i];
	return NULL;
}

int st_lat_op_lookup(const char *name)
{
	size_t lo = 0, hi = st_lat_nops;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(st_lat_op_names[mid], name);
		if (c == 0)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int cond_holds(unsigned cond, const st_sass_insn *in)
{
	switch (cond) {
	case ST_LCOND_NONE:
		return 1;
	case ST_LCOND_MODE_ARV:
		return (in->lat_cond & ST_LC_ARV) != 0;
	case ST_LCOND_MODE_ARV_WAIT:
		return (in->lat_cond & (ST_LC_ARV | ST_LC_WAIT)) != 0;
	case ST_LCOND_MODE_DEPBAR:
		return (in->lat_cond & ST_LC_DEPBAR) != 0;
	case ST_LCOND_GSB_GSB0:
		return (in->lat_cond & ST_LC_GSB0) != 0;
	default:
		return 0; /* VTG_PRED: graphics only */
	}
}

static int line_matches(const struct st_lat_model *m, unsigned line, const st_sass_insn *in, int slot)
{
	const struct st_lat_line *l = &m->lines[line];
	for (unsigned t = l->first; t < (unsigned)l->first + l->count; t++) {
		const struct st_lat_term *term = &m->terms[t];
		if (!st_lat_in_set(m, term->set, in->lat_op))
			continue;
		if (!cond_holds(term->cond, in))
			continue;
		if (slot >= 0 && !(term->slots & (1u << slot)))
			continue;
		return 1;
	}
	return 0;
}

int st_sass_latency(int sm, const st_sass_insn *p, int pslot, const st_sass_insn *c, int cslot,
		    st_sass_res res, st_sass_dep kind)
{
	const struct st_lat_model *m = st_lat_model_for(sm);
	if (!m || !p || !c || p->lat_op < 0 || c->lat_op < 0)
		return -1;
	int best = -1, deflt = -1, matched = 0;
	for (unsigned ti = 0; ti < m->ntables; ti++) {
		const struct st_lat_table *t = &m->tables[ti];
		if (t->res != (unsigned)res || t->kind != (unsigned)kind)
			continue;
		if (t->deflt > deflt)
			deflt = t->deflt;
		uint32_t cols = 0;
		for (unsigned j = 0; j < t->ncols && j < 32; j++)
			if (line_matches(m, t->col0 + j, c, cslot))
				cols |= 1u << j;
		if (!cols)
			continue;
		for (unsigned i = 0; i < t->nrows; i++) {
			if (!line_matches(m, t->row0 + i, p, pslot))
				continue;
			for (unsigned j = 0; j < t->ncols && j < 32; j++) {
				if (!(cols >> j & 1))
					continue;
				int v = m->vals[t->val0 + i * t->ncols + j];
				if (v < 0)
					continue;
				matched = 1;
				if (v > best)
					best = v;
			}
		}
	}
	return matched ? best : deflt;
}
