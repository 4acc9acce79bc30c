/* The static cost model: an issue-timing simulation of a st_sched state on one SM
 * sub-partition (SMSP).  Model, numbers and limits: docs/tune.md, "The cost model".
 *
 * Each basic block is simulated on its own.  W warps run the block's instructions in the
 * current slot order, CM_PASSES times in a row each; one instruction issues per cycle per
 * SMSP.  A warp's next instruction issues when
 *   - the stall of its previous instruction has passed (at least `yield_cycles` after an
 *     end-of-group instruction, yield bit 0),
 *   - every scoreboard it waits on has drained (each SB is a counter of pending completions;
 *     DEPBAR.LE SBk, N waits until at most N remain; WARPGROUP.DEPBAR.LE gsb0, N likewise on
 *     closed HGMMA groups),
 *   - its pipe (ALU, FMA, IMAD, XU, FP64, uniform, branch, MIO queue, MMA) is free,
 *   - for BAR.SYNC: every warp of its CTA on this SMSP has arrived.
 * The scheduler keeps issuing from the same warp while it can issue at once and its previous
 * instruction did not end a group (yield = 1); otherwise the warp that can issue first, round
 * robin on ties; a switch to another warp costs `switch_cycles` of dispatch.  Variable-latency
 * producers complete after a fixed estimate per class and memory space, behind a shared
 * bandwidth resource for global and shared memory and the tensor pipe (asynchronous: they
 * delay completion, not issue).  A block's cost is the steady-state cycles of one pass
 * (averaged over warps and CM_PHASES start offsets), times trip^depth for blocks in loops;
 * a loop's next pass keeps its scoreboards, another block's next pass is a new warp.  The
 * kernel's cost is the sum over blocks.  Results are memoised per block by a hash of its
 * order and control fields, so a move re-simulates only the block it touched. */
#include "sasstune/sched.h"
#include "sasstune/search.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_NONE, P_ALU, P_FMA, P_IMAD, P_XU, P_FP64, P_UNI, P_CBU, P_MIO, P_MMA, P_COUNT };
enum { R_NONE, R_TENSOR, R_SMEM, R_GMEM, R_COUNT };
enum { K_PLAIN, K_DEPBAR, K_BAR, K_GMMA, K_GDEPBAR, K_LDGSTS, K_LDGDEPBAR };

#define CM_SBQ 24       /* pending completions kept per scoreboard */
#define CM_MAXW 32      /* warps simulated at most */
#define CM_BAR_LAT 20   /* barrier release after the last arrival */
#define CM_GMEM_BPC 8.0 /* global bytes per cycle per SMSP (between HBM and L2 rates) */
#define CM_SMEM_BPC 32  /* shared-memory bytes per cycle per SMSP (128 B/clk per SM) */
#define CM_INF INT64_MAX
#define CM_PASSES 3     /* passes simulated over a block, per warp */
#define CM_ITERS CM_PASSES
#define CM_PHASES 3     /* warp phase patterns averaged */

typedef struct cm_info {
	uint8_t pipe, occ, kind, res;
	uint16_t res_occ; /* cycles on the asynchronous resource */
	uint16_t wlat;    /* completion after issue (or after the resource) */
	uint8_t rlat;     /* read scoreboard release after issue */
	uint8_t dep_sb, dep_cnt, dep_list, gsb_close;
} cm_info;

typedef struct cm_memo { uint64_t key; double cycles; } cm_memo;

struct st_costmodel {
	const st_sass_kernel *k;
	size_t n, nb;
	cm_info *info;           /* per original index */
	uint32_t *bfirst, *bcount;
	uint8_t *depth;          /* loop nesting per block */
	uint32_t *slot_block;    /* block of each slot */
	unsigned warps, cta_warps, trip, yield_cycles, switch_cycles;
	double orig;             /* weighted cycles of the original */
	/* scratch */
	uint32_t *seq_idx;
	st_ctrl *seq_ctrl;
	/* memo: open addressing */
	cm_memo *memo;
	size_t memo_cap, memo_n;
};

typedef struct cm_warp {
	uint32_t pc;
	int64_t ready;
	int64_t sbq[6][CM_SBQ];
	uint8_t sbn[6];
	int64_t gq[CM_SBQ];
	uint8_t gn;
	int64_t gmma_last, ldgsts_last;
	int64_t fin[CM_ITERS];
	uint8_t at_bar, done, sticky;
	int64_t bar_arrive;
} cm_warp;

