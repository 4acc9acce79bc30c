/* The variant set: items, their kernel code, accessors; the PTX and occupancy helpers. */
#include "variants_internal.h"
#include "sasstune/cubin.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void st_variants_opts_init(st_variants_opts *o)
{
	memset(o, 0, sizeof *o);
	o->version = ST_VARIANTS_OPTS_VERSION;
	o->discover = true;
	o->compile_timeout_s = 120;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	o->jobs = cpus > 0 ? (unsigned)cpus : 1;
	o->pairs = 100;
	o->confirm_pairs = 200;
	o->confirm_min = 1.005;
	st_runtime_options_init(&o->runtime);
}

/* The register count from the global .nv.info EIATTR_REGCOUNT record naming k's symbol. */
static int kernel_regs(const st_cubin *c, size_t k)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->attr == 0x2f && r->format == 4 && r->size >= 8 && st_le32(r->payload) == ki->symbol)
			return (int)st_le32(r->payload + 4);
	}
	return -1;
}

static size_t only_entry(const st_cubin *c)
{
	size_t found = ST_CUBIN_NONE;
	for (size_t k = 0; k < st_cubin_kernel_count(c); k++)
		if (st_cubin_kernel(c, k)->entry) {
			if (found != ST_CUBIN_NONE)
				return ST_CUBIN_NONE;
			found = k;
		}
	return found;
}

st_status st_vr_kernel_code(const uint8_t *cubin, size_t size, const char *kernel, uint8_t **code,
			    size_t *code_len, int *regs, char *name, size_t namesz, st_error *err)
{
	st_cubin *c = NULL;
	*code = NULL;
	st_status rc = st_cubin_open_mem(cubin, size, "cubin", &c, err);
	if (rc != ST_OK)
		return rc;
	size_t k = kernel ? st_cubin_find_kernel(c, kernel) : only_entry(c);
	if (k == ST_CUBIN_NONE) {
		rc = kernel ? st_error_set(err, ST_ENOTFOUND, "no kernel named '%s'", kernel)
			    : st_error_set(err, ST_EINVAL, "the cubin has no single entry: name the kernel");
	} else {
		const uint8_t *p = st_cubin_code(c, k, code_len);
		*code = malloc(*code_len ? *code_len : 1);
		if (!*code)
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
		else
			memcpy(*code, p, *code_len);
		*regs = kernel_regs(c, k);
		if (name)
			snprintf(name, namesz, "%s", st_cubin_kernel(c, k)->name);
	}
	st_cubin_free(c);
	return rc;
}

st_status st_vr_push(st_variants *s, const st_variant *proto, const uint8_t *cubin, size_t size, st_error *err)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		st_vr_item *ni = realloc(s->items, cap * sizeof *ni);
		if (!ni)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		s->items = ni;
		s->cap = cap;
	}
	st_vr_item *it = &s->items[s->n];
	memset(it, 0, sizeof *it);
	it->pub = *proto;
	it->pub.cubin = NULL;
	it->pub.cubin_size = 0;
	if (cubin) {
		if (!(it->pub.cubin = malloc(size ? size : 1)))
			return st_error_set(err, ST_ENOMEM, "out of memory");
		memcpy(it->pub.cubin, cubin, size);
		it->pub.cubin_size = size;
		st_error e = {0};
		if (st_vr_kernel_code(cubin, size, s->kernel[0] ? s->kernel : NULL, &it->code, &it->pub.code_bytes,
				      &it->pub.regs, NULL, 0, &e) != ST_OK && !it->pub.reason[0])
			snprintf(it->pub.reason, sizeof it->pub.reason, "%.250s", e.msg);
	}
	s->n++;
	return ST_OK;
}

size_t st_variants_count(const st_variants *v) { return v ? v->n : 0; }
const st_variant *st_variants_get(const st_variants *v, size_t i) { return v && i < v->n ? &v->items[i].pub : NULL; }
const char *st_variants_kernel(const st_variants *v) { return v ? v->kernel : ""; }
const char *st_variants_note(const st_variants *v) { return v ? v->gpu : ""; }

