/* One instruction's text -> opcode, guard, operands with roles, def and use sets.
 *
 * nvdisasm prints `[@[!]Pg] OPCODE.MODS op, op, ...`.  The rules that turn operands into
 * register definitions and uses (which operands are written, how many registers each
 * covers) are here; they were checked against `nvdisasm -plr` on every fixture
 * (docs/sass.md lists the agreement and the known differences). */
#include "latency.h"
#include "sass_internal.h"
#include "util/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPNDS 16
#define MAX_SUBS 6

enum { OK_REG, OK_MEM, OK_IMM, OK_LABEL, OK_SPECIAL, OK_LIST, OK_OTHER };

struct sub { /* a register inside brackets: always read */
	uint8_t file, count;
	uint16_t index;
};
struct opnd {
	const char *s;
	size_t n;
	int kind;
	/* OK_REG */
	uint8_t file, zero, neg, wide; /* wide: registers named by a .64 suffix (1 or 2) */
	uint16_t index;
	/* OK_MEM (and indirect constants) */
	struct sub subs[MAX_SUBS];
	unsigned nsub;
	int is_desc; /* desc[..] or gdesc[..] prefix */
	int all_preds; /* "PR" / "UPR": every predicate */
};

static int is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* A register name at s (n bytes): file, index, zero.  Returns the name length, 0 if none. */
static size_t reg_name(const char *s, size_t n, uint8_t *file, uint16_t *index, uint8_t *zero)
{
	size_t p = 0;
	uint8_t f;
	unsigned limit;
	if (n >= 2 && s[0] == 'U' && s[1] == 'R') {
		f = ST_RF_UR;
		p = 2;
		limit = 63;
	} else if (n >= 2 && s[0] == 'U' && s[1] == 'P') {
		f = ST_RF_UP;
		p = 2;
		limit = 7;
	} else if (n >= 1 && s[0] == 'R') {
		f = ST_RF_R;
		p = 1;
		limit = 255;
	} else if (n >= 1 && s[0] == 'P') {
		f = ST_RF_P;
		p = 1;
		limit = 7;
	} else if (n >= 1 && s[0] == 'B') {
		f = ST_RF_B;
		p = 1;
		limit = 16;
	} else {
		return 0;
	}
	if (p < n && ((s[p] == 'Z' && (f == ST_RF_R || f == ST_RF_UR)) || (s[p] == 'T' && (f == ST_RF_P || f == ST_RF_UP)))) {
		if (p + 1 < n && is_ident(s[p + 1]))
			return 0;
		*file = f;
		*index = (uint16_t)limit;
		*zero = 1;
		return p + 1;
	}
	size_t d = p;
	unsigned v = 0;
	while (d < n && isdigit((unsigned char)s[d]) && d - p < 4) {
		v = v * 10 + (unsigned)(s[d] - '0');
		d++;
	}
	if (d == p || (d < n && is_ident(s[d])) || v >= limit)
		return 0;
	*file = f;
	*index = (uint16_t)v;
	*zero = 0;
	return d;
}

/* Registers inside one [...] group. */
static void parse_brackets(struct opnd *o, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		if (isalpha((unsigned char)s[i]) && (i == 0 || !is_ident(s[i - 1]))) {
			uint8_t f, z;
			uint16_t idx;
			size_t len = reg_name(s + i, n - i, &f, &idx, &z);
			if (len) {
				uint8_t count = 1;
				if (i + len + 3 <= n && !memcmp(s + i + len, ".64", 3))
					count = 2;
				if (!z && o->nsub < MAX_SUBS) {
					o->subs[o->nsub].file = f;
					o->subs[o->nsub].index = idx;
					o->subs[o->nsub].count = count;
					o->nsub++;
				}
				i += len;
				continue;
			}
			while (i < n && is_ident(s[i]))
				i++;
			continue;
		}
		i++;
	}
}

/* A memory operand (and an indirect constant) whose first '[' is at s[pre]: [..], desc[..][..],
 * gdesc[..], c[..][..], cx[..][..].  Every register inside the groups is read. */
