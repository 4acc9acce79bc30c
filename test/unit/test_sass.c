/* sass: control-field codec, listing parser errors, opcode table, latencies, decoding of
 * the Triton fixtures from their stored listings. */
#include "testutil.h"

#include "sass/latency.h"
#include "sass/listing.h"
#include "sass/sass_internal.h"
#include "sasstune/cubin.h"
#include "sasstune/sass.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void word_of(uint8_t w[16], uint64_t lo, uint64_t hi)
{
	st_put_le64(w, lo);
	st_put_le64(w + 8, hi);
}

/* Known words from the fixtures (add_f32_1M). */
static void test_ctrl_decode(void **state)
{
	(void)state;
	uint8_t w[16];
	word_of(w, 0x00000a00ff017b82ull, 0x000e220000000800ull); /* LDC R1: W0, S01, yield */
	st_ctrl c = st_ctrl_decode(w);
	assert_int_equal(c.stall, 1);
	assert_int_equal(c.yield, 1);
	assert_int_equal(c.wbar, 0);
	assert_int_equal(c.rbar, 7);
	assert_int_equal(c.wait, 0);
	assert_int_equal(c.reuse, 0);
	word_of(w, 0x0000000400147825ull, 0x044fe200078e0214ull); /* IMAD.WIDE R20, R0.reuse: wait SB2, reuse a */
	c = st_ctrl_decode(w);
	assert_int_equal(c.wait, 1 << 2);
	assert_int_equal(c.reuse, 1);
	assert_int_equal(c.stall, 1);
	assert_int_equal(c.wbar, 7);
	word_of(w, 0x0000000c02008986ull, 0x0003e2000c101d04ull); /* STG: read SB1 */
	c = st_ctrl_decode(w);
	assert_int_equal(c.rbar, 1);
	assert_int_equal(c.wbar, 7);
	word_of(w, 0xfffffffc00fc7947ull, 0x000fc0000383ffffull); /* self-loop BRA: stall 0, DRAIN */
	c = st_ctrl_decode(w);
	assert_int_equal(c.stall, 0);
	assert_int_equal(c.yield, 0);
}

/* Every legal combination round-trips and leaves every other bit alone. */
static void test_ctrl_roundtrip(void **state)
{
	(void)state;
	uint8_t w[16], orig[16];
	word_of(orig, 0x0123456789abcdefull, 0xfedcba9876543210ull);
	unsigned legal = 0, illegal = 0;
	for (unsigned stall = 0; stall < 16; stall++)
		for (unsigned y = 0; y < 2; y++)
			for (unsigned sb = 0; sb < 8; sb++)
				for (unsigned reuse = 0; reuse < 8; reuse++) {
					st_ctrl c = {(uint8_t)stall, (uint8_t)y, (uint8_t)sb, (uint8_t)(7 - sb), (uint8_t)(stall * 4 + y),
						     (uint8_t)reuse};
					memcpy(w, orig, 16);
					st_error err = {0};
					st_status s = st_ctrl_encode(w, c, &err);
					int ok = (sb <= 5 || sb == 7) && (7 - sb <= 5 || 7 - sb == 7) && !(y && (stall == 0 || stall > 11)) &&
						 !(reuse && !(y && stall >= 1 && stall <= 11));
					if (!ok) {
						assert_int_equal(s, ST_EINVAL);
						assert_true(strlen(err.msg) > 10);
						assert_memory_equal(w, orig, 16); /* untouched */
						illegal++;
						continue;
					}
					assert_int_equal(s, ST_OK);
					st_ctrl d = st_ctrl_decode(w);
					assert_memory_equal(&c, &d, sizeof c);
					/* bits outside 105..124 unchanged */
					uint64_t mask = ((1ull << 61) - (1ull << 41));
					assert_true(st_le64(w) == st_le64(orig));
					assert_true((st_le64(w + 8) & ~mask) == (st_le64(orig + 8) & ~mask));
					legal++;
				}
	assert_true(legal > 500);
	assert_true(illegal > 100);
}

