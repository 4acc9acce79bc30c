/* Line tables after a permutation: every instruction keeps its line (.debug_line and
 * .nv_debug_line_sass decoded before and after), the encoder's padding, and the parser's
 * refusals. */
#include "testutil.h"
#include "cubin/lines.h"
#include "sasstune/cubin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Bytes of the section called name in an ELF64 image (size 0: absent or dropped). */
static const uint8_t *section(const uint8_t *img, const char *name, size_t *size)
{
	uint64_t shoff = le(img + 0x28, 8);
	unsigned shnum = (unsigned)le(img + 0x3c, 2), shstr = (unsigned)le(img + 0x3e, 2);
	const uint8_t *strs = img + le(img + shoff + 64 * shstr + 24, 8);
	for (unsigned i = 1; i < shnum; i++) {
		const uint8_t *sh = img + shoff + 64 * i;
		if (!strcmp((const char *)strs + le(sh, 4), name)) {
			*size = le(sh + 32, 8);
			return img + le(sh + 24, 8);
		}
	}
	*size = 0;
	return NULL;
}

/* Compare the line of every slot j after the move with the line of the slot it came from. */
static bool lines_follow(const uint8_t *before, const uint8_t *after, const char *name, const uint32_t *cum,
			 size_t n, size_t *rows_checked)
{
	size_t s0, s1;
	const uint8_t *p0 = section(before, name, &s0), *p1 = section(after, name, &s1);
	assert_non_null(p0);
	assert_true(s0 > 0);
	if (!s1)
		return false; /* dropped */
	assert_int_equal(s0, s1);
	st_line_table t0, t1;
	st_error err = {0};
	if (st_lines_parse(p0, s0, &t0, &err))
		fail_msg("%s before: %s", name, err.msg);
	if (st_lines_parse(p1, s1, &t1, &err))
		fail_msg("%s after: %s", name, err.msg);
	assert_int_equal(t0.nseqs, 1); /* one kernel, one sequence, set_address 0 + kernel symbol */
	assert_int_equal(t1.nseqs, 1);
	assert_int_equal(t0.seqs[0].addr0, 0);
	assert_int_equal(t1.seqs[0].end_addr, t0.seqs[0].end_addr);
	assert_int_equal(t1.seqs[0].end, t0.seqs[0].end);
	for (size_t j = 0; j < n; j++) {
		const st_line_row *a = st_lines_lookup(&t0.seqs[0], 16 * (uint64_t)cum[j]);
		const st_line_row *b = st_lines_lookup(&t1.seqs[0], 16 * (uint64_t)j);
		assert_true((a == NULL) == (b == NULL));
		if (!a)
			continue;
		if (a->line != b->line || a->file != b->file || a->column != b->column || a->is_stmt != b->is_stmt)
			fail_msg("%s: slot 0x%zx (from 0x%x): line %u, was %u", name, 16 * j, 16 * cum[j], b->line,
				 a->line);
		(*rows_checked)++;
	}
	st_lines_free(&t0);
	st_lines_free(&t1);
	return true;
}

static st_cubin *open_fixture(const char *rel, uint8_t **bytes, size_t *size)
{
	*bytes = st_test_read(rel, size);
	st_cubin *c = NULL;
	st_error err = {0};
	if (st_cubin_open_mem(*bytes, *size, rel, &c, &err))
		fail_msg("%s: %s", rel, err.msg);
	return c;
}

/* Two swaps keep both tables (rewritten); many moves keep each table true or drop it.
 * Returns how many of the two tables were kept. */
static int check_fixture(const char *rel, bool shuffle, unsigned seed)
{
	uint8_t *bytes;
	size_t size;
	st_cubin *c = open_fixture(rel, &bytes, &size);
	size_t n = st_cubin_kernel(c, 0)->insn_count;
	uint32_t *p = malloc(n * sizeof *p);
	for (size_t j = 0; j < n; j++)
		p[j] = (uint32_t)j;
	if (shuffle) { /* what a tuner does: many short-range moves (slot 0, the entry, stays) */
		srand(seed);
		for (size_t j = 1; j + 4 < n; j += 2) {
			size_t i = j + 1 + (size_t)rand() % 3;
			uint32_t x = p[j];
			p[j] = p[i];
			p[i] = x;
		}
	} else {
		p[4] = 5;
		p[5] = 4;
		p[n / 2] = (uint32_t)(n / 2 + 1);
		p[n / 2 + 1] = (uint32_t)(n / 2);
	}
	st_error err = {0};
	if (st_cubin_permute(c, 0, p, n, &err))
		fail_msg("%s: %s", rel, err.msg);
	size_t out_size, checked = 0;
	const uint8_t *out = st_cubin_data(c, &out_size);
	assert_int_equal(out_size, size);
	bool kept_sass = lines_follow(bytes, out, ".nv_debug_line_sass", p, n, &checked);
	bool kept_src = lines_follow(bytes, out, ".debug_line", p, n, &checked);
	if (!shuffle) {
		assert_true(kept_sass);
		assert_true(kept_src);
	}
	printf("%s: %s: .nv_debug_line_sass %s, .debug_line %s, %zu slots checked\n", rel,
	       shuffle ? "shuffle" : "swaps", kept_sass ? "rewritten" : "dropped", kept_src ? "rewritten" : "dropped",
	       checked);
	/* back to the original order: the original bytes */
	uint32_t *inv = malloc(n * sizeof *inv);
	for (size_t j = 0; j < n; j++)
		inv[p[j]] = (uint32_t)j;
	assert_int_equal(st_cubin_permute(c, 0, inv, n, &err), ST_OK);
	out = st_cubin_data(c, &out_size);
	assert_memory_equal(out, bytes, size);
	free(inv);
	free(p);
	st_cubin_free(c);
	free(bytes);
	return kept_sass + kept_src;
}