static void parse_mem(struct opnd *o, size_t pre)
{
	const char *s = o->s;
	size_t n = o->n;
	if ((pre == 4 && !memcmp(s, "desc", 4)) || (pre == 5 && !memcmp(s, "gdesc", 5)))
		o->is_desc = 1;
	o->kind = OK_MEM;
	size_t i = pre;
	int group = 0;
	while (i < n && s[i] == '[') {
		const char *close = memchr(s + i, ']', n - i);
		if (!close)
			break;
		size_t len = (size_t)(close - (s + i)) - 1;
		unsigned before = o->nsub;
		parse_brackets(o, s + i + 1, len);
		/* desc[URx] and gdesc[URx] name uniform descriptors: a pair / A,B pairs */
		if (o->is_desc && group == 0 && o->nsub > before)
			o->subs[before].count = s[0] == 'g' ? 4 : 2;
		i += len + 2;
		group++;
	}
}

/* What follows the prefix characters (s, n: the rest of the operand): an immediate, a special
 * register, every predicate (PR, UPR) or a register (neg: a '!' came before it); else OK_OTHER. */
static void parse_value(struct opnd *o, const char *s, size_t n, int neg)
{
	if (n && isdigit((unsigned char)s[0])) {
		o->kind = OK_IMM;
		return;
	}
	if (n >= 3 && (!strncmp(s, "INF", 3) || !strncmp(s, "NAN", 3) || !strncmp(s, "QNAN", 4))) {
		o->kind = OK_IMM;
		return;
	}
	if (n >= 3 && !memcmp(s, "SR", 2) && (s[2] == '_' || s[2] == 'Z')) {
		o->kind = OK_SPECIAL;
		return;
	}
	if ((n == 2 && !memcmp(s, "PR", 2)) || (n == 3 && !memcmp(s, "UPR", 3))) {
		o->kind = OK_SPECIAL;
		o->all_preds = s[0] == 'U' ? 2 : 1;
		return;
	}
	uint8_t f, z;
	uint16_t idx;
	size_t len = reg_name(s, n, &f, &idx, &z);
	if (!len)
		return;
	o->kind = OK_REG;
	o->file = f;
	o->index = idx;
	o->zero = z;
	o->neg = (uint8_t)neg;
	o->wide = 1;
	if (len + 3 <= n && !memcmp(s + len, ".64", 3))
		o->wide = 2;
}

static void parse_opnd(struct opnd *o)
{
	const char *s = o->s;
	size_t n = o->n;
	o->kind = OK_OTHER;
	if (!n)
		return;
	if (s[0] == '`') {
		o->kind = OK_LABEL;
		return;
	}
	if (s[0] == '{') {
		o->kind = OK_LIST;
		return;
	}
	const char *br = memchr(s, '[', n);
	if (br) {
		parse_mem(o, (size_t)(br - s));
		return;
	}
	size_t i = 0;
	int neg = 0;
	while (i < n && (s[i] == '-' || s[i] == '!' || s[i] == '|' || s[i] == '~' || s[i] == '+')) {
		if (s[i] == '!')
			neg = 1;
		i++;
	}
	parse_value(o, s + i, n - i, neg);
}

/* Split "a, b, c" at top-level commas. */
static unsigned split_operands(const char *s, struct opnd *ops)
{
	unsigned n = 0;
	int depth = 0;
	const char *start = s;
	for (const char *p = s;; p++) {
		char c = *p;
		if (c == '[' || c == '{' || c == '(')
			depth++;
		else if ((c == ']' || c == '}' || c == ')') && depth > 0)
			depth--;
		if ((c == ',' && depth == 0) || c == 0) {
			const char *a = start, *b = p;
			while (a < b && isspace((unsigned char)*a))
				a++;
			while (b > a && isspace((unsigned char)b[-1]))
				b--;
			if (b > a && n < MAX_OPNDS) {
				memset(&ops[n], 0, sizeof ops[n]);
				ops[n].s = a;
				ops[n].n = (size_t)(b - a);
				parse_opnd(&ops[n]);
				n++;
			}
			start = p + 1;
			if (c == 0)
				break;
		}
	}
	return n;
}

/* ---- modifiers ---------------------------------------------------------------- */

/* Whether ".MOD" occurs among the modifiers (exact component match). */
static int has_mod(const char *opc, size_t n, const char *mod)
{
	size_t m = strlen(mod);
	for (size_t i = 0; i < n; i++) {
		if (opc[i] != '.')
			continue;
		if (i + 1 + m <= n && !memcmp(opc + i + 1, mod, m) && (i + 1 + m == n || opc[i + 1 + m] == '.'))
			return 1;
	}
	return 0;
}

