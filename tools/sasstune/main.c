/* sasstune: the command-line front end.  Each subcommand lives in cmd_*.c. */
#include "cli.h"
#include "sasstune/version.h"

#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	const char *summary;
	int (*fn)(int, char **);
};

#define ST_TABLE_ENTRY(name, summary) {#name, summary, st_cmd_##name},
static const struct command commands[] = {ST_COMMANDS(ST_TABLE_ENTRY)};
#undef ST_TABLE_ENTRY

static void usage(FILE *out)
{
	fprintf(out, "usage: sasstune COMMAND [ARGS...]\n"
		     "       sasstune COMMAND --help\n"
		     "       sasstune --version\n\n"
		     "Reorders the SASS instructions of CUDA cubins to make kernels faster, proving each\n"
		     "candidate correct.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\noptions:\n"
		     "  -h, --help\n"
		     "  --version\n\n"
		     "exit status: the command's (0 ok, 1 failure, 2 usage error)\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return ST_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return ST_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("sasstune %s\n", ST_VERSION_STRING);
		return ST_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "sasstune: unknown command '%s' (see sasstune --help)\n", argv[1]);
	return ST_EXIT_USAGE;
}
