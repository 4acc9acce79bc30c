/* Register renaming (ST_MOVE_RENAME, family "rename", docs/sched.md "Register renaming"): the
 * live range of one unpredicated def of a single R register, all inside its block, moves to a
 * register the original kernel never names, below its highest used register (so the register
 * count and occupancy stay) unless a raise is allowed (rename_regs.c).  The state owns a copy of
 * the decoded instructions (m.in points at it) whose register operands follow the renames, so
 * every other rule sees the new registers. */
#include "rename_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sc_rename_free(sc_rename *r)
{
	if (!r)
		return;
	free(r->in), free(r->regs), free(r->word), free(r->live), free(r->chg), free(r->ctl), free(r->rec);
	free(r);
}

static bool mnem(const char *op, const char *m)
{
	size_t n = strlen(m);
	return !strncmp(op, m, n) && (op[n] == 0 || op[n] == '.');
}

static void set_bit(uint64_t v[4], unsigned i) { v[i >> 6] |= 1ull << (i & 63); }
static bool has_bit(const uint64_t v[4], unsigned i) { return v[i >> 6] >> (i & 63) & 1; }

/* Liveness of R registers at block ends over the CFG (backward fixpoint).  A block with an
 * indirect branch, call or return has everything live at its end. */
static st_status liveness(sc_rename *r, const sc_model *m, st_error *err)
{
	size_t nb = st_sass_block_count(m->k);
	uint64_t(*use)[4] = calloc(nb ? nb : 1, sizeof *use), (*def)[4] = calloc(nb ? nb : 1, sizeof *def);
	uint64_t(*lin)[4] = calloc(nb ? nb : 1, sizeof *lin);
	r->live = calloc(nb ? nb : 1, sizeof *r->live);
	if (!use || !def || !lin || !r->live) {
		free(use), free(def), free(lin);
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	}
	bool *all = calloc(nb ? nb : 1, sizeof *all);
	for (size_t b = 0; all && b < nb; b++)
		for (uint32_t i = m->bfirst[b]; i <= m->blast[b]; i++) {
			const st_sass_insn *x = &m->in[i];
			static const char *const ind[] = {"BRX", "JMX", "CALL", "RET", "JMP", "BRXU", "JMXU"};
			for (size_t q = 0; q < sizeof ind / sizeof *ind; q++)
				all[b] |= mnem(x->opcode, ind[q]);
			for (unsigned u = 0; u < x->nuses; u++)
				for (unsigned t = 0; x->uses[u].file == ST_RF_R && t < x->uses[u].count; t++)
					if (!has_bit(def[b], (x->uses[u].index + t) & 255))
						set_bit(use[b], (x->uses[u].index + t) & 255);
			for (unsigned d = 0; x->guard < 0 && d < x->ndefs; d++)
				for (unsigned t = 0; x->defs[d].file == ST_RF_R && t < x->defs[d].count; t++)
					set_bit(def[b], (x->defs[d].index + t) & 255);
		}
	for (bool changed = all != NULL; changed;) {
		changed = false;
		for (size_t b = nb; b-- > 0;) {
			uint32_t first, count;
			int32_t succ[2];
			st_sass_block(m->k, b, &first, &count, succ);
			for (int w = 0; w < 4; w++) {
				uint64_t out = all[b] ? ~0ull : 0;
				for (int e = 0; e < 2; e++)
					if (succ[e] >= 0 && (size_t)succ[e] < nb)
						out |= lin[succ[e]][w];
				uint64_t in = use[b][w] | (out & ~def[b][w]);
				changed |= out != r->live[b][w] || in != lin[b][w];
				r->live[b][w] = out;
				lin[b][w] = in;
			}
		}
	}
	st_status rc = all ? ST_OK : st_error_set(err, ST_ENOMEM, "sched: out of memory");
	free(use), free(def), free(lin), free(all);
	return rc;
}