/* The k-th modifier (0-based) into buf. */
static int mod_at(const char *opc, size_t n, unsigned k, char *buf, size_t bn)
{
	unsigned seen = 0;
	for (size_t i = 0; i < n; i++) {
		if (opc[i] != '.')
			continue;
		if (seen++ == k) {
			size_t j = i + 1;
			while (j < n && opc[j] != '.')
				j++;
			size_t len = j - i - 1;
			if (len >= bn)
				len = bn - 1;
			memcpy(buf, opc + i + 1, len);
			buf[len] = 0;
			return 1;
		}
	}
	return 0;
}

static int is_mnem(const char *m, size_t mlen, const char *name)
{
	return strlen(name) == mlen && !memcmp(m, name, mlen);
}

/* Data size in registers from .64/.128/.U8... (loads, stores, atomics). */
static unsigned data_regs(const char *opc, size_t n)
{
	if (has_mod(opc, n, "128"))
		return 4;
	if (has_mod(opc, n, "64") || has_mod(opc, n, "U64") || has_mod(opc, n, "S64") || has_mod(opc, n, "F64"))
		return 2;
	return 1;
}

static int is_64bit_type(const char *t)
{
	return !strcmp(t, "F64") || !strcmp(t, "S64") || !strcmp(t, "U64");
}

/* Conversions: register counts of destination and source from the type modifiers. */
static void conv_regs(const char *m, size_t mlen, const char *opc, size_t n, unsigned *dst, unsigned *src)
{
	char buf[16];
	int ftypes[2] = {0, 0}, itypes[2] = {0, 0}; /* [0]: seen, [1]: 64-bit */
	int first_f = -1;                           /* order in which float/int types appear */
	unsigned nf = 0, ni = 0;
	int fw[2] = {0, 0};
	for (unsigned k = 0; mod_at(opc, n, k, buf, sizeof buf); k++) {
		int is_f = (buf[0] == 'F' && isdigit((unsigned char)buf[1])) || !strcmp(buf, "BF16") || !strcmp(buf, "TF32");
		int is_i = (buf[0] == 'S' || buf[0] == 'U') && isdigit((unsigned char)buf[1]);
		if (is_f) {
			if (nf < 2)
				fw[nf] = is_64bit_type(buf);
			nf++;
			ftypes[0] = 1;
			ftypes[1] |= is_64bit_type(buf);
			if (first_f < 0)
				first_f = 1;
		} else if (is_i) {
			ni++;
			itypes[0] = 1;
			itypes[1] |= is_64bit_type(buf);
			if (first_f < 0)
				first_f = 0;
		}
	}
	(void)itypes;
	*dst = *src = 1;
	if (is_mnem(m, mlen, "F2I")) {
		*dst = itypes[1] ? 2 : 1;
		*src = ftypes[1] ? 2 : 1;
	} else if (is_mnem(m, mlen, "I2F")) {
		*dst = ftypes[1] ? 2 : 1;
		*src = itypes[1] ? 2 : 1;
	} else if (is_mnem(m, mlen, "F2F")) {
		/* F2F.dst.src */
		*dst = nf >= 1 && fw[0] ? 2 : 1;
		*src = nf >= 2 && fw[1] ? 2 : 1;
	} else if (is_mnem(m, mlen, "FRND")) {
		*dst = *src = ftypes[1] ? 2 : 1;
	} else if (is_mnem(m, mlen, "I2I")) {
		*dst = *src = itypes[1] ? 2 : 1;
	}
}

/* HMMA/IMMA/DMMA shapes: registers of D, A, B, C. */
static void mma_regs(const char *m, size_t mlen, const char *opc, size_t n, unsigned r[4])
{
	char shape[16] = "";
	mod_at(opc, n, 0, shape, sizeof shape);
	int f32 = has_mod(opc, n, "F32") || is_mnem(m, mlen, "IMMA") || is_mnem(m, mlen, "BMMA");
	r[0] = r[3] = f32 ? 4 : 2;
	r[1] = 4;
	r[2] = 2;
	if (is_mnem(m, mlen, "DMMA")) {
		r[0] = r[3] = 2;
		r[1] = r[2] = 1;
		return;
	}
	if (!strcmp(shape, "1688") || !strcmp(shape, "8816") || !strcmp(shape, "8832")) {
		r[1] = 2;
		r[2] = 1;
		if (!strcmp(shape, "8816") || !strcmp(shape, "8832")) {
			r[0] = r[3] = 2;
			r[1] = 1;
		}
		if (has_mod(opc, n, "TF32")) {
			r[1] = 4;
			r[2] = 2;
		}
	} else if (!strcmp(shape, "1684")) {
		r[1] = 2;
		r[2] = 1;
	}
}

