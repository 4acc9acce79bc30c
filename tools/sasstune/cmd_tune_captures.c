/* sasstune tune --captures DIR: the "tune later" half of SASSTUNE_MODE=capture.  Every capture
 * folder under DIR (plugin/pass/capture.h) goes through the pass's own run2() in mode tune, so the
 * result is stored under exactly the key a later compile looks up; one progress line per capture,
 * then a summary.  A capture already in the cache comes back CACHED at once. */
#include "cli.h"
#include "cmd_tune_captures.h"
#include "pass/capture.h"
#include "sasstune/cache.h"
#include "sasstune/plugin.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune tune --captures DIR [--budget T] [--total-budget T] [--cache-dir D]\n\n"
		"Tune every kernel captured with SASSTUNE_MODE=capture (docs/triton.md, \"Capture now, tune\n"
		"later\") into the schedule cache, one after another on the GPU each capture was made on\n"
		"(its recorded device ordinal), waiting for the GPU lock a program tuning on that GPU holds\n"
		"(<cache>/locks/gpu-<uuid>.lock).  Each capture (DIR/<key>/: cubin, ptx, launch.json, buffers,\n"
		"capture.json) goes through the pass itself in mode tune, keyed by the GPU facts, ptxas and\n"
		"SASSTUNE_VARIANTS recorded at capture time (with its PTX, the compile-variants stage runs\n"
		"first, with the ptxas binaries capture.json names), so the next run of the program finds the\n"
		"results.  A kernel already in the cache is reported cached and not tuned again; one cached\n"
		"as \"nothing beat stock\" is reported unchanged with that message and not tuned again unless\n"
		"SASSTUNE_RETUNE=1 or the budget is larger than it was tuned with (docs/cache.md).\n\n"
		"options:\n"
		"  --budget T        tuning budget per kernel, e.g. 30s, 5m (default $SASSTUNE_BUDGET, else 300s)\n"
		"  --total-budget T  stop starting new kernels after T in all (a kernel gets at most what is left)\n"
		"  --cache-dir D     the schedule cache (default $SASSTUNE_CACHE_DIR, then ~/.cache/sasstune)\n"
		"  -h, --help\n\n"
		"Output: one line per capture, \"[i/n] KERNEL KEY12: STATUS (S s): MESSAGE\", then a summary.\n"
		"exit status: 0 every capture was read (whatever tuning found), 1 a capture could not be read\n"
		"or tuning failed with an error, 2 usage error\n");
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int visible(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Read DIR/name/FILE into a NUL-terminated buffer. */
static st_status read_in(const char *dir, const char *name, const char *file, uint8_t **data, size_t *size,
			 st_error *err)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof path, "%s/%s/%s", dir, name, file) >= sizeof path)
		return st_error_set(err, ST_EINVAL, "%s/%s: path too long", dir, name);
	return st_read_file(path, data, size, err);
}

struct batch {
	const char *dir, *budget;
	char resolved_cache[4096]; /* the cache (absolute): run()'s cache_dir, where the GPU locks live */
	int64_t budget_s, total_s; /* total_s < 0: none */
	double t0;
	unsigned counts[5], skipped, unreadable;
	unsigned negative; /* of counts[UNCHANGED]: "nothing beat stock" (a negative entry served, or stored now) */
};

/* The budget of the next kernel: --budget, cut to what --total-budget leaves; 0 when spent. */
static int64_t next_budget(const struct batch *b)
{
	if (b->total_s < 0)
		return b->budget_s;
	int64_t left = b->total_s - (int64_t)(now_s() - b->t0);
	return left <= 0 ? 0 : left < b->budget_s ? left : b->budget_s;
}

static const char *const status_names[] = {"tuned", "cached", "policy", "unchanged", "error"};

/* Take the GPU lock the Triton adapter takes (python/sasstune/_gpulock.py), waiting for a program
 * that tunes on that GPU now; -1 when the capture names no GPU or the lock cannot be made. */
