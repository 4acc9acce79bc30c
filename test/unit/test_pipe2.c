/* Unit tests of family 3 form 2, prefetch into fresh registers (plugin/sched/pipe2*.c, docs/pipeline.md
 * "Form 2: prefetch into fresh registers"): the exact candidates on the four pipe fixtures with and
 * without a register raise; the rewrite of rowsum's largest candidate word by word (the peel, the
 * hand-overs, I, F, the prefetch block, the back branch, the count) and, with Triton's nvdisasm
 * (ST_TRITON_BIN), re-decoded instruction by instruction; the three rowsq rewrites re-decoded; one
 * refusal per rule from hand-made variants of rowsum (code and listing patched, decoded from buffers). */
#include "testutil.h"
#include "sasstune/pipe.h"
#include "sched/pipe2_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct want { uint32_t header, nloads, loads[4], nmembers, npeel, nhand, regs_before, regs_after; } want;

static void check_cands(const char *fixture, unsigned reglimit, const want *w, size_t nw)
{
	st_test_kernel x;
	st_test_kernel_open(&x, "pipe", fixture);
	st_error err;
	st_pipe_cand *c;
	size_t n;
	if (st_pipe2_find(x.c, x.name, &x.o, reglimit, &c, &n, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(n, nw);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c[i].form, 2);
		assert_int_equal(c[i].header, w[i].header);
		assert_int_equal(c[i].nloads, w[i].nloads);
		for (uint32_t l = 0; l < w[i].nloads; l++)
			assert_int_equal(c[i].loads[l], w[i].loads[l]);
		assert_int_equal(c[i].nmembers, w[i].nmembers);
		assert_int_equal(c[i].npeel, w[i].npeel);
		assert_int_equal(c[i].nhand, w[i].nhand);
		assert_int_equal(c[i].regs_before, w[i].regs_before);
		assert_int_equal(c[i].regs_after, w[i].regs_after);
		assert_int_equal(c[i].sb, 0); /* SB0: set only before the loop (LDC), named by no DEPBAR */
		assert_int_equal(c[i].pred_from, -1);
	}
	st_pipe_cands_free(c);
	st_test_kernel_close(&x);
}

/* Every load's group writes a 64-bit address pair, and below the count 21 the loops leave only R13 R15 R17
 * free (R19 R20 are ptxas's reserve above the highest named register, R18): no aligned pair without a
 * raise (Q9).  With 64 registers: each load alone (the pair R22:R23 above the count, the reserve of 2
 * kept above it, i' R13: 26 registers) and the first two loads (R22..R25: 28); three loads need 16
 * slots, more than the padding (Q8). */