/* HGMMA.64xNxK.F32|F16...: accumulator registers. */
static unsigned gmma_acc_regs(const char *opc, size_t n)
{
	char shape[24] = "";
	mod_at(opc, n, 0, shape, sizeof shape);
	unsigned M = 0, N = 0, K = 0;
	if (sscanf(shape, "%ux%ux%u", &M, &N, &K) != 3 || N == 0 || N > 256)
		return 1;
	if (has_mod(opc, n, "F16"))
		return N / 4 ? N / 4 : 1;
	return N / 2; /* F32, S32 */
}

/* ---- def/use assembly ------------------------------------------------------------ */

static void add_reg(st_sass_reg *set, unsigned *n, unsigned file, unsigned index, unsigned count, unsigned slot)
{
	if (*n >= ST_MAX_REGS || count == 0)
		return;
	unsigned limit = file == ST_RF_R ? 255 : file == ST_RF_UR ? 63 : file == ST_RF_B ? 16 : 7;
	if (index >= limit)
		return; /* RZ, URZ, PT, UPT */
	if (index + count > limit)
		count = limit - index;
	for (unsigned i = 0; i < *n; i++) /* same run again: keep one (lowest slot wins) */
		if (set[i].file == file && set[i].index == index && set[i].count == count) {
			if (slot < set[i].slot)
				set[i].slot = (uint8_t)slot;
			return;
		}
	set[*n].file = (uint8_t)file;
	set[*n].index = (uint16_t)index;
	set[*n].count = (uint8_t)count;
	set[*n].slot = (uint8_t)slot;
	(*n)++;
}

static void add_subs(struct st_analysis *a, const struct opnd *o, unsigned slot)
{
	for (unsigned k = 0; k < o->nsub; k++)
		add_reg(a->uses, &a->nuses, o->subs[k].file, o->subs[k].index, o->subs[k].count, slot);
}
/* ---- st_sass_analyze and its steps ----------------------------------------------- */

/* One instruction while it is analysed: its text split up and the size rules that apply.
 * Every field is set before the step that reads it (st_sass_analyze runs them in order). */
struct insn {
	int sm;
	const char *text; /* the whole line */
	const char *opc;  /* the opcode with modifiers, on bytes */
	size_t on;
	const char *m; /* the mnemonic (= opc), mlen bytes */
	size_t mlen;
	const char *p; /* the operands text, NUL-terminated */
	int dk;        /* ST_DK_*: which leading operands may be written */
	struct opnd ops[MAX_OPNDS];
	unsigned nops;
	int is_mma, is_gmma, is_conv, is_fp64, is_mem_data;
	unsigned mma[4];        /* registers of D, A, B, C (is_mma) */
	unsigned conv_d, conv_s; /* registers of destination and source (is_conv) */
	unsigned wide64;        /* 2 when a .64 modifier widens the registers, else 1 */
	unsigned pr_mask;       /* P2R/R2P: the predicates named by the mask */
	unsigned ndef_ops;      /* how many leading operands are written */
};