/* ---- static classification ------------------------------------------------------------------- */
static bool prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static bool has_mod(const char *op, const char *mod)
{
	size_t n = strlen(mod);
	for (const char *d = strchr(op, '.'); d; d = strchr(d + 1, '.'))
		if (!strncmp(d + 1, mod, n) && (d[1 + n] == '.' || !d[1 + n]))
			return true;
	return false;
}

/* Bytes per thread a memory instruction moves, from its width modifier. */
static unsigned width_bytes(const char *op)
{
	if (has_mod(op, "128"))
		return 16;
	if (has_mod(op, "64"))
		return 8;
	if (has_mod(op, "U16") || has_mod(op, "S16"))
		return 2;
	if (has_mod(op, "U8") || has_mod(op, "S8"))
		return 1;
	return 4;
}

static unsigned sat16(double v) { return v < 1 ? 1 : v > 65535 ? 65535 : (unsigned)v; }

static void classify(const st_sass_insn *x, cm_info *f)
{
	const char *op = x->opcode;
	memset(f, 0, sizeof *f);
	f->pipe = P_ALU;
	f->occ = 2;
	f->wlat = 2;
	f->rlat = 6;
	f->dep_sb = 0xff;
	if (prefix(op, "NOP")) {
		f->pipe = P_NONE;
		f->occ = 0;
	} else if (prefix(op, "HGMMA") || prefix(op, "IGMMA") || prefix(op, "QGMMA") || prefix(op, "BGMMA")) {
		/* m64nNkK per warpgroup: 64*N*K FMAs at 2048 per cycle per SM, a quarter per SMSP */
		unsigned m = 64, nn = 64, kk = 16;
		const char *d = strchr(op, '.');
		if (d && sscanf(d + 1, "%ux%ux%u", &m, &nn, &kk) != 3)
			m = 64, nn = 64, kk = 16;
		f->kind = K_GMMA;
		f->pipe = P_CBU;
		f->occ = 1;
		f->res = R_TENSOR;
		f->res_occ = (uint16_t)sat16((double)m * nn * kk / 2048.0);
		f->wlat = 16;
		f->gsb_close = x->operands && strstr(x->operands, "gsb0") ? 1 : 0;
	} else if (prefix(op, "HMMA") || prefix(op, "IMMA") || prefix(op, "DMMA")) {
		f->pipe = P_MMA;
		f->occ = 8;
	} else if (prefix(op, "WARPGROUP.DEPBAR")) {
		f->kind = K_GDEPBAR;
		f->pipe = P_CBU;
		f->occ = 1;
		const char *c = x->operands ? strchr(x->operands, ',') : NULL;
		f->dep_cnt = c ? (uint8_t)strtoul(c + 1, NULL, 0) : 0;
	} else if (prefix(op, "LDGDEPBAR")) {
		f->kind = K_LDGDEPBAR;
		f->pipe = P_CBU;
		f->occ = 1;
	} else if (prefix(op, "DEPBAR")) {
		f->kind = K_DEPBAR;
		f->pipe = P_CBU;
		f->occ = 1;
		const char *s = x->operands ? strstr(x->operands, "SB") : NULL;
		if (s && s[2] >= '0' && s[2] <= '5') {
			f->dep_sb = (uint8_t)(s[2] - '0');
			const char *c = strchr(s, ',');
			f->dep_cnt = c ? (uint8_t)strtoul(c + 1, NULL, 0) : 0;
		}
		const char *l = x->operands ? strchr(x->operands, '{') : NULL;
		for (; l && *l && *l != '}'; l++)
			if (*l >= '0' && *l <= '5')
				f->dep_list |= (uint8_t)(1u << (*l - '0'));
		if (!has_mod(op, "LE") && f->dep_sb != 0xff) /* DEPBAR SBk: drain it */
			f->dep_list |= (uint8_t)(1u << f->dep_sb), f->dep_sb = 0xff;
	} else if (prefix(op, "BAR.SYNC") || prefix(op, "BAR.RED") || !strcmp(op, "BAR")) {
		f->kind = K_BAR;
		f->pipe = P_CBU;
		f->occ = 1;
	} else if (x->cls == ST_CLASS_CONTROL || x->cls == ST_CLASS_SYNC || (x->flags & ST_F_BRANCH)) {
		f->pipe = P_CBU;
		f->occ = 1;
	} else if (x->cls == ST_CLASS_MEMORY) {
		unsigned w = width_bytes(op), bytes = 32 * w;
		bool ld = (x->flags & ST_F_LOAD) != 0, atom = (x->flags & ST_F_ATOMIC) != 0;
		f->pipe = P_MIO;
		f->occ = (uint8_t)(w >= 16 ? 2 : 1);
		f->rlat = (x->flags & ST_F_STORE) ? 12 : 8;
		if (prefix(op, "LDSM")) {
			unsigned mats = has_mod(op, "4") ? 4 : has_mod(op, "2") ? 2 : 1;
			bytes = 128 * mats;
			f->occ = (uint8_t)(mats >= 4 ? 2 : 1);
		}
		if (prefix(op, "LDGSTS")) {
			f->kind = K_LDGSTS;
			f->res = R_GMEM;
			f->res_occ = (uint16_t)sat16(bytes / CM_GMEM_BPC);
			f->wlat = 350;
		} else if (x->space == ST_SPACE_SHARED) {
			f->res = R_SMEM;
			f->res_occ = (uint16_t)sat16(bytes / (double)CM_SMEM_BPC);
			f->wlat = atom ? 60 : 23;
		} else if (x->space == ST_SPACE_CONST) {
			f->wlat = 24;
		} else if (x->space == ST_SPACE_LOCAL) {
			f->res = R_GMEM;
			f->res_occ = (uint16_t)sat16(bytes / (4 * CM_GMEM_BPC));
			f->wlat = 40;
		} else {
			f->res = R_GMEM;
			f->res_occ = (uint16_t)sat16(bytes / CM_GMEM_BPC);
			f->wlat = atom ? 450 : ld ? 350 : 2;
		}
	} else if (x->cls == ST_CLASS_VARLAT || (x->flags & ST_F_VARLAT)) {
		if (prefix(op, "MUFU")) {
			f->pipe = P_XU, f->occ = 8, f->wlat = 18;
		} else if (prefix(op, "S2UR")) {
			f->pipe = P_UNI, f->occ = 1, f->wlat = 12;
		} else if (prefix(op, "S2R") || prefix(op, "SHFL") || prefix(op, "VOTE") || prefix(op, "MATCH")) {
			f->pipe = P_MIO, f->occ = 1, f->wlat = prefix(op, "SHFL") ? 24 : 20;
		} else if (prefix(op, "D")) {
			f->pipe = P_FP64, f->occ = 2, f->wlat = 10;
		} else if (prefix(op, "F2") || prefix(op, "I2") || prefix(op, "FRND")) {
			f->pipe = P_XU, f->occ = 8, f->wlat = 14;
		} else {
			f->pipe = P_MIO, f->occ = 1, f->wlat = 20;
		}
	} else if (op[0] == 'U' || prefix(op, "R2UR")) {
		f->pipe = P_UNI;
		f->occ = 1;
	} else if (prefix(op, "IMAD") || prefix(op, "IMUL")) {
		f->pipe = P_IMAD;
		f->occ = 2;
	} else if (prefix(op, "FFMA") || prefix(op, "FADD") || prefix(op, "FMUL") || prefix(op, "HFMA2") ||
		   prefix(op, "HADD2") || prefix(op, "HMUL2")) {
		f->pipe = P_FMA;
		f->occ = 1;
	} else if (prefix(op, "DFMA") || prefix(op, "DADD") || prefix(op, "DMUL")) {
		f->pipe = P_FP64;
		f->occ = 2;
	} else if (prefix(op, "CS2R") || prefix(op, "MOV")) {
		f->occ = 1;
	}
}

