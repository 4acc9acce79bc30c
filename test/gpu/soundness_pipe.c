/* The GPU soundness campaign of family 3 form 1, the load-group rotation (docs/pipeline.md
 * "Form 1: rotation"), or with --form 2 of form 2, the prefetch into fresh registers ("Form 2",
 * candidates from st_pipe2_find with --regs N, the count raise judged by st_check_occupancy at the
 * launch's block size too), for one kernel at one launch (test/gpu/calls/session8-pipe.sh runs it on
 * the layernorm fixtures at launches whose loops run 1, 3 and 4 passes).
 *
 * The family's moves are few (per loop: each load legal alone, and the largest legal set), so a
 * walk is a random choice per loop (none, or one of its candidates; at least one loop chosen),
 * applied with st_pipe_apply to a fresh copy of the original, judged by the independent checker
 * (st_check_kernel) and verified bit for bit against the original on the session's input sets.
 * A new session (fresh inputs) every ROTATE walks, and the reference checked after each walk, as
 * in soundness.c: a walk after which the original's outputs no longer reproduce is a
 * "stray_write".  Every failing candidate is kept under OUT_DIR/failures/.
 *
 * usage: soundness_pipe CUBIN LISTING LAUNCH.json OUT_DIR [--walks N] [--seed S] [--rotate R]
 *                       [--seconds T] [--dry-run 0|1] [--form 1|2] [--regs N]
 * --dry-run 1: no GPU (the walks, the rewrite and the checker only).
 * Writes OUT_DIR/summary.json; exit 3 when a walk failed or the checker refused a rewrite. */
#include "sasstune/cubin.h"
#include "sasstune/pipe.h"
#include "sasstune/runtime.h"
#include "sasstune/sched.h"
#include "soundness_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { R_OK, R_MISMATCH, R_CRASH, R_TIMEOUT, R_ERROR, R_STRAY, NRES };
static const char *const res_name[NRES] = {"ok", "mismatch", "crash", "timeout", "error", "stray_write"};
#define MAXC 64    /* candidates kept */
#define MAXL 16    /* loops */
#define MAXCOMBO 4096

typedef struct pc {
	const char *cubin_path, *listing, *launch_path, *out;
	unsigned walks, rotate, seconds, dry, form, regs;
	unsigned long long seed;
	st_cubin *orig;
	st_launch *spec;
	const char *kname;
	st_sass_opts so;
	st_pipe_cand *cands;
	size_t ncand, nloop, loop_first[MAXL + 1]; /* candidates sorted by loop: loop l's in [first[l], first[l+1]) */
	const uint8_t *data;
	size_t size;
	st_session *sess;
	unsigned counts[NRES], checker_refused, sessions, contaminations, combos, loads_moved, peel_slots;
	unsigned long long seen[MAXCOMBO], seen_hash[MAXCOMBO];
	size_t seen_bad[MAXCOMBO]; /* the checker's verdict on each distinct rewrite (judged once) */
	int deterministic;
	char device[128], fail[1 << 15], path[4096];
	size_t flen;
	double t0;
} pc;

static uint64_t rng;
static uint64_t next(void) { return sg_xorshift(&rng); }

static double now(void) { return sg_now(); }

static int die(const char *what, const st_error *err)
{
	fprintf(stderr, "soundness_pipe: %s: %s\n", what, err->msg);
	return 1;
}

