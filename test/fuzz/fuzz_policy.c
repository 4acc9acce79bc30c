/* Fuzz the policy file parser: any input is either rejected with a message or
 * loads into a policy that writes back and reloads to the same text. */
#include "sasstune/search.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_policy *p = NULL, *q = NULL;
	st_error err;
	st_error_clear(&err);
	if (st_policy_from_json((const char *)data, size, &p, &err) != ST_OK) {
		if (p || !err.msg[0])
			__builtin_trap();   /* a failure leaves nothing behind and says why */
		return 0;
	}
	char *a = NULL, *b = NULL;
	if (st_policy_to_json(p, &a, &err) != ST_OK || st_policy_from_json(a, strlen(a), &q, &err) != ST_OK ||
	    st_policy_to_json(q, &b, &err) != ST_OK || strcmp(a, b) != 0)
		__builtin_trap();
	free(a);
	free(b);
	st_policy_free(p);
	st_policy_free(q);
	return 0;
}
