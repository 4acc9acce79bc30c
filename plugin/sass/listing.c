/* Parser for nvdisasm's `-hex -c` listing (optionally with `-plr` columns). */
#include "listing.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define ST_LST_MAX_LINE (1u << 20) /* longer lines are refused */

static char *dup_range(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

static const char *skip_ws(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	return s;
}

static const char *trim_end(const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	return e;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "/ * 0x<16 hex> * /" at s (after spaces); sets *v and returns the end, or NULL. */
static const char *parse_word(const char *s, const char *e, uint64_t *v)
{
	s = skip_ws(s, e);
	if (e - s < 2 + 1 + 2 + 16 + 3 || memcmp(s, "/*", 2))
		return NULL;
	s = skip_ws(s + 2, e);
	if (e - s < 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return NULL;
	s += 2;
	uint64_t x = 0;
	int nd = 0;
	while (s < e && hexval(*s) >= 0 && nd < 17) {
		x = x << 4 | (uint64_t)hexval(*s);
		s++;
		nd++;
	}
	if (nd != 16)
		return NULL;
	s = skip_ws(s, e);
	if (e - s < 2 || memcmp(s, "*/", 2))
		return NULL;
	*v = x;
	return s + 2;
}

/* The `-plr` columns after the encoding: "// |...", or NULL. */
static const char *find_plr(const char *s, const char *e)
{
	s = skip_ws(s, e);
	if (e - s >= 4 && !memcmp(s, "// |", 4))
		return s + 3;
	return NULL;
}

static st_status add_section(st_listing *l, const char *name, size_t n, st_error *err)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct st_lst_section *p = realloc(l->sections, cap * sizeof *p);
		if (!p)
			return st_error_set(err, ST_ENOMEM, "listing: out of memory");
		l->sections = p;
		l->cap = cap;
	}
	struct st_lst_section *sec = &l->sections[l->n];
	memset(sec, 0, sizeof *sec);
	sec->name = dup_range(name, n);
	if (!sec->name)
		return st_error_set(err, ST_ENOMEM, "listing: out of memory");
	l->n++;
	return ST_OK;
}

static st_status add_insn(struct st_lst_section *sec, struct st_lst_insn *in, st_error *err)
{
	if (sec->n == sec->cap) {
		size_t cap = sec->cap ? sec->cap * 2 : 64;
		struct st_lst_insn *p = realloc(sec->insns, cap * sizeof *p);
		if (!p)
			return st_error_set(err, ST_ENOMEM, "listing: out of memory");
		sec->insns = p;
		sec->cap = cap;
	}
	sec->insns[sec->n++] = *in;
	return ST_OK;
}

static void free_insn(struct st_lst_insn *in)
{
	free(in->text);
	free(in->label);
	free(in->plr);
}

void st_listing_free(st_listing *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		struct st_lst_section *s = &l->sections[i];
		for (size_t j = 0; j < s->n; j++)
			free_insn(&s->insns[j]);
		free(s->insns);
		free(s->name);
		free(s->plr_header);
		free(s->plr_title);
		free(s->end_label);
	}
	free(l->sections);
	free(l);
}

const struct st_lst_section *st_listing_find(const st_listing *l, const char *kernel)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (!strcmp(l->sections[i].name, kernel))
			return &l->sections[i];
	return NULL;
}

static int is_label_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$';
}

