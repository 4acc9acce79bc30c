/* Unit tests of st_cubin_permute: after random permutations every code reference still names
 * the same instruction; inverses and swap-backs give the original bytes; refusals. */
#include "testutil.h"

#include "sasstune/cubin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STT_FUNC 2

/* Every fixture with rewritable kernels. */
static const char *const cuda_fixtures[] = {
	"cuda/branches.sm_80.cubin", "cuda/branches.sm_86.cubin", "cuda/branches.sm_90.cubin",
	"cuda/branches.rdc.sm_80.cubin", "cuda/branches.rdc.sm_90.cubin", "cuda/jumptable.sm_80.cubin",
	"cuda/jumptable.sm_86.cubin", "cuda/jumptable.sm_90.cubin", "cuda/printf.sm_80.cubin",
	"cuda/printf.sm_86.cubin", "cuda/printf.sm_90.cubin", "cuda/hopper.sm_90a.cubin", NULL,
};

typedef struct ref {
	st_ref_kind kind;
	char what[64];
	long slot;
	uint32_t target;
} ref;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static st_cubin *open_rel(const char *rel, uint8_t **bytes, size_t *size)
{
	*bytes = st_test_read(rel, size);
	st_cubin *c = NULL;
	st_error err = {0};
	if (st_cubin_open_mem(*bytes, *size, rel, &c, &err))
		fail_msg("%s: %s", rel, err.msg);
	return c;
}

/* Function entries of kernel k (slots), as the module sees them. */
static bool *entries(const st_cubin *c, size_t k)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	bool *e = calloc(ki->insn_count + 1, sizeof *e);
	for (size_t i = 1; i < st_cubin_symbol_count(c); i++) {
		const st_symbol *s = st_cubin_symbol(c, i);
		if (s->shndx == ki->section && s->type == STT_FUNC && s->value < ki->size)
			e[s->value / 16] = true;
	}
	e[0] = true;
	return e;
}

/* Slots a random permutation leaves alone: function entries, and LEPC with a label and the
 * CALL after it (its byte offset has only 0..127 to move in). */
static bool *pinned(const st_cubin *c, size_t k)
{
	bool *e = entries(c, k);
	for (size_t s = 0; s + 1 < st_cubin_kernel(c, k)->insn_count; s++) {
		uint64_t lo, hi;
		st_cubin_insn(c, k, s, &lo, &hi);
		if ((lo & 0xfff) == 0x94e)
			e[s] = e[s + 1] = true;
	}
	return e;
}

/* A random permutation that keeps function entries and keeps slots inside their function. */
static uint32_t *random_perm(const st_cubin *c, size_t k)
{
	size_t n = st_cubin_kernel(c, k)->insn_count;
	bool *e = entries(c, k), *pin = pinned(c, k);
	uint32_t *p = malloc(n * sizeof *p);
	size_t *free_slots = malloc(n * sizeof *free_slots);
	for (size_t j = 0; j < n; j++)
		p[j] = (uint32_t)j;
	for (size_t s = 0; s < n;) {
		size_t end = s + 1, m = 0;
		while (end < n && !e[end])
			end++;
		for (size_t j = s; j < end; j++)
			if (!pin[j])
				free_slots[m++] = j;
		for (size_t j = m; j > 1; j--) { /* shuffle the unpinned slots of [s, end) */
			size_t i = rnd((uint32_t)j);
			uint32_t t = p[free_slots[i]];
			p[free_slots[i]] = p[free_slots[j - 1]];
			p[free_slots[j - 1]] = t;
		}
		s = end;
	}
	free(e);
	free(pin);
	free(free_slots);
	return p;
}

static ref *collect(const st_cubin *c, size_t k, size_t *n)
{
	*n = st_cubin_ref_count(c, k);
	ref *r = calloc(*n + 1, sizeof *r);
	for (size_t i = 0; i < *n; i++) {
		const st_code_ref *x = st_cubin_ref(c, k, i);
		r[i].kind = x->kind;
		snprintf(r[i].what, sizeof r[i].what, "%s", x->what);
		r[i].slot = x->slot;
		r[i].target = x->target;
	}
	return r;
}

static int cmp_ref(const void *a, const void *b)
{
	const ref *x = a, *y = b;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	int s = strcmp(x->what, y->what);
	if (s)
		return s;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->target < y->target ? -1 : x->target > y->target;
}

static bool position_free(const ref *r) /* found in the image wherever the code is */
{
	return r->kind != ST_REF_RETURN && r->kind != ST_REF_LITERAL;
}

