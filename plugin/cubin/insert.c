/* Inserting instruction slots through the padding (docs/cubin.md "Inserting").  A kernel's code
 * ends with its last EXIT or a self-branch (`BRA` to itself) and then NOP slots that never run.
 * st_cubin_insert takes the last such NOP, moves it to the requested slot with st_cubin_permute
 * (which patches every reference: each keeps naming the instruction it named) and writes the
 * new word into it, in the image and in the original bytes the image is rebuilt from (like
 * st_cubin_set_ctrl), so the inserted word follows its slot through later permutations.
 * Invariants:
 *  - a padding slot lies after the last unconditional EXIT or self-BRA, is an unconditional NOP,
 *    holds no reference and is named by none (no branch, attribute, relocation or symbol
 *    value points at it or past the instruction before it), and shares a function with it;
 *  - an inserted word names no code offset: branch-unit opcodes are refused, and so is a MOV
 *    immediate in a kernel with return-address or LEPC literals (the reference analysis, cached
 *    from the first permutation, would not patch it);
 *  - all or nothing: a refused insertion leaves the cubin as it was. */
#include "cubin_internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

#define OP_NOP 0x918
#define OP_BRA 0x947
#define OP_EXIT 0x94d
#define OP_MOV 0x802

static bool unconditional(st_word w) { return ((w.lo >> 12) & 0xf) == 7; } /* guard PT */

/* First padding slot of kernel k in the current image (insn_count when there is none). */
static size_t pad_start(const st_cubin *c, size_t k, const st_refs *r)
{
	const st_kernel_info *ki = &c->v.kernels[k];
	size_t n = ki->insn_count, p = n;
	const uint8_t *code = c->image + ki->file_offset;
	while (p > 0) {
		st_word w = st_word_load(code + 16 * (p - 1));
		if (st_word_opcode(w) != OP_NOP || !unconditional(w))
			break;
		p--;
	}
	if (p == 0 || p == n)
		return n;
	st_word end = st_word_load(code + 16 * (p - 1));
	unsigned op = st_word_opcode(end);
	bool self = op == OP_BRA && st_branch_imm(end, c->sm, ST_BF_WIDE) == -4;
	if (!unconditional(end) || (op != OP_EXIT && !self))
		return n;
	for (size_t i = 0; i < r->n; i++) { /* nothing names the padding or holds a reference in it */
		const st_code_ref *f = &r->items[i].pub;
		size_t t = f->target / 16;
		if (f->kind != ST_REF_SELF && t >= p && t < n)
			p = t + 1;
		if (f->slot >= 0 && (size_t)f->slot >= p)
			p = (size_t)f->slot + 1;
	}
	while (p < n && r->func_start[p] != r->func_start[p - 1])
		p++; /* a function starting inside the padding (never seen): stay after it */
	return p;
}

size_t st_cubin_insertable(const st_cubin *c, size_t k)
{
	if (k >= c->v.nkernels)
		return 0;
	const st_refs *r = st_refs_get(c->image, (st_cubin_view *)&c->v, c->sm, k);
	if (r->status)
		return 0;
	return c->v.kernels[k].insn_count - pad_start(c, k, r);
}

static bool is_inserted(const st_cubin *c, size_t k, size_t slot)
{
	size_t o = c->cum && c->cum[k] ? c->cum[k][slot] : slot;
	return c->ins && c->ins[k] && c->ins[k][o];
}

/* The word may go into an inserted slot: it names no code offset. */
static st_status word_ok(const st_cubin *c, size_t k, const uint8_t word[16], st_error *err)
{
	st_word w = st_word_load(word);
	unsigned op = st_word_opcode(w), low = op & 0xfff;
	const char *kn = c->v.kernels[k].name;
	if ((low >= 0x940 && low <= 0x95f) || (low >= 0x340 && low <= 0x35f))
		return st_error_set(err, ST_EUNSUPPORTED,
				    "%s: .text.%s: the inserted word has branch-unit opcode 0x%x (only words naming no code "
				    "offset may be inserted)",
				    c->name, kn, op);
	if (op == OP_MOV) {
		const st_refs *r = st_refs_get(c->image, (st_cubin_view *)&c->v, c->sm, k);
		for (size_t i = 0; i < r->n; i++)
			if (r->items[i].pub.kind == ST_REF_RETURN || r->items[i].pub.kind == ST_REF_LITERAL)
				return st_error_set(err, ST_EUNSUPPORTED,
						    "%s: .text.%s: the kernel holds code-offset literals; an inserted MOV "
						    "immediate could be read as one",
						    c->name, kn);
	}
	return ST_OK;
}

