/* st_variants_compile: which (binary, options) to compile, the compiles, duplicates, and the
 * check that the PTX is the stock cubin's. */
#include "variants_internal.h"
#include "sasstune/cubin.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct plan {
	const st_variants_opts *o;
	char base[512];
	char dir[4096], ptx_path[4096];
	st_vr_binary *bins;
	size_t nbins;
	st_vr_job *jobs;
	st_variant *protos; /* one per job */
	size_t njobs, cap;
	int regs;
	unsigned threads;
	bool stock_known;   /* bins[0] is the stock binary and answered */
} plan;

/* Base options: the caller's (default -lineinfo) and a --gpu-name when they name none. */
static void base_options(plan *p, unsigned sm)
{
	const char *b = p->o->base_options ? p->o->base_options : "-lineinfo";
	if (strstr(b, "--gpu-name") || strstr(b, "-arch"))
		snprintf(p->base, sizeof p->base, "%s", b);
	else if (p->o->arch)
		snprintf(p->base, sizeof p->base, "%s --gpu-name=%s", b, p->o->arch);
	else
		snprintf(p->base, sizeof p->base, "%s --gpu-name=sm_%u%s", b, sm ? sm : 90, sm >= 90 || !sm ? "a" : "");
}

static void label(st_variant *v, const st_vr_binary *b, const char *extra)
{
	const char *name = strrchr(b->path, '/') ? strrchr(b->path, '/') + 1 : b->path;
	const char *who = strcmp(b->version, "unknown") ? b->version : name;
	snprintf(v->label, sizeof v->label, "%.60s%s%.200s", who, *extra ? " " : "", extra);
}

static st_status add_job(plan *p, const st_vr_binary *b, const char *extra, st_error *err)
{
	if (p->njobs == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		st_vr_job *nj = realloc(p->jobs, cap * sizeof *nj);
		if (nj)
			p->jobs = nj;
		st_variant *np = nj ? realloc(p->protos, cap * sizeof *np) : NULL;
		if (!np)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		p->protos = np;
		p->cap = cap;
	}
	st_variant *v = &p->protos[p->njobs];
	memset(v, 0, sizeof *v);
	snprintf(v->ptxas, sizeof v->ptxas, "%s", b->path);
	snprintf(v->ptxas_version, sizeof v->ptxas_version, "%s", b->version);
	snprintf(v->options, sizeof v->options, "%s", extra);
	label(v, b, extra);
	v->regs = -1;
	v->duplicate_of = -1;
	v->verified = -1;
	snprintf(v->reason, sizeof v->reason, "%s", b->reason);
	st_vr_job *j = &p->jobs[p->njobs];
	memset(j, 0, sizeof *j);
	j->ptxas = b->path;
	j->base = p->base;
	j->extra = v->options;
	j->ptx_path = p->ptx_path;
	snprintf(j->out_path, sizeof j->out_path, "%.4000s/v%zu.cubin", p->dir, p->njobs);
	p->njobs++;
	return ST_OK;
}

/* One advanced-controls file with binary b: "--apply-controls=FILE", labelled with the file's
 * basename; a rejected row when b does not list the option or the path does not fit one word. */
static st_status add_controls(plan *p, const st_vr_binary *b, const char *file, st_error *err)
{
	char opt[sizeof p->protos->options];
	int n = snprintf(opt, sizeof opt, "--apply-controls=%s", file);
	st_status rc = add_job(p, b, n > 0 && (size_t)n < sizeof opt ? opt : "--apply-controls=(long path)", err);
	if (rc != ST_OK)
		return rc;
	st_variant *v = &p->protos[p->njobs - 1];
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	char shown[256];
	snprintf(shown, sizeof shown, "--apply-controls=%.200s", base);
	label(v, b, shown);
	if (v->reason[0])
		return ST_OK;
	if (!b->controls)
		snprintf(v->reason, sizeof v->reason, "ptxas %.60s does not know --apply-controls (13.3 on)", b->version);
	else if (n < 0 || (size_t)n >= sizeof opt || strpbrk(file, " \t\n"))
		snprintf(v->reason, sizeof v->reason, "controls path too long or with white space: %.200s", file);
	return ST_OK;
}

