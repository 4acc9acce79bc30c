/* st_sass_decode: a kernel of a cubin, with its listing from a file or from nvdisasm. */
#include "sass_internal.h"
#include "sasstune/cubin.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

st_status st_sass_listing(const st_cubin *cubin, const st_sass_opts *opts, const char *flag, char **text,
			  size_t *len, st_error *err)
{
	*text = NULL;
	*len = 0;
	if (opts && opts->listing) {
		uint8_t *data = NULL;
		st_status s = st_read_file(opts->listing, &data, len, err);
		*text = (char *)data;
		return s;
	}
	char *tool = NULL;
	st_status s = st_nvdisasm_find(opts ? opts->nvdisasm : NULL, opts ? opts->ptxas_dir : NULL, &tool, err);
	if (s != ST_OK)
		return s;
	size_t isize = 0;
	const uint8_t *image = st_cubin_data(cubin, &isize);
	const char *args[] = {"-hex", "-c", flag, NULL};
	s = st_nvdisasm_run(tool, args, image, isize, opts ? opts->timeout_ms : 0, text, len, err);
	free(tool);
	return s;
}

st_status st_sass_decode(const st_cubin *cubin, const char *name, const st_sass_opts *opts, st_sass_kernel **out,
			 st_error *err)
{
	*out = NULL;
	if (!cubin || !name)
		return st_error_set(err, ST_EINVAL, "sass: no cubin or kernel name");
	size_t k = st_cubin_find_kernel(cubin, name);
	if (k == ST_CUBIN_NONE)
		return st_error_set(err, ST_ENOTFOUND, "sass: %s has no kernel %s", st_cubin_name(cubin), name);
	size_t size = 0;
	const uint8_t *code = st_cubin_code(cubin, k, &size);
	char *text = NULL;
	size_t len = 0;
	st_status s = st_sass_listing(cubin, opts, NULL, &text, &len, err);
	if (s != ST_OK)
		return s;
	s = st_sass_decode_code((int)st_cubin_sm(cubin), name, code, size, text, len, out, err);
	if (s != ST_OK && opts && opts->listing)
		st_error_wrap(err, "%s", opts->listing);
	free(text);
	return s;
}
