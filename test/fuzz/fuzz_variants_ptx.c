/* Fuzz the variants stage's PTX readers (the .reqntid/.maxntid of an entry, whether the PTX
 * has the entry): input "KERNEL\nPTX...", the PTX not NUL-terminated.  They must read only
 * inside the buffer (ASan) and agree: threads are only found for an entry the PTX has. */
#include "variants/variants_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	if (!nl || nl == data || (size_t)(nl - data) > 200)
		return 0;
	char kernel[256];
	memcpy(kernel, data, (size_t)(nl - data));
	kernel[nl - data] = 0;
	if (strlen(kernel) != (size_t)(nl - data))
		return 0; /* a NUL in the name */
	size_t len = size - (size_t)(nl + 1 - data);
	char *ptx = malloc(len ? len : 1); /* exactly len bytes: a read past the end is caught */
	if (!ptx)
		return 0;
	memcpy(ptx, nl + 1, len);
	unsigned t = st_vr_ptx_threads(ptx, len, kernel);
	if (t && !st_vr_ptx_has_entry(ptx, len, kernel))
		__builtin_trap();
	free(ptx);
	return 0;
}
