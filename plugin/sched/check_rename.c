/* The independent checker's reading of renamed registers and its dataflow rule (docs/sched.md
 * "Register renaming", checker).  Shares no code with the model (rename.c, rename_enc.c): it
 * reads which register fields changed from the words themselves, and judges the result by
 * comparing, for every register read and every register live at a block end, the definition that
 * reaches it in the original and in the rewrite. */
#include "check_rename.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opcodes whose register fields the checker reads (fixed-latency math; no memory operands). */
static bool ckr_opcode(const char *op)
{
	static const char *const ok = " IMAD IADD3 FFMA FADD FMUL LOP3 SHF FMNMX IMNMX SEL FSEL LEA ISETP FSETP PRMT ";
	char name[24];
	size_t n = strcspn(op, ".");
	if (n == 0 || n + 3 > sizeof name)
		return false;
	name[0] = ' ';
	memcpy(name + 1, op, n);
	name[n + 1] = ' ';
	name[n + 2] = 0;
	return strstr(ok, name) != NULL;
}

/* Field byte of an operand slot in these forms: Rd 16..23, Ra 24..31, Rb 32..39, Rc 64..71. */
static int field_of(unsigned slot)
{
	switch (slot) {
	case ST_SLOT_D: return 2;
	case ST_SLOT_A: return 3;
	case ST_SLOT_B: return 4;
	case ST_SLOT_C: return 8;
	default: return -1;
	}
}

/* An immediate among the printed operands moves Rb elsewhere in some forms: then b is not read. */
static bool has_imm(const char *s)
{
	for (const char *t = s; t && *t; t = strchr(t, ',') ? strchr(t, ',') + 1 : NULL) {
		t += strspn(t, " -|!~+");
		if ((*t >= '0' && *t <= '9') || !strncmp(t, "INF", 3) || !strncmp(t, "QNAN", 4) || !strncmp(t, "NAN", 3))
			return true;
	}
	return false;
}

int ckr_renamed(const st_sass_insn *o, const uint8_t tw[16], st_sass_insn *out, st_sass_reg *regs)
{
	uint8_t fields = 0; /* bit per byte 2, 3, 4, 8 that may change: 1, 2, 4, 8 */
	if (!ckr_opcode(o->opcode) || o->cls != ST_CLASS_ALU || strchr(o->operands, '[') || (o->flags & ST_F_VARLAT))
		return 0;
	*out = *o;
	memcpy(regs, o->defs, o->ndefs * sizeof *regs);
	memcpy(regs + o->ndefs, o->uses, o->nuses * sizeof *regs);
	out->defs = regs;
	out->uses = regs + o->ndefs;
	for (unsigned k = 0; k < (unsigned)o->ndefs + o->nuses; k++) {
		st_sass_reg *g = &regs[k];
		int f = g->file == ST_RF_R ? field_of(g->slot) : -1;
		if (g->file != ST_RF_R)
			continue;
		if (f < 0 || g->count != 1 || (k < o->ndefs) != (g->slot == ST_SLOT_D) || o->word[f] != g->index ||
		    (g->slot == ST_SLOT_B && has_imm(o->operands)))
			return 0; /* an R operand the checker cannot place: the word must not change */
		if (tw[f] == 255)
			return 0; /* RZ reads zero and drops writes: never a rename */
		fields |= (uint8_t)(f == 2 ? 1 : f == 3 ? 2 : f == 4 ? 4 : 8);
	}
	/* a register number in a field byte no operand sits in: the layout is not the one assumed
	 * (MOV keeps its source in Rb while the text puts it first); nothing may change */
	static const int fb[4] = {2, 3, 4, 8};
	for (unsigned k = 0; k < (unsigned)o->ndefs + o->nuses; k++)
		for (int q = 0; regs[k].file == ST_RF_R && q < 4; q++)
			if (!(fields >> q & 1) && o->word[fb[q]] == regs[k].index)
				return 0;
	for (unsigned k = 0; k < (unsigned)o->ndefs + o->nuses; k++)
		if (regs[k].file == ST_RF_R)
			regs[k].index = tw[field_of(regs[k].slot)];
	for (int b = 0; b < 16; b++) {
		bool field = (b == 2 && (fields & 1)) || (b == 3 && (fields & 2)) || (b == 4 && (fields & 4)) ||
			     (b == 8 && (fields & 8));
		uint8_t mask = b == 13 ? 0x01 : b == 14 ? 0x00 : b == 15 ? 0xe0 : 0xff; /* control bits 105..124 aside */
		if (!field && ((o->word[b] ^ tw[b]) & mask))
			return 0;
	}
	return 1;
}

