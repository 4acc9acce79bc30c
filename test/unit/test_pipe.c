/* Unit tests of the pipe family (family 3 form 1, plugin/sched/pipe*.c, docs/pipeline.md "Form 1:
 * rotation"): the candidates and refusals on the layernorm fixtures (both ptxas versions) and the bench
 * layernorm, a refusal for each rule the fixtures lack from hand-made hazards (decoded code buffers),
 * the predicate fields against every ISETP nvdisasm printed in the fixtures, and the rewrite: words,
 * order, peel, guards, and (with Triton's nvdisasm, ST_TRITON_BIN) the re-decoded code and its stalls. */
#include "testutil.h"
#include "sasstune/pipe.h"
#include "sched/pipe_internal.h"
#include "sched/pipe_timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const twins[] = {"triton-sm90", "triton-sm90-ptxas13.5"};

/* Replace the one occurrence of `from` in text by `to` (same length). */
static void patch_text(char *text, const char *from, const char *to)
{
	char *p = strstr(text, from);
	assert_non_null(p);
	assert_null(strstr(p + 1, from));
	assert_int_equal(strlen(from), strlen(to));
	memcpy(p, to, strlen(to));
}

/* Refusals collected by st_pipe_explain. */
typedef struct whys { size_t n; uint32_t off[64]; char rule[64][4]; char msg[64][192]; } whys;
static void collect(void *ctx, uint32_t off, const char *rule, const char *msg)
{
	whys *w = ctx;
	if (w->n == 64)
		return;
	w->off[w->n] = off;
	snprintf(w->rule[w->n], sizeof w->rule[0], "%s", rule);
	snprintf(w->msg[w->n], sizeof w->msg[0], "%s", msg);
	w->n++;
}
static const char *why_at(const whys *w, uint32_t off, const char **msg)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->off[i] == off) {
			*msg = w->msg[i];
			return w->rule[i];
		}
	return NULL;
}

/* The fixture with the LDS at 0xa80 unguarded (cubin and listing), so that R14 is dead on loop 0x1b0's
 * exit: as compiled, its `@!P2 LDS R14` leaves R14's old value to the SHFL after it, which keeps R14
 * live out of the loop (P4) and leaves the fixture without a candidate. */