static void test_ctrl_rules(void **state)
{
	(void)state;
	st_error err = {0};
	st_ctrl c = {12, 1, 7, 7, 0, 0};
	assert_int_equal(st_ctrl_check(c, &err), ST_EINVAL); /* stall 12 with yield set */
	assert_non_null(strstr(err.msg, "stall 12"));
	c.yield = 0;
	assert_int_equal(st_ctrl_check(c, &err), ST_OK);
	c.reuse = 1; /* reuse with stall 12 */
	assert_int_equal(st_ctrl_check(c, &err), ST_EINVAL);
	assert_non_null(strstr(err.msg, "reuse"));
	c = (st_ctrl){4, 1, 6, 7, 0, 0};
	assert_int_equal(st_ctrl_check(c, &err), ST_EINVAL); /* scoreboard 6 */
	c = (st_ctrl){4, 1, 5, 7, 0x40, 0};
	assert_int_equal(st_ctrl_check(c, &err), ST_EINVAL); /* wait bit 6 */
	c = (st_ctrl){0, 1, 7, 7, 0, 0};
	assert_int_equal(st_ctrl_check(c, &err), ST_EINVAL); /* stall 0 needs DRAIN */
	c = (st_ctrl){11, 1, 7, 7, 0x3f, 7};
	assert_int_equal(st_ctrl_check(c, &err), ST_OK);
}

static void test_opinfo_sorted(void **state)
{
	(void)state;
	size_t n = st_opinfo_count();
	assert_true(n > 100);
	for (size_t i = 1; i < n; i++)
		assert_true(strcmp(st_opinfo_at(i - 1)->name, st_opinfo_at(i)->name) < 0);
	for (size_t i = 0; i < n; i++)
		assert_ptr_equal(st_opinfo_find(st_opinfo_at(i)->name, strlen(st_opinfo_at(i)->name)), st_opinfo_at(i));
	assert_null(st_opinfo_find("NOTANOP", 7));
	assert_non_null(st_opinfo_find("IADD3.X", 5));
	for (unsigned i = 1; i < st_lat_nops; i++)
		assert_true(strcmp(st_lat_op_names[i - 1], st_lat_op_names[i]) < 0);
}

static const char mini[] =
	"\t.section\t.text.k,\"ax\",@progbits\n"
	"k:\n"
	".text.k:\n"
	"        /*0000*/                   ISETP.GE.AND P0, PT, R0, UR6, PT ;   /* 0x0000000600007c0c */\n"
	"                                                                        /* 0x000fe2000bf06270 */\n"
	".L_x_0:\n"
	"        /*0010*/              @!P0 BRA `(.L_x_0) ;                      /* 0xfffffffc00fc8947 */\n"
	"                                                                        /* 0x000fc0000383ffff */\n"
	"        /*0020*/                   EXIT ;                               /* 0x000000000000794d */\n"
	"                                                                        /* 0x000fea0003800000 */\n"
	".L_x_1:\n";