/* The options to try with binary b (skip_plain: its plain compile is the stock cubin). */
static st_status plan_binary(plan *p, const st_vr_binary *b, bool skip_plain, st_error *err)
{
	st_status rc = ST_OK;
	if (b->reason[0])
		return add_job(p, b, "", err); /* one rejected row: it could not be asked */
	if (!skip_plain)
		rc = add_job(p, b, "", err);
	bool ul = b->usage_level && !strstr(p->base, "register-usage-level") && !strstr(p->base, "regUsageLevel");
	if (rc == ST_OK && ul)
		rc = add_job(p, b, "--register-usage-level 0", err);
	if (rc == ST_OK && ul)
		rc = add_job(p, b, "--register-usage-level 10", err);
	int vals[2];
	size_t nv = b->maxrreg && !strstr(p->base, "maxrregcount") ? st_vr_maxrreg_values(p->regs, p->threads, vals) : 0;
	for (size_t i = 0; rc == ST_OK && i < nv; i++) {
		char opt[64];
		snprintf(opt, sizeof opt, "--maxrregcount %d", vals[i]);
		rc = add_job(p, b, opt, err);
	}
	for (size_t i = 0; rc == ST_OK && i < p->o->n_controls && !strstr(p->base, "apply-controls"); i++)
		rc = add_controls(p, b, p->o->controls[i], err);
	return rc;
}

/* A private folder with the PTX in it. */
static st_status make_dir(plan *p, const char *ptx, size_t len, st_error *err)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(p->dir, sizeof p->dir, "%s/sasstune-variants-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(p->dir)) {
		st_status rc = st_error_set(err, ST_EIO, "%s: cannot make a temporary folder: %s", p->dir, strerror(errno));
		p->dir[0] = 0;
		return rc;
	}
	snprintf(p->ptx_path, sizeof p->ptx_path, "%.4000s/kernel.ptx", p->dir);
	return st_write_file_atomic(p->ptx_path, ptx, len, err);
}

static void plan_free(plan *p)
{
	for (size_t i = 0; i < p->njobs; i++) {
		free(p->jobs[i].cubin);
		unlink(p->jobs[i].out_path);
	}
	if (p->ptx_path[0])
		unlink(p->ptx_path);
	if (p->dir[0])
		rmdir(p->dir);
	free(p->jobs);
	free(p->protos);
	free(p->bins);
}

/* The stock cubin: the caller's, else the PTX through the stock binary (one job, run now).
 * Sets s->kernel (the only entry when kernel is NULL) and the stock register count. */
static st_status stock_cubin(plan *p, st_variants *s, const uint8_t *stock, size_t size, const char *kernel,
			     st_error *err)
{
	st_variant v = {.stock = true, .compiled = true, .regs = -1, .duplicate_of = -1, .verified = -1};
	snprintf(v.label, sizeof v.label, "stock");
	snprintf(v.ptxas_version, sizeof v.ptxas_version, "%s", p->stock_known ? p->bins[0].version : "unknown");
	snprintf(v.ptxas, sizeof v.ptxas, "%s", p->o->stock_ptxas ? p->o->stock_ptxas : "");
	uint8_t *own = NULL, *code = NULL;
	if (!stock) {
		if (!p->stock_known)
			return st_error_set(err, ST_ETOOL, "no stock cubin: %s",
					    p->o->stock_ptxas ? p->bins[0].reason : "no stock ptxas named");
		st_status rc = add_job(p, &p->bins[0], "", err);
		if (rc == ST_OK)
			rc = st_vr_compile_all(p->jobs, 1, 1, p->o->compile_timeout_s, err);
		if (rc != ST_OK)
			return rc;
		p->njobs = 0;
		if (p->jobs[0].reason[0])
			return st_error_set(err, ST_ETOOL, "stock compile with %s failed: %s", p->bins[0].path, p->jobs[0].reason);
		v.compile_s = p->jobs[0].secs;
		stock = own = p->jobs[0].cubin;
		size = p->jobs[0].size;
		p->jobs[0].cubin = NULL;
	}
	size_t len;
	st_status rc = st_vr_kernel_code(stock, size, kernel, &code, &len, &p->regs, s->kernel, sizeof s->kernel, err);
	if (rc != ST_OK)
		st_error_wrap(err, "stock cubin");
	else
		rc = st_vr_push(s, &v, stock, size, err);
	free(code);
	free(own);
	return rc;
}

/* Same code as an earlier row: duplicate_of (kept in the table, not measured). */
static void mark_duplicates(st_variants *s)
{
	for (size_t i = 1; i < s->n; i++) {
		st_vr_item *a = &s->items[i];
		for (size_t j = 0; j < i && a->pub.compiled && a->code; j++) {
			const st_vr_item *b = &s->items[j];
			if (b->code && b->pub.duplicate_of < 0 && b->pub.code_bytes == a->pub.code_bytes &&
			    !memcmp(a->code, b->code, a->pub.code_bytes)) {
				a->pub.duplicate_of = (int)j;
				if (!a->pub.reason[0])
					snprintf(a->pub.reason, sizeof a->pub.reason, "same code as %.200s", b->pub.label);
				break;
			}
		}
	}
}

