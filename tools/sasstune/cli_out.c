/* Checking an output path before any work: every command's -o (and --schedule-out) must name a
 * file in an existing, writable folder, not a folder, and not one of the command's inputs (same
 * device and inode), so that a long search never ends in "cannot write" and no command writes
 * over what it reads. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int st_cli_check_output(const char *cmd, const char *opt, const char *out, const char *const *inputs, size_t n)
{
	if (!*out) {
		st_cli_error(cmd, "%s: empty path (name the output file)", opt);
		return ST_EXIT_USAGE;
	}
	struct stat st;
	bool exists = stat(out, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		st_cli_error(cmd, "%s %s: is a folder (name the output file, e.g. %s/out)", opt, out, out);
		return ST_EXIT_USAGE;
	}
	for (size_t i = 0; exists && i < n; i++) {
		struct stat in;
		if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
			st_cli_error(cmd, "%s %s: is the input %s (write the output to another file)", opt, out, inputs[i]);
			return ST_EXIT_USAGE;
		}
	}
	const char *slash = strrchr(out, '/');
	char *dir = slash ? strndup(out, slash == out ? 1 : (size_t)(slash - out)) : strdup(".");
	if (!dir) {
		st_cli_error(cmd, "out of memory");
		return ST_EXIT_FAIL;
	}
	struct stat ds;
	int code = -1;
	if (stat(dir, &ds) != 0) {
		st_cli_error(cmd, "%s %s: folder %s: %s", opt, out, dir, strerror(errno));
		code = ST_EXIT_FAIL;
	} else if (!S_ISDIR(ds.st_mode)) {
		st_cli_error(cmd, "%s %s: %s is not a folder", opt, out, dir);
		code = ST_EXIT_FAIL;
	} else if (access(dir, W_OK | X_OK) != 0) {
		st_cli_error(cmd, "%s %s: cannot write in folder %s: %s", opt, out, dir, strerror(errno));
		code = ST_EXIT_FAIL;
	}
	free(dir);
	return code;
}

static bool is_output(const char *name) { return !strcmp(name, "-o") || !strcmp(name, "--schedule-out"); }

int st_cli_check_outputs(const char *cmd, const st_cli_opt *opts, const char *file)
{
	const char *inputs[32];
	size_t n = 0;
	if (file)
		inputs[n++] = file;
	for (const st_cli_opt *o = opts; o && o->name && n < 32; o++)
		if (o->kind == ST_CLI_STR && !is_output(o->name) && *(const char **)o->dst)
			inputs[n++] = *(const char **)o->dst;
	for (const st_cli_opt *o = opts; o && o->name; o++) {
		const char *v = o->kind == ST_CLI_STR && is_output(o->name) ? *(const char **)o->dst : NULL;
		int code = v ? st_cli_check_output(cmd, o->name, v, inputs, n) : -1;
		if (code >= 0)
			return code;
	}
	return -1;
}