/* The guard [@[!]Pg] at *pp, if any: sets a->guard*, adds its use, moves *pp past it. */
static st_status parse_guard(const char **pp, const char *text, struct st_analysis *a, st_error *err)
{
	const char *p = *pp;
	if (*p == '@') {
		const char *g = p + 1;
		if (*g == '!') {
			a->guard_neg = 1;
			g++;
		}
		uint8_t f, z;
		uint16_t idx;
		size_t len = reg_name(g, strcspn(g, " \t"), &f, &idx, &z);
		if (!len || (f != ST_RF_P && f != ST_RF_UP))
			return st_error_set(err, ST_EFORMAT, "bad guard predicate in '%.60s'", text);
		a->guard_file = f;
		a->guard = z ? -1 : (int8_t)idx;
		if (!z)
			add_reg(a->uses, &a->nuses, f, idx, 1, ST_SLOT_G);
		p = g + len;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	*pp = p;
	return ST_OK;
}

/* The opcode at p: sets c->opc, on, m, mlen, p (the operands), a's offsets and opinfo fields. */
static st_status parse_opcode(struct insn *c, const char *p, struct st_analysis *a, st_error *err)
{
	const char *opc = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	size_t on = (size_t)(p - opc);
	if (!on || !isupper((unsigned char)opc[0]))
		return st_error_set(err, ST_EFORMAT, "no opcode in '%.60s'", c->text);
	a->op_start = (size_t)(opc - c->text);
	a->opcode_len = on;
	while (*p == ' ' || *p == '\t')
		p++;
	a->operands = (size_t)(p - c->text);
	size_t mlen = strcspn(opc, ". \t");
	if (mlen > on)
		mlen = on;
	c->opc = opc;
	c->on = on;
	c->m = opc;
	c->mlen = mlen;
	c->p = p;

	const struct st_opinfo *info = st_opinfo_find(c->m, mlen);
	c->dk = info ? info->dk : ST_DK_ONE;
	a->cls = info ? info->cls : ST_CLASS_OTHER;
	a->space = info ? info->space : ST_SPACE_NONE;
	a->flags = info ? info->flags : 0;
	return ST_OK;
}

/* Latency-table opcode: the mnemonic, or mnemonic.mod when the tables list it (-1: neither). */
static void find_lat_op(const struct insn *c, struct st_analysis *a)
{
	const char *opc = c->opc;
	size_t mlen = c->mlen;
	char name[32];
	size_t n2 = strcspn(opc + mlen + (opc[mlen] == '.'), ". \t");
	a->lat_op = -1;
	if (opc[mlen] == '.' && mlen + 1 + n2 < sizeof name) {
		memcpy(name, opc, mlen + 1 + n2);
		name[mlen + 1 + n2] = 0;
		a->lat_op = (int16_t)st_lat_op_lookup(name);
	}
	if (a->lat_op < 0 && mlen < sizeof name) {
		memcpy(name, opc, mlen);
		name[mlen] = 0;
		a->lat_op = (int16_t)st_lat_op_lookup(name);
	}
}

/* Variable latency (R2UR before sm_90), WARPGROUP and gsb0 conditions, the first label. */
static void find_conditions(const struct insn *c, struct st_analysis *a)
{
	/* variable latency: R2UR is decoupled before sm_90 */
	if (is_mnem(c->m, c->mlen, "R2UR") && c->sm < 90) {
		a->flags |= ST_F_VARLAT;
		a->cls = ST_CLASS_VARLAT;
	}
	if (is_mnem(c->m, c->mlen, "WARPGROUP")) {
		if (has_mod(c->opc, c->on, "ARRIVE"))
			a->lat_cond |= ST_LC_ARV;
		else if (has_mod(c->opc, c->on, "WAIT"))
			a->lat_cond |= ST_LC_WAIT;
		else if (has_mod(c->opc, c->on, "DEPBAR"))
			a->lat_cond |= ST_LC_DEPBAR;
	}
	for (unsigned i = 0; i < c->nops; i++)
		if (c->ops[i].n == 4 && !memcmp(c->ops[i].s, "gsb0", 4))
			a->lat_cond |= ST_LC_GSB0;
	for (unsigned i = 0; i < c->nops; i++)
		if (c->ops[i].kind == OK_LABEL && !a->label) {
			const char *l = c->ops[i].s + 1;
			size_t ln = c->ops[i].n - 1;
			if (ln >= 2 && l[0] == '(' && l[ln - 1] == ')') {
				l++;
				ln -= 2;
			}
			a->label = l;
			a->label_len = ln;
		}
}

/* The size rules: opcode families, MMA/conversion register counts, wide64, the P2R/R2P mask. */
static void find_sizes(struct insn *c, const struct st_analysis *a)
{
	const char *m = c->m;
	size_t mlen = c->mlen;
	c->is_mma = is_mnem(m, mlen, "HMMA") || is_mnem(m, mlen, "IMMA") || is_mnem(m, mlen, "DMMA") ||
		    is_mnem(m, mlen, "BMMA");
	c->is_gmma = is_mnem(m, mlen, "HGMMA") || is_mnem(m, mlen, "IGMMA") || is_mnem(m, mlen, "QGMMA") ||
		     is_mnem(m, mlen, "BGMMA");
	c->is_conv = is_mnem(m, mlen, "F2I") || is_mnem(m, mlen, "I2F") || is_mnem(m, mlen, "F2F") ||
		     is_mnem(m, mlen, "FRND") || is_mnem(m, mlen, "I2I");
	c->is_fp64 = m[0] == 'D' && (is_mnem(m, mlen, "DADD") || is_mnem(m, mlen, "DMUL") || is_mnem(m, mlen, "DFMA") ||
				     is_mnem(m, mlen, "DMNMX") || is_mnem(m, mlen, "DSETP") || is_mnem(m, mlen, "DSET"));
	c->is_mem_data = a->cls == ST_CLASS_MEMORY && !(a->flags & ST_F_ASYNC);
	for (unsigned k = 0; k < 4; k++)
		c->mma[k] = 1;
	if (c->is_mma)
		mma_regs(m, mlen, c->opc, c->on, c->mma);
	c->conv_d = c->conv_s = 1;
	if (c->is_conv)
		conv_regs(m, mlen, c->opc, c->on, &c->conv_d, &c->conv_s);
	c->wide64 = has_mod(c->opc, c->on, "64") && !c->is_mem_data && !is_mnem(m, mlen, "SHFL") ? 2 : 1;

	/* P2R/R2P: the predicates named by the mask (the last immediate) */
	c->pr_mask = 0x7f;
	for (unsigned i = 0; i < c->nops; i++)
		if (c->ops[i].kind == OK_IMM)
			c->pr_mask = (unsigned)strtoul(c->ops[i].s, NULL, 0) & 0x7f;
}

/* Which leading operands are written: c->ndef_ops (0 .. nops), from the opinfo's dk. */
static void count_def_ops(struct insn *c)
{
	const struct opnd *ops = c->ops;
	unsigned nops = c->nops;
	int dk = c->dk;
	unsigned ndef_ops = 0;
	if (dk != ST_DK_NONE && nops && (ops[0].kind == OK_REG || (ops[0].kind == OK_SPECIAL && ops[0].all_preds))) {
		ndef_ops = 1;
		int first_pred = ops[0].kind == OK_REG && (ops[0].file == ST_RF_P || ops[0].file == ST_RF_UP);
		int is_vote = is_mnem(c->m, c->mlen, "VOTE") || is_mnem(c->m, c->mlen, "VOTEU");
		if (dk == ST_DK_TWO && nops > 1 && ops[1].kind == OK_REG && !ops[1].neg && !(is_vote && first_pred))
			ndef_ops = 2;
		if (dk == ST_DK_PFIRST && first_pred && nops > 1 && ops[1].kind == OK_REG)
			ndef_ops = 2;
		if (dk == ST_DK_CARRY)
			while (ndef_ops < nops && ndef_ops < 3 && ops[ndef_ops].kind == OK_REG && !ops[ndef_ops].neg &&
			       (ops[ndef_ops].file == ST_RF_P || ops[ndef_ops].file == ST_RF_UP) && ndef_ops + 1 < nops)
				ndef_ops++;
	}
	c->ndef_ops = ndef_ops;
}

/* Registers a written R/UR operand covers (1 for other files). */
static unsigned def_count(const struct insn *c, const struct st_analysis *a, const struct opnd *o)
{
	const char *m = c->m, *opc = c->opc;
	size_t mlen = c->mlen, on = c->on;
	unsigned count = 1;
	if (o->file == ST_RF_R || o->file == ST_RF_UR) {
		if (c->is_gmma)
			count = gmma_acc_regs(opc, on);
		else if (c->is_mma)
			count = c->mma[0];
		else if (c->is_conv)
			count = c->conv_d;
		else if (c->is_fp64)
			count = 2;
		else if (c->is_mem_data && (a->flags & ST_F_LOAD))
			count = data_regs(opc, on);
		else if (is_mnem(m, mlen, "LDSM"))
			count = 1;
		else if (is_mnem(m, mlen, "SYNCS") && has_mod(opc, on, "ARRIVE"))
			count = 2; /* the 64-bit arrival state */
		else if (is_mnem(m, mlen, "LEPC"))
			count = 2; /* the 64-bit PC (-plr, cuda/printf, Rd moved apart) */
		else if (is_mnem(m, mlen, "CS2R"))
			count = has_mod(opc, on, "32") ? 1 : 2;
		else if ((is_mnem(m, mlen, "IMAD") || is_mnem(m, mlen, "UIMAD")) && has_mod(opc, on, "WIDE"))
			count = 2;
		else
			count = c->wide64;
		if (is_mnem(m, mlen, "LDSM"))
			count = has_mod(opc, on, "4") ? 4 : has_mod(opc, on, "2") ? 2 : 1;
	}
	return count;
}

/* Definitions: the first c->ndef_ops operands, in order, at ST_SLOT_D. */
static void add_defs(const struct insn *c, struct st_analysis *a)
{
	for (unsigned i = 0; i < c->ndef_ops; i++) {
		const struct opnd *o = &c->ops[i];
		if (o->kind == OK_SPECIAL) { /* R2P PR, R0, mask: the predicates in the mask */
			for (unsigned b = 0; b < 7; b++)
				if (c->pr_mask >> b & 1)
					add_reg(a->defs, &a->ndefs, o->all_preds == 2 ? ST_RF_UP : ST_RF_P, b, 1, ST_SLOT_D);
			continue;
		}
		add_reg(a->defs, &a->ndefs, o->file, o->index, def_count(c, a, o), ST_SLOT_D);
	}
}

/* The registers of a memory operand, the src-th source, read at slot. */
static void add_mem_use(const struct insn *c, struct st_analysis *a, const struct opnd *o, unsigned src, unsigned slot)
{
	struct opnd mo = *o;
	/* ATOMG.E.CAS ... [R8]: a 64-bit address printed without .64 */
	if (a->space == ST_SPACE_GLOBAL && (a->flags & ST_F_ATOMIC) && has_mod(c->opc, c->on, "E") && !mo.is_desc)
		for (unsigned k = 0; k < mo.nsub; k++)
			if (mo.subs[k].file == ST_RF_R)
				mo.subs[k].count = 2;
	/* UTMA* [URa], [URb], UBLKCP: uniform groups printed as one register (groups.c) */
	unsigned tg = st_sass_tma_group(c->opc, c->on, src);
	if (tg && mo.nsub && mo.subs[0].file == ST_RF_UR)
		mo.subs[0].count = (uint8_t)tg;
	add_subs(a, &mo, slot);
}

/* Registers a read register operand covers: o is operand i, the src-th source; may move *slot. */
static unsigned use_count(const struct insn *c, const struct opnd *o, unsigned i, unsigned src, unsigned *slot)
{
	const char *m = c->m, *opc = c->opc;
	size_t mlen = c->mlen, on = c->on;
	unsigned count = o->wide;
	if (o->file == ST_RF_R || o->file == ST_RF_UR) {
		if (c->is_gmma) {
			/* HGMMA D, [A regs,] gdesc[..], C: A is 4 registers, C the accumulator */
			int is_a = i == 1 && o->file == ST_RF_R;
			count = is_a ? 4 : o->file == ST_RF_R ? gmma_acc_regs(opc, on) : 1;
			*slot = is_a ? ST_SLOT_A : ST_SLOT_C;
		} else if (c->is_mma) {
			count = src < 3 ? c->mma[src + 1] : 1;
		} else if (c->is_conv) {
			count = c->conv_s;
		} else if (c->is_fp64) {
			count = 2;
		} else if (st_sass_stsm_regs(opc, on)) {
			count = st_sass_stsm_regs(opc, on); /* STSM.16.M88.4: 4 registers (groups.c) */
		} else if (c->is_mem_data) {
			count = data_regs(opc, on);
		} else if ((is_mnem(m, mlen, "IMAD") || is_mnem(m, mlen, "UIMAD")) && has_mod(opc, on, "WIDE")) {
			count = src == 2 ? 2 : 1;
		} else if ((is_mnem(m, mlen, "IMAD") || is_mnem(m, mlen, "UIMAD")) && has_mod(opc, on, "HI")) {
			/* IMAD.HI Rd, [Pu,] Ra, Rb, Rc: Rd = high word of Ra*Rb + {Rc+1:Rc}, the
			 * addend is a 64-bit pair although the text prints one register (issue 15:
			 * nvdisasm -plr marks Rc+1 read once Rc is moved off ptxas's choice; ptxas
			 * always picks an even Rc with Rc+1 = Ra, umulhi(a,b)+a).  UIMAD.HI is in
			 * no fixture: read as the same form, the conservative side. */
			count = src == 2 ? 2 : 1;
		} else if (is_mnem(m, mlen, "RET") || is_mnem(m, mlen, "CALL") || is_mnem(m, mlen, "BRX") ||
			   is_mnem(m, mlen, "JMX") || is_mnem(m, mlen, "BRXU") || is_mnem(m, mlen, "JMXU")) {
			/* RET.REL.NODEC Ra, BRX Ra: a 64-bit address (BRX: -plr with Ra moved off
			 * ptxas's choice, cuda/jumptable; JMX, BRXU, JMXU in no fixture: alike) */
			count = 2;
		} else if (c->wide64 == 2) {
			count = 2;
		}
	}
	return count;
}

/* Uses of the operands after the definitions, with positional slots a, b, c (and c for
 * anything later); src counts sources: memory, register, immediate and special operands. */
static void add_uses(const struct insn *c, struct st_analysis *a)
{
	unsigned src = 0;
	for (unsigned i = c->ndef_ops; i < c->nops; i++) {
		const struct opnd *o = &c->ops[i];
		unsigned slot = src == 0 ? ST_SLOT_A : src == 1 ? ST_SLOT_B : ST_SLOT_C;
		if (o->kind == OK_MEM) {
			add_mem_use(c, a, o, src, slot);
			src++;
			continue;
		}
		if (o->kind == OK_SPECIAL && o->all_preds) { /* P2R Rd, PR, Ra, mask */
			for (unsigned b = 0; b < 7; b++)
				if (c->pr_mask >> b & 1)
					add_reg(a->uses, &a->nuses, o->all_preds == 2 ? ST_RF_UP : ST_RF_P, b, 1, slot);
			src++;
			continue;
		}
		if (o->kind != OK_REG) {
			if (o->kind == OK_IMM || o->kind == OK_SPECIAL)
				src++;
			continue;
		}
		unsigned count = use_count(c, o, i, src, &slot);
		add_reg(a->uses, &a->nuses, o->file, o->index, count, slot);
		/* LDGSTS's predicate operand (Pnz in the latency tables) is read and written */
		if (o->file == ST_RF_P && is_mnem(c->m, c->mlen, "LDGSTS"))
			add_reg(a->defs, &a->ndefs, o->file, o->index, 1, ST_SLOT_D);
		src++;
	}
}

/* sm_8x global accesses through the default descriptor: nvdisasm hides desc[URx], but
 * the instruction reads the pair (loads name it in bits 32..37, stores and atomics in
 * 64..69, as LDGSTS does).  Only the descriptor forms of the opcodes (0x9xx) have one. */
static void add_default_desc(const struct insn *c, const uint8_t *word, struct st_analysis *a)
{
	int is_ldgsts = is_mnem(c->m, c->mlen, "LDGSTS");
	if (word && a->space == ST_SPACE_GLOBAL && (is_ldgsts || !(a->flags & ST_F_ASYNC)) &&
	    has_mod(c->opc, c->on, "E") && !strstr(c->p, "desc[") &&
	    (is_ldgsts || ((st_le64(word) >> 8) & 0xf) == 9) && a->cls == ST_CLASS_MEMORY) {
		unsigned ur = (a->flags & (ST_F_STORE | ST_F_ATOMIC)) ? (unsigned)(st_le64(word + 8) & 0x3f)
								       : (unsigned)((st_le64(word) >> 32) & 0x3f);
		add_reg(a->uses, &a->nuses, ST_RF_UR, ur, 2, ST_SLOT_E);
	}
}

/* CALL: the callee may read and write any register; nvdisasm's -plr lists the callee's
 * clobbers, we keep every register (a call is a scheduling barrier anyway) */
static void set_call_clobbers(struct st_analysis *a)
{
	a->ndefs = a->nuses = 0;
	add_reg(a->defs, &a->ndefs, ST_RF_R, 0, 255, ST_SLOT_D);
	add_reg(a->defs, &a->ndefs, ST_RF_UR, 0, 63, ST_SLOT_D);
	add_reg(a->defs, &a->ndefs, ST_RF_P, 0, 7, ST_SLOT_D);
	add_reg(a->defs, &a->ndefs, ST_RF_UP, 0, 7, ST_SLOT_D);
	add_reg(a->uses, &a->nuses, ST_RF_R, 0, 255, ST_SLOT_A);
	add_reg(a->uses, &a->nuses, ST_RF_UR, 0, 63, ST_SLOT_A);
	add_reg(a->uses, &a->nuses, ST_RF_P, 0, 7, ST_SLOT_A);
	add_reg(a->uses, &a->nuses, ST_RF_UP, 0, 7, ST_SLOT_A);
}

st_status st_sass_analyze(int sm, const char *text, const uint8_t *word, struct st_analysis *a, st_error *err)
{
	memset(a, 0, sizeof *a);
	a->guard = -1;
	a->lat_op = -1;
	struct insn c = {.sm = sm, .text = text}; /* every other field zero until its step sets it */
	const char *p = text;
	while (*p == ' ' || *p == '\t')
		p++;
	st_status s;
	if ((s = parse_guard(&p, text, a, err)) != ST_OK)
		return s;
	if ((s = parse_opcode(&c, p, a, err)) != ST_OK)
		return s;
	find_lat_op(&c, a);
	c.nops = split_operands(c.p, c.ops);
	find_conditions(&c, a);
	find_sizes(&c, a);
	count_def_ops(&c);
	add_defs(&c, a);
	add_uses(&c, a);
	add_default_desc(&c, word, a);
	if (is_mnem(c.m, c.mlen, "CALL"))
		set_call_clobbers(a);
	return ST_OK;
}
