/* The static model of a kernel for the move generator: which instructions may move, which
 * pairs must keep their order, fixed latencies between instructions (nvdisasm's tables through
 * st_sass_latency), and the cross-block exposure of each instruction (docs/sched.md). */
#include "sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small open-addressing map uint64 -> int16 -------------------------------------- */
struct sc_memo {
	uint64_t *keys; /* 0 = empty (keys are stored +1) */
	int16_t *vals;
	size_t cap, n;
};

static sc_memo *memo_new(void)
{
	sc_memo *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->cap = 1024;
	h->keys = calloc(h->cap, sizeof *h->keys);
	h->vals = calloc(h->cap, sizeof *h->vals);
	if (!h->keys || !h->vals) {
		free(h->keys);
		free(h->vals);
		free(h);
		return NULL;
	}
	return h;
}

static void memo_free(sc_memo *h)
{
	if (!h)
		return;
	free(h->keys);
	free(h->vals);
	free(h);
}

void sc_model_forget(sc_model *m)
{
	if (!m->memo)
		return;
	memset(m->memo->keys, 0, m->memo->cap * sizeof *m->memo->keys);
	m->memo->n = 0;
}

static size_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

static int memo_get(const sc_memo *h, uint64_t key, int16_t *v)
{
	key++;
	for (size_t i = mix(key) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		if (!h->keys[i])
			return 0;
		if (h->keys[i] == key) {
			*v = h->vals[i];
			return 1;
		}
	}
}

/* Best effort: a full table that cannot grow just stops caching. */
static void memo_put(sc_memo *h, uint64_t key, int16_t v)
{
	if (2 * (h->n + 1) > h->cap) {
		size_t cap = 2 * h->cap;
		uint64_t *k = calloc(cap, sizeof *k);
		int16_t *vs = calloc(cap, sizeof *vs);
		if (!k || !vs) {
			free(k);
			free(vs);
			if (4 * (h->n + 1) > 3 * h->cap)
				return;
		} else {
			for (size_t i = 0; i < h->cap; i++)
				if (h->keys[i])
					for (size_t j = mix(h->keys[i]) & (cap - 1);; j = (j + 1) & (cap - 1))
						if (!k[j]) {
							k[j] = h->keys[i];
							vs[j] = h->vals[i];
							break;
						}
			free(h->keys);
			free(h->vals);
			h->keys = k;
			h->vals = vs;
			h->cap = cap;
		}
	}
	key++;
	for (size_t i = mix(key) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		if (!h->keys[i] || h->keys[i] == key) {
			if (!h->keys[i])
				h->n++;
			h->keys[i] = key;
			h->vals[i] = v;
			return;
		}
	}
}

/* ---- latency lookups ------------------------------------------------------------------ */
static int res_of(unsigned file)
{
	return file == ST_RF_R ? ST_RES_GPR : file == ST_RF_UR ? ST_RES_UGPR : file == ST_RF_P ? ST_RES_PRED : ST_RES_UPRED;
}

/* st_sass_latency memoised by what it depends on: opcode ids, conditions, slots, table. */
static int table_lat(sc_model *m, const st_sass_insn *p, int ps, const st_sass_insn *c, int cs, int res, int kind)
{
	uint64_t key = (uint64_t)(uint16_t)(p->lat_op + 1) | (uint64_t)(p->lat_cond & 15) << 12 |
		       (uint64_t)(ps + 1) << 16 | (uint64_t)(uint16_t)(c->lat_op + 1) << 20 |
		       (uint64_t)(c->lat_cond & 15) << 32 | (uint64_t)(cs + 1) << 36 | (uint64_t)res << 40 |
		       (uint64_t)kind << 44 | (uint64_t)1 << 48;
	int16_t v;
	if (m->memo && memo_get(m->memo, key, &v))
		return v;
	v = (int16_t)st_sass_latency(m->sm, p, ps, c, cs, (st_sass_res)res, (st_sass_dep)kind);
	if (m->memo)
		memo_put(m->memo, key, v);
	return v;
}

static void reg_text(char *buf, size_t n, const st_sass_reg *r, const st_sass_reg *o)
{
	unsigned lo = r->index > o->index ? r->index : o->index;
	unsigned hi1 = r->index + r->count, hi2 = o->index + o->count;
	unsigned hi = (hi1 < hi2 ? hi1 : hi2) - 1;
	char a[16], b[16];
	st_sass_reg_str(a, sizeof a, r->file, lo);
	b[0] = 0;
	if (hi != lo)
		st_sass_reg_str(b, sizeof b, r->file, hi);
	size_t la = strlen(a), lb = strlen(b);
	if (n && la + (lb ? lb + 2 : 0) < n) {
		memcpy(buf, a, la + 1);
		if (lb) {
			memcpy(buf + la, "..", 2);
			memcpy(buf + la + 2, b, lb + 1);
		}
	} else if (n) {
		buf[0] = 0;
	}
}

