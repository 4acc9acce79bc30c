/* The legality model's GPU soundness campaign, for one kernel (test/gpu/soundness.sh runs it on
 * every fixture).  One runtime session per input seed, many candidates per session: each walk
 * starts from the original schedule, applies 1..MAX random legal moves, and the result is
 * verified bit for bit against the original on the session's input sets.  Walks rotate over four
 * modes so that a failure can be attributed: the default setting, the wide setting, wide swaps
 * only, control-code edits only.  Every failing candidate is kept (cubin + schedule) with the
 * independent checker's verdict on it.
 *
 * With --hoist 1, --wait 1, --sb 1, --rename 1 and/or --xblock 1 those families (docs/sched.md)
 * are on in every mode and the four modes are default + F, wide + F, wide swaps + F (no
 * stall/yield/reuse edits), and wide "F first" (a move of F whenever one is legal: an xblock move
 * every other pick when one is, else a wait, sb or rename move every other pick when one is, else
 * a group hoist/sink every third pick when one is, else any move of F or, with none legal, any
 * move: wait moves appear after swaps).  With --xblock 1, once a walk took an xblock move, every
 * other pick of "F first" and of "wide + F" is a move in the slots around it (X8: its two blocks
 * move again; "wide + F" also takes an xblock move every other pick when one is legal, so stall
 * edits meet the moved blocks too); the summary's moves.xblock_near counts those picks.
 *
 * usage: soundness CUBIN LISTING LAUNCH.json OUT_DIR [--walks N] [--max-moves M] [--seed S]
 *                  [--rotate R] [--hoist 0|1] [--wait 0|1] [--sb 0|1] [--rename 0|1] [--xblock 0|1]
 *                  [--raise 0|1] [--seconds T]
 * --raise 1 (with --rename 1): renames may raise the register count as far as the occupancy rule
 * allows for the launch's block size and shared memory (docs/sched.md "Raising the register
 * count"); the summary counts the walks that raised it ("raised") and the highest count.
 * --seconds: stop starting walks after T seconds (0: no limit); the summary gives the walks run.
 * --dry-run 1: no GPU; walks and materialises only, each candidate counted ok (a CPU check of the
 * walking and its cost); --dry-run 2: also the independent checker on each, a violation counted
 * as an error.
 * Every verification is followed by a check of the reference (st_runtime_options.check_reference,
 * docs/runtime.md "Verification"): a walk after which the original's outputs no longer reproduce
 * (it wrote outside its buffers, into the worker's inputs or stored reference) fails as
 * "stray_write", whatever its own outputs; the reference was sound before it (checked after the
 * walk before, or a fresh worker), so the contamination is its own.  The worker is restarted.
 * Writes OUT_DIR/summary.json and OUT_DIR/failures/ (walk-W.cubin, walk-W.json). */
#include "sasstune/cubin.h"
#include "sasstune/occupancy.h"
#include "sasstune/runtime.h"
#include "sasstune/sched.h"
#include "soundness_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { M_DEFAULT, M_WIDE, M_SWAPS, M_CTRL, NMODES };
static const char *const plain_mode_name[NMODES] = {"default", "wide", "wide-swaps-only", "ctrl-only"};
static const char *const hoist_mode_name[NMODES] = {"default+new", "wide+new", "wide-swaps+new", "new-first"};
static const char *const *mode_name = plain_mode_name;
enum { R_OK, R_MISMATCH, R_CRASH, R_TIMEOUT, R_ERROR, R_STRAY, NRES };
static const char *const res_name[NRES] = {"ok", "mismatch", "crash", "timeout", "error", "stray_write"};

static double now(void) { return sg_now(); }

static uint64_t rng;
static uint64_t next(void) { return sg_xorshift(&rng); }

/* With the xblock family: after an xblock move of the walk, every other pick is a move inside
 * the slots around it (its two blocks' neighbourhood, [t - 8, from + 24] for a move from slot
 * `from` to t), so the campaign exercises the moves an xblock move makes legal again (docs/sched.md
 * X8).  Returns 1 with *mv set when it picked one. */
typedef struct near { uint32_t lo[8], hi[8]; int n; } near;