/* ---- simulation --------------------------------------------------------------------------------- */
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static void q_push(int64_t *q, uint8_t *n, int64_t t_now, int64_t done)
{
	uint8_t k = 0;
	for (uint8_t i = 0; i < *n; i++) /* drop completed entries */
		if (q[i] > t_now)
			q[k++] = q[i];
	if (k == CM_SBQ) { /* full: forget the earliest */
		uint8_t lo = 0;
		for (uint8_t i = 1; i < k; i++)
			if (q[i] < q[lo])
				lo = i;
		q[lo] = q[--k];
	}
	q[k++] = done;
	*n = k;
}

static int64_t q_all(const int64_t *q, uint8_t n)
{
	int64_t t = 0;
	for (uint8_t i = 0; i < n; i++)
		t = max64(t, q[i]);
	return t;
}

/* Earliest time at which at most `left` entries are still pending. */
static int64_t q_le(const int64_t *q, uint8_t n, unsigned left)
{
	if (n <= left)
		return 0;
	int64_t v[CM_SBQ];
	memcpy(v, q, n * sizeof *v);
	for (uint8_t i = 1; i < n; i++) /* insertion sort, n is small */
		for (uint8_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n - left - 1];
}

typedef struct cm_sim {
	const st_costmodel *m;
	const uint32_t *idx;
	const st_ctrl *ctrl;
	uint32_t len, total; /* instructions per iteration, in all */
	int64_t pipe_free[P_COUNT], res_free[R_COUNT];
	cm_warp w[CM_MAXW];
	unsigned nw;
	bool fresh;
} cm_sim;

