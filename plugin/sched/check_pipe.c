/* The independent checker for pipe rewrites (family 3 form 1; docs/sched.md "Checker: pipe"): called
 * by st_check_kernel when the tuned kernel used padding slots.  It lines the tuned slots up with the
 * original ones block by block: every block is unchanged (but for stall raises and reuse clears)
 * except loop blocks B, which may be preceded by an inserted run (the peel) and have a set of
 * their instructions moved to just before the back branch.  Anything it cannot line up is a
 * violation, never a pass.  Then each loop is judged by the rules P1..P8 (check_pipe_*.c).
 * Written apart from the rewrite (pipe*.c): public sass/cubin readings only. */
#include "check_pipe2.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Form 1's rule as form 2 names it (pipe2-rules.md): P1 shape, P2 closure, P3 inputs, P4
 * interference, P5 scoreboards, P7 layout, P8 timing, P9 registers, P10 several loops. */
static const char *cp_rule2(const char *rule)
{
	static const char *const map[][2] = {{"P1", "Q1"}, {"P2", "Q2"}, {"P3", "Q4"}, {"P4", "Q5"}, {"P5", "Q10"},
					     {"P6", "Q7"}, {"P7", "Q12"}, {"P8", "Q11"}, {"P9", "Q9"}, {"P10", "Q12"}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(rule, map[i][0]))
			return map[i][1];
	return rule;
}

