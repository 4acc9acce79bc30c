/* sasstune shuffle CUBIN --steps N --seed S -o OUT: a random walk of legal moves (for testing). */
#include "cli.h"
#include "cli_regs.h"
#include "sasstune/cubin.h"
#include "sasstune/sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune shuffle CUBIN [--listing F] [--kernel K] [--wide] [--no-ctrl] [--families L]\n"
		"                        --steps N --seed S -o OUT [--schedule-out S.json] [-v] [--threads N]\n"
		"                        [--shared B] [--allow-occupancy-drop]\n\n"
		"Apply a random walk of N legal moves (docs/sched.md) to each kernel (or kernel K) and write\n"
		"the result.  Each step picks one of the current state's legal moves uniformly at random\n"
		"(xorshift64 seeded with S, so the same inputs give the same walk); a kernel with no legal\n"
		"move left stops early.  The schedule written with --schedule-out replays to the same cubin\n"
		"(`sasstune rewrite CUBIN --schedule S.json`).\n\n"
		"options:\n"
		"  --listing F        the cubin's `nvdisasm -hex -c` listing (default: run nvdisasm)\n"
		"  --kernel K         only kernel K\n"
		"  --wide             any non-fixed instruction may move (default: loads, stores, async copies)\n"
		"  --no-ctrl          swaps only, no control-code edits\n"
		"  --families L       move families: swap (required), ctrl, hoist, wait, sb, rename, xblock\n"
		"                     (default swap,ctrl); a hoist (of one instruction or of a load with its\n"
		"                     address math) or xblock move is written to the schedule as its swaps\n"
		"                     and their fix-ups, a wait or sb move as the two control objects it\n"
		"                     changes, a rename as {\"slot\", \"rename\"} and its register-field and\n"
		"                     control edits\n"
		"  --steps N          moves per kernel (required)\n"
		"  --seed S           random seed (required)\n"
		"  -o OUT             the shuffled cubin\n"
		"  --schedule-out F   the walk as a schedule (moves with their control-code fix-ups)\n"
		"  -v                 print each move\n"
		"  --threads N        threads a block: renames may raise the register count while the resident\n"
		"                     blocks per SM stay (written to the cubin and as {\"regcount\"} to the\n"
		"                     schedule); without it the count is never raised\n"
		"  --shared B         the launch's dynamic shared memory in bytes (default 0)\n"
		"  --allow-occupancy-drop\n"
		"                     let a raise lower the resident blocks per SM (off by default)\n"
		"  -h, --help\n\n"
		"exit status: 0 written, 1 bad input, 2 usage error\n");
}

static int parse_u64(const char *s, unsigned long long *v)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* One shuffle: the options, the walk's xorshift64 state (x, carried from kernel to kernel), the input
 * cubin c, its copy work that the walks are written to, and the schedule of all of them. */
typedef struct walk {
	const char *cmd, *path, *listing, *kernel;
	unsigned flags;
	int verbose;
	st_cli_regs regs;
	unsigned long long steps;
	uint64_t x;
	st_cubin *c, *work;
	st_schedule *sch;
} walk;

/* --families, --steps and --seed: into w; ST_EXIT_USAGE after the message, or -1. */
static int parse_walk(walk *w, const char *families, const char *steps_s, const char *seed_s)
{
	unsigned long long seed;
	st_error ferr = {0};
	if (families && st_sched_parse_families(families, &w->flags, &ferr)) {
		st_cli_error(w->cmd, "--%s", ferr.msg);
		return ST_EXIT_USAGE;
	}
	if (!parse_u64(steps_s, &w->steps) || w->steps > 100000000ull) {
		st_cli_error(w->cmd, "--steps: '%s' is not a number of moves (0..100000000)", steps_s);
		return ST_EXIT_USAGE;
	}
	if (!parse_u64(seed_s, &seed)) {
		st_cli_error(w->cmd, "--seed: '%s' is not a non-negative integer", seed_s);
		return ST_EXIT_USAGE;
	}
	w->x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	return -1;
}

/* Up to w->steps random legal moves on s; returns how many were applied (err set if one failed). */
static unsigned long long walk_moves(walk *w, st_sched *s, const char *name, st_error *err)
{
	unsigned long long done = 0;
	for (; done < w->steps; done++) {
		size_t nm = st_sched_move_count(s);
		if (!nm)
			break;
		w->x ^= w->x << 13;
		w->x ^= w->x >> 7;
		w->x ^= w->x << 17;
		st_move mv = st_sched_move(s, (size_t)(w->x % nm));
		if (w->verbose) {
			char text[256];
			st_sched_describe(s, mv, text, sizeof text);
			printf("%s: %s\n", name, text);
		}
		if (st_sched_apply(s, mv, err))
			break;
	}
	return done;
}

