/* sass: def/use sets against `nvdisasm -plr` (ground truth) on every fixture and on the
 * corpus (test/fixtures/corpus).  nvdisasm runs for real: Triton's bundled 12.8 for the
 * Triton cubins (ST_TRITON_BIN), a CUDA 13 nvdisasm for the nvcc 13 cubins (pip
 * nvidia-cuda-nvdisasm, or SASSTUNE_NVDISASM13).  Without the tool a group is skipped.
 *
 * Known, explained differences (checked below, anything else fails):
 *  - CALL: -plr lists the callee's clobbers as defs; sasstune says a call reads and writes
 *    every register (a call is a scheduling barrier; the callee is not analysed).
 *  - P2R Rd, PR, Ra, mask: -plr does not mark the predicates of the mask as read; they are
 *    (P2R packs them into Rd), so sasstune keeps those uses. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tally {
	const char *file;
	size_t unexplained, explained;
};

static void report(void *ctx, const st_sass_insn *in, const char *diff)
{
	struct tally *t = ctx;
	int is_call = !strncmp(in->opcode, "CALL", 4);
	int is_p2r = !strncmp(in->opcode, "P2R", 3) && strstr(in->operands, "PR,") && !strstr(diff, "missing") &&
		     !strstr(diff, "def") && !strstr(diff, " R") && !strstr(diff, " UR");
	if (is_call || is_p2r) {
		t->explained++;
		return;
	}
	t->unexplained++;
	print_message("%s: %04x %s %s: %s\n", t->file, in->offset, in->opcode, in->operands, diff);
}

/* Hidden register groups: a register nvdisasm prints once but the instruction reads as part
 * of a pair (IMAD.HI's Rc, BRX's Ra) is, in ptxas output, usually another operand too, so -plr
 * agrees on the original.  This writes R200/R208/R216/R224 into the Rd/Ra/Rb/Rc bytes (2, 3, 4,
 * 8) that hold one of the instruction's R registers (as scripts/plr-probe.py does), so that the
 * hidden halves stand apart; CALL and RET keep theirs.  Returns the number of fields moved. */
static size_t move_fields_apart(st_cubin *c, const char *rel, const char *text, size_t len)
{
	static const unsigned byte[4] = {2, 3, 4, 8}, to[4] = {200, 208, 216, 224};
	st_error err = {0};
	size_t moved = 0;
	for (size_t ki = 0; ki < st_cubin_kernel_count(c); ki++) {
		size_t size;
		const uint8_t *code = st_cubin_code(c, ki, &size);
		st_sass_kernel *k = NULL;
		if (st_sass_decode_code((int)st_cubin_sm(c), st_cubin_kernel(c, ki)->name, code, size, text, len, &k, &err))
			fail_msg("%s: %s", rel, err.msg);
		const st_sass_insn *in = st_sass_insns(k);
		for (size_t i = 0; i < st_sass_count(k); i++) {
			uint8_t w[16];
			memcpy(w, in[i].word, 16);
			int any = 0;
			for (unsigned f = 0; f < 4 && strncmp(in[i].opcode, "CALL", 4) && strncmp(in[i].opcode, "RET", 3); f++)
				for (unsigned r = 0; r < (unsigned)in[i].ndefs + in[i].nuses; r++) {
					const st_sass_reg *g = r < in[i].ndefs ? &in[i].defs[r] : &in[i].uses[r - in[i].ndefs];
					if (g->file == ST_RF_R && w[byte[f]] != 255 && w[byte[f]] >= g->index &&
					    w[byte[f]] < g->index + g->count && in[i].word[byte[f]] == w[byte[f]]) {
						w[byte[f]] = (uint8_t)to[f];
						any = 1;
						moved++;
					}
				}
			if (any && st_cubin_set_regs(c, ki, i, w, &err) != ST_OK)
				fail_msg("%s: %s", rel, err.msg);
		}
		st_sass_free(k);
	}
	return moved;
}

/* Decode every kernel of a cubin with `tool`, compare with its -plr (with the register fields
 * moved apart first when `apart`); returns the number of instructions compared. */
static size_t check_cubin_as(const char *rel, const char *tool, int apart)
{
	char *path = st_test_fixture(rel);
	st_cubin *c = NULL;
	st_error err = {0};
	if (st_cubin_open_file(path, &c, &err) != ST_OK)
		fail_msg("%s", err.msg);
	st_sass_opts opts = {.nvdisasm = tool};
	char *text = NULL, *plr = NULL;
	size_t len = 0, plen = 0;
	if (apart) {
		if (st_sass_listing(c, &opts, NULL, &text, &len, &err) != ST_OK)
			fail_msg("%s: %s", rel, err.msg);
		size_t moved = move_fields_apart(c, rel, text, len);
		print_message("%s: %zu register fields moved apart\n", rel, moved);
		assert_true(moved > 0);
		free(text);
		text = NULL;
	}
	if (st_sass_listing(c, &opts, NULL, &text, &len, &err) != ST_OK ||
	    st_sass_listing(c, &opts, "-plr", &plr, &plen, &err) != ST_OK)
		fail_msg("%s: %s", rel, err.msg);
	size_t total = 0;
	struct tally t = {rel, 0, 0};
	for (size_t ki = 0; ki < st_cubin_kernel_count(c); ki++) {
		const st_kernel_info *info = st_cubin_kernel(c, ki);
		size_t size;
		const uint8_t *code = st_cubin_code(c, ki, &size);
		st_sass_kernel *k = NULL;
		if (st_sass_decode_code((int)st_cubin_sm(c), info->name, code, size, text, len, &k, &err) != ST_OK)
			fail_msg("%s: %s", rel, err.msg);
		size_t agree = 0, compared = 0;
		if (st_sass_check_plr(k, plr, plen, &agree, &compared, report, &t, &err) != ST_OK)
			fail_msg("%s: %s", rel, err.msg);
		assert_true(compared > 0);
		assert_true(compared <= st_sass_count(k));
		print_message("%s %s: %zu of %zu agree with -plr\n", rel, info->name, agree, compared);
		total += compared;
		st_sass_free(k);
	}
	assert_int_equal(t.unexplained, 0);
	free(text);
	free(plr);
	free(path);
	st_cubin_free(c);
	return total;
}

