/* DWARF v2/v3 line programs: a strict decoder to rows and a compact re-encoder for one sequence
 * (the rewrite of line tables after a permutation lives in lines_rewrite.c). */
#include "lines.h"

#include <stdlib.h>
#include <string.h>

enum { LNS_COPY = 1, LNS_ADVANCE_PC, LNS_ADVANCE_LINE, LNS_SET_FILE, LNS_SET_COLUMN, LNS_NEGATE_STMT,
       LNS_SET_BASIC_BLOCK, LNS_CONST_ADD_PC, LNS_FIXED_ADVANCE_PC };
enum { LNE_END_SEQUENCE = 1, LNE_SET_ADDRESS = 2 };

static const uint8_t std_lengths[12] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};

typedef struct rd {
	const uint8_t *p;
	size_t pos, end;
	bool bad;
} rd;

static uint64_t uleb(rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (r->pos >= r->end || shift > 63) {
			r->bad = true;
			return 0;
		}
		uint8_t b = r->p[r->pos++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

/* Signed LEB128 of at most 64 bits; values outside +-2^32 set bad (no line needs more). */
static int64_t sleb(rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (r->pos >= r->end || shift > 63) {
			r->bad = true;
			return 0;
		}
		b = r->p[r->pos++];
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	int64_t s = (int64_t)v;
	if (s > 0xffffffffll || s < -0xffffffffll) {
		r->bad = true;
		return 0; /* invariant: |result| <= 2^32, so line + result cannot overflow */
	}
	return s;
}

static uint64_t fixed(rd *r, unsigned bytes)
{
	if (r->pos > r->end || r->end - r->pos < bytes) {
		r->bad = true;
		r->pos = r->end;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)r->p[r->pos + i] << (8 * i);
	r->pos += bytes;
	return v;
}

static void skip_string(rd *r)
{
	while (r->pos < r->end && r->p[r->pos])
		r->pos++;
	if (r->pos >= r->end)
		r->bad = true;
	else
		r->pos++;
}

void st_lines_free(st_line_table *t)
{
	for (size_t i = 0; i < t->nseqs; i++)
		free(t->seqs[i].rows);
	free(t->seqs);
	free(t->units);
	memset(t, 0, sizeof *t);
}

/* Decode one unit's header at r->pos; on success r->pos is the program start, *prog_end its end. */
static st_status header(rd *r, st_line_unit *u, size_t *prog_end, st_error *err)
{
	size_t at = r->pos;
	uint64_t len = fixed(r, 4);
	if (r->bad || len >= 0xfffffff0u)
		return st_error_set(err, len == 0xffffffffu ? ST_EUNSUPPORTED : ST_EFORMAT,
				    "line table at 0x%zx: %s", at, len == 0xffffffffu ? "64-bit DWARF" : "bad unit length");
	if (len > r->end - r->pos)
		return st_error_set(err, ST_EFORMAT, "line table at 0x%zx: unit length %llu past the section end", at,
				    (unsigned long long)len);
	*prog_end = r->pos + len;
	rd h = {r->p, r->pos, *prog_end, false};
	unsigned version = (unsigned)fixed(&h, 2);
	uint64_t hlen = fixed(&h, 4);
	if (!h.bad && version != 2 && version != 3)
		return st_error_set(err, ST_EUNSUPPORTED, "line table at 0x%zx: DWARF version %u", at, version);
	if (h.bad || hlen > h.end - h.pos)
		return st_error_set(err, ST_EFORMAT, "line table at 0x%zx: header past the unit end", at);
	size_t prog = h.pos + hlen;
	h.end = prog;
	u->min_insn = (uint8_t)fixed(&h, 1);
	u->default_is_stmt = fixed(&h, 1) != 0;
	u->line_base = (int8_t)fixed(&h, 1);
	u->line_range = (uint8_t)fixed(&h, 1);
	u->opcode_base = (uint8_t)fixed(&h, 1);
	if (h.bad || !u->line_range || !u->min_insn)
		return st_error_set(err, ST_EFORMAT, "line table at 0x%zx: bad header fields", at);
	if (u->opcode_base != (version == 2 ? 10 : 13))
		return st_error_set(err, ST_EUNSUPPORTED, "line table at 0x%zx: opcode base %u", at, u->opcode_base);
	for (unsigned op = 1; op < u->opcode_base; op++)
		if (fixed(&h, 1) != std_lengths[op - 1] && !h.bad)
			return st_error_set(err, ST_EUNSUPPORTED, "line table at 0x%zx: opcode %u has a non-standard length",
					    at, op);
	while (!h.bad && h.pos < h.end && h.p[h.pos]) /* include directories */
		skip_string(&h);
	fixed(&h, 1);
	while (!h.bad && h.pos < h.end && h.p[h.pos]) { /* file names */
		skip_string(&h);
		uleb(&h);
		uleb(&h);
		uleb(&h);
	}
	fixed(&h, 1);
	if (h.bad)
		return st_error_set(err, ST_EFORMAT, "line table at 0x%zx: bad directory or file table", at);
	r->pos = prog;
	return ST_OK;
}

static st_status push_row(st_line_seq *s, size_t *cap, const st_line_row *row, st_error *err)
{
	if (s->nrows == *cap) {
		size_t nc = *cap ? 2 * *cap : 16;
		st_line_row *nr = realloc(s->rows, nc * sizeof *nr);
		if (!nr)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		s->rows = nr;
		*cap = nc;
	}
	s->rows[s->nrows++] = *row;
	return ST_OK;
}

static st_status new_seq(st_line_table *t, size_t *cap, size_t unit, size_t start, st_error *err)
{
	if (t->nseqs == *cap) {
		size_t nc = *cap ? 2 * *cap : 4;
		st_line_seq *ns = realloc(t->seqs, nc * sizeof *ns);
		if (!ns)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		t->seqs = ns;
		*cap = nc;
	}
	t->seqs[t->nseqs++] = (st_line_seq){.unit = unit, .start = start, .addr_off = SIZE_MAX};
	return ST_OK;
}

typedef struct lstate {
	uint64_t addr;
	int64_t line;
	uint64_t file, column;
	bool is_stmt;
} lstate;

static void reset(lstate *s, const st_line_unit *u) { *s = (lstate){0, 1, 1, 0, u->default_is_stmt}; }

/* One extended opcode at r->pos (after the 0 byte).  *ended: it was end_sequence. */
static st_status extended(rd *r, lstate *s, st_line_seq *q, bool first, bool *ended, st_error *err)
{
	size_t at = r->pos - 1;
	uint64_t len = uleb(r);
	if (r->bad || !len || len > r->end - r->pos)
		return st_error_set(err, ST_EFORMAT, "line program at 0x%zx: bad extended opcode length", at);
	unsigned sub = r->p[r->pos++];
	if (sub == LNE_END_SEQUENCE && len == 1) {
		*ended = true;
		return ST_OK;
	}
	if (sub == LNE_SET_ADDRESS && len == 9) {
		if (first) {
			q->addr_off = r->pos;
			q->addr0 = fixed(r, 8);
			s->addr = q->addr0;
		} else { /* a jump inside a sequence: decoded, but the sequence is not re-encoded */
			q->addr_off = SIZE_MAX;
			s->addr = fixed(r, 8);
		}
		return ST_OK;
	}
	return st_error_set(err, ST_EUNSUPPORTED, "line program at 0x%zx: extended opcode %u (length %llu)", at, sub,
			    (unsigned long long)len);
}

/* One standard opcode (op < opcode_base).  *row: emit a row. */
static st_status standard(rd *r, unsigned op, const st_line_unit *u, lstate *s, bool *row, st_error *err)
{
	switch (op) {
	case LNS_COPY: *row = true; break;
	case LNS_ADVANCE_PC: s->addr += uleb(r) * u->min_insn; break;
	case LNS_ADVANCE_LINE: s->line += sleb(r); break;
	case LNS_SET_FILE: s->file = uleb(r); break;
	case LNS_SET_COLUMN: s->column = uleb(r); break;
	case LNS_NEGATE_STMT: s->is_stmt = !s->is_stmt; break;
	case LNS_SET_BASIC_BLOCK: break;
	case LNS_CONST_ADD_PC: s->addr += (uint64_t)((255u - u->opcode_base) / u->line_range) * u->min_insn; break;
	case LNS_FIXED_ADVANCE_PC: s->addr += fixed(r, 2); break;
	default: /* DWARF 3 prologue/epilogue/isa flags: we could not keep them */
		return st_error_set(err, ST_EUNSUPPORTED, "line program at 0x%zx: standard opcode %u", r->pos - 1, op);
	}
	return ST_OK;
}

static st_status program(rd *r, st_line_table *t, size_t unit, size_t *seq_cap, st_error *err)
{
	const st_line_unit *u = &t->units[unit];
	lstate s;
	reset(&s, u);
	bool open = false, first = false;
	size_t row_cap = 0;
	st_status rc;
	while (r->pos < r->end) {
		if (!open) {
			if ((rc = new_seq(t, seq_cap, unit, r->pos, err)))
				return rc;
			open = first = true;
			row_cap = 0;
		}
		st_line_seq *q = &t->seqs[t->nseqs - 1];
		unsigned op = r->p[r->pos++];
		bool row = false, ended = false;
		if (op == 0)
			rc = extended(r, &s, q, first, &ended, err);
		else if (op < u->opcode_base)
			rc = standard(r, op, u, &s, &row, err);
		else {
			unsigned adj = op - u->opcode_base;
			s.addr += (uint64_t)(adj / u->line_range) * u->min_insn;
			s.line += u->line_base + (int)(adj % u->line_range);
			row = true;
			rc = ST_OK;
		}
		first = false;
		if (rc)
			return rc;
		if (r->bad || s.line < 0 || s.line > 0xffffffffll || s.file > 0xffffffffu || s.column > 0xffffffffu)
			return st_error_set(err, ST_EFORMAT, "line program: bad operand before 0x%zx", r->pos);
		if (row && (rc = push_row(q, &row_cap,
					  &(st_line_row){s.addr, (uint32_t)s.file, (uint32_t)s.line, (uint32_t)s.column,
							 s.is_stmt},
					  err)))
			return rc;
		if (ended) {
			q->end = r->pos;
			q->end_addr = s.addr;
			reset(&s, u);
			open = false;
		}
	}
	if (open && t->seqs[t->nseqs - 1].nrows)
		return st_error_set(err, ST_EFORMAT, "line program: a sequence without DW_LNE_end_sequence");
	if (open) { /* trailing state opcodes, no row: nothing to keep */
		free(t->seqs[t->nseqs - 1].rows);
		t->nseqs--;
	}
	return ST_OK;
}

st_status st_lines_parse(const uint8_t *p, size_t n, st_line_table *t, st_error *err)
{
	memset(t, 0, sizeof *t);
	rd r = {p, 0, n, false};
	size_t unit_cap = 0, seq_cap = 0;
	st_status rc = ST_OK;
	while (r.pos < n && rc == ST_OK) {
		if (t->nunits == unit_cap) {
			size_t nc = unit_cap ? 2 * unit_cap : 2;
			st_line_unit *nu = realloc(t->units, nc * sizeof *nu);
			if (!nu) {
				rc = st_error_set(err, ST_ENOMEM, "out of memory");
				break;
			}
			t->units = nu;
			unit_cap = nc;
		}
		size_t prog_end = 0;
		if ((rc = header(&r, &t->units[t->nunits], &prog_end, err)))
			break;
		t->nunits++;
		rd pr = {p, r.pos, prog_end, false};
		rc = program(&pr, t, t->nunits - 1, &seq_cap, err);
		r.pos = prog_end;
	}
	if (rc)
		st_lines_free(t);
	return rc;
}

const st_line_row *st_lines_lookup(const st_line_seq *seq, uint64_t addr)
{
	if (!seq->nrows || addr < seq->rows[0].addr || addr >= seq->end_addr)
		return NULL;
	size_t lo = 0, hi = seq->nrows; /* last row with rows[i].addr <= addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (seq->rows[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &seq->rows[lo];
}

typedef struct wr {
	uint8_t *p;
	size_t pos, cap;
} wr;

static void put(wr *w, uint8_t b)
{
	if (w->pos < w->cap)
		w->p[w->pos] = b;
	w->pos++; /* counts past cap: the caller compares pos with cap at the end */
}

/* ULEB128 of v in at least min_bytes bytes (extra bytes are 0x80 ... 0x00: the same value). */
static void put_uleb(wr *w, uint64_t v, size_t min_bytes)
{
	size_t k = 0;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		k++;
		put(w, (uint8_t)(b | (v || k < min_bytes ? 0x80 : 0)));
	} while (v);
	for (; k < min_bytes; k++)
		put(w, k + 1 < min_bytes ? 0x80 : 0);
}

static void put_sleb(wr *w, int64_t v)
{
	for (;;) {
		uint8_t b = v & 0x7f;
		v >>= 7; /* arithmetic shift on the targets we build for */
		bool done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
		put(w, (uint8_t)(b | (done ? 0 : 0x80)));
		if (done)
			return;
	}
}

/* The rows, from state s: each ends with a special opcode (after advance_line / advance_pc for
 * what it cannot hold), or with copy when the header leaves no special opcode for line +0. */
static void put_rows(wr *w, const st_line_unit *u, lstate *s, const st_line_row *rows, size_t nrows)
{
	for (size_t i = 0; i < nrows; i++) {
		const st_line_row *r = &rows[i];
		if (r->file != s->file) {
			put(w, LNS_SET_FILE);
			put_uleb(w, r->file, 1);
		}
		if (r->column != s->column) {
			put(w, LNS_SET_COLUMN);
			put_uleb(w, r->column, 1);
		}
		if (r->is_stmt != s->is_stmt)
			put(w, LNS_NEGATE_STMT);
		int64_t dline = (int64_t)r->line - s->line;
		uint64_t dunits = (r->addr - s->addr) / u->min_insn;
		int64_t lo = dline - u->line_base;
		if (lo < 0 || lo >= u->line_range || lo + u->opcode_base > 255) {
			/* no special opcode holds this line step: the step alone, then one for +0 (or copy) */
			put(w, LNS_ADVANCE_LINE);
			put_sleb(w, dline);
			lo = -(int64_t)u->line_base;
		}
		if (lo >= 0 && lo < u->line_range && lo + u->opcode_base <= 255) {
			/* a special opcode takes the largest address step it can; advance_pc the rest */
			uint64_t max_k = (uint64_t)(255 - u->opcode_base - lo) / u->line_range;
			if (dunits > max_k) {
				put(w, LNS_ADVANCE_PC);
				put_uleb(w, dunits - max_k, 1);
				dunits = max_k;
			}
			put(w, (uint8_t)((uint64_t)lo + u->line_range * dunits + u->opcode_base));
		} else {
			if (dunits) {
				put(w, LNS_ADVANCE_PC);
				put_uleb(w, dunits, 1);
			}
			put(w, LNS_COPY);
		}
		*s = (lstate){r->addr, r->line, r->file, r->column, r->is_stmt};
	}
}

st_status st_lines_encode_seq(const st_line_unit *u, const uint8_t addr_bytes[8], uint64_t addr0,
			      const st_line_row *rows, size_t nrows, uint64_t end_addr, uint8_t *out, size_t len,
			      st_error *err)
{
	for (size_t i = 0; i < nrows; i++)
		if (rows[i].addr < (i ? rows[i - 1].addr : addr0) || rows[i].addr > end_addr ||
		    (rows[i].addr - addr0) % u->min_insn)
			return st_error_set(err, ST_EINVAL, "line rows out of order");
	if ((end_addr - addr0) % u->min_insn)
		return st_error_set(err, ST_EINVAL, "line sequence end not on an instruction");
	wr w = {out, 0, len};
	put(&w, 0);
	put(&w, 9);
	put(&w, LNE_SET_ADDRESS);
	for (int i = 0; i < 8; i++)
		put(&w, addr_bytes[i]);
	lstate s;
	reset(&s, u);
	s.addr = addr0;
	put_rows(&w, u, &s, rows, nrows);
	uint64_t tail = (end_addr - s.addr) / u->min_insn;
	size_t body = w.pos;
	wr probe = {NULL, 0, 0};
	put_uleb(&probe, tail, 1);
	size_t need = body + 1 + probe.pos + 3; /* advance_pc, its LEB, end_sequence */
	if (need > len)
		return st_error_set(err, ST_EUNSUPPORTED, "the re-encoded line sequence needs %zu bytes, it had %zu", need,
				    len);
	/* fill the span: DW_LNS_advance_pc 0 with LEBs of at most 10 bytes (2..11 bytes each);
	 * one byte left over widens the final advance's LEB instead */
	size_t pad = len - need, ext = pad == 1 && probe.pos < 10;
	if (pad == 1 && !ext)
		return st_error_set(err, ST_EUNSUPPORTED, "line sequence: cannot pad one byte");
	for (pad -= ext; pad;) {
		size_t c = pad > 11 ? (pad - 11 == 1 ? 10 : 11) : pad;
		put(&w, LNS_ADVANCE_PC);
		put_uleb(&w, 0, c - 1);
		pad -= c;
	}
	put(&w, LNS_ADVANCE_PC);
	put_uleb(&w, tail, probe.pos + ext);
	put(&w, 0);
	put(&w, 1);
	put(&w, LNE_END_SEQUENCE);
	return w.pos == len ? ST_OK : st_error_set(err, ST_EINVAL, "line sequence: %zu bytes for %zu", w.pos, len);
}
