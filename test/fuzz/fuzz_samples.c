/* Fuzz the samples-file parser (outside input: `profile --samples-in`, `tune --aim`): a parse
 * either fails with one line and nothing left behind, or round-trips through the writer. */
#include "sasstune/profile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_profile *p = NULL, *q = NULL;
	st_error err = {0};
	st_status rc = st_profile_parse((const char *)data, size, &p, &err);
	if (rc != ST_OK) {
		if (p || !err.msg[0] || strchr(err.msg, '\n'))
			abort(); /* an error has one line and leaves nothing behind */
		return 0;
	}
	char *a = st_profile_to_json(p);
	if (!a || st_profile_parse(a, strlen(a), &q, &err) != ST_OK)
		abort();
	char *b = st_profile_to_json(q);
	if (!b || strcmp(a, b))
		abort();
	for (size_t r = 0; r < st_profile_reason_count(p); r++)
		if (st_profile_reason_find(q, st_profile_reason(p, r)) < 0)
			abort();
	free(a);
	free(b);
	st_profile_free(p);
	st_profile_free(q);
	return 0;
}
