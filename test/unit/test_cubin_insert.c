/* Unit tests of st_cubin_insert (plugin/cubin/insert.c): on every fixture, NOPs inserted at block
 * starts, before branches and inside loops leave every other word where the shift puts it, every
 * reference naming the same instruction, the line tables following their instructions; the
 * padding count drops by one per insertion; refusals leave the cubin unchanged. */
#include "testutil.h"
#include "cubin/lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cuda_fixtures[] = {
	"cuda/branches.sm_80.cubin", "cuda/branches.sm_86.cubin", "cuda/branches.sm_90.cubin",
	"cuda/branches.rdc.sm_80.cubin", "cuda/branches.rdc.sm_90.cubin", "cuda/jumptable.sm_80.cubin",
	"cuda/jumptable.sm_86.cubin", "cuda/jumptable.sm_90.cubin", "cuda/printf.sm_80.cubin",
	"cuda/printf.sm_86.cubin", "cuda/printf.sm_90.cubin", "cuda/hopper.sm_90a.cubin",
	"bench/layernorm.sm_90.cubin", "bench/mm_tma_device.sm_90.cubin", NULL,
};

typedef struct ref {
	st_ref_kind kind;
	long slot;
	uint32_t target;
} ref;

static int cmp_ref(const void *a, const void *b)
{
	const ref *x = a, *y = b;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->target < y->target ? -1 : x->target > y->target;
}

/* Kernel k's references; with shift_at (a slot), as they must read after an insertion there. */
static ref *refs_of(const st_cubin *c, size_t k, size_t *n, long shift_at)
{
	*n = st_cubin_ref_count(c, k);
	ref *r = calloc(*n + 1, sizeof *r);
	for (size_t i = 0; i < *n; i++) {
		const st_code_ref *x = st_cubin_ref(c, k, i);
		r[i] = (ref){x->kind, x->slot, x->target};
		if (shift_at < 0)
			continue;
		if (r[i].slot >= shift_at)
			r[i].slot++;
		uint32_t t = x->target;
		if (x->kind == ST_REF_RETURN) /* the slot after the CALL: the CALL moves or not */
			r[i].target = t / 16 - 1 >= (uint32_t)shift_at ? t + 16 : t;
		else if (x->kind != ST_REF_SELF && t / 16 >= (uint32_t)shift_at)
			r[i].target = t + 16;
	}
	qsort(r, *n, sizeof *r, cmp_ref);
	return r;
}

/* Bytes of ELF section `name` (NULL, size 0: absent). */
static const uint8_t *section(const st_cubin *c, const char *name, size_t *size)
{
	size_t total;
	const uint8_t *img = st_cubin_data(c, &total);
	uint64_t shoff, off, sz;
	memcpy(&shoff, img + 0x28, 8);
	uint16_t shnum, shstr;
	memcpy(&shnum, img + 0x3c, 2);
	memcpy(&shstr, img + 0x3e, 2);
	memcpy(&off, img + shoff + 64 * (uint64_t)shstr + 24, 8);
	const char *strs = (const char *)img + off;
	for (unsigned i = 1; i < shnum; i++) {
		const uint8_t *sh = img + shoff + 64 * (uint64_t)i;
		uint32_t nm;
		memcpy(&nm, sh, 4);
		if (!strcmp(strs + nm, name)) {
			memcpy(&off, sh + 24, 8);
			memcpy(&sz, sh + 32, 8);
			*size = sz;
			return sz ? img + off : NULL;
		}
	}
	*size = 0;
	return NULL;
}

static size_t dropped; /* line tables dropped by an insertion */

/* The line of every old slot is the line of its new slot (single-kernel Triton cubins). */
static void lines_follow(const st_cubin *before, const st_cubin *after, size_t n, size_t at, const char *what)
{
	static const char *const names[] = {".debug_line", ".nv_debug_line_sass"};
	for (int s = 0; s < 2; s++) {
		size_t s0, s1;
		const uint8_t *p0 = section(before, names[s], &s0), *p1 = section(after, names[s], &s1);
		if (!p0)
			continue;
		if (!p1) { /* the re-encoded sequence did not fit its bytes: dropped, as after a permutation */
			assert_int_equal(s1, 0);
			dropped++;
			printf("%s: %s dropped after inserting at 0x%zx\n", what, names[s], 16 * at);
			continue;
		}
		st_line_table t0, t1;
		st_error err = {0};
		if (st_lines_parse(p0, s0, &t0, &err) || st_lines_parse(p1, s1, &t1, &err))
			fail_msg("%s: %s", names[s], err.msg);
		assert_int_equal(t0.nseqs, t1.nseqs);
		for (size_t j = 0; j + 1 < n && t0.nseqs == 1; j++) {
			const st_line_row *a = st_lines_lookup(&t0.seqs[0], 16 * (uint64_t)j);
			const st_line_row *b = st_lines_lookup(&t1.seqs[0], 16 * (uint64_t)(j >= at ? j + 1 : j));
			assert_true((a == NULL) == (b == NULL));
			if (a && (a->line != b->line || a->file != b->file))
				fail_msg("%s: slot 0x%zx: line %u, was %u", names[s], 16 * j, b->line, a->line);
		}
		st_lines_free(&t0);
		st_lines_free(&t1);
	}
}

