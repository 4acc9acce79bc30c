/* Code references of a kernel and the permutation that moves them (placeholder). */
#include "cubin_internal.h"

#include <stdlib.h>

void st_refs_free(st_refs *r)
{
	free(r->items);
	r->items = NULL;
	r->n = 0;
	r->done = false;
}

size_t st_cubin_ref_count(const st_cubin *c, size_t k) { (void)c; (void)k; return 0; }
const st_code_ref *st_cubin_ref(const st_cubin *c, size_t k, size_t i) { (void)c; (void)k; (void)i; return NULL; }

st_status st_cubin_check_rewritable(const st_cubin *c, size_t k, st_error *err)
{
	(void)c; (void)k;
	return st_error_set(err, ST_EUNSUPPORTED, "rewriting is not implemented yet");
}

st_status st_cubin_permute(st_cubin *c, size_t k, const uint32_t *perm, size_t n, st_error *err)
{
	(void)c; (void)k; (void)perm; (void)n;
	return st_error_set(err, ST_EUNSUPPORTED, "rewriting is not implemented yet");
}