static void opname(char *buf, size_t n, const st_sass_insn *x)
{
	snprintf(buf, n, "%s", x->opcode);
}

/* Variable latency, register sources, and neither a read nor a write scoreboard. */
static int late_reader(const st_sass_insn *x)
{
	if (x->ctrl.rbar != ST_SB_NONE || x->ctrl.wbar != ST_SB_NONE)
		return 0;
	for (unsigned u = 0; u < x->nuses; u++)
		if (x->uses[u].file != ST_RF_B)
			return 1;
	return 0;
}

/* Non-register resources (GMMA scoreboards, CGA barrier, RPC) between two instructions. */
static int special_lat(sc_model *m, const st_sass_insn *p, const st_sass_insn *c)
{
	static const int res[] = {ST_RES_GMMA_SB, ST_RES_GMMA_GSB, ST_RES_CGABAR, ST_RES_RPC};
	int best = SC_LAT_NONE;
	for (size_t r = 0; r < sizeof res / sizeof res[0]; r++) {
		int l = table_lat(m, p, -1, c, -1, res[r], ST_DEP_TRUE);
		if (l > best)
			best = l;
	}
	/* register writers -> WARPGROUP.ARRIVE (the GMMA_GPR connector of TABLE_TRUE(GPR)) */
	for (unsigned d = 0; d < p->ndefs; d++) {
		if (p->defs[d].file == ST_RF_B)
			continue;
		int l = table_lat(m, p, p->defs[d].slot, c, -1, res_of(p->defs[d].file), ST_DEP_TRUE);
		if (l > best && (c->lat_cond != 0))
			best = l;
	}
	return best;
}

static int pair_latency(sc_model *m, uint32_t pi, uint32_t ci, char *what, size_t wn);

int sc_latency(sc_model *m, uint32_t pi, uint32_t ci, char *what, size_t wn)
{
	if (what && wn)
		return pair_latency(m, pi, ci, what, wn);
	uint64_t key = (uint64_t)1 << 63 | (uint64_t)pi << 32 | ci; /* table keys stay below bit 49 */
	int16_t v;
	if (m->memo && memo_get(m->memo, key, &v))
		return v;
	v = (int16_t)pair_latency(m, pi, ci, NULL, 0);
	if (m->memo)
		memo_put(m->memo, key, v);
	return v;
}

