/* Family 3 form 2's analysis (docs/pipeline.md "Form 2: prefetch into fresh registers"): the chosen
 * loads unguarded (Q1), their closure (Q2, form 1's P2), the induction update U and exit test E (Q3),
 * the members' inputs (Q4), no interference (Q5), the map φ onto fresh registers, i', Pf and S' (Q7, Q9,
 * Q10) and the padding (Q8).  Original indices throughout; the kernel is never changed. */
#include "pipe2_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define OP_VIADD 0x836 /* VIADD Rd, Ra, imm32 */
#define OP_IADD3_I 0x810 /* IADD3 Rd, Ra, imm32, Rc */

/* Form 1's rule names as form 2's (P1 shape -> Q1, P2 closure and the unguarded members -> Q2). */
static bool requalify(pp_why *why)
{
	if (why && why->rule)
		why->rule = !strcmp(why->rule, "P1") ? "Q1" : "Q2";
	return false;
}

bool pq_loop_at(const pp_kern *x, uint32_t b, pp_loop *L, pp_why *why)
{
	return pp_loop_at(x, b, L, why) || requalify(why);
}

static unsigned word_op(const uint8_t w[16]) { return (unsigned)w[0] | (unsigned)(w[1] & 0xf) << 8; }

unsigned pq_width(const st_sass_insn *ld)
{
	unsigned w = 0;
	for (unsigned d = 0; d < ld->ndefs; d++)
		w = ld->defs[d].file == ST_RF_R ? (ld->ndefs == 1 ? ld->defs[d].count : 0) : w;
	return w == 1 || w == 2 || w == 4 ? w : 0;
}

/* U's shape: unguarded `VIADD i, i, imm` or `IADD3 i, i, imm, RZ` (the word's opcode decides), writing
 * only i and reading only i. */
static bool is_update(const st_sass_insn *y, unsigned i)
{
	unsigned op = word_op(y->word);
	if (y->guard >= 0 || y->ndefs != 1 || y->nuses != 1 || (op != OP_VIADD && op != OP_IADD3_I))
		return false;
	if (op == OP_IADD3_I && y->word[8] != 0xff)
		return false;
	return y->defs[0].file == ST_RF_R && y->defs[0].index == i && y->defs[0].count == 1 && y->word[2] == i &&
	       y->uses[0].file == ST_RF_R && y->uses[0].index == i && y->uses[0].count == 1 && y->word[3] == i;
}

/* E's shape (ISETP.<cmp>.AND Pe, PT, a, b, PT) and which operand is i (its byte in the word). */
static bool exit_test(const pp_kern *x, pq_cand *q, pp_why *why)
{
	const st_sass_insn *e = &x->in[q->L.e];
	int neg;
	int pc = pp_isetp_pc(e->word, &neg);
	if (strncmp(e->opcode, "ISETP", 5) || strstr(e->opcode, ".EX") || !pp_is_isetp_word(e->word) || e->guard >= 0 ||
	    pp_isetp_dst(e->word) != q->L.pe || pp_isetp_dst2(e->word) != 7 || pc != 7 || neg ||
	    pp_isetp_op(e->word) != PP_OP_AND)
		return pp_refuse(why, "Q3", e->offset, "the exit test %s is not ISETP.<cmp>.AND P%d, PT, a, b, PT", e->opcode,
			      q->L.pe);
	int found = 0;
	for (unsigned u = 0; u < e->nuses; u++) {
		const st_sass_reg *r = &e->uses[u];
		if (r->file == ST_RF_B || r->slot == ST_SLOT_G)
			continue;
		for (unsigned k = 0; k < r->count; k++) {
			unsigned nw = pp_writers(x, &q->L, r->file, r->index + k);
			int64_t w = pp_last_writer(x, q->L.first, q->L.bra, r->file, r->index + k);
			if (nw == 0)
				continue;
			if (nw != 1 || r->file != ST_RF_R || r->count != 1 || !is_update(&x->in[w], r->index) || found++)
				return pp_refuse(why, "Q3", e->offset, "an operand of the exit test is not i or loop-invariant");
			q->iv = r->index;
			q->u = (uint32_t)w;
		}
	}
	if (!found)
		return pp_refuse(why, "Q3", e->offset, "the exit test reads no induction register");
	bool a = e->word[3] == q->iv, b = word_op(e->word) == 0x20c && e->word[4] == q->iv;
	if (a == b)
		return pp_refuse(why, "Q3", e->offset, "R%u is not exactly one of the exit test's operands", q->iv);
	q->ebyte = a ? 3 : 4;
	return true;
}

