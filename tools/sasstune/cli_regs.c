/* The register-count raise on the command line (cli_regs.h). */
#include "cli_regs.h"
#include "sasstune/occupancy.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int st_cli_regs_uint(const char *cmd, const char *v, void *dst)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 0);
	if (!*v || *v == '-' || *end || errno || n > 0x7fffffffUL) {
		st_cli_error(cmd, "'%s' is not a non-negative integer", v);
		return 1;
	}
	*(unsigned *)dst = (unsigned)n;
	return 0;
}

int st_cli_regs_launch(const char *cmd, const char *path, st_cli_regs *r)
{
	st_launch *spec = NULL;
	st_error err = {0};
	if (st_launch_load(path, &spec, &err))
		return st_cli_fail(cmd, &err);
	unsigned grid[3], block[3], shared = 0;
	st_launch_dims(spec, grid, block, &shared);
	st_launch_free(spec);
	if (!r->threads)
		r->threads = block[0] * block[1] * block[2];
	if (!r->shared)
		r->shared = shared;
	return ST_EXIT_OK;
}

st_status st_cli_regs_limit(st_sched *s, const st_cubin *c, size_t k, const st_cli_regs *r, unsigned *limit,
			    st_error *err)
{
	unsigned regs = st_cubin_regcount(c, k);
	if (limit)
		*limit = 0;
	if (!r->threads || !regs || !st_sched_regcount(s))
		return ST_OK;
	unsigned top = st_occupancy_max_regs(regs, r->threads, st_cubin_static_shared(c, k) + r->shared, r->allow_drop);
	if (limit)
		*limit = top;
	return top > regs ? st_sched_set_reglimit(s, top, err) : ST_OK;
}

static void add_occ(cJSON *o, const char *key, unsigned regs, const st_occupancy *q)
{
	cJSON *e = cJSON_AddObjectToObject(o, key);
	cJSON_AddNumberToObject(e, "registers", regs);
	cJSON_AddNumberToObject(e, "blocks", q->blocks);
	cJSON_AddNumberToObject(e, "warps", q->warps);
	cJSON_AddStringToObject(e, "limit", st_occupancy_limit_name(q->limit));
}

static void report(cJSON *j, const char *name, unsigned regs, unsigned after, unsigned threads, size_t shared,
		   unsigned limit)
{
	st_occupancy b, a;
	int known = threads && regs && !st_occupancy_sm90(regs, threads, shared, &b, NULL) &&
		    !st_occupancy_sm90(after ? after : regs, threads, shared, &a, NULL);
	if (j && !known) {
		cJSON_AddStringToObject(j, "occupancy", "unknown");
		return;
	}
	if (!known) {
		printf("%s: occupancy unknown (%s), register count %u, never raised\n", name,
		       regs ? "no block size: --threads or a launch spec" : "no register count", regs);
		return;
	}
	if (j) {
		cJSON *o = cJSON_AddObjectToObject(j, "occupancy");
		cJSON_AddNumberToObject(o, "threads", threads);
		cJSON_AddNumberToObject(o, "shared", (double)shared);
		add_occ(o, "before", regs, &b);
		add_occ(o, "after", after ? after : regs, &a);
		if (limit)
			cJSON_AddNumberToObject(o, "raise_limit", limit);
		return;
	}
	printf("%s: occupancy %u threads, %zu B shared: %u registers %u blocks (%u warps) per SM, bound by %s; "
	       "after %u registers %u blocks (%u warps)",
	       name, threads, shared, regs, b.blocks, b.warps, st_occupancy_limit_name(b.limit), after ? after : regs,
	       a.blocks, a.warps);
	if (limit)
		printf("; renames may raise the count to %u", limit);
	printf("\n");
}

void st_cli_occupancy(cJSON *j, const st_cubin *c, size_t k, const st_cli_regs *r, unsigned after, unsigned limit)
{
	report(j, st_cubin_kernel(c, k)->name, st_cubin_regcount(c, k), after, r->threads,
	       st_cubin_static_shared(c, k) + r->shared, limit);
}

void st_cli_occupancy_tune(cJSON *j, const uint8_t *orig, size_t n, const uint8_t *tuned, size_t tn,
			   const char *kernel, const st_launch *spec)
{
	st_cubin *a = NULL, *b = NULL;
	st_error err = {0};
	if (st_cubin_open_mem(orig, n, "original", &a, &err) || !tuned || st_cubin_open_mem(tuned, tn, "tuned", &b, &err)) {
		st_cubin_free(a);
		return;
	}
	size_t ka = st_cubin_find_kernel(a, kernel), kb = st_cubin_find_kernel(b, kernel);
	unsigned grid[3] = {0}, block[3] = {0}, dyn = 0;
	if (spec)
		st_launch_dims(spec, grid, block, &dyn);
	if (ka != ST_CUBIN_NONE && kb != ST_CUBIN_NONE)
		report(j, kernel, st_cubin_regcount(a, ka), st_cubin_regcount(b, kb), block[0] * block[1] * block[2],
		       st_cubin_static_shared(a, ka) + dyn, 0);
	st_cubin_free(a);
	st_cubin_free(b);
}