/* Own copies of the instructions, the register census, liveness (rule N1). */
st_status sc_rename_prepare(st_sched *s, const st_cubin *c, st_error *err)
{
	sc_model *m = &s->m;
	sc_rename *r = calloc(1, sizeof *r);
	size_t nr = 0, n1 = m->n ? m->n : 1;
	for (size_t i = 0; i < m->n; i++)
		nr += m->in[i].ndefs + m->in[i].nuses;
	if (r) {
		r->in = malloc(n1 * sizeof *r->in);
		r->regs = malloc((nr ? nr : 1) * sizeof *r->regs);
		r->word = malloc(n1 * sizeof *r->word);
	}
	if (!r || !r->in || !r->regs || !r->word) {
		sc_rename_free(r);
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	}
	st_status rc = liveness(r, m, err);
	if (rc) {
		sc_rename_free(r);
		return rc;
	}
	r->ok = true;
	size_t at = 0;
	for (size_t i = 0; i < m->n; i++) {
		const st_sass_insn *x = &m->in[i];
		r->in[i] = *x;
		memcpy(r->word[i], x->word, 16);
		memcpy(r->regs + at, x->defs, x->ndefs * sizeof *x->defs);
		r->in[i].defs = r->regs + at;
		at += x->ndefs;
		memcpy(r->regs + at, x->uses, x->nuses * sizeof *x->uses);
		r->in[i].uses = r->regs + at;
		at += x->nuses;
		r->ok &= !(m->si[i].flags & SC_UNKNOWN);
		for (unsigned k = 0; k < x->ndefs + x->nuses; k++) {
			const st_sass_reg *g = k < x->ndefs ? &x->defs[k] : &x->uses[k - x->ndefs];
			for (unsigned t = 0; g->file == ST_RF_R && t < g->count; t++) {
				unsigned v = (g->index + t) & 255;
				r->uses[v]++;
				r->orig[v] = 1;
				r->rmax = v + 1 > r->rmax ? v + 1 : r->rmax;
			}
		}
	}
	rn_count_prepare(r, m->k, c);
	s->rn = r;
	m->in = r->in;
	return ST_OK;
}

static const st_sass_reg *r_def(const st_sass_insn *x, unsigned *out)
{
	const st_sass_reg *d = NULL;
	unsigned n = 0;
	for (unsigned i = 0; i < x->ndefs; i++)
		if (x->defs[i].file == ST_RF_R)
			d = &x->defs[i], n++;
	*out = n;
	return d;
}

static bool meets(const st_sass_reg *g, unsigned v)
{
	return g->file == ST_RF_R && v >= g->index && v < (unsigned)g->index + g->count;
}

/* The live range of the R def of the insn at `slot` (rules N2, N4, N5): *end gets the slot of the
 * redefinition that ends it, or the block's last slot + 1.  ST_EILLEGAL names what refuses it. */
st_status rn_live_range(const st_sched *s, uint32_t slot, unsigned *reg, uint32_t *end, st_error *err)
{
	const sc_model *m = &s->m;
	uint32_t X = s->at[slot], b = m->si[X].block;
	const st_sass_insn *x = &m->in[X];
	unsigned nd;
	const st_sass_reg *d = r_def(x, &nd);
	if (!nd || nd > 1 || x->guard >= 0 || (m->si[X].flags & SC_FIXED) || !sc_rename_encodable(x, s->rn->word[X]))
		return st_error_set(err, ST_EILLEGAL,
				    "rename 0x%x (%s): not an unpredicated, movable def of one R register in a form the rename re-encodes",
				    16 * slot, x->opcode);
	unsigned v = d->index, reads = 0;
	*reg = v;
	for (uint32_t t = slot + 1; t <= m->blast[b]; t++) {
		if (t > slot + SC_WINDOW)
			return st_error_set(err, ST_EILLEGAL, "rename 0x%x (%s): R%u lives on past %d slots", 16 * slot,
					    x->opcode, v, SC_WINDOW);
		const st_sass_insn *y = &m->in[s->at[t]];
		bool rd = false, wr = false, gdef = false;
		const st_sass_reg *grp = NULL; /* a register group of y that holds R`v` */
		for (unsigned u = 0; u < y->nuses; u++)
			if (meets(&y->uses[u], v))
				rd = true, grp = y->uses[u].count > 1 ? &y->uses[u] : grp;
		for (unsigned e = 0; e < y->ndefs; e++) {
			if (!meets(&y->defs[e], v))
				continue;
			wr = true;
			if (y->defs[e].count > 1 && !grp)
				grp = &y->defs[e], gdef = true;
		}
		if (!rd && !wr)
			continue;
		if (grp) /* e.g. IMAD.HI's addend {Rc+1:Rc} (docs/sass.md "Hidden register groups") */
			return st_error_set(err, ST_EILLEGAL, "rename 0x%x (%s): R%u is %s by %s at 0x%x as part of the %s R%u..R%u, which the rename does not re-encode",
					    16 * slot, x->opcode, v, gdef ? "written" : "read", y->opcode, 16 * t,
					    grp->count == 2 ? "pair" : "group", grp->index, grp->index + grp->count - 1);
		if (!sc_rename_encodable(y, s->rn->word[s->at[t]]))
			return st_error_set(err, ST_EILLEGAL, "rename 0x%x (%s): R%u is %s by %s at 0x%x, a form the rename does not re-encode",
					    16 * slot, x->opcode, v, rd ? "read" : "written", y->opcode, 16 * t);
		reads += rd;
		if (wr && y->guard >= 0)
			return st_error_set(err, ST_EILLEGAL, "rename 0x%x (%s): R%u is rewritten under a predicate at 0x%x (%s)",
					    16 * slot, x->opcode, v, 16 * t, y->opcode);
		if (wr) {
			*end = t;
			return reads ? ST_OK : st_error_set(err, ST_EILLEGAL, "rename 0x%x (%s): R%u is never read", 16 * slot, x->opcode, v);
		}
	}
	*end = m->blast[b] + 1;
	if (has_bit(s->rn->live[b], v))
		return st_error_set(err, ST_EILLEGAL, "rename 0x%x (%s): R%u is live at the end of its block", 16 * slot,
				    x->opcode, v);
	return reads ? ST_OK : st_error_set(err, ST_EILLEGAL, "rename 0x%x (%s): R%u is never read", 16 * slot, x->opcode, v);
}