static int64_t earliest(const cm_sim *S, const cm_warp *w)
{
	if (w->done || w->at_bar)
		return CM_INF;
	uint32_t p = w->pc % S->len;
	const cm_info *f = &S->m->info[S->idx[p]];
	st_ctrl c = S->ctrl[p];
	int64_t e = w->ready;
	for (unsigned k = 0; k < 6; k++)
		if (c.wait >> k & 1)
			e = max64(e, q_all(w->sbq[k], w->sbn[k]));
	if (f->kind == K_DEPBAR) {
		if (f->dep_sb != 0xff)
			e = max64(e, q_le(w->sbq[f->dep_sb], w->sbn[f->dep_sb], f->dep_cnt));
		for (unsigned k = 0; k < 6; k++)
			if (f->dep_list >> k & 1)
				e = max64(e, q_all(w->sbq[k], w->sbn[k]));
	} else if (f->kind == K_GDEPBAR) {
		e = max64(e, q_le(w->gq, w->gn, f->dep_cnt));
	}
	if (f->pipe != P_NONE)
		e = max64(e, S->pipe_free[f->pipe]);
	return e;
}

static void issue(cm_sim *S, unsigned wi, int64_t t)
{
	cm_warp *w = &S->w[wi];
	uint32_t p = w->pc % S->len;
	const cm_info *f = &S->m->info[S->idx[p]];
	st_ctrl c = S->ctrl[p];
	if (f->pipe != P_NONE)
		S->pipe_free[f->pipe] = t + f->occ;
	int64_t done = t + f->wlat;
	if (f->res != R_NONE) {
		int64_t start = max64(t, S->res_free[f->res]);
		S->res_free[f->res] = start + f->res_occ;
		done = start + f->res_occ + f->wlat;
	}
	if (f->kind == K_GMMA) {
		w->gmma_last = max64(w->gmma_last, done); /* the tensor pipe completes in order */
		if (f->gsb_close)
			q_push(w->gq, &w->gn, t, w->gmma_last);
	} else if (f->kind == K_LDGSTS) {
		w->ldgsts_last = max64(w->ldgsts_last, done);
	} else if (f->kind == K_LDGDEPBAR) {
		done = max64(t + 2, w->ldgsts_last);
		w->ldgsts_last = 0;
	}
	if (c.wbar < 6)
		q_push(w->sbq[c.wbar], &w->sbn[c.wbar], t, max64(done, t + 2));
	if (c.rbar < 6)
		q_push(w->sbq[c.rbar], &w->sbn[c.rbar], t, t + f->rlat);
	unsigned stall = c.stall ? c.stall : 1;
	w->ready = t + stall;
	if (!c.yield && S->m->yield_cycles > stall)
		w->ready = t + S->m->yield_cycles;

	w->sticky = c.yield != 0;
	w->pc++;
	if (w->pc % S->len == 0 && w->pc / S->len <= CM_ITERS) {
		w->fin[w->pc / S->len - 1] = w->ready;
		if (S->fresh) { /* the next pass is a new warp */
			memset(w->sbn, 0, sizeof w->sbn);
			w->gn = 0;
			w->gmma_last = w->ldgsts_last = 0;
		}
	}
	if (w->pc == S->total)
		w->done = 1;
	if (f->kind == K_BAR) {
		unsigned g0 = wi / S->m->cta_warps * S->m->cta_warps, g1 = g0 + S->m->cta_warps;
		if (g1 > S->nw)
			g1 = S->nw;
		w->at_bar = 1;
		w->bar_arrive = t;
		int64_t rel = 0;
		for (unsigned j = g0; j < g1; j++) {
			if (!S->w[j].at_bar && !S->w[j].done)
				return; /* someone is still on the way */
			if (S->w[j].at_bar)
				rel = max64(rel, S->w[j].bar_arrive);
		}
		for (unsigned j = g0; j < g1; j++)
			if (S->w[j].at_bar) {
				S->w[j].at_bar = 0;
				S->w[j].ready = max64(S->w[j].ready, rel + CM_BAR_LAT);
			}
	}
}

/* Simulate `iters` passes of W warps over one block; *cycles = the mean over warps of the
 * cycles a pass after the first takes (steady state).  fresh: each pass is a new warp (a new
 * CTA taking a finished one's place: scoreboards start empty), else the loop's next trip. */