/* Q3: U and E exist, are not members, U after the last member, E after U. */
static bool induction(const pp_kern *x, pq_cand *q, pp_why *why)
{
	q->e = q->L.e;
	if (!exit_test(x, q, why))
		return false;
	if (pp_is_member(&q->g, q->u) || pp_is_member(&q->g, q->e))
		return pp_refuse(why, "Q3", x->in[q->u].offset, "the induction update or the exit test is in the group");
	if (q->u < q->g.p || q->e < q->u)
		return pp_refuse(why, "Q3", x->in[q->u].offset, "the induction update is not after the last member (0x%x) "
			      "and before the exit test", x->in[q->g.p].offset);
	return true;
}

/* Q4: every input of a member is loop-invariant, i, or a feeder's output. */
static bool inputs(const pp_kern *x, const pq_cand *q, pp_why *why)
{
	for (uint32_t i = 0; i < q->g.nmem; i++) {
		uint32_t m = q->g.mem[i];
		const st_sass_insn *y = &x->in[m];
		for (unsigned u = 0; u < y->nuses; u++)
			for (unsigned k = 0; k < y->uses[u].count; k++) {
				unsigned f = y->uses[u].file, r = y->uses[u].index + k;
				if (f == ST_RF_B || pp_written_before_in_g(x, &q->g, m, f, r) || !pp_writers(x, &q->L, f, r) ||
				    (f == ST_RF_R && r == q->iv))
					continue;
				int64_t lw = pp_last_writer(x, q->L.first, m, f, r);
				if (lw >= 0 && pp_is_feeder(&q->g, (uint32_t)lw))
					continue;
				char name[16];
				st_sass_reg_str(name, sizeof name, f, r);
				return pp_refuse(why, "Q4", y->offset, "%s read by %s is carried around the back edge", name,
					      y->opcode);
			}
	}
	return true;
}

/* The registers members write (R and P only: φ has no uniform registers). */
static bool written_set(const pp_kern *x, const pq_cand *q, pp_set *w, pp_why *why)
{
	memset(w, 0, sizeof *w);
	for (uint32_t i = 0; i < q->g.nmem; i++) {
		const st_sass_insn *y = &x->in[q->g.mem[i]];
		for (unsigned d = 0; d < y->ndefs; d++) {
			if (y->defs[d].file != ST_RF_R && y->defs[d].file != ST_RF_P)
				return pp_refuse(why, "Q7", y->offset, "member %s writes a register φ cannot rename", y->opcode);
			for (unsigned k = 0; k < y->defs[d].count; k++)
				pp_set_put(w, y->defs[d].file, y->defs[d].index + k, true);
		}
	}
	return true;
}

/* Q5 for a read of (f, r) in W by a non-member at j (j = bra + 1: B's exit edge): the writers before it,
 * backwards and around the back edge, up to the first unguarded one (a guarded write kills nothing). */
static bool sees_own(const pp_kern *x, const pq_cand *q, uint32_t j, unsigned f, unsigned r, pp_why *why)
{
	uint32_t len = q->L.bra - q->L.first + 1, w = 0;
	bool member = false;
	for (uint32_t k = 1; k <= len && !member; k++) {
		w = q->L.first + (j - q->L.first + len - k) % len;
		if (!pp_writes(&x->in[w], f, r))
			continue;
		if (pp_is_member(&q->g, w))
			member = !(f == ST_RF_R && pp_is_load(&q->g, w)); /* the hand-over writes the loaded value there */
		if (!member && x->in[w].guard < 0)
			return true;
	}
	if (!member)
		return true;
	char name[16];
	st_sass_reg_str(name, sizeof name, f, r);
	uint32_t at = j <= q->L.bra ? x->in[j].offset : x->in[q->L.bra].offset;
	if (j > q->L.bra)
		return pp_refuse(why, "Q5", at, "%s live on the loop's exit edge holds the value member %s at 0x%x computed",
			      name, x->in[w].opcode, x->in[w].offset);
	return pp_refuse(why, "Q5", at, "%s read by %s at 0x%x sees the value member %s at 0x%x computed", name,
		      x->in[j].opcode, at, x->in[w].opcode, x->in[w].offset);
}