static int pick_near(const st_sched *st, const near *nr, st_move *mv)
{
	size_t nm = st_sched_move_count(st), k = 0;
	for (int pass = 0; pass < 2; pass++) {
		size_t want = pass ? (size_t)(next() % k) : 0;
		for (size_t j = 0; j < nm; j++) {
			st_move q = st_sched_move(st, j);
			int in = 0;
			for (int w = 0; w < nr->n && !in; w++)
				in = q.slot >= nr->lo[w] && q.slot <= nr->hi[w];
			if (in && !pass)
				k++;
			else if (in && want-- == 0) {
				*mv = q;
				return 1;
			}
		}
		if (!k)
			return 0;
	}
	return 0;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int rc = fputs(text, f) < 0;
	return fclose(f) || rc ? -1 : 0;
}

static int die(const char *what, const st_error *err)
{
	fprintf(stderr, "soundness: %s: %s\n", what, err->msg);
	return 1;
}

/* The command line. */
typedef struct config {
	const char *cubin_path, *listing, *launch_path, *out;
	unsigned walks, max_moves, rotate, hoist, seconds, waitf, dry, sbf, xblock, renamef, raisef;
	unsigned long long seed;
} config;

/* One campaign: the kernel, a scheduler per mode, the session and the tallies that summary.json
 * reports (walks in c.walks: fewer than planned when --seconds stopped it). */
typedef struct campaign {
	config c;
	st_cubin *orig;
	st_launch *spec;
	const char *kname;
	size_t ki;
	st_sass_opts so;
	st_sass_kernel *k;
	st_sched *s[NMODES];
	int fam, deterministic;
	unsigned famflags, threads, dyn, regs0, limit, raised, regs_max, planned;
	const uint8_t *data;
	size_t size, flen;
	unsigned counts[NMODES][NRES], checker_bad[NMODES];
	unsigned long long moves_by_kind[16], moves_total, hoist_swaps, hoist_group, near_picks;
	unsigned sessions, restarts, contaminations;
	double t_start, t_verify, t_walk;
	char device[128], failures_json[1 << 16], path[4096];
	st_session *sess;
} campaign;