st_status st_listing_parse(const char *text, size_t len, st_listing **out, st_error *err)
{
	*out = NULL;
	st_listing *l = calloc(1, sizeof *l);
	if (!l)
		return st_error_set(err, ST_ENOMEM, "listing: out of memory");
	st_status s = ST_OK;
	const char *p = text, *end = text + len;
	unsigned line = 0;
	char *pending_label = NULL;
	struct st_lst_insn cur;
	int have_cur = 0; /* an instruction line waits for its second word */
	memset(&cur, 0, sizeof cur);

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *ls = p;
		p = nl ? nl + 1 : end;
		line++;
		if ((size_t)(le - ls) > ST_LST_MAX_LINE) {
			s = st_error_set(err, ST_EFORMAT, "listing line %u: longer than %u bytes", line, ST_LST_MAX_LINE);
			goto fail;
		}
		if (memchr(ls, 0, (size_t)(le - ls))) {
			s = st_error_set(err, ST_EFORMAT, "listing line %u: contains a NUL byte", line);
			goto fail;
		}
		const char *b = skip_ws(ls, le);
		const char *e = trim_end(b, le);
		struct st_lst_section *sec = l->n ? &l->sections[l->n - 1] : NULL;

		if (have_cur) {
			/* the second word of the instruction: "/ * 0x... * /" [plr] */
			uint64_t hi;
			const char *q = parse_word(b, e, &hi);
			if (!q) {
				s = st_error_set(err, ST_EFORMAT,
						 "listing line %u: expected the second encoding word of the instruction at /*%04x*/",
						 line, cur.offset);
				goto fail;
			}
			cur.hi = hi;
			const char *pl = find_plr(q, e);
			if (pl && !(cur.plr = dup_range(pl, (size_t)(e - pl)))) {
				s = st_error_set(err, ST_ENOMEM, "listing: out of memory");
				goto fail;
			}
			if ((s = add_insn(sec, &cur, err)) != ST_OK)
				goto fail;
			memset(&cur, 0, sizeof cur);
			have_cur = 0;
			continue;
		}
		if (b == e)
			continue;
		if (e - b >= 8 && !memcmp(b, ".section", 8)) {
			const char *t = memmem(b, (size_t)(e - b), ".text.", 6);
			if (!t)
				continue; /* not a code section: -c prints none, but be tolerant */
			t += 6;
			const char *te = t;
			while (te < e && *te != ',' && *te != ' ' && *te != '\t' && *te != '"')
				te++;
			if (te == t) {
				s = st_error_set(err, ST_EFORMAT, "listing line %u: .section .text. without a kernel name", line);
				goto fail;
			}
			if (sec && !sec->end_label)
				sec->end_label = pending_label;
			else
				free(pending_label);
			pending_label = NULL;
			if ((s = add_section(l, t, (size_t)(te - t), err)) != ST_OK)
				goto fail;
			continue;
		}
		if (e - b >= 2 && b[0] == '/' && b[1] == '/') {
			/* comment; -plr headers live here */
			if (!sec || sec->n)
				continue;
			const char *bar = memmem(b, (size_t)(e - b), "// |", 4);
			if (!bar)
				continue;
			char **slot = memchr(bar, '#', (size_t)(e - bar)) ? &sec->plr_header
				      : memmem(bar, (size_t)(e - bar), "GPR", 3) ? &sec->plr_title : NULL;
			if (slot && !*slot && !(*slot = dup_range(bar + 3, (size_t)(e - bar - 3)))) {
				s = st_error_set(err, ST_ENOMEM, "listing: out of memory");
				goto fail;
			}
			continue;
		}
		if (e - b >= 4 && b[0] == '/' && b[1] == '*' && hexval(b[2]) >= 0) {
			/* "/ *0010* /   @!P0 BRA `(.L_x_1) ;   / * 0x... * /" */
			uint32_t off = 0;
			const char *q = b + 2;
			int nd = 0;
			while (q < e && hexval(*q) >= 0 && nd < 9) {
				off = off << 4 | (uint32_t)hexval(*q);
				q++;
				nd++;
			}
			if (nd > 8 || e - q < 2 || memcmp(q, "*/", 2)) {
				s = st_error_set(err, ST_EFORMAT, "listing line %u: bad instruction offset", line);
				goto fail;
			}
			if (!sec) {
				s = st_error_set(err, ST_EFORMAT, "listing line %u: instruction outside a .text section", line);
				goto fail;
			}
			q = skip_ws(q + 2, e);
			const char *semi = memchr(q, ';', (size_t)(e - q));
			if (!semi) {
				s = st_error_set(err, ST_EFORMAT, "listing line %u: instruction at /*%04x*/ has no ';'", line, off);
				goto fail;
			}
			const char *te = trim_end(q, semi);
			if (te == q) {
				s = st_error_set(err, ST_EFORMAT, "listing line %u: empty instruction at /*%04x*/", line, off);
				goto fail;
			}
			uint64_t lo;
			if (!parse_word(semi + 1, e, &lo)) {
				s = st_error_set(err, ST_EFORMAT,
						 "listing line %u: instruction at /*%04x*/ has no encoding (run nvdisasm with -hex)",
						 line, off);
				goto fail;
			}
			if (sec->n && off <= sec->insns[sec->n - 1].offset) {
				s = st_error_set(err, ST_EFORMAT, "listing line %u: offset /*%04x*/ does not follow /*%04x*/",
						 line, off, sec->insns[sec->n - 1].offset);
				goto fail;
			}
			cur.offset = off;
			cur.line = line;
			cur.lo = lo;
			cur.label = pending_label;
			pending_label = NULL;
			if (!(cur.text = dup_range(q, (size_t)(te - q)))) {
				s = st_error_set(err, ST_ENOMEM, "listing: out of memory");
				goto fail;
			}
			have_cur = 1;
			continue;
		}
		/* a label: "NAME:" (with -plr, columns follow) */
		{
			const char *q = b;
			while (q < e && is_label_char(*q))
				q++;
			if (q > b && q < e && *q == ':' && sec) {
				const char *r = skip_ws(q + 1, e);
				if (r != e && !find_plr(r, e))
					continue;
				size_t n = (size_t)(q - b);
				/* the kernel's own symbol and section name are not labels */
				if ((n == strlen(sec->name) && !memcmp(b, sec->name, n)) ||
				    (n == strlen(sec->name) + 6 && !memcmp(b, ".text.", 6) && !memcmp(b + 6, sec->name, n - 6)))
					continue;
				free(pending_label);
				if (!(pending_label = dup_range(b, n))) {
					s = st_error_set(err, ST_ENOMEM, "listing: out of memory");
					goto fail;
				}
			}
		}
	}
	if (have_cur) {
		s = st_error_set(err, ST_EFORMAT, "listing line %u: the instruction at /*%04x*/ lacks its second word",
				 line, cur.offset);
		goto fail;
	}
	if (l->n && !l->sections[l->n - 1].end_label)
		l->sections[l->n - 1].end_label = pending_label;
	else
		free(pending_label);
	*out = l;
	return ST_OK;
fail:
	free_insn(&cur);
	free(pending_label);
	st_listing_free(l);
	return s;
}