/* Insert a NOP at `at` into kernel k of c and check everything against the state before. */
static void insert_and_check(st_cubin *c, size_t k, size_t at, const char *what)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	size_t n = ki->insn_count, nb, na, size, pad = st_cubin_insertable(c, k);
	char kname[256];
	snprintf(kname, sizeof kname, "%s", ki->name);
	ref *exp = refs_of(c, k, &nb, (long)at);
	st_cubin *old = st_test_cubin_copy(c);
	st_error err = {0};
	if (st_cubin_insert(c, k, at, NULL, &err))
		fail_msg("%s: %s: insert at 0x%zx: %s", what, kname, 16 * at, err.msg);
	assert_int_equal(st_cubin_insertable(c, k), pad - 1);
	ref *got = refs_of(c, k, &na, -1);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++)
		if (cmp_ref(&exp[i], &got[i]))
			fail_msg("%s: %s: after inserting at 0x%zx: reference %zu (kind %d) at slot %ld names 0x%x, "
				 "expected slot %ld 0x%x",
				 what, kname, 16 * at, i, got[i].kind, got[i].slot, got[i].target, exp[i].slot, exp[i].target);
	const uint8_t *a = st_cubin_code(old, k, &size), *b = st_cubin_code(c, k, &size);
	for (size_t j = 0; j + 1 < n; j++) { /* same opcode and control bits; same word unless patched */
		const uint8_t *x = a + 16 * j, *y = b + 16 * (j >= at ? j + 1 : j);
		if (memcmp(x, y, 2) || memcmp(x + 13, y + 13, 3))
			fail_msg("%s: %s: word of old slot 0x%zx changed", what, kname, 16 * j);
	}
	uint64_t lo, hi;
	st_cubin_insn(c, k, at, &lo, &hi);
	assert_int_equal(lo, 0x7918);
	assert_int_equal((hi >> 41) & 0xfffff, 0x7e1); /* stall 1, no SB set, no wait, no reuse */
	lines_follow(old, c, n, at, what);
	st_cubin_free(old);
	free(exp);
	free(got);
}

/* Slots to insert at: after a loop's first instruction, at a branch target, before a branch. */
static void pick(const st_cubin *c, size_t k, size_t at[3])
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	size_t end = ki->insn_count - st_cubin_insertable(c, k), lo = 0; /* the last function: lo.. */
	for (size_t i = 1; i < st_cubin_symbol_count(c); i++) {
		const st_symbol *y = st_cubin_symbol(c, i);
		if (y->shndx == ki->section && y->type == 2 /* STT_FUNC */ && y->value / 16 > lo)
			lo = y->value / 16;
	}
	at[0] = at[1] = at[2] = (lo + end) / 2;
	for (size_t i = 0; i < st_cubin_ref_count(c, k); i++) {
		const st_code_ref *r = st_cubin_ref(c, k, i);
		if (r->kind != ST_REF_BRANCH || r->slot < 0)
			continue;
		size_t t = r->target / 16;
		if (t <= lo || (size_t)r->slot <= lo)
			continue;
		if (t <= (size_t)r->slot && t + 1 < end && strcmp(r->what, "BSSY"))
			at[0] = t + 1; /* inside a loop, executed on every iteration */
		if (t > 0 && t < end)
			at[1] = t; /* a block start: the new slot is the previous block's end */
		if (r->slot > 0)
			at[2] = (size_t)r->slot;
	}
}

static void check_file(st_cubin *c, const char *what)
{
	for (size_t k = 0; k < st_cubin_kernel_count(c); k++) {
		if (st_cubin_check_rewritable(c, k, NULL) || st_cubin_insertable(c, k) < 3)
			continue;
		size_t at[3];
		pick(c, k, at);
		for (int i = 0; i < 3; i++)
			insert_and_check(c, k, at[i], what);
	}
}

static void test_every_fixture(void **state)
{
	(void)state;
	static const char *const dirs[] = {"triton-sm90", "triton-sm90-ptxas13.5"};
	size_t files = 0;
	for (int d = 0; d < 2; d++) {
		for (const char *const *f = st_test_triton_fixtures; *f; f++) {
			char rel[512];
			snprintf(rel, sizeof rel, "%s/%s/sm_90.cubin", dirs[d], *f);
			size_t size;
			uint8_t *bytes = st_test_read(rel, &size);
			st_cubin *c = NULL;
			assert_int_equal(st_cubin_open_mem(bytes, size, rel, &c, NULL), ST_OK);
			assert_true(st_cubin_insertable(c, 0) >= 8); /* every Triton fixture has 8..16 */
			check_file(c, rel);
			st_cubin_free(c);
			free(bytes);
			files++;
		}
		if (d == 0) /* ptxas 12.8's tables have room; 13.5's do not (docs/cubin.md "Inserting") */
			assert_int_equal(dropped, 0);
	}
	for (const char *const *f = cuda_fixtures; *f; f++) {
		size_t size;
		uint8_t *bytes = st_test_read(*f, &size);
		st_cubin *c = NULL;
		assert_int_equal(st_cubin_open_mem(bytes, size, *f, &c, NULL), ST_OK);
		check_file(c, *f);
		st_cubin_free(c);
		free(bytes);
		files++;
	}
	assert_int_equal(files, 28);
}

