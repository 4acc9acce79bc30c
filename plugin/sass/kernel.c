/* A decoded kernel: listing + code bytes -> instructions, labels, branch targets, blocks. */
#include "listing.h"
#include "sass_internal.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct st_sass_kernel {
	int sm;
	char *name;
	st_sass_insn *insns;
	size_t n;
	st_sass_reg *regs; /* every def/use run, insns point into it */
	char *strs;        /* opcode, operand and label strings */
	uint32_t *bfirst, *bcount;
	int32_t *bsucc; /* 2 per block */
	size_t nblocks;
};

void st_sass_free(st_sass_kernel *k)
{
	if (!k)
		return;
	free(k->name);
	free(k->insns);
	free(k->regs);
	free(k->strs);
	free(k->bfirst);
	free(k->bcount);
	free(k->bsucc);
	free(k);
}

int st_sass_sm(const st_sass_kernel *k)
{
	return k->sm;
}
const char *st_sass_name(const st_sass_kernel *k)
{
	return k->name;
}
size_t st_sass_count(const st_sass_kernel *k)
{
	return k->n;
}
const st_sass_insn *st_sass_insns(const st_sass_kernel *k)
{
	return k->insns;
}
const st_sass_insn *st_sass_at(const st_sass_kernel *k, uint32_t offset)
{
	if (offset % 16 || offset / 16 >= k->n)
		return NULL;
	return &k->insns[offset / 16];
}
size_t st_sass_block_count(const st_sass_kernel *k)
{
	return k->nblocks;
}
void st_sass_block(const st_sass_kernel *k, size_t b, uint32_t *first, uint32_t *count, int32_t succ[2])
{
	if (b >= k->nblocks) {
		*first = *count = 0;
		succ[0] = succ[1] = -1;
		return;
	}
	*first = k->bfirst[b];
	*count = k->bcount[b];
	succ[0] = k->bsucc[2 * b];
	succ[1] = k->bsucc[2 * b + 1];
}

/* Offset of a label, or -1. */
static int64_t label_offset(const struct st_lst_section *sec, size_t size, const char *l, size_t n)
{
	for (size_t i = 0; i < sec->n; i++)
		if (sec->insns[i].label && strlen(sec->insns[i].label) == n && !memcmp(sec->insns[i].label, l, n))
			return sec->insns[i].offset;
	if (sec->end_label && strlen(sec->end_label) == n && !memcmp(sec->end_label, l, n))
		return (int64_t)size;
	return -1;
}

static st_status build_blocks(st_sass_kernel *k, st_error *err)
{
	size_t n = k->n;
	if (!n)
		return ST_OK;
	for (size_t i = 0; i < n; i++) {
		st_sass_insn *in = &k->insns[i];
		if (i == 0 || in->label)
			in->flags |= ST_F_LEADER;
		if (in->target >= 0 && in->target / 16 < (int64_t)n && (in->flags & ST_F_BRANCH))
			k->insns[in->target / 16].flags |= ST_F_LEADER;
		if ((in->flags & ST_F_BRANCH) && i + 1 < n)
			k->insns[i + 1].flags |= ST_F_LEADER;
	}
	size_t nb = 0;
	for (size_t i = 0; i < n; i++)
		nb += (k->insns[i].flags & ST_F_LEADER) != 0;
	k->bfirst = malloc(nb * sizeof *k->bfirst);
	k->bcount = malloc(nb * sizeof *k->bcount);
	k->bsucc = malloc(2 * nb * sizeof *k->bsucc);
	if (!k->bfirst || !k->bcount || !k->bsucc)
		return st_error_set(err, ST_ENOMEM, "sass: out of memory");
	size_t b = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		if (k->insns[i].flags & ST_F_LEADER) {
			b++;
			k->bfirst[b] = (uint32_t)i;
			k->bcount[b] = 0;
		}
		k->bcount[b]++;
		k->insns[i].block = (uint32_t)b;
	}
	k->nblocks = nb;
	for (b = 0; b < nb; b++) {
		const st_sass_insn *last = &k->insns[k->bfirst[b] + k->bcount[b] - 1];
		int32_t *s = &k->bsucc[2 * b];
		s[0] = s[1] = -1;
		int falls = 1, jumps = 0;
		if (last->flags & ST_F_BRANCH) {
			const char *op = last->opcode;
			int cond = last->guard >= 0;
			int is_call = !strncmp(op, "CALL", 4) && (op[4] == 0 || op[4] == '.');
			int is_bra = !strncmp(op, "BRA", 3) && (op[3] == 0 || op[3] == '.');
			jumps = last->target >= 0 && last->target / 16 < (int64_t)n && (is_bra || !strncmp(op, "JMP", 3));
			/* BRA.DIV and BRA with a predicate operand may fall through */
			if (is_bra && (strstr(op, ".DIV") || strchr(last->operands, ',')))
				cond = 1;
			falls = cond || is_call;
		}
		int nsucc = 0;
		if (jumps)
			s[nsucc++] = (int32_t)k->insns[last->target / 16].block;
		if (falls && k->bfirst[b] + k->bcount[b] < n) {
			int32_t f = (int32_t)(b + 1);
			if (!(nsucc == 1 && s[0] == f))
				s[nsucc++] = f;
		}
	}
	return ST_OK;
}

