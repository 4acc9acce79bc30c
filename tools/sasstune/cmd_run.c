/* sasstune run: verify cubins against a reference and time them on the GPU.
 * Also what the other GPU commands (compare, noise) share: options, the session on the reference. */
#include "cli.h"
#include "cmd_run.h"
#include "util/util.h"

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char st_rtcli_options_help[] =
	"  --launch FILE     launch spec (launch.json; see docs/runtime.md); required\n"
	"  --pairs N         timed pairs (default 100)\n"
	"  --sets K          input sets every candidate must match on (default 2)\n"
	"  --seed S          seed of the input data and of the bootstrap (default 1)\n"
	"  --sample-us U     batch launches until one timed sample lasts U microseconds (default 50)\n"
	"  --flush-l2        flush L2 before every timed launch (then one launch per sample)\n"
	"  --warmup-ms W     warm-up before each timing, in ms of GPU time (default 25)\n"
	"  --tolerance T     relative L2 error allowed if the reference is not deterministic (default 1e-3)\n"
	"  --timeout S       watchdog: seconds allowed beyond the expected GPU time (default 5)\n"
	"  --device N        CUDA device ordinal (default 0)\n"
	"  --json            machine-readable output\n"
	"  -h, --help\n\n"
	"environment:\n"
	"  SASSTUNE_WORKER           the worker executable\n"
	"  SASSTUNE_LIBCUDA          the CUDA driver library\n"
	"  SASSTUNE_CHECK_REFERENCE  1: check the reference after every ok (run's --check-reference)\n\n";

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static bool parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (end == s || *end || errno || !(d >= lo && d <= hi))
		return false;
	*out = d;
	return true;
}

enum { O_LAUNCH = 256, O_PAIRS, O_SETS, O_SEED, O_SAMPLE, O_FLUSH, O_WARMUP, O_TOL, O_TIMEOUT, O_DEVICE,
       O_JSON, O_HELP, O_REF, O_NOTIME, O_NOVERIFY, O_REPEAT, O_CHECKREF };
/* the options from O_REF on are a command's own: the `extra` argument of parse() names those it takes */
static const struct option longopts[] = {
	{"launch", required_argument, NULL, O_LAUNCH}, {"pairs", required_argument, NULL, O_PAIRS},
	{"sets", required_argument, NULL, O_SETS}, {"seed", required_argument, NULL, O_SEED},
	{"sample-us", required_argument, NULL, O_SAMPLE}, {"flush-l2", no_argument, NULL, O_FLUSH},
	{"warmup-ms", required_argument, NULL, O_WARMUP}, {"tolerance", required_argument, NULL, O_TOL},
	{"timeout", required_argument, NULL, O_TIMEOUT}, {"device", required_argument, NULL, O_DEVICE},
	{"json", no_argument, NULL, O_JSON}, {"help", no_argument, NULL, O_HELP},
	{"reference", required_argument, NULL, O_REF}, {"no-time", no_argument, NULL, O_NOTIME},
	{"no-verify", no_argument, NULL, O_NOVERIFY}, {"repeat", required_argument, NULL, O_REPEAT},
	{"check-reference", no_argument, NULL, O_CHECKREF},
	{NULL, 0, NULL, 0},
};

/* The numeric option c (named name) with its value in optarg: checked against its range, stored in o.
 * Returns ST_EXIT_USAGE after the message, or -1. */