/* Permute kernel k of c by p and check that every reference follows its instruction. */
static void check_permutation(st_cubin *c, size_t k, const uint32_t *p, const char *rel)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	size_t n = ki->insn_count;
	char kname[256];
	snprintf(kname, sizeof kname, "%s", ki->name);
	size_t nb;
	ref *before = collect(c, k, &nb);
	size_t csize;
	const uint8_t *code0 = st_cubin_code(c, k, &csize);
	uint8_t *old = malloc(csize);
	memcpy(old, code0, csize);
	bool *patched = calloc(n, sizeof *patched);
	for (size_t i = 0; i < nb; i++)
		if (before[i].slot >= 0 && (before[i].kind == ST_REF_BRANCH || before[i].kind == ST_REF_SELF ||
					    ((before[i].kind == ST_REF_RETURN || before[i].kind == ST_REF_LITERAL) &&
					     (!strcmp(before[i].what, "MOV") || !strcmp(before[i].what, "LEPC")))))
			patched[before[i].slot] = true;

	st_error err = {0};
	if (st_cubin_permute(c, k, p, n, &err))
		fail_msg("%s: %s: %s", rel, kname, err.msg);
	k = st_cubin_find_kernel(c, kname);
	assert_int_not_equal(k, ST_CUBIN_NONE);
	uint32_t *newpos = malloc(n * sizeof *newpos);
	for (size_t j = 0; j < n; j++)
		newpos[p[j]] = (uint32_t)j;

	/* expected references */
	ref *exp = calloc(nb + 1, sizeof *exp);
	size_t ne = 0;
	for (size_t i = 0; i < nb; i++) {
		ref e = before[i];
		if (e.slot >= 0)
			e.slot = newpos[e.slot];
		if (e.kind == ST_REF_SELF)
			e.target = 0;
		else if (e.kind == ST_REF_RETURN)
			e.target = 16 * (newpos[before[i].target / 16 - 1] + 1);
		else
			e.target = 16 * newpos[before[i].target / 16] + before[i].target % 16;
		if (position_free(&e)) {
			exp[ne++] = e;
			continue;
		}
		/* return literals: check the word directly, or find the reference */
		if (!strcmp(e.what, "MOV")) {
			uint64_t lo, hi;
			st_cubin_insn(c, k, (size_t)e.slot, &lo, &hi);
			assert_int_equal(lo & 0xfff, 0x802);
			if ((uint32_t)(lo >> 32) != e.target)
				fail_msg("%s: %s: MOV literal at new slot %ld is 0x%x, expected 0x%x", rel, kname, e.slot,
					 (uint32_t)(lo >> 32), e.target);
		} else {
			bool found = false;
			for (size_t j = 0; j < st_cubin_ref_count(c, k) && !found; j++) {
				const st_code_ref *x = st_cubin_ref(c, k, j);
				found = x->kind == e.kind && !strcmp(x->what, e.what) && x->slot == e.slot &&
					x->target == e.target;
			}
			if (!found)
				fail_msg("%s: %s: %s reference (slot %ld -> 0x%x) lost", rel, kname, e.what, e.slot, e.target);
		}
	}
	size_t na;
	ref *after = collect(c, k, &na);
	size_t nf = 0;
	for (size_t i = 0; i < na; i++)
		if (position_free(&after[i]))
			after[nf++] = after[i];
	qsort(exp, ne, sizeof *exp, cmp_ref);
	qsort(after, nf, sizeof *after, cmp_ref);
	if (ne != nf)
		fail_msg("%s: %s: %zu references expected after the permutation, %zu found", rel, kname, ne, nf);
	for (size_t i = 0; i < ne; i++)
		if (cmp_ref(&exp[i], &after[i]))
			fail_msg("%s: %s: expected %s slot %ld -> 0x%x, found %s slot %ld -> 0x%x", rel, kname, exp[i].what,
				 exp[i].slot, exp[i].target, after[i].what, after[i].slot, after[i].target);

	/* words moved: identical, except patched fields of branches and literals (opcode and
	 * control bits kept) */
	const uint8_t *code = st_cubin_code(c, k, NULL);
	for (size_t j = 0; j < n; j++) {
		const uint8_t *a = code + 16 * j, *b = old + 16 * (size_t)p[j];
		if (!patched[p[j]]) {
			if (memcmp(a, b, 16))
				fail_msg("%s: %s: word at new slot %zu differs from old slot %u", rel, kname, j, p[j]);
		} else {
			assert_int_equal(a[0], b[0]);
			assert_int_equal(a[1] & 0x0f, b[1] & 0x0f);
			assert_memory_equal(a + 13, b + 13, 3); /* bits 104..127: control */
		}
	}
	free(before);
	free(after);
	free(exp);
	free(old);
	free(patched);
	free(newpos);
}

