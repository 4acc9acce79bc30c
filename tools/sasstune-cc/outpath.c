/* The -o check of sasstune-cc, before any work: not a folder, not one of the inputs (same
 * inode: `sasstune-cc X.ll -o X.ll` must not replace its own source), in a folder that exists. */
#include "cc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cc_check_output(const char *out, const char *const *inputs, size_t n)
{
	if (!strcmp(out, "-"))
		return CC_EXIT_OK; /* stdout */
	struct stat st;
	if (stat(out, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			cc_msg("-o %s: is a folder (name the output file)", out);
			return CC_EXIT_USAGE;
		}
		for (size_t i = 0; i < n; i++) {
			struct stat in;
			if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
				cc_msg("-o %s: is the input %s (write the output to another file)", out, inputs[i]);
				return CC_EXIT_USAGE;
			}
		}
	}
	const char *slash = strrchr(out, '/');
	char *dir = slash ? strndup(out, slash == out ? 1 : (size_t)(slash - out)) : strdup(".");
	struct stat ds;
	int rc = CC_EXIT_OK;
	if (!dir) {
		cc_msg("out of memory");
		rc = CC_EXIT_FAIL;
	} else if (stat(dir, &ds) != 0) {
		cc_msg("-o %s: folder %s: %s", out, dir, strerror(errno));
		rc = CC_EXIT_FAIL;
	} else if (!S_ISDIR(ds.st_mode)) {
		cc_msg("-o %s: %s is not a folder", out, dir);
		rc = CC_EXIT_FAIL;
	} else if (access(dir, W_OK | X_OK) != 0) {
		cc_msg("-o %s: cannot write in folder %s: %s", out, dir, strerror(errno));
		rc = CC_EXIT_FAIL;
	}
	free(dir);
	return rc;
}
