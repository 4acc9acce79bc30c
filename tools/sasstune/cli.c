/* The shared pieces of the sasstune command declared in cli.h.
 *
 * --help style, for every command (sasstune, each subcommand, sasstune-cc; lit/help-style.test
 * checks it):
 *   - the first line is "usage: sasstune CMD ...", continuation lines indented under it;
 *   - then one or more paragraphs of plain sentences;
 *   - section headings are lowercase, alone on their line, ending in ':' ("options:",
 *     "commands:", "environment:", "kernels:", ...); entries under them are indented two
 *     spaces, their explanations aligned;
 *   - "options:" lists "  -h, --help" (last);
 *   - environment variables go under "environment:" as "  NAME  what it does";
 *   - the text ends with one "exit status: 0 ..., 1 ..., 2 usage error" line;
 *   - no line is longer than 100 columns. */
#include "cli.h"
#include "sasstune/runtime.h"
#include "sasstune/version.h"
#include "util/util.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "sasstune %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int st_cli_fail(const char *cmd, const st_error *err)
{
	st_cli_error(cmd, "%s", err->msg[0] ? err->msg : st_status_str(err->code));
	return ST_EXIT_FAIL;
}

void st_cli_runtime_env(st_runtime_options *o)
{
	if (st_env_on("SASSTUNE_CHECK_REFERENCE"))
		o->check_reference = true;
}

int st_cli_not_implemented(const char *cmd)
{
	st_cli_error(cmd, "not implemented yet in sasstune %s", ST_VERSION_STRING);
	return ST_EXIT_FAIL;
}

int st_cli_no_kernel(const char *cmd, const st_cubin *c, const char *path, const char *kernel)
{
	if (!kernel || st_cubin_find_kernel(c, kernel) != ST_CUBIN_NONE)
		return 0;
	st_cli_error(cmd, "%s: no kernel named '%s'", path, kernel);
	return 1;
}

st_status st_cli_sched_new(const st_cubin *c, const char *name, const char *listing, unsigned flags,
			   st_sass_kernel **sk, st_sched **s, st_error *err)
{
	st_sass_opts o = {0};
	o.listing = listing;
	*sk = NULL;
	*s = NULL;
	st_status rc = st_sass_decode(c, name, &o, sk, err);
	if (!rc)
		rc = st_sched_new(*sk, c, flags, s, err);
	if (rc) {
		st_sass_free(*sk);
		*sk = NULL;
	}
	return rc;
}

int st_cli_print_json(const cJSON *j, int pretty)
{
	char *t = !j ? NULL : pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
	if (!t)
		return 1;
	puts(t);
	free(t);
	return 0;
}

static const st_cli_opt *find_opt(const st_cli_opt *o, const char *name)
{
	for (; o && o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

int st_cli_parse(int argc, char **argv, const st_cli_args *a)
{
	const char *cmd = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const st_cli_opt *o = find_opt(a->opts, arg);
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			a->usage(stdout);
			return ST_EXIT_OK;
		} else if (o && o->kind == ST_CLI_FLAG) {
			*(int *)o->dst = 1;
		} else if (o && o->kind == ST_CLI_BIT) {
			*(unsigned *)o->dst |= o->bit;
		} else if (o) {
			if (i + 1 >= argc) {
				if (a->terse)
					st_cli_error(cmd, "%s needs an argument", arg);
				else
					st_cli_error(cmd, "%s needs an argument (see sasstune %s --help)", arg, cmd);
				return ST_EXIT_USAGE;
			}
			const char *v = argv[++i];
			if (o->kind == ST_CLI_STR)
				*(const char **)o->dst = v;
			else if (o->fn(cmd, v, o->dst))
				return ST_EXIT_USAGE;
		} else if (arg[0] == '-' && arg[1]) {
			if (a->terse)
				st_cli_error(cmd, "unknown option %s (see --help)", arg);
			else
				st_cli_error(cmd, "unknown option '%s' (see sasstune %s --help)", arg, cmd);
			return ST_EXIT_USAGE;
		} else if (a->arg) {
			if (a->arg(cmd, arg, a->arg_dst))
				return ST_EXIT_USAGE;
		} else if (*a->file) {
			if (a->terse)
				st_cli_error(cmd, "more than one CUBIN given (see --help)");
			else
				st_cli_error(cmd, "more than one CUBIN given ('%s' and '%s')", *a->file, arg);
			return ST_EXIT_USAGE;
		} else {
			*a->file = arg;
		}
	}
	for (const st_cli_need *n = a->need; n && n->what; n++)
		if (!*n->value) {
			st_cli_error(cmd, "%s is required (see sasstune %s --help)", n->what, cmd);
			return ST_EXIT_USAGE;
		}
	return st_cli_check_outputs(cmd, a->opts, a->file ? *a->file : NULL); /* cli_out.c */
}