static void find_fixtures(void **state)
{
	(void)state;
	static const char *const fx[] = {"rowsum_f32_256x4096", "rowsq_f32_b32_w1", "rowsq_f16_b32_w1"};
	static const want w[3][5] = {
		{{0x150, 1, {0x1d0}, 3, 3, 1, 21, 26}, {0x150, 1, {0x200}, 4, 4, 1, 21, 26},
		 {0x150, 1, {0x220}, 4, 4, 1, 21, 26}, {0x150, 1, {0x230}, 4, 4, 1, 21, 26},
		 {0x150, 2, {0x1d0, 0x200}, 7, 7, 2, 21, 28}},
		{{0x160, 1, {0x1e0}, 3, 3, 1, 21, 26}, {0x160, 1, {0x210}, 4, 4, 1, 21, 26},
		 {0x160, 1, {0x230}, 4, 4, 1, 21, 26}, {0x160, 1, {0x240}, 4, 4, 1, 21, 26},
		 {0x160, 2, {0x1e0, 0x210}, 7, 7, 2, 21, 28}},
		{{0x160, 1, {0x1d0}, 3, 3, 1, 21, 26}, {0x160, 1, {0x210}, 4, 4, 1, 21, 26},
		 {0x160, 1, {0x230}, 4, 4, 1, 21, 26}, {0x160, 1, {0x240}, 4, 4, 1, 21, 26},
		 {0x160, 2, {0x1d0, 0x210}, 7, 7, 2, 21, 28}},
	};
	/* rowsq b128: its four loads of one pass share the address R10:R11 (offsets 0, 0x80, 0x100, 0x180), so
	 * alone each sees the others read the pair (Q5); together: 6 members, 4 hand-overs, 36 -> 44 (R38..R41 above the count 36, its reserve of 2 above them) */
	static const want b128 = {0x180, 4, {0x1f0, 0x210, 0x230, 0x250}, 6, 6, 4, 36, 44};
	check_cands("rowsq_f32_b128_w1", 0, NULL, 0);
	check_cands("rowsq_f32_b128_w1", 64, &b128, 1);
	for (size_t f = 0; f < 3; f++) {
		check_cands(fx[f], 0, NULL, 0);
		check_cands(fx[f], 21, NULL, 0);
		check_cands(fx[f], 25, NULL, 0); /* R22:R23 fits under 25, its reserve does not (Q9) */
		check_cands(fx[f], 26, w[f], 4); /* the single loads; two need 28 */
		check_cands(fx[f], 64, w[f], 5);
	}
	st_test_kernel x;
	st_test_kernel_open(&x, "pipe", "rowsum_f32_256x4096");
	st_pipe_cand c;
	st_error err;
	char buf[256];
	assert_int_equal(st_pipe2_make(x.c, x.name, &x.o, 64, 0x150, (uint32_t[]){0x200, 0x1d0}, 2, &c, &err), ST_OK);
	st_pipe_describe(&c, buf, sizeof buf);
	assert_string_equal(buf, "loop 0x150: prefetch 2 loads 0x1d0,0x200, 7 members, 11 inserted, 21 -> 28 registers");
	assert_int_equal(st_pipe2_make(x.c, x.name, &x.o, 0, 0x150, (uint32_t[]){0x1d0}, 1, &c, &err), ST_EILLEGAL);
	assert_string_equal(err.msg, "pipe2 Q9: 0x150: no fresh 2-aligned 2 registers below 21 for R2");
	assert_int_equal(st_pipe2_make(x.c, x.name, &x.o, 64, 0x150, (uint32_t[]){0x1d0, 0x200, 0x220}, 3, &c, &err),
			 ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "pipe2 Q8: 0x150: the rewrite inserts 16 slots"));
	assert_int_equal(st_pipe2_make(x.c, x.name, &x.o, 64, 0x160, (uint32_t[]){0x1d0}, 1, &c, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "pipe2 Q1: 0x160"));
	st_test_kernel_close(&x);
}

static unsigned opcode_of(const uint8_t *w) { return (unsigned)w[0] | (unsigned)(w[1] & 0xf) << 8; }

/* a and b agree outside the control fields (bits 105..127) and outside the bytes edit[] names. */
static void same_but(const uint8_t *a, const uint8_t *b, const int *edit, size_t ne, uint32_t at)
{
	uint8_t x[16], y[16];
	memcpy(x, a, 16);
	memcpy(y, b, 16);
	for (size_t i = 0; i < ne; i++)
		x[edit[i]] = y[edit[i]] = 0;
	x[13] &= 0x01;
	y[13] &= 0x01;
	x[14] = y[14] = x[15] = y[15] = 0;
	if (memcmp(x, y, 16))
		fail_msg("the word at 0x%x differs outside its edited fields", at);
}

static unsigned bits(const uint8_t *w, unsigned at, unsigned n)
{
	unsigned v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (unsigned)((w[(at + i) / 8] >> ((at + i) % 8)) & 1) << i;
	return v;
}