void cp_flag(cp *p, uint32_t slot, const char *rule, const char *fmt, ...)
{
	char buf[ST_ERROR_MSG_MAX - 32], line[ST_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (p->f2) /* form 2 reuses form 1's closure, shape and timing walks under its own rule names */
		snprintf(line, sizeof line, "pipe2 %s: %s", cp_rule2(rule), buf);
	else
		snprintf(line, sizeof line, "pipe %s: %s", rule, buf);
	ck_flag(p->c, slot, line);
}

unsigned cp_bits(const uint8_t *w, unsigned at, unsigned len)
{
	unsigned v = 0;
	for (unsigned i = 0; i < len; i++)
		v |= (unsigned)(w[(at + i) / 8] >> ((at + i) % 8) & 1) << i;
	return v;
}

void cp_set_bits(uint8_t *w, unsigned at, unsigned len, unsigned v)
{
	for (unsigned i = 0; i < len; i++) {
		uint8_t m = (uint8_t)(1u << ((at + i) % 8));
		w[(at + i) / 8] = (uint8_t)((v >> i & 1) ? w[(at + i) / 8] | m : w[(at + i) / 8] & ~m);
	}
}

/* Equal outside the control bits 105..124; coarse: also outside what a layout change patches in a
 * PC-relative word (bits 16..81: branch immediates; the references are compared separately). */
bool cp_same_word(const uint8_t *a, const uint8_t *b, bool coarse)
{
	for (unsigned bit = 0; bit < 128; bit += 1) {
		if ((bit >= 105 && bit <= 124) || (coarse && bit >= 16 && bit <= 81))
			continue;
		if ((a[bit / 8] >> (bit % 8) & 1) != (b[bit / 8] >> (bit % 8) & 1))
			return false;
	}
	return true;
}

bool cp_is_loop(const cp *p, size_t b, const st_cubin *orig, size_t ko)
{
	if (b == 0 || p->bcount[b] < 2)
		return false;
	uint32_t f = p->bfirst[b], l = f + p->bcount[b] - 1;
	const st_sass_insn *x = &p->in[l], *h = &p->in[f - 1];
	if (strcmp(x->opcode, "BRA") || x->target != (int64_t)(16 * f) || x->guard < 0 || x->guard_file != ST_RF_P)
		return false;
	if (p->bfirst[b - 1] + p->bcount[b - 1] != f || (h->flags & ST_F_BRANCH))
		return false; /* H falls through into B */
	for (size_t r = 0; r < st_cubin_ref_count(orig, ko); r++) {
		const st_code_ref *ref = st_cubin_ref(orig, ko, r);
		if (ref->target == 16 * f && ref->slot != (long)l)
			return false; /* B entered from elsewhere */
	}
	return true;
}

/* Block b kept in place at tuned offset d slots; false (reported) when a word differs. */
static bool same_block(cp *p, size_t b, uint32_t d)
{
	for (uint32_t i = p->bfirst[b]; i < p->bfirst[b] + p->bcount[b]; i++) {
		uint32_t j = i + d;
		if (j >= p->n) { /* the padding the peels used */
			if (strcmp(p->in[i].opcode, "NOP")) {
				cp_flag(p, (uint32_t)p->n - 1, "P7", "%s at 0x%x fell off the end of the code", p->in[i].opcode, 16 * i);
				return false;
			}
			continue;
		}
		if (!cp_same_word(p->ocode + 16 * i, p->tcode + 16 * j, (p->in[i].flags & ST_F_PCREL) != 0)) {
			cp_flag(p, j, "P7", "the word at 0x%x is not the original's %s at 0x%x (an insertion or edit outside a "
					    "loop rewrite)", 16 * j, p->in[i].opcode, 16 * i);
			return false;
		}
		p->src[j] = i, p->kind[j] = CP_SAME, p->inv[i] = j;
	}
	return true;
}

/* A rotated loop at block b: the tuned back branch sits L slots lower (the peel's length). */
static bool loop_block(cp *p, size_t b, uint32_t *d, uint32_t ins)
{
	uint32_t f = p->bfirst[b], l = f + p->bcount[b] - 1;
	for (uint32_t L = 0; *d + L <= ins && l + *d + L < p->n; L++) {
		if (!cp_same_word(p->ocode + 16 * l, p->tcode + 16 * (l + *d + L), false))
			continue;
		if (L == 0) { /* unchanged loop? */
			bool same = true;
			for (uint32_t i = f; i < l && same; i++)
				same = cp_same_word(p->ocode + 16 * i, p->tcode + 16 * (i + *d), false);
			if (same)
				return same_block(p, b, *d);
		}
		cp_loop *lo = &p->loops[p->nl++];
		memset(lo, 0, sizeof *lo);
		lo->f = f, lo->l = l, lo->tp = f + *d, lo->L = L;
		lo->mem = calloc(4 * (size_t)(l - f + 1), 1);
		if (!lo->mem) {
			cp_flag(p, f + *d, "P7", "out of memory");
			return false;
		}
		lo->clo = lo->mem + (l - f + 1), lo->feed = lo->clo + (l - f + 1), lo->comb = lo->feed + (l - f + 1);
		memset(lo->ren, -1, sizeof lo->ren);
		*d += L;
		return cp_match_loop(p, lo);
	}
	cp_flag(p, f + *d, "P7", "loop 0x%x: its back branch is not found below its old place", 16 * f);
	return false;
}

/* Every code reference still names the instruction it named; the loop's back branch names the
 * tuned start of its body (after the peel). */
void cp_check_refs(cp *p, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt)
{
	size_t nro = st_cubin_ref_count(orig, ko), nrt = st_cubin_ref_count(tuned, kt);
	if (nro != nrt)
		cp_flag(p, 0, "P7", "%zu code references in the original, %zu in the rewrite", nro, nrt);
	for (size_t r = 0; r < nro; r++) {
		const st_code_ref *a = st_cubin_ref(orig, ko, r);
		long slot = a->slot >= 0 && (size_t)a->slot < p->n ? (long)p->inv[a->slot] : a->slot;
		uint32_t target = a->target / 16 < p->n ? 16 * p->inv[a->target / 16] : a->target;
		for (size_t l = 0; l < p->nl; l++)
			if (a->slot == (long)p->loops[l].l && a->target == 16 * p->loops[l].f)
				target = 16 * (p->loops[l].tp + p->loops[l].L);
		bool found = false;
		for (size_t q = 0; q < nrt && !found; q++) {
			const st_code_ref *b = st_cubin_ref(tuned, kt, q);
			found = b->kind == a->kind && b->slot == slot && b->target == target;
		}
		if (!found)
			cp_flag(p, slot >= 0 ? (uint32_t)slot : 0, "P7", "%s (0x%x -> 0x%x in the original) does not name 0x%x",
				a->what, a->slot >= 0 ? 16 * (unsigned)a->slot : 0, a->target, target);
	}
}

/* Line the tuned slots up with the original's; false when that failed (reported). */
static bool align(cp *p, const st_cubin *orig, size_t ko, uint32_t ins)
{
	uint32_t d = 0;
	for (size_t b = 0; b < p->nb; b++) {
		if (b && p->bfirst[b] != p->bfirst[b - 1] + p->bcount[b - 1]) {
			cp_flag(p, p->bfirst[b], "P7", "blocks not in layout order");
			return false;
		}
		bool ok = cp_is_loop(p, b, orig, ko) ? loop_block(p, b, &d, ins) : same_block(p, b, d);
		if (!ok)
			return false;
	}
	if (d != ins) {
		cp_flag(p, 0, "P7", "%u padding slots used, %u by peels before loops", ins, d);
		return false;
	}
	return true;
}

void cp_free(cp *p)
{
	for (size_t l = 0; l < p->nl; l++)
		free(p->loops[l].mem);
	free(p->loops);
	free(p->src);
	free(p->kind);
	free(p->lp);
	free(p->inv);
	free(p->ti);
	free(p->tregs);
	free(p->bfirst);
	free(p->bcount);
	free(p->bsucc);
}

bool cp_init(cp *p, ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt)
{
	size_t n1 = c->n ? c->n : 1, osz, tsz;
	memset(p, 0, sizeof *p);
	p->c = c, p->in = c->in, p->n = c->n, p->sm = c->sm, p->nb = st_sass_block_count(c->k);
	p->ocode = st_cubin_code(orig, ko, &osz), p->tcode = st_cubin_code(tuned, kt, &tsz);
	p->src = calloc(n1, sizeof *p->src), p->kind = calloc(n1, 1), p->lp = calloc(n1, sizeof *p->lp);
	p->inv = calloc(n1, sizeof *p->inv), p->ti = calloc(n1, sizeof *p->ti);
	p->tregs = calloc(n1 * CP_REGS, sizeof *p->tregs), p->loops = calloc(p->nb + 1, sizeof *p->loops);
	p->bfirst = calloc(p->nb + 1, sizeof *p->bfirst), p->bcount = calloc(p->nb + 1, sizeof *p->bcount);
	p->bsucc = calloc(p->nb + 1, sizeof *p->bsucc);
	if (!p->src || !p->kind || !p->lp || !p->inv || !p->ti || !p->tregs || !p->loops || !p->bfirst || !p->bcount ||
	    !p->bsucc) {
		ck_flag(c, 0, "pipe: out of memory");
		cp_free(p);
		return false;
	}
	for (size_t b = 0; b < p->nb; b++)
		st_sass_block(c->k, b, &p->bfirst[b], &p->bcount[b], p->bsucc[b]);
	for (uint32_t j = 0; j < p->n; j++)
		p->src[j] = CP_NONE;
	return true;
}

/* Form 1's reading and rules; false when the rewrite did not line up as form 1 (the register count,
 * the padding, the alignment). */
static bool ck_pipe1(ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt)
{
	cp p;
	bool lined = false;
	if (!cp_init(&p, c, orig, ko, tuned, kt))
		return true;
	size_t osz, tsz, po = st_cubin_insertable(orig, ko), pt = st_cubin_insertable(tuned, kt);
	st_cubin_code(orig, ko, &osz), st_cubin_code(tuned, kt, &tsz);
	if (osz != tsz || pt > po) {
		cp_flag(&p, 0, "P7", "the rewrite has %zu insertable slots, the original %zu", pt, po);
	} else if (st_cubin_regcount(orig, ko) != st_cubin_regcount(tuned, kt)) {
		cp_flag(&p, 0, "P9", "register count %u, the original's %u", st_cubin_regcount(tuned, kt),
			st_cubin_regcount(orig, ko));
	} else if ((lined = align(&p, orig, ko, (uint32_t)(po - pt)))) {
		cp_check_refs(&p, orig, ko, tuned, kt);
		for (size_t l = 0; l < p.nl; l++) {
			cp_check_rules(&p, &p.loops[l]);
			for (size_t m = 0; m < p.nl; m++)
				if (p.loops[m].l + 1 == p.loops[l].f)
					cp_flag(&p, p.loops[l].tp, "P10", "loop 0x%x is entered from loop 0x%x, rotated too",
						16 * p.loops[l].f, 16 * p.loops[m].f);
		}
		for (uint32_t j = 0; j < p.n; j++)
			if (p.src[j] != CP_NONE) {
				p.ti[j] = p.in[p.src[j]];
				p.ti[j].offset = 16 * j, p.ti[j].index = j;
				memcpy(p.ti[j].word, p.tcode + 16 * j, 16);
				p.ti[j].ctrl = st_ctrl_decode(p.tcode + 16 * j);
			}
		for (size_t l = 0; l < p.nl; l++)
			if (!p.loops[l].bad) {
				cp_check_edits(&p, &p.loops[l]);
				cp_check_timing(&p, &p.loops[l]);
			}
		cp_check_ctrl(&p);
	}
	cp_free(&p);
	return lined;
}

/* Form 1 first, its lines held back; a rewrite it rejects is read as form 2; when that does not line
 * up either, form 1's lines stand, with one line on form 2 when form 1 did not line up. */
void ck_pipe(ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt)
{
	st_check_report_fn report = c->report;
	size_t bad = c->bad;
	c->report = NULL;
	ck_pipe1(c, orig, ko, tuned, kt);
	size_t v1 = c->bad - bad;
	c->bad = bad, c->report = report;
	char why[ST_ERROR_MSG_MAX - 64] = "";
	if (!v1 || ck_pipe2(c, orig, ko, tuned, kt, why, sizeof why))
		return;
	if (!ck_pipe1(c, orig, ko, tuned, kt)) {
		char line[ST_ERROR_MSG_MAX];
		snprintf(line, sizeof line, "pipe2: not a form-2 rewrite: %s", why);
		ck_flag(c, 0, line);
	}
}