static void inverse(const uint32_t *p, uint32_t *inv, size_t n)
{
	for (size_t j = 0; j < n; j++)
		inv[p[j]] = (uint32_t)j;
}

static void permute_file(const char *rel, int rounds)
{
	uint8_t *bytes;
	size_t size;
	st_cubin *c = open_rel(rel, &bytes, &size);
	for (size_t k = 0; k < st_cubin_kernel_count(c); k++) {
		st_error err = {0};
		if (st_cubin_check_rewritable(c, k, &err))
			fail_msg("%s: %s", rel, err.msg);
		size_t n = st_cubin_kernel(c, k)->insn_count;
		/* each round starts from the original: the reference search expects ptxas-shaped code */
		for (int r = 0; r < rounds; r++) {
			uint32_t *p = random_perm(c, k);
			check_permutation(c, k, p, rel);
			uint32_t *inv = malloc(n * sizeof *inv);
			inverse(p, inv, n);
			if (st_cubin_permute(c, k, inv, n, &err))
				fail_msg("%s: inverse: %s", rel, err.msg);
			size_t out_size;
			const uint8_t *out = st_cubin_data(c, &out_size);
			assert_int_equal(out_size, size);
			if (memcmp(out, bytes, size))
				fail_msg("%s: kernel %zu: permutation then inverse is not byte-identical", rel, k);
			free(inv);
			free(p);
		}
	}
	st_cubin_free(c);
	free(bytes);
}

static void test_random_permutations_cuda(void **state)
{
	(void)state;
	for (const char *const *f = cuda_fixtures; *f; f++)
		permute_file(*f, 3);
}

static void test_random_permutations_triton(void **state)
{
	(void)state;
	for (const char *const *f = st_test_triton_fixtures; *f; f++) {
		char rel[512];
		snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", *f);
		permute_file(rel, 2);
	}
}

/* Swap two adjacent slots and swap them back, everywhere it is allowed. */
static void test_swap_back(void **state)
{
	(void)state;
	const char *rels[] = {"cuda/jumptable.sm_90.cubin", "cuda/branches.sm_80.cubin",
			      "triton-sm90/layernorm_f16_1024x1024/sm_90.cubin", NULL};
	for (const char *const *f = rels; *f; f++) {
		uint8_t *bytes;
		size_t size;
		st_cubin *c = open_rel(*f, &bytes, &size);
		size_t n = st_cubin_kernel(c, 0)->insn_count;
		bool *e = entries(c, 0);
		uint32_t *p = malloc(n * sizeof *p);
		size_t swaps = 0;
		for (size_t i = 1; i + 1 < n; i += 7) {
			if (e[i] || e[i + 1])
				continue;
			for (size_t j = 0; j < n; j++)
				p[j] = (uint32_t)j;
			p[i] = (uint32_t)i + 1;
			p[i + 1] = (uint32_t)i;
			st_error err = {0};
			if (st_cubin_permute(c, 0, p, n, &err) || st_cubin_permute(c, 0, p, n, &err))
				fail_msg("%s: swap %zu: %s", *f, i, err.msg);
			size_t out_size;
			const uint8_t *out = st_cubin_data(c, &out_size);
			assert_int_equal(out_size, size);
			if (memcmp(out, bytes, size))
				fail_msg("%s: swap %zu and back is not byte-identical", *f, i);
			swaps++;
		}
		assert_true(swaps > 5);
		free(p);
		free(e);
		st_cubin_free(c);
		free(bytes);
	}
}

/* A moved kernel keeps its line tables (rewritten, same sizes: test_cubin_lines.c checks the
 * lines); moving back restores the original bytes. */
static void test_line_tables(void **state)
{
	(void)state;
	uint8_t *bytes;
	size_t size;
	st_cubin *c = open_rel("triton-sm90/add_f32_1M/sm_90.cubin", &bytes, &size);
	size_t n = st_cubin_kernel(c, 0)->insn_count;
	uint32_t *p = malloc(n * sizeof *p);
	for (size_t j = 0; j < n; j++)
		p[j] = (uint32_t)j;
	p[4] = 5;
	p[5] = 4; /* two CS2R */
	st_error err = {0};
	assert_int_equal(st_cubin_permute(c, 0, p, n, &err), ST_OK);
	size_t out_size;
	const uint8_t *out = st_cubin_data(c, &out_size);
	assert_int_equal(out_size, size);
	assert_true(memcmp(out, bytes, size) != 0);
	/* readelf: .debug_line is section 5 (size 0x5e), .nv_debug_line_sass section 6 */
	uint64_t shoff = 0;
	for (int b = 0; b < 8; b++)
		shoff |= (uint64_t)out[0x28 + b] << (8 * b);
	for (int s = 5; s <= 6; s++) {
		uint64_t sz = 0;
		for (int b = 0; b < 8; b++)
			sz |= (uint64_t)out[shoff + 64 * s + 32 + b] << (8 * b);
		assert_int_equal(sz, s == 5 ? 0x5e : 0xac);
	}
	assert_int_equal(st_cubin_permute(c, 0, p, n, &err), ST_OK);
	out = st_cubin_data(c, &out_size);
	assert_memory_equal(out, bytes, size);
	free(p);
	st_cubin_free(c);
	free(bytes);
}