static int parse_number(const char *cmd, int c, const char *name, st_rtcli *o)
{
	static const struct { int c; double lo, hi; } lim[] = {
		{O_PAIRS, 1, 100000}, {O_SETS, 1, 64}, {O_SEED, 0, 9007199254740992.0},
		{O_SAMPLE, 0, 1e7}, {O_WARMUP, 0, 1e5}, {O_TOL, 0, 1e3}, {O_TIMEOUT, 0.001, 1e5},
		{O_DEVICE, 0, 1024}, {O_REPEAT, 1, 1000},
	};
	double d = 0;
	for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
		if (lim[i].c != c)
			continue;
		bool integer = c != O_SAMPLE && c != O_WARMUP && c != O_TOL && c != O_TIMEOUT;
		if (!parse_num(optarg, lim[i].lo, lim[i].hi, &d) || (integer && d != floor(d))) {
			st_cli_error(cmd, "--%s: expected %s from %g to %g, not '%s'", name,
				     integer ? "an integer" : "a number", lim[i].lo, lim[i].hi, optarg);
			return ST_EXIT_USAGE;
		}
	}
	switch (c) {
	case O_PAIRS: o->opt.pairs = (unsigned)d; break;
	case O_SETS: o->opt.verify_sets = (unsigned)d; break;
	case O_SEED: o->opt.seed = (uint64_t)d; break;
	case O_SAMPLE: o->opt.sample_us = d; break;
	case O_WARMUP: o->opt.warmup_ms = d; break;
	case O_TOL: o->opt.tolerance = d; break;
	case O_TIMEOUT: o->opt.timeout_s = d; break;
	case O_DEVICE: o->opt.device = (int)d; break;
	case O_REPEAT: o->repeat = (unsigned)d; break;
	}
	return -1;
}

/* One option c from getopt_long: stored in o, or the help printed (ST_EXIT_OK) or an error (ST_EXIT_USAGE);
 * -1 to go on. */
static int parse_option(const char *cmd, int c, char **argv, const char *extra, void (*help)(void), st_rtcli *o)
{
	const char *name = NULL;
	for (const struct option *lo = longopts; lo->name; lo++)
		if (lo->val == c)
			name = lo->name;
	if (c >= O_REF && name && !strstr(extra, name)) {
		st_cli_error(cmd, "unknown option --%s (see sasstune %s --help)", name, cmd);
		return ST_EXIT_USAGE;
	}
	switch (c) {
	case O_LAUNCH: o->launch = optarg; break;
	case O_REF: o->reference = optarg; break;
	case O_FLUSH: o->opt.flush_l2 = true; break;
	case O_JSON: o->json = true; break;
	case O_NOTIME: o->no_time = true; break;
	case O_NOVERIFY: o->no_verify = true; break;
	case O_CHECKREF: o->opt.check_reference = true; break;
	case O_HELP:
	case 'h':
		help();
		return ST_EXIT_OK;
	case O_PAIRS: case O_SETS: case O_SEED: case O_SAMPLE: case O_WARMUP: case O_TOL: case O_TIMEOUT:
	case O_DEVICE: case O_REPEAT:
		return parse_number(cmd, c, name, o);
	case ':':
		st_cli_error(cmd, "option %s needs a value", argv[optind - 1]);
		return ST_EXIT_USAGE;
	default:
		st_cli_error(cmd, "unknown option %s (see sasstune %s --help)", argv[optind - 1], cmd);
		return ST_EXIT_USAGE;
	}
	return -1;
}

static int parse(const char *cmd, int argc, char **argv, const char *extra, void (*help)(void), st_rtcli *o)
{
	memset(o, 0, sizeof *o);
	st_runtime_options_init(&o->opt);
	st_cli_runtime_env(&o->opt); /* $SASSTUNE_CHECK_REFERENCE, as --check-reference */
	o->repeat = 1;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		int code = parse_option(cmd, c, argv, extra, help, o);
		if (code >= 0)
			return code;
	}
	/* GNU getopt moved the files after the options: `run A.cubin --launch L.json` works */
	o->files = argv + optind;
	o->nfiles = argc - optind;
	if (!o->launch) {
		st_cli_error(cmd, "missing --launch FILE (see sasstune %s --help)", cmd);
		return ST_EXIT_USAGE;
	}
	return -1;
}

uint8_t *st_rtcli_read(const char *cmd, const char *path, size_t *size)
{
	uint8_t *data;
	st_error err = {0};
	if (st_read_file(path, &data, size, &err) != ST_OK) {
		st_cli_fail(cmd, &err);
		return NULL;
	}
	if (*size == 0) {
		st_cli_error(cmd, "%s: empty file", path);
		free(data);
		return NULL;
	}
	return data;
}