static void test_listing_parse(void **state)
{
	(void)state;
	st_listing *l = NULL;
	st_error err = {0};
	assert_int_equal(st_listing_parse(mini, strlen(mini), &l, &err), ST_OK);
	const struct st_lst_section *s = st_listing_find(l, "k");
	assert_non_null(s);
	assert_int_equal(s->n, 3);
	assert_string_equal(s->insns[1].text, "@!P0 BRA `(.L_x_0)");
	assert_string_equal(s->insns[1].label, ".L_x_0");
	assert_true(s->insns[2].hi == 0x000fea0003800000ull);
	assert_string_equal(s->end_label, ".L_x_1");
	assert_null(st_listing_find(l, "other"));
	st_listing_free(l);

	/* malformed inputs: one clear line naming the problem */
	const char *bad[] = {
		"\t.section\t.text.k,\"ax\"\n        /*0000*/  NOP ;  /* 0x0000000000007918 */\n",     /* no second word */
		"\t.section\t.text.k,\"ax\"\n        /*0000*/  NOP ;\n",                                 /* no -hex */
		"        /*0000*/  NOP ;  /* 0x0000000000007918 */\n /* 0x000fc00000000000 */\n",           /* no section */
		("\t.section\t.text.k,\"ax\"\n /*0010*/ NOP ; /* 0x0000000000007918 */\n /* 0x000fc00000000000 */\n"
		 " /*0000*/ NOP ; /* 0x0000000000007918 */\n /* 0x000fc00000000000 */\n"), /* offsets go back */
		"\t.section\t.text.k,\"ax\"\n /*0000*/ NOP ; /* 0x00000000000079 */\n /* 0x000fc00000000000 */\n",
		"\t.section\t.text.k,\"ax\"\n /*zz*/ NOP ;\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		l = NULL;
		st_status rc = st_listing_parse(bad[i], strlen(bad[i]), &l, &err);
		if (i == 5) { /* "/ *zz* /" is not an instruction line: skipped */
			assert_int_equal(rc, ST_OK);
			st_listing_free(l);
			continue;
		}
		assert_int_equal(rc, ST_EFORMAT);
		assert_null(l);
		assert_non_null(strstr(err.msg, "listing line"));
		assert_null(strchr(err.msg, '\n'));
	}
}

/* Code bytes for the mini listing, and a decode that checks words. */
static void test_decode_mini(void **state)
{
	(void)state;
	uint8_t code[48];
	word_of(code, 0x0000000600007c0cull, 0x000fe2000bf06270ull);
	word_of(code + 16, 0xfffffffc00fc8947ull, 0x000fc0000383ffffull);
	word_of(code + 32, 0x000000000000794dull, 0x000fea0003800000ull);
	st_sass_kernel *k = NULL;
	st_error err = {0};
	assert_int_equal(st_sass_decode_code(90, "k", code, sizeof code, mini, strlen(mini), &k, &err), ST_OK);
	assert_int_equal(st_sass_count(k), 3);
	const st_sass_insn *in = st_sass_insns(k);
	assert_string_equal(in[0].opcode, "ISETP.GE.AND");
	assert_int_equal(in[0].ndefs, 1); /* P0 (PT is not a register) */
	assert_int_equal(in[0].defs[0].file, ST_RF_P);
	assert_int_equal(in[0].nuses, 2); /* R0, UR6 */
	assert_int_equal(in[1].guard, 0);
	assert_int_equal(in[1].guard_neg, 1);
	assert_int_equal(in[1].target, 0x10);
	assert_true(in[1].flags & ST_F_BRANCH);
	assert_int_equal(in[2].cls, ST_CLASS_CONTROL);
	assert_int_equal(st_sass_block_count(k), 3); /* [0], [1] (label), [2] (after branch) */
	uint32_t first, count;
	int32_t succ[2];
	st_sass_block(k, 1, &first, &count, succ);
	assert_int_equal(first, 1);
	assert_int_equal(succ[0], 1); /* loops to itself */
	assert_int_equal(succ[1], 2); /* or falls through (guarded) */
	assert_ptr_equal(st_sass_at(k, 0x20), &in[2]);
	assert_null(st_sass_at(k, 0x30));
	/* ISETP -> guard of the BRA: 13 cycles (TABLE_TRUE(PRED), guard column) */
	assert_int_equal(st_sass_latency(90, &in[0], ST_SLOT_D, &in[1], ST_SLOT_G, ST_RES_PRED, ST_DEP_TRUE), 13);
	st_sass_free(k);

	/* a word that differs from the listing is an error naming the offset */
	code[16 + 9] ^= 0x40;
	assert_int_equal(st_sass_decode_code(90, "k", code, sizeof code, mini, strlen(mini), &k, &err), ST_EFORMAT);
	assert_non_null(strstr(err.msg, "/*0010*/"));
	assert_null(k);
	/* wrong size and unknown kernel */
	assert_int_equal(st_sass_decode_code(90, "k", code, 32, mini, strlen(mini), &k, &err), ST_EFORMAT);
	assert_int_equal(st_sass_decode_code(90, "nope", code, 48, mini, strlen(mini), &k, &err), ST_ENOTFOUND);
}

