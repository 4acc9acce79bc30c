/* DWARF v2/v3 line programs (.debug_line, .nv_debug_line_sass): decode to rows, re-encode one
 * sequence into a fixed byte span (plugin/cubin/lines.c, docs/cubin.md "Line tables"). */
#ifndef ST_CUBIN_LINES_H
#define ST_CUBIN_LINES_H

#include "sasstune/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct st_line_row {
	uint64_t addr; /* as the program counts it: the set_address operand plus advances */
	uint32_t file, line, column;
	bool is_stmt;
} st_line_row;

typedef struct st_line_unit {
	uint8_t min_insn, line_range, opcode_base;
	int8_t line_base;
	bool default_is_stmt;
} st_line_unit;

/* One sequence: [start, end) bytes of the section, from its DW_LNE_set_address through its
 * DW_LNE_end_sequence.  Rows exclude the end_sequence row, whose address is end_addr. */
typedef struct st_line_seq {
	size_t unit;     /* index into units */
	size_t start, end;
	size_t addr_off; /* section offset of the 8-byte set_address operand (SIZE_MAX: none first) */
	uint64_t addr0;  /* that operand's value in the file */
	uint64_t end_addr;
	st_line_row *rows;
	size_t nrows;
} st_line_seq;

typedef struct st_line_table {
	st_line_unit *units;
	size_t nunits;
	st_line_seq *seqs;
	size_t nseqs;
} st_line_table;

/* Decode every unit of a line section.  ST_EFORMAT: malformed; ST_EUNSUPPORTED: well formed
 * but holding what we cannot re-encode (64-bit DWARF, versions other than 2/3, non-standard
 * opcode lengths, vendor extended opcodes, DW_LNE_define_file).  t is freed on failure. */
st_status st_lines_parse(const uint8_t *p, size_t n, st_line_table *t, st_error *err);
void st_lines_free(st_line_table *t);

/* Encode one sequence into exactly len bytes at out: DW_LNE_set_address with the 8 operand
 * bytes addr_bytes (kept, so a relocation at that place stays true), the rows (addresses
 * non-decreasing, from addr0 on), DW_LNS_advance_pc 0 padding (redundant LEB128s of at most
 * 10 bytes) so that the span is filled, a final advance to end_addr, DW_LNE_end_sequence.  ST_EUNSUPPORTED when it does not fit. */
st_status st_lines_encode_seq(const st_line_unit *u, const uint8_t addr_bytes[8], uint64_t addr0,
			      const st_line_row *rows, size_t nrows, uint64_t end_addr, uint8_t *out, size_t len,
			      st_error *err);

/* The row that holds addr in seq (the last row at or before it), or NULL. */
const st_line_row *st_lines_lookup(const st_line_seq *seq, uint64_t addr);

#endif
