/* Permuting a kernel's instruction slots.  The current image is always rebuilt from the
 * original bytes and each kernel's cumulative permutation, so that moving instructions and
 * moving them back gives the original file again, byte for byte. */
#include "cubin_internal.h"
#include "util/util.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

static st_status apply(uint8_t *img, const uint8_t *orig, const st_refs *r, const st_kernel_info *ki, unsigned sm,
		       const uint32_t *cum, uint32_t *newpos, const char *name, st_error *err)
{
	size_t n = ki->insn_count;
	for (size_t j = 0; j < n; j++) {
		newpos[cum[j]] = (uint32_t)j;
		memcpy(img + ki->file_offset + 16 * j, orig + ki->file_offset + 16 * (size_t)cum[j], 16);
	}
	for (size_t i = 0; i < r->n; i++) {
		const st_ref_item *it = &r->items[i];
		uint32_t t = it->pub.target;
		int64_t nt = it->ret ? 16 * ((int64_t)newpos[it->call_slot] + 1) : 16 * (int64_t)newpos[t / 16];
		uint8_t *word = it->pub.slot >= 0 && (size_t)it->pub.slot < n
					? img + ki->file_offset + 16 * (size_t)newpos[it->pub.slot]
					: NULL;
		int64_t pc_next = word ? (int64_t)(word - img - ki->file_offset) + 16 : 0;
		st_word w = word ? st_word_load(word) : (st_word){0, 0};
		switch (it->how) {
		case ST_P_LEPC:
			if (nt - pc_next < 0 || nt - pc_next > 127)
				return st_error_set(err, ST_EUNSUPPORTED,
						    "%s: .text.%s: LEPC now at 0x%llx cannot encode its target 0x%llx", name,
						    ki->name, (long long)pc_next - 16, (long long)nt);
			w.lo = (w.lo & ~(0xffull << 24)) | (uint64_t)(nt - pc_next) << 24;
			st_word_store(word, w);
			break;
		case ST_P_BRANCH:
		case ST_P_SELF: {
			if (it->how == ST_P_SELF)
				nt = 0;
			int64_t imm = (nt - pc_next) / 4;
			bool ok = st_branch_set_imm(&w, sm, it->bf, imm);
			if (!ok)
				return st_error_set(err, ST_EUNSUPPORTED, "%s: .text.%s: %s now at 0x%llx cannot reach 0x%llx",
						    name, ki->name, it->pub.what, (long long)pc_next - 16, (long long)nt);
			st_word_store(word, w);
			break;
		}
		case ST_P_MOVLIT:
			w.lo = (w.lo & 0xffffffffull) | (uint64_t)(uint32_t)nt << 32;
			st_word_store(word, w);
			break;
		case ST_P_U32:
			st_put_le32(img + it->file_off, (uint32_t)nt);
			break;
		case ST_P_ROFF:
			st_put_le64(img + it->file_off, (uint64_t)(16 * (int64_t)newpos[t / 16] + t % 16));
			break;
		case ST_P_RADDEND:
			st_put_le64(img + it->file_off + 16, (uint64_t)(nt - it->symval));
			break;
		case ST_P_SYMVAL:
			st_put_le64(img + it->file_off + 8, (uint64_t)nt);
			break;
		}
	}
	return ST_OK;
}