int st_rtcli_start(const char *cmd, int argc, char **argv, const char *extra, void (*help)(void), int nfiles,
		   const char *count_msg, st_rtcli *o, st_rtcli_session *rs)
{
	memset(rs, 0, sizeof *rs);
	int code = parse(cmd, argc, argv, extra, help, o);
	if (code >= 0)
		return code;
	if (nfiles ? o->nfiles != nfiles : o->nfiles < 1) {
		st_cli_error(cmd, "%s (see sasstune %s --help)", count_msg, cmd);
		return ST_EXIT_USAGE;
	}
	rs->ref_path = o->reference ? o->reference : o->files[0];
	st_error err = {0};
	if (!(rs->ref = st_rtcli_read(cmd, rs->ref_path, &rs->ref_size)))
		return ST_EXIT_FAIL;
	if (st_launch_load(o->launch, &rs->spec, &err) != ST_OK) {
		st_rtcli_end(rs);
		return st_cli_fail(cmd, &err);
	}
	if (strstr(extra, "estimate")) /* the command opens its own session: st_estimate_run */
		return -1;
	if (st_session_open(rs->ref, rs->ref_size, rs->spec, &o->opt, &rs->s, &err) != ST_OK) {
		st_cli_error(cmd, "%s: %s", rs->ref_path, err.msg);
		st_rtcli_end(rs);
		return ST_EXIT_FAIL;
	}
	return -1;
}

void st_rtcli_end(st_rtcli_session *rs)
{
	st_session_close(rs->s);
	st_launch_free(rs->spec);
	free(rs->ref);
	memset(rs, 0, sizeof *rs);
}

void st_rtcli_timing_json(cJSON *j, const st_timing *t)
{
	cJSON_AddNumberToObject(j, "ratio", t->ratio);
	cJSON_AddNumberToObject(j, "ci_lo", t->ci_lo);
	cJSON_AddNumberToObject(j, "ci_hi", t->ci_hi);
	cJSON_AddNumberToObject(j, "pairs", t->n);
	cJSON_AddNumberToObject(j, "reps", t->reps);
	cJSON_AddNumberToObject(j, "a_ms", t->a_ms);
	cJSON_AddNumberToObject(j, "b_ms", t->b_ms);
}

const char *st_rtcli_verdict(st_status rc)
{
	switch (rc) {
	case ST_OK: return "ok";
	case ST_EMISMATCH: return "mismatch";
	case ST_ECRASH: return "crashed";
	case ST_ETIMEOUT: return "timed_out";
	default: return "error";
	}
}

static void help(void)
{
	printf("usage: sasstune run CUBIN... --launch L.json [--reference R.cubin] [options]\n\n"
	       "Verify each CUBIN against the reference on the GPU, then time it against the\n"
	       "reference.  The reference is R.cubin, else the first CUBIN.  A candidate passes\n"
	       "only if every buffer is bit-identical to the reference's on every input set (if\n"
	       "the reference itself is not deterministic, within --tolerance).  Each is reported\n"
	       "as ok, mismatch, crashed (it faulted; the worker is restarted) or timed_out (it\n"
	       "hung and was killed), with its time per launch, the median B/A time ratio over\n"
	       "interleaved pairs with a bootstrap 95%% interval, and what it cost.  Candidates run\n"
	       "in a separate worker process; the next candidate runs even if one crashed.  After a\n"
	       "mismatch the reference is run again: if it no longer reproduces, an earlier candidate\n"
	       "wrote outside its buffers (a contamination; counted), and the candidate is verified\n"
	       "again in a fresh worker.\n\n"
	       "options:\n"
	       "  --reference R     the cubin whose outputs are the reference (default: the first CUBIN)\n"
	       "  --no-time         verify only\n"
	       "  --check-reference also check the reference after every ok: a candidate that wrote\n"
	       "                    outside its buffers is then a mismatch (one more reference run each)\n%s"
	       "exit status: 0 if every candidate is ok, 1 otherwise, 2 for a wrong command line.\n",
	       st_rtcli_options_help);
}
typedef struct cand {
	const char *path;
	st_status rc;
	char msg[ST_ERROR_MSG_MAX];
	double wall_ms, load_ms;
	int regs, local;
	bool timed, stray;
	st_timing t;
} cand;

/* One `run`: the options, the session on the reference, a result per candidate (cs[o.nfiles]) and
 * the tallies; counts[] is indexed ok, mismatch, crashed, timed out, error. */
