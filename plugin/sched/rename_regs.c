/* The rename family's register count and target choice (docs/sched.md "Raising the register
 * count", "Bank-aware targets").  N3 with a raise: a target R`v` is named by no instruction of the
 * original and by none now, and the count it needs, v + 1 + reserve (reserve: the registers the
 * original count holds above the highest register named, 2 on every fixture), is at most the
 * limit the caller allowed (st_sched_set_reglimit: the caller's occupancy rule picks it).  Without
 * a raise the limit is the kernel's count, which is the original rule v < rmax.  The state's
 * count is the larger of the kernel's and what its highest named register needs; materialising
 * writes it (st_cubin_set_regcount), schedules record it ({"regcount": N}).  A limit above the
 * kernel's EIATTR_MAXREG_COUNT (ptxas writes one when --maxrregcount made it spill) is lowered to
 * it: the cubin cannot hold a larger count. */
#include "rename_internal.h"

#include <string.h>

void rn_count_prepare(sc_rename *r, const st_sass_kernel *k, const st_cubin *c)
{
	size_t ki = c ? st_cubin_find_kernel(c, st_sass_name(k)) : ST_CUBIN_NONE;
	unsigned n = ki != ST_CUBIN_NONE ? st_cubin_regcount(c, ki) : 0;
	r->banks = 2;
	r->count = r->reserve = 0;
	r->ceiling = ki != ST_CUBIN_NONE ? st_cubin_maxregs(c, ki) : 255;
	if (n && n >= r->rmax && n <= 255) {
		r->count = n;
		r->reserve = n - r->rmax;
	}
	r->limit = r->count;
}

bool rn_target_ok(const sc_rename *r, unsigned v)
{
	if (v >= 255 || r->orig[v] || r->uses[v])
		return false;
	return r->count ? v + 1 + r->reserve <= r->limit : v < r->rmax;
}

unsigned rn_top(const sc_rename *r) { return r->count ? r->limit - r->reserve : r->rmax; }

unsigned st_sched_regcount(const st_sched *s)
{
	const sc_rename *r = s->rn;
	if (!r || !r->count)
		return 0;
	unsigned need = r->count;
	for (unsigned v = 0; v < 255; v++)
		if (r->uses[v] && v + 1 + r->reserve > need)
			need = v + 1 + r->reserve;
	return need;
}

st_status st_sched_set_reglimit(st_sched *s, unsigned limit, st_error *err)
{
	sc_rename *r = s->rn;
	if (!r || !r->count)
		return st_error_set(err, ST_EINVAL, "sched: %s: a register-count raise needs the rename family and the kernel's count",
				    st_sass_name(s->m.k));
	if (limit < r->count || limit > 255 || s->nmoves)
		return st_error_set(err, ST_EINVAL, "sched: %s: register limit %u: outside %u..255, or moves applied already",
				    st_sass_name(s->m.k), limit, r->count);
	r->limit = limit < r->ceiling ? limit : r->ceiling < r->count ? r->count : r->ceiling; /* the cubin's cap */
	sc_refresh_all(s);
	return ST_OK;
}

void st_sched_set_banks(st_sched *s, unsigned banks)
{
	if (s->rn && (banks == 0 || banks == 2 || banks == 4)) {
		s->rn->banks = banks;
		sc_refresh_all(s);
	}
}

st_status sc_rename_count_to_cubin(const st_sched *s, st_cubin *c, size_t k, st_error *err)
{
	unsigned need = st_sched_regcount(s);
	return need && need != s->rn->count ? st_cubin_set_regcount(c, k, need, err) : ST_OK;
}

unsigned sc_rename_origcount(const st_sched *s) { return s->rn ? s->rn->count : 0; }

st_status sc_rename_replay_limit(st_sched *s, const st_schedule *sch, size_t i, st_error *err)
{
	size_t nm = st_schedule_move_count(sch, i);
	for (size_t j = 0; j < nm; j++) {
		st_schedule_move sm = st_schedule_move_at(sch, i, j);
		if (sm.is_ctrl != ST_SCHEDULE_REGCOUNT)
			continue;
		if (!s->rn || sm.reg < s->rn->count)
			return st_error_set(err, ST_EILLEGAL, "moves[%zu]: register count %u: %s", j, sm.reg,
					    s->rn ? "below the kernel's" : "a raise needs the rename family");
		return sm.reg > s->rn->limit ? st_sched_set_reglimit(s, sm.reg, err) : ST_OK;
	}
	return ST_OK;
}

/* Opcodes whose register sources the target choice keeps in distinct banks. */
static bool bank_op(const char *op)
{
	static const char *const ops[] = {"FFMA", "FMUL", "FADD", "IMAD", "HFMA2", "HMMA"};
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
		size_t n = strlen(ops[i]);
		if (!strncmp(op, ops[i], n) && (op[n] == 0 || op[n] == '.'))
			return true;
	}
	return false;
}

/* For each bank, how many other single-register R sources of the range's readers of R`v` (of a
 * bank_op with two or more R sources) sit in it. */
static void bank_counts(const st_sched *s, uint32_t slot, unsigned banks, unsigned avoid[4])
{
	unsigned v;
	uint32_t end;
	if (rn_live_range(s, slot, &v, &end, NULL))
		return;
	uint32_t last = s->m.blast[s->m.si[s->at[slot]].block];
	for (uint32_t t = slot + 1; t <= end && t <= last; t++) {
		const st_sass_insn *y = &s->m.in[s->at[t]];
		unsigned other[4], no = 0;
		bool reads = false;
		for (unsigned u = 0; u < y->nuses && bank_op(y->opcode); u++) {
			const st_sass_reg *g = &y->uses[u];
			if (g->file != ST_RF_R || g->count != 1)
				continue;
			if (g->index == v)
				reads = true;
			else if (no < 4)
				other[no++] = g->index;
		}
		for (unsigned q = 0; reads && q < no; q++)
			avoid[other[q] % banks]++;
	}
}

/* The target of slot's rename move: among the registers N3 allows, the one with the fewest other
 * sources in its bank (banks > 0), the lowest of equals. */
int sc_rename_target(const st_sched *s, uint32_t slot)
{
	const sc_rename *r = s->rn;
	if (!r || !r->ok)
		return -1;
	unsigned avoid[4] = {0, 0, 0, 0};
	if (r->banks)
		bank_counts(s, slot, r->banks, avoid);
	int best = -1;
	unsigned score = ~0u;
	for (unsigned v = 0; v < 255 && score; v++)
		if (rn_target_ok(r, v) && (r->banks ? avoid[v % r->banks] : 0) < score) {
			best = (int)v;
			score = r->banks ? avoid[v % r->banks] : 0;
		}
	return best;
}
