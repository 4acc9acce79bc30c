/* Which ptxas binaries to try and what each knows.
 *
 * Order: the stock binary (opts.stock_ptxas), every opts.ptxas, then with opts.discover:
 * $SASSTUNE_PTXAS (a ':' list), and next to a stock ptxas that is Triton's bundled one
 * (.../site-packages/triton/backends/nvidia/bin/ptxas): its ptxas-blackwell (12.9) and the
 * nvidia-cuda-nvcc wheel's ptxas in the same site-packages (nvidia/cu13/bin/ptxas, then the
 * CUDA 12 wheel's nvidia/cuda_nvcc/bin/ptxas).  The library runs no Python: a caller that
 * knows where Triton lives (the sasstune command asks python3 once) passes its ptxas as
 * stock_ptxas.  A binary is skipped when its real path, or its known version, repeats. */
#include "variants_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "Cuda compilation tools, release 13.5, V13.5.37": the V number. */
static void parse_version(const char *text, char *out, size_t outsz)
{
	snprintf(out, outsz, "unknown");
	const char *p = strstr(text, ", V");
	if (!p)
		return;
	p += 3;
	size_t len = strspn(p, "0123456789.");
	if (len > 0 && len < outsz)
		snprintf(out, outsz, "%.*s", (int)len, p);
}

void st_vr_probe(st_vr_binary *b, double timeout_s, const char *memo_dir)
{
	if (memo_dir && st_vr_memo_load(memo_dir, b))
		return;
	char *argv[3] = {b->path, "--version", NULL};
	st_vr_run r;
	st_error e = {0};
	snprintf(b->version, sizeof b->version, "unknown");
	if (st_vr_exec(argv, timeout_s, &r, &e) != ST_OK) {
		snprintf(b->reason, sizeof b->reason, "%.200s", e.msg);
		return;
	}
	st_vr_run_reason(&r, timeout_s, b->reason, sizeof b->reason);
	if (!b->reason[0])
		parse_version((const char *)r.out.data, b->version, sizeof b->version);
	st_buf_free(&r.out);
	if (b->reason[0])
		return;
	argv[1] = "--help";
	if (st_vr_exec(argv, timeout_s, &r, &e) != ST_OK)
		return;
	const char *h = r.out.data ? (const char *)r.out.data : "";
	b->usage_level = strstr(h, "--register-usage-level") != NULL;
	b->maxrreg = strstr(h, "--maxrregcount") != NULL;
	b->controls = strstr(h, "--apply-controls") != NULL;
	bool ok = !r.timed_out && r.spawned && WIFEXITED(r.wstatus) && WEXITSTATUS(r.wstatus) == 0;
	st_buf_free(&r.out);
	if (memo_dir && ok)
		st_vr_memo_store(memo_dir, b);
}

typedef struct list {
	st_vr_binary *b;
	size_t n, cap;
	double timeout_s;
	const char *memo_dir;
} list;

/* Add path unless it repeats one already there; probe it. */
static st_status add(list *l, const char *path, bool must, st_error *err)
{
	if (!path || !*path)
		return ST_OK;
	if (!must && access(path, X_OK) != 0)
		return ST_OK;
	char real[PATH_MAX];
	const char *key = realpath(path, real) ? real : path;
	for (size_t i = 0; i < l->n; i++) {
		char other[PATH_MAX];
		if (!strcmp(key, realpath(l->b[i].path, other) ? other : l->b[i].path))
			return ST_OK;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		st_vr_binary *nb = realloc(l->b, cap * sizeof *nb);
		if (!nb)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		l->b = nb;
		l->cap = cap;
	}
	st_vr_binary *b = &l->b[l->n];
	memset(b, 0, sizeof *b);
	snprintf(b->path, sizeof b->path, "%s", path);
	st_vr_probe(b, l->timeout_s, l->memo_dir);
	for (size_t i = 0; i < l->n; i++)
		if (!b->reason[0] && strcmp(b->version, "unknown") && !strcmp(b->version, l->b[i].version))
			return ST_OK; /* the same compiler again */
	l->n++;
	return ST_OK;
}

/* Triton's bundled binaries and the pip wheels next to a Triton ptxas. */
static st_status add_near_triton(list *l, const char *stock, st_error *err)
{
	const char *tail = "/triton/backends/nvidia/bin/";
	const char *p = stock ? strstr(stock, tail) : NULL;
	if (!p)
		return ST_OK;
	static const char *const rel[] = {"triton/backends/nvidia/bin/ptxas", "triton/backends/nvidia/bin/ptxas-blackwell",
					  "nvidia/cu13/bin/ptxas", "nvidia/cuda_nvcc/bin/ptxas"};
	char path[1024];
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(path, sizeof path, "%.*s/%s", (int)(p - stock), stock, rel[i]);
		st_status rc = add(l, path, false, err);
		if (rc != ST_OK)
			return rc;
	}
	return ST_OK;
}

static st_status add_env(list *l, st_error *err)
{
	const char *env = getenv("SASSTUNE_PTXAS");
	if (!env || !*env)
		return ST_OK;
	char *copy = strdup(env);
	if (!copy)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	st_status rc = ST_OK;
	for (char *save = NULL, *w = strtok_r(copy, ":", &save); w && rc == ST_OK; w = strtok_r(NULL, ":", &save))
		rc = add(l, w, true, err);
	free(copy);
	return rc;
}

st_status st_vr_discover(const st_variants_opts *o, st_vr_binary **out, size_t *n, st_error *err)
{
	list l = {.timeout_s = o->compile_timeout_s < 10 ? o->compile_timeout_s : 10, .memo_dir = o->probe_dir};
	st_status rc = add(&l, o->stock_ptxas, true, err);
	for (size_t i = 0; rc == ST_OK && i < o->n_ptxas; i++)
		rc = add(&l, o->ptxas[i], true, err);
	if (rc == ST_OK && o->discover)
		rc = add_env(&l, err);
	if (rc == ST_OK && o->discover)
		rc = add_near_triton(&l, o->stock_ptxas, err);
	if (rc != ST_OK) {
		free(l.b);
		return rc;
	}
	*out = l.b;
	*n = l.n;
	return ST_OK;
}
