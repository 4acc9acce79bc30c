/* Kernels that spill (test/fixtures/spill, make.sh): the EIATTR_ANNOTATIONS record lists
 * (kind 1, offset) pairs naming the spill and fill instructions.  The kernel is rewritable, every
 * pair is a code reference, and a permutation moves each offset with its instruction. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sass.h"

#include <stdlib.h>
#include <string.h>

#define ANNOT 0x55

/* The ANNOTATIONS record of kernel 0 (fails the test without exactly one). */
static const st_nvinfo *annotations(const st_cubin *c)
{
	const st_nvinfo *found = NULL;
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->kernel == 0 && r->attr == ANNOT) {
			assert_null(found);
			found = r;
		}
	}
	assert_non_null(found);
	return found;
}

/* The 16-byte word at byte offset off of kernel 0's code, control bits (105..127) cleared. */
static void word_at(const st_cubin *c, uint32_t off, uint8_t out[16])
{
	size_t size;
	const uint8_t *code = st_cubin_code(c, 0, &size);
	assert_true(off + 16 <= size);
	memcpy(out, code + off, 16);
	out[13] &= 0x01, out[14] = 0, out[15] = 0;
}

/* The fixtures and how many spill/fill instructions their listings hold. */
static const struct { const char *cubin; size_t pairs; } fixtures[] = {
	{"spill/attn_spill/sm_90.cubin", 214},   /* 126 STL + 88 LDL */
	{"spill/matmul_spill/sm_90.cubin", 354}, /* HGMMA kernel at --maxrregcount 128 */
};

static void spill_rewritable(const char *rel, size_t want)
{
	size_t size;
	uint8_t *bytes = st_test_read(rel, &size);
	st_cubin *c = NULL;
	st_error err = {0};
	assert_int_equal(st_cubin_open_mem(bytes, size, "spill", &c, &err), ST_OK);
	assert_int_equal(st_cubin_check_rewritable(c, 0, &err), ST_OK);
	const st_nvinfo *a = annotations(c);
	assert_int_equal(a->size % 8, 0);
	size_t pairs = a->size / 8, refs = 0;
	for (size_t i = 0; i < st_cubin_ref_count(c, 0); i++) {
		const st_code_ref *r = st_cubin_ref(c, 0, i);
		refs += r->kind == ST_REF_ATTR && r->what && !strcmp(r->what, "EIATTR_ANNOTATIONS");
	}
	assert_int_equal(refs, pairs);
	assert_int_equal(pairs, want);
	st_cubin_free(c);
	free(bytes);
}

static void test_spill_rewritable(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
		spill_rewritable(fixtures[i].cubin, fixtures[i].pairs);
}

/* Reverse every slot but the entry (slot 0, which stays): each annotated instruction's word is found at its new offset. */
static void test_spill_offsets_follow(void **state)
{
	(void)state;
	size_t size;
	uint8_t *bytes = st_test_read("spill/attn_spill/sm_90.cubin", &size);
	st_cubin *c = NULL;
	st_error err = {0};
	assert_int_equal(st_cubin_open_mem(bytes, size, "spill", &c, &err), ST_OK);
	const st_kernel_info *ki = st_cubin_kernel(c, 0);
	size_t n = ki->insn_count;
	const st_nvinfo *a = annotations(c);
	size_t pairs = a->size / 8;
	uint32_t *old = malloc(pairs * sizeof *old), *perm = malloc(n * sizeof *perm);
	uint8_t (*w)[16] = malloc(pairs * sizeof *w);
	assert_true(old && perm && w);
	for (size_t p = 0; p < pairs; p++) {
		assert_int_equal(a->payload[8 * p], 1); /* kind 1 */
		memcpy(&old[p], a->payload + 8 * p + 4, 4);
		word_at(c, old[p], w[p]);
	}
	perm[0] = 0;
	for (size_t j = 1; j < n; j++)
		perm[j] = (uint32_t)(n - j);
	if (st_cubin_permute(c, 0, perm, n, &err) != ST_OK)
		fail_msg("permute: %s", err.msg);
	st_cubin *d = st_test_cubin_copy(c);
	const st_nvinfo *b = annotations(d);
	assert_int_equal(b->size, 8 * pairs); /* a is stale after the permutation */
	for (size_t p = 0; p < pairs; p++) {
		uint32_t now;
		memcpy(&now, b->payload + 8 * p + 4, 4);
		assert_int_equal(now, (uint32_t)(16 * n - old[p])); /* slot s (s > 0) went to n - s */
		uint8_t x[16];
		word_at(d, now, x);
		assert_memory_equal(x, w[p], 16);
	}
	st_cubin_free(d);
	st_cubin_free(c);
	free(old), free(perm), free(w), free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spill_rewritable),
		cmocka_unit_test(test_spill_offsets_follow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
