/* The independent checker (`sasstune check`): every dependence, scoreboard, ordering and latency
 * constraint a rewritten kernel breaks relative to its original.  Written apart from the move
 * generator (model.c, check_move.c): it shares none of its code, recovers the instruction
 * mapping from the words themselves and judges the result, not the moves.  docs/sched.md. */
#include "sasstune/sched.h"
#include "check_rename.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"

static void violation(ck *c, uint32_t slot, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void violation(ck *c, uint32_t slot, const char *fmt, ...)
{
	c->bad++;
	if (!c->report)
		return;
	char buf[ST_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	c->report(c->ctx, c->name, 16 * slot, buf);
}

void ck_flag(ck *c, uint32_t slot, const char *msg)
{
	violation(c, slot, "%s", msg);
}

static int op_is(const char *op, const char *m)
{
	size_t n = strlen(m);
	return !strncmp(op, m, n) && (op[n] == 0 || op[n] == '.');
}

static uint8_t sbs(st_ctrl x)
{
	return (uint8_t)((x.wbar < 6 ? 1u << x.wbar : 0) | (x.rbar < 6 ? 1u << x.rbar : 0));
}

static int low_bit(unsigned v)
{
	int k = 0;
	while (v && !(v >> k & 1))
		k++;
	return k;
}

/* ---- what may not move, in the checker's own terms ---------------------------------------- */
static bool is_fixed(const ck *c, uint32_t i)
{
	const st_sass_insn *x = &c->in[i];
	if (x->lat_op < 0 || (x->flags & (ST_F_BRANCH | ST_F_BARRIER | ST_F_FENCE | ST_F_PCREL | ST_F_LEADER)))
		return true;
	if (c->sm >= 90 && op_is(x->opcode, "DMMA")) /* sm_90's tables say 1 cycle: not trusted */
		return true;
	if (x->cls == ST_CLASS_CONTROL || x->cls == ST_CLASS_SYNC || x->cls == ST_CLASS_OTHER)
		return true;
	if ((x->cls == ST_CLASS_TENSOR || x->cls == ST_CLASS_MEMORY) && (x->flags & ST_F_ASYNC) && !op_is(x->opcode, "LDGSTS"))
		return true;
	if (x->cls == ST_CLASS_MEMORY && !x->ndefs && !x->nuses) /* LDS RZ, [RZ] before LDGSTS */
		return true;
	if (op_is(x->opcode, "LEPC") || op_is(x->opcode, "ULEPC") || strstr(x->operands, "CLOCK") ||
	    strstr(x->operands, "TIMER"))
		return true;
	return c->refslot && c->refslot[i];
}

static bool is_special(const st_sass_insn *x)
{
	static const char *const s[] = {"WARPGROUP", "WARPGROUPSET", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "EXIT", "S2R",
					"S2UR", "USETMAXREG", "UCGABAR_ARV", "UCGABAR_GET", "UCGABAR_SET",
					"UCGABAR_WAIT", "UCGABARARV", "UCGABARGET", "UCGABARSET", "UCGABARWAIT"};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		if (op_is(x->opcode, s[i]))
			return true;
	return x->lat_cond != 0;
}

static bool varlat(const st_sass_insn *x)
{
	return (x->flags & ST_F_VARLAT) != 0;
}

/* Variable latency with a register result and no write scoreboard of its own. */
static bool unclaimed(const st_sass_insn *x)
{
	if (!varlat(x) || x->ctrl.wbar != ST_SB_NONE)
		return false;
	bool async_copy = op_is(x->opcode, "LDGSTS");
	for (unsigned d = 0; d < x->ndefs; d++)
		if (x->defs[d].file != ST_RF_B && !(async_copy && x->defs[d].file == ST_RF_P))
			return true;
	return false;
}

static unsigned mem_bits(const st_sass_insn *x, bool write)
{
	if (!(x->cls == ST_CLASS_MEMORY || (x->flags & (ST_F_LOAD | ST_F_STORE | ST_F_ATOMIC))))
		return 0;
	if (op_is(x->opcode, "LDGSTS"))
		return write ? 2u : 1u; /* reads global, writes shared */
	unsigned sp = x->space == ST_SPACE_GLOBAL ? 1u : x->space == ST_SPACE_SHARED ? 2u : x->space == ST_SPACE_LOCAL ? 4u
		      : x->space == ST_SPACE_GENERIC ? 7u : 0u;
	if (write)
		return (x->flags & (ST_F_STORE | ST_F_ATOMIC)) ? sp : 0;
	return (x->flags & (ST_F_LOAD | ST_F_ATOMIC)) ? sp : 0;
}

/* ---- barriers and fences before memory accesses ------------------------------------------------- */
/* A barrier or fence and a later memory access (or any variable-latency, barrier, fence or unknown
 * instruction) keep their issue distance up to 6 cycles: after a BAR, the latency files' BAR_OP
 * BARWAIT occupancy (5 ran wrong on the H200); after any other, the same bound by caution.
 * 0: x is neither. */
static int barrier_cap(const st_sass_insn *x)
{
	return (x->flags & (ST_F_BARRIER | ST_F_FENCE)) ? 6 : 0;
}

static bool after_barrier(const st_sass_insn *x)
{
	bool mem = x->cls == ST_CLASS_MEMORY || (x->flags & (ST_F_LOAD | ST_F_STORE | ST_F_ATOMIC));
	return (mem && x->space != ST_SPACE_CONST) || x->lat_op < 0 ||
	       (x->flags & (ST_F_VARLAT | ST_F_BARRIER | ST_F_FENCE));
}

/* ---- latency between two original instructions ---------------------------------------------- */
static int rf_res(unsigned f)
{
	return f == ST_RF_R ? ST_RES_GPR : f == ST_RF_UR ? ST_RES_UGPR : f == ST_RF_P ? ST_RES_PRED : ST_RES_UPRED;
}

/* -1: independent; else the issue distance the tables ask for (CK_LIMIT when unknown). */
static int pair_latency(const ck *c, const st_sass_insn *p, const st_sass_insn *q, char *what, size_t wn)
{
	int best = -1;
	bool unknown = p->lat_op < 0 || q->lat_op < 0 ||
		       (c->sm >= 90 && (op_is(p->opcode, "DMMA") || op_is(q->opcode, "DMMA")));
	if (what)
		what[0] = 0;
#define NOTE(kind, r)                                                                                  \
	do {                                                                                           \
		if (what && !what[0]) {                                                                \
			char nm[16];                                                                   \
			st_sass_reg_str(nm, sizeof nm, (r)->file, (r)->index);                         \
			snprintf(what, wn, "%s on %s (%s -> %s)", kind, nm, p->opcode, q->opcode);     \
		}                                                                                      \
	} while (0)
	for (unsigned d = 0; d < p->ndefs; d++) {
		const st_sass_reg *r = &p->defs[d];
		for (unsigned u = 0; u < q->nuses; u++) {
			if (!ck_regs_meet(r, &q->uses[u]))
				continue;
			int l = 0;
			if (r->file != ST_RF_B) {
				l = unknown ? CK_LIMIT
					    : st_sass_latency(c->sm, p, r->slot, q, q->uses[u].slot, rf_res(r->file), ST_DEP_TRUE);
				if (l < 0)
					l = varlat(p) ? 0 : CK_LIMIT;
			}
			NOTE("RAW", &q->uses[u]);
			best = l > best ? l : best;
		}
		for (unsigned e = 0; e < q->ndefs; e++) {
			if (!ck_regs_meet(r, &q->defs[e]))
				continue;
			int l = 0;
			if (r->file != ST_RF_B) {
				l = unknown ? CK_LIMIT
					    : st_sass_latency(c->sm, p, r->slot, q, q->defs[e].slot, rf_res(r->file), ST_DEP_OUTPUT);
				l = l < 0 ? 0 : l;
			}
			NOTE("WAW", &q->defs[e]);
			best = l > best ? l : best;
		}
	}
	for (unsigned u = 0; u < p->nuses; u++) {
		const st_sass_reg *r = &p->uses[u];
		for (unsigned e = 0; e < q->ndefs; e++) {
			if (!ck_regs_meet(r, &q->defs[e]))
				continue;
			int l = 0;
			if (r->file != ST_RF_B) {
				if (unknown || (varlat(p) && p->ctrl.rbar == ST_SB_NONE))
					l = CK_LIMIT; /* read late, no read scoreboard: keep the original distance */
				else
					l = st_sass_latency(c->sm, p, r->slot, q, q->defs[e].slot, rf_res(r->file), ST_DEP_ANTI);
				l = l < 0 ? 0 : l;
			}
			NOTE("WAR", &q->defs[e]);
			best = l > best ? l : best;
		}
	}
	if (is_special(p) || is_special(q)) {
		static const int res[] = {ST_RES_GMMA_SB, ST_RES_GMMA_GSB, ST_RES_CGABAR, ST_RES_RPC};
		int l = -1;
		if (unknown)
			l = CK_LIMIT;
		for (size_t r = 0; !unknown && r < sizeof res / sizeof res[0]; r++) {
			int v = st_sass_latency(c->sm, p, -1, q, -1, (st_sass_res)res[r], ST_DEP_TRUE);
			l = v > l ? v : l;
		}
		for (unsigned d = 0; !unknown && q->lat_cond && d < p->ndefs; d++)
			if (p->defs[d].file != ST_RF_B) {
				int v = st_sass_latency(c->sm, p, p->defs[d].slot, q, -1, rf_res(p->defs[d].file), ST_DEP_TRUE);
				l = v > l ? v : l;
			}
		if (l > best) {
			best = l;
			if (what && !what[0])
				snprintf(what, wn, "a GMMA/RPC/CGA-barrier latency (%s -> %s)", p->opcode, q->opcode);
		}
	}
#undef NOTE
	return best > CK_LIMIT ? CK_LIMIT : best;
}

/* ---- the instruction mapping ------------------------------------------------------------------ */
typedef struct keyed { uint64_t lo, hi; uint32_t idx; } keyed;

static int cmp_keyed(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#define CTRL_HI (((((uint64_t)1) << 61) - 1) & ~((((uint64_t)1) << 41) - 1))
/* coarse: also without the fields a move patches (branch immediates, literals) */
static void word_key(const uint8_t *w, bool coarse, uint64_t *lo, uint64_t *hi)
{
	*lo = le64(w);
	*hi = le64(w + 8) & ~CTRL_HI;
	if (coarse) {
		*lo &= 0xffffull;
		*hi &= ~0x3ffffull;
	}
}

static const keyed *find_first(const keyed *v, size_t n, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (v[m].hi < hi || (v[m].hi == hi && v[m].lo < lo))
			a = m + 1;
		else
			b = m;
	}
	return a < n && v[a].hi == hi && v[a].lo == lo ? &v[a] : NULL;
}

/* Equal but for the control bits 105..124. */
static bool same_word(const uint8_t *a, const uint8_t *b)
{
	uint64_t alo, ahi, blo, bhi;
	word_key(a, false, &alo, &ahi);
	word_key(b, false, &blo, &bhi);
	return alo == blo && ahi == bhi;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* After renames were matched: every run of identical original words not renamed pairs with the
 * tuned slots holding them in order (as build_map pairs them when nothing is renamed). */
static st_status pair_in_order(ck *c, st_error *err)
{
	size_t n = c->n, nk = 0;
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= c->renamed[i];
	if (!any)
		return ST_OK;
	keyed *v = malloc((n ? n : 1) * sizeof *v);
	uint32_t *js = malloc((n ? n : 1) * sizeof *js);
	if (!v || !js) {
		free(v), free(js);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < n; i++)
		if (!c->renamed[i] && !(c->oin[i].flags & ST_F_PCREL) && !(c->refslot && c->refslot[i])) {
			word_key(c->oin[i].word, false, &v[nk].lo, &v[nk].hi);
			v[nk++].idx = i;
		}
	qsort(v, nk, sizeof *v, cmp_keyed);
	for (size_t a = 0, b; a < nk; a = b) {
		for (b = a + 1; b < nk && v[b].lo == v[a].lo && v[b].hi == v[a].hi;)
			b++;
		for (size_t t = a; t < b; t++)
			js[t - a] = c->inv[v[t].idx];
		qsort(js, b - a, sizeof *js, cmp_u32);
		for (size_t t = a; t < b; t++) { /* v[a..b) is sorted by original index */
			c->map[js[t - a]] = v[t].idx;
			c->inv[v[t].idx] = js[t - a];
		}
	}
	free(v), free(js);
	return ST_OK;
}

/* tin[i] back to the original's registers (its own storage kept). */
static void tin_reset(ck *c, uint32_t i)
{
	st_sass_reg *r = (st_sass_reg *)c->tin[i].defs;
	c->tin[i] = c->oin[i];
	c->tin[i].defs = r;
	c->tin[i].uses = r + c->oin[i].ndefs;
	memcpy(r, c->oin[i].defs, c->oin[i].ndefs * sizeof *r);
	memcpy(r + c->oin[i].ndefs, c->oin[i].uses, c->oin[i].nuses * sizeof *r);
}

typedef struct cand { uint64_t cost; uint32_t j, i; } cand;
static int cmp_cand(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	return x->cost != y->cost ? (x->cost < y->cost ? -1 : 1) : x->j != y->j ? (x->j < y->j ? -1 : 1) : (x->i > y->i) - (x->i < y->i);
}

/* The identical original words (not renamed) of i nearest to tuned slot j: build_map matched
 * identical words in order, so the renamed one may be any of them. */
static uint32_t nearest_twin(const ck *c, uint32_t i, uint32_t j, const bool *taken)
{
	uint32_t best = i;
	for (uint32_t q = 0; q < c->n; q++)
		if (q != i && taken[q] && !c->renamed[q] && c->inv[q] != UINT32_MAX && same_word(c->oin[q].word, c->oin[i].word) &&
		    (q > j ? q - j : j - q) < (best > j ? best - j : j - best))
			best = q;
	return best;
}

/* Unmatched tuned words to untaken originals: every pair the checker can read as a rename,
 * cheapest first (fewest changed fields, then the nearest twin), each word and original once. */
static st_status match_pairs(ck *c, const uint8_t *code, bool *taken, bool *ok, st_error *err)
{
	size_t n = c->n, nd = 0, nf = 0, np = 0;
	for (uint32_t j = 0; j < n; j++)
		nd += c->map[j] == UINT32_MAX;
	for (uint32_t i = 0; i < n; i++)
		nf += !taken[i];
	size_t cap = nd * nf;
	cand *v = malloc((cap ? cap : 1) * sizeof *v);
	if (!v)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	for (uint32_t j = 0; j < n; j++)
		for (uint32_t i = 0; c->map[j] == UINT32_MAX && i < n; i++) {
			if (taken[i])
				continue;
			bool fits = ckr_renamed(&c->oin[i], code + 16 * j, &c->tin[i], (st_sass_reg *)c->tin[i].defs);
			tin_reset(c, i);
			if (!fits)
				continue;
			uint64_t d = 0, t = nearest_twin(c, i, j, taken);
			for (int f = 0; f < 4; f++)
				d += c->oin[i].word[f == 3 ? 8 : 2 + f] != code[16 * j + (f == 3 ? 8 : 2 + f)];
			v[np++] = (cand){d << 32 | (t > j ? t - j : j - t), j, i};
		}
	qsort(v, np, sizeof *v, cmp_cand);
	for (size_t p = 0; p < np; p++) {
		uint32_t j = v[p].j, i = v[p].i;
		if (c->map[j] != UINT32_MAX || taken[i])
			continue;
		uint32_t best = nearest_twin(c, i, j, taken);
		if (best != i) { /* the twin's tuned word takes i (the same word), j takes the twin */
			uint32_t j2 = c->inv[best];
			c->map[j2] = i;
			c->inv[i] = j2;
			taken[i] = true;
			i = best;
		}
		ckr_renamed(&c->oin[i], code + 16 * j, &c->tin[i], (st_sass_reg *)c->tin[i].defs);
		taken[i] = c->renamed[i] = true;
		c->map[j] = i;
		c->inv[i] = j;
	}
	free(v);
	for (uint32_t j = 0; j < n && *ok; j++)
		if (c->map[j] == UINT32_MAX) {
			violation(c, j, "the word at 0x%x matches no instruction of the original (or one too many)", 16 * j);
			*ok = false;
		}
	return ST_OK;
}

/* Tuned words no original word matches: an original instruction with only register fields
 * changed (check_rename.c reads them); in->registers of the rewrite go to c->tin. */
static st_status map_renamed(ck *c, const uint8_t *code, bool *ok, st_error *err)
{
	size_t n = c->n, nr = 0;
	bool *taken = calloc(n ? n : 1, sizeof *taken);
	for (uint32_t i = 0; i < n; i++)
		nr += c->oin[i].ndefs + c->oin[i].nuses;
	c->tin = malloc((n ? n : 1) * sizeof *c->tin);
	c->tregs = malloc((nr ? nr : 1) * sizeof *c->tregs);
	c->renamed = calloc(n ? n : 1, sizeof *c->renamed);
	if (!taken || !c->tin || !c->tregs || !c->renamed) {
		free(taken);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	for (uint32_t j = 0; j < n; j++)
		if (c->map[j] != UINT32_MAX)
			taken[c->map[j]] = true;
	size_t at = 0;
	for (uint32_t i = 0; i < n; i++) {
		const st_sass_insn *o = &c->oin[i];
		c->tin[i] = *o;
		memcpy(c->tregs + at, o->defs, o->ndefs * sizeof *o->defs);
		memcpy(c->tregs + at + o->ndefs, o->uses, o->nuses * sizeof *o->uses);
		c->tin[i].defs = c->tregs + at;
		c->tin[i].uses = c->tregs + at + o->ndefs;
		at += o->ndefs + o->nuses;
	}
	st_status rc = match_pairs(c, code, taken, ok, err);
	free(taken);
	c->in = c->tin;
	return rc ? rc : *ok ? pair_in_order(c, err) : ST_OK;
}

/* Match every tuned word to an original instruction: exact words (control bits aside) first,
 * words with patched offsets by their coarse key; identical words in order. */
static st_status build_map(ck *c, const uint8_t *code, bool *ok, st_error *err)
{
	size_t n = c->n;
	keyed *fine = malloc((n ? n : 1) * sizeof *fine), *coarse = malloc((n ? n : 1) * sizeof *coarse);
	uint32_t *used = calloc(n ? n : 1, sizeof *used); /* per sorted position: taken */
	uint32_t *usedc = calloc(n ? n : 1, sizeof *usedc);
	size_t nf = 0, nc = 0;
	if (!fine || !coarse || !used || !usedc) {
		free(fine);
		free(coarse);
		free(used);
		free(usedc);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < n; i++) {
		bool rel = (c->in[i].flags & ST_F_PCREL) || (c->refslot && c->refslot[i]);
		keyed *e = rel ? &coarse[nc++] : &fine[nf++];
		word_key(c->in[i].word, rel, &e->lo, &e->hi);
		e->idx = i;
	}
	qsort(fine, nf, sizeof *fine, cmp_keyed);
	qsort(coarse, nc, sizeof *coarse, cmp_keyed);
	*ok = true;
	for (uint32_t j = 0; j < n; j++) {
		uint64_t lo, hi;
		word_key(code + 16 * j, false, &lo, &hi);
		const keyed *e = find_first(fine, nf, lo, hi);
		keyed *base = fine;
		uint32_t *u = used;
		size_t nn = nf;
		if (!e) {
			word_key(code + 16 * j, true, &lo, &hi);
			e = find_first(coarse, nc, lo, hi);
			base = coarse;
			u = usedc;
			nn = nc;
		}
		size_t at = e ? (size_t)(e - base) : nn;
		while (at < nn && base[at].lo == lo && base[at].hi == hi && u[at])
			at++;
		if (at >= nn || base[at].lo != lo || base[at].hi != hi) {
			c->map[j] = UINT32_MAX; /* perhaps renamed registers: matched below */
			continue;
		}
		u[at] = 1;
		c->map[j] = base[at].idx;
		c->inv[base[at].idx] = j;
	}
	free(fine);
	free(coarse);
	free(used);
	free(usedc);
	return map_renamed(c, code, ok, err);
}

/* ---- the checks ----------------------------------------------------------------------------------- */
static void check_codes_and_refs(ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt)
{
	for (uint32_t j = 0; j < c->n; j++) {
		st_error e = {0};
		uint32_t i = c->map[j];
		st_ctrl t = c->ct[j], o = c->in[i].ctrl;
		if (st_ctrl_check(t, &e))
			violation(c, j, "%s: %s", c->in[i].opcode, e.msg);
		/* one real SB for another is judged by check_sb; to or from none never */
		if ((t.wbar != o.wbar && (t.wbar > 5 || o.wbar > 5)) || (t.rbar != o.rbar && (t.rbar > 5 || o.rbar > 5)))
			violation(c, j, "%s: scoreboards changed (W%u R%u -> W%u R%u)", c->in[i].opcode, o.wbar, o.rbar, t.wbar,
				  t.rbar);
		if (sbs(o) && t.stall < o.stall)
			violation(c, j, "%s: stall lowered %u -> %u on an instruction that sets SB%d (such edits ran wrong on the H200)",
				  c->in[i].opcode, o.stall, t.stall, low_bit(sbs(o)));
		int reuse_mode_o = o.yield && o.stall >= 1 && o.stall <= 11;
		int reuse_mode_t = t.yield && t.stall >= 1 && t.stall <= 11;
		if (!reuse_mode_o && !reuse_mode_t && o.reuse != t.reuse)
			violation(c, j, "%s: batch bits changed (%u -> %u)", c->in[i].opcode, o.reuse, t.reuse);
	}
	/* branch targets and other code references still name the same instructions */
	size_t nro = st_cubin_ref_count(orig, ko), nrt = st_cubin_ref_count(tuned, kt);
	if (nro != nrt) {
		violation(c, 0, "%zu code references in the original, %zu in the rewrite", nro, nrt);
		return;
	}
	for (size_t r = 0; r < nro; r++) {
		const st_code_ref *a = st_cubin_ref(orig, ko, r);
		if (a->kind != ST_REF_BRANCH || a->slot < 0 || (size_t)a->slot >= c->n || a->target / 16 >= c->n)
			continue;
		uint32_t want_slot = c->inv[a->slot], want_target = 16 * c->inv[a->target / 16];
		bool found = false;
		for (size_t q = 0; q < nrt && !found; q++) {
			const st_code_ref *b = st_cubin_ref(tuned, kt, q);
			found = b->kind == ST_REF_BRANCH && b->slot == (long)want_slot && b->target == want_target;
		}
		if (!found)
			violation(c, want_slot, "%s no longer targets the instruction it named (0x%x in the original)",
				  a->what, a->target);
	}
}

static void check_places(ck *c)
{
	for (uint32_t j = 0; j < c->n; j++) {
		uint32_t i = c->map[j];
		if (c->xmoved[i] || c->xleader[i])
			continue; /* judged by ck_xblock */
		if (c->fixed[i] && j != i)
			violation(c, j, "%s moved from 0x%x: it is a fixed point (control flow, barrier, fence, block entry, code reference)",
				  c->in[i].opcode, 16 * i);
		else if (c->in[i].block != c->in[j].block)
			violation(c, j, "%s crossed a block boundary (from 0x%x)", c->in[i].opcode, 16 * i);
		else if (c->seg[i] != c->seg[j])
			violation(c, j, "%s crossed a fixed point (from 0x%x)", c->in[i].opcode, 16 * i);
	}
}

/* Orders that must hold inside a segment: registers, memory, queues. */
static void check_orders(ck *c)
{
	size_t n = c->n;
	for (size_t a = 0; a < n;) {
		size_t b = a;
		while (b < n && c->seg[b] == c->seg[a])
			b++;
		/* [a, b) is one segment (original slots) */
		for (size_t p = a; p < b; p++) {
			if (c->fixed[p])
				continue;
			const st_sass_insn *x = &c->in[p];
			unsigned xr = mem_bits(x, false), xw = mem_bits(x, true);
			for (size_t q = p + 1; q < b; q++) {
				if (c->inv[q] > c->inv[p])
					continue; /* order kept */
				const st_sass_insn *y = &c->in[q];
				char what[160];
				if (pair_latency(c, x, y, what, sizeof what) >= 0) {
					violation(c, c->inv[q], "%s is now before %s: breaks %s", y->opcode, x->opcode, what);
					continue;
				}
				unsigned yr = mem_bits(y, false), yw = mem_bits(y, true);
				bool both_async = op_is(x->opcode, "LDGSTS") && op_is(y->opcode, "LDGSTS");
				if (((xw & (yr | yw)) | (xr & yw)) && !both_async) {
					violation(c, c->inv[q], "%s is now before %s: breaks memory order", y->opcode, x->opcode);
					continue;
				}
				if (varlat(x) && varlat(y)) {
					if (unclaimed(x) || unclaimed(y))
						violation(c, c->inv[q], "%s is now before %s: breaks in-queue completion order (%s has no write scoreboard)",
							  y->opcode, x->opcode, unclaimed(x) ? x->opcode : y->opcode);
					else if (sbs(x->ctrl) & sbs(y->ctrl) & c->counted)
						violation(c, c->inv[q], "%s is now before %s: both set SB%d, which a DEPBAR.LE counts",
							  y->opcode, x->opcode, low_bit(sbs(x->ctrl) & sbs(y->ctrl) & c->counted));
				}
			}
		}
		a = b;
	}
}

/* Walk forward from a producer's tuned slot through the CFG, visiting every instruction reached
 * within CK_LIMIT tuned cycles with its tuned distance and the original distance along the same
 * path (-1: the pair was in the other order originally). */
typedef struct walkctx {
	ck *c;
	uint32_t p; /* tuned slot of the producer */
	int32_t *btotal;
} walkctx;

static void visit(walkctx *w, uint32_t q, int dt, int od)
{
	ck *c = w->c;
	uint32_t P = c->map[w->p], Q = c->map[q];
	const st_sass_insn *p = &c->in[P], *y = &c->in[Q];
	char what[160];
	if (c->xmoved[P] || c->xmoved[Q])
		od = -1; /* moved across blocks: no original distance along this path; the full table */
	int l = pair_latency(c, p, y, what, sizeof what);
	if (l > 0) {
		int req = od >= 0 && od < l ? od : l;
		if (dt < req)
			violation(c, q, "%s: %d cycles apart, needs %d (table %d, original %d)", what, dt, req, l, od);
	}
	int cap = barrier_cap(p);
	if (cap && after_barrier(y)) {
		int req = od >= 0 && od < cap ? od : cap;
		if (dt < req)
			violation(c, q, "%s at 0x%04x -> %s at 0x%04x: %d cycles < %d (a barrier or fence before a memory or "
					"variable-latency instruction; original %d)",
				  p->opcode, 16 * w->p, y->opcode, 16 * q, dt, req, od);
	}
	uint8_t hit = sbs(c->ct[w->p]) & (uint8_t)(c->ct[q].wait | c->depbar[Q]);
	if (hit) {
		int req = od >= 0 && od < 2 ? od : 2;
		if (dt < req)
			violation(c, q, "set-to-wait on SB%d (%s -> %s): %d cycles, needs %d", low_bit(hit), p->opcode, y->opcode, dt,
				  req);
	}
}

/* base: original cycles from the producer to the start of block b (ignored for its own block) */
static void walk_block(walkctx *w, uint32_t b, int dt, int base, int depth)
{
	ck *c = w->c;
	uint32_t P = c->map[w->p];
	bool own = depth == 0;
	uint32_t q = own ? w->p + 1 : c->tbfirst[b];
	if (own)
		dt = c->ct[w->p].stall;
	for (; q <= c->tblast[b] && dt < CK_LIMIT; q++) {
		uint32_t Q = c->map[q];
		int od = own ? (Q > P ? c->ot[Q] - c->ot[P] : -1) : base + c->ot[Q];
		visit(w, q, dt, od);
		dt += c->ct[q].stall;
	}
	if (dt >= CK_LIMIT || depth >= CK_MAX_BLOCKS)
		return;
	int next = own ? w->btotal[b] - c->ot[P] : base + w->btotal[b];
	for (int s = 0; s < 2; s++)
		if (c->bsucc[b][s] >= 0)
			walk_block(w, (uint32_t)c->bsucc[b][s], dt, next, depth + 1);
}

static void check_latencies(ck *c)
{
	int32_t *bt = calloc(c->nb ? c->nb : 1, sizeof *bt);
	if (!bt) {
		violation(c, 0, "out of memory for the latency walk");
		return;
	}
	for (size_t b = 0; b < c->nb; b++)
		for (uint32_t i = c->bfirst[b]; i <= c->blast[b]; i++)
			bt[b] += c->in[i].ctrl.stall;
	for (uint32_t p = 0; p < c->n; p++) {
		walkctx w = {c, p, bt};
		walk_block(&w, c->tblock[p], 0, 0, 0);
	}
	free(bt);
}

/* Does a wait between tuned slots (from, to] cover SB k for a producer at `from`?  For a
 * DEPBAR.LE SBk, N, at least N later setters of k must lie between. */
static bool waits_between(const ck *c, uint32_t from, uint32_t to, int k, uint32_t *at)
{
	int setters = 0;
	for (uint32_t q = from + 1; q <= to && q < c->n; q++) {
		uint32_t Q = c->map[q];
		if ((c->ct[q].wait >> k & 1) || ((c->depbar[Q] >> k & 1) && setters >= c->depcnt[Q])) {
			*at = q;
			return true;
		}
		if (sbs(c->ct[q]) >> k & 1)
			setters++;
	}
	return false;
}

/* The same question on the original order and fields. */
static bool waits_between_orig(const ck *c, uint32_t from, uint32_t to, int k, uint32_t *at)
{
	int setters = 0;
	for (uint32_t q = from + 1; q <= to && q < c->n; q++) {
		if ((c->in[q].ctrl.wait >> k & 1) || ((c->depbar[q] >> k & 1) && setters >= c->depcnt[q])) {
			*at = q;
			return true;
		}
		if (sbs(c->in[q].ctrl) >> k & 1)
			setters++;
	}
	return false;
}

/* How the original protects hazard P -> C (original indices, same block): the setter, the SB and
 * the waiting instruction. */
static bool protection(const ck *c, uint32_t P, uint32_t C, bool war, uint32_t *setter, int *sb, uint32_t *waiter)
{
	const st_sass_insn *p = &c->in[P];
	int own[2] = {-1, -1};
	if (war && p->ctrl.rbar != ST_SB_NONE)
		own[0] = p->ctrl.rbar;
	if (p->ctrl.wbar != ST_SB_NONE)
		own[own[0] < 0 ? 0 : 1] = p->ctrl.wbar;
	uint32_t best = UINT32_MAX, at;
	for (int t = 0; t < 2; t++)
		if (own[t] >= 0 && waits_between_orig(c, P, C, own[t], &at) && at < best) {
			best = at;
			*sb = own[t];
			*setter = P;
		}
	if (best == UINT32_MAX && own[0] < 0) {
		/* unclaimed: a later variable-latency producer's SB, waited on before C */
		for (uint32_t q = P + 1; q < C; q++) {
			const st_sass_insn *y = &c->in[q];
			if (!varlat(y) || y->ctrl.wbar == ST_SB_NONE)
				continue;
			if (waits_between_orig(c, q, C, y->ctrl.wbar, &at) && at < best) {
				best = at;
				*sb = y->ctrl.wbar;
				*setter = q;
			}
		}
	}
	*waiter = best;
	return best != UINT32_MAX;
}

/* kind 0: q reads or overwrites what p writes; kind 1: q only overwrites what p reads */
static bool conflicts(const st_sass_insn *p, const st_sass_insn *q, int kind)
{
	bool raw = false, war = false;
	for (unsigned d = 0; d < p->ndefs; d++) {
		if (p->defs[d].file == ST_RF_B)
			continue;
		for (unsigned u = 0; u < q->nuses; u++)
			raw = raw || ck_regs_meet(&p->defs[d], &q->uses[u]);
		for (unsigned e = 0; e < q->ndefs; e++)
			raw = raw || ck_regs_meet(&p->defs[d], &q->defs[e]);
	}
	for (unsigned u = 0; u < p->nuses; u++)
		for (unsigned e = 0; e < q->ndefs; e++)
			war = war || (p->uses[u].file != ST_RF_B && ck_regs_meet(&p->uses[u], &q->defs[e]));
	return kind == 0 ? raw : war && !raw;
}

/* The SB that protects in the tuned kernel what SB k of setter S (original index) protected: k,
 * or the SB the field that set k now sets (check_sb judges that re-assignment).  raw: the result
 * (only the write SB protects it); otherwise the sources (either field). */
static int tuned_sb(const ck *c, uint32_t S, int k, bool raw)
{
	st_ctrl o = c->in[S].ctrl, t = c->ct[c->inv[S]];
	if (raw)
		return o.wbar == k ? (t.wbar < 6 ? t.wbar : -1) : k;
	if ((o.wbar == k && t.wbar == k) || (o.rbar == k && t.rbar == k))
		return k;
	if (o.rbar == k && t.rbar != k)
		return t.rbar < 6 ? t.rbar : -1;
	if (o.wbar == k && t.wbar != k)
		return t.wbar < 6 ? t.wbar : -1;
	return k;
}

/* Every variable-latency result (and late-read source) is still covered: the SB that protected its
 * first consumer in the original is still set, and no instruction that depends on it now issues
 * before the first wait on that SB (instructions unprotected in the original too are not judged). */
static void check_coverage(ck *c)
{
	for (uint32_t P = 0; P < c->n; P++) {
		const st_sass_insn *p = &c->in[P];
		if (!varlat(p))
			continue;
		for (int kind = 0; kind < 2; kind++) {
			uint32_t C1 = UINT32_MAX;
			for (uint32_t q = P + 1; q < c->n && c->in[q].block == p->block; q++)
				if (conflicts(p, &c->in[q], kind)) {
					C1 = q;
					break;
				}
			uint32_t setter, worig;
			int k;
			if (C1 == UINT32_MAX || !protection(c, P, C1, kind == 1, &setter, &k, &worig))
				continue;
			uint32_t tp = c->inv[P], ts = c->inv[setter], last = c->blast[c->in[tp].block];
			k = tuned_sb(c, setter, k, kind == 0);
			if (k < 0 || !(sbs(c->ct[ts]) >> k & 1)) {
				violation(c, ts, "%s no longer sets SB%d, which protects what %s (0x%x) produces", c->in[setter].opcode,
					  k, p->opcode, 16 * tp);
				continue;
			}
			if (ts < tp) {
				violation(c, ts, "%s (SB%d) now issues before %s (0x%x), whose result it protected", c->in[setter].opcode,
					  k, p->opcode, 16 * tp);
				continue;
			}
			uint32_t tw = last + 1, at;
			if (waits_between(c, ts, last, k, &at))
				tw = at;
			for (uint32_t q = tp + 1; q < tw && q <= last; q++) {
				uint32_t Q = c->map[q];
				if (Q <= P || Q == setter || Q < worig || !conflicts(p, &c->in[Q], kind))
					continue; /* unprotected in the original too, or ordered elsewhere */
				violation(c, q, "%s %s what %s (0x%x) produces before the wait on SB%d%s", c->in[Q].opcode,
					  kind ? "overwrites a source of" : "reads or writes", p->opcode, 16 * tp, k,
					  tw > last ? " (none left in the block)" : "");
			}
		}
	}
}

/* ---- later waits (docs/sched.md "Later waits", the checker's own reading) ---------------------- */
/* Does a path of the TUNED kernel from tuned slot tp (exclusive) reach tuned slot tq with no
 * tuned wait on SB k on the way (tq's own included)?  Forward walk through the CFG. */
static bool reaches_unwaited(const ck *c, uint32_t tp, int k, uint32_t tq, uint8_t *seen)
{
	memset(seen, 0, c->nb);
	uint32_t stack[256], sp = 0, b = c->in[tp].block;
	for (uint32_t i = tp + 1; i <= c->blast[b]; i++) {
		if (c->ct[i].wait >> k & 1)
			return false;
		if (i == tq)
			return true;
	}
	for (int t = 0; t < 2; t++)
		if (c->bsucc[b][t] >= 0 && !seen[c->bsucc[b][t]])
			seen[c->bsucc[b][t]] = 1, stack[sp++] = (uint32_t)c->bsucc[b][t];
	while (sp) {
		b = stack[--sp];
		bool stop = false;
		for (uint32_t i = c->bfirst[b]; i <= c->blast[b] && !stop; i++) {
			stop = (c->ct[i].wait >> k & 1) != 0;
			if (!stop && i == tq)
				return true;
		}
		for (int t = 0; !stop && t < 2; t++) {
			int32_t s2 = c->bsucc[b][t];
			if (s2 >= 0 && !seen[s2]) {
				if (sp == sizeof stack / sizeof *stack)
					return true; /* too far to follow: assume it does (conservative) */
				seen[s2] = 1;
				stack[sp++] = (uint32_t)s2;
			}
		}
	}
	return false;
}

/* For P (original index) whose write or read SB was re-assigned to k: the tuned slot of the
 * earliest instruction after it in its block that waited on its original SB there in the original
 * (nothing before it waited for P: check_coverage judges those); 0 when P is not on k that way. */
static uint32_t reassigned_from(const ck *c, uint32_t P, int k)
{
	st_ctrl o = c->in[P].ctrl, t = c->ct[c->inv[P]];
	uint32_t tp = c->inv[P], best = UINT32_MAX, last = c->blast[c->in[P].block];
	for (int f = 0; f < 2; f++) {
		int was = f ? o.rbar : o.wbar, now = f ? t.rbar : t.wbar;
		if (now != k || was == k || was > 5)
			continue;
		uint32_t w = last + 1;
		for (uint32_t Q = P + 1; Q <= last; Q++)
			if ((c->in[Q].ctrl.wait >> was & 1) && c->inv[Q] > tp && c->inv[Q] < w)
				w = c->inv[Q];
		best = w < best ? w : best;
	}
	return best == UINT32_MAX ? 0 : best;
}

/* Why the insn at tuned slot q may not issue without a wait on SB k (NULL: it may): it is one the
 * SB may also order (memory, variable-latency, fixed, tensor, special), or shares a register
 * with a GMMA/tensor/special instruction, or it depends on a producer P whose SB k guards that
 * dependence (RAW/WAW: k is P's write SB, or P has none; WAR: k is P's read or write SB, or P has
 * neither) and some path from P reaches q in the tuned kernel with no wait on SB k. */
static const char *needs_wait(const ck *c, int k, uint32_t q, uint8_t *seen)
{
	uint32_t Q = c->map[q];
	const st_sass_insn *y = &c->in[Q];
	if (c->fixed[Q] || varlat(y) || is_special(y) || mem_bits(y, false) || mem_bits(y, true) || y->cls != ST_CLASS_ALU)
		return "is a fixed point, memory, variable-latency, tensor or special instruction";
	for (uint32_t P = 0; P < c->n; P++) {
		const st_sass_insn *p = &c->in[P];
		if (P == Q)
			continue;
		if (is_special(p) || p->cls == ST_CLASS_TENSOR) {
			if (conflicts(p, y, 0) || conflicts(p, y, 1))
				return "shares a register with a GMMA, tensor or special instruction";
			continue;
		}
		st_ctrl pt = c->ct[c->inv[P]]; /* its tuned SBs (check_sb judges a re-assigned one) */
		if (q < reassigned_from(c, P, k))
			continue; /* on k by re-assignment, and the original never waited for it before q */
		/* an unclaimed result (no write SB) is guarded through any SB a later producer of its queue
		 * sets; its sources too, unless it has a read SB: that one is released when they are read */
		bool no_wsb = varlat(p) && p->ctrl.wbar == ST_SB_NONE;
		bool no_sb = no_wsb && p->ctrl.rbar == ST_SB_NONE;
		bool raw = (pt.wbar == k || no_wsb) && conflicts(p, y, 0);
		bool war = (pt.rbar == k || pt.wbar == k || no_sb) && conflicts(p, y, 1);
		if ((raw || war) && reaches_unwaited(c, c->inv[P], k, q, seen))
			return raw ? "reads or writes what a producer on that SB writes, with no wait on the way"
				   : "overwrites a source of a producer on that SB, with no wait on the way";
	}
	return NULL;
}

/* Every original wait that its instruction X no longer carries is covered: by a wait on the same
 * SB earlier in X's block with no setter of it between (tuned order), or by the first later wait
 * on it in the block, with no instruction from X up to that one (of those after X originally)
 * needing it (needs_wait, judged on the tuned kernel).  A wait on a SB that a DEPBAR.LE counts
 * never moves. */
static void check_waits(ck *c)
{
	uint8_t *seen = malloc(c->nb ? c->nb : 1);
	for (uint32_t X = 0; seen && X < c->n; X++) {
		uint32_t x = c->inv[X], bf = c->bfirst[c->in[X].block], bl = c->blast[c->in[X].block];
		unsigned missing = c->in[X].ctrl.wait & ~c->ct[x].wait & 0x3fu;
		for (int k = 0; k < 6; k++) {
			if (!(missing >> k & 1))
				continue;
			if (c->counted >> k & 1) {
				violation(c, x, "%s no longer waits on SB%d, which a DEPBAR.LE counts", c->in[X].opcode, k);
				continue;
			}
			bool earlier = false;
			for (uint32_t q = x; q > bf && !earlier; q--) {
				if (c->ct[q - 1].wait >> k & 1)
					earlier = true;
				else if ((sbs(c->ct[q - 1]) >> k & 1) || varlat(&c->in[c->map[q - 1]]))
					break;
			}
			if (earlier)
				continue;
			uint32_t w = x + 1;
			while (w <= bl && !(c->ct[w].wait >> k & 1))
				w++;
			if (w > bl) {
				violation(c, x, "%s no longer waits on SB%d, and no later instruction of its block does", c->in[X].opcode, k);
				continue;
			}
			for (uint32_t q = x; q < w; q++) {
				uint32_t Q = c->map[q];
				const char *why = Q < X ? NULL : needs_wait(c, k, q, seen);
				if (why)
					violation(c, q, "%s issues before the wait on SB%d that %s (0x%x) had, now at 0x%x, and %s",
						  c->in[Q].opcode, k, c->in[X].opcode, 16 * x, 16 * w, why);
			}
		}
	}
	free(seen);
}

/* ---- scoreboard re-assignment (docs/sched.md "Scoreboard re-assignment", the checker's reading) -- */
/* SBs never re-assigned: named by a DEPBAR (counted or not), SB0 with async-copy groups. */
static uint8_t sbs_reserved(const ck *c)
{
	uint8_t r = c->counted;
	for (uint32_t i = 0; i < c->n; i++) {
		const st_sass_insn *x = &c->in[i];
		r |= c->depbar[i];
		if (op_is(x->opcode, "LDGSTS") || op_is(x->opcode, "LDGDEPBAR") || strstr(x->opcode, "ARRIVES") ||
		    strstr(x->operands, "ARRIVES"))
			r |= 1;
	}
	return r;
}

/* One changed field of the instruction at tuned slot t: SB o -> SB nw.  Legal when the instruction
 * is a plain variable-latency producer, neither SB is reserved, a wait on nw follows it in its
 * block, and nothing from the earliest (tuned) instruction after it that waited on o in the
 * original up to that wait needs it (needs_wait on nw, on the tuned kernel; before that point
 * check_coverage judges its consumers; one that issued before the first of those waits in the
 * original too is not asked, as in check_waits).  Other waits on nw may wait for it too: slower, not wrong
 * (nw is never counted).  Waits on o added later (swaps, other re-assignments) do not count. */
static void check_sb_field(ck *c, uint32_t t, int o, int nw, uint8_t reserved, uint8_t *seen)
{
	uint32_t P = c->map[t], last = c->blast[c->in[t].block];
	const st_sass_insn *p = &c->in[P];
	if (!varlat(p) || c->fixed[P] || is_special(p) || p->cls == ST_CLASS_TENSOR || op_is(p->opcode, "LDGSTS")) {
		violation(c, t, "%s: scoreboard SB%d -> SB%d on an instruction that is not a plain variable-latency producer",
			  p->opcode, o, nw);
		return;
	}
	if ((reserved >> o & 1) || (reserved >> nw & 1))
		violation(c, t, "%s: scoreboard SB%d -> SB%d, but a DEPBAR names SB%d (or it counts LDGSTS groups)", p->opcode,
			  o, nw, reserved >> o & 1 ? o : nw);
	uint32_t wn = last + 1, wo = last + 1;
	for (uint32_t q = last; q > t; q--)
		if (c->ct[q].wait >> nw & 1)
			wn = q;
	for (uint32_t Q = P + 1; Q <= c->blast[p->block]; Q++) /* the original waits on o after it */
		if ((c->in[Q].ctrl.wait >> o & 1) && c->inv[Q] > t && c->inv[Q] < wo)
			wo = c->inv[Q];
	if (wn > last) {
		violation(c, t, "%s: scoreboard SB%d -> SB%d, and no later instruction of its block waits on SB%d", p->opcode, o,
			  nw, nw);
		return;
	}
	uint32_t W0 = P + 1; /* the first original wait on o after it (original order) */
	while (W0 <= c->blast[p->block] && !(c->in[W0].ctrl.wait >> o & 1))
		W0++;
	for (uint32_t q = wo; q < wn; q++) {
		/* one that issued before W0 in the original never waited for it there either (as in
		 * check_waits; a pair the tuned order reverses is judged by the order rules) */
		const char *why = c->map[q] < W0 ? NULL : needs_wait(c, nw, q, seen);
		if (why)
			violation(c, q, "%s issues before the wait on SB%d (at 0x%x) of %s (0x%x, was SB%d) and %s",
				  c->in[c->map[q]].opcode, nw, 16 * wn, p->opcode, 16 * t, o, why);
	}
}

static void check_sb(ck *c)
{
	uint8_t reserved = sbs_reserved(c), *seen = malloc(c->nb ? c->nb : 1);
	for (uint32_t t = 0; seen && t < c->n; t++) {
		st_ctrl o = c->in[c->map[t]].ctrl, x = c->ct[t];
		if (x.wbar != o.wbar && x.wbar < 6 && o.wbar < 6)
			check_sb_field(c, t, o.wbar, x.wbar, reserved, seen);
		if (x.rbar != o.rbar && x.rbar < 6 && o.rbar < 6)
			check_sb_field(c, t, o.rbar, x.rbar, reserved, seen);
	}
	free(seen);
}

/* Whether ptxas's own code shows that `opcode`'s reuse bit f is the operand in slot f: some
 * instruction of the kernel with that opcode has the bit, and every reuse bit the opcode carries
 * matches the `.reuse` marks nvdisasm prints (HADD2.F32 puts Rb's reuse in bit c, for one). */
static bool reuse_proven(const ck *c, const char *opcode, unsigned f)
{
	bool seen = false;
	for (uint32_t i = 0; i < c->n; i++) {
		const st_sass_insn *x = &c->oin[i];
		if (strcmp(x->opcode, opcode))
			continue;
		unsigned bits = st_ctrl_reuse_bits(x->ctrl);
		int marks = st_sass_reuse_marks(x);
		if (marks < 0 || (unsigned)marks != bits)
			return false;
		seen |= (bits >> f & 1) != 0;
	}
	return seen;
}

static void check_reuse(ck *c)
{
	for (uint32_t j = 0; j < c->n; j++) {
		st_ctrl t = c->ct[j];
		if (!t.reuse || !(t.yield && t.stall >= 1 && t.stall <= 11))
			continue;
		uint32_t i = c->map[j];
		for (unsigned f = 0; f < 3; f++) {
			if (!(t.reuse >> f & 1))
				continue;
			bool same_next = i + 1 < c->n && j + 1 < c->n && c->map[j + 1] == i + 1;
			const st_sass_insn *o = &c->in[i];
			bool orig = o->ctrl.yield && o->ctrl.stall >= 1 && o->ctrl.stall <= 11 && (o->ctrl.reuse >> f & 1);
			if (orig && same_next && !c->renamed[i] && !c->renamed[i + 1])
				continue;
			bool ok = false;
			if (j + 1 < c->n && c->in[c->map[j + 1]].block == o->block) {
				const st_sass_insn *y = &c->in[c->map[j + 1]];
				const st_sass_reg *a = NULL, *b = NULL;
				int na = 0, nb = 0;
				for (unsigned u = 0; u < o->nuses; u++)
					if (o->uses[u].slot == ST_SLOT_A + (int)f)
						a = &o->uses[u], na++;
				for (unsigned u = 0; u < y->nuses; u++)
					if (y->uses[u].slot == ST_SLOT_A + (int)f)
						b = &y->uses[u], nb++;
				ok = na == 1 && nb == 1 && a->file == ST_RF_R && b->file == ST_RF_R && a->index == b->index &&
				     a->count == b->count && !strchr(o->operands, '[') && !strchr(y->operands, '[') &&
				     o->cls == ST_CLASS_ALU && y->cls == ST_CLASS_ALU && !varlat(o) && !varlat(y);
				for (unsigned d = 0; ok && d < o->ndefs; d++)
					ok = !ck_regs_meet(&o->defs[d], a);
				const char *unproven = !ok ? NULL
						       : !reuse_proven(c, o->opcode, f) ? o->opcode
						       : !reuse_proven(c, y->opcode, f) ? y->opcode : NULL;
				if (unproven) {
					violation(c, j, "%s: reuse flag %c added where ptxas's code does not show which operand that bit names on %s",
						  o->opcode, 'a' + f, unproven);
					continue;
				}
			}
			if (!ok)
				violation(c, j, "%s: reuse flag %c is not valid here (the next instruction does not read that register in that slot)",
					  o->opcode, 'a' + f);
		}
	}
}

/* Registers (renames included): every read reached by the same definitions as in the original,
 * every register live at a block end holding the same ones (check_rename.c). */
static void dataflow_bad(void *ctx, uint32_t slot, const char *msg) { violation(ctx, slot, "%s", msg); }

static void check_dataflow(ck *c)
{
	ckr_blocks bl = {c->nb, c->bfirst, c->blast, (const int32_t(*)[2])c->bsucc};
	ckr_dataflow(c->oin, c->in, c->n, c->map, &bl, dataflow_bad, c);
}

/* ---- driver --------------------------------------------------------------------------------------- */
static void ck_free(ck *c)
{
	free(c->map);
	free(c->inv);
	free(c->ct);
	free(c->ot);
	free(c->bfirst);
	free(c->blast);
	free(c->bsucc);
	free(c->fixed);
	free(c->refslot);
	free(c->seg);
	free(c->depbar);
	free(c->depcnt);
	free(c->xmoved);
	free(c->xleader);
	free(c->tblock);
	free(c->tbfirst);
	free(c->tblast);
	free(c->tin);
	free(c->tregs);
	free(c->renamed);
}

st_status st_check_kernel(const st_cubin *orig, const st_cubin *tuned, const char *name, const st_sass_opts *o,
			  st_check_report_fn report, void *ctx, size_t *violations, st_error *err)
{
	if (violations)
		*violations = 0;
	size_t ko = st_cubin_find_kernel(orig, name), kt = st_cubin_find_kernel(tuned, name);
	if (ko == ST_CUBIN_NONE || kt == ST_CUBIN_NONE)
		return st_error_set(err, ST_ENOTFOUND, "no kernel named '%s' in %s", name,
				    ko == ST_CUBIN_NONE ? st_cubin_name(orig) : st_cubin_name(tuned));
	size_t tsize;
	const uint8_t *tcode = st_cubin_code(tuned, kt, &tsize);
	st_sass_kernel *k = NULL;
	st_status rc = st_sass_decode(orig, name, o, &k, err);
	if (rc)
		return rc;
	ck c = {0};
	c.k = k;
	c.in = c.oin = st_sass_insns(k);
	c.n = st_sass_count(k);
	c.sm = st_sass_sm(k);
	c.name = st_sass_name(k);
	c.o = o;
	c.report = report;
	c.ctx = ctx;
	if (tsize == 16 * c.n && st_cubin_insertable(tuned, kt) != st_cubin_insertable(orig, ko)) {
		ck_pipe(&c, orig, ko, tuned, kt); /* padding used: a pipe rewrite, judged alone */
		if (violations)
			*violations = c.bad;
		st_sass_free(k);
		return c.bad ? st_error_set(err, ST_EILLEGAL, "%s: %zu constraint%s broken", name, c.bad, c.bad == 1 ? "" : "s")
			     : ST_OK;
	}
	if (tsize != 16 * c.n) {
		st_error_set(err, ST_EILLEGAL, "%s has %zu instructions in the original and %zu in %s", name, c.n,
			     tsize / 16, st_cubin_name(tuned));
		if (report)
			report(ctx, name, 0, err->msg);
		if (violations)
			*violations = 1;
		st_sass_free(k);
		return ST_EILLEGAL;
	}
	size_t n1 = c.n ? c.n : 1;
	c.nb = st_sass_block_count(k);
	c.map = calloc(n1, sizeof *c.map);
	c.inv = calloc(n1, sizeof *c.inv);
	c.ct = calloc(n1, sizeof *c.ct);
	c.ot = calloc(n1, sizeof *c.ot);
	c.fixed = calloc(n1, sizeof *c.fixed);
	c.refslot = calloc(n1, sizeof *c.refslot);
	c.seg = calloc(n1, sizeof *c.seg);
	c.depbar = calloc(n1, sizeof *c.depbar);
	c.depcnt = calloc(n1, sizeof *c.depcnt);
	c.bfirst = calloc(c.nb ? c.nb : 1, sizeof *c.bfirst);
	c.blast = calloc(c.nb ? c.nb : 1, sizeof *c.blast);
	c.bsucc = calloc(c.nb ? c.nb : 1, sizeof *c.bsucc);
	c.xmoved = calloc(n1, 1);
	c.xleader = calloc(n1, 1);
	c.tblock = calloc(n1, sizeof *c.tblock);
	c.tbfirst = calloc(c.nb ? c.nb : 1, sizeof *c.tbfirst);
	c.tblast = calloc(c.nb ? c.nb : 1, sizeof *c.tblast);
	if (!c.map || !c.inv || !c.ct || !c.ot || !c.fixed || !c.refslot || !c.seg || !c.depbar || !c.depcnt ||
	    !c.bfirst || !c.blast || !c.bsucc || !c.xmoved || !c.xleader || !c.tblock || !c.tbfirst || !c.tblast) {
		ck_free(&c);
		st_sass_free(k);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	for (size_t r = 0; r < st_cubin_ref_count(orig, ko); r++) {
		const st_code_ref *ref = st_cubin_ref(orig, ko, r);
		if (ref->slot >= 0 && (size_t)ref->slot < c.n)
			c.refslot[ref->slot] = true;
	}
	for (size_t b = 0; b < c.nb; b++) {
		uint32_t first, count;
		st_sass_block(k, b, &first, &count, c.bsucc[b]);
		c.bfirst[b] = c.tbfirst[b] = first;
		c.blast[b] = c.tblast[b] = first + count - 1;
		int32_t t = 0;
		for (uint32_t i = first; i < first + count; i++) {
			c.ot[i] = t;
			t += c.in[i].ctrl.stall;
		}
	}
	uint32_t seg = 0;
	for (uint32_t i = 0; i < c.n; i++) {
		const st_sass_insn *x = &c.in[i];
		c.fixed[i] = is_fixed(&c, i);
		c.tblock[i] = x->block;
		if (c.fixed[i] || (i && x->block != c.in[i - 1].block))
			seg++;
		c.seg[i] = seg;
		if (c.fixed[i])
			seg++; /* a fixed point is a segment of its own */
		if (op_is(x->opcode, "DEPBAR")) {
			const char *s = x->operands, *sb = strstr(s, "SB");
			if (strstr(x->opcode, ".ALL") || strstr(s, "UR")) {
				c.depbar[i] = 0x3f;
				c.counted |= strstr(s, "UR") ? 0x3f : 0;
			}
			if (sb && sb[2] >= '0' && sb[2] <= '5') {
				int kk = sb[2] - '0';
				const char *comma = strchr(sb, ',');
				c.depbar[i] |= (uint8_t)(1u << kk);
				c.depcnt[i] = comma ? (int)strtol(comma + 1, NULL, 0) : 0;
				if (c.depcnt[i] > 0)
					c.counted |= (uint8_t)(1u << kk);
			}
			const char *br = strchr(s, '{');
			for (const char *q = br ? br + 1 : NULL; q && *q && *q != '}'; q++)
				if (*q >= '0' && *q <= '5')
					c.depbar[i] |= (uint8_t)(1u << (*q - '0'));
		}
	}
	bool mapped = false;
	rc = build_map(&c, tcode, &mapped, err);
	if (!rc && mapped) {
		for (uint32_t j = 0; j < c.n; j++)
			c.ct[j] = st_ctrl_decode(tcode + 16 * j);
		check_codes_and_refs(&c, orig, ko, tuned, kt);
		ck_xblock(&c);
		check_places(&c);
		check_orders(&c);
		check_latencies(&c);
		check_coverage(&c);
		check_waits(&c);
		check_sb(&c);
		check_reuse(&c);
		check_dataflow(&c);
		ck_regcount(&c, orig, ko, tuned, kt);
	}
	if (violations)
		*violations = c.bad;
	if (!rc && c.bad)
		rc = st_error_set(err, ST_EILLEGAL, "%s: %zu constraint%s broken", name, c.bad, c.bad == 1 ? "" : "s");
	ck_free(&c);
	st_sass_free(k);
	return rc;
}