static const st_sass_insn *find_op(const st_sass_kernel *k, const char *opcode, const char *operands)
{
	for (size_t i = 0; i < st_sass_count(k); i++) {
		const st_sass_insn *in = &st_sass_insns(k)[i];
		if (!strcmp(in->opcode, opcode) && (!operands || strstr(in->operands, operands)))
			return in;
	}
	return NULL;
}

static int has_reg(const st_sass_reg *set, unsigned n, unsigned file, unsigned index, unsigned count)
{
	for (unsigned i = 0; i < n; i++)
		if (set[i].file == file && set[i].index == index && set[i].count == count)
			return 1;
	return 0;
}

static st_sass_kernel *decode_fixture(const char *name)
{
	char rel[512];
	snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", name);
	size_t n;
	uint8_t *bytes = st_test_read(rel, &n);
	st_cubin *c = NULL;
	st_error err = {0};
	if (st_cubin_open_mem(bytes, n, rel, &c, &err) != ST_OK)
		fail_msg("%s", err.msg);
	free(bytes);
	snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.sass", name);
	char *listing = st_test_fixture(rel);
	st_sass_opts opts = {.listing = listing};
	const st_kernel_info *ki = st_cubin_kernel(c, 0);
	st_sass_kernel *k = NULL;
	if (st_sass_decode(c, ki->name, &opts, &k, &err) != ST_OK)
		fail_msg("%s: %s", name, err.msg);
	assert_int_equal(st_sass_count(k), ki->insn_count);
	free(listing);
	st_cubin_free(c);
	return k;
}

/* Operand roles and widths on real instructions of the fixtures. */
static void test_fixture_operands(void **state)
{
	(void)state;
	st_sass_kernel *k = decode_fixture("matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu");
	const st_sass_insn *in = find_op(k, "HGMMA.64x64x16.F32", NULL);
	assert_non_null(in);
	assert_int_equal(in->cls, ST_CLASS_TENSOR);
	assert_int_equal(in->defs[0].count, 32); /* N/2 F32 accumulators */
	in = find_op(k, "LDGSTS.E.BYPASS.128", NULL);
	assert_non_null(in);
	assert_int_equal(in->space, ST_SPACE_GLOBAL);
	assert_true(in->flags & ST_F_ASYNC);
	in = find_op(k, "IMAD.WIDE", NULL);
	assert_non_null(in);
	assert_int_equal(in->defs[0].count, 2);
	in = find_op(k, "DEPBAR.LE", NULL);
	assert_non_null(in);
	assert_int_equal(in->cls, ST_CLASS_SYNC);
	assert_int_equal(in->ndefs + in->nuses, 0);
	in = find_op(k, "WARPGROUP.ARRIVE", NULL);
	assert_non_null(in);
	assert_true(in->flags & ST_F_BARRIER);
	st_sass_free(k);

	k = decode_fixture("attn_fwd_f16_bh4_n1024_d64_b128x64");
	in = find_op(k, "HGMMA.64x64x16.F32", "R120, R152");
	assert_non_null(in); /* A from registers: R152..R155; accumulator R120..R151 */
	assert_true(has_reg(in->uses, in->nuses, ST_RF_R, 152, 4));
	assert_true(has_reg(in->uses, in->nuses, ST_RF_R, 120, 32));
	assert_true(has_reg(in->defs, in->ndefs, ST_RF_R, 120, 32));
	assert_true(has_reg(in->uses, in->nuses, ST_RF_UR, 12, 4)); /* gdesc[UR12] */
	in = find_op(k, "LDSM.16.M88.4", NULL);
	if (in) {
		assert_int_equal(in->defs[0].count, 4);
		assert_int_equal(in->space, ST_SPACE_SHARED);
	}
	in = find_op(k, "MUFU.EX2", NULL);
	assert_non_null(in);
	assert_true(in->flags & ST_F_VARLAT);
	st_sass_free(k);
}