st_status st_cubin_set_word(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err)
{
	const st_kernel_info *ki;
	uint8_t *cur, *orig;
	st_status rc = cubin_slot_words(c, k, slot, &ki, &cur, &orig, err);
	if (rc)
		return rc;
	if (!is_inserted(c, k, slot))
		return st_error_set(err, ST_EINVAL, "%s: .text.%s: slot 0x%zx was not inserted (only inserted slots take a new word)",
				    c->name, ki->name, 16 * slot);
	if ((rc = word_ok(c, k, word, err)))
		return rc;
	memcpy(cur, word, 16);
	memcpy(orig, word, 16);
	return ST_OK;
}

/* The default inserted word: NOP, stall 1, no scoreboard, no wait, no reuse. */
static void default_nop(uint8_t word[16])
{
	st_put_le64(word, OP_NOP | 7u << 12);
	st_put_le64(word + 8, (uint64_t)1 << 41 | (uint64_t)7 << 46 | (uint64_t)7 << 49);
}

static st_status insert_checks(st_cubin *c, size_t k, size_t slot, size_t *pad, st_error *err)
{
	if (k >= c->v.nkernels)
		return st_error_set(err, ST_EINVAL, "%s: kernel index %zu out of range (%zu kernels)", c->name, k,
				    c->v.nkernels);
	const st_kernel_info *ki = &c->v.kernels[k];
	const st_refs *r = st_refs_get(c->image, &c->v, c->sm, k);
	if (r->status)
		return st_error_set(err, r->status, "%s: .text.%s: %s", c->name, ki->name, r->msg);
	size_t p = pad_start(c, k, r);
	if (p >= ki->insn_count)
		return st_error_set(err, ST_EUNSUPPORTED,
				    "%s: .text.%s: no padding slot left to insert into (the code does not end with "
				    "an EXIT or self-branch followed by unreferenced NOPs)",
				    c->name, ki->name);
	if (slot >= p)
		return st_error_set(err, ST_EINVAL,
				    "%s: .text.%s: slot %zu (0x%zx) is not before the padding (the code ends at slot %zu)",
				    c->name, ki->name, slot, 16 * slot, p - 1);
	if (r->func_start[slot] != r->func_start[ki->insn_count - 1])
		return st_error_set(err, ST_EUNSUPPORTED,
				    "%s: .text.%s: slot 0x%zx is in another function than the padding", c->name, ki->name,
				    16 * slot);
	if (slot == 0 || r->func_start[slot] == slot)
		return st_error_set(err, ST_EUNSUPPORTED,
				    "%s: .text.%s: slot 0x%zx is a function's entry (nothing may go before it)", c->name,
				    ki->name, 16 * slot);
	*pad = ki->insn_count - 1;
	return ST_OK;
}

st_status st_cubin_insert(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err)
{
	uint8_t nop[16];
	size_t pad = 0;
	st_status rc = insert_checks(c, k, slot, &pad, err);
	if (rc)
		return rc;
	if (!word) {
		default_nop(nop);
		word = nop;
	}
	if ((rc = word_ok(c, k, word, err)))
		return rc;
	size_t n = c->v.kernels[k].insn_count;
	if (!c->ins && !(c->ins = calloc(c->v.nkernels, sizeof *c->ins)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	if (!c->ins[k] && !(c->ins[k] = calloc(n, 1)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	uint32_t *perm = malloc(n * sizeof *perm);
	if (!perm)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	for (size_t j = 0; j < n; j++) /* slots slot..pad-1 move down by one, the NOP goes to slot */
		perm[j] = (uint32_t)(j < slot || j > pad ? j : j == slot ? pad : j - 1);
	rc = st_cubin_permute(c, k, perm, n, err);
	free(perm);
	if (rc)
		return rc;
	const st_kernel_info *ki;
	uint8_t *cur, *orig;
	if ((rc = cubin_slot_words(c, k, slot, &ki, &cur, &orig, err)))
		return rc; /* cannot happen: slot was checked */
	c->ins[k][(orig - c->orig - ki->file_offset) / 16] = 1;
	memcpy(cur, word, 16);
	memcpy(orig, word, 16);
	return ST_OK;
}
