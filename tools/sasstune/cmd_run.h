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

/* A command's session on its reference cubin. */
typedef struct st_rtcli_session {
	const char *ref_path; /* --reference, else the first CUBIN */
	uint8_t *ref;
	size_t ref_size;
	st_launch *spec;
	st_session *s;
} st_rtcli_session;

/* Parse the common options (`extra` names which of --reference, --no-time, --no-verify,
 * --repeat this command takes), check that there are nfiles CUBINs (at least one when
 * nfiles is 0; else "COUNT_MSG (see sasstune CMD --help)"), load the launch spec and open a
 * session on the reference (not when `extra` names "estimate": the command calls st_estimate_run).  Returns -1 to go on (then st_rtcli_end), else the exit code
 * (after --help, a usage error or a failure, said on stderr). */
int st_rtcli_start(const char *cmd, int argc, char **argv, const char *extra, void (*help)(void), int nfiles,
		   const char *count_msg, st_rtcli *o, st_rtcli_session *rs);

/* Close the session and free what st_rtcli_start made. */
void st_rtcli_end(st_rtcli_session *rs);

/* The options every GPU command takes, for --help. */
extern const char st_rtcli_options_help[];

/* Read a cubin; prints the error and returns NULL on failure. */
uint8_t *st_rtcli_read(const char *cmd, const char *path, size_t *size);

/* Add a paired timing's ratio, ci_lo, ci_hi, pairs, reps, a_ms and b_ms to a JSON object. */
struct cJSON;
void st_rtcli_timing_json(struct cJSON *j, const st_timing *t);

/* "ok", "mismatch", "crashed", "timed_out" or "error". */
const char *st_rtcli_verdict(st_status rc);

#endif
