/* Fuzz target for the cubin reader: read, look at everything, write back, move a few
 * instructions of every kernel that allows it (then move them back), and insert a NOP through
 * each kernel's padding. */
#include "sasstune/cubin.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_cubin *c = NULL;
	st_error err = {0};
	if (st_cubin_open_mem(data, size, "fuzz", &c, &err)) {
		if (!err.msg[0] || strchr(err.msg, '\n'))
			abort(); /* every failure has a one-line message */
		return 0;
	}
	size_t out_size;
	const uint8_t *out = st_cubin_data(c, &out_size);
	if (out_size != size || memcmp(out, data, size))
		abort(); /* unchanged input writes back byte-identical */
	sink += st_cubin_sm(c) + st_cubin_osabi(c) + st_cubin_eflags(c);
	for (size_t i = 0; i < st_cubin_nvinfo_count(c); i++) {
		const st_nvinfo *r = st_cubin_nvinfo(c, i);
		sink += r->attr + r->value + (r->name ? strlen(r->name) : 0);
		for (size_t b = 0; b < r->size; b++)
			sink += r->payload[b];
	}
	for (size_t i = 0; i < st_cubin_symbol_count(c); i++)
		sink += strlen(st_cubin_symbol(c, i)->name) + st_cubin_symbol(c, i)->value;
	for (size_t i = 0; i < st_cubin_reloc_count(c); i++)
		sink += st_cubin_reloc(c, i)->offset + strlen(st_cubin_reloc(c, i)->symbol_name);
	for (size_t i = 0; i < st_cubin_const_count(c); i++) {
		const st_const_bank *b = st_cubin_const(c, i);
		sink += b->bank + (b->data && b->size ? b->data[b->size - 1] : 0);
	}
	for (size_t k = 0; k < st_cubin_kernel_count(c); k++) {
		const st_kernel_info *ki = st_cubin_kernel(c, k);
		size_t n = ki->insn_count;
		for (size_t s = 0; s < n; s++) {
			uint64_t lo, hi;
			st_cubin_insn(c, k, s, &lo, &hi);
			sink += lo ^ hi;
		}
		for (size_t i = 0; i < st_cubin_ref_count(c, k); i++)
			sink += st_cubin_ref(c, k, i)->target;
		if (st_cubin_check_rewritable(c, k, &err) || n < 4)
			continue;
		uint32_t *p = malloc(n * sizeof *p);
		if (!p)
			break;
		for (size_t j = 0; j < n; j++)
			p[j] = (uint32_t)j;
		size_t a = 1 + (size % (n - 2)); /* swap a and a+1, wherever the input puts it */
		p[a] = (uint32_t)(a + 1);
		p[a + 1] = (uint32_t)a;
		if (st_cubin_permute(c, k, p, n, &err) == ST_OK) {
			if (st_cubin_permute(c, k, p, n, &err) != ST_OK)
				abort(); /* the swap back must work */
			out = st_cubin_data(c, &out_size);
			if (out_size != size || memcmp(out, data, size))
				abort(); /* and give the input back */
		}
		free(p);
	}
	for (size_t k = 0; k < st_cubin_kernel_count(c); k++) { /* insertion (changes the file: last) */
		size_t n = st_cubin_kernel(c, k)->insn_count, pad = st_cubin_insertable(c, k);
		if (pad > n || (pad && n - pad < 2))
			abort(); /* the padding follows at least an EXIT / self-branch and one more slot */
		if (!pad)
			continue;
		size_t at = 1 + size % (n - pad - 1), before_size;
		const uint8_t *before = st_cubin_data(c, &before_size);
		uint8_t *copy = malloc(before_size ? before_size : 1);
		if (!copy)
			break;
		memcpy(copy, before, before_size);
		st_status rc = st_cubin_insert(c, k, at, NULL, &err);
		out = st_cubin_data(c, &out_size);
		if (rc == ST_OK ? st_cubin_insertable(c, k) != pad - 1
				: (!err.msg[0] || strchr(err.msg, '\n') || out_size != before_size || memcmp(out, copy, out_size)))
			abort(); /* one slot used, or refused with one line and nothing changed */
		free(copy);
	}
	st_cubin_free(c);
	return 0;
}
