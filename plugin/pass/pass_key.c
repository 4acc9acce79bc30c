/* The schedule-cache key of one run()/run2() call, in one place: pass.c keys its lookups with it,
 * and capture mode (capture.c: the Triton adapter's capture folders, `sasstune tune --captures`)
 * names and re-keys captures with it, so a capture is tuned under exactly the key a later compile
 * looks up, variant fields included. */
#include "pass_internal.h"

#include <stddef.h>

void st_pass__record(const st_plugin_kernel2 *k, st_plugin_kernel2 *out)
{
	*out = (st_plugin_kernel2){.size = sizeof *out};
	if (!k)
		return;
	out->v1 = k->v1;
#define HAS(f) (k->size >= offsetof(st_plugin_kernel2, f) + sizeof k->f)
	out->ptx = HAS(ptx) ? k->ptx : NULL;
	out->ptxas_path = HAS(ptxas_path) ? k->ptxas_path : NULL;
	out->ptxas_options = HAS(ptxas_options) ? k->ptxas_options : NULL;
#undef HAS
}

st_status st_pass__key(const st_pass_settings *set, const st_plugin_kernel2 *k, const char *sha,
		       st_cache_key_fields *fields, st_pass_variants_key *vk, char key[65], st_error *err)
{
	*fields = (st_cache_key_fields){.cubin_sha256 = sha,
					.kernel = k->v1.kernel,
					.gpu_name = set->gpu_name,
					.compute_capability = set->compute_capability,
					.driver_version = set->driver_version,
					.ptxas_version = k->v1.ptxas_version};
	st_pass__variants_key(set, k, vk, fields); /* adds variants + ptxas_options when they run */
	return st_cache_key(fields, key, err);
}