static void open_patched(st_test_kernel *x, const char *dir, char path[64])
{
	st_test_kernel_open(x, dir, "layernorm_f16_1024x1024");
	size_t size;
	st_error err;
	uint8_t w[16];
	memcpy(w, st_cubin_code(x->c, 0, &size) + 0xa80, 16);
	assert_int_equal(w[1], 0xa9);
	pp_guard_set(w, -1, 0);
	assert_int_equal(st_cubin_set_preds(x->c, 0, 0xa80 / 16, w, &err), ST_OK);
	char *text = (char *)st_test_read_path(x->listing, NULL);
	patch_text(text, "@!P2 LDS R14, [R9] ;", "     LDS R14, [R9] ;");
	patch_text(text, "0x00000000090ea984", "0x00000000090e7984");
	strcpy(path, "/tmp/test_pipe_XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(text);
	x->o.listing = path;
	st_sass_free(x->k);
	assert_int_equal(st_sass_decode(x->c, x->name, &x->o, &x->k, &err), ST_OK);
}

/* As compiled: no candidate; each load of loop 0x1b0 refused for P4, the normalising loop for P1. */
static void find_fixtures(void **state)
{
	(void)state;
	for (size_t t = 0; t < 2; t++) {
		st_test_kernel x;
		st_test_kernel_open(&x, twins[t], "layernorm_f16_1024x1024");
		st_error err;
		st_pipe_cand *c;
		size_t n;
		assert_int_equal(st_pipe_find(x.c, x.name, &x.o, &c, &n, &err), ST_OK);
		assert_int_equal(n, 0);
		st_pipe_cands_free(c);
		whys w = {0};
		assert_int_equal(st_pipe_explain(x.c, x.name, &x.o, collect, &w, &err), ST_OK);
		const char *msg = NULL;
		assert_string_equal(why_at(&w, 0x210, &msg), "P4");
		assert_string_equal(msg, "R14 written by the group is live on the loop's exit edge (0x560)");
		assert_string_equal(why_at(&w, 0x2d0, &msg), "P4"); /* P4 (the predicate) written at 0x290 */
		assert_string_equal(why_at(&w, 0x350, &msg), "P4"); /* P3 written at 0x1d0 (then R17, read at 0x330) */
		assert_string_equal(why_at(&w, 0xce0, &msg), "P6"); /* the variance loop: no free predicate */
		assert_string_equal(why_at(&w, 0x1ce0, &msg), "P1"); /* the normalising loop stores */
		assert_non_null(strstr(msg, "STG"));
		st_test_kernel_close(&x);
	}
}

/* The bench layernorm (8192x4096): no candidate either; its loads' groups interfere (P4), its variance
 * loop has no free predicate (P6), its normalising loop stores (P1). */
static void find_bench(void **state)
{
	(void)state;
	st_cubin *c;
	st_error err;
	char *cub = st_test_fixture("bench/layernorm.sm_90.cubin"), *lst = st_test_fixture("bench/layernorm.sm_90.sass");
	assert_int_equal(st_cubin_open_file(cub, &c, &err), ST_OK);
	st_sass_opts o = {0};
	o.listing = lst;
	st_pipe_cand *cands;
	size_t n;
	assert_int_equal(st_pipe_find(c, NULL, &o, &cands, &n, &err), ST_OK);
	assert_int_equal(n, 0);
	st_pipe_cands_free(cands);
	whys w = {0};
	assert_int_equal(st_pipe_explain(c, NULL, &o, collect, &w, &err), ST_OK);
	const char *msg = NULL;
	assert_string_equal(why_at(&w, 0x2c0, &msg), "P4");
	assert_string_equal(why_at(&w, 0xd60, &msg), "P6");
	assert_string_equal(why_at(&w, 0x1d70, &msg), "P1");
	st_cubin_free(c);
	free(cub);
	free(lst);
}

/* With R14 dead on the exit: load 0x210 alone, P2 renamed to P5 (P2 is the back branch's predicate);
 * 0x210, 0x2d0 and 0x2f0 together are legal too (P2 renamed) but their peel (18 members and the feeder
 * MOV R5, R23) is larger than the padding (13 slots): not listed. */
static void find_patched(void **state)
{
	(void)state;
	for (size_t t = 0; t < 2; t++) {
		st_test_kernel x;
		char path[64];
		open_patched(&x, twins[t], path);
		st_error err;
		st_pipe_cand *c;
		size_t n;
		assert_int_equal(st_pipe_find(x.c, x.name, &x.o, &c, &n, &err), ST_OK);
		assert_int_equal(n, 1);
		assert_int_equal(c[0].header, 0x1b0);
		assert_int_equal(c[0].nloads, 1);
		assert_int_equal(c[0].loads[0], 0x210);
		assert_int_equal(c[0].nmembers, 6);
		assert_int_equal(c[0].npeel, 7);
		assert_int_equal(c[0].pred_from, 2);
		assert_int_equal(c[0].pred_to, 5);
		char buf[128];
		st_pipe_describe(&c[0], buf, sizeof buf);
		assert_string_equal(buf, "loop 0x1b0: 1 load 0x210, 6 members, 7 peeled, P2 -> P5");
		st_pipe_cands_free(c);
		pp_kern k;
		pp_loop L;
		pp_group g;
		pp_why why;
		assert_int_equal(pp_kern_init(&k, x.k, x.c, 0, &err), ST_OK);
		assert_true(pp_loop_at(&k, st_sass_at(x.k, 0x1b0)->block, &L, &why));
		assert_int_equal(L.pe, 2);
		assert_int_equal(L.pe_neg, 1);
		assert_int_equal(k.in[L.e].offset, 0x3e0);
		uint32_t three[3] = {0x210 / 16, 0x2d0 / 16, 0x2f0 / 16}, last = 0x350 / 16;
		assert_true(pp_group_build(&k, &L, three, 3, &g, &why));
		assert_int_equal(g.nmem, 18);
		assert_int_equal(g.nfeed, 1);
		assert_int_equal(k.in[g.feed[0]].offset, 0x1c0);
		assert_int_equal(g.pred_from, 2);
		assert_int_equal(g.pred_to, 5);
		assert_true(g.nmem + g.nfeed > st_cubin_insertable(x.c, 0));
		assert_false(pp_group_build(&k, &L, &last, 1, &g, &why));
		assert_string_equal(why.rule, "P4");
		pp_kern_free(&k);
		unlink(path);
		st_test_kernel_close(&x);
	}
}

/* Words a and b agree outside the control fields (bits 105..124). */
static void same_but_ctrl(const uint8_t *a, const uint8_t *b, uint32_t slot)
{
	uint8_t x[16], y[16];
	memcpy(x, a, 16);
	memcpy(y, b, 16);
	x[13] &= 0x01; /* bits 105..111 */
	y[13] &= 0x01;
	x[14] = y[14] = 0;
	x[15] &= 0xe0; /* bits 120..124 */
	y[15] &= 0xe0;
	if (memcmp(x, y, 16))
		fail_msg("slot 0x%x: the word changed outside the control fields", 16 * slot);
}

static unsigned opcode_of(const uint8_t *w) { return (unsigned)w[0] | (unsigned)(w[1] & 0xf) << 8; }

/* The rewritten code of loop 0x1b0, load 0x210, word by word: H unchanged but for control fields; the
 * peel of 0x1b0..0x210 at 0x1b0 (ISETP into P5, @!P5 LDG); B's 54 other instructions in order from
 * 0x220, then the 6 members with ISETP.GE.OR P5, PT, R7, R5, P2 and @!P5 LDG, then the back branch;
 * everything after B moved down 7 slots, unchanged but for control fields and branch immediates. */
static void check_words(const uint8_t *o, size_t osize, const uint8_t *c, size_t csize)
{
	static const uint32_t mem[] = {0x1b0, 0x1d0, 0x1e0, 0x1f0, 0x200, 0x210};
	assert_int_equal(csize, osize);
	for (uint32_t j = 0; j < 0x1b0 / 16; j++)
		if (opcode_of(o + 16 * j) != 0x947) /* branches: immediates patched */
			same_but_ctrl(o + 16 * j, c + 16 * j, j);
	for (uint32_t t = 0; t < 7; t++) {
		uint32_t i = 0x1b0 / 16 + t;
		uint8_t want[16];
		memcpy(want, o + 16 * i, 16);
		if (16 * i == 0x1e0)
			pp_isetp_set(want, 5, PP_OP_AND, -1, 0);
		if (16 * i == 0x210)
			pp_guard_set(want, 5, 1);
		same_but_ctrl(want, c + 16 * (0x1b0 / 16 + t), 0x1b0 / 16 + t);
	}
	uint32_t j = 0x1b0 / 16 + 7;
	for (uint32_t i = 0x1b0 / 16; i < 0x560 / 16; i++) {
		bool m = false;
		for (size_t k = 0; k < 6; k++)
			m |= mem[k] == 16 * i;
		if (!m)
			same_but_ctrl(o + 16 * i, c + 16 * j, j), j++;
	}
	for (size_t k = 0; k < 6; k++, j++) {
		uint8_t want[16];
		memcpy(want, o + mem[k], 16);
		if (mem[k] == 0x1e0) {
			int neg;
			assert_int_equal(pp_isetp_op(c + 16 * j), PP_OP_OR);
			assert_int_equal(pp_isetp_dst(c + 16 * j), 5);
			assert_int_equal(pp_isetp_pc(c + 16 * j, &neg), 2);
			assert_int_equal(neg, 0);
			pp_isetp_set(want, 5, PP_OP_OR, 2, 0);
		}
		if (mem[k] == 0x210)
			pp_guard_set(want, 5, 1);
		same_but_ctrl(want, c + 16 * j, j);
	}
	assert_int_equal(opcode_of(c + 16 * j), 0x947); /* the back branch */
	for (uint32_t i = 0x570 / 16; i < osize / 16 - 7; i++)
		if (opcode_of(o + 16 * i) != 0x947)
			same_but_ctrl(o + 16 * i, c + 16 * (i + 7), i + 7);
}

static bool triton_nvdisasm(char *buf, size_t n)
{
	const char *bin = st_test_triton_bin();
	if (!bin)
		return false;
	snprintf(buf, n, "%s/nvdisasm", bin);
	return access(buf, X_OK) == 0;
}

static int res_of(unsigned f)
{
	return f == ST_RF_R ? ST_RES_GPR : f == ST_RF_UR ? ST_RES_UGPR : f == ST_RF_P ? ST_RES_PRED : ST_RES_UPRED;
}

static bool meet(const st_sass_reg *a, const st_sass_reg *b)
{
	return a->file == b->file && a->file != ST_RF_B && a->index < b->index + b->count &&
	       b->index < a->index + a->count;
}

/* The tables' distance c needs after p: RAW and WAW from a fixed-latency p, WAR; -1 none. */
static int table_need(const st_sass_insn *p, const st_sass_insn *c)
{
	int best = -1;
	bool fixed = !(p->flags & ST_F_VARLAT);
	for (unsigned d = 0; d < p->ndefs && fixed; d++) {
		for (unsigned u = 0; u < c->nuses; u++)
			if (meet(&p->defs[d], &c->uses[u])) {
				int l = st_sass_latency(90, p, p->defs[d].slot, c, c->uses[u].slot, res_of(p->defs[d].file),
							ST_DEP_TRUE);
				best = l > best ? l : best;
			}
		for (unsigned e = 0; e < c->ndefs; e++)
			if (meet(&p->defs[d], &c->defs[e])) {
				int l = st_sass_latency(90, p, p->defs[d].slot, c, c->defs[e].slot, res_of(p->defs[d].file),
							ST_DEP_OUTPUT);
				best = l > best ? l : best;
			}
	}
	for (unsigned u = 0; u < p->nuses; u++)
		for (unsigned e = 0; e < c->ndefs; e++)
			if (meet(&p->uses[u], &c->defs[e]) && fixed) {
				int l = st_sass_latency(90, p, p->uses[u].slot, c, c->defs[e].slot, res_of(p->uses[u].file),
							ST_DEP_ANTI);
				best = l > best ? l : best;
			}
	return best;
}

/* An instruction of the new code with the original cycle of the same dynamic instance. */
typedef struct timed { const st_sass_insn *x; int t0; } timed;

/* Every dependence into seq[from..n) from an instruction before it meets the tables, or the original
 * distance of the same two instances when ptxas left less (the checker's rule, check.c). */
static void check_stalls(const timed *seq, size_t n, size_t from)
{
	for (size_t j = from; j < n; j++) {
		int d = 0;
		for (size_t i = j; i-- > 0 && d < 30;) {
			d += seq[i].x->ctrl.stall;
			int l = table_need(seq[i].x, seq[j].x), od = seq[j].t0 - seq[i].t0;
			int req = od > 0 && od < l ? od : l;
			if (req > d)
				fail_msg("0x%x %s needs %d cycles after 0x%x %s, has %d", seq[j].x->offset, seq[j].x->opcode,
					 req, seq[i].x->offset, seq[i].x->opcode, d);
		}
	}
}

/* Original issue cycle (from 0x1b0, first pass) of the instance new instruction `at` runs: H before
 * 0x1b0, the peel = the first pass's 0x1b0..0x210, B's others, the members = the next pass's. */
static int orig_cycle(const st_sass_kernel *o, uint32_t at, int pass)
{
	static const uint32_t mem[] = {0x1b0, 0x1d0, 0x1e0, 0x1f0, 0x200, 0x210};
	const st_sass_insn *in = st_sass_insns(o);
	uint32_t off = at;
	if (at >= 0x570 && at < 0x5d0) {
		off = mem[(at - 0x570) / 16];
		pass++;
	} else if (at >= 0x220) {
		uint32_t k = (at - 0x220) / 16, i = 0x1b0 / 16;
		for (;; i++) {
			bool m = false;
			for (size_t q = 0; q < 6; q++)
				m |= mem[q] == 16 * i;
			if (!m && k-- == 0)
				break;
		}
		off = 16 * i;
	}
	int t = 0, C = 0;
	for (uint32_t i = 0x1b0 / 16; i <= 0x560 / 16; i++)
		C += in[i].ctrl.stall;
	for (uint32_t i = off / 16; i < 0x1b0 / 16; i++)
		t -= in[i].ctrl.stall;
	for (uint32_t i = 0x1b0 / 16; i < off / 16; i++)
		t += in[i].ctrl.stall;
	return t + pass * C;
}

/* The rewrite as nvdisasm reads it: the peel, B from 0x220 with the back branch landing there, the
 * combined guard, and every fixed-latency dependence of the new code (H into the peel and B, B's end
 * into the next pass) at least the tables' distance. */
static void check_decoded(const st_cubin *c, const char *name, const char *nvdisasm, const st_sass_kernel *orig)
{
	st_sass_opts o = {0};
	o.nvdisasm = nvdisasm;
	st_sass_kernel *k;
	st_error err;
	assert_int_equal(st_sass_decode(c, name, &o, &k, &err), ST_OK);
	const st_sass_insn *p = st_sass_at(k, 0x1e0), *l = st_sass_at(k, 0x210);
	assert_string_equal(p->opcode, "ISETP.GE.AND");
	assert_string_equal(p->operands, "P5, PT, R7, R5, PT");
	assert_true(!strcmp(l->opcode, "LDG.E.64") && l->guard == 5 && l->guard_neg);
	p = st_sass_at(k, 0x590);
	l = st_sass_at(k, 0x5c0);
	assert_string_equal(p->opcode, "ISETP.GE.OR");
	assert_string_equal(p->operands, "P5, PT, R7, R5, P2");
	assert_true(!strcmp(l->opcode, "LDG.E.64") && l->guard == 5 && l->guard_neg);
	const st_sass_insn *bra = st_sass_at(k, 0x5d0), *in = st_sass_insns(k);
	assert_string_equal(bra->opcode, "BRA");
	assert_int_equal(bra->target, 0x220);
	timed seq[256];
	size_t n = 0;
	for (uint32_t i = 0x180 / 16; i <= 0x5d0 / 16; i++) /* H (from its LDC), the peel, B */
		seq[n++] = (timed){&in[i], orig_cycle(orig, 16 * i, 0)};
	check_stalls(seq, n, 0x1b0 / 16 - 0x180 / 16);
	n = 0;
	for (int r = 0; r < 2; r++)
		for (uint32_t i = 0x220 / 16; i <= 0x5d0 / 16; i++)
			seq[n++] = (timed){&in[i], orig_cycle(orig, 16 * i, r)};
	check_stalls(seq, n, n / 2);
	st_sass_free(k);
}

static void apply_patched(void **state)
{
	(void)state;
	for (size_t t = 0; t < 2; t++) {
		st_test_kernel x;
		char path[64];
		open_patched(&x, twins[t], path);
		st_error err;
		st_pipe_cand *c;
		size_t n, osize, csize;
		assert_int_equal(st_pipe_find(x.c, x.name, &x.o, &c, &n, &err), ST_OK);
		st_cubin *orig = st_test_cubin_copy(x.c);
		size_t pad = st_cubin_insertable(x.c, 0);
		if (st_pipe_apply(x.c, x.name, &x.o, c, n, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(st_cubin_insertable(x.c, 0), pad - 7);
		const uint8_t *ocode = st_cubin_code(orig, 0, &osize), *ccode = st_cubin_code(x.c, 0, &csize);
		check_words(ocode, osize, ccode, csize);
		char dis[4096];
		if (triton_nvdisasm(dis, sizeof dis))
			check_decoded(x.c, "layernorm_kernel", dis, x.k);
		else
			printf("no Triton nvdisasm (ST_TRITON_BIN): the re-decoded checks are skipped\n");
		st_cubin_free(orig);
		st_pipe_cands_free(c);
		unlink(path);
		st_test_kernel_close(&x);
	}
}

/* "P3" -> 3, "PT" -> 7, "!P0" -> 0 with *neg. */
static int pred_tok(const char *t, size_t len, int *neg)
{
	*neg = t[0] == '!';
	t += *neg;
	return len > 1 && t[0] == 'P' ? (t[1] == 'T' ? 7 : t[1] - '0') : -1;
}

/* The field layout (pipe_enc.c) against every guard and every ISETP nvdisasm printed in the 14 fixtures:
 * the guard, the op modifier, the two destinations and the combining input with its negation. */
static void fields_match_listings(void **state)
{
	(void)state;
	size_t isetps = 0;
	for (size_t t = 0; t < 2; t++)
		for (const char *const *f = st_test_triton_fixtures; *f; f++) {
			st_test_kernel x;
			st_test_kernel_open(&x, twins[t], *f);
			const st_sass_insn *in = st_sass_insns(x.k);
			for (size_t i = 0; i < st_sass_count(x.k); i++) {
				const uint8_t *w = in[i].word;
				int g = (w[1] >> 4) & 7, gneg = w[1] >> 7;
				if (in[i].guard >= 0 && in[i].guard_file != ST_RF_P)
					continue; /* @UPx: another field */
				assert_int_equal(in[i].guard < 0 ? 7 : in[i].guard, g);
				assert_int_equal(in[i].guard_neg, gneg); /* "@!PT" too */
				if (strncmp(in[i].opcode, "ISETP.", 6) || strstr(in[i].opcode, ".EX") || in[i].operands[0] == 'U')
					continue; /* the UP forms are not edited */
				if (!pp_is_isetp_word(w))
					fail_msg("%s 0x%x: %s %s", *f, in[i].offset, in[i].opcode, in[i].operands);
				const char *ops = in[i].operands, *last = strrchr(ops, ',') + 2;
				int neg, pneg;
				assert_int_equal(pp_isetp_dst(w), pred_tok(ops, 2, &neg));
				assert_int_equal(pp_isetp_dst2(w), pred_tok(strchr(ops, ',') + 2, 2, &neg));
				assert_int_equal(pp_isetp_pc(w, &pneg), pred_tok(last, strlen(last), &neg));
				assert_int_equal(pneg, neg);
				int op = strstr(in[i].opcode, ".OR") ? PP_OP_OR : strstr(in[i].opcode, ".XOR") ? PP_OP_XOR : PP_OP_AND;
				assert_int_equal(pp_isetp_op(w), op);
				isetps++;
			}
			st_test_kernel_close(&x);
		}
	assert_true(isetps > 100);
}

/* With Triton's nvdisasm: the edits the rewrite makes, inserted into a fixture and read back. */
static void fields_through_nvdisasm(void **state)
{
	(void)state;
	char dis[4096];
	if (!triton_nvdisasm(dis, sizeof dis)) {
		printf("no Triton nvdisasm (ST_TRITON_BIN): skipped\n");
		return;
	}
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "layernorm_f16_1024x1024");
	size_t size;
	st_error err;
	const uint8_t *code = st_cubin_code(x.c, 0, &size);
	uint8_t isetp[16], ldg[16], w[4][16];
	memcpy(isetp, code + 0x1e0, 16); /* ISETP.GE.AND P2, PT, R7, R5, PT */
	memcpy(ldg, code + 0x210, 16);   /* @!P2 LDG.E.64 R6, desc[UR6][R14.64] */
	memcpy(w[0], isetp, 16);
	pp_isetp_set(w[0], 5, PP_OP_OR, 2, 0);
	memcpy(w[1], isetp, 16);
	pp_isetp_set(w[1], 3, PP_OP_AND, 1, 1);
	memcpy(w[2], ldg, 16);
	pp_guard_set(w[2], 5, 1);
	memcpy(w[3], ldg, 16);
	pp_guard_set(w[3], -1, 0);
	for (int k = 3; k >= 0; k--) {
		w[k][15] &= 0xe3; /* no reuse flags (bits 122..124) in an inserted word */
		assert_int_equal(st_cubin_insert(x.c, 0, 1, w[k], &err), ST_OK);
	}
	st_sass_opts o = {0};
	o.nvdisasm = dis;
	st_sass_kernel *k;
	assert_int_equal(st_sass_decode(x.c, "layernorm_kernel", &o, &k, &err), ST_OK);
	const st_sass_insn *in = st_sass_insns(k);
	assert_string_equal(in[1].opcode, "ISETP.GE.OR");
	assert_string_equal(in[1].operands, "P5, PT, R7, R5, P2");
	assert_string_equal(in[2].opcode, "ISETP.GE.AND");
	assert_string_equal(in[2].operands, "P3, PT, R7, R5, !P1");
	assert_true(!strcmp(in[3].opcode, "LDG.E.64") && in[3].guard == 5 && in[3].guard_neg);
	assert_true(!strcmp(in[4].opcode, "LDG.E.64") && in[4].guard < 0);
	st_sass_free(k);
	st_test_kernel_close(&x);
}

/* A hand-made hazard: the layernorm fixture's code and listing with the instruction at `off` replaced
 * (its low word and its text), R14 dead on loop 0x1b0's exit as in open_patched; decoded from the
 * buffers (st_sass_decode_code), so no cubin. */
typedef struct hazard { uint32_t off; uint64_t lo; const char *text; uint64_t hi; /* 0: keep */ } hazard;
static st_sass_kernel *decode_hazard(const hazard *h, size_t nh)
{
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "layernorm_f16_1024x1024");
	size_t size;
	const uint8_t *code0 = st_cubin_code(x.c, 0, &size);
	uint8_t *code = malloc(size);
	assert_non_null(code);
	memcpy(code, code0, size);
	char *text = (char *)st_test_read_path(x.listing, NULL), *out = malloc(strlen(text) + 4096);
	assert_non_null(out);
	hazard all[8] = {{0xa80, 0x00000000090e7984ull, "LDS R14, [R9]", 0}};
	if (nh)
		memcpy(all + 1, h, nh * sizeof *h);
	out[0] = 0;
	uint64_t hi_next = 0;
	for (char *line = text, *nl; *line; line = nl) {
		nl = strchr(line, '\n');
		nl = nl ? nl + 1 : line + strlen(line);
		size_t len = (size_t)(nl - line), k = 0;
		if (hi_next) {
			char buf[128];
			snprintf(buf, sizeof buf, "                                   /* 0x%016llx */\n", (unsigned long long)hi_next);
			strcat(out, buf);
			hi_next = 0;
			continue;
		}
		for (; k <= nh; k++) {
			char tag[16];
			snprintf(tag, sizeof tag, "/*%04x*/", all[k].off);
			if (len > 20 && !strncmp(line + 8, tag, strlen(tag)))
				break;
		}
		if (k > nh) {
			strncat(out, line, len);
			continue;
		}
		char buf[256];
		snprintf(buf, sizeof buf, "        /*%04x*/                   %s ; /* 0x%016llx */\n", all[k].off, all[k].text,
			 (unsigned long long)all[k].lo);
		strcat(out, buf);
		for (int b = 0; b < 8; b++) {
			code[all[k].off + b] = (uint8_t)(all[k].lo >> (8 * b));
			if (all[k].hi)
				code[all[k].off + 8 + b] = (uint8_t)(all[k].hi >> (8 * b));
		}
		hi_next = all[k].hi;
	}
	st_sass_kernel *k;
	st_error err;
	if (st_sass_decode_code(90, "layernorm_kernel", code, size, out, strlen(out), &k, &err))
		fail_msg("%s", err.msg);
	free(code);
	free(text);
	free(out);
	st_test_kernel_close(&x);
	return k;
}

/* The rule that refuses load `load` (alone) of loop 0x1b0 in the hazard, NULL when it is legal. */
static const char *hazard_rule_n(const hazard *h, size_t nh, const uint32_t *loads, size_t nl, char msg[192]);
static const char *hazard_rule(const hazard *h, size_t nh, uint32_t load, char msg[192])
{
	return hazard_rule_n(h, nh, &load, 1, msg);
}

static const char *hazard_rule_n(const hazard *h, size_t nh, const uint32_t *loads, size_t nl, char msg[192])
{
	st_sass_kernel *k = decode_hazard(h, nh);
	pp_kern x;
	pp_loop L;
	pp_group g;
	pp_why why = {0};
	st_error err;
	assert_int_equal(pp_kern_init(&x, k, NULL, 0, &err), ST_OK);
	uint32_t idx[8];
	for (size_t i = 0; i < nl; i++)
		idx[i] = loads[i] / 16;
	bool ok = pp_loop_at(&x, st_sass_at(k, 0x1b0)->block, &L, &why) && pp_group_build(&x, &L, idx, nl, &g, &why);
	snprintf(msg, 192, "%s", ok ? "" : why.msg);
	static char rule[8];
	snprintf(rule, sizeof rule, "%s", ok ? "" : why.rule ? why.rule : "none");
	pp_kern_free(&x);
	st_sass_free(k);
	return ok ? NULL : rule;
}

/* One refusal per rule from a hand-made hazard (P4 and the P1 store come from the fixtures). */
static void hazards(void **state)
{
	(void)state;
	char msg[192];
	assert_null(hazard_rule(NULL, 0, 0x210, msg)); /* the base: legal */
	hazard p1 = {0x560, 0xfffffffc00107947ull, "BRA `(.L_x_2)", 0};
	assert_string_equal(hazard_rule(&p1, 1, 0x210, msg), "P1");
	assert_string_equal(msg, "the back branch is not guarded by a P register");
	hazard p2 = {0x200, 0x0000000000067919ull, "S2R R6, SR_TID.X", 0};
	assert_string_equal(hazard_rule(&p2, 1, 0x210, msg), "P2");
	assert_string_equal(msg, "member S2R is not fixed-latency ALU");
	hazard p2b = {0x250, 0x0000000c06127211ull, "LEA R18, P4, R6, R12, 0x1", 0};
	assert_string_equal(hazard_rule(&p2b, 1, 0x2d0, msg), "P2");
	assert_string_equal(msg, "the group needs the load at 0x210 too");
	hazard p3 = {0x230, 0x000008000b1a7810ull, "IADD3 R26, R11, 0x800, R26", 0};
	assert_string_equal(hazard_rule(&p3, 1, 0x210, msg), "P3");
	assert_string_equal(msg, "R26 read by IADD3 is not shift-correct (2 writers in the loop)");
	hazard p6 = {0x1e0, 0x000000050700720bull, "FSETP.GE.AND P2, PT, R7, R5, PT", 0};
	assert_string_equal(hazard_rule(&p6, 1, 0x210, msg), "P6");
	assert_string_equal(msg, "guard writer FSETP.GE.AND is not ISETP.<cmp>.AND P, PT, a, b, PT");
	hazard p6b = {0x1f0, 0x0000000d070f0211ull, "@P0 LEA.HI.X.SX32 R15, R7, R13, 0x1, P3", 0};
	assert_string_equal(hazard_rule(&p6b, 1, 0x210, msg), "P6");
	assert_string_equal(msg, "member LEA.HI.X.SX32 is guarded");
	/* P5: in the triple's group, CS2R R14 (0x2a0) overwrites the address LDG 0x210 reads through its
	 * read scoreboard SB0 and waits on SB0 itself; without that wait no member between waits. */
	const uint32_t three[3] = {0x210, 0x2d0, 0x2f0};
	assert_null(hazard_rule_n(NULL, 0, three, 3, msg));
	hazard p5 = {0x2a0, 0x00000000000e7805ull, "CS2R R14, SRZ", 0x000fe4000001ff00ull};
	assert_string_equal(hazard_rule_n(&p5, 1, three, 3, msg), "P5");
	assert_string_equal(msg, "CS2R needs a wait on SB0 for 0x210, which no member between makes");
	/* P4 with a scoreboard: LDG 0x2f0 writes R14 after the group of 0x210 wrote it (address); the wait
	 * on its SB4 at 0x440 (HADD2 R7, R14) comes before the group's LEA R14 at B's end; without it the
	 * LDG's late write could land on the next pass's address. */
	hazard p4 = {0x440, 0x0000000eff077230ull, "HADD2.F32 R7, -RZ, R14.reuse.H0_H0", 0x100fe40000004100ull};
	assert_string_equal(hazard_rule(&p4, 1, 0x210, msg), "P4");
	assert_string_equal(msg, "R14 written by the group is written at 0x2f0 by a variable-latency instruction no "
				 "instruction waits on before the group");
}

/* st_pipe_apply refuses, naming the rule, and leaves the cubin as it was: two candidates for one loop
 * (P10), the triple whose peel exceeds the padding (P7), a candidate that does not match its group, a
 * load that is not legal (P4 on the fixture as compiled). */
static void apply_refusals(void **state)
{
	(void)state;
	st_test_kernel x;
	char path[64];
	open_patched(&x, "triton-sm90", path);
	st_error err;
	st_pipe_cand *c;
	size_t n;
	assert_int_equal(st_pipe_find(x.c, x.name, &x.o, &c, &n, &err), ST_OK);
	assert_int_equal(n, 1);
	st_pipe_cand *d; /* the same from the kernel already decoded (tune's pipe stage) */
	size_t nd;
	assert_int_equal(st_pipe_find_decoded(x.c, x.k, &d, &nd, &err), ST_OK);
	assert_int_equal(nd, 1);
	assert_memory_equal(d, c, sizeof *c);
	st_pipe_cands_free(d);
	st_cubin *before = st_test_cubin_copy(x.c);
	st_pipe_cand two[2] = {c[0], c[0]};
	assert_int_equal(st_pipe_apply(x.c, x.name, &x.o, two, 2, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "pipe P10: 0x1b0: a second candidate"));
	st_pipe_cand big = c[0];
	big.nloads = 3;
	big.loads[1] = 0x2d0;
	big.loads[2] = 0x2f0;
	big.nmembers = 18;
	big.npeel = 19;
	assert_int_equal(st_pipe_apply(x.c, x.name, &x.o, &big, 1, &err), ST_EILLEGAL);
	assert_string_equal(err.msg, "pipe P7: the peels need 19 slots, the padding has 13");
	st_pipe_cand wrong = c[0];
	wrong.pred_to = 6;
	assert_int_equal(st_pipe_apply(x.c, x.name, &x.o, &wrong, 1, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "does not match"));
	st_pipe_cand bad = c[0];
	bad.loads[0] = 0x350;
	assert_int_equal(st_pipe_apply(x.c, x.name, &x.o, &bad, 1, &err), ST_EILLEGAL);
	assert_non_null(strstr(err.msg, "pipe P4: "));
	assert_true(st_test_same_bytes(x.c, before));
	st_cubin_free(before);
	st_pipe_cands_free(c);
	unlink(path);
	st_test_kernel_close(&x);
}

/* P8: stalls are raised on the instruction before the consumer first, then earlier; a distance the
 * stalls cannot reach (an unknown opcode needs 30 cycles, one instruction gives 15) refuses. */
static void timing_raises(void **state)
{
	(void)state;
	st_sass_reg r1 = {1, ST_RF_R, 1, ST_SLOT_D}, u1 = {1, ST_RF_R, 1, ST_SLOT_A};
	st_sass_insn p = {0}, c = {0}, m = {0};
	p.opcode = c.opcode = m.opcode = "X";
	p.lat_op = c.lat_op = m.lat_op = -1; /* unknown to the tables: 30 cycles */
	p.defs = &r1;
	p.ndefs = 1;
	c.uses = &u1;
	c.nuses = 1;
	p.ctrl = c.ctrl = m.ctrl = (st_ctrl){1, 0, ST_SB_NONE, ST_SB_NONE, 0, 0};
	st_ctrl cp = p.ctrl, cm = m.ctrl, cc = c.ctrl;
	pa_ins two[2] = {{&p, &p, &cp, PA_NO_T}, {&c, &c, &cc, PA_NO_T}};
	pp_why why = {0};
	assert_false(pa_fix(90, two, 2, 1, &why));
	assert_string_equal(why.rule, "P8");
	cp = p.ctrl;
	pa_ins three[3] = {{&p, &p, &cp, PA_NO_T}, {&m, &m, &cm, PA_NO_T}, {&c, &c, &cc, PA_NO_T}};
	assert_true(pa_fix(90, three, 3, 1, &why));
	assert_int_equal(cm.stall, 15); /* the one before the consumer first */
	assert_int_equal(cp.stall, 15);
	assert_int_equal(cc.stall, 1);
	/* the original distance of the same two instances is kept when ptxas left less */
	cp = cm = p.ctrl;
	three[0].t0 = 0;
	three[2].t0 = 2;
	assert_true(pa_fix(90, three, 3, 1, &why));
	assert_int_equal(cp.stall + cm.stall, 2);
}

/* The pipe fixture (test/fixtures/pipe, a row sum): loads 0x200 and 0x230 together, unguarded; in B
 * they take the back branch's @!P1, in the peel (0x150..0x1c0) they stay unguarded; the back branch
 * lands on 0x1d0, B's first instruction that did not move (LEA R2). */
static void rowsum(void **state)
{
	(void)state;
	st_test_kernel x;
	st_test_kernel_open(&x, "pipe", "rowsum_f32_256x4096");
	st_error err;
	st_pipe_cand *c;
	size_t n, size;
	assert_int_equal(st_pipe_find(x.c, x.name, &x.o, &c, &n, &err), ST_OK);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].header, 0x150);
	assert_int_equal(c[0].nloads, 2);
	assert_int_equal(c[0].loads[0], 0x200);
	assert_int_equal(c[0].loads[1], 0x230);
	assert_int_equal(c[0].nmembers, 8);
	assert_int_equal(c[0].npeel, 8);
	assert_int_equal(c[0].pred_from, -1);
	if (st_pipe_apply(x.c, x.name, &x.o, c, n, &err))
		fail_msg("%s", err.msg);
	const uint8_t *code = st_cubin_code(x.c, 0, &size);
	assert_int_equal(opcode_of(code + 0x1a0), 0x981); /* the peel's loads: LDG, unguarded */
	assert_int_equal(code[0x1a1] >> 4, 7);
	assert_int_equal(code[0x1c1] >> 4, 7);
	assert_int_equal(code[0x2f1] >> 4, 0x8 | 1); /* B's end: @!P1 LDG */
	assert_int_equal(code[0x311] >> 4, 0x8 | 1);
	assert_int_equal(opcode_of(code + 0x320), 0x947);
	st_pipe_cands_free(c);
	st_test_kernel_close(&x);
}