static int parse_args(int argc, char **argv, pc *p)
{
	if (argc < 5) {
		fprintf(stderr, "usage: soundness_pipe CUBIN LISTING LAUNCH.json OUT_DIR [--walks N] [--seed S] "
				"[--rotate R] [--seconds T] [--dry-run 0|1] [--form 1|2] [--regs N]\n");
		return 2;
	}
	p->cubin_path = argv[1], p->listing = argv[2], p->launch_path = argv[3], p->out = argv[4];
	p->walks = 1000, p->rotate = 25, p->seed = 1, p->form = 1;
	for (int i = 5; i + 1 < argc; i += 2) {
		unsigned long v = strtoul(argv[i + 1], NULL, 0);
		if (!strcmp(argv[i], "--walks"))
			p->walks = (unsigned)v;
		else if (!strcmp(argv[i], "--seed"))
			p->seed = v;
		else if (!strcmp(argv[i], "--rotate"))
			p->rotate = v ? (unsigned)v : 1;
		else if (!strcmp(argv[i], "--seconds"))
			p->seconds = (unsigned)v;
		else if (!strcmp(argv[i], "--dry-run"))
			p->dry = (unsigned)v;
		else if (!strcmp(argv[i], "--form") && (v == 1 || v == 2))
			p->form = (unsigned)v;
		else if (!strcmp(argv[i], "--regs"))
			p->regs = (unsigned)v;
		else {
			fprintf(stderr, "soundness_pipe: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	return -1;
}

static int by_header(const void *a, const void *b)
{
	const st_pipe_cand *x = a, *y = b;
	return x->header < y->header ? -1 : x->header > y->header;
}

/* Opens everything and groups the candidates by loop; 0, or 1 after the message. */
static int setup(pc *p, st_error *err)
{
	if (st_cubin_open_file(p->cubin_path, &p->orig, err))
		return die(p->cubin_path, err);
	if (st_launch_load(p->launch_path, &p->spec, err))
		return die(p->launch_path, err);
	p->kname = st_launch_kernel(p->spec);
	p->so.listing = p->listing;
	if (p->form == 2 ? st_pipe2_find(p->orig, p->kname, &p->so, p->regs, &p->cands, &p->ncand, err)
			 : st_pipe_find(p->orig, p->kname, &p->so, &p->cands, &p->ncand, err))
		return die("st_pipe_find", err);
	if (p->ncand > MAXC)
		p->ncand = MAXC;
	qsort(p->cands, p->ncand, sizeof *p->cands, by_header);
	for (size_t i = 0; i < p->ncand; i++)
		if ((!i || p->cands[i].header != p->cands[i - 1].header) && p->nloop < MAXL)
			p->loop_first[p->nloop++] = i;
	p->loop_first[p->nloop] = p->ncand;
	p->data = st_cubin_data(p->orig, &p->size);
	return 0;
}

static int open_session(pc *p, unsigned w, st_error *err)
{
	if (sg_open_session(&p->sess, p->data, p->size, p->spec, p->seed, w, p->rotate, p->device, &p->deterministic,
			    &p->sessions, err))
		return die("session", err);
	return 0;
}

/* A walk's choice: per loop none or one candidate, at least one overall; *key identifies it. */
static size_t choose(pc *p, st_pipe_cand *pick, unsigned long long *key)
{
	size_t n = 0;
	while (!n) {
		*key = 0;
		for (size_t l = 0; l < p->nloop; l++) {
			size_t k = p->loop_first[l + 1] - p->loop_first[l], c = (size_t)(next() % (k + 1));
			*key = *key * 65 + c;
			if (c)
				pick[n++] = p->cands[p->loop_first[l] + c - 1];
		}
	}
	return n;
}

/* FNV-1a of the rewrite's bytes: a choice seen before must have given the same bytes. */
static unsigned long long bytes_hash(const st_cubin *c)
{
	size_t n;
	const uint8_t *d = st_cubin_data(c, &n);
	unsigned long long h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ d[i]) * 1099511628211ull;
	return h;
}

/* The index of this choice among those seen (added when new); *is_new says which. */
static int note_combo(pc *p, unsigned long long key, unsigned long long hash, int *is_new)
{
	*is_new = 0;
	for (unsigned i = 0; i < p->combos; i++)
		if (p->seen[i] == key && p->seen_hash[i] == hash)
			return (int)i;
	*is_new = 1;
	if (p->combos >= MAXCOMBO)
		return -1;
	p->seen[p->combos] = key, p->seen_hash[p->combos] = hash;
	return (int)p->combos++;
}

/* The independent checker (and for form 2 the occupancy rule of the raise) on cand: the number of
 * violations, at least 1 when it could not judge.  Each distinct rewrite is judged once: the same
 * choice on the same original gives the same bytes (checked by their hash). */
static size_t judge(pc *p, const st_cubin *cand, unsigned long long key)
{
	int is_new, i = note_combo(p, key, bytes_hash(cand), &is_new);
	if (!is_new)
		return p->seen_bad[i];
	size_t nbad = 0, nocc = 0;
	st_error cerr = {0};
	if (st_check_kernel(p->orig, cand, p->kname, &p->so, NULL, NULL, &nbad, &cerr) && !nbad)
		nbad = 1; /* the checker could not judge it: counted as a refusal */
	unsigned grid[3], block[3], shared;
	st_launch_dims(p->spec, grid, block, &shared);
	if (p->form == 2 && st_check_occupancy(p->orig, cand, p->kname, block[0] * block[1] * block[2], shared, 0, NULL,
					       NULL, &nocc, &cerr) && !nocc)
		nocc = 1;
	if (i >= 0)
		p->seen_bad[i] = nbad + nocc;
	return nbad + nocc;
}

static void record(pc *p, unsigned w, int r, size_t nbad, const st_cubin *cand, const char *msg)
{
	st_error e = {0};
	snprintf(p->path, sizeof p->path, "%s/failures/walk-%u.cubin", p->out, w);
	st_cubin_write_file(cand, p->path, &e);
	if (p->flen + 600 < sizeof p->fail)
		p->flen += (size_t)snprintf(p->fail + p->flen, sizeof p->fail - p->flen,
					    "%s{\"walk\": %u, \"result\": \"%s\", \"checker_violations\": %zu}",
					    p->flen ? ", " : "", w, res_name[r], nbad);
	fprintf(stderr, "soundness_pipe: %s walk %u: %s (checker: %zu violations): %s\n", p->kname, w, res_name[r],
		nbad, msg);
}

/* One walk: choose, rewrite, check, verify; 0, or 1 after the message (a setup failure). */
static int one_walk(pc *p, unsigned w, st_error *err)
{
	st_pipe_cand pick[MAXL];
	unsigned long long key;
	size_t n = choose(p, pick, &key);
	st_cubin *cand = NULL;
	if (st_cubin_open_mem(p->data, p->size, "candidate", &cand, err) ||
	    st_pipe_apply(cand, p->kname, &p->so, pick, n, err)) {
		st_cubin_free(cand);
		return die("st_pipe_apply", err);
	}
	for (size_t i = 0; i < n; i++)
		p->loads_moved += pick[i].nloads, p->peel_slots += pick[i].npeel;
	st_error verr = {0};
	size_t nbad = judge(p, cand, key);
	p->checker_refused += nbad != 0;
	st_session_info before = {0}, after = {0};
	size_t cs;
	const uint8_t *cd = st_cubin_data(cand, &cs);
	st_status vr = ST_OK;
	if (!p->dry) {
		st_session_get_info(p->sess, &before);
		vr = st_session_verify(p->sess, cd, cs, &verr);
		st_session_get_info(p->sess, &after);
	}
	unsigned stray = after.contaminations - before.contaminations;
	p->contaminations += stray;
	int r = stray ? R_STRAY : vr == ST_OK ? R_OK : vr == ST_EMISMATCH ? R_MISMATCH : vr == ST_ECRASH ? R_CRASH
		: vr == ST_ETIMEOUT ? R_TIMEOUT : R_ERROR;
	p->counts[r]++;
	if (r != R_OK || nbad)
		record(p, w, r, nbad, cand, r != R_OK ? verr.msg : "the checker refused the rewrite");
	st_cubin_free(cand);
	return 0;
}

static unsigned summary(pc *p, unsigned walks)
{
	char buf[1 << 16], cl[4096];
	size_t n = 0, m = 0;
	for (size_t i = 0; i < p->ncand && m + 200 < sizeof cl; i++) {
		char d[160];
		st_pipe_describe(&p->cands[i], d, sizeof d);
		for (char *q = d; *q; q++)
			if (*q == '"' || *q == '\\')
				*q = '\'';
		m += (size_t)snprintf(cl + m, sizeof cl - m, "%s\"%s\"", i ? ", " : "", d);
	}
	cl[m] = 0;
	unsigned fails = 0;
	for (int r = 1; r < NRES; r++)
		fails += p->counts[r];
	n += (size_t)snprintf(buf + n, sizeof buf - n,
			      "{\"cubin\": \"%s\", \"form\": %u, \"launch\": \"%s\", \"kernel\": \"%s\", \"device\": \"%s\", \"walks\": %u, "
			      "\"walks_planned\": %u, \"seed\": %llu, \"sessions\": %u, \"deterministic\": %s, \"dry_run\": %u, "
			      "\"loops\": %zu, \"candidates\": [%s], \"distinct_rewrites\": %u, \"loads_moved\": %u, "
			      "\"peel_slots\": %u, \"checker_refused\": %u, \"contaminations\": %u, \"seconds\": %.1f, \"results\": {",
			      p->cubin_path, p->form, p->launch_path, p->kname, p->device, walks, p->walks, p->seed, p->sessions,
			      p->deterministic ? "true" : "false", p->dry, p->nloop, cl, p->combos, p->loads_moved, p->peel_slots,
			      p->checker_refused, p->contaminations, now() - p->t0);
	for (int r = 0; r < NRES; r++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\"%s\": %u", r ? ", " : "", res_name[r], p->counts[r]);
	n += (size_t)snprintf(buf + n, sizeof buf - n, "}, \"failed\": %u, \"failures\": [%s]}\n", fails, p->fail);
	snprintf(p->path, sizeof p->path, "%s/summary.json", p->out);
	FILE *f = fopen(p->path, "w");
	if (f) {
		fputs(buf, f);
		fclose(f);
	}
	fputs(buf, stdout);
	return fails + p->checker_refused;
}

int main(int argc, char **argv)
{
	static pc p; /* zero; large, off the stack */
	int code = parse_args(argc, argv, &p);
	if (code >= 0)
		return code;
	mkdir(p.out, 0777);
	snprintf(p.path, sizeof p.path, "%s/failures", p.out);
	mkdir(p.path, 0777);
	st_error err = {0};
	if (setup(&p, &err))
		return 1;
	p.t0 = now();
	p.deterministic = 1;
	rng = p.seed * 0x9e3779b97f4a7c15ull + 1;
	unsigned w = 0;
	if (!p.ncand) {
		fprintf(stderr, "soundness_pipe: %s: no candidate; nothing to walk\n", p.kname);
		p.walks = 0;
	}
	for (; w < p.walks; w++) {
		if (p.seconds && now() - p.t0 > p.seconds) {
			fprintf(stderr, "soundness_pipe: time limit after %u of %u walks\n", w, p.walks);
			break;
		}
		if (w % p.rotate == 0 && !p.dry && open_session(&p, w, &err))
			return 1;
		if (one_walk(&p, w, &err))
			return 1;
		if ((w + 1) % 100 == 0)
			fprintf(stderr, "soundness_pipe: %s: %u/%u walks\n", p.kname, w + 1, p.walks);
	}
	st_session_close(p.sess);
	unsigned bad = summary(&p, w);
	st_pipe_cands_free(p.cands);
	st_launch_free(p.spec);
	st_cubin_free(p.orig);
	return bad ? 3 : 0;
}