static bool no_interference(const pp_kern *x, const pq_cand *q, const pp_set *W, pp_why *why)
{
	for (uint32_t j = q->L.first; j <= q->L.bra; j++) {
		if (pp_is_member(&q->g, j))
			continue;
		const st_sass_insn *y = &x->in[j];
		for (unsigned u = 0; u < y->nuses; u++)
			for (unsigned k = 0; k < y->uses[u].count; k++)
				if (pp_set_has(W, y->uses[u].file, y->uses[u].index + k) &&
				    !sees_own(x, q, j, y->uses[u].file, y->uses[u].index + k, why))
					return false;
	}
	for (unsigned f = ST_RF_R; f <= ST_RF_P; f += ST_RF_P - ST_RF_R)
		for (unsigned r = 0; r < 256; r++)
			if (pp_set_has(W, f, r) && pp_set_has(&q->L.exitlive, f, r) && !sees_own(x, q, q->L.bra + 1, f, r, why))
				return false;
	for (uint32_t l = 0; l < q->g.nloads; l++) {
		const st_sass_insn *X = &x->in[q->g.loads[l]];
		for (uint32_t i = 0; i < q->g.nmem; i++)
			for (unsigned k = 0; q->g.mem[i] > q->g.loads[l] && k < X->defs[0].count; k++)
				if (pp_writes(&x->in[q->g.mem[i]], ST_RF_R, X->defs[0].index + k))
					return pp_refuse(why, "Q5", x->in[q->g.mem[i]].offset, "member %s rewrites R%u after the load at 0x%x",
						      x->in[q->g.mem[i]].opcode, X->defs[0].index + k, X->offset);
	}
	return true;
}

bool pq_build(const pp_kern *x, const pp_loop *L, const uint32_t *loads, size_t n, unsigned reglimit, pq_cand *q,
	      pp_why *why)
{
	memset(q, 0, sizeof *q);
	q->L = *L;
	if (why)
		why->rule = NULL;
	if (!pp_group_close(x, L, loads, n, &q->g, why))
		return requalify(why);
	for (uint32_t l = 0; l < q->g.nloads; l++) {
		const st_sass_insn *X = &x->in[q->g.loads[l]];
		if (X->guard >= 0)
			return pp_refuse(why, "Q1", X->offset, "the load is guarded (form 2 takes unguarded loads)");
		if (!pq_width(X))
			return pp_refuse(why, "Q1", X->offset, "%s does not load 1, 2 or 4 registers", X->opcode);
		q->nhand += pq_width(X);
	}
	pp_set W;
	if (!induction(x, q, why) || !inputs(x, q, why) || !written_set(x, q, &W, why) ||
	    !no_interference(x, q, &W, why) || !pq_fresh_all(x, q, &W, reglimit, why))
		return false;
	pa_edit e;
	for (uint32_t i = 0; i < q->g.nmem; i++) /* Q7: every member's words can be written */
		if (!pq_member_edit(x, q, q->g.mem[i], 1, &e, why) || !pq_member_edit(x, q, q->g.mem[i], 0, &e, why))
			return false;
	q->npeel = q->g.nmem + q->g.nfeed;
	size_t pad = x->c ? st_cubin_insertable(x->c, x->ki) : (size_t)-1;
	if (q->npeel + q->nhand + 2 > pad)
		return pp_refuse(why, "Q8", x->in[L->first].offset, "the rewrite inserts %u slots (peel %u, hand-overs %u, I, F), "
			      "the padding has %zu", q->npeel + q->nhand + 2, q->npeel, q->nhand, pad);
	return true;
}

void pq_to_cand(const pp_kern *x, const pq_cand *q, st_pipe_cand *c)
{
	memset(c, 0, sizeof *c);
	c->header = x->in[q->L.first].offset;
	c->nloads = q->g.nloads;
	for (uint32_t i = 0; i < q->g.nloads; i++)
		c->loads[i] = x->in[q->g.loads[i]].offset;
	c->nmembers = q->g.nmem;
	c->npeel = q->npeel;
	c->pred_from = c->pred_to = -1;
	c->form = 2;
	c->sb = (int8_t)q->sb;
	c->regs_before = (uint16_t)q->regs_before;
	c->regs_after = (uint16_t)q->regs_after;
	c->nhand = (uint16_t)q->nhand;
}

bool pq_same(const st_pipe_cand *a, const st_pipe_cand *b)
{
	return a->header == b->header && a->nloads == b->nloads && a->nmembers == b->nmembers && a->npeel == b->npeel &&
	       a->form == b->form && a->sb == b->sb && a->regs_before == b->regs_before &&
	       a->regs_after == b->regs_after && a->nhand == b->nhand &&
	       !memcmp(a->loads, b->loads, a->nloads * sizeof *a->loads);
}
