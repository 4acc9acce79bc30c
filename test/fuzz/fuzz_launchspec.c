/* Fuzz the launch-spec parser (outside input: launch.json files). */
#include "sasstune/runtime.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_launch *l = NULL;
	st_error err = {0};
	/* relative "file" paths resolve under a folder that does not exist */
	st_status rc = st_launch_parse((const char *)data, size, "/nonexistent-fuzz-dir", &l, &err);
	if (rc == ST_OK) {
		unsigned grid[3], block[3], shared;
		st_launch_dims(l, grid, block, &shared);
		if (!st_launch_kernel(l) || grid[0] == 0 || block[0] == 0)
			abort();
		st_launch_free(l);
	} else if (l || !err.msg[0] || strchr(err.msg, '\n')) {
		abort(); /* an error has one line and leaves nothing behind */
	}
	return 0;
}
