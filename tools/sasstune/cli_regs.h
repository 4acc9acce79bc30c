/* The register-count raise on the command line (moves, shuffle, check, tune): the block size and
 * shared memory the occupancy rule needs, and the occupancy report (docs/sched.md "Raising the
 * register count").  Not library API. */
#ifndef ST_CLI_REGS_H
#define ST_CLI_REGS_H
#include "cli.h"
#include "sasstune/runtime.h"

struct cJSON;
typedef struct st_cli_regs {
	unsigned threads;    /* threads a block (0: unknown: never raise) */
	unsigned shared;     /* the launch's dynamic shared memory, bytes (static shared is the cubin's) */
	int allow_drop;      /* --allow-occupancy-drop */
} st_cli_regs;
int st_cli_regs_uint(const char *cmd, const char *v, void *dst);
#define ST_CLI_REGS_OPTS(r)                                                                          \
	ST_OPT_FN("--threads", st_cli_regs_uint, &(r)->threads), ST_OPT_FN("--shared", st_cli_regs_uint, \
									    &(r)->shared),        \
		ST_OPT_FLAG("--allow-occupancy-drop", &(r)->allow_drop)
/* --launch L.json: the block size and dynamic shared memory of a launch spec, where --threads and
 * --shared did not give them.  ST_EXIT_OK, or the exit code after a message. */
int st_cli_regs_launch(const char *cmd, const char *path, st_cli_regs *r);
/* The --help lines of those options. */
#define ST_CLI_REGS_HELP                                                                             \
	"  --threads N   threads a block: with the rename family, renames may raise the register count\n" \
	"                while the resident blocks per SM stay (without it: never raised)\n"             \
	"  --shared B    the launch's dynamic shared memory in bytes (default 0)\n"                      \
	"  --allow-occupancy-drop\n"                                                                   \
	"                let a raise lower the resident blocks per SM (off by default)\n"

/* With the rename family and a block size: let s raise kernel k's count as far as the occupancy
 * rule allows (nothing otherwise); *limit (may be NULL) gets the count allowed (0 none). */
st_status st_cli_regs_limit(st_sched *s, const st_cubin *c, size_t k, const st_cli_regs *r, unsigned *limit,
			    st_error *err);
/* Occupancy of kernel k of c with its count and with `after` registers (0: the same), and the raise
 * limit (0: none): one "occupancy ..." line on stdout, or an "occupancy" object in j. */
void st_cli_occupancy(struct cJSON *j, const st_cubin *c, size_t k, const st_cli_regs *r, unsigned after,
		      unsigned limit);
/* tune: the same from a launch spec, for the original and the tuned cubin (bytes). */
void st_cli_occupancy_tune(struct cJSON *j, const uint8_t *orig, size_t n, const uint8_t *tuned, size_t tn,
			   const char *kernel, const st_launch *spec);
#endif