size_t st_variants_best(const st_variants *v)
{
	for (size_t i = 1; v && i < v->n; i++)
		if (v->items[i].pub.confirmed)
			return i;
	return 0;
}

void st_variants_free(st_variants *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		free(v->items[i].pub.cubin);
		free(v->items[i].code);
	}
	free(v->items);
	free(v);
}

/* Blocks per SM on sm_90-class SMs (64 K registers, 64 warps, 32 blocks) by registers. */
static unsigned blocks_per_sm(int regs, unsigned warps)
{
	unsigned per_warp = (unsigned)((regs + 7) / 8 * 8) * 32;
	unsigned by_regs = (65536 / per_warp) / warps, by_warps = 64 / warps;
	unsigned b = by_regs < by_warps ? by_regs : by_warps;
	return b < 32 ? b : 32;
}

/* Below stock, multiples of 8 (the allocation unit), the same blocks/SM, not under 3/4 of
 * stock (spills) nor 16: the highest and the lowest such value. */
size_t st_vr_maxrreg_values(int regs, unsigned threads, int out[2])
{
	if (regs <= 16 || regs > 255 || threads == 0 || threads > 1024)
		return 0;
	unsigned warps = (threads + 31) / 32, want = blocks_per_sm(regs, warps);
	int hi = (regs - 1) / 8 * 8, floor_ = (regs * 3 / 4 + 7) / 8 * 8;
	if (floor_ < 16)
		floor_ = 16;
	if (hi < floor_ || blocks_per_sm(hi, warps) != want)
		return 0;
	int lo = hi;
	while (lo - 8 >= floor_ && blocks_per_sm(lo - 8, warps) == want)
		lo -= 8;
	out[0] = hi;
	out[1] = lo;
	return lo < hi ? 2 : 1;
}

/* A decimal at *e after blanks, read no further than end (the PTX buffer is not NUL-terminated);
 * *e moves past it, or stays when there is none (as strtoul).  Saturates at 2^32 - 1. */
static unsigned long read_uint(const char **e, const char *end)
{
	const char *p = *e;
	while (p < end && isspace((unsigned char)*p))
		p++;
	const char *digits = p;
	unsigned long x = 0;
	for (; p < end && isdigit((unsigned char)*p); p++)
		x = x > 429496728UL ? 4294967295UL : x * 10 + (unsigned long)(*p - '0');
	if (p != digits)
		*e = p;
	return x;
}

unsigned st_vr_ptx_threads(const char *ptx, size_t len, const char *kernel)
{
	size_t kl = strlen(kernel);
	for (const char *p = ptx; (p = memmem(p, len - (size_t)(p - ptx), ".entry", 6)); p += 6) {
		const char *q = p + 6;
		while (q < ptx + len && isspace((unsigned char)*q))
			q++;
		if (q == p + 6)
			continue; /* ".entryX": not the directive */
		if ((size_t)(ptx + len - q) <= kl || memcmp(q, kernel, kl) || (q[kl] != '(' && !isspace((unsigned char)q[kl])))
			continue;
		const char *body = memchr(q, '{', len - (size_t)(q - ptx));
		if (!body)
			return 0;
		for (const char *d = q; d < body; d++) /* the buffer need not be NUL-terminated: bounded compares */
			if (*d == '.' && body - d >= 8 && (!memcmp(d, ".reqntid", 8) || !memcmp(d, ".maxntid", 8))) {
				unsigned t = 1;
				const char *e = d + 8;
				for (int i = 0; i < 3; i++) {
					unsigned long x = read_uint(&e, body);
					t *= x ? (unsigned)x : 1;
					while (*e == ' ' || *e == '\t')
						e++;
					if (*e != ',')
						break;
					e++;
				}
				return t;
			}
		return 0;
	}
	return 0;
}