/* Hidden register groups (docs/sass.md): registers the text prints once but the instruction
 * reads or writes as a group.  IMAD.HI's Rc is a 64-bit addend {Rc+1:Rc} (issue 15: a rename of
 * R4 at 0x650 of matmul 2048 made the IMAD.HI at 0x700 read {R187:R186}). */
static void test_hidden_groups(void **state)
{
	(void)state;
	st_sass_kernel *k = decode_fixture("matmul_f16_2048x2048x2048_b128x256x64_w8s3");
	const st_sass_insn *in = st_sass_at(k, 0x700);
	assert_non_null(in);
	assert_string_equal(in->opcode, "IMAD.HI.U32");
	assert_true(has_reg(in->uses, in->nuses, ST_RF_R, 4, 2)); /* R4, R5 */
	assert_true(has_reg(in->uses, in->nuses, ST_RF_R, 5, 1)); /* Ra */
	assert_true(has_reg(in->uses, in->nuses, ST_RF_R, 7, 1)); /* Rb */
	assert_int_equal(in->defs[0].count, 1);
	in = st_sass_at(k, 0x740); /* IMAD.HI.U32 R4, R4, R5, RZ: no addend register */
	assert_non_null(in);
	assert_int_equal(in->nuses, 2);
	st_sass_free(k);

	/* the rule on text alone: the carry-out form, a signed one with an immediate, STSM.x4, TMA,
	 * BRX, LEPC */
	static const struct { const char *text; unsigned def, use_file, use, count; } cases[] = {
		{"IMAD.HI.U32 R6, P0, R7, R9, R6 ;", 6, ST_RF_R, 6, 2},
		{"IMAD.HI R0, R23, -0x6db6db6d, R22 ;", 0, ST_RF_R, 22, 2},
		{"STSM.16.M88.4 [R2], R24 ;", 255, ST_RF_R, 24, 4},
		{"UTMALDG.2D [UR4], [UR20] ;", 255, ST_RF_UR, 4, 4},
		{"UTMALDG.2D [UR4], [UR20] ;", 255, ST_RF_UR, 20, 2},
		{"UTMASTG.2D [UR12], [UR4] ;", 255, ST_RF_UR, 12, 3},
		{"UTMACCTL.IV [UR20] ;", 255, ST_RF_UR, 20, 2},
		{"UBLKCP.S.G [UR4], [UR8], UR6 ;", 255, ST_RF_UR, 8, 2},
		{"BRX R4 -0x100 ;", 255, ST_RF_R, 4, 2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct st_analysis a;
		st_error err = {0};
		assert_int_equal(st_sass_analyze(90, cases[i].text, NULL, &a, &err), ST_OK);
		if (!has_reg(a.uses, a.nuses, cases[i].use_file, cases[i].use, cases[i].count))
			fail_msg("%s: no use of %u registers from %u", cases[i].text, cases[i].count, cases[i].use);
		if (cases[i].def != 255)
			assert_true(a.ndefs >= 1 && a.defs[0].index == cases[i].def && a.defs[0].count == 1);
	}
	struct st_analysis a;
	st_error err = {0};
	assert_int_equal(st_sass_analyze(90, "LEPC R2 ;", NULL, &a, &err), ST_OK);
	assert_true(has_reg(a.defs, a.ndefs, ST_RF_R, 2, 2));
}

/* Fixed latencies from nvdisasm's tables (values in latencies/sm_90_latencies.txt). */
static void test_latency(void **state)
{
	(void)state;
	st_sass_kernel *k = decode_fixture("add_f32_1M");
	const st_sass_insn *in = st_sass_insns(k);
	const st_sass_insn *iadd = find_op(k, "IADD3", NULL), *isetp = find_op(k, "ISETP.GE.AND", NULL);
	const st_sass_insn *ldg = find_op(k, "LDG.E.128", NULL), *fadd = find_op(k, "FADD", NULL);
	const st_sass_insn *imad = find_op(k, "IMAD.WIDE", NULL), *uldc = find_op(k, "ULDC", NULL);
	assert_non_null(iadd);
	assert_non_null(ldg);
	/* FXU -> FXU 6, FXU -> MIO_SLOW 8, FXU -> guard 13, FMAI -> FMAI 4, IMAD -> IMAD 6 */
	assert_int_equal(st_sass_latency(90, iadd, ST_SLOT_D, isetp, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), 6);
	assert_int_equal(st_sass_latency(90, iadd, ST_SLOT_D, ldg, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), 8);
	assert_int_equal(st_sass_latency(90, isetp, ST_SLOT_D, ldg, ST_SLOT_G, ST_RES_PRED, ST_DEP_TRUE), 13);
	assert_int_equal(st_sass_latency(90, fadd, ST_SLOT_D, fadd, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), 4);
	assert_int_equal(st_sass_latency(90, imad, ST_SLOT_D, imad, ST_SLOT_C, ST_RES_GPR, ST_DEP_TRUE), 6);
	assert_int_equal(st_sass_latency(90, imad, ST_SLOT_D, iadd, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), 5);
	/* variable-latency producer: the fixed part is 2 */
	assert_int_equal(st_sass_latency(90, ldg, ST_SLOT_D, fadd, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), 2);
	/* ULDC -> math on the uniform path: 5 */
	assert_int_equal(st_sass_latency(90, uldc, ST_SLOT_D, isetp, ST_SLOT_B, ST_RES_UGPR, ST_DEP_TRUE), 5);
	/* WAW FXU -> FXU 1, sm_80 FXU -> MIO_SLOW 8, sm_86 FXU -> MIO_SLOW 5 */
	assert_int_equal(st_sass_latency(90, iadd, ST_SLOT_D, iadd, ST_SLOT_D, ST_RES_GPR, ST_DEP_OUTPUT), 1);
	assert_int_equal(st_sass_latency(80, iadd, ST_SLOT_D, ldg, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), 8);
	assert_int_equal(st_sass_latency(86, iadd, ST_SLOT_D, ldg, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), 5);
	assert_int_equal(st_sass_latency(89, iadd, ST_SLOT_D, ldg, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), 5);
	assert_int_equal(st_sass_latency(75, iadd, ST_SLOT_D, ldg, ST_SLOT_A, ST_RES_GPR, ST_DEP_TRUE), -1);
	/* the fixture respects it: stalls from ISETP P0 to @!P0 LDG add up to >= 13 */
	unsigned sum = 0;
	for (const st_sass_insn *p = isetp; p < ldg; p++)
		sum += p->ctrl.stall;
	assert_true(sum >= 13);
	(void)in;
	st_sass_free(k);

	k = decode_fixture("matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu");
	const st_sass_insn *arv = find_op(k, "WARPGROUP.ARRIVE", NULL), *hg = find_op(k, "HGMMA.64x64x16.F32", NULL);
	const st_sass_insn *dep = find_op(k, "WARPGROUP.DEPBAR.LE", NULL), *hgsb = find_op(k, "HGMMA.64x64x16.F32", "gsb0");
	const st_sass_insn *fmul = find_op(k, "FMUL", NULL);
	assert_non_null(arv);
	assert_non_null(hgsb);
	/* any FXU/FMAI register writer -> WARPGROUP.ARRIVE (GMMA_SB column): 8 */
	assert_int_equal(st_sass_latency(90, fmul, ST_SLOT_D, arv, -1, ST_RES_GPR, ST_DEP_TRUE), 8);
	/* ARRIVE -> HGMMA on the GMMA scoreboard: 6; HGMMA gsb0 -> WARPGROUP.DEPBAR: 3 */
	assert_int_equal(st_sass_latency(90, arv, -1, hg, -1, ST_RES_GMMA_SB, ST_DEP_TRUE), 6);
	assert_int_equal(st_sass_latency(90, hgsb, -1, dep, -1, ST_RES_GMMA_GSB, ST_DEP_TRUE), 3);
	st_sass_free(k);
}

/* The `.reuse` marks nvdisasm prints against the reuse bits ptxas set: positional (a, b, c by
 * printed source order) on every opcode of the fixtures but HADD2.F32 (Rb carries bit c) and
 * IABS (its one source carries bit b). */
static void test_reuse_marks(void **state)
{
	(void)state;
	static const char *const names[] = {"add_f32_1M", "softmax_f32_1024x1024", "layernorm_f16_1024x1024",
					    "attn_fwd_f16_bh4_n1024_d64_b128x64",
					    "matmul_f16_512x512x2048_b64x64x32_w4s3_leakyrelu",
					    "matmul_f16_1024x1024x1024_b128x128x64_w4s4",
					    "matmul_f16_2048x2048x2048_b128x256x64_w8s3"};
	size_t flagged = 0, positional = 0, other = 0;
	for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
		st_sass_kernel *k = decode_fixture(names[f]);
		for (size_t i = 0; i < st_sass_count(k); i++) {
			const st_sass_insn *x = &st_sass_insns(k)[i];
			st_ctrl c = x->ctrl;
			unsigned bits = c.yield && c.stall >= 1 && c.stall <= 11 ? c.reuse : 0;
			int marks = st_sass_reuse_marks(x);
			if (!bits) {
				assert_int_equal(marks, 0); /* no flag, no mark */
				continue;
			}
			flagged++;
			if (marks == (int)bits) {
				positional++;
			} else {
				/* the two opcodes whose printed source is not the port of the same name */
				if (!strcmp(x->opcode, "HADD2.F32")) {
					assert_int_equal(bits, 4); /* HADD2.F32 Rd, -RZ, Rb.reuse: bit c */
					assert_int_equal(marks, 2);
				} else {
					assert_string_equal(x->opcode, "IABS");
					assert_int_equal(bits, 2); /* IABS Rd, Ra.reuse: bit b */
					assert_int_equal(marks, 1);
				}
				other++;
			}
		}
		st_sass_free(k);
	}
	print_message("  reuse-flagged instructions: %zu; positional: %zu; HADD2.F32 or IABS (another port): %zu\n",
		      flagged, positional, other);
	assert_true(flagged > 100);
	assert_true(other > 0 && positional > 10 * other);
	/* marks that are not on a plain R register in one source slot */
	st_sass_insn fake = {0};
	st_sass_reg two[2] = {{4, ST_RF_R, 1, ST_SLOT_A}, {4, ST_RF_R, 1, ST_SLOT_B}};
	fake.uses = two;
	fake.nuses = 2;
	fake.operands = "R4.reuse, R4";
	assert_int_equal(st_sass_reuse_marks(&fake), -1);
	fake.nuses = 1;
	assert_int_equal(st_sass_reuse_marks(&fake), 1);
	fake.operands = "-RZ, |R4|.reuse";
	assert_int_equal(st_sass_reuse_marks(&fake), 1);
	fake.operands = "UR4.reuse";
	assert_int_equal(st_sass_reuse_marks(&fake), -1);
	fake.operands = "R5.reuse";
	assert_int_equal(st_sass_reuse_marks(&fake), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctrl_decode),      cmocka_unit_test(test_ctrl_roundtrip),
		cmocka_unit_test(test_ctrl_rules),       cmocka_unit_test(test_opinfo_sorted),
		cmocka_unit_test(test_listing_parse),    cmocka_unit_test(test_decode_mini),
		cmocka_unit_test(test_fixture_operands),
		cmocka_unit_test(test_hidden_groups),
		cmocka_unit_test(test_latency),
		cmocka_unit_test(test_reuse_marks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
