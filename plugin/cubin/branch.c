/* Re-targeting a PC-relative branch (the sched module's pipe family: a loop's back branch must land on
 * the block's new first instruction when the old one moved to the block's end).  The new target is
 * written into the original bytes the image is rebuilt from, the reference analysis is redone, and
 * the image is rebuilt, so the branch names its new instruction through later permutations. */
#include "cubin_internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static const st_ref_item *branch_ref(const st_refs *r, size_t slot)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->items[i].how == ST_P_BRANCH && r->items[i].pub.kind == ST_REF_BRANCH &&
		    r->items[i].pub.slot == (long)slot)
			return &r->items[i];
	return NULL;
}

static st_status rebuild(st_cubin *c, size_t k, st_error *err)
{
	size_t n = c->v.kernels[k].insn_count;
	uint32_t *id = malloc((n ? n : 1) * sizeof *id);
	if (!id)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	for (size_t j = 0; j < n; j++)
		id[j] = (uint32_t)j;
	st_status rc = st_cubin_permute(c, k, id, n, err); /* cum stays; the image is redone from orig */
	free(id);
	return rc;
}

st_status st_cubin_set_branch(st_cubin *c, size_t k, size_t slot, size_t target, st_error *err)
{
	const st_kernel_info *ki;
	uint8_t *cur, *orig;
	st_status rc = cubin_slot_words(c, k, slot, &ki, &cur, &orig, err);
	if (rc)
		return rc;
	if (target >= ki->insn_count)
		return st_error_set(err, ST_EINVAL, "%s: .text.%s: target slot %zu out of range", c->name, ki->name, target);
	const st_refs *r = st_refs_get(c->image, &c->v, c->sm, k);
	const st_ref_item *it = r->status ? NULL : branch_ref(r, slot);
	if (!it)
		return st_error_set(err, ST_EINVAL, "%s: .text.%s: no PC-relative branch at 0x%zx", c->name, ki->name,
				    16 * slot);
	const uint32_t *cum = c->cum && c->cum[k] ? c->cum[k] : NULL;
	size_t ob = cum ? cum[slot] : slot, ot = cum ? cum[target] : target;
	st_word w = st_word_load(orig);
	if (!st_branch_set_imm(&w, c->sm, it->bf, (16 * (int64_t)ot - 16 * ((int64_t)ob + 1)) / 4))
		return st_error_set(err, ST_EUNSUPPORTED, "%s: .text.%s: the branch at 0x%zx cannot reach 0x%zx", c->name,
				    ki->name, 16 * slot, 16 * target);
	st_word_store(orig, w);
	if (c->ov.sections)
		st_refs_free(&c->ov.refs[k]);
	st_refs_free(&c->v.refs[k]);
	if (cum)
		return rebuild(c, k, err);
	st_word_store(cur, w); /* unmoved: the image holds the original layout of this kernel */
	return ST_OK;
}
