/* A kernel's register count and static shared memory (docs/cubin.md "Register count").  On
 * sm_90 (ptxas 12.8 and 13.5) the count lives only in the global .nv.info record EIATTR_REGCOUNT
 * (SVAL: the kernel's symbol, the count), which `cuobjdump --dump-resource-usage` reports as REG;
 * bits 24..31 of the .text section's sh_info, where older targets keep it, are 0.  The setter
 * writes the record in the current image and in the original bytes it is rebuilt from (as the
 * control and register-field edits do), so it survives later permutations. */
#include "cubin_internal.h"
#include "util/util.h"

#include <string.h>

#define EIATTR_MAXREG_COUNT 0x1b
#define EIATTR_REGCOUNT 0x2f

/* The REGCOUNT records naming kernel k's symbol: how many, the last one in *out. */
static size_t regcount_records(const st_cubin *c, size_t k, const st_nvinfo **out)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	size_t n = 0;
	for (size_t i = 0; ki && ki->symbol && i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		if (r->attr == EIATTR_REGCOUNT && r->format == 4 && r->size == 8 && st_le32(r->payload) == ki->symbol &&
		    (r->kernel == ST_CUBIN_NONE || r->kernel == k))
			*out = r, n++;
	}
	return n;
}

unsigned st_cubin_regcount(const st_cubin *c, size_t k)
{
	const st_nvinfo *r = NULL;
	return regcount_records(c, k, &r) == 1 ? st_le32(r->payload + 4) : 0;
}

size_t st_cubin_static_shared(const st_cubin *c, size_t k)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	for (size_t s = 0; ki && s < c->v.nsections; s++) {
		const char *n = c->v.sections[s].name;
		if (n && !strncmp(n, ".nv.shared.", 11) && !strcmp(n + 11, ki->name))
			return (size_t)c->v.sections[s].size;
	}
	return 0;
}

unsigned st_cubin_maxregs(const st_cubin *c, size_t k)
{
	unsigned most = 255;
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *m = st_cubin_nvinfo(c, i);
		if (m->attr == EIATTR_MAXREG_COUNT && m->format == 3 && m->kernel == k && m->value < most)
			most = m->value;
	}
	return most;
}

st_status st_cubin_set_regcount(st_cubin *c, size_t k, unsigned regs, st_error *err)
{
	const st_kernel_info *ki = st_cubin_kernel(c, k);
	if (!ki)
		return st_error_set(err, ST_EINVAL, "%s: kernel index %zu out of range", c->name, k);
	if (regs < 1 || regs > 255)
		return st_error_set(err, ST_EINVAL, "%s: %s: %u registers: outside 1..255", c->name, ki->name, regs);
	const st_nvinfo *r = NULL;
	size_t n = regcount_records(c, k, &r);
	if (n != 1)
		return st_error_set(err, ST_EUNSUPPORTED, "%s: %s: %zu EIATTR_REGCOUNT records name the kernel (one expected)",
				    c->name, ki->name, n);
	if (c->v.sections[ki->section].info >> 24)
		return st_error_set(err, ST_EUNSUPPORTED, "%s: .text.%s keeps a register count in sh_info (not an sm_90 layout)",
				    c->name, ki->name);
	unsigned most = st_cubin_maxregs(c, k);
	if (most < regs)
		return st_error_set(err, ST_EUNSUPPORTED, "%s: %s: EIATTR_MAXREG_COUNT %u is below %u registers", c->name,
				    ki->name, most, regs);
	const uint8_t *base = r->payload >= c->image && r->payload < c->image + c->size ? c->image : c->orig;
	size_t off = (size_t)(r->payload - base) + 4; /* the same in both: sections never move */
	if (r->payload < base || off + 4 > c->size)
		return st_error_set(err, ST_EFORMAT, "%s: %s: EIATTR_REGCOUNT outside the image", c->name, ki->name);
	st_put_le32(c->image + off, regs);
	st_put_le32(c->orig + off, regs);
	return ST_OK;
}