st_status st_sass_decode_code(int sm, const char *name, const uint8_t *code, size_t size, const char *listing,
			      size_t listing_len, st_sass_kernel **out, st_error *err)
{
	*out = NULL;
	if (!name || !listing || (!code && size))
		return st_error_set(err, ST_EINVAL, "sass: missing kernel name, code or listing");
	if (size % 16)
		return st_error_set(err, ST_EFORMAT, "sass: kernel %s: code size %zu is not a multiple of 16", name, size);
	st_listing *l = NULL;
	st_status s = st_listing_parse(listing, listing_len, &l, err);
	if (s != ST_OK)
		return s;
	const struct st_lst_section *sec = st_listing_find(l, name);
	if (!sec) {
		st_listing_free(l);
		return st_error_set(err, ST_ENOTFOUND, "sass: the listing has no section .text.%s", name);
	}
	size_t n = size / 16;
	st_sass_kernel *k = calloc(1, sizeof *k);
	if (!k) {
		st_listing_free(l);
		return st_error_set(err, ST_ENOMEM, "sass: out of memory");
	}
	k->sm = sm;
	k->name = strdup(name);
	k->insns = calloc(n ? n : 1, sizeof *k->insns);
	st_buf strs = {0}, regs = {0};
	size_t *opcode_off = calloc(n ? n : 1, sizeof *opcode_off);
	size_t *label_off = calloc(n ? n : 1, sizeof *label_off);
	if (!k->name || !k->insns || !opcode_off || !label_off) {
		s = st_error_set(err, ST_ENOMEM, "sass: out of memory");
		goto done;
	}
	k->n = n;
	if (sec->n != n) {
		/* name the first missing or extra offset */
		size_t i = 0;
		while (i < sec->n && i < n && sec->insns[i].offset == i * 16)
			i++;
		if (i < sec->n && i < n)
			s = st_error_set(err, ST_EFORMAT, "sass: kernel %s: the listing has /*%04x*/ where /*%04zx*/ was expected",
					 name, sec->insns[i].offset, i * 16);
		else
			s = st_error_set(err, ST_EFORMAT, "sass: kernel %s: the listing has %zu instructions, the cubin %zu",
					 name, sec->n, n);
		goto done;
	}
	struct st_analysis a;
	for (size_t i = 0; i < n; i++) {
		const struct st_lst_insn *li = &sec->insns[i];
		st_sass_insn *in = &k->insns[i];
		if (li->offset != i * 16) {
			s = st_error_set(err, ST_EFORMAT, "sass: kernel %s: the listing has /*%04x*/ where /*%04zx*/ was expected",
					 name, li->offset, i * 16);
			goto done;
		}
		uint64_t lo = st_le64(code + 16 * i), hi = st_le64(code + 16 * i + 8);
		if (lo != li->lo || hi != li->hi) {
			s = st_error_set(err, ST_EFORMAT,
					 "sass: kernel %s: listing word at /*%04zx*/ (0x%016llx 0x%016llx, line %u) differs from the "
					 "cubin (0x%016llx 0x%016llx): listing and cubin do not match",
					 name, i * 16, (unsigned long long)li->lo, (unsigned long long)li->hi, li->line,
					 (unsigned long long)lo, (unsigned long long)hi);
			goto done;
		}
		if ((s = st_sass_analyze(sm, li->text, code + 16 * i, &a, err)) != ST_OK) {
			st_error_wrap(err, "sass: kernel %s at /*%04zx*/", name, i * 16);
			goto done;
		}
		in->offset = (uint32_t)(i * 16);
		in->index = (uint32_t)i;
		memcpy(in->word, code + 16 * i, 16);
		in->ctrl = st_ctrl_decode(in->word);
		in->cls = a.cls;
		in->space = a.space;
		in->flags = a.flags;
		in->guard = a.guard;
		in->guard_file = a.guard_file;
		in->guard_neg = a.guard_neg;
		in->lat_op = a.lat_op;
		in->lat_cond = a.lat_cond;
		in->ndefs = (uint8_t)a.ndefs;
		in->nuses = (uint8_t)a.nuses;
		in->target = -1;
		if (a.label) {
			in->target = label_offset(sec, size, a.label, a.label_len);
		}
		/* strings: opcode \0 operands \0 [label \0]; pointers fixed up below */
		opcode_off[i] = strs.len;
		const char *t = li->text;
		if ((s = st_buf_append(&strs, t + a.op_start, a.opcode_len)) != ST_OK ||
		    (s = st_buf_append(&strs, "", 1)) != ST_OK ||
		    (s = st_buf_append(&strs, t + a.operands, strlen(t + a.operands) + 1)) != ST_OK)
			goto oom;
		label_off[i] = (size_t)-1;
		if (li->label) {
			label_off[i] = strs.len;
			if ((s = st_buf_append(&strs, li->label, strlen(li->label) + 1)) != ST_OK)
				goto oom;
		}
		if ((s = st_buf_append(&regs, a.defs, a.ndefs * sizeof(st_sass_reg))) != ST_OK ||
		    (s = st_buf_append(&regs, a.uses, a.nuses * sizeof(st_sass_reg))) != ST_OK)
			goto oom;
	}
	k->strs = (char *)strs.data;
	k->regs = (st_sass_reg *)regs.data;
	strs.data = regs.data = NULL;
	size_t r = 0;
	for (size_t i = 0; i < n; i++) {
		st_sass_insn *in = &k->insns[i];
		in->opcode = k->strs + opcode_off[i];
		in->operands = in->opcode + strlen(in->opcode) + 1;
		in->label = label_off[i] == (size_t)-1 ? NULL : k->strs + label_off[i];
		in->defs = k->regs + r;
		in->uses = k->regs + r + in->ndefs;
		r += in->ndefs + in->nuses;
	}
	s = build_blocks(k, err);
	goto done;
oom:
	s = st_error_set(err, ST_ENOMEM, "sass: out of memory");
done:
	free(opcode_off);
	free(label_off);
	st_buf_free(&strs);
	st_buf_free(&regs);
	st_listing_free(l);
	if (s != ST_OK) {
		st_sass_free(k);
		return s;
	}
	*out = k;
	return ST_OK;
}

int st_sass_reg_str(char *buf, size_t n, unsigned file, unsigned index)
{
	static const char *const pre[] = {"R", "UR", "P", "UP", "B"};
	if (file >= ST_RF_COUNT)
		return snprintf(buf, n, "?%u", index);
	return snprintf(buf, n, "%s%u", pre[file], index);
}

const char *st_sass_class_str(unsigned cls)
{
	static const char *const names[] = {"alu", "varlat", "memory", "tensor", "control", "sync", "other"};
	return cls < sizeof names / sizeof names[0] ? names[cls] : "?";
}

const char *st_space_str(unsigned space)
{
	static const char *const names[] = {"", "global", "shared", "local", "const", "generic"};
	return space < sizeof names / sizeof names[0] ? names[space] : "?";
}