st_status st_cubin_permute(st_cubin *c, size_t k, const uint32_t *perm, size_t n, st_error *err)
{
	if (k >= c->v.nkernels)
		return st_error_set(err, ST_EINVAL, "%s: kernel index %zu out of range (%zu kernels)", c->name, k,
				    c->v.nkernels);
	const char *kn = c->v.kernels[k].name;
	size_t count = c->v.kernels[k].insn_count;
	if (n != count)
		return st_error_set(err, ST_EINVAL, "%s: .text.%s: permutation has %zu entries, the kernel has %zu slots",
				    c->name, kn, n, count);
	st_status rc = ST_OK;
	uint8_t *img = NULL;
	uint32_t *newpos = NULL;
	const uint32_t **all = NULL; /* each kernel's cumulative permutation, NULL: unmoved */
	st_cubin_view nv = {0};
	bool *seen = calloc(n ? n : 1, sizeof *seen);
	uint32_t *cum = malloc((n ? n : 1) * sizeof *cum);
	if (!seen || !cum) {
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto out;
	}
	bool identity = true;
	for (size_t j = 0; j < n; j++) {
		if (perm[j] >= n) {
			rc = st_error_set(err, ST_EINVAL, "%s: .text.%s: permutation entry %zu is %u, past the last slot %zu",
					  c->name, kn, j, perm[j], n - 1);
			goto out;
		}
		if (seen[perm[j]]) {
			rc = st_error_set(err, ST_EINVAL, "%s: .text.%s: permutation names slot %u twice", c->name, kn,
					  perm[j]);
			goto out;
		}
		seen[perm[j]] = true;
		cum[j] = c->cum && c->cum[k] ? c->cum[k][perm[j]] : perm[j];
		identity = identity && cum[j] == j;
	}
	if (!c->cum && !(c->cum = calloc(c->v.nkernels, sizeof *c->cum))) {
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto out;
	}
	if (!c->ov.sections) {
		unsigned sm, osabi;
		uint32_t eflags;
		if ((rc = st_cubin_parse(c->name, c->orig, c->size, &sm, &osabi, &eflags, &c->ov, err)))
			goto out;
	}
	if (!identity) {
		const st_refs *r = st_refs_get(c->orig, &c->ov, c->sm, k);
		if (r->status) {
			rc = st_error_set(err, r->status, "%s: .text.%s: %s", c->name, kn, r->msg);
			goto out;
		}
		for (size_t j = 0; j < n; j++) {
			if (r->func_start[j] != r->func_start[cum[j]]) {
				rc = st_error_set(err, ST_EUNSUPPORTED,
						  "%s: .text.%s: the permutation moves the instruction at 0x%x out of its function",
						  c->name, kn, 16 * cum[j]);
				goto out;
			}
			if (r->func_start[j] == j && cum[j] != j) {
				rc = st_error_set(err, ST_EUNSUPPORTED,
						  "%s: .text.%s: the permutation moves the entry instruction of a function (0x%zx)",
						  c->name, kn, 16 * j);
				goto out;
			}
		}
	}
	img = malloc(c->size);
	size_t maxn = 1;
	for (size_t kk = 0; kk < c->ov.nkernels; kk++)
		if (c->ov.kernels[kk].insn_count > maxn)
			maxn = c->ov.kernels[kk].insn_count;
	newpos = malloc(maxn * sizeof *newpos);
	all = calloc(c->ov.nkernels ? c->ov.nkernels : 1, sizeof *all);
	if (!img || !newpos || !all) {
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(img, c->orig, c->size);
	bool moved = false;
	for (size_t kk = 0; kk < c->ov.nkernels; kk++) {
		const uint32_t *cm = kk == k ? (identity ? NULL : cum) : c->cum[kk];
		all[kk] = cm;
		if (!cm)
			continue;
		moved = true;
		const st_refs *r = st_refs_get(c->orig, &c->ov, c->sm, kk);
		if ((rc = apply(img, c->orig, r, &c->ov.kernels[kk], c->sm, cm, newpos, c->name, err)))
			goto out;
	}
	if (moved)
		st_lines_rewrite(img, c->orig, &c->ov, all);
	unsigned sm, osabi;
	uint32_t eflags;
	if ((rc = st_cubin_parse(c->name, img, c->size, &sm, &osabi, &eflags, &nv, err))) {
		st_error_wrap(err, "after moving .text.%s", kn);
		goto out;
	}
	st_cubin_view_free(&c->v);
	c->v = nv;
	free(c->image);
	c->image = img;
	img = NULL;
	free(c->cum[k]);
	c->cum[k] = identity ? NULL : cum;
	if (!identity)
		cum = NULL;
out:
	free(seen);
	free(cum);
	free(img);
	free(newpos);
	free(all);
	return rc;
}