static void test_swaps_keep_lines(void **state)
{
	(void)state;
	for (size_t i = 0; st_test_triton_fixtures[i]; i++) {
		char rel[300];
		snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", st_test_triton_fixtures[i]);
		check_fixture(rel, false, 0);
	}
}

static void test_shuffle_keeps_lines(void **state)
{
	(void)state;
	int kept = 0;
	for (size_t i = 0; st_test_triton_fixtures[i]; i++) {
		char rel[300];
		snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", st_test_triton_fixtures[i]);
		kept += check_fixture(rel, true, (unsigned)i + 1);
	}
	assert_true(kept > 0); /* the check above ran on at least one rewritten table */
}

/* A hand-made unit: header, rows, padding to any span (one byte widens the last LEB). */
static const uint8_t unit_hdr[] = {0, 0, 0, 0, 2, 0, 16, 0, 0, 0, 1, 1, 0xfb, 14, 10, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0};

static void test_encode_pads_exactly(void **state)
{
	(void)state;
	st_line_unit u = {.min_insn = 1, .line_range = 14, .opcode_base = 10, .line_base = -5, .default_is_stmt = true};
	st_line_row rows[] = {{0, 1, 7, 0, true}, {16, 1, 9, 0, true}, {0x200, 2, 300, 4, false}, {0x210, 2, 2, 4, false}};
	uint8_t addr[8] = {0};
	for (size_t len = 20; len < 80; len++) {
		uint8_t buf[sizeof unit_hdr + 80];
		memcpy(buf, unit_hdr, sizeof unit_hdr);
		st_error err = {0};
		st_status rc = st_lines_encode_seq(&u, addr, 0, rows, 4, 0x400, buf + sizeof unit_hdr, len, &err);
		if (rc == ST_EUNSUPPORTED)
			continue; /* too short */
		assert_int_equal(rc, ST_OK);
		uint32_t total = (uint32_t)(sizeof unit_hdr + len - 4);
		memcpy(buf, &total, 4);
		st_line_table t;
		if (st_lines_parse(buf, sizeof unit_hdr + len, &t, &err))
			fail_msg("len %zu: %s", len, err.msg);
		assert_int_equal(t.nseqs, 1);
		assert_int_equal(t.seqs[0].nrows, 4);
		assert_int_equal(t.seqs[0].end, sizeof unit_hdr + len);
		assert_int_equal(t.seqs[0].end_addr, 0x400);
		assert_int_equal(t.seqs[0].addr_off, sizeof unit_hdr + 3);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(t.seqs[0].rows[i].addr, rows[i].addr);
			assert_int_equal(t.seqs[0].rows[i].line, rows[i].line);
			assert_int_equal(t.seqs[0].rows[i].file, rows[i].file);
			assert_int_equal(t.seqs[0].rows[i].column, rows[i].column);
			assert_int_equal(t.seqs[0].rows[i].is_stmt, rows[i].is_stmt);
		}
		st_lines_free(&t);
	}
	/* too small a span is refused, not overrun */
	uint8_t small[8];
	assert_int_equal(st_lines_encode_seq(&u, addr, 0, rows, 4, 0x400, small, sizeof small, NULL), ST_EUNSUPPORTED);
}

static void test_parse_refusals(void **state)
{
	(void)state;
	uint8_t buf[64];
	st_line_table t;
	st_error err = {0};
	memcpy(buf, unit_hdr, sizeof unit_hdr);
	uint8_t prog[] = {0, 2, 0x80, 0};         /* vendor extended opcode 0x80 */
	memcpy(buf + sizeof unit_hdr, prog, sizeof prog);
	uint32_t total = (uint32_t)(sizeof unit_hdr + sizeof prog - 4);
	memcpy(buf, &total, 4);
	assert_int_equal(st_lines_parse(buf, sizeof unit_hdr + sizeof prog, &t, &err), ST_EUNSUPPORTED);
	buf[4] = 5; /* DWARF 5 */
	assert_int_equal(st_lines_parse(buf, sizeof unit_hdr + sizeof prog, &t, &err), ST_EUNSUPPORTED);
	buf[4] = 2;
	total += 100; /* past the section */
	memcpy(buf, &total, 4);
	assert_int_equal(st_lines_parse(buf, sizeof unit_hdr + sizeof prog, &t, &err), ST_EFORMAT);
	uint8_t rowless[] = {0x01}; /* a row and no end_sequence */
	memcpy(buf + sizeof unit_hdr, rowless, 1);
	total = (uint32_t)(sizeof unit_hdr + 1 - 4);
	memcpy(buf, &total, 4);
	assert_int_equal(st_lines_parse(buf, sizeof unit_hdr + 1, &t, &err), ST_EFORMAT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swaps_keep_lines),
		cmocka_unit_test(test_shuffle_keeps_lines),
		cmocka_unit_test(test_encode_pads_exactly),
		cmocka_unit_test(test_parse_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
