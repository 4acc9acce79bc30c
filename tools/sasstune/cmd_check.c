/* sasstune check ORIGINAL TUNED: every constraint TUNED breaks relative to ORIGINAL. */
#include "cli.h"
#include "cli_regs.h"
#include "sasstune/cubin.h"
#include "sasstune/sched.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune check ORIGINAL TUNED [--listing F] [--kernel K] [--json] [--launch L.json]\n"
		"                      [--threads N] [--shared B] [--allow-occupancy-drop]\n\n"
		"Report every dependence, scoreboard, ordering and latency constraint that TUNED breaks\n"
		"relative to ORIGINAL, kernel by kernel.  The checker is independent of the move generator:\n"
		"it matches TUNED's words to ORIGINAL's instructions itself (ignoring control bits and\n"
		"patched offsets, identical words in order) and checks that every dependent pair keeps its\n"
		"order, fixed points and block boundaries are not crossed, fixed-latency distances stay at\n"
		"or above min(table, original) (across block ends too), every variable-latency consumer is\n"
		"still covered by a wait on its producer's scoreboard, set-to-wait distances stay >= 2\n"
		"cycles, scoreboard-setting stalls are not lowered, control fields are encodable, and reuse\n"
		"flags are still valid (docs/sched.md).  A register count raised by renames must hold every\n"
		"register TUNED names and keep the resident blocks per SM for the block size --launch or\n"
		"--threads gives (a raise without either is a violation).  A kernel whose padding slots\n"
		"were used is read as a pipe rewrite alone (loop loads rotated across the back edge, a\n"
		"peel before the loop) and judged by the pipe rules: lines \"pipe P1..P10: ...\".\n\n"
		"options:\n"
		"  --listing F   ORIGINAL's `nvdisasm -hex -c` listing (default: run nvdisasm on ORIGINAL)\n"
		"  --kernel K    only kernel K (default: every kernel)\n"
		"  --json        {\"ok\": bool, \"kernels\": [{kernel, violations, problems: [{offset, message}]}]}\n"
		"  --launch L    the launch spec `tune` used: its block size and dynamic shared memory\n"
		"                (--threads and --shared override them)\n"
		"  --threads N   threads a block, for the occupancy rule of a raised register count\n"
		"  --shared B    the launch's dynamic shared memory in bytes (default 0)\n"
		"  --allow-occupancy-drop\n"
		"                a raise may lower the resident blocks per SM\n"
		"  -h, --help\n\n"
		"exit status: 0 nothing broken, 1 something broken or bad input, 2 usage error\n");
}

typedef struct sink {
	int json;
	cJSON *problems;
} sink;

static void report(void *ctx, const char *kernel, uint32_t offset, const char *msg)
{
	sink *s = ctx;
	if (s->json) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "offset", offset);
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddItemToArray(s->problems, e);
	} else {
		printf("%s 0x%04x: %s\n", kernel, offset, msg);
	}
}

typedef struct cubins {
	const char *paths[2];
	int np;
} cubins;

static int cubin_arg(const char *cmd, const char *arg, void *dst)
{
	cubins *c = dst;
	if (c->np == 2) {
		st_cli_error(cmd, "more than two cubins given ('%s')", arg);
		return 1;
	}
	c->paths[c->np++] = arg;
	return 0;
}

/* One check of TUNED against ORIGINAL: the cubins, the options and the tallies over the kernels (nk
 * checked, total violations, failed: one was illegal); arr is the --json "kernels" array. */
typedef struct checker {
	const char *cmd;
	st_cubin *orig, *tuned;
	st_sass_opts o;
	st_cli_regs regs;
	int json, failed;
	cJSON *arr;
	size_t total, nk;
	st_error err;
} checker;

/* Checks kernel name (the legality rules, then the occupancy rule of a raised register count) and
 * reports its violations; ST_EXIT_OK, or the exit code of an error (printed). */