static int pair_latency(sc_model *m, uint32_t pi, uint32_t ci, char *what, size_t wn)
{
	const st_sass_insn *p = &m->in[pi], *c = &m->in[ci];
	const sc_info *sp = &m->si[pi], *sc = &m->si[ci];
	int best = SC_LAT_NONE;
	int unknown = (sp->flags | sc->flags) & SC_UNKNOWN;
	if (what && wn)
		what[0] = 0;
	/* RAW and WAW: p's definitions */
	for (unsigned d = 0; d < p->ndefs; d++) {
		const st_sass_reg *pd = &p->defs[d];
		for (unsigned u = 0; u < c->nuses; u++) {
			const st_sass_reg *cu = &c->uses[u];
			if (!sc_regs_meet(pd, cu))
				continue;
			int l = 0;
			if (pd->file != ST_RF_B) {
				l = unknown ? SC_LIMIT : table_lat(m, p, pd->slot, c, cu->slot, res_of(pd->file), ST_DEP_TRUE);
				if (l < 0)
					l = (sp->flags & SC_VARLAT) ? 0 : SC_LIMIT;
			}
			if (l > best) {
				best = l;
				if (what && wn) {
					char r[32];
					reg_text(r, sizeof r, pd, cu);
					snprintf(what, wn, "RAW on %s", r);
				}
			}
		}
		for (unsigned e = 0; e < c->ndefs; e++) {
			const st_sass_reg *cd = &c->defs[e];
			if (!sc_regs_meet(pd, cd))
				continue;
			int l = 0;
			if (pd->file != ST_RF_B) {
				l = unknown ? SC_LIMIT : table_lat(m, p, pd->slot, c, cd->slot, res_of(pd->file), ST_DEP_OUTPUT);
				if (l < 0)
					l = 0;
			}
			if (l > best || (best < 0)) {
				best = l > best ? l : best;
				if (what && wn && !what[0]) {
					char r[32];
					reg_text(r, sizeof r, pd, cd);
					snprintf(what, wn, "WAW on %s", r);
				}
			}
		}
	}
	/* WAR: c overwrites what p reads */
	for (unsigned u = 0; u < p->nuses; u++) {
		const st_sass_reg *pu = &p->uses[u];
		for (unsigned e = 0; e < c->ndefs; e++) {
			const st_sass_reg *cd = &c->defs[e];
			if (!sc_regs_meet(pu, cd))
				continue;
			int l = 0;
			if (pu->file != ST_RF_B) {
				/* a variable-latency reader without a read scoreboard reads late: keep the
				 * original distance (up to SC_LIMIT) */
				if (unknown || ((sp->flags & SC_VARLAT) && p->ctrl.rbar == ST_SB_NONE))
					l = SC_LIMIT;
				else
					l = table_lat(m, p, pu->slot, c, cd->slot, res_of(pu->file), ST_DEP_ANTI);
				if (l < 0)
					l = 0;
			}
			if (l > best || best < 0) {
				best = l > best ? l : best;
				if (what && wn && !what[0]) {
					char r[32];
					reg_text(r, sizeof r, pu, cd);
					snprintf(what, wn, "WAR on %s", r);
				}
			}
		}
	}
	if ((sp->flags | sc->flags) & SC_SPECIAL) {
		int l = unknown ? SC_LIMIT : special_lat(m, p, c);
		if (l > best) {
			best = l;
			if (what && wn && !what[0])
				snprintf(what, wn, "a GMMA/RPC/CGA-barrier dependence");
		}
	}
	if (best > SC_LIMIT)
		best = SC_LIMIT;
	if (what && wn && best >= 0) {
		char a[48], b[48], t[112];
		opname(a, sizeof a, p);
		opname(b, sizeof b, c);
		snprintf(t, sizeof t, " (%s -> %s)", a, b);
		size_t l = strlen(what);
		if (l + 1 < wn)
			snprintf(what + l, wn - l, "%s", t);
	}
	return best;
}

static uint8_t sets_of(st_ctrl c)
{
	return (uint8_t)((c.wbar < 6 ? 1u << c.wbar : 0) | (c.rbar < 6 ? 1u << c.rbar : 0));
}

static const char *space_name(unsigned bits)
{
	return bits & SC_SP_G ? "global" : bits & SC_SP_S ? "shared" : "local";
}

int sc_sync_latency(const sc_model *m, uint32_t pi, uint32_t ci)
{
	return m->si[pi].sync_cap && (m->si[ci].flags & SC_SYNC_DST) ? m->si[pi].sync_cap : SC_LAT_NONE;
}

bool sc_ordered(sc_model *m, uint32_t pi, uint32_t ci, char *why, size_t n)
{
	const st_sass_insn *p = &m->in[pi], *c = &m->in[ci];
	const sc_info *sp = &m->si[pi], *sc = &m->si[ci];
	char tmp[160];
	if (sc_latency(m, pi, ci, why ? tmp : NULL, sizeof tmp) >= 0) {
		if (why)
			snprintf(why, n, "%s", tmp);
		return true;
	}
	unsigned clash = (sp->mem_w & (sc->mem_r | sc->mem_w)) | (sp->mem_r & sc->mem_w);
	if (clash && !((sp->flags & SC_ASYNC_COPY) && (sc->flags & SC_ASYNC_COPY))) {
		if (why)
			snprintf(why, n, "memory order in %s memory (%s -> %s)", space_name(clash), p->opcode, c->opcode);
		return true;
	}
	if ((sp->flags & SC_VARLAT) && (sc->flags & SC_VARLAT)) {
		if ((sp->flags | sc->flags) & SC_NEEDS_CLAIM) {
			const st_sass_insn *u = (sp->flags & SC_NEEDS_CLAIM) ? p : c;
			if (why)
				snprintf(why, n, "in-queue completion order (%s has no write scoreboard) (%s -> %s)", u->opcode,
					 p->opcode, c->opcode);
			return true;
		}
		/* one reads registers late with no scoreboard of its own (STS, R7 W7): ptxas protects its
		 * sources through a later producer of the queue and that producer's SB; a
		 * write-scoreboard producer must not pass it (found by the checker on hoist walks) */
		const st_sass_insn *late = late_reader(p) && c->ctrl.wbar != ST_SB_NONE ? p
					   : late_reader(c) && p->ctrl.wbar != ST_SB_NONE ? c : NULL;
		if (late) {
			if (why)
				snprintf(why, n, "in-queue order (%s reads its sources late without a scoreboard) (%s -> %s)",
					 late->opcode, p->opcode, c->opcode);
			return true;
		}
		uint8_t shared = sets_of(p->ctrl) & sets_of(c->ctrl) & m->counted_sbs;
		if (shared) {
			unsigned k = 0;
			while (!(shared >> k & 1))
				k++;
			if (why)
				snprintf(why, n, "the count of DEPBAR.LE SB%u (both set SB%u) (%s -> %s)", k, k, p->opcode, c->opcode);
			return true;
		}
	}
	return false;
}