static double simulate1(const st_costmodel *m, unsigned nw, const uint32_t *idx, const st_ctrl *ctrl, uint32_t len,
			unsigned iters, bool fresh, unsigned stagger)
{
	cm_sim *S = calloc(1, sizeof *S);
	if (!S || !len) {
		free(S);
		return 0;
	}
	S->m = m;
	S->idx = idx;
	S->ctrl = ctrl;
	S->len = len;
	S->total = iters * len;
	S->fresh = fresh;
	S->nw = nw;
	for (unsigned j = 0; j < S->nw; j++)
		S->w[j].ready = (int64_t)j * stagger * len / S->nw;
	unsigned cur = 0, left = S->nw;
	int64_t slot = 0;
	while (left) {
		unsigned best = UINT32_MAX;
		int64_t best_e = CM_INF;
		int64_t ec = earliest(S, &S->w[cur]);
		if (S->w[cur].sticky && ec <= slot) {
			best = cur;
			best_e = ec;
		} else {
			for (unsigned d = 1; d <= S->nw; d++) {
				unsigned j = (cur + d) % S->nw;
				int64_t e = j == cur ? ec : earliest(S, &S->w[j]);
				if (e < best_e)
					best = j, best_e = e;
			}
		}
		if (best == UINT32_MAX) { /* only unmatched barriers left: cannot happen for one sequence */
			for (unsigned j = 0; j < S->nw; j++)
				if (!S->w[j].done) {
					S->w[j].done = 1;
					for (unsigned i = 0; i < CM_ITERS; i++)
						S->w[j].fin[i] = S->w[j].fin[i] ? S->w[j].fin[i] : slot;
				}
			break;
		}
		int64_t t = max64(best_e, slot);
		bool was = S->w[best].done;
		issue(S, best, t);
		if (!was && S->w[best].done)
			left--;
		slot = t + 1 + (best != cur ? m->switch_cycles : 0); /* a warp switch leaves a dispatch bubble */
		cur = best;
	}
	/* from every warp done with its first pass to every warp done with its last: the
	 * throughput of the warps together (a per-warp mean would reward a late first pass) */
	int64_t first = 0, last = 0;
	for (unsigned j = 0; j < S->nw; j++) {
		first = max64(first, S->w[j].fin[0]);
		last = max64(last, S->w[j].fin[iters - 1]);
	}
	double st = (double)(last - first) / (iters - 1) * nw;
	free(S);
	return st / nw;
}

/* Every block is run CM_PASSES times in a row per warp, CM_PHASES times with warp j starting
 * j * p * len / W cycles late in run p, and averaged: the steady state of W warps that are not
 * in step (warps of different CTAs never are), not the start-up of warps that all begin at
 * once, whose result jumps with small changes.  quick: one warp, one phase, two passes. */
static double simulate(const st_costmodel *m, const uint32_t *idx, const st_ctrl *ctrl, uint32_t len, bool loop,
		       bool quick)
{
	unsigned nw = quick ? 1 : m->warps, np = nw > 1 ? CM_PHASES : 1, iters = quick ? 2 : CM_PASSES;
	double c = 0;
	for (unsigned p = 0; p < np; p++)
		c += simulate1(m, nw, idx, ctrl, len, iters, !loop, p) / np;
	return c;
}

/* ---- memo and blocks -------------------------------------------------------------------------------- */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t ctrl_bits(st_ctrl c)
{
	return (uint64_t)c.stall | (uint64_t)c.yield << 4 | (uint64_t)c.wbar << 5 | (uint64_t)c.rbar << 8 |
	       (uint64_t)c.wait << 11 | (uint64_t)c.reuse << 17;
}

/* Executions of block b per warp: trip^depth (depth capped at 3). */
static double block_runs(const st_costmodel *m, size_t b)
{
	double w = 1;
	for (unsigned i = 0; i < m->depth[b] && i < 3; i++)
		w *= m->trip;
	return w;
}

static cm_memo *memo_find(st_costmodel *m, uint64_t key, bool *found)
{
	if (m->memo_n * 10 >= m->memo_cap * 7) { /* too full: start afresh */
		memset(m->memo, 0, m->memo_cap * sizeof *m->memo);
		m->memo_n = 0;
	}
	size_t i = key & (m->memo_cap - 1);
	while (m->memo[i].key && m->memo[i].key != key)
		i = (i + 1) & (m->memo_cap - 1);
	*found = m->memo[i].key == key;
	return &m->memo[i];
}