/* The cubin entries the rewrite uses: st_cubin_set_preds takes the guard anywhere and the ISETP fields
 * on ISETP only, nothing else; st_cubin_set_branch re-targets a branch, and the new target survives a
 * later permutation (the branch keeps naming its new instruction). */
static void cubin_entries(void **state)
{
	(void)state;
	st_test_kernel x;
	st_test_kernel_open(&x, "triton-sm90", "layernorm_f16_1024x1024");
	st_error err;
	size_t size;
	uint8_t w[16];
	memcpy(w, st_cubin_code(x.c, 0, &size) + 0x1e0, 16); /* ISETP.GE.AND P2, PT, R7, R5, PT */
	pp_isetp_set(w, 5, PP_OP_OR, 2, 1);
	pp_guard_set(w, 3, 1);
	assert_int_equal(st_cubin_set_preds(x.c, 0, 0x1e0 / 16, w, &err), ST_OK);
	w[2] ^= 1; /* Rd */
	assert_int_equal(st_cubin_set_preds(x.c, 0, 0x1e0 / 16, w, &err), ST_EINVAL);
	memcpy(w, st_cubin_code(x.c, 0, &size) + 0x210, 16); /* LDG: bits 74..90 are no predicate fields */
	pp_isetp_set(w, 5, PP_OP_OR, 2, 1);
	assert_int_equal(st_cubin_set_preds(x.c, 0, 0x210 / 16, w, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "outside the predicate fields"));
	const uint8_t *code = st_cubin_code(x.c, 0, &size);
	assert_int_equal(pp_isetp_op(code + 0x1e0), PP_OP_OR);
	assert_int_equal(code[0x1e1] >> 4, 0xb); /* @!P3 */
	/* the back branch at 0x560 to 0x1b0: now to 0x1c0; then swap 0x1c0 and 0x1d0 */
	assert_int_equal(st_cubin_set_branch(x.c, 0, 0x560 / 16, 0x1c0 / 16, &err), ST_OK);
	bool found = false;
	for (size_t i = 0; i < st_cubin_ref_count(x.c, 0); i++) {
		const st_code_ref *r = st_cubin_ref(x.c, 0, i);
		if (r->slot == 0x560 / 16) {
			assert_int_equal(r->target, 0x1c0);
			found = true;
		}
	}
	assert_true(found);
	size_t n = st_cubin_kernel(x.c, 0)->insn_count;
	uint32_t *perm = malloc(n * sizeof *perm);
	for (uint32_t j = 0; j < n; j++)
		perm[j] = j;
	perm[0x1c0 / 16] = 0x1d0 / 16;
	perm[0x1d0 / 16] = 0x1c0 / 16;
	assert_int_equal(st_cubin_permute(x.c, 0, perm, n, &err), ST_OK);
	for (size_t i = 0; i < st_cubin_ref_count(x.c, 0); i++) {
		const st_code_ref *r = st_cubin_ref(x.c, 0, i);
		if (r->slot == 0x560 / 16)
			assert_int_equal(r->target, 0x1d0); /* MOV R5, R23 moved there */
	}
	assert_int_equal(st_cubin_set_branch(x.c, 0, 0x1e0 / 16, 0x1c0 / 16, &err), ST_EINVAL); /* no branch */
	free(perm);
	st_test_kernel_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(find_fixtures),
		cmocka_unit_test(find_bench),
		cmocka_unit_test(find_patched),
		cmocka_unit_test(apply_patched),
		cmocka_unit_test(fields_match_listings),
		cmocka_unit_test(fields_through_nvdisasm),
		cmocka_unit_test(hazards),
		cmocka_unit_test(apply_refusals),
		cmocka_unit_test(timing_raises),
		cmocka_unit_test(rowsum),
		cmocka_unit_test(cubin_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