/* ---- classification -------------------------------------------------------------------- */
static int mnem_is(const char *op, const char *m)
{
	size_t n = strlen(m);
	return !strncmp(op, m, n) && (op[n] == 0 || op[n] == '.');
}

static uint8_t space_bits(unsigned space)
{
	switch (space) {
	case ST_SPACE_GLOBAL: return SC_SP_G;
	case ST_SPACE_SHARED: return SC_SP_S;
	case ST_SPACE_LOCAL: return SC_SP_L;
	case ST_SPACE_GENERIC: return SC_SP_G | SC_SP_S | SC_SP_L;
	default: return 0;
	}
}

/* DEPBAR operands: "SB0, 0x2", "SB1, 0x0, {2,3}", "{0,1}" -> waited SBs; counted when cnt > 0. */
static void parse_depbar(const st_sass_insn *x, uint8_t *sbs, uint8_t *counted)
{
	const char *s = x->operands;
	*sbs = 0;
	if (strstr(x->opcode, ".ALL") || strstr(s, "UR")) { /* drain all, or a count in a register */
		*sbs = 0x3f;
		*counted |= strstr(s, "UR") ? 0x3f : 0;
		return;
	}
	const char *sb = strstr(s, "SB");
	if (sb && sb[2] >= '0' && sb[2] <= '5') {
		unsigned k = (unsigned)(sb[2] - '0');
		*sbs |= (uint8_t)(1u << k);
		const char *comma = strchr(sb, ',');
		if (comma && strtoul(comma + 1, NULL, 0) > 0)
			*counted |= (uint8_t)(1u << k);
	}
	const char *br = strchr(s, '{');
	if (br)
		for (const char *q = br + 1; *q && *q != '}'; q++)
			if (*q >= '0' && *q <= '5')
				*sbs |= (uint8_t)(1u << (*q - '0'));
}

static int reads_pc_or_clock(const st_sass_insn *x)
{
	return mnem_is(x->opcode, "LEPC") || mnem_is(x->opcode, "ULEPC") || strstr(x->operands, "CLOCK") ||
	       strstr(x->operands, "TIMER");
}

