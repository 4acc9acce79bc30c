/* Unit tests of the cubin reader: ELF flavours, kernels, records, round trips. */
#include "testutil.h"

#include "sasstune/cubin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static st_cubin *open_fixture(const char *rel, uint8_t **bytes, size_t *size)
{
	*bytes = st_test_read(rel, size);
	st_cubin *c = NULL;
	st_error err = {0};
	st_status rc = st_cubin_open_mem(*bytes, *size, rel, &c, &err);
	if (rc)
		fail_msg("%s: %s", rel, err.msg);
	return c;
}

/* Every Triton fixture: sm_90 (old ELF), one kernel, byte-identical write-back. */
static void test_triton_read_roundtrip(void **state)
{
	(void)state;
	for (const char *const *f = st_test_triton_fixtures; *f; f++) {
		char rel[512];
		snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", *f);
		uint8_t *bytes;
		size_t size;
		st_cubin *c = open_fixture(rel, &bytes, &size);
		assert_int_equal(st_cubin_sm(c), 90);
		assert_int_equal(st_cubin_osabi(c), 0x33);
		assert_int_equal(st_cubin_kernel_count(c), 1);
		const st_kernel_info *k = st_cubin_kernel(c, 0);
		assert_non_null(k);
		assert_true(k->entry);
		assert_true(k->insn_count > 8);
		assert_int_equal(k->size, k->insn_count * 16);
		assert_int_equal(st_cubin_find_kernel(c, k->name), 0);
		assert_int_equal(st_cubin_find_kernel(c, "no_such_kernel"), ST_CUBIN_NONE);
		/* the first instruction of every Triton kernel loads the stack pointer: LDC R1, c[0x0][0x28] */
		uint64_t lo, hi;
		st_cubin_insn(c, 0, 0, &lo, &hi);
		assert_int_equal(lo & 0xfff, 0xb82);
		/* the kernel's .nv.info has an EXIT list */
		bool exit_list = false;
		for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
			const st_nvinfo *r = st_cubin_nvinfo(c, i);
			if (r->kernel == 0 && r->attr == 0x1c) {
				exit_list = true;
				assert_string_equal(r->name, "EIATTR_EXIT_INSTR_OFFSETS");
				assert_int_equal(r->format, 4);
				assert_true(r->size >= 4 && r->size % 4 == 0);
			}
		}
		assert_true(exit_list);
		size_t out_size;
		const uint8_t *out = st_cubin_data(c, &out_size);
		assert_int_equal(out_size, size);
		assert_memory_equal(out, bytes, size);
		st_cubin_free(c);
		free(bytes);
	}
}

/* The add kernel: known layout from readelf. */
static void test_add_kernel_layout(void **state)
{
	(void)state;
	uint8_t *bytes;
	size_t size;
	st_cubin *c = open_fixture("triton-sm90/add_f32_1M/sm_90.cubin", &bytes, &size);
	const st_kernel_info *k = st_cubin_kernel(c, 0);
	assert_string_equal(k->name, "add_kernel");
	assert_int_equal(k->section, 14);
	assert_int_equal(k->file_offset, 0x1000);
	assert_int_equal(k->size, 0x380);
	assert_int_equal(k->insn_count, 0x38);
	assert_int_equal(st_cubin_eflags(c), 0x5a0d5a);
	const st_symbol *s = st_cubin_symbol(c, k->symbol);
	assert_string_equal(s->name, "add_kernel");
	/* the parameter bank .nv.constant0.add_kernel */
	bool bank0 = false;
	for (size_t i = 0; i < st_cubin_const_count(c); i++) {
		const st_const_bank *b = st_cubin_const(c, i);
		if (b->bank == 0 && b->kernel == 0) {
			bank0 = true;
			assert_int_equal(b->size, 0x240);
		}
	}
	assert_true(bank0);
	st_cubin_free(c);
	free(bytes);
}

static void expect_error(const uint8_t *data, size_t size, st_status code, const char *needle)
{
	st_cubin *c = NULL;
	st_error err = {0};
	st_status rc = st_cubin_open_mem(data, size, "bad.cubin", &c, &err);
	assert_int_equal(rc, code);
	assert_null(c);
	if (!strstr(err.msg, needle))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
	assert_null(strchr(err.msg, '\n'));
}