/* rowsum's largest candidate, word by word (o: the original code, c: the rewritten one). */
static void check_rowsum_words(const uint8_t *o, const uint8_t *c)
{
	static const int ra_pu[] = {3, 10}, hand[] = {2, 3, 4, 5, 6, 7}, ld[] = {1, 2, 3}, rd[] = {2};
	/* the peel 0x150..0x1b0: the members 0x150 0x160 0x190 0x1a0 0x1c0 0x1d0 0x200 renamed */
	static const uint32_t peel[] = {0x150, 0x160, 0x190, 0x1a0, 0x1c0, 0x1d0, 0x200};
	static const uint8_t pd[] = {25, 22, 23, 24, 25, 23, 25};
	for (int t = 0; t < 7; t++) {
		const uint8_t *w = c + 0x150 + 16 * t;
		assert_int_equal(opcode_of(w), opcode_of(o + peel[t]));
		assert_int_equal(w[2], pd[t]);
		assert_int_equal(bits(w, 12, 3), 7); /* unguarded */
	}
	assert_int_equal(bits(c + 0x160, 81, 3), 3); /* P1 -> P3 */
	assert_int_equal(bits(c + 0x170, 87, 3), 3);
	assert_true(st_ctrl_decode(c + 0x1a0).wbar == 0 && st_ctrl_decode(c + 0x1b0).wbar == 0); /* the peel's loads: SB0 */
	/* the hand-overs: U (0x240) with Rd = D, Ra = φ(D), immediate 0, waiting on SB0 */
	same_but(o + 0x240, c + 0x1f0, hand, 6, 0x1f0);
	same_but(o + 0x240, c + 0x220, hand, 6, 0x220);
	assert_true(c[0x1f2] == 3 && c[0x1f3] == 23 && c[0x222] == 5 && c[0x223] == 25);
	assert_int_equal(c[0x1f4] | c[0x1f5] | c[0x1f6] | c[0x1f7], 0);
	assert_int_equal(st_ctrl_decode(c + 0x1f0).wait, 1);
	assert_int_equal(st_ctrl_decode(c + 0x220).wait, 1);
	/* I: U with Rd = R13; F: E (0x250) with Pu = P5, Ra = R13 */
	same_but(o + 0x240, c + 0x230, rd, 1, 0x230);
	assert_int_equal(c[0x232], 13);
	same_but(o + 0x250, c + 0x240, ra_pu, 2, 0x240);
	assert_true(c[0x242] == o[0x252] && c[0x243] == 13 && bits(c + 0x240, 81, 3) == 5);
	/* the prefetch block: the same members renamed, i -> i' (R13), the loads @!P5 on SB0 */
	for (int t = 0; t < 7; t++)
		assert_int_equal(opcode_of(c + 0x250 + 16 * t), opcode_of(o + peel[t]));
	assert_true(c[0x253] == 13 && c[0x263] == 13 && c[0x273] == 13); /* VIADD, LEA, LEA.HI.X read i' */
	same_but(o + 0x1d0, c + 0x2a0, ld, 3, 0x2a0);
	assert_true(bits(c + 0x2a0, 12, 4) == (5 | 8) && bits(c + 0x2b0, 12, 4) == (5 | 8));
	assert_true(st_ctrl_decode(c + 0x2a0).wbar == 0 && st_ctrl_decode(c + 0x2b0).wbar == 0);
	/* B's non-members in order, the back branch re-targeted to 0x1c0 */
	static const uint32_t nonmem[][2] = {{0x170, 0x1c0}, {0x180, 0x1d0}, {0x1b0, 0x1e0}, {0x1e0, 0x200},
					     {0x1f0, 0x210}, {0x210, 0x2c0}, {0x220, 0x2d0}, {0x230, 0x2e0},
					     {0x240, 0x2f0}, {0x250, 0x300}, {0x260, 0x310}, {0x290, 0x340}};
	for (size_t i = 0; i < sizeof nonmem / sizeof nonmem[0]; i++)
		same_but(o + nonmem[i][0], c + nonmem[i][1], NULL, 0, nonmem[i][1]);
	assert_int_equal(opcode_of(c + 0x350), 0x947);
}