/* The stock binary with the base options must give the stock kernel's code. */
static void check_match(st_variants *s, bool stock_known, bool has_entry)
{
	bool ok = has_entry;
	if (ok && stock_known) {
		ok = false;
		for (size_t i = 1; i < s->n; i++)
			if (!strcmp(s->items[i].pub.ptxas, s->items[0].pub.ptxas) && !s->items[i].pub.options[0])
				ok = s->items[i].pub.duplicate_of == 0;
	}
	for (size_t i = 1; i < s->n && !ok; i++)
		snprintf(s->items[i].pub.reason, sizeof s->items[i].pub.reason, "PTX does not match the cubin%s",
			 has_entry ? "" : " (no such .entry in the PTX)");
}

bool st_vr_ptx_has_entry(const char *ptx, size_t len, const char *kernel)
{
	size_t kl = strlen(kernel);
	for (const char *p = ptx; (p = memmem(p, len - (size_t)(p - ptx), kernel, kl)); p += kl)
		if (p > ptx && isspace((unsigned char)p[-1]) && (size_t)(p - ptx) + kl < len &&
		    (p[kl] == '(' || isspace((unsigned char)p[kl])))
			return true;
	return false;
}

static st_status compile_rest(plan *p, st_variants *s, bool stock_given, st_error *err)
{
	st_status rc = ST_OK;
	for (size_t i = 0; rc == ST_OK && i < p->nbins; i++)
		rc = plan_binary(p, &p->bins[i], i == 0 && p->stock_known && !stock_given, err);
	size_t todo = 0;
	for (size_t i = 0; i < p->njobs; i++)
		if (!p->protos[i].reason[0])
			p->jobs[todo++] = p->jobs[i]; /* the jobs keep the plan's order */
	if (rc == ST_OK && p->o->progress) {
		char line[256];
		snprintf(line, sizeof line, "%.100s: %zu compiles with %zu binaries, %u at a time, %g s each at most", s->kernel,
			 todo, p->nbins, p->o->jobs ? p->o->jobs : 1, p->o->compile_timeout_s);
		p->o->progress(p->o->progress_user, line);
	}
	if (rc == ST_OK)
		rc = st_vr_compile_all(p->jobs, todo, p->o->jobs, p->o->compile_timeout_s, err);
	for (size_t i = 0, j = 0; rc == ST_OK && i < p->njobs; i++) {
		st_variant *v = &p->protos[i];
		st_vr_job *job = v->reason[0] ? NULL : &p->jobs[j++];
		if (job) {
			v->compile_s = job->secs;
			v->compiled = !job->reason[0];
			snprintf(v->reason, sizeof v->reason, "%s", job->reason);
		}
		rc = st_vr_push(s, v, job ? job->cubin : NULL, job ? job->size : 0, err);
	}
	return rc;
}

st_status st_variants_compile(const char *ptx, size_t ptx_len, const uint8_t *stock, size_t stock_size,
			      const char *kernel, const st_variants_opts *o, st_variants **out, st_error *err)
{
	*out = NULL;
	if (!ptx || !o || o->version != ST_VARIANTS_OPTS_VERSION)
		return st_error_set(err, ST_EINVAL, "variants: no PTX or options of another version");
	plan p = {.o = o};
	st_variants *s = calloc(1, sizeof *s);
	if (!s)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	unsigned sm = 0;
	st_cubin *c = NULL;
	if (stock && st_cubin_open_mem(stock, stock_size, "stock cubin", &c, NULL) == ST_OK)
		sm = st_cubin_sm(c);
	st_cubin_free(c);
	base_options(&p, sm);
	st_status rc = st_vr_discover(o, &p.bins, &p.nbins, err);
	p.stock_known = rc == ST_OK && o->stock_ptxas && p.nbins > 0 && !p.bins[0].reason[0];
	if (rc == ST_OK)
		rc = make_dir(&p, ptx, ptx_len, err);
	if (rc == ST_OK)
		rc = stock_cubin(&p, s, stock, stock_size, kernel, err);
	bool entry = rc == ST_OK && st_vr_ptx_has_entry(ptx, ptx_len, s->kernel);
	/* ptxas ignores --maxrregcount for an entry with .reqntid or .maxntid (12.8, 13.5 checked) */
	p.threads = rc == ST_OK && !st_vr_ptx_threads(ptx, ptx_len, s->kernel) ? o->block_threads : 0;
	if (rc == ST_OK && !entry)
		p.nbins = 0; /* nothing to compile: one row says why */
	if (rc == ST_OK)
		rc = compile_rest(&p, s, stock != NULL, err);
	if (rc == ST_OK) {
		mark_duplicates(s);
		check_match(s, p.stock_known && stock != NULL, entry);
		if (!entry && s->n == 1)
			snprintf(s->gpu, sizeof s->gpu, "PTX does not match the cubin (no .entry %.150s in the PTX)", s->kernel);
		else
			snprintf(s->gpu, sizeof s->gpu, "GPU steps skipped: not measured (no launch spec)");
	}
	plan_free(&p);
	if (rc != ST_OK) {
		st_variants_free(s);
		return rc;
	}
	*out = s;
	return ST_OK;
}