static size_t check_cubin(const char *rel, const char *tool) { return check_cubin_as(rel, tool, 0); }

static char *triton_nvdisasm(void)
{
	const char *bin = st_test_triton_bin();
	if (!bin)
		return NULL;
	char buf[4096];
	snprintf(buf, sizeof buf, "%s/nvdisasm", bin);
	return access(buf, X_OK) == 0 ? strdup(buf) : NULL;
}

/* A CUDA 13 nvdisasm: SASSTUNE_NVDISASM13, else pip's nvidia-cuda-nvdisasm. */
static char *cuda13_nvdisasm(void)
{
	const char *env = getenv("SASSTUNE_NVDISASM13");
	if (env && *env)
		return access(env, X_OK) == 0 ? strdup(env) : NULL;
	FILE *p = popen("python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], \"cu13\", \"bin\", "
			"\"nvdisasm\"))' 2>/dev/null",
			"r");
	if (!p)
		return NULL;
	char buf[4096] = "";
	char *got = fgets(buf, sizeof buf, p);
	pclose(p);
	if (!got)
		return NULL;
	buf[strcspn(buf, "\n")] = 0;
	return buf[0] && access(buf, X_OK) == 0 ? strdup(buf) : NULL;
}

static void test_triton_fixtures(void **state)
{
	(void)state;
	char *tool = triton_nvdisasm();
	if (!tool)
		skip();
	size_t n = 0;
	for (size_t i = 0; st_test_triton_fixtures[i]; i++) {
		char rel[512];
		snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", st_test_triton_fixtures[i]);
		n += check_cubin(rel, tool);
	}
	assert_true(n > 4000);
	free(tool);
}

static void test_triton_corpus(void **state)
{
	(void)state;
	char *tool = triton_nvdisasm();
	if (!tool)
		skip();
	static const char *const names[] = {"matmul_f16", "matmul_i8", "matmul_tf32", "softmax", "layernorm"};
	static const int sms[] = {80, 86, 90};
	size_t n = 0;
	for (size_t s = 0; s < 3; s++)
		for (size_t i = 0; i < 5; i++) {
			char rel[256];
			snprintf(rel, sizeof rel, "corpus/triton-sm%d-%s.cubin", sms[s], names[i]);
			n += check_cubin(rel, tool);
		}
	assert_true(n > 5000);
	free(tool);
}

static void test_nvcc_corpus(void **state)
{
	(void)state;
	char *tool = cuda13_nvdisasm();
	if (!tool)
		skip();
	static const char *const names[] = {"nvcc-sm80", "nvcc-sm86", "nvcc-sm89", "nvcc-sm90", "nvcc-sm90a"};
	size_t n = 0;
	for (size_t i = 0; i < 5; i++) {
		char rel[256];
		snprintf(rel, sizeof rel, "corpus/%s.cubin", names[i]);
		n += check_cubin(rel, tool);
	}
	assert_true(n > 4000);
	free(tool);
}

/* Hidden groups (docs/sass.md): the Triton fixtures and the TMA bench kernel with their
 * register fields moved apart, and the nvcc cubins of test/fixtures/cuda (BRX, LEPC, UBLKCP),
 * agree with -plr but for the two known kinds.  Before issue 15's fix IMAD.HI's Rc pair failed
 * here (matmul 2048: "IMAD.HI.U32 R4, R5, R208, R224: missing use R225"). */
static void test_hidden_groups(void **state)
{
	(void)state;
	char *tool = triton_nvdisasm(), *tool13 = cuda13_nvdisasm();
	if (!tool || !tool13) {
		free(tool);
		free(tool13);
		skip();
	}
	size_t n = 0;
	for (size_t i = 0; st_test_triton_fixtures[i]; i++) {
		char rel[512];
		snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", st_test_triton_fixtures[i]);
		n += check_cubin_as(rel, tool, 1);
	}
	n += check_cubin("bench/mm_tma_device.sm_90.cubin", tool);
	n += check_cubin_as("bench/mm_tma_device.sm_90.cubin", tool, 1);
	static const char *const cuda[] = {"hopper.sm_90a", "jumptable.sm_80", "jumptable.sm_90", "printf.sm_90"};
	for (size_t i = 0; i < sizeof cuda / sizeof *cuda; i++) {
		char rel[256];
		snprintf(rel, sizeof rel, "cuda/%s.cubin", cuda[i]);
		n += check_cubin(rel, tool13) + check_cubin_as(rel, tool13, 1);
	}
	print_message("%zu instructions compared\n", n);
	assert_true(n > 6000);
	free(tool);
	free(tool13);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_triton_fixtures),
		cmocka_unit_test(test_triton_corpus),
		cmocka_unit_test(test_nvcc_corpus),
		cmocka_unit_test(test_hidden_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
