/* The shared pieces of the sasstune command declared in cli.h. */
#include "cli.h"
#include "sasstune/version.h"

#include <stdarg.h>
#include <stdio.h>
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

int st_cli_not_implemented(const char *cmd)
{
	st_cli_error(cmd, "not implemented yet in sasstune %s", ST_VERSION_STRING);
	return ST_EXIT_FAIL;
}