static int is_special(const st_sass_insn *x)
{
	static const char *const names[] = {"WARPGROUP", "WARPGROUPSET", "HGMMA", "IGMMA", "QGMMA", "BGMMA",
					    "EXIT", "S2R", "S2UR", "USETMAXREG", "UCGABAR_ARV", "UCGABAR_GET",
					    "UCGABAR_SET", "UCGABAR_WAIT", "UCGABARARV", "UCGABARGET", "UCGABARSET",
					    "UCGABARWAIT"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (mnem_is(x->opcode, names[i]))
			return 1;
	return x->lat_cond != 0;
}

static uint16_t classify(const sc_model *m, const st_sass_insn *x, const bool *refslot)
{
	uint16_t f = 0;
	unsigned fl = x->flags;
	if (fl & ST_F_VARLAT)
		f |= SC_VARLAT;
	if (x->lat_op < 0 || (m->sm >= 90 && mnem_is(x->opcode, "DMMA")))
		f |= SC_UNKNOWN | SC_FIXED; /* sm_90's tables give DMMA 1 cycle everywhere: not trusted */
	if (fl & (ST_F_BRANCH | ST_F_BARRIER | ST_F_FENCE | ST_F_PCREL | ST_F_LEADER))
		f |= SC_FIXED;
	if (x->cls == ST_CLASS_CONTROL || x->cls == ST_CLASS_SYNC || x->cls == ST_CLASS_OTHER)
		f |= SC_FIXED;
	if (x->cls == ST_CLASS_TENSOR && (fl & ST_F_ASYNC))
		f |= SC_FIXED; /* HGMMA & co.: warpgroup-collective, async */
	int ldgsts = mnem_is(x->opcode, "LDGSTS");
	if (ldgsts)
		f |= SC_ASYNC_COPY;
	else if (x->cls == ST_CLASS_MEMORY && (fl & ST_F_ASYNC))
		f |= SC_FIXED; /* TMA and bulk copies */
	if (reads_pc_or_clock(x) || (refslot && refslot[x->index]))
		f |= SC_FIXED;
	if (x->cls == ST_CLASS_MEMORY && !x->ndefs && !x->nuses)
		f |= SC_FIXED; /* LDS RZ, [RZ]: ptxas puts these before LDGSTS; purpose undocumented, left alone */
	if (is_special(x))
		f |= SC_SPECIAL;
	if (x->cls == ST_CLASS_MEMORY && (fl & (ST_F_LOAD | ST_F_STORE)) && !(fl & ST_F_ATOMIC) &&
	    (x->space == ST_SPACE_GLOBAL || x->space == ST_SPACE_SHARED) && (ldgsts || !(fl & ST_F_ASYNC)))
		f |= SC_PROTO;
	if (fl & ST_F_VARLAT) {
		int result = 0;
		for (unsigned d = 0; d < x->ndefs; d++)
			if (x->defs[d].file != ST_RF_B && !(ldgsts && x->defs[d].file == ST_RF_P))
				result = 1;
		if (result && x->ctrl.wbar == ST_SB_NONE)
			f |= SC_NEEDS_CLAIM;
	}
	if (x->cls == ST_CLASS_ALU && !(fl & ST_F_VARLAT) && x->lat_op >= 0 && !(f & SC_SPECIAL))
		f |= SC_ALU;
	if ((f & SC_FIXED) && (x->cls == ST_CLASS_CONTROL || x->cls == ST_CLASS_SYNC || x->cls == ST_CLASS_OTHER ||
			       (fl & (ST_F_BRANCH | ST_F_BARRIER | ST_F_FENCE))))
		f |= SC_NO_YIELD;
	if (!x->ctrl.yield && x->ctrl.reuse) /* batch_t: leave the bits alone */
		f |= SC_NO_YIELD;
	/* after a barrier or fence (rule 9): memory accesses (not fixed-latency constant loads), anything
	 * of variable latency, barriers, fences, unknown instructions */
	if (((x->cls == ST_CLASS_MEMORY || (fl & (ST_F_LOAD | ST_F_STORE | ST_F_ATOMIC))) && x->space != ST_SPACE_CONST) ||
	    (f & SC_UNKNOWN) || (fl & (ST_F_VARLAT | ST_F_BARRIER | ST_F_FENCE)))
		f |= SC_SYNC_DST;
	return f;
}

/* ---- cross-block exposure: the longest latency to or from any instruction sharing a register */
typedef struct usig { uint32_t idx; int8_t slot; uint8_t role; } usig; /* role 0 use, 1 def */
typedef struct ulist { usig *v; size_t n, cap; } ulist;

#define NUNITS (256 + 64 + 8 + 8)
static int unit_of(unsigned file, unsigned index)
{
	switch (file) {
	case ST_RF_R: return index < 255 ? (int)index : -1;
	case ST_RF_UR: return index < 63 ? 256 + (int)index : -1;
	case ST_RF_P: return index < 7 ? 320 + (int)index : -1;
	case ST_RF_UP: return index < 7 ? 328 + (int)index : -1;
	default: return -1;
	}
}

static int same_sig(const st_sass_insn *a, const st_sass_insn *b)
{
	return a->lat_op == b->lat_op && a->lat_cond == b->lat_cond;
}

static bool ulist_add(ulist *l, const st_sass_insn *in, uint32_t idx, int slot, int role)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].slot == slot && l->v[i].role == role && same_sig(&in[l->v[i].idx], &in[idx]))
			return true;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		usig *p = realloc(l->v, cap * sizeof *p);
		if (!p)
			return false;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = (usig){idx, (int8_t)slot, (uint8_t)role};
	return true;
}

static int clampl(int l)
{
	return l < 0 ? 0 : l > SC_LIMIT ? SC_LIMIT : l;
}

/* lout: only consumers near a block start (original issue cycle < their latency) can meet a
 * producer at a block end too early; any other consumer C is protected by its own rule
 * t(C) >= min(orig_t(C), lin(C)) with lin(C) >= the latency (docs/sched.md, "block ends").
 * lin: the longest latency from any instruction sharing a register (by opcode signature). */
typedef struct ilist { uint32_t *v; size_t n, cap; } ilist;

