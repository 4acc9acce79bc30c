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

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

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

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: soundness CUBIN LISTING LAUNCH.json OUT_DIR [--walks N] [--max-moves M] [--seed S] "
				"[--rotate R]\n");
		return 2;
	}
	const char *cubin_path = argv[1], *listing = argv[2], *launch_path = argv[3], *out = argv[4];
	unsigned walks = 1000, max_moves = 64, rotate = 250, hoist = 0, seconds = 0, waitf = 0, dry = 0, sbf = 0;
	unsigned xblock = 0, renamef = 0, raisef = 0;
	unsigned long long seed = 1;
	for (int i = 5; i + 1 < argc; i += 2) {
		unsigned long v = strtoul(argv[i + 1], NULL, 0);
		if (!strcmp(argv[i], "--walks"))
			walks = (unsigned)v;
		else if (!strcmp(argv[i], "--max-moves"))
			max_moves = v ? (unsigned)v : 1;
		else if (!strcmp(argv[i], "--seed"))
			seed = v;
		else if (!strcmp(argv[i], "--rotate"))
			rotate = v ? (unsigned)v : 1;
		else if (!strcmp(argv[i], "--hoist"))
			hoist = v != 0;
		else if (!strcmp(argv[i], "--wait"))
			waitf = v != 0;
		else if (!strcmp(argv[i], "--xblock"))
			xblock = v != 0;
		else if (!strcmp(argv[i], "--rename"))
			renamef = v != 0;
		else if (!strcmp(argv[i], "--raise"))
			raisef = v != 0;
		else if (!strcmp(argv[i], "--seconds"))
			seconds = (unsigned)v;
		else if (!strcmp(argv[i], "--sb"))
			sbf = v != 0;
		else if (!strcmp(argv[i], "--dry-run"))
			dry = (unsigned)v;
		else {
			fprintf(stderr, "soundness: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	char path[4096];
	mkdir(out, 0777);
	snprintf(path, sizeof path, "%s/failures", out);
	mkdir(path, 0777);
	st_error err = {0};
	st_cubin *orig = NULL;
	st_launch *spec = NULL;
	if (st_cubin_open_file(cubin_path, &orig, &err))
		return die(cubin_path, &err);
	if (st_launch_load(launch_path, &spec, &err))
		return die(launch_path, &err);
	const char *kname = st_launch_kernel(spec);
	size_t ki = st_cubin_find_kernel(orig, kname);
	if (ki == ST_CUBIN_NONE) {
		fprintf(stderr, "soundness: %s has no kernel %s\n", cubin_path, kname);
		return 1;
	}
	st_sass_opts so = {0};
	so.listing = listing;
	st_sass_kernel *k = NULL;
	if (st_sass_decode(orig, kname, &so, &k, &err))
		return die("decode", &err);
	st_sched *s[NMODES] = {NULL};
	int fam = hoist || waitf || sbf || renamef || xblock;
	unsigned famflags = (hoist ? ST_SCHED_HOIST : 0) | (waitf ? ST_SCHED_WAIT : 0) | (sbf ? ST_SCHED_SB : 0) |
			    (renamef ? ST_SCHED_RENAME : 0) | (xblock ? ST_SCHED_XBLOCK : 0);
	if (fam)
		mode_name = hoist_mode_name;
	for (int m = 0; m < NMODES; m++) {
		unsigned flags = m == M_DEFAULT ? 0 : m == M_SWAPS ? ST_SCHED_WIDE | ST_SCHED_NO_CTRL : ST_SCHED_WIDE;
		if (fam) /* the last mode prefers the new families' moves */
			flags = (m == M_CTRL ? ST_SCHED_WIDE | ST_SCHED_NO_CTRL : flags) | famflags;
		if (st_sched_new(k, orig, flags, &s[m], &err))
			return die("sched", &err);
	}
	unsigned grid[3], block[3], dyn = 0, regs0 = st_cubin_regcount(orig, ki), limit = regs0;
	st_launch_dims(spec, grid, block, &dyn);
	unsigned threads = block[0] * block[1] * block[2];
	if (raisef && renamef && regs0) /* the occupancy rule: the resident blocks per SM stay */
		limit = st_occupancy_max_regs(regs0, threads, st_cubin_static_shared(orig, ki) + dyn, 0);
	for (int m = 0; m < NMODES && limit > regs0; m++)
		if (st_sched_set_reglimit(s[m], limit, &err))
			return die("register limit", &err);
	unsigned raised = 0, regs_max = regs0;
	size_t size;
	const uint8_t *data = st_cubin_data(orig, &size);
	unsigned counts[NMODES][NRES] = {{0}}, checker_bad[NMODES] = {0};
	unsigned long long moves_by_kind[16] = {0}, moves_total = 0, hoist_swaps = 0, hoist_group = 0, near_picks = 0;
	unsigned sessions = 0, restarts = 0, contaminations = 0;
	double t_start = now(), t_verify = 0, t_walk = 0;
	char device[128] = "", failures_json[1 << 16] = "";
	size_t flen = 0;
	int deterministic = 1;
	st_session *sess = NULL;
	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	unsigned planned = walks;
	for (unsigned w = 0; w < walks; w++) {
		if (seconds && now() - t_start > seconds) {
			fprintf(stderr, "soundness: %s: time limit (%u s) reached after %u of %u walks\n", kname, seconds, w, walks);
			walks = w;
			break;
		}
		if (w % rotate == 0 && !dry) { /* fresh input sets */
			st_session_close(sess);
			sess = NULL;
			st_runtime_options ro;
			st_runtime_options_init(&ro);
			ro.seed = seed * 1000 + w / rotate + 1;
			ro.check_reference = true;
			if (st_session_open(data, size, spec, &ro, &sess, &err))
				return die("session", &err);
			st_session_info info;
			st_session_get_info(sess, &info);
			snprintf(device, sizeof device, "%s", info.device);
			deterministic = deterministic && info.deterministic;
			sessions++;
		}
		int mode = (int)(w % NMODES);
		st_sched *st = s[mode];
		double t0 = now();
		st_sched_reset(st);
		near nr = {{0}, {0}, 0};
		unsigned want = 1 + (unsigned)(next() % max_moves);
		for (unsigned i = 0; i < want; i++) {
			size_t nm = st_sched_move_count(st);
			if (!nm)
				break;
			st_move mv;
			if (mode == M_CTRL) { /* control edits only; with new families: their moves first */
				size_t nctrl = 0, nwait = 0, ngroup = 0, nx = 0;
				for (size_t j = 0; j < nm; j++) {
					st_move q = st_sched_move(st, j);
					int rare = q.kind == ST_MOVE_WAIT || q.kind == ST_MOVE_SB || q.kind == ST_MOVE_RENAME;
					nctrl += fam ? q.kind == ST_MOVE_HOIST || rare || q.kind == ST_MOVE_XBLOCK
						     : q.kind != ST_MOVE_SWAP;
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
					break;
				if (!only_x && nr.n && next() % 2 && pick_near(st, &nr, &mv)) {
					near_picks++;
					goto picked;
				}
				size_t pick = (size_t)(next() % (nctrl ? nctrl : nm));
				for (size_t j = 0;; j++) {
					mv = st_sched_move(st, j);
					int rare = mv.kind == ST_MOVE_WAIT || mv.kind == ST_MOVE_SB || mv.kind == ST_MOVE_RENAME;
					int want = !nctrl ? 1 : only_x ? mv.kind == ST_MOVE_XBLOCK : only_wait ? rare
						: only_group ? mv.kind == ST_MOVE_HOIST && mv.arg >= 8
						: fam ? mv.kind == ST_MOVE_HOIST || rare || mv.kind == ST_MOVE_XBLOCK
						: mv.kind != ST_MOVE_SWAP;
					if (want && pick-- == 0)
						break;
				}
			} else if (xblock && mode == M_WIDE) { /* xblock first, then near it, every other pick */
				st_move xm;
				int nx = 0;
				for (size_t j = 0; j < nm && !nx; j++)
					if ((xm = st_sched_move(st, j)).kind == ST_MOVE_XBLOCK)
						nx = 1;
				if (nx && next() % 2)
					mv = xm;
				else if (nr.n && next() % 2 && pick_near(st, &nr, &mv))
					near_picks++;
				else
					mv = st_sched_move(st, (size_t)(next() % nm));
			} else {
				mv = st_sched_move(st, (size_t)(next() % nm));
			}
		picked:;
			uint32_t from = mv.slot, orig_at = st_sched_at(st, mv.slot); /* hoist_slots: its distance */
			if (st_sched_apply(st, mv, &err))
				return die("apply", &err);
			if (mv.kind == ST_MOVE_HOIST)
				for (size_t j = 0; j < st_sched_count(st); j++)
					if (st_sched_at(st, j) == orig_at) {
						hoist_swaps += j > from ? j - from : from - j;
						break;
					}
			if (mv.kind == ST_MOVE_XBLOCK && nr.n < 8)
				for (size_t j = 0; j < st_sched_count(st); j++)
					if (st_sched_at(st, j) == orig_at) {
						nr.lo[nr.n] = j > 8 ? (uint32_t)j - 8 : 0;
						nr.hi[nr.n++] = from + 24;
						break;
					}
			hoist_group += mv.kind == ST_MOVE_HOIST && mv.arg >= 8;
			moves_by_kind[mv.kind < 16 ? mv.kind : 4]++;
			moves_total++;
		}
		st_cubin *cand = NULL;
		if (st_cubin_open_mem(data, size, "candidate", &cand, &err) || st_sched_to_cubin(st, cand, ki, &err))
			return die("materialise", &err);
		t_walk += now() - t0;
		size_t csize;
		const uint8_t *cdata = st_cubin_data(cand, &csize);
		t0 = now();
		st_error verr = {0};
		st_session_info before = {0}, after = {0};
		if (!dry)
			st_session_get_info(sess, &before);
		st_status vr = dry ? ST_OK : st_session_verify(sess, cdata, csize, &verr);
		if (!dry)
			st_session_get_info(sess, &after);
		unsigned stray = after.contaminations - before.contaminations;
		size_t dbad = 0;
		if (dry == 2 && (st_check_kernel(orig, cand, kname, &so, NULL, NULL, &dbad, &verr) || dbad ||
				 st_check_occupancy(orig, cand, kname, threads, dyn, 0, NULL, NULL, &dbad, &verr) || dbad))
			vr = ST_EILLEGAL; /* counted as an error; the checker's verdict is in the failure record */
		unsigned rc_now = st_sched_regcount(st);
		raised += rc_now > regs0;
		regs_max = rc_now > regs_max ? rc_now : regs_max;
		t_verify += now() - t0;
		int r = stray ? R_STRAY : vr == ST_OK ? R_OK : vr == ST_EMISMATCH ? R_MISMATCH : vr == ST_ECRASH ? R_CRASH
			: vr == ST_ETIMEOUT ? R_TIMEOUT : R_ERROR;
		contaminations += stray;
		if (stray && vr == ST_OK) /* found once, not again when it ran alone in a fresh worker */
			snprintf(verr.msg, sizeof verr.msg, "the reference stopped reproducing after it; not again in a fresh worker");
		counts[mode][r]++;
		if (r != R_OK) {
			size_t bad = 0;
			st_error cerr = {0};
			st_check_kernel(orig, cand, kname, &so, NULL, NULL, &bad, &cerr);
			checker_bad[mode] += bad != 0;
			snprintf(path, sizeof path, "%s/failures/walk-%u.cubin", out, w);
			st_cubin_write_file(cand, path, &cerr);
			st_schedule *sch = NULL;
			char *json = NULL;
			if (!st_schedule_new(&sch, &cerr) && !st_sched_to_schedule(st, sch, &cerr))
				json = st_schedule_to_json(sch);
			snprintf(path, sizeof path, "%s/failures/walk-%u.json", out, w);
			if (json)
				write_text(path, json);
			free(json);
			st_schedule_free(sch);
			if (flen + 512 < sizeof failures_json)
				flen += (size_t)snprintf(failures_json + flen, sizeof failures_json - flen,
							 "%s{\"walk\": %u, \"mode\": \"%s\", \"moves\": %zu, \"result\": \"%s\", "
							 "\"checker_violations\": %zu}",
							 flen ? ", " : "", w, mode_name[mode], st_sched_depth(st), res_name[r], bad);
			fprintf(stderr, "soundness: %s walk %u (%s, %zu moves): %s: %s\n", kname, w, mode_name[mode],
				st_sched_depth(st), res_name[r], verr.msg);
			if (r == R_CRASH || r == R_TIMEOUT)
				restarts++;
		}
		st_cubin_free(cand);
		if ((w + 1) % 100 == 0)
			fprintf(stderr, "soundness: %s: %u/%u walks\n", kname, w + 1, walks);
	}
	st_session_close(sess);
	/* summary.json */
	char buf[1 << 17];
	size_t n = 0;
	n += (size_t)snprintf(buf + n, sizeof buf - n,
			      "{\"cubin\": \"%s\", \"kernel\": \"%s\", \"device\": \"%s\", \"instructions\": %zu, "
			      "\"walks\": %u, \"walks_planned\": %u, \"max_moves\": %u, \"seed\": %llu, \"sessions\": %u, \"deterministic\": %s, "
			      "\"families\": \"%s\", \"moves\": {\"total\": %llu, \"swap\": %llu, \"stall\": %llu, \"yield\": %llu, "
			      "\"reuse\": %llu, \"hoist\": %llu, \"hoist_group\": %llu, \"hoist_slots\": %llu, \"wait\": %llu, \"sb\": %llu, "
			      "\"rename\": %llu, \"xblock\": %llu, \"xblock_near\": %llu}, \"registers\": %u, \"register_limit\": %u, \"raised\": %u, "
			      "\"registers_max\": %u, \"contaminations\": %u, \"seconds\": %.1f, \"walk_seconds\": %.1f, \"verify_seconds\": %.1f, \"modes\": {",
			      cubin_path, kname, device, st_sass_count(k), walks, planned, max_moves, seed, sessions,
			      deterministic ? "true" : "false", st_sched_families(famflags), moves_total,
			      moves_by_kind[0], moves_by_kind[1], moves_by_kind[2], moves_by_kind[3], moves_by_kind[ST_MOVE_HOIST],
			      hoist_group, hoist_swaps, moves_by_kind[ST_MOVE_WAIT], moves_by_kind[ST_MOVE_SB],
			      moves_by_kind[ST_MOVE_RENAME], moves_by_kind[ST_MOVE_XBLOCK], near_picks, regs0, limit, raised, regs_max,
			      contaminations, now() - t_start, t_walk,
			      t_verify);
	unsigned fails = 0;
	for (int m = 0; m < NMODES; m++) {
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\"%s\": {", m ? ", " : "", mode_name[m]);
		for (int r = 0; r < NRES; r++) {
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\"%s\": %u", r ? ", " : "", res_name[r], counts[m][r]);
			if (r != R_OK)
				fails += counts[m][r];
		}
		n += (size_t)snprintf(buf + n, sizeof buf - n, ", \"failures_the_checker_caught\": %u}", checker_bad[m]);
	}
	n += (size_t)snprintf(buf + n, sizeof buf - n, "}, \"failed\": %u, \"failures\": [%s]}\n", fails, failures_json);
	snprintf(path, sizeof path, "%s/summary.json", out);
	if (write_text(path, buf))
		fprintf(stderr, "soundness: cannot write %s: %s\n", path, strerror(errno));
	fputs(buf, stdout);
	for (int m = 0; m < NMODES; m++)
		st_sched_free(s[m]);
	st_sass_free(k);
	st_launch_free(spec);
	st_cubin_free(orig);
	(void)restarts;
	return fails ? 3 : 0;
}