/* Walks kernel k of w->c and writes the result to w->work and w->sch. */
static st_status walk_kernel(walk *w, size_t k, st_error *err)
{
	const char *name = st_cubin_kernel(w->c, k)->name;
	st_sass_kernel *sk;
	st_sched *s;
	st_status r = st_cli_sched_new(w->c, name, w->listing, w->flags, &sk, &s, err);
	if (r)
		return r;
	if ((r = st_cli_regs_limit(s, w->c, k, &w->regs, NULL, err))) {
		st_sched_free(s);
		st_sass_free(sk);
		return r;
	}
	unsigned long long done = walk_moves(w, s, name, err);
	r = err->code ? err->code : st_sched_to_cubin(s, w->work, st_cubin_find_kernel(w->work, name), err);
	if (!r)
		r = st_sched_to_schedule(s, w->sch, err);
	if (!r)
		printf("%s: %llu moves\n", name, done);
	st_sched_free(s);
	st_sass_free(sk);
	return r;
}

static st_status write_schedule(const st_schedule *sch, const char *sched_out, st_error *err)
{
	char *t = st_schedule_to_json(sch);
	FILE *f = t ? fopen(sched_out, "w") : NULL;
	if (!f || fputs(t, f) < 0 || fclose(f)) {
		if (f)
			fclose(f);
		free(t);
		return st_error_set(err, ST_EIO, "%s: cannot write the schedule", sched_out);
	}
	free(t);
	return ST_OK;
}

/* Opens the cubin and walks every kernel (or w->kernel); ST_EXIT_OK, or an exit code after the message. */
static int shuffle(walk *w, const char *out, const char *sched_out)
{
	st_error err = {0};
	if (st_cubin_open_file(w->path, &w->c, &err) || st_schedule_new(&w->sch, &err))
		return st_cli_fail(w->cmd, &err);
	if (st_cli_no_kernel(w->cmd, w->c, w->path, w->kernel))
		return ST_EXIT_FAIL;
	size_t size;
	const uint8_t *data = st_cubin_data(w->c, &size);
	if (st_cubin_open_mem(data, size, w->path, &w->work, &err))
		return st_cli_fail(w->cmd, &err);
	for (size_t k = 0; k < st_cubin_kernel_count(w->c); k++) {
		if (w->kernel && strcmp(w->kernel, st_cubin_kernel(w->c, k)->name))
			continue;
		if (walk_kernel(w, k, &err))
			return st_cli_fail(w->cmd, &err);
	}
	if (st_cubin_write_file(w->work, out, &err) || (sched_out && write_schedule(w->sch, sched_out, &err)))
		return st_cli_fail(w->cmd, &err);
	printf("wrote %s\n", out);
	return ST_EXIT_OK;
}

int st_cmd_shuffle(int argc, char **argv)
{
	walk w = {.cmd = argv[0]};
	const char *out = NULL, *sched_out = NULL, *steps_s = NULL, *seed_s = NULL, *families = NULL;
	const st_cli_opt opts[] = {
		ST_CLI_REGS_OPTS(&w.regs),
		ST_OPT_STR("--listing", &w.listing), ST_OPT_STR("--kernel", &w.kernel), ST_OPT_STR("-o", &out),
		ST_OPT_STR("--steps", &steps_s), ST_OPT_STR("--seed", &seed_s), ST_OPT_STR("--schedule-out", &sched_out),
		ST_OPT_BIT("--wide", &w.flags, ST_SCHED_WIDE), ST_OPT_BIT("--no-ctrl", &w.flags, ST_SCHED_NO_CTRL),
		ST_OPT_STR("--families", &families), ST_OPT_FLAG("-v", &w.verbose), ST_OPT_END,
	};
	const st_cli_need need[] = {
		{&w.path, "CUBIN"}, {&out, "-o OUT"}, {&steps_s, "--steps N"}, {&seed_s, "--seed S"}, {0},
	};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &w.path, .need = need});
	if (code >= 0 || (code = parse_walk(&w, families, steps_s, seed_s)) >= 0)
		return code;
	int rc = shuffle(&w, out, sched_out);
	st_schedule_free(w.sch);
	st_cubin_free(w.work);
	st_cubin_free(w.c);
	return rc;
}
