/* Shared pieces of the sasstune command (not library API). */
#ifndef ST_CLI_H
#define ST_CLI_H

#include "sasstune/error.h"

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
	X(disasm, "decode a kernel: control fields, operands, defs/uses, classes, latencies") \
	X(moves, "list the legal moves of a kernel")                                          \
	X(shuffle, "apply a random walk of legal moves (for testing)")                        \
	X(check, "report every constraint a rewritten cubin breaks")                          \
	X(run, "verify and time a cubin on the GPU")                                          \
	X(compare, "time two cubins against each other (paired, interleaved)")                \
	X(noise, "measure the timing noise floor of a cubin (A/A)")                           \
	X(tune, "search for a faster schedule of a cubin")                                    \
	X(train, "train a move policy over a set of kernels")                                 \
	X(apply, "apply a learned policy to a cubin, with no GPU")                            \
	X(cache, "list, show or clear the schedule cache")

#define ST_DECLARE_CMD(name, summary) int st_cmd_##name(int argc, char **argv);
ST_COMMANDS(ST_DECLARE_CMD)
#undef ST_DECLARE_CMD

/* Print "sasstune CMD: message" on stderr. */
void st_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print an st_error as "sasstune CMD: message" and return ST_EXIT_FAIL. */
int st_cli_fail(const char *cmd, const st_error *err);

/* For commands whose issue is not done yet. */
int st_cli_not_implemented(const char *cmd);

#endif
