/* The ptxas 13.5 twins of the Triton fixtures (test/fixtures/triton-sm90-ptxas13.5): the
 * CUDA 13 ELF flavour, the .nv.info attributes new in 13.x, and that every kernel is rewritable. */
#include "testutil.h"

#include "sasstune/cubin.h"
#include "sasstune/sass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SET "triton-sm90-ptxas13.5"

static st_cubin *open_bytes(const uint8_t *bytes, size_t size, const char *rel)
{
	st_cubin *c = NULL;
	st_error err = {0};
	if (st_cubin_open_mem(bytes, size, rel, &c, &err) != ST_OK)
		fail_msg("%s: %s", rel, err.msg);
	return c;
}

/* The number of records of kernel k with id attr, each checked to carry the given name. */
static int count_attr(const st_cubin *c, size_t k, unsigned attr, const char *name)
{
	int n = 0;
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->kernel != k || r->attr != attr)
			continue;
		assert_non_null(r->name);
		assert_string_equal(r->name, name);
		n++;
	}
	return n;
}

/* Decoding with the committed CUDA 13 listing checks it word for word against the cubin. */
static void decode_with_listing(const st_cubin *c, const char *fixture)
{
	char rel[512];
	snprintf(rel, sizeof rel, SET "/%s/sm_90.sass", fixture);
	char *listing = st_test_fixture(rel);
	st_sass_opts opts = {.listing = listing};
	const st_kernel_info *ki = st_cubin_kernel(c, 0);
	st_sass_kernel *k = NULL;
	st_error err = {0};
	if (st_sass_decode(c, ki->name, &opts, &k, &err) != ST_OK)
		fail_msg("%s: %s", fixture, err.msg);
	assert_int_equal(st_sass_count(k), ki->insn_count);
	st_sass_free(k);
	free(listing);
}

/* Every 13.5 fixture: CUDA 13 ELF (EI_OSABI 0x41), one entry kernel, byte-identical write-back,
 * LANGUAGE / NVSAL_SW_WAR / PREEXIT_USED named in the kernel's .nv.info, rewritable, decodable. */
static void test_ptxas13_fixtures(void **state)
{
	(void)state;
	for (const char *const *f = st_test_triton_fixtures; *f; f++) {
		char rel[512];
		snprintf(rel, sizeof rel, SET "/%s/sm_90.cubin", *f);
		size_t size;
		uint8_t *bytes = st_test_read(rel, &size);
		st_cubin *c = open_bytes(bytes, size, rel);
		assert_int_equal(st_cubin_sm(c), 90);
		assert_int_equal(st_cubin_osabi(c), 0x41);
		assert_int_equal(st_cubin_kernel_count(c), 1);
		assert_true(st_cubin_kernel(c, 0)->entry);
		assert_int_equal(count_attr(c, 0, 0x66, "EIATTR_LANGUAGE"), 1);
		assert_int_equal(count_attr(c, 0, 0x6b, "EIATTR_NVSAL_SW_WAR"), 1);
		assert_int_equal(count_attr(c, 0, 0x6d, "EIATTR_PREEXIT_USED"), 1);
		st_error err = {0};
		if (st_cubin_check_rewritable(c, 0, &err) != ST_OK)
			fail_msg("%s: %s", rel, err.msg);
		decode_with_listing(c, *f);
		size_t out_size;
		const uint8_t *out = st_cubin_data(c, &out_size);
		assert_int_equal(out_size, size);
		assert_memory_equal(out, bytes, size);
		st_cubin_free(c);
		free(bytes);
	}
}

static void test_ptxas13_names(void **state)
{
	(void)state;
	assert_string_equal(st_eiattr_name(0x66), "EIATTR_LANGUAGE");
	assert_string_equal(st_eiattr_name(0x6b), "EIATTR_NVSAL_SW_WAR");
	assert_string_equal(st_eiattr_name(0x6d), "EIATTR_PREEXIT_USED");
	assert_null(st_eiattr_name(0x6a)); /* the id the refusal test below patches in */
}

/* The kernel's LANGUAGE record turned into the unknown id 0x6a: still read, but refused. */
static void test_ptxas13_unknown_attr_refused(void **state)
{
	(void)state;
	const char *rel = SET "/add_f32_1M/sm_90.cubin";
	size_t size;
	uint8_t *bytes = st_test_read(rel, &size);
	st_cubin *c = open_bytes(bytes, size, rel);
	size_t at = 0;
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->kernel == 0 && r->attr == 0x66)
			at = (size_t)(r->payload - st_cubin_data(c, NULL)) - 3; /* fmt, attr, size16, payload */
	}
	st_cubin_free(c);
	assert_true(at > 0);
	assert_int_equal(bytes[at], 0x66);
	bytes[at] = 0x6a;
	c = open_bytes(bytes, size, rel);
	st_error err = {0};
	assert_int_equal(st_cubin_check_rewritable(c, 0, &err), ST_EUNSUPPORTED);
	if (!strstr(err.msg, "attribute 0x6a in .nv.info.add_kernel is not understood"))
		fail_msg("unexpected message '%s'", err.msg);
	st_cubin_free(c);
	free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptxas13_fixtures),
		cmocka_unit_test(test_ptxas13_names),
		cmocka_unit_test(test_ptxas13_unknown_attr_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