static bool ilist_add(ilist *l, uint32_t x)
{
	if (l->n && l->v[l->n - 1] == x)
		return true;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		uint32_t *p = realloc(l->v, cap * sizeof *p);
		if (!p)
			return false;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return true;
}

static st_status exposure(sc_model *m, st_error *err)
{
	ulist *units = calloc(NUNITS, sizeof *units);
	ilist *heads = calloc(NUNITS, sizeof *heads);
	ulist specials = {0}, writers = {0};
	ilist shead = {0};
	uint32_t *stamp = calloc(m->n ? m->n : 1, sizeof *stamp);
	bool unk[NUNITS] = {false}; /* touched by an instruction the tables do not know */
	st_status rc = ST_OK;
	if (!units || !heads || !stamp) {
		free(units);
		free(heads);
		free(stamp);
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	}
	for (uint32_t i = 0; i < m->n && !rc; i++) {
		const st_sass_insn *x = &m->in[i];
		bool head = m->si[i].orig_t < SC_LIMIT;
		for (int pass = 0; pass < 2 && !rc; pass++) {
			const st_sass_reg *regs = pass ? x->uses : x->defs;
			unsigned nr = pass ? x->nuses : x->ndefs;
			for (unsigned d = 0; d < nr && !rc; d++)
				for (unsigned r = 0; r < regs[d].count && !rc; r++) {
					int u = unit_of(regs[d].file, regs[d].index + r);
					if (u < 0)
						continue;
					if (m->si[i].flags & SC_UNKNOWN)
						unk[u] = true;
					else if (!ulist_add(&units[u], m->in, i, regs[d].slot, !pass))
						rc = ST_ENOMEM;
					if (head && !ilist_add(&heads[u], i))
						rc = ST_ENOMEM;
				}
		}
		if (!rc && (m->si[i].flags & SC_SPECIAL) && !(m->si[i].flags & SC_UNKNOWN) &&
		    !ulist_add(&specials, m->in, i, -1, 0))
			rc = ST_ENOMEM;
		if (!rc && head && ((m->si[i].flags & (SC_SPECIAL | SC_UNKNOWN))) && !ilist_add(&shead, i))
			rc = ST_ENOMEM;
		if (!rc && x->ndefs && !(m->si[i].flags & SC_UNKNOWN) && !ulist_add(&writers, m->in, i, x->defs[0].slot, 1))
			rc = ST_ENOMEM;
	}
	/* barriers and fences (rule 9): the longest cap of any, and the earliest original issue cycle of
	 * a memory or variable-latency instruction from its block start */
	int sync_in = 0, dst_t = SC_LIMIT;
	for (uint32_t i = 0; i < m->n; i++) {
		if (m->si[i].sync_cap > sync_in)
			sync_in = m->si[i].sync_cap;
		if ((m->si[i].flags & SC_SYNC_DST) && m->si[i].orig_t < dst_t)
			dst_t = m->si[i].orig_t;
	}
	for (uint32_t i = 0; i < m->n && !rc; i++) {
		const st_sass_insn *x = &m->in[i];
		sc_info *si = &m->si[i];
		int out = 0, in = 0;
		/* a barrier before a block end: memory instructions near any block start */
		if (si->sync_cap > dst_t && si->sync_cap > out)
			out = si->sync_cap;
		/* out: consumers near block starts */
		for (int pass = 0; pass < 3; pass++) {
			const st_sass_reg *regs = pass == 0 ? x->defs : x->uses;
			unsigned nr = pass == 0 ? x->ndefs : pass == 1 ? x->nuses : 0;
			const ilist *cand = pass == 2 ? &shead : NULL;
			for (unsigned d = 0; d < nr || (cand && d == 0); d++) {
				for (unsigned r = 0; cand ? r == 0 : r < regs[d].count; r++) {
					const ilist *l = cand;
					if (!l) {
						int u = unit_of(regs[d].file, regs[d].index + r);
						if (u < 0)
							continue;
						l = &heads[u];
					}
					for (size_t j = 0; j < l->n; j++) {
						uint32_t c = l->v[j];
						if (stamp[c] == i + 1)
							continue;
						stamp[c] = i + 1;
						int lat = sc_latency(m, i, c, NULL, 0);
						if (lat > m->si[c].orig_t && lat > out)
							out = lat > SC_LIMIT ? SC_LIMIT : lat;
					}
				}
				if (cand)
					break;
			}
		}
		if (si->flags & SC_UNKNOWN) {
			si->lout = (uint8_t)(out > 2 ? out : 2);
			si->lin = SC_LIMIT;
			continue;
		}
		/* in: every producer signature sharing a register */
		for (unsigned d = 0; d < x->nuses; d++) {
			const st_sass_reg *r = &x->uses[d];
			if (r->file == ST_RF_B)
				continue;
			int res = res_of(r->file);
			for (unsigned k = 0; k < r->count; k++) {
				int u = unit_of(r->file, r->index + k);
				for (size_t j = 0; u >= 0 && j < units[u].n; j++) {
					const usig *g = &units[u].v[j];
					if (!g->role)
						continue;
					int li = table_lat(m, &m->in[g->idx], g->slot, x, r->slot, res, ST_DEP_TRUE);
					if (li < 0 && !(m->si[g->idx].flags & SC_VARLAT))
						li = SC_LIMIT;
					in = clampl(li) > in ? clampl(li) : in;
				}
			}
		}
		for (unsigned d = 0; d < x->ndefs; d++) {
			const st_sass_reg *r = &x->defs[d];
			if (r->file == ST_RF_B)
				continue;
			int res = res_of(r->file);
			for (unsigned k = 0; k < r->count; k++) {
				int u = unit_of(r->file, r->index + k);
				for (size_t j = 0; u >= 0 && j < units[u].n; j++) {
					const usig *g = &units[u].v[j];
					const st_sass_insn *y = &m->in[g->idx];
					int li = table_lat(m, y, g->slot, x, r->slot, res, g->role ? ST_DEP_OUTPUT : ST_DEP_ANTI);
					if (!g->role && (m->si[g->idx].flags & SC_VARLAT) && y->ctrl.rbar == ST_SB_NONE)
						li = SC_LIMIT;
					in = clampl(li) > in ? clampl(li) : in;
				}
			}
		}
		for (int pass = 0; pass < 2; pass++) {
			const st_sass_reg *regs = pass ? x->uses : x->defs;
			unsigned nr = pass ? x->nuses : x->ndefs;
			for (unsigned d = 0; d < nr; d++)
				for (unsigned k = 0; k < regs[d].count; k++) {
					int u = unit_of(regs[d].file, regs[d].index + k);
					if (u >= 0 && unk[u])
						in = SC_LIMIT;
				}
		}
		if (si->flags & SC_SPECIAL) {
			for (size_t j = 0; j < writers.n; j++)
				in = clampl(special_lat(m, &m->in[writers.v[j].idx], x)) > in ? clampl(special_lat(m, &m->in[writers.v[j].idx], x)) : in;
			for (size_t j = 0; j < specials.n; j++)
				in = clampl(special_lat(m, &m->in[specials.v[j].idx], x)) > in ? clampl(special_lat(m, &m->in[specials.v[j].idx], x)) : in;
		}
		if ((si->flags & SC_SYNC_DST) && sync_in > in)
			in = sync_in; /* a barrier in some other block */
		if (sets_of(x->ctrl) && out < 2)
			out = 2; /* set-to-wait */
		if ((x->ctrl.wait || si->depbar) && in < 2)
			in = 2;
		si->lout = (uint8_t)out;
		si->lin = (uint8_t)in;
	}
	for (size_t u = 0; u < NUNITS; u++) {
		free(units[u].v);
		free(heads[u].v);
	}
	free(units);
	free(heads);
	free(shead.v);
	free(stamp);
	free(specials.v);
	free(writers.v);
	return rc ? st_error_set(err, rc, "sched: out of memory") : ST_OK;
}