static void expect_refusal(st_cubin *c, size_t k, const uint32_t *p, size_t n, st_status code, const char *needle)
{
	st_error err = {0};
	size_t before_size;
	const uint8_t *before = st_cubin_data(c, &before_size);
	uint8_t *copy = malloc(before_size);
	memcpy(copy, before, before_size);
	assert_int_equal(st_cubin_permute(c, k, p, n, &err), code);
	if (!strstr(err.msg, needle))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
	size_t after_size;
	const uint8_t *after = st_cubin_data(c, &after_size);
	assert_int_equal(after_size, before_size);
	assert_memory_equal(after, copy, before_size);
	free(copy);
}

static void test_refusals(void **state)
{
	(void)state;
	uint8_t *bytes;
	size_t size;
	st_cubin *c = open_rel("cuda/jumptable.sm_90.cubin", &bytes, &size);
	size_t n = st_cubin_kernel(c, 0)->insn_count;
	uint32_t *p = malloc((n + 1) * sizeof *p);
	for (size_t j = 0; j < n; j++)
		p[j] = (uint32_t)j;
	expect_refusal(c, 0, p, n - 1, ST_EINVAL, "slots");
	expect_refusal(c, 7, p, n, ST_EINVAL, "out of range");
	p[3] = 4;
	expect_refusal(c, 0, p, n, ST_EINVAL, "twice");
	p[3] = (uint32_t)n;
	expect_refusal(c, 0, p, n, ST_EINVAL, "past the last slot");
	p[3] = 3;
	/* slot 0 is the kernel entry */
	p[0] = 1;
	p[1] = 0;
	expect_refusal(c, 0, p, n, ST_EUNSUPPORTED, "entry instruction");
	p[0] = 0;
	p[1] = 1;
	/* the internal function $jumptable$_Z6table4ii starts at 0x2b0 (slot 43) */
	p[42] = 44;
	p[44] = 42;
	expect_refusal(c, 0, p, n, ST_EUNSUPPORTED, "out of its function");
	free(p);
	st_cubin_free(c);
	free(bytes);

	/* an unknown attribute in .nv.info.<kernel> makes the kernel read-only */
	c = open_rel("triton-sm90/add_f32_1M/sm_90.cubin", &bytes, &size);
	size_t found = ST_CUBIN_NONE;
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->kernel == 0 && r->attr == 0x1c)
			found = i;
	}
	assert_int_not_equal(found, ST_CUBIN_NONE);
	/* find the record's bytes in the file and change its attribute id to 0x7e */
	const st_nvinfo *r = st_cubin_nvinfo(c, found);
	size_t at = (size_t)(r->payload - st_cubin_data(c, NULL)) - 4;
	st_cubin_free(c);
	assert_int_equal(bytes[at + 1], 0x1c);
	bytes[at + 1] = 0x7e;
	st_error err = {0};
	assert_int_equal(st_cubin_open_mem(bytes, size, "patched", &c, &err), ST_OK);
	assert_int_equal(st_cubin_check_rewritable(c, 0, &err), ST_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "0x7e"));
	n = st_cubin_kernel(c, 0)->insn_count;
	p = malloc(n * sizeof *p);
	for (size_t j = 0; j < n; j++)
		p[j] = (uint32_t)j;
	p[4] = 5;
	p[5] = 4;
	expect_refusal(c, 0, p, n, ST_EUNSUPPORTED, "0x7e");
	/* the identity is still fine */
	p[4] = 4;
	p[5] = 5;
	assert_int_equal(st_cubin_permute(c, 0, p, n, &err), ST_OK);
	free(p);
	st_cubin_free(c);
	free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_permutations_cuda),
		cmocka_unit_test(test_random_permutations_triton),
		cmocka_unit_test(test_swap_back),
		cmocka_unit_test(test_line_tables),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
