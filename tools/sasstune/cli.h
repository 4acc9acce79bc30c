/* Shared pieces of the sasstune command (not library API). */
#ifndef ST_CLI_H
#define ST_CLI_H

#include "sasstune/error.h"
#include "sasstune/sched.h"

#include <stdio.h>

/* Exit codes of every command. */
enum {
	ST_EXIT_OK = 0,
	ST_EXIT_FAIL = 1,  /* the command ran and found a problem (bad input, illegal move, mismatch) */
	ST_EXIT_USAGE = 2, /* wrong command line */
};

/* Every command: int st_cmd_NAME(int argc, char **argv), argv[0] is the command name.
 * X(name, one-line summary) */
#define ST_COMMANDS(X)                                                                       \
	X(inspect, "show a cubin: arch, kernels, instruction counts, records, relocations")   \
	X(rewrite, "apply a schedule (moves per kernel) to a cubin")                          \
	X(insert, "insert instruction slots through a kernel's padding (experiments)")        \
	X(disasm, "decode a kernel: control fields, operands, defs/uses, classes, latencies") \
	X(moves, "list the legal moves of a kernel")                                          \
	X(loops, "the loop study for software pipelining: loops, loads, trip counts")        \
	X(pipe, "rotate a loop's loads across its back edge (family 3 form 1)")             \
	X(shuffle, "apply a random walk of legal moves (for testing)")                        \
	X(check, "report every constraint a rewritten cubin breaks")                          \
	X(run, "verify and time a cubin on the GPU")                                          \
	X(compare, "time two cubins against each other (paired, interleaved)")                \
	X(noise, "measure the timing noise floor of a cubin (A/A)")                           \
	X(profile, "where a kernel's warps wait: stall samples per instruction (CUPTI)")      \
	X(tune, "search for a faster schedule of a cubin")                                    \
	X(train, "train a move policy over a set of kernels")                                 \
	X(apply, "apply a learned policy to a cubin, with no GPU")                            \
	X(variants, "compile PTX with other ptxas binaries/options; verify and time each")    \
	X(cache, "list, show or clear the schedule cache")

#define ST_DECLARE_CMD(name, summary) int st_cmd_##name(int argc, char **argv);
ST_COMMANDS(ST_DECLARE_CMD)
#undef ST_DECLARE_CMD

/* What the GPU commands (run, compare, noise, tune, train, variants) take from the environment
 * for their runtime; the runtime library reads no such switch itself: $SASSTUNE_CHECK_REFERENCE
 * (anything but "" or "0") turns o->check_reference on (docs/runtime.md). */
struct st_runtime_options;
void st_cli_runtime_env(struct st_runtime_options *o);

/* Print "sasstune CMD: message" on stderr. */
void st_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print an st_error as "sasstune CMD: message" and return ST_EXIT_FAIL. */
int st_cli_fail(const char *cmd, const st_error *err);

/* For commands whose issue is not done yet. */
int st_cli_not_implemented(const char *cmd);

/* With --kernel K (kernel not NULL), K must be a kernel of c (read from path): else say
 * "PATH: no kernel named 'K'" and return nonzero. */
int st_cli_no_kernel(const char *cmd, const st_cubin *c, const char *path, const char *kernel);

/* Decode kernel `name` of c (opcodes from the listing file, else from nvdisasm) and set up the
 * legality model on it with ST_SCHED_* flags; on failure *sk and *s are NULL. */
st_status st_cli_sched_new(const st_cubin *c, const char *name, const char *listing, unsigned flags,
			   st_sass_kernel **sk, st_sched **s, st_error *err);

/* Print j on stdout as cJSON_Print (pretty) or cJSON_PrintUnformatted writes it, and a
 * newline; nonzero (and nothing printed) when out of memory. */
struct cJSON;
int st_cli_print_json(const struct cJSON *j, int pretty);

/* The hand-rolled option parsing of every command but run, compare and noise (getopt,
 * cmd_run.h).  What an option does: */
typedef enum st_cli_kind {
	ST_CLI_FLAG, /* no value: *(int *)dst = 1 */
	ST_CLI_BIT,  /* no value: *(unsigned *)dst |= bit */
	ST_CLI_STR,  /* a value: *(const char **)dst = the value */
	ST_CLI_FN,   /* a value, taken by fn(cmd, value, dst): nonzero when it is not one (fn says why) */
} st_cli_kind;

typedef struct st_cli_opt {
	const char *name; /* "--kernel", "-o" */
	st_cli_kind kind;
	void *dst;
	unsigned bit;
	int (*fn)(const char *cmd, const char *value, void *dst);
} st_cli_opt;

/* The table's rows (the pointer types are checked): */
#define ST_OPT_FLAG(opt, p) {.name = (opt), .kind = ST_CLI_FLAG, .dst = (1 ? (p) : (int *)0)}
#define ST_OPT_BIT(opt, p, b) {.name = (opt), .kind = ST_CLI_BIT, .dst = (1 ? (p) : (unsigned *)0), .bit = (b)}
#define ST_OPT_STR(opt, p) {.name = (opt), .kind = ST_CLI_STR, .dst = (1 ? (p) : (const char **)0)}
#define ST_OPT_FN(opt, f, p) {.name = (opt), .kind = ST_CLI_FN, .dst = (p), .fn = (f)}
#define ST_OPT_END {.name = NULL}

/* "WHAT is required (see sasstune CMD --help)" when *value is NULL after parsing. */
typedef struct st_cli_need {
	const char *const *value;
	const char *what; /* "CUBIN", "-o OUT" */
} st_cli_need;

typedef struct st_cli_args {
	void (*usage)(FILE *out);                                /* -h, --help: usage(stdout), exit 0 */
	const st_cli_opt *opts;                                  /* ends with ST_OPT_END */
	const char **file;                                       /* the one positional argument, or */
	int (*arg)(const char *cmd, const char *arg, void *dst); /* each through this (nonzero: a usage error) */
	void *arg_dst;
	const st_cli_need *need; /* checked in order after the last argument; ends with {0}; may be NULL */
	int terse;               /* disasm's wording: "unknown option X (see --help)", no quotes */
} st_cli_args;

/* Parse argv[1..argc-1] in order: -1 to go on, else the exit code (after --help, or a usage
 * error said on stderr as "sasstune CMD: ...", CMD being argv[0]). */
int st_cli_parse(int argc, char **argv, const st_cli_args *a);

/* Before any work (st_cli_parse calls it last): OPT's path out must be a file in an existing,
 * writable folder and not one of inputs (same inode).  -1 to go on, else the exit code (2: empty,
 * a folder or an input; 1: the folder is missing or not writable), said on stderr. */
int st_cli_check_output(const char *cmd, const char *opt, const char *out, const char *const *inputs, size_t n);
/* The same for every "-o" and "--schedule-out" in opts; inputs: file and every other string option. */
int st_cli_check_outputs(const char *cmd, const st_cli_opt *opts, const char *file);

#endif
