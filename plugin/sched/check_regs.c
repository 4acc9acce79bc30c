/* The independent checker's register-count rules (docs/sched.md "Raising the register count"),
 * with its own reading of EIATTR_REGCOUNT (shares no code with the model or the cubin setter):
 * K1 the tuned count is the original's or higher, at most 255; K2 every R register the tuned code
 * names and the original does not (its own reading of renamed fields, c->in), plus the registers
 * the original count holds above the original's highest named register (the reserve), fits the
 * tuned count (registers the original itself names above its count, as a CALL's R0..R254, stay
 * exempt).  The
 * occupancy rule (st_check_occupancy) needs the launch's block size and is run by the callers
 * that know it. */
#include "check_internal.h"
#include "sasstune/occupancy.h"

#include <stdio.h>
#include <string.h>

/* The count in the one EIATTR_REGCOUNT record (SVAL: symbol, count) naming kernel k; 0 if none or several. */
static unsigned read_count(const st_cubin *c, size_t k)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	unsigned found = 0, n = 0;
	for (size_t i = 0; ki && i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->attr != 0x2f || r->format != 4 || r->size != 8)
			continue;
		uint32_t sym = (uint32_t)r->payload[0] | (uint32_t)r->payload[1] << 8 | (uint32_t)r->payload[2] << 16 |
			       (uint32_t)r->payload[3] << 24;
		if (sym == ki->symbol)
			found = r->payload[4] | (unsigned)r->payload[5] << 8 | (unsigned)r->payload[6] << 16 |
				(unsigned)r->payload[7] << 24, n++;
	}
	return n == 1 ? found : 0;
}

/* Mark the R registers the instructions name (every register of a group). */
static void named(const st_sass_insn *in, size_t n, uint8_t out[256])
{
	memset(out, 0, 256);
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < (unsigned)in[i].ndefs + in[i].nuses; k++) {
			const st_sass_reg *g = k < in[i].ndefs ? &in[i].defs[k] : &in[i].uses[k - in[i].ndefs];
			for (unsigned t = 0; g->file == ST_RF_R && t < g->count && g->index + t < 255; t++)
				out[g->index + t] = 1;
		}
}

void ck_regcount(ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt)
{
	unsigned oc = read_count(orig, ko), tc = read_count(tuned, kt);
	char msg[256];
	if (oc != tc && (!oc || !tc || tc < oc || tc > 255)) {
		snprintf(msg, sizeof msg, "the register count is %u in the tuned cubin and %u in the original (only a raise to at most 255 is allowed)",
			 tc, oc);
		ck_flag(c, 0, msg);
		return;
	}
	if (!tc)
		return;
	/* the reserve: registers the original counts above its highest named one below the count (a
	 * CALL, read as naming R0..R254, names registers above the count: those stay exempt) */
	uint8_t on[256], tn[256];
	named(c->oin, c->n, on);
	named(c->in, c->n, tn);
	unsigned otop = 0;
	for (unsigned v = 0; v < oc && v < 255; v++)
		otop = on[v] ? v + 1 : otop;
	unsigned reserve = oc - otop;
	for (unsigned v = 255; v-- > 0;) {
		if (!tn[v] || on[v] || v + 1 + reserve <= tc)
			continue;
		uint32_t at = 0; /* a tuned slot naming it */
		for (uint32_t i = 0; i < c->n && !at; i++)
			for (unsigned k = 0; k < (unsigned)c->in[i].ndefs + c->in[i].nuses; k++) {
				const st_sass_reg *g = k < c->in[i].ndefs ? &c->in[i].defs[k] : &c->in[i].uses[k - c->in[i].ndefs];
				if (g->file == ST_RF_R && v >= g->index && v < (unsigned)g->index + g->count)
					at = c->inv[i];
			}
		snprintf(msg, sizeof msg, "R%u is named but the register count is %u (the original keeps %u registers above its highest)",
			 v, tc, reserve);
		ck_flag(c, at, msg);
		return;
	}
}

st_status st_check_occupancy(const st_cubin *orig, const st_cubin *tuned, const char *name, unsigned threads,
			     size_t dyn_shared, int allow_drop, st_check_report_fn report, void *ctx, size_t *violations,
			     st_error *err)
{
	size_t ko = st_cubin_find_kernel(orig, name), kt = st_cubin_find_kernel(tuned, name);
	if (violations)
		*violations = 0;
	if (ko == ST_CUBIN_NONE || kt == ST_CUBIN_NONE)
		return st_error_set(err, ST_ENOTFOUND, "no kernel named '%s'", name);
	unsigned oc = read_count(orig, ko), tc = read_count(tuned, kt);
	if (oc == tc)
		return ST_OK;
	st_occupancy o = {0}, t = {0};
	char msg[256];
	size_t shared = st_cubin_static_shared(tuned, kt) + dyn_shared;
	if (!threads)
		snprintf(msg, sizeof msg, "the register count was raised from %u to %u with the block size unknown", oc, tc);
	else if (st_occupancy_sm90(oc, threads, shared, &o, err) || st_occupancy_sm90(tc, threads, shared, &t, err))
		return err ? err->code : ST_EINVAL;
	else if (t.blocks < o.blocks && !allow_drop)
		snprintf(msg, sizeof msg, "the register count %u -> %u lowers the resident blocks per SM %u -> %u (%u threads, %zu bytes shared)",
			 oc, tc, o.blocks, t.blocks, threads, shared);
	else if (!t.blocks)
		snprintf(msg, sizeof msg, "with %u registers %u threads a block cannot launch", tc, threads);
	else
		return ST_OK;
	if (report)
		report(ctx, name, 0, msg);
	if (violations)
		*violations = 1;
	return st_error_set(err, ST_EILLEGAL, "%s: %s", name, msg);
}
