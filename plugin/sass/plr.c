/* `nvdisasm -plr` register life ranges as ground truth for def/use sets.
 *
 * With -plr, nvdisasm appends column groups to each instruction's second encoding line,
 * one group per register file (GPR, PRED, UGPR, UPRED) under a header that numbers the
 * registers:  "|  # 0 1 2 ... 10 11 | # 0 1 |".  A register's mark stands under the last
 * digit of its number: '^' defined, 'v' used, 'x' used and defined, ':' live. */
#include "listing.h"
#include "sass_internal.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 512

struct cols {
	unsigned n;
	uint16_t pos[MAX_COLS];
	uint8_t file[MAX_COLS];
	uint16_t reg[MAX_COLS];
};
struct marks {
	uint64_t def[4][4], use[4][4]; /* R, UR, P, UP; 256 bits each */
};

static int file_of(const char *name, size_t n)
{
	if (n == 3 && !memcmp(name, "GPR", 3))
		return ST_RF_R;
	if (n == 4 && !memcmp(name, "UGPR", 4))
		return ST_RF_UR;
	if (n == 4 && !memcmp(name, "PRED", 4))
		return ST_RF_P;
	if (n == 5 && !memcmp(name, "UPRED", 5))
		return ST_RF_UP;
	return -1;
}

static st_status parse_cols(const char *title, const char *header, struct cols *c, st_error *err)
{
	c->n = 0;
	if (!title || !header)
		return st_error_set(err, ST_EFORMAT, "plr: the listing has no -plr column header");
	/* the file of each '|'-separated group, from the title line */
	int files[8];
	unsigned ng = 0;
	const char *p = title;
	if (*p == '|')
		p++;
	while (*p && ng < 8) {
		const char *bar = strchr(p, '|');
		if (!bar)
			break;
		const char *a = p, *b = bar;
		while (a < b && *a == ' ')
			a++;
		while (b > a && b[-1] == ' ')
			b--;
		files[ng++] = file_of(a, (size_t)(b - a));
		p = bar + 1;
	}
	/* numbers in the header, by group */
	unsigned g = 0;
	size_t len = strlen(header);
	for (size_t i = header[0] == '|' ? 1 : 0; i < len; i++) {
		if (header[i] == '|') {
			g++;
			continue;
		}
		if (header[i] < '0' || header[i] > '9' || (i && header[i - 1] >= '0' && header[i - 1] <= '9'))
			continue;
		unsigned v = 0;
		size_t j = i;
		while (j < len && header[j] >= '0' && header[j] <= '9' && j - i < 4)
			v = v * 10 + (unsigned)(header[j++] - '0');
		if (g >= ng || files[g] < 0 || c->n >= MAX_COLS || v > 255)
			continue;
		c->pos[c->n] = (uint16_t)(j - 1);
		c->file[c->n] = (uint8_t)files[g];
		c->reg[c->n] = (uint16_t)v;
		c->n++;
		i = j - 1;
	}
	if (!c->n)
		return st_error_set(err, ST_EFORMAT, "plr: the -plr header names no registers");
	return ST_OK;
}

static void row_marks(const struct cols *c, const char *row, struct marks *m)
{
	memset(m, 0, sizeof *m);
	size_t len = row ? strlen(row) : 0;
	for (unsigned i = 0; i < c->n; i++) {
		if (c->pos[i] >= len)
			continue;
		char ch = row[c->pos[i]];
		unsigned f = c->file[i], r = c->reg[i];
		if (ch == '^' || ch == 'x')
			m->def[f][r / 64] |= 1ull << (r % 64);
		if (ch == 'v' || ch == 'x')
			m->use[f][r / 64] |= 1ull << (r % 64);
	}
}

static void insn_marks(const st_sass_insn *in, struct marks *m)
{
	memset(m, 0, sizeof *m);
	for (int d = 0; d < 2; d++) {
		const st_sass_reg *set = d ? in->uses : in->defs;
		unsigned n = d ? in->nuses : in->ndefs;
		for (unsigned i = 0; i < n; i++) {
			if (set[i].file > ST_RF_UP)
				continue;
			for (unsigned r = set[i].index; r < (unsigned)set[i].index + set[i].count && r < 256; r++) {
				uint64_t *w = d ? &m->use[set[i].file][r / 64] : &m->def[set[i].file][r / 64];
				*w |= 1ull << (r % 64);
			}
		}
	}
}

/* "missing def R25, extra use P0" */
static void describe(const struct marks *plr, const struct marks *dec, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = 0;
	for (int d = 0; d < 2; d++)
		for (unsigned f = 0; f < 4; f++)
			for (unsigned r = 0; r < 256; r++) {
				uint64_t a = (d ? plr->use : plr->def)[f][r / 64] >> (r % 64) & 1;
				uint64_t b = (d ? dec->use : dec->def)[f][r / 64] >> (r % 64) & 1;
				if (a == b || len + 40 >= n)
					continue;
				char reg[16];
				st_sass_reg_str(reg, sizeof reg, f, r);
				len += (size_t)snprintf(buf + len, n - len, "%s%s %s %s", len ? ", " : "", a ? "missing" : "extra",
						       d ? "use" : "def", reg);
			}
}

st_status st_sass_check_plr(const st_sass_kernel *k, const char *plr_listing, size_t len, size_t *agree,
			    size_t *compared, void (*report)(void *ctx, const st_sass_insn *in, const char *diff), void *ctx,
			    st_error *err)
{
	*agree = *compared = 0;
	st_listing *l = NULL;
	st_status s = st_listing_parse(plr_listing, len, &l, err);
	if (s != ST_OK)
		return s;
	const struct st_lst_section *sec = st_listing_find(l, st_sass_name(k));
	struct cols *c = malloc(sizeof *c);
	if (!c) {
		st_listing_free(l);
		return st_error_set(err, ST_ENOMEM, "plr: out of memory");
	}
	if (!sec) {
		s = st_error_set(err, ST_ENOTFOUND, "plr: the -plr listing has no section .text.%s", st_sass_name(k));
		goto done;
	}
	if ((s = parse_cols(sec->plr_title, sec->plr_header, c, err)) != ST_OK)
		goto done;
	size_t n = st_sass_count(k);
	const st_sass_insn *insns = st_sass_insns(k);
	if (sec->n > n) {
		s = st_error_set(err, ST_EFORMAT, "plr: kernel %s: the -plr listing has %zu instructions, the kernel %zu",
				 st_sass_name(k), sec->n, n);
		goto done;
	}
	/* -plr leaves out the NOP padding after the last instruction: compare what it lists */
	*compared = sec->n;
	for (size_t i = 0; i < sec->n; i++) {
		const struct st_lst_insn *li = &sec->insns[i];
		if (li->offset != insns[i].offset || li->lo != st_le64(insns[i].word) || li->hi != st_le64(insns[i].word + 8)) {
			s = st_error_set(err, ST_EFORMAT, "plr: kernel %s: the -plr listing differs at /*%04x*/",
					 st_sass_name(k), li->offset);
			goto done;
		}
		struct marks a, b;
		row_marks(c, li->plr, &a);
		insn_marks(&insns[i], &b);
		if (!memcmp(&a, &b, sizeof a)) {
			(*agree)++;
			continue;
		}
		if (report) {
			char diff[400];
			describe(&a, &b, diff, sizeof diff);
			report(ctx, &insns[i], diff);
		}
	}
done:
	free(c);
	st_listing_free(l);
	return s;
}