/* The rewritten rowsum as Triton's nvdisasm prints it, 0x150..0x350. */
static const char *const rowsum_text[] = {
	"VIADD R25, R11, 0x20", "LEA R22, P3, R11, R14, 0x2", "LEA.HI.X.SX32 R23, R11, R16, 0x2, P3",
	"LEA R24, P4, R25, R14, 0x2", "LEA.HI.X.SX32 R25, R25, R16, 0x2, P4", "LDG.E R23, desc[UR8][R22.64]",
	"LDG.E R25, desc[UR8][R24.64]", "VIADD R7, R11.reuse, 0x40", "VIADD R9, R11, 0x60", "LEA R6, P1, R7, R14, 0x2",
	"VIADD R3, R23, 0x0", "LEA R8, P2, R9, R14, 0x2", "LEA.HI.X.SX32 R7, R7, R16, 0x2, P1", "VIADD R5, R25, 0x0",
	"VIADD R13, R11, 0x80", "ISETP.GE.AND P5, PT, R13, R12, PT", "VIADD R25, R13, 0x20",
	"LEA R22, P3, R13, R14, 0x2", "LEA.HI.X.SX32 R23, R13, R16, 0x2, P3", "LEA R24, P4, R25, R14, 0x2",
	"LEA.HI.X.SX32 R25, R25, R16, 0x2, P4", "@!P5 LDG.E R23, desc[UR8][R22.64]",
	"@!P5 LDG.E R25, desc[UR8][R24.64]", "LEA.HI.X.SX32 R9, R9, R16, 0x2, P2", "LDG.E R7, desc[UR8][R6.64]",
	"LDG.E R9, desc[UR8][R8.64]", "VIADD R11, R11, 0x80", "ISETP.GE.AND P1, PT, R11, R12, PT",
	"FADD R10, R3, R10", "FADD R10, R10, R5", "FADD R10, R10, R7", "FADD R10, R10, R9", "@!P1 BRA `(.L_x_2)",
};

static bool triton_nvdisasm(char *buf, size_t n)
{
	const char *bin = st_test_triton_bin();
	if (!bin)
		return false;
	snprintf(buf, n, "%s/nvdisasm", bin);
	return access(buf, X_OK) == 0;
}

/* The rewritten cubin decodes (Triton's nvdisasm); text[] from `from` when given. */
static st_sass_kernel *redecode(const st_cubin *c, const char *name, uint32_t from, const char *const *text, size_t nt)
{
	char dis[4096];
	if (!triton_nvdisasm(dis, sizeof dis)) {
		printf("no Triton nvdisasm (ST_TRITON_BIN): the re-decoded checks are skipped\n");
		return NULL;
	}
	st_sass_opts o = {0};
	o.nvdisasm = dis;
	st_sass_kernel *k;
	st_error err;
	if (st_sass_decode(c, name, &o, &k, &err))
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < nt; i++) {
		const st_sass_insn *y = st_sass_at(k, from + 16 * (uint32_t)i);
		char line[160], guard[8] = "";
		if (y->guard >= 0)
			snprintf(guard, sizeof guard, "@%sP%d ", y->guard_neg ? "!" : "", y->guard);
		snprintf(line, sizeof line, "%s%s%s%s", guard, y->opcode, *y->operands ? " " : "", y->operands);
		if (strcmp(line, text[i]))
			fail_msg("0x%x: \"%s\", expected \"%s\"", from + 16 * (unsigned)i, line, text[i]);
	}
	return k;
}

