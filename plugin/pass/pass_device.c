/* The pass's "device" setting: the CUDA ordinal the runtime tunes on.  Outside input
 * (options_json); only plain decimal 0..1023 is taken. */
#include "pass_internal.h"

#include <string.h>

st_status st_pass__set_device(int *device, const char *v, const char *from, st_error *err)
{
	size_t n = strlen(v);
	int d = 0;
	if (n == 0 || n > 4)
		goto bad;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			goto bad;
		d = d * 10 + (v[i] - '0');
	}
	if (d > 1023)
		goto bad;
	*device = d;
	return ST_OK;
bad:
	return st_error_set(err, ST_EINVAL, "%s: '%.40s' is not a CUDA device ordinal (0 to 1023)", from, v);
}