typedef struct run_state {
	const char *cmd;
	st_rtcli o;
	st_rtcli_session rs;
	cand *cs;
	st_session_info info;
	int ok, counts[5];
	double total;
} run_state;

static void print_reference(const run_state *r)
{
	const st_session_info *info = &r->info;
	unsigned grid[3], block[3], shared;
	st_launch_dims(r->rs.spec, grid, block, &shared);
	printf("device: %s\n", info->device);
	printf("reference: %s (kernel %s, grid %ux%ux%u, block %ux%ux%u, %u B dynamic shared)\n", r->rs.ref_path,
	       st_launch_kernel(r->rs.spec), grid[0], grid[1], grid[2], block[0], block[1], block[2], shared);
	if (info->deterministic)
		printf("  deterministic: candidates must match bit for bit on %u input sets\n", info->verify_sets);
	else
		printf("  NOT deterministic (two runs differ): candidates are compared within relative L2 error %g on %u input sets\n",
		       r->o.opt.tolerance, info->verify_sets);
	printf("  outputs compared %s; %.5f ms per launch; worker start %.0f ms\n",
	       info->verify_on_gpu ? "on the GPU" : "on the host", info->kernel_ms, info->start_ms);
	fflush(stdout);
}

/* Verifies candidate i (and times it unless --no-time) and fills cs[i]. */
static void run_candidate(run_state *r, int i)
{
	cand *c = &r->cs[i];
	st_session *s = r->rs.s;
	c->path = r->o.files[i];
	size_t size;
	uint8_t *bytes = st_rtcli_read(r->cmd, c->path, &size);
	double t0 = now_ms();
	st_error err = {0};
	if (!bytes) {
		c->rc = ST_EIO;
		snprintf(c->msg, sizeof c->msg, "cannot read %s", c->path);
	} else {
		c->rc = st_session_verify(s, bytes, size, &err);
		st_session_info ci;
		st_session_get_info(s, &ci);
		c->load_ms = ci.last_load_ms;
		c->regs = ci.regs;
		c->local = ci.local_bytes;
		c->stray = ci.last_stray;
		if (c->rc == ST_OK && !r->o.no_time) {
			c->rc = st_session_compare(s, NULL, 0, bytes, size, 0, &c->t, &err);
			c->timed = c->rc == ST_OK;
		}
		if (c->rc != ST_OK)
			snprintf(c->msg, sizeof c->msg, "%s", err.msg);
	}
	c->wall_ms = now_ms() - t0;
	free(bytes);
}

static void print_candidate(const run_state *r, int i)
{
	const cand *c = &r->cs[i];
	printf("candidate %d/%d %s: %s", i + 1, r->o.nfiles, c->path, st_rtcli_verdict(c->rc));
	if (c->timed)
		printf(", %.5f ms per launch, B/A %.4f [%.4f, %.4f] over %u pairs (%u launches per sample)",
		       c->t.b_ms, c->t.ratio, c->t.ci_lo, c->t.ci_hi, c->t.n, c->t.reps);
	if (c->rc != ST_OK)
		printf(": %s", c->msg);
	printf("; cost %.1f ms (load %.2f ms)\n", c->wall_ms, c->load_ms);
	fflush(stdout);
}

static cJSON *candidate_json(const cand *c)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "path", c->path);
	cJSON_AddStringToObject(j, "status", st_rtcli_verdict(c->rc));
	if (c->rc != ST_OK)
		cJSON_AddStringToObject(j, "message", c->msg);
	if (c->stray)
		cJSON_AddBoolToObject(j, "stray_write", true);
	cJSON_AddNumberToObject(j, "cost_ms", c->wall_ms);
	cJSON_AddNumberToObject(j, "load_ms", c->load_ms);
	cJSON_AddNumberToObject(j, "regs", c->regs);
	cJSON_AddNumberToObject(j, "local_bytes", c->local);
	if (c->timed) {
		cJSON_AddNumberToObject(j, "ms", c->t.b_ms);
		cJSON_AddNumberToObject(j, "reference_ms", c->t.a_ms);
		cJSON_AddNumberToObject(j, "ratio", c->t.ratio);
		cJSON_AddNumberToObject(j, "ci_lo", c->t.ci_lo);
		cJSON_AddNumberToObject(j, "ci_hi", c->t.ci_hi);
		cJSON_AddNumberToObject(j, "pairs", c->t.n);
		cJSON_AddNumberToObject(j, "reps", c->t.reps);
	}
	return j;
}