static void apply_rowsum(void **state)
{
	(void)state;
	st_test_kernel x;
	st_test_kernel_open(&x, "pipe", "rowsum_f32_256x4096");
	st_error err;
	st_pipe_cand c;
	assert_int_equal(st_pipe2_make(x.c, x.name, &x.o, 64, 0x150, (uint32_t[]){0x1d0, 0x200}, 2, &c, &err), ST_OK);
	st_cubin *orig = st_test_cubin_copy(x.c);
	size_t pad = st_cubin_insertable(x.c, 0), osize, csize;
	if (st_pipe_apply(x.c, x.name, &x.o, &c, 1, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(st_cubin_insertable(x.c, 0), pad - 11);
	assert_int_equal(st_cubin_regcount(x.c, 0), 28);
	const uint8_t *o = st_cubin_code(orig, 0, &osize), *code = st_cubin_code(x.c, 0, &csize);
	assert_int_equal(osize, csize);
	check_rowsum_words(o, code);
	st_sass_kernel *k = redecode(x.c, st_cubin_kernel(x.c, 0)->name, 0x150, rowsum_text, sizeof rowsum_text / sizeof rowsum_text[0]);
	if (k) {
		assert_int_equal(st_sass_at(k, 0x350)->target, 0x1c0);
		st_sass_free(k);
	}
	st_cubin_free(orig);
	st_test_kernel_close(&x);
}

/* The rowsq rewrites (LDG.E and LDG.E.U16; b128's four loads of one address with U an IADD3, so its
 * hand-overs are `IADD3 D, D', 0x0, RZ`) re-decode: a hand-over per load, the prefetch loads guarded by
 * !Pf (P5; P4 in b128), the count raised. */
static void apply_rowsq(void **state)
{
	(void)state;
	static const char *const fx[] = {"rowsq_f32_b32_w1", "rowsq_f16_b32_w1", "rowsq_f32_b128_w1"};
	static const unsigned nc[] = {5, 5, 1}, regs[] = {28, 28, 44}, nh[] = {2, 2, 4};
	for (int f = 0; f < 3; f++) {
		st_test_kernel x;
		st_test_kernel_open(&x, "pipe", fx[f]);
		st_error err;
		st_pipe_cand *c;
		size_t n;
		assert_int_equal(st_pipe2_find(x.c, x.name, &x.o, 64, &c, &n, &err), ST_OK);
		assert_int_equal(n, nc[f]);
		if (st_pipe_apply(x.c, x.name, &x.o, &c[n - 1], 1, &err))
			fail_msg("%s: %s", fx[f], err.msg);
		assert_int_equal(st_cubin_regcount(x.c, 0), regs[f]);
		st_sass_kernel *k = redecode(x.c, st_cubin_kernel(x.c, 0)->name, 0, NULL, 0);
		size_t hand = 0, pre = 0;
		for (size_t i = 0; k && i < st_sass_count(k); i++) {
			const st_sass_insn *y = &st_sass_insns(k)[i];
			hand += (!strcmp(y->opcode, "VIADD") && strstr(y->operands, ", 0x0") && !strstr(y->operands, ", 0x0,")) ||
				(!strcmp(y->opcode, "IADD3") && strstr(y->operands, ", 0x0, RZ"));
			pre += !strncmp(y->opcode, "LDG", 3) && y->guard >= 4 && y->guard_neg;
		}
		if (k) {
			assert_int_equal(hand, nh[f]);
			assert_int_equal(pre, nh[f]);
			st_sass_free(k);
		}
		st_pipe_cands_free(c);
		st_test_kernel_close(&x);
	}
}

/* A hand-made variant of rowsum: the instructions at off replaced (text and words), decoded from buffers
 * against the fixture's cubin (its count, padding and references). */
typedef struct patch { uint32_t off; const char *text; uint64_t lo, hi; /* hi 0: keep */ } patch;

/* The fixture's code and listing with the patches (both malloc'ed). */
static void patch_both(const st_test_kernel *x, const patch *p, size_t np, uint8_t **code_out, char **listing)
{
	size_t size;
	const uint8_t *code0 = st_cubin_code(x->c, 0, &size);
	uint8_t *code = malloc(size);
	char *text = (char *)st_test_read_path(x->listing, NULL), *out = malloc(strlen(text) + 4096);
	assert_true(code && out);
	memcpy(code, code0, size);
	out[0] = 0;
	uint64_t hi_next = 0;
	for (char *line = text, *nl; *line; line = nl) {
		nl = strchr(line, '\n');
		nl = nl ? nl + 1 : line + strlen(line);
		size_t len = (size_t)(nl - line), k = 0;
		char buf[256];
		if (hi_next) {
			snprintf(buf, sizeof buf, "                                   /* 0x%016llx */\n", (unsigned long long)hi_next);
			strcat(out, buf);
			hi_next = 0;
			continue;
		}
		for (; k < np; k++) {
			char tag[16];
			snprintf(tag, sizeof tag, "/*%04x*/", p[k].off);
			if (len > 20 && !strncmp(line + 8, tag, strlen(tag)))
				break;
		}
		if (k == np) {
			strncat(out, line, len);
			continue;
		}
		snprintf(buf, sizeof buf, "        /*%04x*/                   %s ; /* 0x%016llx */\n", p[k].off, p[k].text,
			 (unsigned long long)p[k].lo);
		strcat(out, buf);
		for (int b = 0; b < 8; b++) {
			code[p[k].off + b] = (uint8_t)(p[k].lo >> (8 * b));
			if (p[k].hi)
				code[p[k].off + 8 + b] = (uint8_t)(p[k].hi >> (8 * b));
		}
		hi_next = p[k].hi;
	}
	free(text);
	*code_out = code;
	*listing = out;
}

static st_sass_kernel *decode_patched(const st_test_kernel *x, const patch *p, size_t np)
{
	uint8_t *code;
	char *out;
	size_t size;
	patch_both(x, p, np, &code, &out);
	st_cubin_code(x->c, 0, &size);
	st_sass_kernel *k;
	st_error err;
	if (st_sass_decode_code(90, x->name, code, size, out, strlen(out), &k, &err))
		fail_msg("%s", err.msg);
	free(code);
	free(out);
	return k;
}

/* The rule refusing loads[0..nl) of loop 0x150 in the variant (NULL: legal), its message in msg. */
static const char *variant_rule(const patch *p, size_t np, const uint32_t *loads, size_t nl, unsigned reglimit,
				char msg[192])
{
	st_test_kernel x;
	st_test_kernel_open(&x, "pipe", "rowsum_f32_256x4096");
	st_sass_kernel *k = decode_patched(&x, p, np);
	pp_kern px;
	pp_loop L;
	pp_why why = {0};
	st_error err;
	assert_int_equal(pp_kern_init(&px, k, x.c, 0, &err), ST_OK);
	uint32_t idx[8];
	for (size_t i = 0; i < nl; i++)
		idx[i] = loads[i] / 16;
	pq_cand *q = malloc(sizeof *q);
	assert_non_null(q);
	bool ok = pq_loop_at(&px, st_sass_at(k, 0x150)->block, &L, &why) && pq_build(&px, &L, idx, nl, reglimit, q, &why);
	snprintf(msg, 192, "%s", ok ? "" : why.msg);
	static char rule[8];
	snprintf(rule, sizeof rule, "%s", ok ? "" : why.rule ? why.rule : "none");
	free(q);
	pp_kern_free(&px);
	st_sass_free(k);
	st_test_kernel_close(&x);
	return ok ? NULL : rule;
}

static void refusals(void **state)
{
	(void)state;
	char msg[192];
	/* the variant's own baseline: the unpatched instruction again is legal */
	patch same = {0x1d0, "LDG.E R3, desc[UR8][R2.64]", 0x0000000802037981ull, 0};
	assert_null(variant_rule(&same, 1, (uint32_t[]){0x1d0}, 1, 64, msg));
	/* Q1: a guarded load (@P0) */
	patch guarded = {0x1d0, "@P0 LDG.E R3, desc[UR8][R2.64]", 0x0000000802030981ull, 0};
	assert_string_equal(variant_rule(&guarded, 1, (uint32_t[]){0x1d0}, 1, 64, msg), "Q1");
	assert_string_equal(msg, "the load is guarded (form 2 takes unguarded loads)");
	/* Q4: member 0x150 reads the accumulator R10, which the FADDs of the pass before wrote */
	patch carried = {0x150, "VIADD R5, R10, 0x20", 0x000000200a057836ull, 0x000fe20000000000ull};
	assert_string_equal(variant_rule(&carried, 1, (uint32_t[]){0x200}, 1, 64, msg), "Q4");
	assert_string_equal(msg, "R10 read by VIADD is carried around the back edge");
	/* Q5: non-member 0x170 reads R2, which member 0x160 (load 0x1d0's address) computes */
	patch sees = {0x170, "VIADD R7, R2, 0x40", 0x0000004002077836ull, 0x000fe40000000000ull};
	assert_string_equal(variant_rule(&sees, 1, (uint32_t[]){0x1d0}, 1, 64, msg), "Q5");
	assert_string_equal(msg, "R2 read by VIADD at 0x170 sees the value member LEA at 0x160 computed");
	/* Q5 through a guarded write: with 0x1b0 `@P0 LEA R6, P1, ...` (which kills nothing), 0x1f0's P1 may
	 * come from member 0x160 */
	patch gw = {0x1b0, "@P0 LEA R6, P1, R7, R14, 0x2", 0x0000000e07060211ull, 0};
	assert_string_equal(variant_rule(&gw, 1, (uint32_t[]){0x1d0}, 1, 64, msg), "Q5");
	assert_string_equal(msg, "P1 read by LEA.HI.X.SX32 at 0x1f0 sees the value member LEA at 0x160 computed");
	/* Q3: E before U (0x240 and 0x250 swapped, control fields with them) */
	patch swap[] = {{0x240, "ISETP.GE.AND P1, PT, R11, R12, PT", 0x0000000c0b00720cull, 0x000fe20003f26270ull},
			{0x250, "VIADD R11, R11, 0x80", 0x000000800b0b7836ull, 0x000fca0000000000ull}};
	assert_string_equal(variant_rule(swap, 2, (uint32_t[]){0x1d0}, 1, 64, msg), "Q3");
	assert_non_null(strstr(msg, "the induction update is not after the last member"));
	/* Q3: the exit test compares two registers the loop writes (R12 -> R10) */
	patch two = {0x250, "ISETP.GE.AND P1, PT, R11, R10, PT", 0x0000000a0b00720cull, 0};
	assert_string_equal(variant_rule(&two, 1, (uint32_t[]){0x1d0}, 1, 64, msg), "Q3");
	/* Q9: no raise, no aligned pair below the count */
	assert_string_equal(variant_rule(&same, 1, (uint32_t[]){0x1d0}, 1, 0, msg), "Q9");
	/* Q2: not a load of the loop */
	assert_string_equal(variant_rule(&same, 1, (uint32_t[]){0x240}, 1, 64, msg), "Q2");
}

/* A feeder (Q4c): with 0x170 `MOV R17, R14` and 0x1a0 reading R17, load 0x200's group takes the MOV as
 * its feeder; the peel copies it first (Q8: the feeders, then the members), B keeps it in place. */
static void feeder(void **state)
{
	(void)state;
	st_test_kernel x;
	st_test_kernel_open(&x, "pipe", "rowsum_f32_256x4096");
	static const patch p[] = {{0x170, "MOV R17, R14", 0x0000000e00117202ull, 0x000fe20000000f00ull},
				  {0x1a0, "LEA R4, P2, R5, R17, 0x2", 0x0000001105047211ull, 0x000fe400078410ffull}};
	uint8_t *code;
	char *listing, path[64] = "/tmp/test_pipe2_XXXXXX";
	patch_both(&x, p, 2, &code, &listing);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(listing, f);
	fclose(f);
	size_t size, csize;
	const uint8_t *img = st_cubin_data(x.c, &size), *c0 = st_cubin_code(x.c, 0, &csize);
	uint8_t *bytes = malloc(size);
	assert_non_null(bytes);
	memcpy(bytes, img, size);
	memcpy(bytes + (c0 - img), code, csize);
	st_cubin *c;
	st_error err;
	assert_int_equal(st_cubin_open_mem(bytes, size, "feeder", &c, &err), ST_OK);
	st_sass_opts o = {0};
	o.listing = path;
	st_pipe_cand cand;
	if (st_pipe2_make(c, "rowsum", &o, 64, 0x150, (uint32_t[]){0x200}, 1, &cand, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(cand.nmembers, 4);
	assert_int_equal(cand.npeel, 5);
	if (st_pipe_apply(c, "rowsum", &o, &cand, 1, &err))
		fail_msg("%s", err.msg);
	static const char *const peel[] = {"MOV R17, R14", "VIADD R23, R11, 0x20", "LEA R22, P3, R23, R17, 0x2",
					   "LEA.HI.X.SX32 R23, R23, R16, 0x2, P3", "LDG.E R23, desc[UR8][R22.64]",
					   "LEA R2, P1, R11.reuse, R14, 0x2"};
	st_sass_kernel *k = redecode(c, st_cubin_kernel(c, 0)->name, 0x150, peel, 6);
	if (k) { /* B keeps the MOV in place, the prefetch block reads it */
		assert_string_equal(st_sass_at(k, 0x1b0)->opcode, "MOV");
		assert_string_equal(st_sass_at(k, 0x1b0)->operands, "R17, R14");
		size_t reads = 0;
		for (size_t i = 0; i < st_sass_count(k); i++)
			reads += strstr(st_sass_insns(k)[i].operands, ", R17, 0x2") != NULL;
		assert_int_equal(reads, 2); /* the peel's LEA and the prefetch block's */
		st_sass_free(k);
	}
	unlink(path);
	st_cubin_free(c);
	free(bytes);
	free(code);
	free(listing);
	st_test_kernel_close(&x);
}

/* st_pipe_apply: one form per call (Q12), a candidate that no longer matches its loop is refused. */
static void apply_refusals(void **state)
{
	(void)state;
	st_test_kernel x;
	st_test_kernel_open(&x, "pipe", "rowsum_f32_256x4096");
	st_error err;
	st_pipe_cand c[2];
	assert_int_equal(st_pipe2_make(x.c, x.name, &x.o, 64, 0x150, (uint32_t[]){0x1d0}, 1, &c[0], &err), ST_OK);
	assert_int_equal(st_pipe_make(x.c, x.name, &x.o, 0x150, (uint32_t[]){0x200, 0x230}, 2, &c[1], &err), ST_OK);
	assert_int_equal(c[1].form, 1);
	assert_int_equal(st_pipe_apply(x.c, x.name, &x.o, c, 2, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "Q12"));
	st_pipe_cand bad = c[0];
	bad.regs_after = 27;
	assert_int_equal(st_pipe_apply(x.c, x.name, &x.o, &bad, 1, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "does not match"));
	bad = c[0];
	bad.regs_after = 21; /* no raise allowed: no fresh pair */
	assert_int_equal(st_pipe_apply(x.c, x.name, &x.o, &bad, 1, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "Q9"));
	c[0].form = 2;
	c[1] = c[0];
	assert_int_equal(st_pipe_apply(x.c, x.name, &x.o, c, 2, &err), ST_EILLEGAL); /* two for one loop */
	assert_non_null(strstr(err.msg, "Q12"));
	st_test_kernel_close(&x);
}

/* The carry fields st_cubin_set_preds now edits on IADD3 and LEA (cubin preds.c), read back through
 * Triton's nvdisasm on attention's `IADD3 R10, P3, R17, R10, RZ` (0x47a0) and `IADD3.X R3, RZ, R57, RZ, P4,
 * !PT` (0x49c0): P3 -> P5 and P4 -> P6; the second carry-out [86:84] stays refused. */
static void carry_fields(void **state)
{
	(void)state;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "attn_fwd_f16_bh4_n1024_d64_b128x64");
	size_t size;
	st_error err;
	uint8_t a[16], b[16];
	const uint8_t *code = st_cubin_code(x.c, 0, &size);
	memcpy(a, code + 0x47a0, 16);
	memcpy(b, code + 0x49c0, 16);
	assert_true(bits(a, 81, 3) == 3 && bits(b, 87, 3) == 4);
	a[10] = (uint8_t)((a[10] & ~0x0e) | 5 << 1);              /* [83:81] = 5 */
	b[10] = (uint8_t)((b[10] & ~0x80) | (6 & 1) << 7);        /* [89:87] = 6: bit 87 */
	b[11] = (uint8_t)((b[11] & ~0x03) | (6 >> 1));            /* bits 88, 89 */
	assert_int_equal(st_cubin_set_preds(x.c, 0, 0x47a0 / 16, a, &err), ST_OK);
	assert_int_equal(st_cubin_set_preds(x.c, 0, 0x49c0 / 16, b, &err), ST_OK);
	a[10] ^= 0x10; /* bit 84 */
	assert_int_equal(st_cubin_set_preds(x.c, 0, 0x47a0 / 16, a, &err), ST_EINVAL);
	static const char *const t0[] = {"IADD3 R10, P5, R17, R10, RZ"}, *const t1[] = {"IADD3.X R3, RZ, R57, RZ, P6, !PT"};
	st_sass_kernel *k = redecode(x.c, st_cubin_kernel(x.c, 0)->name, 0x47a0, t0, 1);
	st_sass_free(k);
	k = redecode(x.c, st_cubin_kernel(x.c, 0)->name, 0x49c0, t1, 1);
	st_sass_free(k);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(find_fixtures), cmocka_unit_test(apply_rowsum), cmocka_unit_test(apply_rowsq),
		cmocka_unit_test(refusals), cmocka_unit_test(apply_refusals), cmocka_unit_test(carry_fields),
		cmocka_unit_test(feeder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