/* ---- dataflow -------------------------------------------------------------------------------------- */
#define NU (5 * 256) /* register units: file * 256 + index */

static unsigned unit(unsigned file, unsigned index) { return (file * 256 + (index & 255)) % NU; }

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* What may reach a unit: a set of definitions (insn, def operand, unit offset) or the value the
 * unit had at the block's start, kept as a count and two order-free hashes. */
typedef struct fp { uint32_t n; uint64_t a, b; } fp;

static void fp_entry(fp *f, unsigned u)
{
	uint64_t t = mix(0x8000000000000000ull | u);
	*f = (fp){1, t, t * 3 + 1};
}

static void fp_def(fp *f, uint32_t insn, unsigned d, unsigned off, bool guarded)
{
	uint64_t t = mix((uint64_t)insn << 16 | d << 8 | off);
	if (!guarded)
		*f = (fp){0, 0, 0};
	f->n++;
	f->a += t;
	f->b ^= t * 3 + 1;
}

static bool fp_eq(const fp *x, const fp *y) { return x->n == y->n && x->a == y->a && x->b == y->b; }

/* Run block b in the order `order` (original indices) over insns `in`: every read's fingerprint
 * in order of (insn, use, unit) into rd[base[insn] + ...], the state at the end into st. */
static void run_block(const st_sass_insn *in, const uint32_t *order, size_t cnt, const size_t *base, fp *rd,
		      fp *st)
{
	for (unsigned u = 0; u < NU; u++)
		fp_entry(&st[u], u);
	for (size_t q = 0; q < cnt; q++) {
		uint32_t i = order[q];
		const st_sass_insn *x = &in[i];
		size_t at = base[i];
		for (unsigned k = 0; k < x->nuses; k++)
			for (unsigned t = 0; x->uses[k].file != ST_RF_B && t < x->uses[k].count; t++)
				rd[at++] = st[unit(x->uses[k].file, x->uses[k].index + t)];
		for (unsigned d = 0; d < x->ndefs; d++)
			for (unsigned t = 0; x->defs[d].file != ST_RF_B && t < x->defs[d].count; t++)
				fp_def(&st[unit(x->defs[d].file, x->defs[d].index + t)], i, d, t, x->guard >= 0);
	}
}

#define NW (NU / 64)
typedef struct bits { uint64_t w[NW]; } bits;
static void b_set(bits *s, unsigned u) { s->w[u / 64] |= 1ull << (u % 64); }
static bool b_has(const bits *s, unsigned u) { return s->w[u / 64] >> (u % 64) & 1; }

static bool indirect(const st_sass_insn *x)
{
	static const char *const v[] = {"BRX", "BRXU", "JMX", "JMXU", "JMP", "CALL", "RET"};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		size_t n = strlen(v[i]);
		if (!strncmp(x->opcode, v[i], n) && (x->opcode[n] == 0 || x->opcode[n] == '.'))
			return true;
	}
	return false;
}

/* Units live at each block's end in the original (backward fixpoint; indirect control: all). */
static bits *live_out(const st_sass_insn *in, const ckr_blocks *bl)
{
	size_t nb = bl->nb ? bl->nb : 1;
	bits *use = calloc(nb, sizeof *use), *def = calloc(nb, sizeof *def), *lin = calloc(nb, sizeof *lin);
	bits *out = calloc(nb, sizeof *out);
	bool *all = calloc(nb, sizeof *all);
	if (!use || !def || !lin || !out || !all) {
		free(use), free(def), free(lin), free(out), free(all);
		return NULL;
	}
	for (size_t b = 0; b < bl->nb; b++)
		for (uint32_t i = bl->first[b]; i <= bl->last[b]; i++) {
			const st_sass_insn *x = &in[i];
			all[b] |= indirect(x);
			for (unsigned k = 0; k < x->nuses; k++)
				for (unsigned t = 0; x->uses[k].file != ST_RF_B && t < x->uses[k].count; t++)
					if (!b_has(&def[b], unit(x->uses[k].file, x->uses[k].index + t)))
						b_set(&use[b], unit(x->uses[k].file, x->uses[k].index + t));
			for (unsigned d = 0; x->guard < 0 && d < x->ndefs; d++)
				for (unsigned t = 0; x->defs[d].file != ST_RF_B && t < x->defs[d].count; t++)
					b_set(&def[b], unit(x->defs[d].file, x->defs[d].index + t));
		}
	for (bool again = true; again;) {
		again = false;
		for (size_t b = bl->nb; b-- > 0;)
			for (int w = 0; w < NW; w++) {
				uint64_t o = all[b] ? ~0ull : 0;
				for (int e = 0; e < 2; e++)
					if (bl->succ[b][e] >= 0 && (size_t)bl->succ[b][e] < bl->nb)
						o |= lin[bl->succ[b][e]].w[w];
				uint64_t i = use[b].w[w] | (o & ~def[b].w[w]);
				again |= o != out[b].w[w] || i != lin[b].w[w];
				out[b].w[w] = o;
				lin[b].w[w] = i;
			}
	}
	free(use), free(def), free(lin), free(all);
	return out;
}