st_status sc_check_rename(const st_sched *s, st_move mv, uint32_t *rlo, uint32_t *rhi, st_error *err)
{
	const sc_rename *r = s->rn;
	uint32_t end = mv.slot;
	unsigned reg = 0;
	if (rlo)
		*rlo = mv.slot;
	if (rhi)
		*rhi = mv.slot;
	if (!r)
		return st_error_set(err, ST_EILLEGAL, "rename 0x%x: the rename family is not enabled", 16 * mv.slot);
	if (!r->ok)
		return st_error_set(err, ST_EILLEGAL, "rename 0x%x: the kernel has instructions the model does not know", 16 * mv.slot);
	st_status rc = rn_live_range(s, mv.slot, &reg, &end, err);
	if (rhi) {
		uint32_t last = s->m.blast[s->m.si[s->at[mv.slot]].block];
		*rhi = end > last ? last : end;
	}
	if (rc)
		return rc;
	if (!rn_target_ok(r, mv.arg))
		return st_error_set(err, ST_EILLEGAL,
				    "rename 0x%x (%s): R%u -> R%u: the target must be a register the kernel never names, below R%u%s",
				    16 * mv.slot, s->m.in[s->at[mv.slot]].opcode, reg, mv.arg, rn_top(r),
				    r->limit > r->count ? " (the raised count's reserve above it)" : "");
	return ST_OK;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? 2 * *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

/* Operand `k` (defs first, then uses) of insn i takes register `to`; its field follows (N6). */
static void set_reg(sc_rename *r, uint32_t i, unsigned k, unsigned to)
{
	st_sass_insn *x = &r->in[i];
	st_sass_reg *g = k < x->ndefs ? (st_sass_reg *)&x->defs[k] : (st_sass_reg *)&x->uses[k - x->ndefs];
	r->uses[g->index & 255]--;
	r->uses[to & 255]++;
	g->index = (uint16_t)to;
	r->word[i][sc_rename_byte(g->slot)] = (uint8_t)to;
}

/* Clear the reuse flags of the insn at `slot` (N7), recording the old fields. */
static void clear_reuse(st_sched *s, uint32_t slot)
{
	sc_rename *r = s->rn;
	uint32_t i = s->at[slot];
	if (!st_ctrl_reuse_bits(s->ctrl[i]))
		return;
	r->ctl[r->nctl++] = (rn_ctl){i, s->ctrl[i]};
	s->ctrl[i].reuse = 0;
}

/* Apply a checked rename: the def and every read of its range take the new register. */
st_status sc_apply_rename(st_sched *s, st_move mv, st_error *err)
{
	sc_rename *r = s->rn;
	uint32_t end = mv.slot;
	unsigned v = 0;
	st_status rc = sc_check_rename(s, mv, NULL, NULL, err);
	if (rc || (rc = rn_live_range(s, mv.slot, &v, &end, err)))
		return rc;
	size_t most = 2 * (size_t)(end - mv.slot + 1) * 8;
	if (!grow((void **)&r->chg, &r->capchg, r->nchg + most, sizeof *r->chg) ||
	    !grow((void **)&r->ctl, &r->capctl, r->nctl + most, sizeof *r->ctl) ||
	    !grow((void **)&r->rec, &r->caprec, r->nrec + 1, sizeof *r->rec))
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	r->rec[r->nrec++] = (rn_rec){r->nchg, r->nctl};
	uint32_t bf = s->m.bfirst[s->m.si[s->at[mv.slot]].block], last = s->m.blast[s->m.si[s->at[mv.slot]].block];
	for (uint32_t t = mv.slot; t <= end && t <= last; t++) {
		uint32_t i = s->at[t];
		const st_sass_insn *x = &r->in[i];
		bool changed = false;
		for (unsigned k = 0; k < (unsigned)x->ndefs + x->nuses; k++) {
			bool def = k < x->ndefs;
			const st_sass_reg *g = def ? &x->defs[k] : &x->uses[k - x->ndefs];
			/* the def itself; reads after it, up to and including the redefinition's reads */
			if (!meets(g, v) || (def && t != mv.slot) || (!def && t == mv.slot))
				continue;
			r->chg[r->nchg++] = (rn_chg){i, (uint16_t)k, def, (uint8_t)v};
			set_reg(r, i, k, mv.arg);
			changed = true;
		}
		if (changed) {
			clear_reuse(s, t);
			if (t > bf)
				clear_reuse(s, t - 1);
		}
	}
	sc_model_forget(&s->m);
	return ST_OK;
}

void sc_undo_rename(st_sched *s)
{
	sc_rename *r = s->rn;
	rn_rec rec = r->rec[--r->nrec];
	while (r->nctl > rec.ctl) {
		r->nctl--;
		s->ctrl[r->ctl[r->nctl].idx] = r->ctl[r->nctl].old;
	}
	while (r->nchg > rec.chg) {
		r->nchg--;
		set_reg(r, r->chg[r->nchg].idx, r->chg[r->nchg].reg, r->chg[r->nchg].old);
	}
	sc_model_forget(&s->m);
}

/* The current word of original instruction i (its register fields renamed), or NULL if unchanged. */
const uint8_t *sc_rename_word(const st_sched *s, uint32_t i)
{
	if (!s->rn || !memcmp(s->rn->word[i], s->m.in[i].word, 16))
		return NULL;
	return s->rn->word[i];
}

/* The renames applied, in order: original index of the def and its new register. */
size_t sc_rename_count(const st_sched *s) { return s->rn ? s->rn->nrec : 0; }

/* Rename record `rec` (in order of application) into a schedule: the move, then its effect as
 * field edits and control edits (cleared reuse flags), at the slots pos[] gives (original index
 * -> slot when the rename was applied). */
st_status sc_rename_to_schedule(const st_sched *s, size_t rec, st_move mv, const uint32_t *pos, st_schedule *out,
				st_error *err)
{
	const sc_rename *r = s->rn;
	const char *name = st_sass_name(s->m.k);
	size_t c0 = r->rec[rec].chg, c1 = rec + 1 < r->nrec ? r->rec[rec + 1].chg : r->nchg;
	size_t t0 = r->rec[rec].ctl, t1 = rec + 1 < r->nrec ? r->rec[rec + 1].ctl : r->nctl;
	st_status rc = st_schedule_add_rename(out, name, mv.slot, mv.arg, err);
	for (size_t q = c0; q < c1 && !rc; q++) {
		const rn_chg *g = &r->chg[q];
		const st_sass_insn *x = &r->in[g->idx];
		unsigned slot = g->reg < x->ndefs ? x->defs[g->reg].slot : x->uses[g->reg - x->ndefs].slot;
		rc = st_schedule_add_field(out, name, pos[g->idx], slot - ST_SLOT_D, mv.arg, err);
	}
	for (size_t q = t0; q < t1 && !rc; q++) {
		st_ctrl now = r->ctl[q].old;
		now.reuse = 0;
		rc = st_schedule_add_ctrl(out, name, pos[r->ctl[q].idx], now, err);
	}
	return rc;
}

/* The register byte `byte` (2, 3, 4, 8) of original instruction i now. */
unsigned sc_rename_field(const st_sched *s, uint32_t i, unsigned byte)
{
	return s->rn ? s->rn->word[i][byte & 15] : s->m.in[i].word[byte & 15];
}
