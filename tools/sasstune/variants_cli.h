/* The variants stage as the commands run it: `sasstune variants` and `sasstune tune --variants`
 * (defined in variants_cli.c; not library API). */
#ifndef ST_VARIANTS_CLI_H
#define ST_VARIANTS_CLI_H

#include "cli.h"
#include "sasstune/runtime.h"
#include "sasstune/variants.h"

#include <stdio.h>

#define ST_VCLI_MAX_PTXAS 32

typedef struct st_vcli {
	const char *ptx_path;     /* the PTX */
	const char *stock_ptxas;  /* --stock-ptxas (NULL: Triton's bundled ptxas when found; "none": unknown) */
	const char *options;      /* --options: the base options (default "-lineinfo") */
	const char *ptxas[ST_VCLI_MAX_PTXAS];
	size_t n_ptxas;
	const char *controls[ST_VCLI_MAX_PTXAS]; /* --controls: ptxas advanced-controls files */
	size_t n_controls;
	int no_discover, quiet;
	unsigned jobs, pairs;
	double timeout_s;
} st_vcli;

/* Option values (st_cli_opt fns): --ptxas (repeatable; dst is the st_vcli), --jobs/--pairs
 * (an unsigned >= 1), --timeout (seconds > 0, a double). */
int st_vcli_ptxas_opt(const char *cmd, const char *v, void *dst);
/* --controls FILE (repeatable; dst is the st_vcli): a file that cannot be opened for reading is
 * a usage error. */
int st_vcli_controls_opt(const char *cmd, const char *v, void *dst);
int st_vcli_count_opt(const char *cmd, const char *v, void *dst);
int st_vcli_seconds_opt(const char *cmd, const char *v, void *dst);

/* Read the PTX, compile the variants (stock: the cubin's bytes, or NULL to compile it with the
 * stock ptxas) and, with a launch spec, measure them; without a GPU the set says the GPU steps
 * were skipped and this still succeeds.  Fails (said on stderr) only when there is no set. */
int st_vcli_stage(const char *cmd, const st_vcli *c, const uint8_t *stock, size_t size, const char *kernel,
		  const st_launch *spec, st_variants **out);

/* The table, one row per variant, and the note about the GPU steps. */
void st_vcli_print(FILE *f, const st_variants *v);

/* tune --variants: the stage on *cubin (the table on stderr unless quiet); the winner's bytes
 * replace *cubin (malloc'ed) and label names it ("stock" when none won). */
int st_vcli_tune_pick(const char *cmd, const st_vcli *c, uint8_t **cubin, size_t *size, const char *kernel,
		      const st_launch *spec, char *label, size_t labelsz);

/* The --help lines of the options above. */
extern const char st_vcli_options_help[];

#endif