/* Weighted cycles of block b in state s (NULL: the original order and control fields). */
static double block_cost(st_costmodel *m, const st_sched *s, size_t b, bool quick, uint64_t *hash_out)
{
	const st_sass_insn *in = st_sass_insns(m->k);
	uint32_t first = m->bfirst[b], len = m->bcount[b];
	uint64_t h = mix(quick ? 0x2545f4914f6cdd1dull : 0x51ed270b27f4a1c3ull, b + 1);
	for (uint32_t j = 0; j < len; j++) {
		uint32_t x = s ? st_sched_at(s, first + j) : first + j;
		st_ctrl c = s ? st_sched_ctrl(s, first + j) : in[x].ctrl;
		m->seq_idx[j] = x;
		m->seq_ctrl[j] = c;
		h = mix(h, (uint64_t)x << 24 ^ ctrl_bits(c));
	}
	h |= 1; /* 0 marks an empty memo slot */
	if (hash_out)
		*hash_out = h;
	bool found;
	cm_memo *e = memo_find(m, h, &found);
	if (!found) {
		e->cycles = simulate(m, m->seq_idx, m->seq_ctrl, len, m->depth[b] > 0, quick);
		e->key = h;
		m->memo_n++;
	}
	return block_runs(m, b) * e->cycles;
}

static double total_cost(st_costmodel *m, const st_sched *s)
{
	double t = 0;
	for (size_t b = 0; b < m->nb; b++)
		t += block_cost(m, s, b, false, NULL);
	return t;
}

void st_costmodel_free(st_costmodel *m)
{
	if (!m)
		return;
	free(m->info);
	free(m->bfirst);
	free(m->bcount);
	free(m->depth);
	free(m->slot_block);
	free(m->seq_idx);
	free(m->seq_ctrl);
	free(m->memo);
	free(m);
}

st_status st_costmodel_new(const st_sched *s, const st_costmodel_opts *o, st_costmodel **out, st_error *err)
{
	*out = NULL;
	if (!s)
		return st_error_set(err, ST_EINVAL, "costmodel: no sched state");
	st_costmodel *m = calloc(1, sizeof *m);
	if (!m)
		return st_error_set(err, ST_ENOMEM, "costmodel: out of memory");
	m->k = st_sched_kernel(s);
	m->n = st_sass_count(m->k);
	m->nb = st_sass_block_count(m->k);
	m->warps = o && o->warps ? o->warps : 4;
	if (m->warps > CM_MAXW)
		m->warps = CM_MAXW;
	m->cta_warps = o && o->cta_warps ? o->cta_warps : m->warps;
	if (m->cta_warps > m->warps)
		m->cta_warps = m->warps;
	m->trip = o && o->trip_count ? o->trip_count : 16;
	m->yield_cycles = o && o->yield_cycles ? o->yield_cycles : 2;
	m->switch_cycles = o && o->switch_cycles ? o->switch_cycles : 1;
	size_t n1 = m->n ? m->n : 1, nb1 = m->nb ? m->nb : 1;
	m->info = calloc(n1, sizeof *m->info);
	m->bfirst = calloc(nb1, sizeof *m->bfirst);
	m->bcount = calloc(nb1, sizeof *m->bcount);
	m->depth = calloc(nb1, 1);
	m->slot_block = calloc(n1, sizeof *m->slot_block);
	m->seq_idx = calloc(n1, sizeof *m->seq_idx);
	m->seq_ctrl = calloc(n1, sizeof *m->seq_ctrl);
	m->memo_cap = 1u << 14;
	m->memo = calloc(m->memo_cap, sizeof *m->memo);
	if (!m->info || !m->bfirst || !m->bcount || !m->depth || !m->slot_block || !m->seq_idx || !m->seq_ctrl ||
	    !m->memo) {
		st_costmodel_free(m);
		return st_error_set(err, ST_ENOMEM, "costmodel: out of memory");
	}
	const st_sass_insn *in = st_sass_insns(m->k);
	for (size_t i = 0; i < m->n; i++)
		classify(&in[i], &m->info[i]);
	uint8_t *reach = calloc(nb1, 1);
	uint32_t *stack = calloc(nb1, sizeof *stack);
	if (!reach || !stack) {
		free(reach);
		free(stack);
		st_costmodel_free(m);
		return st_error_set(err, ST_ENOMEM, "costmodel: out of memory");
	}
	size_t sp = 0; /* blocks reachable from the entry; the others (the final `BRA .` and padding) cost 0 */
	if (m->nb)
		reach[0] = 1, stack[sp++] = 0;
	while (sp) {
		uint32_t first, count;
		int32_t succ[2];
		size_t b = stack[--sp];
		st_sass_block(m->k, b, &first, &count, succ);
		for (int e = 0; e < 2; e++)
			if (succ[e] >= 0 && (size_t)succ[e] < m->nb && !reach[succ[e]])
				reach[succ[e]] = 1, stack[sp++] = (uint32_t)succ[e];
	}
	free(stack);
	for (size_t b = 0; b < m->nb; b++) {
		int32_t succ[2];
		st_sass_block(m->k, b, &m->bfirst[b], &m->bcount[b], succ);
		for (uint32_t j = 0; j < m->bcount[b] && m->bfirst[b] + j < m->n; j++)
			m->slot_block[m->bfirst[b] + j] = (uint32_t)b;
		if (!reach[b])
			m->bcount[b] = 0; /* never runs */
		for (int e = 0; e < 2; e++) /* a back edge b -> t encloses blocks t..b in a loop */
			if (reach[b] && succ[e] >= 0 && (size_t)succ[e] <= b)
				for (size_t x = (size_t)succ[e]; x <= b; x++)
					if (m->depth[x] < 255)
						m->depth[x]++;
	}
	free(reach);
	m->orig = total_cost(m, NULL);
	if (!(m->orig > 0)) {
		st_costmodel_free(m);
		return st_error_set(err, ST_EINVAL, "costmodel: kernel %s has no instructions to model",
				    st_sass_name(st_sched_kernel(s)));
	}
	*out = m;
	return ST_OK;
}