static st_cubin *layernorm(void)
{
	size_t size;
	uint8_t *bytes = st_test_read("triton-sm90/layernorm_f16_1024x1024/sm_90.cubin", &size);
	st_cubin *c = NULL;
	assert_int_equal(st_cubin_open_mem(bytes, size, "ln.cubin", &c, NULL), ST_OK);
	free(bytes);
	return c;
}

static void refused(st_status rc, st_status want, const st_error *err, const char *text, const st_cubin *c,
		    const st_cubin *same)
{
	assert_int_equal(rc, want);
	if (!strstr(err->msg, text))
		fail_msg("message '%s' lacks '%s'", err->msg, text);
	assert_true(st_test_same_bytes(c, same));
}

static void test_refusals(void **state)
{
	(void)state;
	st_cubin *c = layernorm(), *orig = st_test_cubin_copy(c);
	size_t n = st_cubin_kernel(c, 0)->insn_count, pad = st_cubin_insertable(c, 0);
	assert_int_equal(pad, 13); /* the 13 NOPs after the self-BRA at 0x1d20 */
	st_error err = {0};
	refused(st_cubin_insert(c, 0, n - pad, NULL, &err), ST_EINVAL, &err, "not before the padding", c, orig);
	refused(st_cubin_insert(c, 0, n + 5, NULL, &err), ST_EINVAL, &err, "not before the padding", c, orig);
	refused(st_cubin_insert(c, 0, 0, NULL, &err), ST_EUNSUPPORTED, &err, "entry", c, orig);
	refused(st_cubin_insert(c, 3, 1, NULL, &err), ST_EINVAL, &err, "out of range", c, orig);
	uint8_t bra[16] = {0x47, 0x79}; /* BRA */
	refused(st_cubin_insert(c, 0, 5, bra, &err), ST_EUNSUPPORTED, &err, "branch-unit opcode", c, orig);
	uint8_t w[16];
	memcpy(w, st_cubin_code(c, 0, &(size_t){0}) + 16 * 4, 16); /* any ALU word */
	refused(st_cubin_set_word(c, 0, 5, w, &err), ST_EINVAL, &err, "was not inserted", c, orig);
	assert_int_equal(st_cubin_insert(c, 0, 5, w, &err), ST_OK);
	assert_int_equal(memcmp(st_cubin_code(c, 0, &(size_t){0}) + 16 * 5, w, 16), 0);
	uint8_t nop[16] = {0x18, 0x79};
	assert_int_equal(st_cubin_set_word(c, 0, 5, nop, &err), ST_OK);
	st_cubin *one = st_test_cubin_copy(c);
	refused(st_cubin_set_word(c, 0, 5, bra, &err), ST_EUNSUPPORTED, &err, "branch-unit", c, one);
	refused(st_cubin_set_word(c, 0, 6, nop, &err), ST_EINVAL, &err, "was not inserted", c, one);
	st_cubin_free(one);
	while (st_cubin_insertable(c, 0))
		assert_int_equal(st_cubin_insert(c, 0, 7, NULL, &err), ST_OK);
	one = st_test_cubin_copy(c);
	refused(st_cubin_insert(c, 0, 7, NULL, &err), ST_EUNSUPPORTED, &err, "no padding slot left", c, one);
	st_cubin_free(one);
	st_cubin_free(orig);
	st_cubin_free(c);
}

/* The inserted word follows its instruction through later permutations (st_cubin_permute). */
static void test_follows_permutation(void **state)
{
	(void)state;
	st_cubin *c = layernorm();
	st_error err = {0};
	size_t n = st_cubin_kernel(c, 0)->insn_count;
	assert_int_equal(st_cubin_insert(c, 0, 9, NULL, &err), ST_OK);
	uint32_t *p = malloc(n * sizeof *p);
	for (size_t j = 0; j < n; j++)
		p[j] = (uint32_t)(j == 9 ? 10 : j == 10 ? 9 : j);
	assert_int_equal(st_cubin_permute(c, 0, p, n, &err), ST_OK);
	uint64_t lo, hi;
	st_cubin_insn(c, 0, 10, &lo, &hi);
	assert_int_equal(lo, 0x7918);
	assert_int_equal(st_cubin_permute(c, 0, p, n, &err), ST_OK); /* back */
	st_cubin_insn(c, 0, 9, &lo, &hi);
	assert_int_equal(lo, 0x7918);
	free(p);
	st_cubin_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_fixture),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_follows_permutation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
