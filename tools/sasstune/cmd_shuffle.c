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

int st_cmd_shuffle(int argc, char **argv)
{
	const char *path = NULL, *listing = NULL, *kernel = NULL, *out = NULL, *sched_out = NULL;
	const char *steps_s = NULL, *seed_s = NULL, *families = NULL;
	unsigned flags = 0;
	int verbose = 0;
	st_cli_regs regs = {0};
	const st_cli_opt opts[] = {
		ST_CLI_REGS_OPTS(&regs),
		ST_OPT_STR("--listing", &listing), ST_OPT_STR("--kernel", &kernel), ST_OPT_STR("-o", &out),
		ST_OPT_STR("--steps", &steps_s), ST_OPT_STR("--seed", &seed_s), ST_OPT_STR("--schedule-out", &sched_out),
		ST_OPT_BIT("--wide", &flags, ST_SCHED_WIDE), ST_OPT_BIT("--no-ctrl", &flags, ST_SCHED_NO_CTRL),
		ST_OPT_STR("--families", &families), ST_OPT_FLAG("-v", &verbose), ST_OPT_END,
	};
	const st_cli_need need[] = {
		{&path, "CUBIN"}, {&out, "-o OUT"}, {&steps_s, "--steps N"}, {&seed_s, "--seed S"}, {0},
	};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	unsigned long long steps, seed;
	st_error ferr = {0};
	if (families && st_sched_parse_families(families, &flags, &ferr)) {
		st_cli_error(argv[0], "--%s", ferr.msg);
		return ST_EXIT_USAGE;
	}
	if (!parse_u64(steps_s, &steps) || steps > 100000000ull) {
		st_cli_error(argv[0], "--steps: '%s' is not a number of moves (0..100000000)", steps_s);
		return ST_EXIT_USAGE;
	}
	if (!parse_u64(seed_s, &seed)) {
		st_cli_error(argv[0], "--seed: '%s' is not a non-negative integer", seed_s);
		return ST_EXIT_USAGE;
	}
	st_error err = {0};
	st_cubin *c = NULL, *work = NULL;
	st_schedule *sch = NULL;
	int rc = ST_EXIT_OK;
	if (st_cubin_open_file(path, &c, &err) || st_schedule_new(&sch, &err))
		goto fail;
	if (st_cli_no_kernel(argv[0], c, path, kernel)) {
		rc = ST_EXIT_FAIL;
		goto done;
	}
	size_t size;
	const uint8_t *data = st_cubin_data(c, &size);
	if (st_cubin_open_mem(data, size, path, &work, &err))
		goto fail;
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	for (size_t k = 0; k < st_cubin_kernel_count(c); k++) {
		const char *name = st_cubin_kernel(c, k)->name;
		if (kernel && strcmp(kernel, name))
			continue;
		st_sass_kernel *sk;
		st_sched *s;
		if (st_cli_sched_new(c, name, listing, flags, &sk, &s, &err))
			goto fail;
		if (st_cli_regs_limit(s, c, k, &regs, NULL, &err)) {
			st_sched_free(s);
			st_sass_free(sk);
			goto fail;
		}
		unsigned long long done = 0;
		for (; done < steps; done++) {
			size_t nm = st_sched_move_count(s);
			if (!nm)
				break;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			st_move mv = st_sched_move(s, (size_t)(x % nm));
			if (verbose) {
				char text[256];
				st_sched_describe(s, mv, text, sizeof text);
				printf("%s: %s\n", name, text);
			}
			if (st_sched_apply(s, mv, &err))
				break;
		}
		st_status r = err.code ? err.code : st_sched_to_cubin(s, work, st_cubin_find_kernel(work, name), &err);
		if (!r)
			r = st_sched_to_schedule(s, sch, &err);
		if (!r)
			printf("%s: %llu moves\n", name, done);
		st_sched_free(s);
		st_sass_free(sk);
		if (r)
			goto fail;
	}
	if (st_cubin_write_file(work, out, &err))
		goto fail;
	if (sched_out) {
		char *t = st_schedule_to_json(sch);
		FILE *f = t ? fopen(sched_out, "w") : NULL;
		if (!f || fputs(t, f) < 0 || fclose(f)) {
			if (f)
				fclose(f);
			st_error_set(&err, ST_EIO, "%s: cannot write the schedule", sched_out);
			free(t);
			goto fail;
		}
		free(t);
	}
	printf("wrote %s\n", out);
	goto done;
fail:
	rc = st_cli_fail(argv[0], &err);
done:
	st_schedule_free(sch);
	st_cubin_free(work);
	st_cubin_free(c);
	return rc;
}