static int check_kernel(checker *ck, const char *name)
{
	sink sk = {ck->json, NULL};
	cJSON *kj = NULL;
	if (ck->json) {
		kj = cJSON_CreateObject();
		cJSON_AddItemToArray(ck->arr, kj);
		cJSON_AddStringToObject(kj, "kernel", name);
		sk.problems = cJSON_AddArrayToObject(kj, "problems");
	}
	size_t bad = 0;
	st_status s = st_check_kernel(ck->orig, ck->tuned, name, &ck->o, report, &sk, &bad, &ck->err);
	size_t obad = 0; /* the occupancy rule of a raised register count */
	st_status so = s && s != ST_EILLEGAL ? ST_OK : st_check_occupancy(ck->orig, ck->tuned, name, ck->regs.threads,
									 ck->regs.shared, ck->regs.allow_drop, report,
									 &sk, &obad, &ck->err);
	s = so == ST_EILLEGAL && !s ? ST_EILLEGAL : so && so != ST_EILLEGAL ? so : s;
	bad += obad;
	ck->nk++;
	ck->total += bad;
	if (ck->json)
		cJSON_AddNumberToObject(kj, "violations", (double)bad);
	if (s == ST_EILLEGAL)
		ck->failed = 1;
	else if (s)
		return st_cli_fail(ck->cmd, &ck->err);
	else if (!ck->json)
		printf("%s: ok\n", name);
	return ST_EXIT_OK;
}

/* Checks every kernel (or only kernel) of the two cubins at paths and prints the verdict. */
static int check(checker *ck, const char *const *paths, const char *kernel)
{
	cJSON *root = ck->json ? cJSON_CreateObject() : NULL;
	ck->arr = ck->json ? cJSON_AddArrayToObject(root, "kernels") : NULL;
	int rc = ST_EXIT_OK;
	if (st_cli_no_kernel(ck->cmd, ck->orig, paths[0], kernel))
		rc = ST_EXIT_FAIL;
	if (rc == ST_EXIT_OK && st_cubin_kernel_count(ck->orig) != st_cubin_kernel_count(ck->tuned)) {
		st_cli_error(ck->cmd, "%s has %zu kernels, %s %zu", paths[0], st_cubin_kernel_count(ck->orig), paths[1],
			     st_cubin_kernel_count(ck->tuned));
		rc = ST_EXIT_FAIL;
	}
	for (size_t k = 0; rc == ST_EXIT_OK && k < st_cubin_kernel_count(ck->orig); k++) {
		const char *name = st_cubin_kernel(ck->orig, k)->name;
		if (!kernel || !strcmp(kernel, name))
			rc = check_kernel(ck, name);
	}
	if (rc == ST_EXIT_OK) {
		if (ck->json) {
			cJSON_AddBoolToObject(root, "ok", !ck->failed);
			st_cli_print_json(root, 1);
		} else {
			printf("%zu kernel%s checked, %zu violation%s\n", ck->nk, ck->nk == 1 ? "" : "s", ck->total,
			       ck->total == 1 ? "" : "s");
		}
		if (ck->failed)
			rc = ST_EXIT_FAIL;
	}
	cJSON_Delete(root);
	return rc;
}

int st_cmd_check(int argc, char **argv)
{
	const char *kernel = NULL, *launch = NULL;
	checker ck = {.cmd = argv[0]};
	cubins cs = {{NULL, NULL}, 0};
	const st_cli_opt opts[] = {ST_OPT_STR("--listing", &ck.o.listing), ST_OPT_STR("--kernel", &kernel),
				   ST_OPT_FLAG("--json", &ck.json), ST_OPT_STR("--launch", &launch), ST_CLI_REGS_OPTS(&ck.regs),
				   ST_OPT_END};
	int code = st_cli_parse(argc, argv,
				&(st_cli_args){.usage = usage, .opts = opts, .arg = cubin_arg, .arg_dst = &cs});
	if (code >= 0)
		return code;
	if (cs.np != 2) {
		st_cli_error(argv[0], "ORIGINAL and TUNED are required (see sasstune check --help)");
		return ST_EXIT_USAGE;
	}
	if (launch && (code = st_cli_regs_launch(argv[0], launch, &ck.regs)) != ST_EXIT_OK)
		return code;
	if (st_cubin_open_file(cs.paths[0], &ck.orig, &ck.err) || st_cubin_open_file(cs.paths[1], &ck.tuned, &ck.err)) {
		st_cubin_free(ck.orig);
		return st_cli_fail(argv[0], &ck.err);
	}
	int rc = check(&ck, cs.paths, kernel);
	st_cubin_free(ck.orig);
	st_cubin_free(ck.tuned);
	return rc;
}
