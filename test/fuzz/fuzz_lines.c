/* Fuzz target: DWARF line sections (.debug_line, .nv_debug_line_sass) through the decoder, the
 * row lookup, and the re-encoder: every decoded sequence re-encoded into its own span (when it
 * fits) must decode again to the same rows. */
#include "cubin/lines.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void roundtrip(const uint8_t *data, const st_line_table *t, const st_line_seq *q)
{
	const st_line_unit *u = &t->units[q->unit];
	size_t len = q->end - q->start;
	uint8_t *buf = malloc(len + 1);
	if (!buf)
		return;
	st_status rc = st_lines_encode_seq(u, data + q->addr_off, q->addr0, q->rows, q->nrows, q->end_addr, buf, len,
					   NULL);
	/* a stand-alone unit around it: header as decoded, no directories or files */
	uint8_t hdr[26] = {0, 0, 0, 0, 2, 0, 16, 0, 0, 0, u->min_insn, u->default_is_stmt, (uint8_t)u->line_base,
			   u->line_range, 10, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0};
	uint8_t *unit = rc == ST_OK && u->opcode_base == 10 ? malloc(sizeof hdr + len) : NULL;
	if (unit) {
		uint32_t total = (uint32_t)(sizeof hdr + len - 4);
		memcpy(hdr, &total, 4);
		memcpy(unit, hdr, sizeof hdr);
		memcpy(unit + sizeof hdr, buf, len);
		st_line_table t2;
		if (st_lines_parse(unit, sizeof hdr + len, &t2, NULL) != ST_OK || t2.nseqs != 1 ||
		    t2.seqs[0].end_addr != q->end_addr)
			abort();
		/* rows at one address collapse to the last one in lookups; compare through lookup */
		for (size_t i = 0; i < q->nrows; i++) {
			const st_line_row *a = st_lines_lookup(q, q->rows[i].addr);
			const st_line_row *b = st_lines_lookup(&t2.seqs[0], q->rows[i].addr);
			if ((a == NULL) != (b == NULL) || (a && (a->line != b->line || a->file != b->file)))
				abort();
		}
		st_lines_free(&t2);
		free(unit);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_line_table t;
	if (st_lines_parse(data, size, &t, NULL) != ST_OK)
		return 0;
	for (size_t i = 0; i < t.nseqs; i++) {
		const st_line_seq *q = &t.seqs[i];
		if (q->start > q->end || q->end > size)
			abort();
		for (size_t r = 0; r < q->nrows && r < 64; r++)
			(void)st_lines_lookup(q, q->rows[r].addr + 3);
		bool sorted = true;
		for (size_t r = 1; r < q->nrows; r++)
			sorted = sorted && q->rows[r].addr >= q->rows[r - 1].addr;
		if (q->addr_off != SIZE_MAX && q->nrows && sorted && q->rows[0].addr >= q->addr0 &&
		    q->end_addr >= q->rows[q->nrows - 1].addr)
			roundtrip(data, &t, q);
	}
	st_lines_free(&t);
	return 0;
}