static void test_bad_input(void **state)
{
	(void)state;
	uint8_t *bytes;
	size_t size;
	st_cubin *c = open_fixture("triton-sm90/add_f32_1M/sm_90.cubin", &bytes, &size);
	st_cubin_free(c);
	expect_error(bytes, 10, ST_EFORMAT, "truncated");
	expect_error(bytes, 0, ST_EFORMAT, "truncated");
	/* truncated section header table */
	expect_error(bytes, size - 100, ST_EFORMAT, "bad.cubin");
	/* truncated inside the section data */
	expect_error(bytes, 0x1100, ST_EFORMAT, "bad.cubin");
	uint8_t *copy = malloc(size);
	memcpy(copy, bytes, size);
	copy[0] = 'X';
	expect_error(copy, size, ST_EFORMAT, "magic");
	memcpy(copy, bytes, size);
	copy[18] = 62; /* x86-64 */
	expect_error(copy, size, ST_EUNSUPPORTED, "e_machine");
	memcpy(copy, bytes, size);
	copy[7] = 0x00; /* OSABI */
	expect_error(copy, size, ST_EUNSUPPORTED, "EI_OSABI");
	free(copy);
	free(bytes);
}

/* The register count (EIATTR_REGCOUNT, what cuobjdump --dump-resource-usage reports as REG) and
 * static shared memory of each fixture; the setter changes exactly the record's 4 bytes, survives
 * a permutation, and refuses what it cannot prove (out of range, above EIATTR_MAXREG_COUNT). */
static void test_regcount(void **state)
{
	(void)state;
	static const unsigned want[] = {26, 208, 32, 215, 204, 64, 19}; /* cuobjdump 12.8's REG */
	size_t i = 0;
	for (const char *const *f = st_test_triton_fixtures; *f; f++, i++) {
		char rel[512];
		snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", *f);
		uint8_t *bytes;
		size_t size;
		st_cubin *c = open_fixture(rel, &bytes, &size);
		assert_true(i < sizeof want / sizeof *want);
		assert_int_equal(st_cubin_regcount(c, 0), want[i]);
		assert_int_equal(st_cubin_static_shared(c, 0), strstr(*f, "add_") ? 0 : 1024);
		st_error err = {0};
		assert_int_equal(st_cubin_set_regcount(c, 0, 0, &err), ST_EINVAL);
		assert_int_equal(st_cubin_set_regcount(c, 0, 256, &err), ST_EINVAL);
		assert_int_equal(st_cubin_set_regcount(c, 0, 255, &err), ST_OK);
		assert_int_equal(st_cubin_regcount(c, 0), 255);
		size_t n;
		const uint8_t *now = st_cubin_data(c, &n);
		size_t diff = 0;
		for (size_t b = 0; b < n; b++)
			diff += now[b] != bytes[b];
		assert_int_equal(diff, 1); /* want[i] -> 255 in one byte of the record */
		size_t slots = st_cubin_kernel(c, 0)->insn_count;
		uint32_t *perm = malloc(slots * sizeof *perm);
		for (size_t j = 0; j < slots; j++)
			perm[j] = (uint32_t)j;
		assert_int_equal(st_cubin_permute(c, 0, perm, slots, &err), ST_OK);
		free(perm);
		assert_int_equal(st_cubin_regcount(c, 0), 255); /* the image is rebuilt from the edited bytes */
		st_cubin *again = st_test_cubin_copy(c);
		assert_int_equal(st_cubin_regcount(again, 0), 255);
		st_cubin_free(again);
		assert_int_equal(st_cubin_set_regcount(c, 0, want[i], &err), ST_OK);
		now = st_cubin_data(c, &n);
		assert_memory_equal(now, bytes, size);
		st_cubin_free(c);
		/* EIATTR_MAXREG_COUNT (HVAL 03 1b ff 00 in .nv.info.<k>) lowered to 64 by hand: a count
		 * above it is refused and nothing changes */
		uint8_t *copy = malloc(size);
		memcpy(copy, bytes, size);
		size_t at = SIZE_MAX;
		for (size_t b = 0; b + 4 <= size && at == SIZE_MAX; b++)
			if (copy[b] == 3 && copy[b + 1] == 0x1b && copy[b + 2] == 0xff && copy[b + 3] == 0)
				at = b;
		assert_true(at != SIZE_MAX);
		copy[at + 2] = 64;
		assert_int_equal(st_cubin_open_mem(copy, size, rel, &c, &err), ST_OK);
		assert_int_equal(st_cubin_set_regcount(c, 0, 65, &err), ST_EUNSUPPORTED);
		assert_non_null(strstr(err.msg, "EIATTR_MAXREG_COUNT 64"));
		assert_int_equal(st_cubin_regcount(c, 0), want[i]);
		assert_int_equal(st_cubin_set_regcount(c, 0, 64, &err), ST_OK); /* at the cap: allowed */
		st_cubin_free(c);
		free(copy);
		free(bytes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_triton_read_roundtrip),
		cmocka_unit_test(test_add_kernel_layout),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_regcount),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