/* ---- building ---------------------------------------------------------------------------- */
void sc_model_free(sc_model *m)
{
	free(m->si);
	free(m->bfirst);
	free(m->blast);
	free(m->loop);
	memo_free(m->memo);
	memset(m, 0, sizeof *m);
}

/* Per opcode (mnemonic with modifiers): the reuse bits ptxas set on it whose `.reuse` marks sit
 * on the operand of that positional slot; none at all if any of its reuse bits does not. */
static st_status reuse_ok(sc_model *m, st_error *err)
{
	const char **op = calloc(m->n ? m->n : 1, sizeof *op);
	uint8_t *ok = calloc(m->n ? m->n : 1, 1), *bad = calloc(m->n ? m->n : 1, 1);
	uint32_t *which = calloc(m->n ? m->n : 1, sizeof *which);
	if (!op || !ok || !bad || !which) {
		free(op), free(ok), free(bad), free(which);
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	}
	size_t nop = 0;
	for (size_t i = 0; i < m->n; i++) {
		const st_sass_insn *x = &m->in[i];
		size_t o = 0;
		while (o < nop && strcmp(op[o], x->opcode))
			o++;
		if (o == nop)
			op[nop++] = x->opcode;
		which[i] = (uint32_t)o;
		int marks = st_sass_reuse_marks(x);
		unsigned bits = st_ctrl_reuse_bits(x->ctrl);
		if (marks < 0 || (unsigned)marks != bits)
			bad[o] = 1;
		else
			ok[o] |= (uint8_t)bits;
	}
	for (size_t i = 0; i < m->n; i++)
		m->si[i].reuse_ok = bad[which[i]] ? 0 : ok[which[i]];
	free(op), free(ok), free(bad), free(which);
	return ST_OK;
}