double st_costmodel_cycles(st_costmodel *m, const st_sched *s) { return total_cost(m, s); }

double st_costmodel_ratio(st_costmodel *m, const st_sched *s) { return m->orig / total_cost(m, s); }

st_status st_costmodel_evaluate(void *model, const st_sched *s, unsigned pairs, st_eval *out, st_error *err)
{
	(void)pairs;
	if (!model || !s || !out)
		return st_error_set(err, ST_EINVAL, "costmodel: evaluate needs a model, a state and a result");
	memset(out, 0, sizeof *out);
	out->status = ST_OK;
	out->ratio = out->lo = out->hi = st_costmodel_ratio(model, s);
	return ST_OK;
}

/* ---- the environment wrapper: move.est_gain from the model ---------------------------------------- */
typedef struct gain_memo { uint64_t key; float gain; } gain_memo;

typedef struct cm_env {
	st_search_env env; /* first */
	st_search_env *inner;
	st_sched *s;
	st_costmodel *m;
	uint64_t version, hashed_version; /* state changes; the version block hashes belong to */
	uint64_t *bhash;
	double *bcost;
	gain_memo *gm;
	size_t gm_cap, gm_n;
} cm_env;

static void env_touch(cm_env *e) { e->version++; }

static size_t ce_n_moves(void *d)
{
	cm_env *e = d;
	return e->inner->n_moves(e->inner->data);
}

static st_status ce_apply(void *d, size_t mv, st_error *err)
{
	cm_env *e = d;
	env_touch(e);
	return e->inner->apply(e->inner->data, mv, err);
}

static st_status ce_undo(void *d, st_error *err)
{
	cm_env *e = d;
	env_touch(e);
	return e->inner->undo(e->inner->data, err);
}

static st_status ce_reset(void *d, st_error *err)
{
	cm_env *e = d;
	env_touch(e);
	return e->inner->reset(e->inner->data, err);
}

static st_status ce_evaluate(void *d, unsigned pairs, st_eval *out, st_error *err)
{
	cm_env *e = d;
	return e->inner->evaluate(e->inner->data, pairs, out, err);
}

static double ce_weight(void *d, size_t mv)
{
	cm_env *e = d;
	return e->inner->weight(e->inner->data, mv);
}

static st_status ce_json(void *d, char **out, st_error *err)
{
	cm_env *e = d;
	return e->inner->schedule_json(e->inner->data, out, err);
}

static float clipf(double v) { return v > 1 ? 1.0f : v < -1 ? -1.0f : (float)v; }

typedef struct peek_cost { st_costmodel *m; size_t b; double cycles; } peek_cost;

static st_status peek_block(void *ctx, const st_sched *s, st_error *err)
{
	(void)err;
	peek_cost *pc = ctx;
	pc->cycles = block_cost(pc->m, s, pc->b, true, NULL);
	return ST_OK;
}