static int gpu_lock(const struct batch *b, const st_capture_meta *m, unsigned i, unsigned n)
{
	char path[4200], dir[4200];
	st_error err;
	if (st_capture_lock_path(m, b->resolved_cache, path, sizeof path, &err) != ST_OK)
		return -1;
	snprintf(dir, sizeof dir, "%s/locks", b->resolved_cache);
	mkdir(b->resolved_cache, 0755);
	mkdir(dir, 0755);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		printf("[%u/%u] %s: waiting for GPU %s (another process is tuning on it)\n", i, n, m->kernel, m->gpu_uuid);
		fflush(stdout);
		if (flock(fd, LOCK_EX) != 0) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* The capture's PTX (file "ptx", written when the adapter had it); *ptx stays NULL without one. */
static st_status read_ptx(const char *dir, const char *name, uint8_t **ptx, st_error *err)
{
	char path[4096];
	struct stat st;
	size_t n;
	if ((size_t)snprintf(path, sizeof path, "%s/%s/ptx", dir, name) >= sizeof path)
		return st_error_set(err, ST_EINVAL, "%s/%s: path too long", dir, name);
	if (stat(path, &st) != 0 && errno == ENOENT)
		return ST_OK;
	return st_read_file(path, ptx, &n, err);
}

/* Runs one read capture through run2() inside its folder (launch.json names its buffer files
 * relative to its folder; run() reads them from the cwd), prints its line and counts its status.
 * Nonzero: the folder could not be entered, or run2() answered an error. */
static int run_in_folder(struct batch *b, const char *name, const st_capture_meta *m, const char *key,
			 const uint8_t *cubin, size_t cubin_size, const st_plugin_kernel2 *k, unsigned i, unsigned n)
{
	char folder[4096];
	snprintf(folder, sizeof folder, "%s/%s", b->dir, name);
	int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (here < 0 || chdir(folder) != 0) {
		printf("[%u/%u] %s: cannot enter %s\n", i, n, name, folder);
		if (here >= 0)
			close(here);
		return 1;
	}
	const st_plugin_info *info = sasstune_plugin_info();
	st_plugin_result r;
	int lock = gpu_lock(b, m, i, n);
	double t0 = now_s();
	info->run2(cubin, cubin_size, k, &r);
	if (lock >= 0)
		close(lock); /* drops the flock */
	int back = fchdir(here);
	close(here);
	unsigned s = (unsigned)r.status < 5 ? (unsigned)r.status : 4;
	b->counts[s]++;
	b->negative += s == ST_PLUGIN_UNCHANGED && strstr(r.message, ST_PLUGIN_NEGATIVE) != NULL;
	printf("[%u/%u] %s %.12s: %s (%.1f s): %s\n", i, n, m->kernel, key, status_names[s], now_s() - t0, r.message);
	fflush(stdout);
	info->free_result(&r);
	if (back != 0) {
		fprintf(stderr, "sasstune tune: cannot return to the working folder\n");
		exit(ST_EXIT_FAIL); /* the command, not the library */
	}
	return s == ST_PLUGIN_ERROR;
}

/* Tune one capture folder through run2(); prints its progress line.  Nonzero: it could not be read. */
static int tune_one(struct batch *b, const char *name, unsigned i, unsigned n)
{
	uint8_t *meta_text = NULL, *cubin = NULL, *launch = NULL, *ptx = NULL;
	size_t meta_size = 0, cubin_size = 0, launch_size = 0;
	st_capture_meta m = {0};
	char key[65] = "", *opt = NULL, budget[32];
	st_error err = {0};
	st_plugin_kernel2 k;
	int bad = 1;
	int64_t t = next_budget(b);
	snprintf(budget, sizeof budget, "%llds", (long long)(t ? t : 1));
	/* the record and options run2() gets, and the key the pass computes from them */
	if (read_in(b->dir, name, "capture.json", &meta_text, &meta_size, &err) ||
	    st_capture_meta_parse((const char *)meta_text, meta_size, &m, &err) ||
	    read_in(b->dir, name, "cubin", &cubin, &cubin_size, &err) ||
	    read_in(b->dir, name, "launch.json", &launch, &launch_size, &err) || read_ptx(b->dir, name, &ptx, &err) ||
	    st_capture_options(&m, budget, b->resolved_cache, &opt, &err) ||
	    (st_capture_record(&m, (const char *)ptx, (const char *)launch, opt, &k),
	     st_capture_run_key(cubin, cubin_size, &k, key, &err))) {
		printf("[%u/%u] %s: unreadable: %s\n", i, n, name, err.msg);
		goto done;
	}
	bad = 0;
	if (m.key[0] && strcmp(m.key, key))
		printf("[%u/%u] %s: note: recorded key %.12s, its fields give %.12s (tuned under the latter)\n", i, n,
		       name, m.key, key);
	if (t == 0) {
		printf("[%u/%u] %s %.12s: skipped: the total budget is spent\n", i, n, m.kernel, key);
		b->skipped++;
		goto done;
	}
	bad = run_in_folder(b, name, &m, key, cubin, cubin_size, &k, i, n);
done:
	b->unreadable += (unsigned)bad;
	st_capture_meta_free(&m);
	free(opt);
	free(meta_text);
	free(cubin);
	free(launch);
	free(ptx);
	return bad;
}

static int duration(const char *cmd, const char *what, const char *text, int64_t *out)
{
	st_error err = {0};
	if (st_cache_parse_duration(text, out, &err) != ST_OK) {
		st_cli_error(cmd, "%s: %s", what, err.msg);
		return 1;
	}
	return 0;
}

int st_cmd_tune_captures(int argc, char **argv)
{
	const char *dir = NULL, *budget = NULL, *total = NULL, *cache_dir = NULL;
	const st_cli_opt opts[] = {ST_OPT_STR("--captures", &dir), ST_OPT_STR("--budget", &budget),
				   ST_OPT_STR("--total-budget", &total), ST_OPT_STR("--cache-dir", &cache_dir),
				   ST_OPT_END};
	const st_cli_need need[] = {{&dir, "--captures DIR"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .need = need});
	if (code >= 0)
		return code;
	struct batch b = {.dir = dir, .budget_s = 300, .total_s = -1, .t0 = now_s()};
	if (!budget && getenv("SASSTUNE_BUDGET") && *getenv("SASSTUNE_BUDGET"))
		budget = getenv("SASSTUNE_BUDGET");
	if ((budget && duration(argv[0], "--budget", budget, &b.budget_s)) ||
	    (total && duration(argv[0], "--total-budget", total, &b.total_s)))
		return ST_EXIT_USAGE;
	if (b.budget_s <= 0) {
		st_cli_error(argv[0], "--budget: must be at least 1 s");
		return ST_EXIT_USAGE;
	}
	st_cache *cache;
	st_error err = {0};
	if (st_cache_open(&cache, cache_dir, &err) != ST_OK)
		return st_cli_fail(argv[0], &err);
	/* absolute: run() reads the capture's buffers from inside its folder (chdir) */
	const char *cd = st_cache_dir(cache);
	char cwd[2048] = "";
	if (cd[0] != '/' && !getcwd(cwd, sizeof cwd))
		cwd[0] = '\0';
	snprintf(b.resolved_cache, sizeof b.resolved_cache, "%s%s%s", cwd, cwd[0] ? "/" : "", cd);
	st_cache_free(cache);
	struct dirent **list;
	int n = scandir(dir, &list, visible, alphasort);
	if (n < 0) {
		st_cli_error(argv[0], "--captures %s: cannot read the folder", dir);
		return ST_EXIT_FAIL;
	}
	unsigned total_n = 0;
	for (int i = 0; i < n; i++)
		total_n += list[i]->d_type == DT_DIR || list[i]->d_type == DT_UNKNOWN;
	unsigned done = 0;
	for (int i = 0; i < n; i++) {
		if (list[i]->d_type == DT_DIR || list[i]->d_type == DT_UNKNOWN)
			tune_one(&b, list[i]->d_name, ++done, total_n);
		free(list[i]);
	}
	free(list);
	char neg[64] = "";
	if (b.negative)
		snprintf(neg, sizeof neg, " (%u nothing beat stock)", b.negative);
	printf("tune --captures %s: %u captures: %u tuned, %u cached, %u unchanged%s, %u errors or unreadable, "
	       "%u skipped, in %.1f s\n",
	       dir, total_n, b.counts[ST_PLUGIN_TUNED], b.counts[ST_PLUGIN_CACHED],
	       b.counts[ST_PLUGIN_UNCHANGED] + b.counts[ST_PLUGIN_POLICY], neg, b.unreadable, b.skipped, now_s() - b.t0);
	return b.unreadable ? ST_EXIT_FAIL : ST_EXIT_OK;
}