/* -1 when the command line is good, else the exit code (the usage or error printed). */
static int parse_args(int argc, char **argv, config *c)
{
	if (argc < 5) {
		fprintf(stderr, "usage: soundness CUBIN LISTING LAUNCH.json OUT_DIR [--walks N] [--max-moves M] [--seed S] "
				"[--rotate R]\n");
		return 2;
	}
	*c = (config){.cubin_path = argv[1], .listing = argv[2], .launch_path = argv[3], .out = argv[4],
		      .walks = 1000, .max_moves = 64, .rotate = 250, .seed = 1};
	for (int i = 5; i + 1 < argc; i += 2) {
		unsigned long v = strtoul(argv[i + 1], NULL, 0);
		if (!strcmp(argv[i], "--walks"))
			c->walks = (unsigned)v;
		else if (!strcmp(argv[i], "--max-moves"))
			c->max_moves = v ? (unsigned)v : 1;
		else if (!strcmp(argv[i], "--seed"))
			c->seed = v;
		else if (!strcmp(argv[i], "--rotate"))
			c->rotate = v ? (unsigned)v : 1;
		else if (!strcmp(argv[i], "--hoist"))
			c->hoist = v != 0;
		else if (!strcmp(argv[i], "--wait"))
			c->waitf = v != 0;
		else if (!strcmp(argv[i], "--xblock"))
			c->xblock = v != 0;
		else if (!strcmp(argv[i], "--rename"))
			c->renamef = v != 0;
		else if (!strcmp(argv[i], "--raise"))
			c->raisef = v != 0;
		else if (!strcmp(argv[i], "--seconds"))
			c->seconds = (unsigned)v;
		else if (!strcmp(argv[i], "--sb"))
			c->sbf = v != 0;
		else if (!strcmp(argv[i], "--dry-run"))
			c->dry = (unsigned)v;
		else {
			fprintf(stderr, "soundness: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	return -1;
}

/* Opens the cubin and the launch spec, decodes the kernel and makes the four modes' schedulers (with
 * the raised register limit of --raise); 0, or 1 after the message. */
static int setup(campaign *cp, st_error *err)
{
	const config *c = &cp->c;
	if (st_cubin_open_file(c->cubin_path, &cp->orig, err))
		return die(c->cubin_path, err);
	if (st_launch_load(c->launch_path, &cp->spec, err))
		return die(c->launch_path, err);
	cp->kname = st_launch_kernel(cp->spec);
	cp->ki = st_cubin_find_kernel(cp->orig, cp->kname);
	if (cp->ki == ST_CUBIN_NONE) {
		fprintf(stderr, "soundness: %s has no kernel %s\n", c->cubin_path, cp->kname);
		return 1;
	}
	cp->so.listing = c->listing;
	if (st_sass_decode(cp->orig, cp->kname, &cp->so, &cp->k, err))
		return die("decode", err);
	cp->fam = c->hoist || c->waitf || c->sbf || c->renamef || c->xblock;
	cp->famflags = (c->hoist ? ST_SCHED_HOIST : 0) | (c->waitf ? ST_SCHED_WAIT : 0) | (c->sbf ? ST_SCHED_SB : 0) |
		       (c->renamef ? ST_SCHED_RENAME : 0) | (c->xblock ? ST_SCHED_XBLOCK : 0);
	if (cp->fam)
		mode_name = hoist_mode_name;
	for (int m = 0; m < NMODES; m++) {
		unsigned flags = m == M_DEFAULT ? 0 : m == M_SWAPS ? ST_SCHED_WIDE | ST_SCHED_NO_CTRL : ST_SCHED_WIDE;
		if (cp->fam) /* the last mode prefers the new families' moves */
			flags = (m == M_CTRL ? ST_SCHED_WIDE | ST_SCHED_NO_CTRL : flags) | cp->famflags;
		if (st_sched_new(cp->k, cp->orig, flags, &cp->s[m], err))
			return die("sched", err);
	}
	unsigned grid[3], block[3];
	cp->regs0 = cp->limit = st_cubin_regcount(cp->orig, cp->ki);
	st_launch_dims(cp->spec, grid, block, &cp->dyn);
	cp->threads = block[0] * block[1] * block[2];
	if (c->raisef && c->renamef && cp->regs0) /* the occupancy rule: the resident blocks per SM stay */
		cp->limit = st_occupancy_max_regs(cp->regs0, cp->threads,
						  st_cubin_static_shared(cp->orig, cp->ki) + cp->dyn, 0);
	for (int m = 0; m < NMODES && cp->limit > cp->regs0; m++)
		if (st_sched_set_reglimit(cp->s[m], cp->limit, err))
			return die("register limit", err);
	cp->raised = 0;
	cp->regs_max = cp->regs0;
	cp->data = st_cubin_data(cp->orig, &cp->size);
	return 0;
}

/* A fresh session (fresh input sets) for walk w; 0, or 1 after the message. */
static int open_session(campaign *cp, unsigned w, st_error *err)
{
	if (sg_open_session(&cp->sess, cp->data, cp->size, cp->spec, cp->c.seed, w, cp->c.rotate, cp->device, &cp->deterministic,
			    &cp->sessions, err))
		return die("session", err);
	return 0;
}

/* The pick of mode M_CTRL among nm legal moves: control edits only; with new families their moves
 * first.  Returns 1 with *mv set, 0 when there is nothing to pick (the walk stops). */
static int pick_ctrl(campaign *cp, st_sched *st, size_t nm, const near *nr, st_move *mv)
{
	int fam = cp->fam;
	size_t nctrl = 0, nwait = 0, ngroup = 0, nx = 0;
	for (size_t j = 0; j < nm; j++) {
		st_move q = st_sched_move(st, j);
		int rare = q.kind == ST_MOVE_WAIT || q.kind == ST_MOVE_SB || q.kind == ST_MOVE_RENAME;
		nctrl += fam ? q.kind == ST_MOVE_HOIST || rare || q.kind == ST_MOVE_XBLOCK : q.kind != ST_MOVE_SWAP;
		nwait += rare;
		nx += q.kind == ST_MOVE_XBLOCK;
		ngroup += q.kind == ST_MOVE_HOIST && q.arg >= 8;
	}
	/* xblock, wait, sb and rename moves are rare: every other pick is one; group hoists every third */
	int only_x = nx && next() % 2, only_wait = !only_x && nwait && next() % 2;
	int only_group = !only_x && !only_wait && ngroup && next() % 3 == 0;
	if (only_x)
		nctrl = nx;
	else if (only_wait)
		nctrl = nwait;
	if (only_group)
		nctrl = ngroup;
	if (!nctrl && !fam)
		return 0;
	if (!only_x && nr->n && next() % 2 && pick_near(st, nr, mv)) {
		cp->near_picks++;
		return 1;
	}
	size_t pick = (size_t)(next() % (nctrl ? nctrl : nm));
	for (size_t j = 0;; j++) {
		*mv = st_sched_move(st, j);
		int rare = mv->kind == ST_MOVE_WAIT || mv->kind == ST_MOVE_SB || mv->kind == ST_MOVE_RENAME;
		int want = !nctrl ? 1 : only_x ? mv->kind == ST_MOVE_XBLOCK : only_wait ? rare
			: only_group ? mv->kind == ST_MOVE_HOIST && mv->arg >= 8
			: fam ? mv->kind == ST_MOVE_HOIST || rare || mv->kind == ST_MOVE_XBLOCK
			: mv->kind != ST_MOVE_SWAP;
		if (want && pick-- == 0)
			return 1;
	}
}

/* The next move of a walk in mode among nm legal ones; 1 with *mv set, 0 when the walk stops. */
static int pick_move(campaign *cp, int mode, st_sched *st, size_t nm, const near *nr, st_move *mv)
{
	if (mode == M_CTRL)
		return pick_ctrl(cp, st, nm, nr, mv);
	if (cp->c.xblock && mode == M_WIDE) { /* xblock first, then near it, every other pick */
		st_move xm;
		int nx = 0;
		for (size_t j = 0; j < nm && !nx; j++)
			if ((xm = st_sched_move(st, j)).kind == ST_MOVE_XBLOCK)
				nx = 1;
		if (nx && next() % 2)
			*mv = xm;
		else if (nr->n && next() % 2 && pick_near(st, nr, mv))
			cp->near_picks++;
		else
			*mv = st_sched_move(st, (size_t)(next() % nm));
	} else {
		*mv = st_sched_move(st, (size_t)(next() % nm));
	}
	return 1;
}

/* Applies mv and counts it (a hoist's distance in slots; an xblock move's neighbourhood into nr). */
static int apply_move(campaign *cp, st_sched *st, st_move mv, near *nr, st_error *err)
{
	uint32_t from = mv.slot, orig_at = st_sched_at(st, mv.slot); /* hoist_slots: its distance */
	if (st_sched_apply(st, mv, err))
		return die("apply", err);
	if (mv.kind == ST_MOVE_HOIST)
		for (size_t j = 0; j < st_sched_count(st); j++)
			if (st_sched_at(st, j) == orig_at) {
				cp->hoist_swaps += j > from ? j - from : from - j;
				break;
			}
	if (mv.kind == ST_MOVE_XBLOCK && nr->n < 8)
		for (size_t j = 0; j < st_sched_count(st); j++)
			if (st_sched_at(st, j) == orig_at) {
				nr->lo[nr->n] = j > 8 ? (uint32_t)j - 8 : 0;
				nr->hi[nr->n++] = from + 24;
				break;
			}
	cp->hoist_group += mv.kind == ST_MOVE_HOIST && mv.arg >= 8;
	cp->moves_by_kind[mv.kind < 16 ? mv.kind : 4]++;
	cp->moves_total++;
	return 0;
}

/* One walk of 1..max_moves random legal moves in mode from the original schedule, materialised
 * into *cand; 0, or 1 after the message. */
static int walk(campaign *cp, int mode, st_cubin **cand, st_error *err)
{
	st_sched *st = cp->s[mode];
	double t0 = now();
	st_sched_reset(st);
	near nr = {{0}, {0}, 0};
	unsigned want = 1 + (unsigned)(next() % cp->c.max_moves);
	for (unsigned i = 0; i < want; i++) {
		size_t nm = st_sched_move_count(st);
		st_move mv;
		if (!nm || !pick_move(cp, mode, st, nm, &nr, &mv))
			break;
		if (apply_move(cp, st, mv, &nr, err))
			return 1;
	}
	if (st_cubin_open_mem(cp->data, cp->size, "candidate", cand, err) || st_sched_to_cubin(st, *cand, cp->ki, err))
		return die("materialise", err);
	cp->t_walk += now() - t0;
	return 0;
}

/* Keeps failing walk w (result r): its cubin and schedule under failures/, its record, its line. */
static void record_failure(campaign *cp, unsigned w, int mode, int r, const st_cubin *cand, const st_error *verr)
{
	st_sched *st = cp->s[mode];
	size_t bad = 0;
	st_error cerr = {0};
	st_check_kernel(cp->orig, cand, cp->kname, &cp->so, NULL, NULL, &bad, &cerr);
	cp->checker_bad[mode] += bad != 0;
	snprintf(cp->path, sizeof cp->path, "%s/failures/walk-%u.cubin", cp->c.out, w);
	st_cubin_write_file(cand, cp->path, &cerr);
	st_schedule *sch = NULL;
	char *json = NULL;
	if (!st_schedule_new(&sch, &cerr) && !st_sched_to_schedule(st, sch, &cerr))
		json = st_schedule_to_json(sch);
	snprintf(cp->path, sizeof cp->path, "%s/failures/walk-%u.json", cp->c.out, w);
	if (json)
		write_text(cp->path, json);
	free(json);
	st_schedule_free(sch);
	if (cp->flen + 512 < sizeof cp->failures_json)
		cp->flen += (size_t)snprintf(cp->failures_json + cp->flen, sizeof cp->failures_json - cp->flen,
					     "%s{\"walk\": %u, \"mode\": \"%s\", \"moves\": %zu, \"result\": \"%s\", "
					     "\"checker_violations\": %zu}",
					     cp->flen ? ", " : "", w, mode_name[mode], st_sched_depth(st), res_name[r], bad);
	fprintf(stderr, "soundness: %s walk %u (%s, %zu moves): %s: %s\n", cp->kname, w, mode_name[mode],
		st_sched_depth(st), res_name[r], verr->msg);
	if (r == R_CRASH || r == R_TIMEOUT)
		cp->restarts++;
}

/* Verifies walk w's candidate on the GPU (--dry-run: not; 2: the independent checker instead) and
 * counts its result. */
static void verify(campaign *cp, unsigned w, int mode, const st_cubin *cand)
{
	unsigned dry = cp->c.dry;
	size_t csize;
	const uint8_t *cdata = st_cubin_data(cand, &csize);
	double t0 = now();
	st_error verr = {0};
	st_session_info before = {0}, after = {0};
	if (!dry)
		st_session_get_info(cp->sess, &before);
	st_status vr = dry ? ST_OK : st_session_verify(cp->sess, cdata, csize, &verr);
	if (!dry)
		st_session_get_info(cp->sess, &after);
	unsigned stray = after.contaminations - before.contaminations;
	size_t dbad = 0;
	if (dry == 2 && (st_check_kernel(cp->orig, cand, cp->kname, &cp->so, NULL, NULL, &dbad, &verr) || dbad ||
			 st_check_occupancy(cp->orig, cand, cp->kname, cp->threads, cp->dyn, 0, NULL, NULL, &dbad, &verr) ||
			 dbad))
		vr = ST_EILLEGAL; /* counted as an error; the checker's verdict is in the failure record */
	unsigned rc_now = st_sched_regcount(cp->s[mode]);
	cp->raised += rc_now > cp->regs0;
	cp->regs_max = rc_now > cp->regs_max ? rc_now : cp->regs_max;
	cp->t_verify += now() - t0;
	int r = stray ? R_STRAY : vr == ST_OK ? R_OK : vr == ST_EMISMATCH ? R_MISMATCH : vr == ST_ECRASH ? R_CRASH
		: vr == ST_ETIMEOUT ? R_TIMEOUT : R_ERROR;
	cp->contaminations += stray;
	if (stray && vr == ST_OK) /* found once, not again when it ran alone in a fresh worker */
		snprintf(verr.msg, sizeof verr.msg, "the reference stopped reproducing after it; not again in a fresh worker");
	cp->counts[mode][r]++;
	if (r != R_OK)
		record_failure(cp, w, mode, r, cand, &verr);
}

/* Writes summary.json (and prints it); returns the number of failed walks. */
static unsigned summary(campaign *cp)
{
	const config *c = &cp->c;
	const unsigned long long *mk = cp->moves_by_kind;
	char buf[1 << 17];
	char fam[ST_SCHED_FAMILIES_MAX];
	size_t n = 0;
	n += (size_t)snprintf(buf + n, sizeof buf - n,
			      "{\"cubin\": \"%s\", \"kernel\": \"%s\", \"device\": \"%s\", \"instructions\": %zu, "
			      "\"walks\": %u, \"walks_planned\": %u, \"max_moves\": %u, \"seed\": %llu, \"sessions\": %u, \"deterministic\": %s, "
			      "\"families\": \"%s\", \"moves\": {\"total\": %llu, \"swap\": %llu, \"stall\": %llu, \"yield\": %llu, "
			      "\"reuse\": %llu, \"hoist\": %llu, \"hoist_group\": %llu, \"hoist_slots\": %llu, \"wait\": %llu, \"sb\": %llu, "
			      "\"rename\": %llu, \"xblock\": %llu, \"xblock_near\": %llu}, \"registers\": %u, \"register_limit\": %u, \"raised\": %u, "
			      "\"registers_max\": %u, \"contaminations\": %u, \"seconds\": %.1f, \"walk_seconds\": %.1f, \"verify_seconds\": %.1f, \"modes\": {",
			      c->cubin_path, cp->kname, cp->device, st_sass_count(cp->k), c->walks, cp->planned, c->max_moves, c->seed,
			      cp->sessions, cp->deterministic ? "true" : "false", st_sched_families(cp->famflags, fam, sizeof fam), cp->moves_total,
			      mk[0], mk[1], mk[2], mk[3], mk[ST_MOVE_HOIST], cp->hoist_group, cp->hoist_swaps, mk[ST_MOVE_WAIT],
			      mk[ST_MOVE_SB], mk[ST_MOVE_RENAME], mk[ST_MOVE_XBLOCK], cp->near_picks, cp->regs0, cp->limit,
			      cp->raised, cp->regs_max, cp->contaminations, now() - cp->t_start, cp->t_walk, cp->t_verify);
	unsigned fails = 0;
	for (int m = 0; m < NMODES; m++) {
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\"%s\": {", m ? ", " : "", mode_name[m]);
		for (int r = 0; r < NRES; r++) {
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\"%s\": %u", r ? ", " : "", res_name[r], cp->counts[m][r]);
			if (r != R_OK)
				fails += cp->counts[m][r];
		}
		n += (size_t)snprintf(buf + n, sizeof buf - n, ", \"failures_the_checker_caught\": %u}", cp->checker_bad[m]);
	}
	n += (size_t)snprintf(buf + n, sizeof buf - n, "}, \"failed\": %u, \"failures\": [%s]}\n", fails, cp->failures_json);
	snprintf(cp->path, sizeof cp->path, "%s/summary.json", c->out);
	if (write_text(cp->path, buf))
		fprintf(stderr, "soundness: cannot write %s: %s\n", cp->path, strerror(errno));
	fputs(buf, stdout);
	return fails;
}

int main(int argc, char **argv)
{
	static campaign cp; /* zero; 70 KiB, off the stack */
	int code = parse_args(argc, argv, &cp.c);
	if (code >= 0)
		return code;
	mkdir(cp.c.out, 0777);
	snprintf(cp.path, sizeof cp.path, "%s/failures", cp.c.out);
	mkdir(cp.path, 0777);
	st_error err = {0};
	if (setup(&cp, &err))
		return 1;
	cp.t_start = now();
	cp.deterministic = 1;
	rng = cp.c.seed * 0x9e3779b97f4a7c15ull + 1;
	cp.planned = cp.c.walks;
	for (unsigned w = 0; w < cp.c.walks; w++) {
		if (cp.c.seconds && now() - cp.t_start > cp.c.seconds) {
			fprintf(stderr, "soundness: %s: time limit (%u s) reached after %u of %u walks\n", cp.kname,
				cp.c.seconds, w, cp.c.walks);
			cp.c.walks = w;
			break;
		}
		if (w % cp.c.rotate == 0 && !cp.c.dry && open_session(&cp, w, &err)) /* fresh input sets */
			return 1;
		int mode = (int)(w % NMODES);
		st_cubin *cand = NULL;
		if (walk(&cp, mode, &cand, &err))
			return 1;
		verify(&cp, w, mode, cand);
		st_cubin_free(cand);
		if ((w + 1) % 100 == 0)
			fprintf(stderr, "soundness: %s: %u/%u walks\n", cp.kname, w + 1, cp.c.walks);
	}
	st_session_close(cp.sess);
	unsigned fails = summary(&cp);
	for (int m = 0; m < NMODES; m++)
		st_sched_free(cp.s[m]);
	st_sass_free(cp.k);
	st_launch_free(cp.spec);
	st_cubin_free(cp.orig);
	return fails ? 3 : 0;
}
