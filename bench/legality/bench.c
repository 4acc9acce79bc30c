/* The legality model's mask size and cost (bench/legality/run.sh builds and runs this).
 * usage: bench CUBIN LISTING [WALK_STEPS]
 * For the default and the wide setting: instructions, legal moves at the start (swaps and
 * control edits), legal moves per state along a random walk (mean, min, max), time to build
 * the state (decode excluded), time to list every legal move (st_sched_move for each), time
 * per apply and per undo, averaged over the walk.  One JSON line per setting. */
#include "sasstune/cubin.h"
#include "sasstune/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench CUBIN LISTING [WALK_STEPS]\n");
		return 2;
	}
	unsigned steps = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 1000;
	st_error err = {0};
	st_cubin *c = NULL;
	if (st_cubin_open_file(argv[1], &c, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 1;
	}
	st_sass_opts o = {0};
	o.listing = argv[2];
	const char *name = st_cubin_kernel(c, 0)->name;
	st_sass_kernel *k = NULL;
	double t0 = now();
	if (st_sass_decode(c, name, &o, &k, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		st_cubin_free(c);
		return 1;
	}
	double t_decode = now() - t0;
	for (int wide = 0; wide < 2; wide++) {
		st_sched *s = NULL;
		t0 = now();
		if (st_sched_new(k, c, wide ? ST_SCHED_WIDE : 0, &s, &err)) {
			fprintf(stderr, "bench: %s\n", err.msg);
			break;
		}
		double t_new = now() - t0;
		size_t n0 = st_sched_move_count(s), swaps0 = 0;
		for (size_t i = 0; i < n0; i++)
			swaps0 += st_sched_move(s, i).kind == ST_MOVE_SWAP;
		uint64_t x = 0x9e3779b97f4a7c15ull;
		double t_list = 0, t_apply = 0, t_undo = 0, sum = 0, sum_sw = 0;
		size_t lo = (size_t)-1, hi = 0, applied = 0, lists = 0;
		for (unsigned st = 0; st < steps; st++) {
			t0 = now();
			size_t nm = st_sched_move_count(s), sw = 0;
			for (size_t i = 0; i < nm; i++)
				sw += st_sched_move(s, i).kind == ST_MOVE_SWAP;
			t_list += now() - t0;
			lists++;
			sum += (double)nm;
			sum_sw += (double)sw;
			lo = nm < lo ? nm : lo;
			hi = nm > hi ? nm : hi;
			if (!nm)
				break;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			st_move mv = st_sched_move(s, (size_t)(x % nm));
			t0 = now();
			if (st_sched_apply(s, mv, &err)) {
				fprintf(stderr, "bench: %s\n", err.msg);
				break;
			}
			t_apply += now() - t0;
			applied++;
		}
		t0 = now();
		size_t undone = 0;
		while (st_sched_depth(s)) {
			st_sched_undo(s, NULL);
			undone++;
		}
		t_undo = now() - t0;
		printf("{\"kernel\": \"%s\", \"file\": \"%s\", \"setting\": \"%s\", \"instructions\": %zu, \"decode_ms\": %.2f, "
		       "\"new_ms\": %.2f, \"moves_at_start\": %zu, \"swaps_at_start\": %zu, \"walk_steps\": %zu, "
		       "\"moves_mean\": %.1f, \"swaps_mean\": %.1f, \"moves_min\": %zu, \"moves_max\": %zu, \"list_us\": %.1f, "
		       "\"apply_us\": %.1f, \"undo_us\": %.1f, \"back_to_start\": %s}\n",
		       name, argv[1], wide ? "wide" : "default", st_sched_count(s), 1e3 * t_decode, 1e3 * t_new, n0, swaps0,
		       applied, lists ? sum / (double)lists : 0, lists ? sum_sw / (double)lists : 0, lo == (size_t)-1 ? 0 : lo,
		       hi, lists ? 1e6 * t_list / (double)lists : 0, applied ? 1e6 * t_apply / (double)applied : 0,
		       undone ? 1e6 * t_undo / (double)undone : 0, st_sched_move_count(s) == n0 ? "true" : "false");
		st_sched_free(s);
	}
	st_sass_free(k);
	st_cubin_free(c);
	return 0;
}