st_status sc_model_build(sc_model *m, const st_sass_kernel *k, const st_cubin *c, unsigned flags, st_error *err)
{
	memset(m, 0, sizeof *m);
	m->k = k;
	m->in = st_sass_insns(k);
	m->n = st_sass_count(k);
	m->sm = st_sass_sm(k);
	m->flags = flags;
	size_t nb = st_sass_block_count(k);
	bool *refslot = NULL;
	m->si = calloc(m->n ? m->n : 1, sizeof *m->si);
	m->bfirst = calloc(nb ? nb : 1, sizeof *m->bfirst);
	m->blast = calloc(nb ? nb : 1, sizeof *m->blast);
	m->loop = calloc(nb ? nb : 1, sizeof *m->loop);
	m->memo = memo_new();
	if (!m->si || !m->bfirst || !m->blast || !m->loop || !m->memo) {
		sc_model_free(m);
		return st_error_set(err, ST_ENOMEM, "sched: out of memory");
	}
	if (c) {
		size_t ki = st_cubin_find_kernel(c, st_sass_name(k));
		if (ki != ST_CUBIN_NONE) {
			refslot = calloc(m->n ? m->n : 1, sizeof *refslot);
			if (!refslot) {
				sc_model_free(m);
				return st_error_set(err, ST_ENOMEM, "sched: out of memory");
			}
			for (size_t i = 0; i < st_cubin_ref_count(c, ki); i++) {
				const st_code_ref *r = st_cubin_ref(c, ki, i);
				if (r->slot >= 0 && (size_t)r->slot < m->n)
					refslot[r->slot] = true;
			}
		}
	}
	for (size_t b = 0; b < nb; b++) {
		uint32_t first, count;
		int32_t succ[2];
		st_sass_block(k, b, &first, &count, succ);
		m->bfirst[b] = first;
		m->blast[b] = first + count - 1;
		int32_t t = 0;
		for (uint32_t i = first; i < first + count; i++) {
			m->si[i].block = (uint32_t)b;
			m->si[i].orig_t = t;
			t += m->in[i].ctrl.stall;
		}
		for (uint32_t i = first; i < first + count; i++)
			m->si[i].orig_end = t - m->si[i].orig_t;
		for (int e = 0; e < 2; e++) /* a back edge b -> succ encloses the blocks in between */
			if (succ[e] >= 0 && (size_t)succ[e] <= b)
				for (size_t x = (size_t)succ[e]; x <= b; x++)
					if (m->loop[x] < 255)
						m->loop[x]++;
	}
	for (size_t i = 0; i < m->n; i++) {
		const st_sass_insn *x = &m->in[i];
		sc_info *si = &m->si[i];
		si->flags = classify(m, x, refslot);
		if (x->cls == ST_CLASS_MEMORY || (x->flags & (ST_F_LOAD | ST_F_STORE | ST_F_ATOMIC))) {
			uint8_t sp = space_bits(x->space);
			if (si->flags & SC_ASYNC_COPY) {
				si->mem_r = SC_SP_G;
				si->mem_w = SC_SP_S;
			} else {
				if (x->flags & (ST_F_LOAD | ST_F_ATOMIC))
					si->mem_r = sp;
				if (x->flags & (ST_F_STORE | ST_F_ATOMIC))
					si->mem_w = sp;
			}
		}
		if (mnem_is(x->opcode, "DEPBAR"))
			parse_depbar(x, &si->depbar, &m->counted_sbs);
		if (x->flags & (ST_F_BARRIER | ST_F_FENCE))
			si->sync_cap = mnem_is(x->opcode, "BAR") ? SC_BAR_CAP : SC_SYNC_CAP;
	}
	free(refslot);
	st_status rc = reuse_ok(m, err);
	if (rc) {
		sc_model_free(m);
		return rc;
	}
	return exposure(m, err);
}