static void report_json(const run_state *r)
{
	const st_session_info *info = &r->info;
	double total = r->total;
	cJSON *root = cJSON_CreateObject(), *ref = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	cJSON_AddStringToObject(root, "device", info->device);
	cJSON_AddStringToObject(ref, "path", r->rs.ref_path);
	cJSON_AddStringToObject(ref, "kernel", st_launch_kernel(r->rs.spec));
	cJSON_AddBoolToObject(ref, "deterministic", info->deterministic);
	cJSON_AddBoolToObject(ref, "verify_on_gpu", info->verify_on_gpu);
	cJSON_AddNumberToObject(ref, "sets", info->verify_sets);
	cJSON_AddNumberToObject(ref, "kernel_ms", info->kernel_ms);
	cJSON_AddNumberToObject(ref, "worker_start_ms", info->start_ms);
	cJSON_AddItemToObject(root, "reference", ref);
	for (int i = 0; i < r->o.nfiles; i++)
		cJSON_AddItemToArray(arr, candidate_json(&r->cs[i]));
	cJSON_AddItemToObject(root, "candidates", arr);
	cJSON_AddNumberToObject(root, "total_ms", total);
	cJSON_AddNumberToObject(root, "candidates_per_s", total > 0 ? 1000.0 * r->o.nfiles / total : 0);
	cJSON_AddNumberToObject(root, "restarts", info->restarts);
	cJSON_AddNumberToObject(root, "restart_ms_avg", info->restarts ? info->restart_ms / info->restarts : 0);
	cJSON_AddNumberToObject(root, "reference_checks", info->reference_checks);
	cJSON_AddNumberToObject(root, "contaminations", info->contaminations);
	st_cli_print_json(root, 1);
	cJSON_Delete(root);
}

static void print_summary(const run_state *r)
{
	const st_session_info *info = &r->info;
	const int *n = r->counts;
	printf("summary: %d candidates: %d ok, %d mismatch, %d crashed, %d timed out, %d error; %.1f candidates/s",
	       r->o.nfiles, n[0], n[1], n[2], n[3], n[4], r->total > 0 ? 1000.0 * r->o.nfiles / r->total : 0);
	if (info->restarts)
		printf("; %u worker restarts, %.0f ms each on average", info->restarts, info->restart_ms / info->restarts);
	if (info->contaminations)
		printf("; %u contaminations (the reference stopped reproducing: a stray write; the worker was restarted)",
		       info->contaminations);
	printf("\n");
}

int st_cmd_run(int argc, char **argv)
{
	run_state r = {.cmd = argv[0]};
	int code = st_rtcli_start(r.cmd, argc, argv, "reference no-time check-reference", help, 0, "no CUBIN given", &r.o,
				  &r.rs);
	if (code >= 0)
		return code;
	r.cs = calloc((size_t)r.o.nfiles, sizeof *r.cs);
	if (!r.cs) {
		st_cli_error(r.cmd, "out of memory");
		st_rtcli_end(&r.rs);
		return ST_EXIT_FAIL;
	}
	st_session_get_info(r.rs.s, &r.info);
	if (!r.o.json)
		print_reference(&r);
	double t_all = now_ms();
	for (int i = 0; i < r.o.nfiles; i++) {
		run_candidate(&r, i);
		st_status rc = r.cs[i].rc;
		r.counts[rc == ST_OK ? 0 : rc == ST_EMISMATCH ? 1 : rc == ST_ECRASH ? 2 : rc == ST_ETIMEOUT ? 3 : 4]++;
		r.ok += rc == ST_OK;
		if (!r.o.json)
			print_candidate(&r, i);
	}
	r.total = now_ms() - t_all;
	st_session_get_info(r.rs.s, &r.info);
	if (r.o.json)
		report_json(&r);
	else
		print_summary(&r);
	free(r.cs);
	st_rtcli_end(&r.rs);
	return r.ok == r.o.nfiles ? ST_EXIT_OK : ST_EXIT_FAIL;
}
