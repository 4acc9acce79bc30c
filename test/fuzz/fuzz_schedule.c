/* Fuzz target for schedule files: parse, expand every kernel to a permutation, print, re-parse (the
 * "pipe" rotations read back entry for entry). */
#include "sasstune/schedule.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_schedule *s = NULL;
	st_error err = {0};
	if (st_schedule_parse((const char *)data, size, "fuzz", &s, &err)) {
		if (!err.msg[0] || strchr(err.msg, '\n'))
			abort();
		return 0;
	}
	uint32_t perm[64];
	for (size_t i = 0; i < st_schedule_kernel_count(s); i++)
		for (size_t n = 0; n <= 64; n += 16)
			(void)st_schedule_permutation(s, i, n, perm, &err);
	char *text = st_schedule_to_json(s);
	if (text) {
		st_schedule *t = NULL;
		if (st_schedule_parse(text, strlen(text), "again", &t, &err) != ST_OK)
			abort(); /* what we print we can read */
		if (st_schedule_kernel_count(t) != st_schedule_kernel_count(s))
			abort();
		for (size_t i = 0; i < st_schedule_kernel_count(s); i++) { /* rotations read back the same */
			if (st_schedule_pipe_count(t, i) != st_schedule_pipe_count(s, i))
				abort();
			for (size_t j = 0; j < st_schedule_pipe_count(s, i); j++) {
				uint32_t h1, h2, l1[8], l2[8];
				size_t n1, n2;
				if (st_schedule_pipe_at(s, i, j, &h1, l1, &n1) || st_schedule_pipe_at(t, i, j, &h2, l2, &n2) ||
				    h1 != h2 || n1 != n2 || n1 < 1 || n1 > 8 || h1 % 16 || memcmp(l1, l2, n1 * sizeof *l1))
					abort();
			}
		}
		st_schedule_free(t);
	}
	free(text);
	st_schedule_free(s);
	return 0;
}
