/* Pieces shared by the tune, train and apply commands (header-only, not library API). */
#ifndef ST_TUNE_CLI_H
#define ST_TUNE_CLI_H

#include "cli.h"
#include "sasstune/cache.h"
#include "sasstune/sched.h"
#include "sasstune/tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline int st_tcli_u64(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+')
		return 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end && *v <= max;
}

/* Option values (st_cli_opt fns), each saying what is wrong on stderr. */

/* --reward gpu|model into an st_reward. */
static inline int st_tcli_reward_opt(const char *cmd, const char *v, void *dst)
{
	if (strcmp(v, "gpu") && strcmp(v, "model")) {
		st_cli_error(cmd, "--reward: '%s' is not gpu or model", v);
		return 1;
	}
	*(st_reward *)dst = !strcmp(v, "gpu") ? ST_REWARD_GPU : ST_REWARD_MODEL;
	return 0;
}

/* --hidden H (1..1024) into an unsigned. */
static inline int st_tcli_hidden_opt(const char *cmd, const char *v, void *dst)
{
	unsigned long long h;
	if (!st_tcli_u64(v, 1024, &h) || !h) {
		st_cli_error(cmd, "--hidden: '%s' is not a width (1..1024)", v);
		return 1;
	}
	*(unsigned *)dst = (unsigned)h;
	return 0;
}

/* --set NAME=VALUE into an st_search_opts; with budget_names, method, seed, steps and seconds
 * are refused (they have options of their own). */
static inline int st_tcli_set(const char *cmd, const char *v, st_search_opts *so, int budget_names)
{
	char name[128];
	const char *eq = strchr(v, '=');
	st_error err = {0};
	if (!eq || eq == v || (size_t)(eq - v) >= sizeof name) {
		st_cli_error(cmd, "--set: '%s' is not NAME=VALUE", v);
		return 1;
	}
	memcpy(name, v, (size_t)(eq - v));
	name[eq - v] = 0;
	if (budget_names && (!strcmp(name, "method") || !strcmp(name, "seed") || !strcmp(name, "steps") ||
			     !strcmp(name, "seconds"))) {
		st_cli_error(cmd, "--set: use --%s for %s", !strcmp(name, "seconds") ? "budget" : name, name);
		return 1;
	}
	if (st_search_opts_set(so, name, eq + 1, &err)) {
		st_cli_error(cmd, "--set: %s", err.msg);
		return 1;
	}
	return 0;
}

static inline int st_tcli_set_opt(const char *cmd, const char *v, void *dst)
{
	return st_tcli_set(cmd, v, dst, 0);
}

/* "300s", "5m", "2h" or plain seconds; 0 when malformed. */
static inline double st_tcli_budget(const char *s)
{
	int64_t sec = 0;
	if (st_cache_parse_duration(s, &sec, NULL) != ST_OK || sec <= 0)
		return 0;
	return (double)sec;
}

/* --steps N, --budget T and --seed S (checked in that order) into o's search and runtime;
 * with neither --steps nor --budget, default_steps moves or default_seconds.  -1 to go on,
 * else the exit code of a usage error, said on stderr. */
static inline int st_tcli_search_budget(const char *cmd, const char *steps_s, const char *budget_s, const char *seed_s,
					unsigned long long default_steps, double default_seconds, st_tune_opts *o)
{
	unsigned long long steps = 0, seed = 1;
	double seconds = 0;
	if (steps_s && (!st_tcli_u64(steps_s, 1000000000ull, &steps) || !steps)) {
		st_cli_error(cmd, "--steps: '%s' is not a number of moves (1..1000000000)", steps_s);
		return ST_EXIT_USAGE;
	}
	if (budget_s && !(seconds = st_tcli_budget(budget_s))) {
		st_cli_error(cmd, "--budget: '%s' is not a duration (e.g. 300s, 5m)", budget_s);
		return ST_EXIT_USAGE;
	}
	if (seed_s && !st_tcli_u64(seed_s, ~0ull, &seed)) {
		st_cli_error(cmd, "--seed: '%s' is not a non-negative integer", seed_s);
		return ST_EXIT_USAGE;
	}
	if (!steps_s && !budget_s) {
		steps = default_steps;
		seconds = default_seconds;
	}
	o->search.steps = steps;
	o->search.seconds = seconds;
	o->search.seed = seed;
	o->runtime.seed = seed;
	return -1;
}

static inline double st_tcli_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* The progress line on stderr: redrawn in place on a terminal, else a line every 5 s. */
typedef struct st_tcli_progress {
	const char *what;
	int tty, drawn;
	double last;
} st_tcli_progress;

static inline int st_tcli_progress_cb(const st_search_progress *p, void *data)
{
	st_tcli_progress *pr = data;
	double now = st_tcli_now();
	if (!pr->tty && now - pr->last < 5.0)
		return 0;
	if (pr->tty && now - pr->last < 0.2)
		return 0;
	pr->last = now;
	char left[32] = "";
	if (p->seconds_left >= 0)
		snprintf(left, sizeof left, ", %.0f s left", p->seconds_left);
	fprintf(stderr, "%s%s: %llu steps, %.1f steps/s, %llu evals (%llu rejected), best %.4f [%.4f, %.4f]%s%s",
		pr->tty ? "\r\033[K" : "", pr->what, (unsigned long long)p->steps, p->steps_per_s,
		(unsigned long long)p->evals, (unsigned long long)p->rejected, p->best.ratio, p->best.lo, p->best.hi,
		left, pr->tty ? "" : "\n");
	pr->drawn = pr->tty;
	return 0;
}

/* Draw the progress of `what` from now on, unless quiet. */
static inline void st_tcli_progress_start(st_tcli_progress *pr, const char *what, int quiet, st_search_opts *so)
{
	*pr = (st_tcli_progress){.what = what, .tty = isatty(2), .last = st_tcli_now()};
	if (!quiet) {
		so->progress = st_tcli_progress_cb;
		so->progress_data = pr;
	}
}

static inline void st_tcli_progress_end(st_tcli_progress *pr)
{
	if (pr->drawn)
		fputc('\n', stderr);
	pr->drawn = 0;
}

/* Write text to a file ("-": stdout); 0 on success. */
static inline int st_tcli_write_text(const char *path, const char *text)
{
	if (!strcmp(path, "-"))
		return fputs(text, stdout) < 0;
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	int bad = fputs(text, f) < 0;
	bad |= fputc('\n', f) < 0;
	return fclose(f) != 0 || bad;
}

/* 0 written; 1 failed, with errno saying why. */
static inline int st_tcli_write_bytes(const char *path, const uint8_t *d, size_t n)
{
	errno = 0;
	FILE *f = fopen(path, "wb");
	if (!f)
		return 1;
	int bad = fwrite(d, 1, n, f) != n;
	return fclose(f) != 0 || bad;
}

/* Write a result's cubin to out and, with sched_out, its schedule. */
static inline st_status st_tcli_write_result(const st_tune_result *r, const char *out, const char *sched_out,
					     st_error *err)
{
	if (st_tcli_write_bytes(out, r->cubin, r->cubin_size))
		return st_error_set(err, ST_EIO, "%s: cannot write the output cubin: %s", out, strerror(errno));
	if (sched_out && st_tcli_write_text(sched_out, r->schedule_json))
		return st_error_set(err, ST_EIO, "%s: cannot write the schedule: %s", sched_out, strerror(errno));
	return ST_OK;
}

#endif