/* Cycles one execution of block b saves with move mv (looked at through st_sched_peek). */
static st_status move_gain(cm_env *e, st_move mv, size_t b, float *gain, st_error *err)
{
	st_costmodel *m = e->m;
	if (e->hashed_version != e->version) {
		for (size_t x = 0; x < m->nb; x++)
			e->bcost[x] = block_cost(m, e->s, x, true, &e->bhash[x]);
		e->hashed_version = e->version;
	}
	uint64_t key = mix(mix(e->bhash[b], mv.slot), (uint64_t)mv.kind << 8 | mv.arg) | 1;
	if (e->gm_n * 10 >= e->gm_cap * 7) {
		memset(e->gm, 0, e->gm_cap * sizeof *e->gm);
		e->gm_n = 0;
	}
	size_t i = key & (e->gm_cap - 1);
	while (e->gm[i].key && e->gm[i].key != key)
		i = (i + 1) & (e->gm_cap - 1);
	if (e->gm[i].key == key) {
		*gain = e->gm[i].gain;
		return ST_OK;
	}
	peek_cost pc = {m, b, 0};
	st_status rc = st_sched_peek(e->s, mv, peek_block, &pc, err); /* no legality refresh either way */
	if (rc)
		return rc;
	double after = pc.cycles;
	*gain = clipf((e->bcost[b] - after) / block_runs(m, b) / 16.0);
	e->gm[i].key = key;
	e->gm[i].gain = *gain;
	e->gm_n++;
	return ST_OK;
}

static st_status ce_features(void *d, size_t i, float out[ST_SEARCH_NFEAT], st_error *err)
{
	cm_env *e = d;
	st_status rc = e->inner->features(e->inner->data, i, out, err);
	if (rc)
		return rc;
	st_move mv = st_sched_move(e->s, i);
	if (mv.slot >= e->m->n)
		return ST_OK;
	size_t b = e->m->slot_block[mv.slot];
	/* sched flags reverted swaps only; a yield flip that gives an instruction back its original
	 * bit reverts an earlier edit (without this, st_policy_apply can flip two bits in a cycle) */
	if (mv.kind == ST_MOVE_YIELD &&
	    st_sched_ctrl(e->s, mv.slot).yield != st_sass_insns(e->m->k)[st_sched_at(e->s, mv.slot)].ctrl.yield)
		out[ST_F_REVERTS] = 1;
	if (mv.kind == ST_MOVE_SWAP)
		return move_gain(e, mv, b, &out[ST_F_EST_GAIN], err);
	if (mv.kind == ST_MOVE_STALL) { /* one cycle less for this warp, if nothing else waits */
		out[ST_F_EST_GAIN] = 1.0f / 16;
		return ST_OK;
	}
	if (mv.kind == ST_MOVE_YIELD) { /* single-warp estimate: an end of group costs yield_cycles - stall */
		st_ctrl c = st_sched_ctrl(e->s, mv.slot);
		unsigned stall = c.stall ? c.stall : 1;
		double extra = e->m->yield_cycles > stall ? e->m->yield_cycles - stall : 0;
		out[ST_F_EST_GAIN] = clipf((c.yield ? -extra : extra) / 16.0);
	} else {
		out[ST_F_EST_GAIN] = 0; /* reuse flags: the model sees no register-bank effects */
	}
	return ST_OK;
}

st_status st_costmodel_wrap_env(st_search_env *inner, st_sched *s, st_costmodel *m, st_search_env **out,
				st_error *err)
{
	*out = NULL;
	if (!inner || !s || !m || !inner->features)
		return st_error_set(err, ST_EINVAL, "costmodel: wrapping needs an environment with features, a state "
				    "and a model");
	cm_env *e = calloc(1, sizeof *e);
	if (!e)
		return st_error_set(err, ST_ENOMEM, "costmodel: out of memory");
	e->inner = inner;
	e->s = s;
	e->m = m;
	e->version = 1;
	size_t nb1 = m->nb ? m->nb : 1;
	e->bhash = calloc(nb1, sizeof *e->bhash);
	e->bcost = calloc(nb1, sizeof *e->bcost);
	e->gm_cap = 1u << 14;
	e->gm = calloc(e->gm_cap, sizeof *e->gm);
	if (!e->bhash || !e->bcost || !e->gm) {
		st_costmodel_env_free(&e->env);
		return st_error_set(err, ST_ENOMEM, "costmodel: out of memory");
	}
	e->env = *inner;
	e->env.data = e;
	e->env.n_moves = ce_n_moves;
	e->env.features = ce_features;
	e->env.apply = ce_apply;
	e->env.undo = ce_undo;
	e->env.reset = ce_reset;
	e->env.evaluate = ce_evaluate;
	e->env.schedule_json = inner->schedule_json ? ce_json : NULL;
	e->env.weight = inner->weight ? ce_weight : NULL;
	*out = &e->env;
	return ST_OK;
}

void st_costmodel_env_free(st_search_env *env)
{
	cm_env *e = (cm_env *)env;
	if (!e)
		return;
	free(e->bhash);
	free(e->bcost);
	free(e->gm);
	free(e);
}
