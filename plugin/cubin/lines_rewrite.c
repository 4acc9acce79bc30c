/* Keeping the line tables true after a permutation: each sequence of .debug_line and
 * .nv_debug_line_sass that covers a moved kernel is decoded to one row per instruction slot,
 * permuted with the code and re-encoded into its own byte span (so the set_address operand, and
 * the relocation that patches it, stay where they were).  A table that cannot be rewritten is
 * dropped as before: zeroed with its relocations, sh_size 0 (docs/cubin.md). */
#include "cubin_internal.h"
#include "lines.h"
#include "util/util.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

static bool is_line_section(const char *name)
{
	return !strcmp(name, ".debug_line") || !strcmp(name, ".nv_debug_line_sass");
}

static void drop(uint8_t *img, const st_cubin_view *v, size_t sec)
{
	uint64_t shoff = st_le64(img + 0x28);
	for (size_t i = 0; i < v->nsections; i++) {
		const st_section *s = &v->sections[i];
		if (i != sec && !((s->type == SHT_REL || s->type == SHT_RELA) && s->info == sec))
			continue;
		memset(img + s->offset, 0, s->size);
		st_put_le64(img + shoff + i * sizeof(Elf64_Shdr) + 32, 0); /* sh_size */
	}
}

static bool same(const st_line_row *a, const st_line_row *b)
{
	return a->file == b->file && a->line == b->line && a->column == b->column && a->is_stmt == b->is_stmt;
}

/* Re-encode sequence q (kernel ki, base: byte offset of addr0 in its .text) for cum into out. */
static bool reencode(const st_line_unit *u, const st_line_seq *q, const st_kernel_info *ki, uint64_t base,
		     const uint32_t *cum, const uint8_t *addr_bytes, uint8_t *out)
{
	if (!q->nrows || base % 16 || q->rows[0].addr < q->addr0 || q->end_addr < q->rows[0].addr)
		return false;
	uint64_t first = base + (q->rows[0].addr - q->addr0), end = base + (q->end_addr - q->addr0);
	if (first % 16 || end % 16 || end > 16 * (uint64_t)ki->insn_count)
		return false;
	for (size_t i = 0; i < q->nrows; i++)
		if ((q->rows[i].addr - q->addr0) % 16)
			return false;
	size_t s0 = (size_t)(first / 16), s1 = (size_t)(end / 16);
	st_line_row *rows = malloc((s1 - s0 + 1) * sizeof *rows);
	if (!rows)
		return false;
	size_t n = 0;
	bool ok = true;
	for (size_t j = s0; j < s1 && ok; j++) {
		size_t o = cum[j];
		const st_line_row *r = o >= s0 && o < s1 ? st_lines_lookup(q, q->addr0 + 16 * o - base) : NULL;
		if (!r) {
			ok = false; /* an instruction moved in from outside this sequence */
			break;
		}
		if (n && same(&rows[n - 1], r))
			continue;
		rows[n] = *r;
		rows[n].addr = q->addr0 + 16 * j - base;
		n++;
	}
	ok = ok && st_lines_encode_seq(u, addr_bytes, q->addr0, rows, n, q->end_addr, out, q->end - q->start, NULL) ==
			   ST_OK;
	free(rows);
	return ok;
}

/* The kernel (and byte base) that sequence q's set_address relocation names; false: unknown. */
static bool seq_kernel(const st_cubin_view *v, size_t sec, const st_line_seq *q, size_t *k, uint64_t *base)
{
	if (q->addr_off == SIZE_MAX)
		return false;
	for (size_t i = 0; i < v->nrelocs; i++) {
		const st_reloc *x = &v->relocs[i];
		if (x->target != sec || x->offset != q->addr_off)
			continue;
		const st_symbol *sym = &v->symbols[x->symbol];
		if (!x->symbol || sym->shndx >= v->nsections)
			return false;
		*k = v->sections[sym->shndx].kernel;
		*base = sym->value + (uint64_t)(x->rela ? x->addend : (int64_t)q->addr0);
		return true;
	}
	return false;
}

/* Rewrite one line section of img; false: it must be dropped. */
static bool rewrite_section(uint8_t *img, const uint8_t *orig, const st_cubin_view *v, size_t sec,
			    const uint32_t *const *cum)
{
	const st_section *s = &v->sections[sec];
	st_line_table t;
	if (st_lines_parse(orig + s->offset, s->size, &t, NULL) != ST_OK)
		return false;
	bool ok = true;
	for (size_t i = 0; i < t.nseqs && ok; i++) {
		const st_line_seq *q = &t.seqs[i];
		size_t k = ST_CUBIN_NONE;
		uint64_t base = 0;
		if (!seq_kernel(v, sec, q, &k, &base)) {
			ok = false; /* cannot tell which code it maps: unsafe once anything moved */
			break;
		}
		if (k == ST_CUBIN_NONE || k >= v->nkernels || !cum[k])
			continue; /* that code did not move */
		ok = reencode(&t.units[q->unit], q, &v->kernels[k], base, cum[k], orig + s->offset + q->addr_off,
			      img + s->offset + q->start);
	}
	st_lines_free(&t);
	return ok;
}

void st_lines_rewrite(uint8_t *img, const uint8_t *orig, const st_cubin_view *v, const uint32_t *const *cum)
{
	for (size_t i = 0; i < v->nsections; i++) {
		const st_section *s = &v->sections[i];
		if (!is_line_section(s->name) || s->type == SHT_NOBITS || !s->size)
			continue;
		if (!rewrite_section(img, orig, v, i, cum))
			drop(img, v, i);
	}
}
