/* Fuzz the pass's options_json parser (per-call settings handed in by any
 * flow): never crash, and a refusal names the problem. */
#include "pass/pass_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	st_pass_settings s;
	st_error err;
	if (st_pass__settings_load(&s, text, &err) == ST_OK)
		st_pass__settings_free(&s);
	else if (err.msg[0] == '\0')
		__builtin_trap();
	free(text);
	return 0;
}