static void unit_name(char *buf, size_t n, unsigned u)
{
	static const char *const f[] = {"R", "UR", "P", "UP", "B"};
	snprintf(buf, n, "%s%u", f[u / 256 % 5], u % 256);
}

/* One block: reads and live-out units compared between original and rewrite. */
static void ckr_block(const st_sass_insn *oin, const st_sass_insn *tin, const uint32_t *map, const ckr_blocks *bl,
		      size_t b, const bits *live, const size_t *base, fp *ord, fp *trd, fp *ost, fp *tst,
		      ckr_report_fn bad, void *ctx)
{
	uint32_t f = bl->first[b], cnt = bl->last[b] - f + 1;
	uint32_t *order = calloc(cnt, sizeof *order); /* cnt >= 1: a block has an insn */
	if (!order)
		return;
	for (uint32_t q = 0; q < cnt; q++) {
		order[q] = f + q;
		if (oin[map[f + q]].block != b) { /* left its block: reported by the place rule */
			free(order);
			return;
		}
	}
	run_block(oin, order, cnt, base, ord, ost);
	memcpy(order, map + f, cnt * sizeof *order);
	run_block(tin, order, cnt, base, trd, tst);
	for (uint32_t q = 0; q < cnt; q++) {
		uint32_t i = map[f + q];
		const st_sass_insn *o = &oin[i], *t = &tin[i];
		size_t at = base[i];
		for (unsigned k = 0; k < o->nuses; k++)
			for (unsigned x = 0; o->uses[k].file != ST_RF_B && x < o->uses[k].count; x++, at++)
				if (!fp_eq(&ord[at], &trd[at])) {
					char a[16], c[16], msg[200];
					unit_name(a, sizeof a, unit(t->uses[k].file, t->uses[k].index + x));
					unit_name(c, sizeof c, unit(o->uses[k].file, o->uses[k].index + x));
					snprintf(msg, sizeof msg, "%s reads %s (%s in the original) from another definition than the original did",
						 o->opcode, a, c);
					bad(ctx, f + q, msg);
				}
	}
	for (unsigned u = 0; u < NU; u++)
		if (b_has(&live[b], u) && !fp_eq(&ost[u], &tst[u])) {
			char a[16], msg[200];
			unit_name(a, sizeof a, u);
			snprintf(msg, sizeof msg, "%s, live at the end of the block, holds another definition than in the original", a);
			bad(ctx, bl->last[b], msg);
		}
	free(order);
}

void ckr_dataflow(const st_sass_insn *oin, const st_sass_insn *tin, size_t n, const uint32_t *map,
		  const ckr_blocks *bl, ckr_report_fn bad, void *ctx)
{
	size_t *base = malloc((n + 1) * sizeof *base), total = 0;
	for (size_t i = 0; base && i < n; i++) {
		base[i] = total;
		for (unsigned k = 0; k < oin[i].nuses; k++)
			total += oin[i].uses[k].file != ST_RF_B ? oin[i].uses[k].count : 0;
	}
	fp *ord = malloc((total ? total : 1) * sizeof *ord), *trd = malloc((total ? total : 1) * sizeof *trd);
	fp *ost = malloc(NU * sizeof *ost), *tst = malloc(NU * sizeof *tst);
	bits *live = live_out(oin, bl);
	if (!base || !ord || !trd || !ost || !tst || !live)
		bad(ctx, 0, "dataflow rule: out of memory");
	for (size_t b = 0; base && ord && trd && ost && tst && live && b < bl->nb; b++)
		ckr_block(oin, tin, map, bl, b, live, base, ord, trd, ost, tst, bad, ctx);
	free(base), free(ord), free(trd), free(ost), free(tst), free(live);
}
