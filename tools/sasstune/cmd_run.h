/* Shared by the GPU commands run, compare and noise (defined in cmd_run.c). */
#ifndef ST_CMD_RUN_H
#define ST_CMD_RUN_H

#include "sasstune/runtime.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct st_rtcli {
	const char *launch;
	const char *reference; /* run only */
	st_runtime_options opt;
	bool json, no_time, no_verify;
	unsigned repeat;       /* noise only */
	int nfiles;
	char **files;          /* positional arguments */
} st_rtcli;

/* Parse the common options; `extra` names which of --reference, --no-time,
 * --no-verify, --repeat this command takes.  Returns -1 to go on, else the exit
 * code (after --help or a usage error). */
int st_rtcli_parse(const char *cmd, int argc, char **argv, const char *extra, void (*help)(void), st_rtcli *o);

/* The options every GPU command takes, for --help. */
extern const char st_rtcli_options_help[];

/* Read a cubin; prints the error and returns NULL on failure. */
uint8_t *st_rtcli_read(const char *cmd, const char *path, size_t *size);

/* Load the launch spec and open a session on the reference cubin. */
int st_rtcli_open(const char *cmd, const st_rtcli *o, const char *ref_path, st_launch **spec, st_session **s,
		  uint8_t **ref, size_t *ref_size);

/* "ok", "mismatch", "crashed", "timed_out" or "error". */
const char *st_rtcli_verdict(st_status rc);

#endif
